/* DTW, dynamic time warping with the squared Euclidean local cost (aeon's dtw_distance):
 *   D[0][0] = 0, D[i][0] = D[0][j] = +inf,
 *   D[i][j] = ||A_i - B_j||_2^2 + min(D[i-1][j], D[i][j-1], D[i-1][j-1]),  distance D[n][m].
 * No per-sample term, no carried state, no stamps. The minimum is exact, so every grouping of the
 * three comparisons gives the same value: the cell_up_last/left_last variants are the cell. */
#ifndef WW_REAL
#ifndef WW_MEASURES_DTW_H
#define WW_MEASURES_DTW_H
#include "lp_norm.h"

/* Traits (see measures.h) */
enum {
    WW_DTW_HAS_AUX = 0,
    WW_DTW_CARRIES_BEFORE = 0,
    WW_DTW_USES_STAMPS = 0,
    WW_DTW_SYMMETRIC = 1,
    WW_DTW_ZERO_SELF = 1,
    WW_DTW_NORM_ROOT = 0,       /* the squared norm: no root */
};

#define WW_MEASURE_HEADER "dtw.h"
#include "instantiate.h"
#undef WW_MEASURE_HEADER
#endif
#else

WW_HD static inline int WW_T(ww_dtw_norm_p)(const WW_T(ww_coef) *c)
{
    (void)c;
    return 2;
}

WW_HD static inline WW_REAL WW_T(ww_dtw_local_from_norm)(WW_REAL norm, WW_REAL ta, WW_REAL tb, const WW_T(ww_coef) *c)
{
    (void)ta, (void)tb, (void)c;
    return norm;
}

WW_HD static inline WW_REAL WW_T(ww_dtw_local)(const WW_REAL *a, const WW_REAL *b, size_t dim, WW_REAL ta, WW_REAL tb,
                                               const WW_T(ww_coef) *c)
{
    (void)ta, (void)tb, (void)c;
    return WW_T(ww_squared_euclidean)(a, b, dim);
}

WW_HD static inline WW_REAL WW_T(ww_dtw_aux)(const WW_REAL *x, const WW_REAL *x_prev, size_t dim, WW_REAL t,
                                             WW_REAL t_prev, const WW_T(ww_coef) *c)
{
    (void)x, (void)x_prev, (void)dim, (void)t, (void)t_prev, (void)c;
    return 0;
}

WW_HD static inline WW_REAL WW_T(ww_dtw_cell)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL aux_a, WW_REAL aux_b,
                                              WW_REAL here, WW_REAL before, const WW_T(ww_coef) *c)
{
    (void)c;
    (void)aux_a, (void)aux_b, (void)before;
    WW_REAL m = up < left ? up : left;
    m = diag < m ? diag : m;
    return here + m;
}

WW_HD static inline WW_REAL WW_T(ww_dtw_cell_up_last)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL aux_a,
                                                      WW_REAL aux_b, WW_REAL here, WW_REAL before, const WW_T(ww_coef) *c)
{
    (void)c;
    (void)aux_a, (void)aux_b, (void)before;
    WW_REAL m = diag < left ? diag : left;
    m = up < m ? up : m;
    return here + m;
}

WW_HD static inline WW_REAL WW_T(ww_dtw_cell_left_last)(WW_REAL up, WW_REAL left, WW_REAL diag, WW_REAL aux_a,
                                                        WW_REAL aux_b, WW_REAL here, WW_REAL before, const WW_T(ww_coef) *c)
{
    (void)c;
    (void)aux_a, (void)aux_b, (void)before;
    WW_REAL m = diag < up ? diag : up;
    m = left < m ? left : m;
    return here + m;
}

WW_HD static inline WW_REAL WW_T(ww_dtw_finish)(WW_REAL d) { return d; }

#endif
