/* TWED, the Time Warp Edit Distance (Marteau 2009): the measure for every engine.
 *
 * Conventions (wavewarp.h): sample 0 is the zero vector at time 0, samples 1..n are the data.
 *   local(i, j) = match_part(i, j) = ||A_i - B_j|| + nu |TA_i - TB_j|
 *   aux(i)      = delete_cost(i)   = ||X_i - X_{i-1}|| + nu (TX_i - TX_{i-1}) + lambda
 *   D[i][j] = min(D[i-1][j] + aux_a(i), D[i][j-1] + aux_b(j),
 *                 D[i-1][j-1] + local(i, j) + local(i-1, j-1))
 * so a cell carries the previous match part (local of the diagonal neighbour) besides D. */
#ifndef WW_REAL
#ifndef WW_MEASURES_TWED_H
#define WW_MEASURES_TWED_H
#include "lp_norm.h"

/* Traits (see measures.h): constants, folded away in every engine instantiated for TWED. */
enum {
    WW_TWED_HAS_AUX = 1,        /* per-sample deletion costs */
    WW_TWED_CARRIES_BEFORE = 1, /* the cell reads local(i-1, j-1) */
    WW_TWED_USES_STAMPS = 1,
    WW_TWED_SYMMETRIC = 1,      /* d(a, b) = d(b, a), bit for bit */
    WW_TWED_ZERO_SELF = 1,      /* d(a, a) = 0 */
    WW_TWED_NORM_ROOT = 1,      /* ||.||_p with its root */
};

#define WW_MEASURE_HEADER "twed.h"
#include "instantiate.h"
#undef WW_MEASURE_HEADER
#endif
#else

WW_HD static inline int WW_T(ww_twed_norm_p)(const WW_T(ww_coef) *c) { return c->degree; }

/* A usable time stamp: finite and at most half the largest value in magnitude, so that the
 * difference of any two stamps (sample 0's stamp, 0, included) is finite. An infinite difference
 * times nu = 0 would be NaN, and the engines' minimums, which group their comparisons differently,
 * need every cost to be a number. (NaN fails the comparison too.) */
WW_HD static inline int WW_T(ww_stamp_ok)(WW_REAL t)
{
    return WW_FABS(t) <= WW_REAL_MAX / 2;
}

/* The part of the match cost that belongs to the cell (i, j): ||A_i - B_j|| + nu |TA_i - TB_j|. */
WW_HD static inline WW_REAL WW_T(ww_twed_match_part)(WW_REAL value_distance, WW_REAL ta, WW_REAL tb, WW_REAL nu)
{
    return value_distance + nu * WW_FABS(ta - tb);
}

/* Cost of deleting sample i of a series: ||X_i - X_{i-1}|| + nu (T_i - T_{i-1}) + lambda. */
WW_HD static inline WW_REAL WW_T(ww_twed_delete_cost)(WW_REAL step_distance, WW_REAL t, WW_REAL t_prev, WW_REAL nu,
                                                      WW_REAL lambda)
{
    return step_distance + nu * (t - t_prev) + lambda;
}

/* The measure's interface (every measure has these, see dtw.h). */
WW_HD static inline WW_REAL WW_T(ww_twed_local_from_norm)(WW_REAL norm, WW_REAL ta, WW_REAL tb,
                                                          const WW_T(ww_coef) *c)
{
    return WW_T(ww_twed_match_part)(norm, ta, tb, c->nu);
}

WW_HD static inline WW_REAL WW_T(ww_twed_local)(const WW_REAL *a, const WW_REAL *b, size_t dim, WW_REAL ta,
                                                WW_REAL tb, const WW_T(ww_coef) *c)
{
    return WW_T(ww_twed_match_part)(WW_T(ww_lp_distance)(a, b, dim, c->degree), ta, tb, c->nu);
}

/* aux(s) of sample s from samples s and s - 1 (s >= 1). */
WW_HD static inline WW_REAL WW_T(ww_twed_aux)(const WW_REAL *x, const WW_REAL *x_prev, size_t dim, WW_REAL t,
                                              WW_REAL t_prev, const WW_T(ww_coef) *c)
{
    return WW_T(ww_twed_delete_cost)(WW_T(ww_lp_distance)(x, x_prev, dim, c->degree), t, t_prev, c->nu, c->lambda);
}

/* D[i][j] from its three neighbours. up = D[i-1][j], left = D[i][j-1], diag = D[i-1][j-1];
 * here + before = match_part(i, j) + match_part(i-1, j-1). */
WW_HD static inline WW_REAL WW_T(ww_twed_cell)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL delete_a,
                                               WW_REAL delete_b, WW_REAL here, WW_REAL before, const WW_T(ww_coef) *c)
{
    (void)c;
    WW_REAL del_a = up + delete_a;
    WW_REAL del_b = left + delete_b;
    WW_REAL match = diag + (here + before);
    WW_REAL m = del_a < del_b ? del_a : del_b;
    return match < m ? match : m;
}

/* ww_twed_cell's value, with the minimums grouped so that `up` is taken last: for schedules in
 * which the cell above arrives after the others (from another thread), the comparison of the
 * other two can run while it travels. The minimum is exact, so every grouping gives the same
 * value for every input that can occur: numbers or +inf, and a NaN match part (only ever between
 * padding samples), which loses as in ww_twed_cell. (Costs are never NaN: ww_stamp_ok.) */
WW_HD static inline WW_REAL WW_T(ww_twed_cell_up_last)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL delete_a,
                                                       WW_REAL delete_b, WW_REAL here, WW_REAL before, const WW_T(ww_coef) *c)
{
    (void)c;
    WW_REAL del_b = left + delete_b;
    WW_REAL match = diag + (here + before);
    WW_REAL del_a = up + delete_a;
    WW_REAL m = match < del_b ? match : del_b;
    return del_a < m ? del_a : m;
}

/* The same with `left` taken last. */
WW_HD static inline WW_REAL WW_T(ww_twed_cell_left_last)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL delete_a,
                                                         WW_REAL delete_b, WW_REAL here, WW_REAL before, const WW_T(ww_coef) *c)
{
    (void)c;
    WW_REAL del_a = up + delete_a;
    WW_REAL match = diag + (here + before);
    WW_REAL del_b = left + delete_b;
    WW_REAL m = match < del_a ? match : del_a;
    return del_b < m ? del_b : m;
}

/* The distance from D[n][m]. */
WW_HD static inline WW_REAL WW_T(ww_twed_finish)(WW_REAL d) { return d; }

#endif
