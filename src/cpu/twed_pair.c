/* CPU engines for one pair: the full-matrix reference (tests only), the paper's three-diagonal
 * band, and the strip engine that the library uses.
 *
 * All three read A in time order and B reversed (index k = sample nB - k): on an anti-diagonal
 * (i + j = const) i rises while j falls, so reversing B makes both series unit-stride. */
#include "cpu_common.h"

#include <stdlib.h>
#include <string.h>

size_t ww_prepared_doubles(size_t length, size_t dim) { return (length + 1) * (dim + 2); }

void ww_prepare(const ww_series *s, const ww_twed_params *params, int reversed, double *storage,
                ww_prepared *p)
{
    const size_t n = s->length, dim = s->dim;
    p->length = n;
    p->dim = dim;
    p->values = storage;
    p->stamps = storage + (n + 1) * dim;
    p->delete_cost = p->stamps + (n + 1);
    /* Sample s goes to index s (time order) or n - s (reversed). */
    for (size_t smp = 0; smp <= n; smp++) {
        size_t idx = reversed ? n - smp : smp;
        double *dst = p->values + idx * dim;
        if (smp == 0) {
            memset(dst, 0, dim * sizeof(double));
            p->stamps[idx] = 0.0;
            continue;
        }
        if (s->dtype == WW_F64) {
            memcpy(dst, (const double *)s->values + (smp - 1) * dim, dim * sizeof(double));
            p->stamps[idx] = s->stamps ? ((const double *)s->stamps)[smp - 1] : (double)smp;
        } else {
            const float *src = (const float *)s->values + (smp - 1) * dim;
            for (size_t k = 0; k < dim; k++)
                dst[k] = (double)src[k];
            p->stamps[idx] = s->stamps ? (double)((const float *)s->stamps)[smp - 1] : (double)smp;
        }
    }
    for (size_t smp = 0; smp <= n; smp++) {
        size_t idx = reversed ? n - smp : smp;
        if (smp == 0) {
            p->delete_cost[idx] = 0.0;
            continue;
        }
        size_t prev = reversed ? idx + 1 : idx - 1;
        double step = ww_lp_distance_f64(p->values + idx * dim, p->values + prev * dim, dim, params->degree);
        p->delete_cost[idx] = ww_twed_delete_cost_f64(step, p->stamps[idx], p->stamps[prev], params->nu,
                                                      params->lambda);
    }
}

/* match_part(i, j) with B reversed: sample j of B is at index nB - j. */
static inline double match_part(const ww_prepared *a, const ww_prepared *b, size_t i, size_t kb,
                                const ww_twed_params *p)
{
    double d = ww_lp_distance_f64(a->values + i * a->dim, b->values + kb * b->dim, a->dim, p->degree);
    return ww_twed_match_part_f64(d, a->stamps[i], b->stamps[kb], p->nu);
}

/* ------------------------------------------------------------------ reference (full matrix) */

double ww_cpu_twed_reference(const ww_prepared *a, const ww_prepared *b, const ww_twed_params *p,
                             double *D)
{
    const size_t na = a->length, nb = b->length, w = nb + 1;
    D[0] = 0.0;
    for (size_t j = 1; j <= nb; j++)
        D[j] = WW_INF;
    for (size_t i = 1; i <= na; i++) {
        D[i * w] = WW_INF;
        for (size_t j = 1; j <= nb; j++) {
            double here = match_part(a, b, i, nb - j, p);
            double before = match_part(a, b, i - 1, nb - j + 1, p);
            D[i * w + j] = ww_twed_cell_f64(D[(i - 1) * w + j], D[i * w + j - 1], D[(i - 1) * w + j - 1],
                                            a->delete_cost[i], b->delete_cost[nb - j], here, before);
        }
    }
    return D[na * w + nb];
}

/* ------------------------------------------------------------------ the paper's band */

/* Three anti-diagonals of the whole matrix, each indexed by row i (0..nA), cycled by pointer.
 * Kept as the paper's algorithm and as a cross-check; the strip engine below is faster on CPUs
 * because its diagonals fit in L1 whatever n is (bench/results/cpu.md). */
double ww_cpu_twed_band(const ww_prepared *a, const ww_prepared *b, const ww_twed_params *p,
                        double *work)
{
    const size_t na = a->length, nb = b->length;
    double *z = work, *z1 = work + (na + 1), *z2 = work + 2 * (na + 1);
    /* diagonal 0 holds only D[0][0] = 0 */
    z1[0] = 0.0;
    for (size_t d = 1; d <= na + nb; d++) {
        /* cells (i, j = d - i), 0 <= i <= na, 0 <= j <= nb */
        size_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        for (size_t i = lo; i <= hi; i++) {
            size_t j = d - i;
            if (i == 0 || j == 0) {
                z[i] = WW_INF;
                continue;
            }
            /* D[i-1][j] is z1[i-1], D[i][j-1] is z1[i], D[i-1][j-1] is z2[i-1] */
            double here = match_part(a, b, i, nb - j, p);
            double before = match_part(a, b, i - 1, nb - j + 1, p);
            z[i] = ww_twed_cell_f64(z1[i - 1], z1[i], z2[i - 1], a->delete_cost[i], b->delete_cost[nb - j],
                                    here, before);
        }
        double *t = z2;
        z2 = z1;
        z1 = z;
        z = t;
    }
    return z1[na];
}

/* ------------------------------------------------------------------ strip engine */

/* Rows are processed in strips of STRIP_ROWS. Inside a strip the cells are swept by anti-diagonals
 * (independent cells, so the inner loop vectorises); between strips only one row of D and of the
 * match parts is kept. The diagonal buffers are STRIP_ROWS long and stay in L1 for any n, whereas
 * the paper's full-length diagonals fall out of cache once n passes a few tens of thousands. */
#define STRIP_ROWS 256

typedef struct strip_state {
    double *d0, *d1, *d2; /* D on diagonals t, t-1, t-2; index r = row within strip (0 = row above) */
    double *m0, *m1, *m2; /* match_part on the same cells */
} strip_state;

size_t ww_cpu_twed_work_doubles(ww_engine engine, size_t na, size_t nb, size_t dim)
{
    (void)dim;
    size_t n;
    switch (engine) {
    case WW_ENGINE_CPU_REFERENCE:
        if (!ww_mul_size(na + 1, nb + 1, &n))
            return 0;
        return n;
    case WW_ENGINE_CPU_BAND:
        return 3 * (na + 1);
    default:
        /* two rows (D and match_part of the strip's top boundary) + six strip diagonals */
        return 2 * (nb + 1) + 6 * (STRIP_ROWS + 1);
    }
}

/* One anti-diagonal of a strip, rows r in [lo, hi], dim == 1: the vectorised hot loop. */
WW_MULTIVERSION
static void strip_diagonal_dim1(size_t lo, size_t hi, size_t i0, size_t kb_of_r0, double *restrict d0,
                                const double *restrict d1, const double *restrict d2, double *restrict m0,
                                const double *restrict m2, const double *restrict av, const double *restrict at,
                                const double *restrict adel, const double *restrict bv, const double *restrict bt,
                                const double *restrict bdel, double nu)
{
    for (size_t r = lo; r <= hi; r++) {
        size_t i = i0 + r, kb = kb_of_r0 + r; /* sample j of B at reversed index kb */
        double here = ww_twed_match_part_f64(fabs(av[i] - bv[kb]), at[i], bt[kb], nu);
        m0[r] = here;
        d0[r] = ww_twed_cell_f64(d1[r - 1], d1[r], d2[r - 1], adel[i], bdel[kb], here, m2[r - 1]);
    }
}

/* Same for any dim and degree. */
static void strip_diagonal_any(size_t lo, size_t hi, size_t i0, size_t kb_of_r0, strip_state *s,
                               const ww_prepared *a, const ww_prepared *b, const ww_twed_params *p)
{
    for (size_t r = lo; r <= hi; r++) {
        size_t i = i0 + r, kb = kb_of_r0 + r;
        double here = match_part(a, b, i, kb, p);
        s->m0[r] = here;
        s->d0[r] = ww_twed_cell_f64(s->d1[r - 1], s->d1[r], s->d2[r - 1], a->delete_cost[i],
                                    b->delete_cost[kb], here, s->m2[r - 1]);
    }
}

double ww_cpu_twed_strip(const ww_prepared *a, const ww_prepared *b, const ww_twed_params *p,
                         double *work)
{
    const size_t na = a->length, nb = b->length;
    /* top_d[j] = D[i0][j], top_m[j] = match_part(i0, j): the row above the current strip */
    double *top_d = work, *top_m = work + (nb + 1);
    strip_state s;
    double *diag = work + 2 * (nb + 1);
    s.d0 = diag;
    s.d1 = diag + (STRIP_ROWS + 1);
    s.d2 = diag + 2 * (STRIP_ROWS + 1);
    s.m0 = diag + 3 * (STRIP_ROWS + 1);
    s.m1 = diag + 4 * (STRIP_ROWS + 1);
    s.m2 = diag + 5 * (STRIP_ROWS + 1);

    top_d[0] = 0.0;
    top_m[0] = 0.0; /* match_part(0, 0): both sentinels are 0 at time 0 */
    for (size_t j = 1; j <= nb; j++) {
        top_d[j] = WW_INF;
        top_m[j] = 0.0; /* only ever added to D[0][j-1] = inf, so any finite value works */
    }

    for (size_t i0 = 0; i0 < na; i0 += STRIP_ROWS) {
        const size_t rows = na - i0 < STRIP_ROWS ? na - i0 : STRIP_ROWS;
        /* Diagonal t of the strip holds cells (r, j = t - r), r = 0..rows (r = 0 is row i0). */
        for (size_t t = 0; t <= rows + nb; t++) {
            /* boundary cells: row i0 (from the previous strip) and column 0 (D = inf) */
            if (t <= nb) {
                s.d0[0] = top_d[t];
                s.m0[0] = top_m[t];
            }
            if (t >= 1 && t <= rows) {
                s.d0[t] = WW_INF;
                s.m0[t] = 0.0; /* column 0 below row 0: added to inf only */
            }
            size_t lo = t > nb ? t - nb : 1, hi = t - 1 < rows ? t - 1 : rows;
            if (t >= 2 && lo <= hi) {
                /* cell (r, j = t - r): B sample j is at reversed index nb - t + r */
                size_t kb_of_r0 = nb - t; /* may wrap, but kb_of_r0 + r is in range for r in [lo,hi] */
                if (a->dim == 1)
                    strip_diagonal_dim1(lo, hi, i0, kb_of_r0, s.d0, s.d1, s.d2, s.m0, s.m2, a->values,
                                        a->stamps, a->delete_cost, b->values, b->stamps, b->delete_cost,
                                        p->nu);
                else
                    strip_diagonal_any(lo, hi, i0, kb_of_r0, &s, a, b, p);
            }
            /* the strip's last row becomes the next strip's top row */
            if (t >= rows) {
                top_d[t - rows] = s.d0[rows];
                top_m[t - rows] = s.m0[rows];
            }
            double *td = s.d2, *tm = s.m2;
            s.d2 = s.d1;
            s.d1 = s.d0;
            s.d0 = td;
            s.m2 = s.m1;
            s.m1 = s.m0;
            s.m0 = tm;
        }
    }
    return top_d[nb];
}

/* ------------------------------------------------------------------ ww_twed on the CPU */

ww_status ww_cpu_twed(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p,
                      double *out)
{
    /* Sizes first: a length that overflows them must not make us read the values. */
    ww_engine engine = ctx->engine == WW_ENGINE_AUTO ? WW_ENGINE_CPU_STRIP : ctx->engine;
    ww_cpu_scratch *sc = &ctx->cpu[0];
    size_t work = ww_cpu_twed_work_doubles(engine, a->length, b->length, a->dim);
    if (work == 0 || work > SIZE_MAX / sizeof(double))
        return WW_ERR_OVERFLOW;
    ww_status st = ww_check_values_host(a->values, a->stamps, a->length, a->dim, a->dtype);
    if (st == WW_OK)
        st = ww_check_values_host(b->values, b->stamps, b->length, b->dim, b->dtype);
    if (st != WW_OK)
        return st;
    if ((st = ww_buffer_reserve(&sc->a, ww_prepared_doubles(a->length, a->dim) * sizeof(double))) != WW_OK ||
        (st = ww_buffer_reserve(&sc->b, ww_prepared_doubles(b->length, b->dim) * sizeof(double))) != WW_OK ||
        (st = ww_buffer_reserve(&sc->work, work * sizeof(double))) != WW_OK)
        return st;
    ww_prepared pa, pb;
    ww_prepare(a, p, 0, (double *)sc->a.ptr, &pa);
    ww_prepare(b, p, 1, (double *)sc->b.ptr, &pb);
    switch (engine) {
    case WW_ENGINE_CPU_REFERENCE:
        *out = ww_cpu_twed_reference(&pa, &pb, p, (double *)sc->work.ptr);
        break;
    case WW_ENGINE_CPU_BAND:
        *out = ww_cpu_twed_band(&pa, &pb, p, (double *)sc->work.ptr);
        break;
    default:
        *out = ww_cpu_twed_strip(&pa, &pb, p, (double *)sc->work.ptr);
        break;
    }
    /* The reference engine's matrix can be huge: give it back rather than keep it. */
    if (engine == WW_ENGINE_CPU_REFERENCE)
        ww_buffer_free(&sc->work);
    return WW_OK;
}
