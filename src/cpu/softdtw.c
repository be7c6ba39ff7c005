/* CPU engine of soft-DTW gradients: the forward table by anti-diagonals, then the backward
 * recursion of the expected alignment E (Cuturi and Blondel 2017, algorithm 2) from the last cell
 * to the first, the gradients gathered on the way. The cell and the backward weight are the
 * measure's (src/measures/softdtw.h); this file only schedules them. The cells of an anti-diagonal
 * are independent, so both passes vectorise (compiled with -fno-trapping-math, see CMakeLists.txt).
 *
 * Storage: anti-diagonal t (t = i + j) holds rows p = ilo(t) - 1 .. ihi(t) + 1, where
 * [ilo, ihi] = [max(1, t - nb), min(na, t - 1)] are its cells of the table and the two ends are
 * boundary cells (R = +inf, or 0 for (0, 0); E = 0). A cell reads diagonals t - 1 and t - 2
 * forward and t + 1 and t + 2 backward, whose stored rows always cover what it reads.
 *
 * Memory: the backward pass needs R diagonal by diagonal in reverse. With keep >= na + nb every
 * diagonal is stored (the compact table, about na nb doubles). Otherwise the forward pass stores
 * every keep-th pair of consecutive diagonals (the checkpoints) and the backward pass recomputes
 * the keep diagonals of each segment from its checkpoint before walking them: about
 * (2 (na + nb) / keep + keep) min(na, nb) doubles, O((na + nb)^{1/2} min(na, nb) ...) with
 * keep = sqrt(na + nb), for a second forward pass. The recomputed diagonals are the same operations
 * on the same inputs, so both give the same bits. E and R - cost (Q) are kept on three diagonals. */
#include "cpu_common.h"

#include <string.h>

typedef struct sd_shape {
    long na, nb, T; /* T = na + nb, the last diagonal */
} sd_shape;

static inline long sd_ilo(const sd_shape *s, long t) { return t - s->nb > 1 ? t - s->nb : 1; }
static inline long sd_ihi(const sd_shape *s, long t) { return t - 1 < s->na ? t - 1 : s->na; }
/* stored entries of diagonal t (its cells and the two boundary ends); diagonal 0: (0, 0) alone */
static inline long sd_stored(const sd_shape *s, long t) { return t == 0 ? 1 : sd_ihi(s, t) - sd_ilo(s, t) + 3; }
/* the row of a diagonal's first stored entry */
static inline long sd_base(const sd_shape *s, long t) { return t == 0 ? 0 : sd_ilo(s, t) - 1; }

/* The local costs of diagonal t's cells, cost[i - ilo]: the squared Euclidean norm summed over the
 * components in order (as ww_squared_euclidean), component by component across the diagonal so
 * that the loops vectorise for any dim. */
static WW_ALWAYS_INLINE void diagonal_costs(const sd_shape *s, const ww_prepared *a, const ww_prepared *b, long t,
                                  double *restrict cost)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t);
    const size_t dim = a->dim;
    const double *restrict av = a->values, *restrict bv = b->values;
    if (dim == 1) {
        for (long i = ilo; i <= ihi; i++) {
            const double d = av[i] - bv[t - i];
            cost[i - ilo] = ww_lp_term_f64(d, 2);
        }
        return;
    }
    for (long i = ilo; i <= ihi; i++)
        cost[i - ilo] = 0.0;
    for (size_t k = 0; k < dim; k++)
        for (long i = ilo; i <= ihi; i++) {
            const double d = av[i * dim + k] - bv[(t - i) * dim + k];
            cost[i - ilo] += ww_lp_term_f64(d, 2);
        }
}

/* Diagonal t of R from t - 1 and t - 2 (each pointing at its first stored entry); cost: scratch of
 * the diagonal's length. Inlined into each instruction-set version of the engine below. */
static WW_ALWAYS_INLINE void forward_diagonal(const sd_shape *s, const ww_prepared *a, const ww_prepared *b, const ww_coef_f64 *c,
                                    const ww_pair_window *w, long t, const double *restrict d1,
                                    const double *restrict d2, double *restrict d0, double *restrict cost)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t), b0 = ilo - 1, b1 = sd_base(s, t - 1), b2 = sd_base(s, t - 2);
    d0[0] = WW_INF;
    d0[ihi + 1 - b0] = WW_INF;
    diagonal_costs(s, a, b, t, cost);
    /* cell (i, j = t - i): up (i - 1, j) and left (i, j - 1) on t - 1, diag (i - 1, j - 1) on t - 2 */
    for (long i = ilo; i <= ihi; i++)
        d0[i - b0] = ww_softdtw_cell_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2], 0, 0, cost[i - ilo], 0, c);
    if (w->active) { /* cells outside the window: +inf (they never entered a soft minimum) */
        for (long i = ilo; i <= ihi; i++) {
            size_t lo, hi;
            ww_window_row((size_t)s->na, (size_t)s->nb, w->radius, (size_t)i, &lo, &hi);
            const long j = t - i;
            if (j < (long)lo || j > (long)hi)
                d0[i - b0] = WW_INF;
        }
    }
}

static void first_diagonals(double *d0, double *d1)
{
    d0[0] = 0.0;               /* (0, 0) */
    d1[0] = d1[1] = WW_INF; /* (0, 1), (1, 0) */
}

size_t ww_cpu_softdtw_work_doubles(size_t na, size_t nb, size_t keep)
{
    const sd_shape s = {(long)na, (long)nb, (long)(na + nb)};
    if (keep < 1)
        keep = 1;
    const long k = (long)keep;
    /* the largest segment (diagonals c + 1 .. c + k, c = 1 + q k) and the longest diagonal */
    size_t seg = 0, run = 0, longest = 0;
    for (long t = 2; t <= s.T; t++) {
        const size_t st = (size_t)sd_stored(&s, t);
        longest = st > longest ? st : longest;
        if ((t - 2) % k == 0)
            run = 0;
        run += st;
        seg = run > seg ? run : seg;
    }
    const size_t segments = (size_t)((s.T - 2) / k + 1);
    size_t total = 0;
    if (!ww_mul_size(2 * segments + 7, longest + 1, &total) || total > SIZE_MAX / 2 - seg - (size_t)s.T)
        return 0;
    return total + seg + (size_t)k + 2; /* checkpoints, E and Q rings, costs, the segment, offsets */
}

WW_MULTIVERSION
double ww_cpu_softdtw_gradient(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, size_t keep,
                               double scale, double *grad_a, double *grad_b, double *work)
{
    const sd_shape s = {(long)a->length, (long)b->length, (long)(a->length + b->length)};
    const size_t dim = a->dim;
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    const ww_pair_window w = ww_pair_window_of(m, a->length, b->length);
    if (keep < 1)
        keep = 1;
    const long k = (long)keep;
    long longest = 0;
    for (long t = 2; t <= s.T; t++)
        longest = sd_stored(&s, t) > longest ? sd_stored(&s, t) : longest;
    const long stride = longest + 1;
    const long segments = (s.T - 2) / k + 1; /* segment q: diagonals 2 + q k .. min(1 + (q + 1) k, T) */
    /* checkpoint q: diagonals 2 + q k - 2 and 2 + q k - 1, the two before segment q */
    double *ckpt = work;
    double *ring = ckpt + 2 * segments * stride; /* E on t, t + 1, t + 2; Q on the same */
    double *E[3] = {ring, ring + stride, ring + 2 * stride};
    double *Q[3] = {ring + 3 * stride, ring + 4 * stride, ring + 5 * stride};
    double *cost = ring + 6 * stride;
    size_t *offset = (size_t *)(void *)(ring + 7 * stride); /* of each diagonal of the segment */
    double *seg = ring + 7 * stride + k + 2;

    /* forward: the checkpoints (with one segment, only diagonals 0 and 1) */
    first_diagonals(ckpt, ckpt + stride);
    if (segments > 1) {
        double *d2 = ckpt, *d1 = ckpt + stride;
        double *roll[3] = {E[0], E[1], E[2]}; /* scratch for the diagonals between checkpoints */
        int r = 0;
        for (long t = 2; t <= s.T; t++) {
            double *d0 = roll[r];
            r = (r + 1) % 3;
            forward_diagonal(&s, a, b, &c, &w, t, d1, d2, d0, cost);
            const long q = (t + 2 - 2) / k; /* t = 2 + q k - 2 or - 1: checkpoint q */
            if (t + 2 - 2 == q * k && q < segments)
                memcpy(ckpt + 2 * q * stride, d0, (size_t)sd_stored(&s, t) * sizeof(double));
            if (t + 1 - 2 == ((t + 1 - 2) / k) * k && (t + 1 - 2) / k < segments)
                memcpy(ckpt + (2 * ((t + 1 - 2) / k) + 1) * stride, d0, (size_t)sd_stored(&s, t) * sizeof(double));
            d2 = d1;
            d1 = d0;
        }
    }

    /* backward: E, Q = R - cost (or -inf off the table and the window: its weight is 0) */
    for (int r = 0; r < 3; r++)
        for (long x = 0; x < stride; x++)
            E[r][x] = 0.0, Q[r][x] = -WW_INF;
    double value = NAN;
    const double *av = a->values, *bv = b->values;
    for (long q = segments; q-- > 0;) {
        const long first = 2 + q * k, last = first + k - 1 < s.T ? first + k - 1 : s.T;
        /* recompute the segment from its checkpoint */
        const double *d2 = ckpt + 2 * q * stride, *d1 = ckpt + (2 * q + 1) * stride;
        size_t at = 0;
        for (long t = first; t <= last; t++) {
            offset[t - first] = at;
            forward_diagonal(&s, a, b, &c, &w, t, d1, d2, seg + at, cost);
            d2 = d1;
            d1 = seg + at;
            at += (size_t)sd_stored(&s, t);
        }
        if (last == s.T)
            value = seg[offset[last - first] + 1]; /* (na, nb), the last diagonal's one cell */
        for (long t = last; t >= first; t--) {
            /* rotate: E[1], Q[1] become diagonal t + 1, E[2], Q[2] t + 2, E[0], Q[0] t */
            double *te = E[2], *tq = Q[2];
            E[2] = E[1], Q[2] = Q[1];
            E[1] = E[0], Q[1] = Q[0];
            E[0] = te, Q[0] = tq;
            const double *R = seg + offset[t - first];
            const long ilo = sd_ilo(&s, t), ihi = sd_ihi(&s, t), b0 = ilo - 1;
            const long b1 = t + 1 <= s.T ? sd_base(&s, t + 1) : ilo - 1;
            const long b2 = t + 2 <= s.T ? sd_base(&s, t + 2) : ilo - 1;
            double *restrict e0 = E[0], *restrict q0 = Q[0];
            const double *restrict e1 = E[1], *restrict q1 = Q[1], *restrict e2 = E[2], *restrict q2 = Q[2];
            e0[0] = e0[ihi + 1 - b0] = 0.0;
            q0[0] = q0[ihi + 1 - b0] = -WW_INF;
            if (t == s.T) {
                e0[1] = 1.0;
            } else {
                for (long i = ilo; i <= ihi; i++) {
                    const double here = R[i - b0];
                    /* successors: below (i + 1, j) and right (i, j + 1) on t + 1, diagonal on t + 2 */
                    e0[i - b0] = (e1[i + 1 - b1] * ww_softdtw_back_weight_f64(q1[i + 1 - b1], here, 0, c.inv_gamma, 1) +
                                  e1[i - b1] * ww_softdtw_back_weight_f64(q1[i - b1], here, 0, c.inv_gamma, 1)) +
                                 e2[i + 1 - b2] * ww_softdtw_back_weight_f64(q2[i + 1 - b2], here, 0, c.inv_gamma, 1);
                }
            }
            /* Q for the diagonals before, and the gradients */
            diagonal_costs(&s, a, b, t, cost);
            for (long i = ilo; i <= ihi; i++) {
                const double here = R[i - b0];
                q0[i - b0] = here < WW_INF ? here - cost[i - ilo] : -WW_INF;
            }
            if (dim == 1) {
                for (long i = ilo; i <= ihi; i++) {
                    const double g = 2.0 * scale * e0[i - b0] * (av[i] - bv[t - i]);
                    if (grad_a)
                        grad_a[i - 1] += g;
                    if (grad_b)
                        grad_b[t - i - 1] -= g;
                }
            } else {
                for (long i = ilo; i <= ihi; i++) {
                    const double *x = av + i * dim, *y = bv + (t - i) * dim;
                    const double f = 2.0 * scale * e0[i - b0];
                    if (f == 0.0)
                        continue;
                    for (size_t kk = 0; kk < dim; kk++) {
                        const double g = f * (x[kk] - y[kk]);
                        if (grad_a)
                            grad_a[(i - 1) * dim + kk] += g;
                        if (grad_b)
                            grad_b[(t - i - 1) * dim + kk] -= g;
                    }
                }
            }
        }
    }
    return value;
}

/* The value alone: the forward pass on three rolling diagonals (4 (min(na, nb) + 3) doubles of
 * work), the same operations as the gradient's forward pass, so the same bits. */
WW_MULTIVERSION
double ww_cpu_softdtw_value(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, double *work)
{
    const sd_shape s = {(long)a->length, (long)b->length, (long)(a->length + b->length)};
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    const ww_pair_window w = ww_pair_window_of(m, a->length, b->length);
    const long stride = (long)(a->length < b->length ? a->length : b->length) + 3;
    double *roll[3] = {work, work + stride, work + 2 * stride}, *cost = work + 3 * stride;
    double *d2 = roll[0], *d1 = roll[1];
    first_diagonals(d2, d1);
    int r = 2;
    for (long t = 2; t <= s.T; t++) {
        double *d0 = roll[r];
        r = (r + 1) % 3;
        forward_diagonal(&s, a, b, &c, &w, t, d1, d2, d0, cost);
        d2 = d1;
        d1 = d0;
    }
    return d1[1];
}
