/* Soft-DTW (Cuturi and Blondel 2017) with the squared Euclidean local cost:
 *   R[0][0] = 0, R[i][0] = R[0][j] = +inf,
 *   R[i][j] = ||A_i - B_j||_2^2 + softmin_gamma(R[i-1][j-1], R[i-1][j], R[i][j-1]),
 *   softmin_gamma(a, b, c) = -gamma log(e^{-a/gamma} + e^{-b/gamma} + e^{-c/gamma}),  value R[n][m].
 * The soft minimum is computed stably: the smallest argument r is taken out, so the exponentials
 * are of numbers <= 0 and one of them is 1: softmin = r - gamma log(1 + e^{-(s-r)/g} + e^{-(t-r)/g}).
 * It is not idempotent like a minimum: a series against itself is not 0 (ZERO_SELF = 0), and the
 * divergence (wavewarp.h) subtracts the self terms. `up` and `left` are summed first, so that
 * swapping the series (transposing the table) gives the same bits: the measure is symmetric.
 *
 * The backward pass (the expected alignment E, Cuturi and Blondel's algorithm 2) needs, for a cell
 * and each of its successors (below, right, diagonal), the weight
 *   w = exp((R[succ] - R[here] - cost[succ]) / gamma),
 * which ww_softdtw_back_weight computes, written once here for every engine. */
#ifndef WW_REAL
#ifndef WW_MEASURES_SOFTDTW_H
#define WW_MEASURES_SOFTDTW_H
#include "lp_norm.h"
#include "softmath.h"

/* Traits (see measures.h) */
enum {
    WW_SOFTDTW_HAS_AUX = 0,
    WW_SOFTDTW_CARRIES_BEFORE = 0,
    WW_SOFTDTW_USES_STAMPS = 0,
    WW_SOFTDTW_SYMMETRIC = 1,
    WW_SOFTDTW_ZERO_SELF = 0, /* sdtw(x, x) < 0 in general */
    WW_SOFTDTW_NORM_ROOT = 0, /* the squared norm: no root */
};

#define WW_MEASURE_HEADER "softdtw.h"
#include "instantiate.h"
#undef WW_MEASURE_HEADER
#endif
#else

WW_HD static inline int WW_T(ww_softdtw_norm_p)(const WW_T(ww_coef) *c)
{
    (void)c;
    return 2;
}

WW_HD static inline WW_REAL WW_T(ww_softdtw_local_from_norm)(WW_REAL norm, WW_REAL ta, WW_REAL tb,
                                                             const WW_T(ww_coef) *c)
{
    (void)ta, (void)tb, (void)c;
    return norm;
}

WW_HD static inline WW_REAL WW_T(ww_softdtw_local)(const WW_REAL *a, const WW_REAL *b, size_t dim, WW_REAL ta,
                                                   WW_REAL tb, const WW_T(ww_coef) *c)
{
    (void)ta, (void)tb, (void)c;
    return WW_T(ww_squared_euclidean)(a, b, dim);
}

WW_HD static inline WW_REAL WW_T(ww_softdtw_aux)(const WW_REAL *x, const WW_REAL *x_prev, size_t dim, WW_REAL t,
                                                 WW_REAL t_prev, const WW_T(ww_coef) *c)
{
    (void)x, (void)x_prev, (void)dim, (void)t, (void)t_prev, (void)c;
    return 0;
}

/* softmin_gamma(up, left, diag), stably: with the three sorted, r <= mid <= top,
 *   softmin = r - gamma log(1 + e^{(r - mid) / gamma} + e^{(r - top) / gamma}),
 * two exponentials (the smallest's is 1). +inf when all three are (cells cut off by a window).
 * Branch-free (the engines vectorise it): with all three infinite the sum is taken around 0 and
 * thrown away. up and left enter only through their minimum and maximum: symmetric, bit for bit.
 * In two stages, which an engine may run as two loops over independent cells (shorter chains of
 * dependent instructions, so more cells in flight): ww_softmin_sum gives s = 1 + e_mid + e_top
 * and r (itself ww_softmin_args, the sort and the exponentials' arguments, then ww_softmin_exps),
 * ww_softmin_finish the soft minimum from them. */
WW_HD static inline WW_REAL WW_T(ww_softmin_args)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL gamma,
                                                  WW_REAL inv_gamma, WW_REAL *x_mid, WW_REAL *x_top)
{
    const WW_REAL lo = WW_T(ww_lesser)(up, left), hi = WW_T(ww_greater)(up, left);
    const WW_REAL r = WW_T(ww_lesser)(diag, lo);
    const WW_REAL top = WW_T(ww_greater)(diag, hi);
    const WW_REAL hi_or_diag = WW_T(ww_lesser)(diag, hi);
    const WW_REAL mid = WW_T(ww_greater)(lo, hi_or_diag);
    const WW_REAL base = r < WW_REAL_INF ? r : (WW_REAL)0;
    /* the exponentials' clamp near -708 (see ww_softexp_floor), from the runtime gamma; double
     * only: float's exponentials take any x <= 0 (the C library's, the GPU's flush to 0); in float
     * the clamp made the GPU's forward pass 0.54 -> 0.65 ms (B = 512, N = 512, H200) */
    const WW_REAL floor = (WW_REAL)-708 * (gamma * inv_gamma);
    const WW_REAL xm = (base - mid) * inv_gamma, xt = (base - top) * inv_gamma;
    *x_mid = sizeof(WW_REAL) == sizeof(double) ? (xm > floor ? xm : floor) : xm;
    *x_top = sizeof(WW_REAL) == sizeof(double) ? (xt > floor ? xt : floor) : xt;
    return r;
}

/* The first stage's second half: from ww_softmin_args's clamped arguments, the exponentials and s. */
WW_HD static inline WW_REAL WW_T(ww_softmin_exps)(WW_REAL x_mid, WW_REAL x_top, WW_REAL *e_mid_out, WW_REAL *e_top_out)
{
    const WW_REAL e_mid = WW_T(ww_softexp_unclamped)(x_mid), e_top = WW_T(ww_softexp_unclamped)(x_top);
    *e_mid_out = e_mid;
    *e_top_out = e_top;
    return ((WW_REAL)1 + e_mid) + e_top;
}

WW_HD static inline WW_REAL WW_T(ww_softmin_sum)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL gamma,
                                                 WW_REAL inv_gamma, WW_REAL *r_out, WW_REAL *e_mid_out,
                                                 WW_REAL *e_top_out)
{
    WW_REAL x_mid, x_top;
    *r_out = WW_T(ww_softmin_args)(up, left, diag, gamma, inv_gamma, &x_mid, &x_top);
    return WW_T(ww_softmin_exps)(x_mid, x_top, e_mid_out, e_top_out);
}

WW_HD static inline WW_REAL WW_T(ww_softmin_finish)(WW_REAL r, WW_REAL s, WW_REAL gamma)
{
    return r < WW_REAL_INF ? r - gamma * WW_T(ww_softlog)(s) : WW_REAL_INF;
}

WW_HD static inline WW_REAL WW_T(ww_softmin)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL gamma,
                                             WW_REAL inv_gamma)
{
    WW_REAL r, e_mid, e_top;
    const WW_REAL s = WW_T(ww_softmin_sum)(up, left, diag, gamma, inv_gamma, &r, &e_mid, &e_top);
    return WW_T(ww_softmin_finish)(r, s, gamma);
}

/* ww_softmin (to a few units in the last place: log and 1 / s share a division) and the backward
 * weights of the cell's three predecessors, the soft minimum's probabilities: a predecessor v gets
 *   exp((softmin - v) / gamma) = exp((r - v) / gamma) / s,
 * that is 1 / s, e_mid / s or e_top / s as v is r, mid or top (a tie picks equal exponentials),
 * and 0 when v is +inf (off the table or the window, or all three infinite). They are the weights
 * w = exp((R[succ] - R[here] - cost[succ]) / gamma) of ww_softdtw_back_weight, seen from the
 * successor, since R[succ] - cost[succ] = softmin: a backward pass that keeps them needs no
 * exponential. The second stage, after ww_softmin_sum (see ww_softmin). */
WW_HD static inline WW_REAL WW_T(ww_softmin_weights_finish)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL r,
                                                            WW_REAL s, WW_REAL e_mid, WW_REAL e_top, WW_REAL gamma,
                                                            WW_REAL *w_up, WW_REAL *w_left, WW_REAL *w_diag)
{
    const int up_first = up < left;
    const WW_REAL lo = up_first ? up : left, hi = up_first ? left : up;
    const int diag_below_lo = diag < lo, diag_below_hi = diag < hi;
    const WW_REAL top = diag_below_hi ? hi : diag;
    const WW_REAL hi_or_diag = diag_below_hi ? diag : hi;
    const WW_REAL mid = lo < hi_or_diag ? hi_or_diag : lo;
    const int finite = r < WW_REAL_INF;
    WW_REAL inv_s;
    const WW_REAL log_s = WW_T(ww_softlog_inv)(s, &inv_s);
    /* the weights of r, mid and top; 0 for +inf (the clamped exponential is not quite 0) */
    const WW_REAL p_r = finite ? inv_s : (WW_REAL)0;
    const WW_REAL p_mid = mid < WW_REAL_INF ? e_mid * inv_s : (WW_REAL)0;
    const WW_REAL p_top = top < WW_REAL_INF ? e_top * inv_s : (WW_REAL)0;
    /* diag is r below lo, top above hi, else mid; lo is mid when diag is below it, else r; hi is
     * top when diag is below it, else mid */
    const WW_REAL p_lo = diag_below_lo ? p_mid : p_r, p_hi = diag_below_hi ? p_top : p_mid;
    *w_diag = diag_below_lo ? p_r : diag_below_hi ? p_mid : p_top;
    *w_up = up_first ? p_lo : p_hi;
    *w_left = up_first ? p_hi : p_lo;
    return finite ? r - gamma * log_s : WW_REAL_INF;
}

WW_HD static inline WW_REAL WW_T(ww_softmin_weights)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL gamma,
                                                     WW_REAL inv_gamma, WW_REAL *w_up, WW_REAL *w_left,
                                                     WW_REAL *w_diag)
{
    WW_REAL r, e_mid, e_top;
    const WW_REAL s = WW_T(ww_softmin_sum)(up, left, diag, gamma, inv_gamma, &r, &e_mid, &e_top);
    return WW_T(ww_softmin_weights_finish)(up, left, diag, r, s, e_mid, e_top, gamma, w_up, w_left, w_diag);
}

WW_HD static inline WW_REAL WW_T(ww_softdtw_cell)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL aux_a,
                                                  WW_REAL aux_b, WW_REAL here, WW_REAL before,
                                                  const WW_T(ww_coef) *c)
{
    (void)aux_a, (void)aux_b, (void)before;
    return here + WW_T(ww_softmin)(up, left, diag, c->gamma, c->inv_gamma);
}

/* The soft minimum has one grouping (the sum is symmetric in up and left): the variants are the
 * cell. */
WW_HD static inline WW_REAL WW_T(ww_softdtw_cell_up_last)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL aux_a,
                                                          WW_REAL aux_b, WW_REAL here, WW_REAL before,
                                                          const WW_T(ww_coef) *c)
{
    return WW_T(ww_softdtw_cell)(up, left, diag, aux_a, aux_b, here, before, c);
}

WW_HD static inline WW_REAL WW_T(ww_softdtw_cell_left_last)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL aux_a,
                                                            WW_REAL aux_b, WW_REAL here, WW_REAL before,
                                                            const WW_T(ww_coef) *c)
{
    return WW_T(ww_softdtw_cell)(up, left, diag, aux_a, aux_b, here, before, c);
}

WW_HD static inline WW_REAL WW_T(ww_softdtw_finish)(WW_REAL d) { return d; }

/* The backward weight of a successor cell (see the top): 0 for a successor outside the table or
 * the window (its R is +inf, its E is 0; the caller passes succ_in = 0). */
WW_HD static inline WW_REAL WW_T(ww_softdtw_back_weight)(WW_REAL r_succ, WW_REAL r_here, WW_REAL cost_succ,
                                                         WW_REAL inv_gamma, int succ_in)
{
    return succ_in ? WW_T(ww_softexp)((r_succ - r_here - cost_succ) * inv_gamma) : (WW_REAL)0;
}

#endif
