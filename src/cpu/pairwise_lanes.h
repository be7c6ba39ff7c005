/* What the matrix engine's lane template (pairwise_lanes.inc) needs around it: shared by
 * pairwise.c, which instantiates it for TWED and DTW, and softdtw_engines.c (soft-DTW). */
#ifndef WW_CPU_PAIRWISE_LANES_H
#define WW_CPU_PAIRWISE_LANES_H

#include "cpu_common.h"

/* 32 lanes rather than 16: +35% on equal lengths, +50% at dim 8 and +30-60% on ragged data
 * (bench/results/cpu.md). 16 was ahead on ragged data only while a group could hold nothing but
 * columns of one length, which left most lanes of a 32-lane group empty. */
#define LANES 32

/* The lane group's column series, interleaved: value k of sample s of lane l is at
 * values[(s * dim + k) * LANES + l]; sample 0 is the sentinel. `length` is the longest lane's;
 * a shorter lane repeats its last sample up to it, and its result is D[na][lane_length[l]]. */
typedef struct lane_group {
    double *values, *stamps, *aux;
    size_t length, dim;
    size_t lane_length[LANES];
} lane_group;

/* D rows and local-term rows for one sweep, each (length + 1) * LANES. */
typedef struct lane_rows {
    double *d, *m, *m_next;
} lane_rows;

/* The window of one row series against a lane group: the columns of the current row for each lane
 * and their union. `uniform`: every lane has the same length, so the same window (`radius`); else
 * each lane has its own radius (a window fraction gives each pair its own). */
typedef struct lane_band {
    const ww_measure *m;
    size_t na, radius;
    const size_t *lane_length;
    int uniform;
    size_t lo[LANES], hi[LANES];
    double lo_d[LANES], hi_d[LANES]; /* the same as doubles, for the kernels' branch-free masks */
} lane_band;

/* Row i: the union of the lanes' columns, and each lane's (in lo[], hi[]) for a ragged group. */
static inline void lane_band_row(lane_band *b, size_t i, size_t *ulo, size_t *uhi)
{
    if (b->uniform) {
        ww_window_row(b->na, b->lane_length[0], b->radius, i, ulo, uhi);
        return;
    }
    *ulo = SIZE_MAX;
    *uhi = 0;
    for (size_t l = 0; l < LANES; l++) {
        const size_t nb = b->lane_length[l];
        if (l > 0 && nb == b->lane_length[l - 1]) { /* lanes are sorted by length */
            b->lo[l] = b->lo[l - 1];
            b->hi[l] = b->hi[l - 1];
        } else {
            ww_window_row(b->na, nb, ww_measure_radius(b->m, b->na, nb), i, &b->lo[l], &b->hi[l]);
        }
        *ulo = b->lo[l] < *ulo ? b->lo[l] : *ulo;
        *uhi = b->hi[l] > *uhi ? b->hi[l] : *uhi;
        b->lo_d[l] = (double)b->lo[l];
        b->hi_d[l] = (double)b->hi[l];
    }
}

/* soft-DTW's instance (softdtw_engines.c): the lanes kernel of pairwise_lanes.inc */
void ww_cpu_lanes_softdtw(const ww_prepared *a, const lane_group *g, const ww_coef_f64 *c, lane_band *band,
                          lane_rows *rw, double *out);

#endif
