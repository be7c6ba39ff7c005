/* What every measure header shares: host/device qualifiers, the coefficients of a measure in the
 * computing type, and the instantiation of a header for double and float.
 *
 * A measure header is written once with WW_REAL as its type and WW_T(name) for its names; it
 * includes instantiate.h, which includes it back twice, with WW_REAL = double (names name_f64) and
 * float (name_f32). C has no templates; this gives the CPU engines (C) and the GPU engines (CUDA)
 * the same functions. */
#ifndef WW_MEASURES_REAL_H
#define WW_MEASURES_REAL_H

#include <float.h>
#include <math.h>
#include <stddef.h>

#if defined(__CUDACC__)
#define WW_HD __host__ __device__
#else
#define WW_HD
#endif

#define WW_CAT_(a, b) a##b
#define WW_CAT(a, b) WW_CAT_(a, b)
/* ww_<measure>_<name>: an engine instantiated for measure token m (twed, dtw) calls its functions
 * through this, e.g. WW_MEASURE_FN(dtw, cell_f64) is ww_dtw_cell_f64. */
#define WW_MEASURE_FN(m, name) WW_CAT(WW_CAT(ww_, m), WW_CAT(_, name))
/* WW_<MEASURE>_<TRAIT>, e.g. WW_MEASURE_TRAIT(TWED, HAS_AUX) is WW_TWED_HAS_AUX. */
#define WW_MEASURE_TRAIT(mu, trait) WW_CAT(WW_CAT(WW_, mu), WW_CAT(_, trait))

/* The parameters of any measure in the computing type (each measure reads its own). */
typedef struct ww_coef_f64 {
    double nu, lambda;       /* TWED */
    int degree;              /* TWED: p of the L_p norm */
    double gamma, inv_gamma; /* soft-DTW: the smoothing and its inverse */
} ww_coef_f64;
typedef struct ww_coef_f32 {
    float nu, lambda;
    int degree;
    float gamma, inv_gamma;
} ww_coef_f32;

#endif
