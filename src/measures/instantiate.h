/* Includes WW_MEASURE_HEADER twice: for double (names *_f64) and for float (names *_f32).
 * No include guard on purpose (see real.h). */
#define WW_REAL double
#define WW_T(name) name##_f64
#define WW_FABS fabs
#define WW_SQRT sqrt
#define WW_POW pow
#define WW_REAL_MAX DBL_MAX
#define WW_REAL_INF ((double)INFINITY)
#include WW_MEASURE_HEADER
#undef WW_REAL
#undef WW_T
#undef WW_FABS
#undef WW_SQRT
#undef WW_POW
#undef WW_REAL_MAX
#undef WW_REAL_INF

#define WW_REAL float
#define WW_T(name) name##_f32
#define WW_FABS fabsf
#define WW_SQRT sqrtf
#define WW_POW powf
#define WW_REAL_MAX FLT_MAX
#define WW_REAL_INF INFINITY
#include WW_MEASURE_HEADER
#undef WW_REAL
#undef WW_T
#undef WW_FABS
#undef WW_SQRT
#undef WW_POW
#undef WW_REAL_MAX
#undef WW_REAL_INF
