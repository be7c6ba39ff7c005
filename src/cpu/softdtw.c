/* CPU engine of soft-DTW gradients: the forward table by anti-diagonals, then the backward
 * recursion of the expected alignment E (Cuturi and Blondel 2017, algorithm 2) from the last cell
 * to the first, the gradients gathered on the way. The cell is the measure's
 * (src/measures/softdtw.h); this file only schedules it. The cells of an anti-diagonal are
 * independent, so both passes vectorise (compiled with -fno-trapping-math, see CMakeLists.txt).
 * Where the scaled table stays within a double's range (base2_in_range) the forward passes run on
 * R' = R / (gamma ln 2), the same recurrence in base 2 (src/measures/softmin_base2.h), with fewer
 * operations a cell; the backward pass's weights are probabilities, the same in either base.
 *
 * Storage: anti-diagonal t (t = i + j) holds rows p = ilo(t) - 1 .. ihi(t) + 1, where
 * [ilo, ihi] = [max(1, t - nb), min(na, t - 1)] are its cells of the table and the two ends are
 * boundary cells (R = +inf, or 0 for (0, 0); E = 0). A cell reads diagonals t - 1 and t - 2
 * forward and t + 1 and t + 2 backward, whose stored rows always cover what it reads.
 *
 * The backward pass needs no exponential: the weight of a cell for each of its successors is the
 * successor's soft-minimum probability of it (ww_softmin_weights), which the forward pass computes
 * anyway and keeps, three doubles a cell (up, left, diagonal). Walking back, a finished diagonal
 * passes E times each weight to its predecessors (three rings of three diagonals).
 *
 * Memory: with keep >= na + nb every diagonal's weights are kept (the compact table, about 3 na nb
 * doubles). Otherwise the forward pass stores R on every keep-th pair of consecutive diagonals
 * (the checkpoints) and the backward pass recomputes the keep diagonals of each segment from its
 * checkpoint, keeping their weights, before walking them: about
 * (2 (na + nb) / keep + 3 keep) min(na, nb) doubles, with keep = sqrt(na + nb), for a second
 * forward pass. Both passes run the same operations (the checkpoints' too), so both tables give
 * the same bits. */
#include "cpu_common.h"
#include "../measures/softmin_base2.h"

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

/* The two series component by component (x[k * step + i], sample i of component k, i = 1..n): the
 * loops over a diagonal then read both with unit stride, for any dim (interleaved samples left
 * the dim >= 2 loops strided, at half the vector width or scalar). */
typedef struct sd_components {
    const double *a, *b;
    long step_a, step_b; /* na + 1, nb + 1 */
    size_t dim;
} sd_components;

/* Fills out[(n + 1) dim] from a prepared series (samples 1..n at values[i * dim + k]); with dim 1
 * the prepared values themselves serve. */
static const double *components_of(const ww_prepared *p, double *out)
{
    const size_t n = p->length, dim = p->dim;
    if (dim == 1)
        return p->values;
    for (size_t k = 0; k < dim; k++)
        for (size_t i = 0; i <= n; i++)
            out[k * (n + 1) + i] = p->values[i * dim + k];
    return out;
}

static sd_components components(const ww_prepared *a, const ww_prepared *b, double *scratch)
{
    const sd_components x = {components_of(a, scratch), components_of(b, scratch + (a->length + 1) * a->dim),
                             (long)a->length + 1, (long)b->length + 1, a->dim};
    return x;
}

/* The local costs of diagonal t's cells, cost[i - ilo]: the squared Euclidean norm summed over the
 * components in order (as ww_squared_euclidean), component by component across the diagonal. */
static WW_ALWAYS_INLINE void diagonal_costs(const sd_shape *s, const sd_components *x, long t, double *restrict cost)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t);
    const double *restrict av = x->a, *restrict bv = x->b;
    for (long i = ilo; i <= ihi; i++) {
        const double d = av[i] - bv[t - i];
        cost[i - ilo] = ww_lp_term_f64(d, 2);
    }
    for (size_t k = 1; k < x->dim; k++) {
        const double *restrict ak = av + (long)k * x->step_a, *restrict bk = bv + (long)k * x->step_b;
        for (long i = ilo; i <= ihi; i++) {
            const double d = ak[i] - bk[t - i];
            cost[i - ilo] += ww_lp_term_f64(d, 2);
        }
    }
}

/* Diagonal t of R from t - 1 and t - 2 (each pointing at its first stored entry); cost: scratch of
 * the diagonal's length. With wu != NULL, also the backward weights of each cell's predecessors
 * (ww_softmin_weights: up, left, diagonal), stored like d0, 0 at both ends and outside the window.
 * Inlined into each instruction-set version of the engine below. */
static WW_ALWAYS_INLINE void forward_diagonal(const sd_shape *s, const sd_components *x, const ww_coef_f64 *c,
                                    const ww_pair_window *w, long t, const double *restrict d1,
                                    const double *restrict d2, double *restrict d0, double *restrict cost,
                                    double *restrict wu, double *restrict wl, double *restrict wd)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t), b0 = ilo - 1, b1 = sd_base(s, t - 1), b2 = sd_base(s, t - 2);
    const long n = ihi - ilo + 1;
    /* scratch after the costs: the soft minimum's first stage (ww_softmin_sum) for the second */
    double *restrict sum = cost + n, *restrict rmin = sum + n, *restrict e_mid = rmin + n, *restrict e_top = e_mid + n;
    d0[0] = WW_INF;
    d0[ihi + 1 - b0] = WW_INF;
    diagonal_costs(s, x, t, cost);
    /* cell (i, j = t - i): up (i - 1, j) and left (i, j - 1) on t - 1, diag (i - 1, j - 1) on t - 2.
     * The stages of the soft minimum as loops of their own (the sort, the exponentials, the rest):
     * each has a fraction of the dependent latency of a cell, so the out-of-order window holds more
     * cells (two stages +25% here, three +5% more for the value alone) */
    if (wu == NULL) { /* the value alone: three loops, the exponentials not kept */
        for (long i = ilo; i <= ihi; i++) {
            double xm, xt; /* locals: stores through pointers would keep the loop scalar */
            rmin[i - ilo] = ww_softmin_args_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2], c->gamma, c->inv_gamma, &xm, &xt);
            e_mid[i - ilo] = xm;
            e_top[i - ilo] = xt;
        }
        for (long i = ilo; i <= ihi; i++) {
            double em, et;
            sum[i - ilo] = ww_softmin_exps_f64(e_mid[i - ilo], e_top[i - ilo], &em, &et);
        }
    } else { /* with the weights: two loops (a third cost 12% here), the exponentials kept */
        for (long i = ilo; i <= ihi; i++) {
            double r, em, et;
            sum[i - ilo] = ww_softmin_sum_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2], c->gamma, c->inv_gamma, &r, &em, &et);
            rmin[i - ilo] = r;
            e_mid[i - ilo] = em;
            e_top[i - ilo] = et;
        }
    }
    if (wu == NULL) {
        for (long i = ilo; i <= ihi; i++)
            d0[i - b0] = cost[i - ilo] + ww_softmin_finish_f64(rmin[i - ilo], sum[i - ilo], c->gamma);
    } else {
        wu[0] = wl[0] = wd[0] = 0.0;
        wu[ihi + 1 - b0] = wl[ihi + 1 - b0] = wd[ihi + 1 - b0] = 0.0;
        for (long i = ilo; i <= ihi; i++) {
            double pu, pl, pd; /* locals: stores through the pointers would keep the loop scalar */
            d0[i - b0] = cost[i - ilo] + ww_softmin_weights_finish_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2],
                                                                       rmin[i - ilo], sum[i - ilo], e_mid[i - ilo],
                                                                       e_top[i - ilo], c->gamma, &pu, &pl, &pd);
            wu[i - b0] = pu;
            wl[i - b0] = pl;
            wd[i - b0] = pd;
        }
    }
    if (w->active) { /* cells outside the window: +inf (they never entered a soft minimum) */
        for (long i = ilo; i <= ihi; i++) {
            size_t lo, hi;
            ww_window_row((size_t)s->na, (size_t)s->nb, w->radius, (size_t)i, &lo, &hi);
            const long j = t - i;
            if (j < (long)lo || j > (long)hi) {
                d0[i - b0] = WW_INF;
                if (wu != NULL)
                    wu[i - b0] = wl[i - b0] = wd[i - b0] = 0.0;
            }
        }
    }
}

/* E of diagonal t's cells n = ihi - ilo + 1 (1 on the last diagonal), from what its successors pass
 * back (below_up, right_left on t + 1, diag_diag on t + 2, each at the first cell's successor), and
 * what it passes back in turn (E times the cell's weights: up, left, diag); out: twice the scale
 * times E, for the gradients. Pointers at the first cell. A function of its own for `restrict`. */
static WW_ALWAYS_INLINE void backward_diagonal(long ilo, long ihi, int last, double two_scale, const double *restrict wu,
                                     const double *restrict wl, const double *restrict wd,
                                     const double *restrict below_up, const double *restrict right_left,
                                     const double *restrict diag_diag, double *restrict up, double *restrict left,
                                     double *restrict diag, double *restrict out)
{
    const long n = ihi - ilo + 1;
    for (long x = 0; x < n; x++) {
        const double e = last ? 1.0 : (below_up[x] + right_left[x]) + diag_diag[x];
        up[x] = e * wu[x];
        left[x] = e * wl[x];
        diag[x] = e * wd[x];
        out[x] = two_scale * e;
    }
}

/* Component k of the gradients' sums, ga[i] (i = 1..na) and gb[j] (j = 1..nb), from f = twice the
 * scale times E on diagonal t. */
static WW_ALWAYS_INLINE void gradient_a(long ilo, long ihi, long t, const double *restrict f, const double *restrict ak,
                              const double *restrict bk, double *restrict ga)
{
    for (long i = ilo; i <= ihi; i++)
        ga[i] += f[i - ilo] * (ak[i] - bk[t - i]);
}

static WW_ALWAYS_INLINE void gradient_b(long ilo, long ihi, long t, const double *restrict f, const double *restrict ak,
                              const double *restrict bk, double *restrict gb)
{
    for (long i = ilo; i <= ihi; i++)
        gb[t - i] -= f[i - ilo] * (ak[i] - bk[t - i]);
}

static void first_diagonals(double *d0, double *d1)
{
    d0[0] = 0.0;               /* (0, 0) */
    d1[0] = d1[1] = WW_INF; /* (0, 1), (1, 0) */
}

/* The table in base 2 (src/measures/softmin_base2.h): R' = R / (gamma ln 2), costs multiplied by
 * to_base2 = 1 / (gamma ln 2), fewer operations a cell than the natural base. Used where its
 * entries stay within range: they lie between -log2(3) (na + nb) and the cost of the diagonal
 * path, at most (na + nb) dim (2 largest |value|)^2 to_base2; and to_base2 not below 2^-64, so
 * that no cost a double holds in R's units underflows in R''s. Otherwise the natural base. */
static int base2_in_range(const ww_prepared *a, const ww_prepared *b, double to_base2)
{
    double largest = 0.0;
    for (size_t k = 0; k < (a->length + 1) * a->dim; k++)
        largest = fabs(a->values[k]) > largest ? fabs(a->values[k]) : largest;
    for (size_t k = 0; k < (b->length + 1) * b->dim; k++)
        largest = fabs(b->values[k]) > largest ? fabs(b->values[k]) : largest;
    const double bound = (double)(a->length + b->length) * (double)a->dim * 4.0 * largest * largest * to_base2;
    return to_base2 >= 0x1p-64 && bound <= 1e300;
}

/* An exponent floor gcc cannot fold (see ww_softmin2_args_f64): 2^-1000 is nothing next to the
 * sum's 1, and p 2^-1000 is a normal number. */
static volatile double base2_floor = -1000.0;

/* forward_diagonal with the weights, in base 2: the costs multiplied by to_base2, the soft minimum
 * of softmin_base2.h, in the same two loops. */
static WW_ALWAYS_INLINE void forward_diagonal_weights_base2(const sd_shape *s, const sd_components *x,
                                                            const ww_pair_window *w, double to_base2, double floor,
                                                            long t, const double *restrict d1,
                                                            const double *restrict d2, double *restrict d0,
                                                            double *restrict cost, double *restrict wu,
                                                            double *restrict wl, double *restrict wd)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t), b0 = ilo - 1, b1 = sd_base(s, t - 1), b2 = sd_base(s, t - 2);
    const long n = ihi - ilo + 1;
    double *restrict from = cost + n, *restrict sum = from + n, *restrict e_hi = sum + n, *restrict e_other = e_hi + n;
    d0[0] = WW_INF;
    d0[ihi + 1 - b0] = WW_INF;
    wu[0] = wl[0] = wd[0] = 0.0;
    wu[ihi + 1 - b0] = wl[ihi + 1 - b0] = wd[ihi + 1 - b0] = 0.0;
    diagonal_costs(s, x, t, cost);
    for (long i = ilo; i <= ihi; i++) {
        double xh, xo;
        const double r = ww_softmin2_args_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2], floor, &xh, &xo);
        const double eh = ww_exp2_clamped_f64(xh), eo = ww_exp2_clamped_f64(xo);
        from[i - ilo] = r + cost[i - ilo] * to_base2;
        sum[i - ilo] = (1.0 + eh) + eo; /* ww_softmin2_sum_f64, the exponentials kept */
        e_hi[i - ilo] = eh;
        e_other[i - ilo] = eo;
    }
    for (long i = ilo; i <= ihi; i++) {
        double pu, pl, pd; /* locals: stores through the pointers would keep the loop scalar */
        d0[i - b0] = ww_softmin2_weights_finish_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2], from[i - ilo],
                                                    sum[i - ilo], e_hi[i - ilo], e_other[i - ilo], &pu, &pl, &pd);
        wu[i - b0] = pu;
        wl[i - b0] = pl;
        wd[i - b0] = pd;
    }
    if (w->active) { /* cells outside the window: +inf (they never entered a soft minimum) */
        for (long i = ilo; i <= ihi; i++) {
            size_t lo, hi;
            ww_window_row((size_t)s->na, (size_t)s->nb, w->radius, (size_t)i, &lo, &hi);
            const long j = t - i;
            if (j < (long)lo || j > (long)hi) {
                d0[i - b0] = WW_INF;
                wu[i - b0] = wl[i - b0] = wd[i - b0] = 0.0;
            }
        }
    }
}

size_t ww_cpu_softdtw_work_doubles(size_t na, size_t nb, size_t dim, size_t keep)
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
    size_t series = 0; /* the components and the gradients' sums */
    if (!ww_mul_size(2 * segments + 17, longest + 1, &total) || seg > SIZE_MAX / 8 ||
        !ww_mul_size(na + nb + 2, 2 * dim, &series) || total > SIZE_MAX / 4 - 3 * seg - (size_t)s.T - series)
        return 0;
    /* checkpoints, the E-times-weight rings, R's rolling diagonals, costs, the segment's weights,
     * offsets */
    return total + 3 * seg + (size_t)k + 2 + series;
}

WW_MULTIVERSION
double ww_cpu_softdtw_gradient(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, size_t keep,
                               double scale, double *grad_a, double *grad_b, double *work)
{
    const sd_shape s = {(long)a->length, (long)b->length, (long)(a->length + b->length)};
    const size_t dim = a->dim;
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    const ww_pair_window w = ww_pair_window_of(m, a->length, b->length);
    const double gamma_ln2 = c.gamma * 0.6931471805599453, to_base2 = 1.0 / gamma_ln2, floor = base2_floor;
    const int base2 = base2_in_range(a, b, to_base2);
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
    double *ring = ckpt + 2 * segments * stride;
    /* what a finished diagonal passes back, E times the weight, to the cell above (EU), to the left
     * (EL) and diagonally (ED), on t, t + 1, t + 2 */
    double *EU[3] = {ring, ring + stride, ring + 2 * stride};
    double *EL[3] = {ring + 3 * stride, ring + 4 * stride, ring + 5 * stride};
    double *ED[3] = {ring + 6 * stride, ring + 7 * stride, ring + 8 * stride};
    double *roll[3] = {ring + 9 * stride, ring + 10 * stride, ring + 11 * stride}; /* R, forward */
    double *cost = ring + 12 * stride, *e0 = cost; /* 5 strides of scratch (forward_diagonal); later E */
    size_t *offset = (size_t *)(void *)(ring + 17 * stride); /* of each diagonal's weights in the segment */
    double *seg = ring + 17 * stride + k + 2;
    size_t seg_doubles = 0; /* the largest segment's weights */
    {
        size_t run = 0;
        for (long t = 2; t <= s.T; t++) {
            if ((t - 2) % k == 0)
                run = 0;
            run += 3 * (size_t)sd_stored(&s, t);
            seg_doubles = run > seg_doubles ? run : seg_doubles;
        }
    }
    /* the gradients' sums by component (added to grad_a, grad_b at the end), and the components */
    double *ga = seg + seg_doubles, *gb = ga + (s.na + 1) * (long)dim;
    const sd_components x = components(a, b, gb + (s.nb + 1) * (long)dim);
    memset(ga, 0, (size_t)(s.na + s.nb + 2) * dim * sizeof(double));

    /* forward: the checkpoints (with one segment, only diagonals 0 and 1) */
    first_diagonals(ckpt, ckpt + stride);
    if (segments > 1) {
        double *d2 = ckpt, *d1 = ckpt + stride;
        int r = 0;
        for (long t = 2; t <= s.T; t++) {
            double *d0 = roll[r];
            r = (r + 1) % 3;
            /* the weights' operations, into scratch: the same R as the segments' recomputation */
            if (base2)
                forward_diagonal_weights_base2(&s, &x, &w, to_base2, floor, t, d1, d2, d0, cost, EU[0], EL[0], ED[0]);
            else
                forward_diagonal(&s, &x, &c, &w, t, d1, d2, d0, cost, EU[0], EL[0], ED[0]);
            const long q = (t + 2 - 2) / k; /* t = 2 + q k - 2 or - 1: checkpoint q */
            if (t + 2 - 2 == q * k && q < segments)
                memcpy(ckpt + 2 * q * stride, d0, (size_t)sd_stored(&s, t) * sizeof(double));
            if (t + 1 - 2 == ((t + 1 - 2) / k) * k && (t + 1 - 2) / k < segments)
                memcpy(ckpt + (2 * ((t + 1 - 2) / k) + 1) * stride, d0, (size_t)sd_stored(&s, t) * sizeof(double));
            d2 = d1;
            d1 = d0;
        }
    }

    /* backward: E from the successors' weights (0 off the table and the window) */
    for (int r = 0; r < 3; r++)
        for (long e = 0; e < stride; e++)
            EU[r][e] = EL[r][e] = ED[r][e] = 0.0;
    double value = NAN;
    for (long q = segments; q-- > 0;) {
        const long first = 2 + q * k, last = first + k - 1 < s.T ? first + k - 1 : s.T;
        /* recompute the segment from its checkpoint, keeping its weights */
        const double *d2 = ckpt + 2 * q * stride, *d1 = ckpt + (2 * q + 1) * stride;
        size_t at = 0;
        int r = 0;
        for (long t = first; t <= last; t++) {
            const size_t st = (size_t)sd_stored(&s, t);
            double *d0 = roll[r];
            r = (r + 1) % 3;
            offset[t - first] = at;
            if (base2)
                forward_diagonal_weights_base2(&s, &x, &w, to_base2, floor, t, d1, d2, d0, cost, seg + at,
                                               seg + at + st, seg + at + 2 * st);
            else
                forward_diagonal(&s, &x, &c, &w, t, d1, d2, d0, cost, seg + at, seg + at + st, seg + at + 2 * st);
            d2 = d1;
            d1 = d0;
            at += 3 * st;
        }
        if (last == s.T)
            value = base2 ? d1[1] * gamma_ln2 : d1[1]; /* (na, nb), the last diagonal's one cell */
        for (long t = last; t >= first; t--) {
            /* rotate: slot 1 becomes diagonal t + 1, slot 2 t + 2, slot 0 t */
            double *tu = EU[2], *tl = EL[2], *td = ED[2];
            EU[2] = EU[1], EL[2] = EL[1], ED[2] = ED[1];
            EU[1] = EU[0], EL[1] = EL[0], ED[1] = ED[0];
            EU[0] = tu, EL[0] = tl, ED[0] = td;
            const long st = sd_stored(&s, t);
            const double *restrict wu = seg + offset[t - first], *restrict wl = wu + st, *restrict wd = wu + 2 * st;
            const long ilo = sd_ilo(&s, t), ihi = sd_ihi(&s, t), b0 = ilo - 1;
            const long b1 = t + 1 <= s.T ? sd_base(&s, t + 1) : ilo - 1;
            const long b2 = t + 2 <= s.T ? sd_base(&s, t + 2) : ilo - 1;
            /* successors: below (i + 1, j) and right (i, j + 1) on t + 1, diagonal on t + 2; this
             * cell is below's up, right's left and the diagonal's diagonal predecessor */
            backward_diagonal(ilo, ihi, t == s.T, 2.0 * scale, wu + 1, wl + 1, wd + 1, EU[1] + ilo + 1 - b1,
                              EL[1] + ilo - b1, ED[2] + ilo + 1 - b2, EU[0] + 1, EL[0] + 1, ED[0] + 1, e0);
            EU[0][0] = EL[0][0] = ED[0][0] = 0.0;
            EU[0][ihi + 1 - b0] = EL[0][ihi + 1 - b0] = ED[0][ihi + 1 - b0] = 0.0;
            /* the gradients: E times the local cost's derivative, a component at a time */
            for (size_t kk = 0; kk < dim; kk++) {
                const double *ak = x.a + (long)kk * x.step_a, *bk = x.b + (long)kk * x.step_b;
                if (grad_a)
                    gradient_a(ilo, ihi, t, e0, ak, bk, ga + (long)kk * x.step_a);
                if (grad_b)
                    gradient_b(ilo, ihi, t, e0, ak, bk, gb + (long)kk * x.step_b);
            }
        }
    }
    for (long i = 1; grad_a && i <= s.na; i++)
        for (size_t kk = 0; kk < dim; kk++)
            grad_a[(i - 1) * (long)dim + (long)kk] += ga[(long)kk * x.step_a + i];
    for (long j = 1; grad_b && j <= s.nb; j++)
        for (size_t kk = 0; kk < dim; kk++)
            grad_b[(j - 1) * (long)dim + (long)kk] += gb[(long)kk * x.step_b + j];
    return value;
}

/* ------------------------------------------------------------------ the value alone, in base 2
 *
 * The forward pass of the value on three rolling diagonals, on the table scaled to
 * R' = R / (gamma ln 2) (src/measures/softmin_base2.h), where base2_in_range; ww_cpu_softdtw_value
 * (the natural base) elsewhere and for the self terms of matrices. */

/* The series for the scaled table: components multiplied by sigma = sqrt(to_base2), so that the
 * squared differences are the scaled costs c', and b's reversed, b[k * step_b + nb - j], so that a
 * diagonal reads both with increasing index (no shuffle to reverse b's vectors). */
static sd_components scaled_components(const ww_prepared *a, const ww_prepared *b, double sigma, double *out)
{
    const size_t na = a->length, nb = b->length, dim = a->dim;
    double *as = out, *bs = out + (na + 1) * dim;
    for (size_t k = 0; k < dim; k++) {
        for (size_t i = 0; i <= na; i++)
            as[k * (na + 1) + i] = sigma * a->values[i * dim + k];
        for (size_t j = 0; j <= nb; j++)
            bs[k * (nb + 1) + (nb - j)] = sigma * b->values[j * dim + k];
    }
    const sd_components x = {as, bs, (long)na + 1, (long)nb + 1, dim};
    return x;
}

/* The scaled costs of diagonal t's cells, cost[i - ilo], b reversed (b_j at nb - j). */
static WW_ALWAYS_INLINE void diagonal_costs_reversed(const sd_shape *s, const sd_components *x, long t,
                                                     double *restrict cost)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t), shift = s->nb - t; /* b_{t - i} at shift + i */
    const double *restrict av = x->a, *restrict bv = x->b + shift;
    for (long i = ilo; i <= ihi; i++) {
        const double d = av[i] - bv[i];
        cost[i - ilo] = d * d;
    }
    for (size_t k = 1; k < x->dim; k++) {
        const double *restrict ak = av + (long)k * x->step_a, *restrict bk = bv + (long)k * x->step_b;
        for (long i = ilo; i <= ihi; i++) {
            const double d = ak[i] - bk[i];
            cost[i - ilo] = fma(d, d, cost[i - ilo]);
        }
    }
}

/* Diagonal t of R' from t - 1 and t - 2, as forward_diagonal without weights, in two loops: the
 * soft minimum's arguments and its two exponentials (with the costs, for dim 1 and 2), then the
 * logarithm. Each has part of a cell's dependent latency, so the out-of-order window holds more
 * cells. Measured on 2048 x 2048, dim 2 (Zen 3): these two loops 400 Mcells/s; the exponentials
 * in loops of their own, one or two, 315-385; the division moved into the first loop 366; one loop
 * for all 285; the costs in a loop of their own 323. scratch: 3 diagonals' length. fixed_dim: 1 or
 * 2, or 0 for any dim (the costs in a loop of their own). */
static WW_ALWAYS_INLINE void forward_diagonal_base2(const sd_shape *s, const sd_components *x, int fixed_dim,
                                                    const ww_pair_window *w, double floor, long t,
                                                    const double *restrict d1, const double *restrict d2,
                                                    double *restrict d0, double *restrict scratch)
{
    const long ilo = sd_ilo(s, t), ihi = sd_ihi(s, t), b0 = ilo - 1, b1 = sd_base(s, t - 1), b2 = sd_base(s, t - 2);
    const long n = ihi - ilo + 1;
    double *restrict cost = scratch, *restrict from = cost + n, *restrict sum = from + n;
    d0[0] = WW_INF;
    d0[ihi + 1 - b0] = WW_INF;
    /* b reversed: b_{t - i} at b0s[i] */
    const double *restrict a0 = x->a, *restrict a1 = a0 + x->step_a;
    const double *restrict b0s = x->b + (s->nb - t), *restrict b1s = b0s + x->step_b;
    if (fixed_dim == 0)
        diagonal_costs_reversed(s, x, t, cost);
    /* cell (i, j = t - i): up (i - 1, j) and left (i, j - 1) on t - 1, diag (i - 1, j - 1) on t - 2 */
    for (long i = ilo; i <= ihi; i++) {
        double xh, xo;
        const double r = ww_softmin2_args_f64(d1[i - 1 - b1], d1[i - b1], d2[i - 1 - b2], floor, &xh, &xo);
        double c; /* the operations of diagonal_costs_reversed */
        if (fixed_dim == 0) {
            c = cost[i - ilo];
        } else {
            const double d = a0[i] - b0s[i];
            c = d * d;
            if (fixed_dim == 2) {
                const double e = a1[i] - b1s[i];
                c = fma(e, e, c);
            }
        }
        from[i - ilo] = r + c;
        sum[i - ilo] = ww_softmin2_sum_f64(xh, xo);
    }
    for (long i = ilo; i <= ihi; i++)
        d0[i - b0] = ww_sub_log2_f64(from[i - ilo], sum[i - ilo]);
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

size_t ww_cpu_softdtw_value_doubles(size_t na, size_t nb, size_t dim)
{
    return 8 * ((na < nb ? na : nb) + 3) + (na + nb + 2) * dim;
}

/* The value alone: the forward pass on three rolling diagonals (ww_cpu_softdtw_value_doubles of
 * work), in the natural base: the gradient engine's forward pass (to the last bits,
 * ww_softmin_weights), and the self terms of matrices, which must agree with the lane engine's
 * values there to the last bits (a kNN of a set against itself finds each series first). */
WW_MULTIVERSION
double ww_cpu_softdtw_value(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, double *work)
{
    const sd_shape s = {(long)a->length, (long)b->length, (long)(a->length + b->length)};
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    const ww_pair_window w = ww_pair_window_of(m, a->length, b->length);
    const long stride = (long)(a->length < b->length ? a->length : b->length) + 3;
    double *roll[3] = {work, work + stride, work + 2 * stride}, *cost = work + 3 * stride; /* and 4 more */
    const sd_components x = components(a, b, work + 8 * stride);
    double *d2 = roll[0], *d1 = roll[1];
    first_diagonals(d2, d1);
    int r = 2;
    for (long t = 2; t <= s.T; t++) {
        double *d0 = roll[r];
        r = (r + 1) % 3;
        forward_diagonal(&s, &x, &c, &w, t, d1, d2, d0, cost, NULL, NULL, NULL);
        d2 = d1;
        d1 = d0;
    }
    return d1[1];
}

/* The value alone on the base-2 table where it stays within range (base2_in_range), else
 * ww_cpu_softdtw_value. The two differ by a few units in the last place a cell. Same work. */
WW_MULTIVERSION
double ww_cpu_softdtw_value_base2(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, double *work)
{
    const sd_shape s = {(long)a->length, (long)b->length, (long)(a->length + b->length)};
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    const ww_pair_window w = ww_pair_window_of(m, a->length, b->length);
    const long stride = (long)(a->length < b->length ? a->length : b->length) + 3;
    double *roll[3] = {work, work + stride, work + 2 * stride}, *scratch = work + 3 * stride; /* 3 of 5 strides */
    const double gamma_ln2 = c.gamma * 0.6931471805599453, to_base2 = 1.0 / gamma_ln2;
    if (!base2_in_range(a, b, to_base2))
        return ww_cpu_softdtw_value(m, a, b, work);
    const sd_components x = scaled_components(a, b, sqrt(to_base2), work + 8 * stride);
    const double floor = base2_floor;
    double *d2 = roll[0], *d1 = roll[1];
    first_diagonals(d2, d1);
    int r = 2;
    /* dim 1 and 2 (the common ones) as loop nests of their own, the costs inside the first stage */
    const int fixed_dim = x.dim <= 2 ? (int)x.dim : 0;
    for (long t = 2; t <= s.T; t++) {
        double *d0 = roll[r];
        r = (r + 1) % 3;
        if (fixed_dim == 1)
            forward_diagonal_base2(&s, &x, 1, &w, floor, t, d1, d2, d0, scratch);
        else if (fixed_dim == 2)
            forward_diagonal_base2(&s, &x, 2, &w, floor, t, d1, d2, d0, scratch);
        else
            forward_diagonal_base2(&s, &x, 0, &w, floor, t, d1, d2, d0, scratch);
        d2 = d1;
        d1 = d0;
    }
    return d1[1] * gamma_ln2;
}
