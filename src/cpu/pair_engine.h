/* What the one-pair engines' template (pair_engines.inc) needs around it: shared by pair.c, which
 * instantiates it for TWED and DTW, and softdtw_engines.c, which instantiates it for soft-DTW. */
#ifndef WW_CPU_PAIR_ENGINE_H
#define WW_CPU_PAIR_ENGINE_H

#include "cpu_common.h"

/* Rows are processed in strips of STRIP_ROWS. Inside a strip the cells are swept by anti-diagonals
 * (independent cells, so the inner loop vectorises); between strips only one row of D and of the
 * local terms is kept. The diagonal buffers are STRIP_ROWS long and stay in L1 for any n, whereas
 * the paper's full-length diagonals fall out of cache once n passes a few tens of thousands. */
#define STRIP_ROWS 256

/* The arrays of a pair of prepared series, for the engines' loops. */
typedef struct pair_view {
    const double *av, *at, *aaux; /* A, time order */
    const double *bv, *bt, *baux; /* B, reversed */
    size_t dim;
} pair_view;

static inline pair_view ww_pair_view_of(const ww_prepared *a, const ww_prepared *b)
{
    pair_view v = {a->values, a->stamps, a->aux, b->values, b->stamps, b->aux, a->dim};
    return v;
}

typedef struct strip_state {
    double *d0, *d1, *d2; /* D on diagonals t, t-1, t-2; index r = row within strip (0 = row above) */
    double *m0, *m1, *m2; /* the local term on the same cells (measures that carry it) */
} strip_state;

/* soft-DTW's instance (softdtw_engines.c): the pair_engine of pair_engines.inc */
double ww_cpu_pair_engine_softdtw(ww_engine engine, const ww_measure *m, const ww_prepared *a, const ww_prepared *b,
                                  double *work);

#endif
