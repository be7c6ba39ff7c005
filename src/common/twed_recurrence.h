/*
 * The TWED recurrence, written once for every engine (C on the CPU, CUDA on the GPU).
 *
 * Engines differ only in the order in which they visit cells; each cell is computed by
 * ww_twed_cell_*() from three neighbours and three costs, which come from the functions below.
 * Conventions (see wavewarp.h): sample 0 is the zero vector at time 0, samples 1..n are the data.
 *
 *   match_part(i, j) = ||A_i - B_j|| + nu |TA_i - TB_j|      (so match = D[i-1][j-1]
 *                                                              + match_part(i,j) + match_part(i-1,j-1))
 *   delete_cost(i)   = ||X_i - X_{i-1}|| + nu (TX_i - TX_{i-1}) + lambda
 *
 * Float and double versions are generated from twed_recurrence.inc (C has no templates).
 */
#ifndef WW_TWED_RECURRENCE_H
#define WW_TWED_RECURRENCE_H

#include <float.h>
#include <math.h>
#include <stddef.h>

#if defined(__CUDACC__)
#define WW_HD __host__ __device__
#else
#define WW_HD
#endif

#define WW_REAL double
#define WW_SUFFIX(name) name##_f64
#define WW_FABS fabs
#define WW_SQRT sqrt
#define WW_POW pow
#define WW_FMIN fmin
#define WW_REAL_MAX DBL_MAX
#include "twed_recurrence.inc"
#undef WW_REAL
#undef WW_SUFFIX
#undef WW_FABS
#undef WW_SQRT
#undef WW_POW
#undef WW_FMIN
#undef WW_REAL_MAX

#define WW_REAL float
#define WW_SUFFIX(name) name##_f32
#define WW_FABS fabsf
#define WW_SQRT sqrtf
#define WW_POW powf
#define WW_FMIN fminf
#define WW_REAL_MAX FLT_MAX
#include "twed_recurrence.inc"
#undef WW_REAL
#undef WW_SUFFIX
#undef WW_FABS
#undef WW_SQRT
#undef WW_POW
#undef WW_FMIN
#undef WW_REAL_MAX

#endif
