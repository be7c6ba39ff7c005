/* The L_p norm of the difference of two samples in R^dim, written once for every measure and
 * engine. In pieces, so that an engine can accumulate the terms over components in its own layout
 * (the CPU matrix engine interleaves 32 series) and finish with the root:
 *   ||x - y||_p = root(sum_k term(x_k - y_k, p), p),  term(d, p) = |d|^p,  root(s, p) = s^(1/p).
 * p = 1 and p = 2 avoid pow(). */
#ifndef WW_REAL
#ifndef WW_MEASURES_LP_NORM_H
#define WW_MEASURES_LP_NORM_H
#include "real.h"
#define WW_MEASURE_HEADER "lp_norm.h"
#include "instantiate.h"
#undef WW_MEASURE_HEADER
#endif
#else

WW_HD static inline WW_REAL WW_T(ww_lp_term)(WW_REAL d, int p)
{
    return p == 1 ? WW_FABS(d) : p == 2 ? d * d : WW_POW(WW_FABS(d), (WW_REAL)p);
}

WW_HD static inline WW_REAL WW_T(ww_lp_root)(WW_REAL sum, int p)
{
    return p == 1 ? sum : p == 2 ? WW_SQRT(sum) : WW_POW(sum, (WW_REAL)1 / (WW_REAL)p);
}

/* ||x - y||_p over dim components (dim 1: |x - y| whatever p, exactly). */
WW_HD static inline WW_REAL WW_T(ww_lp_distance)(const WW_REAL *x, const WW_REAL *y, size_t dim, int p)
{
    if (dim == 1)
        return WW_FABS(x[0] - y[0]);
    WW_REAL acc = 0;
    if (p == 1) {
        for (size_t k = 0; k < dim; k++)
            acc += WW_T(ww_lp_term)(x[k] - y[k], 1);
        return acc;
    }
    if (p == 2) {
        for (size_t k = 0; k < dim; k++)
            acc += WW_T(ww_lp_term)(x[k] - y[k], 2);
        return WW_SQRT(acc);
    }
    /* term and root of a p past 2, written out: the same values, and the GPU kernels compile to
     * the code they had before the measures were split out (identical PTX) */
    for (size_t k = 0; k < dim; k++)
        acc += WW_POW(WW_FABS(x[k] - y[k]), (WW_REAL)p);
    return WW_POW(acc, (WW_REAL)1 / (WW_REAL)p);
}

/* ||x - y||_2^2: the sum of the terms of p = 2, no root. */
WW_HD static inline WW_REAL WW_T(ww_squared_euclidean)(const WW_REAL *x, const WW_REAL *y, size_t dim)
{
    WW_REAL acc = 0;
    for (size_t k = 0; k < dim; k++)
        acc += WW_T(ww_lp_term)(x[k] - y[k], 2);
    return acc;
}

#endif
