/* The exponential and logarithm of soft-DTW's soft minimum, written so that compilers vectorise
 * them (arithmetic, selects and bit casts only: no calls, no branches), for the CPU engines' loops
 * over anti-diagonals and lanes. Both are accurate to a few units in the last place on the ranges
 * soft-DTW uses: exp of x <= 0 (the stable soft minimum only exponentiates differences to the
 * smallest argument, and the backward weights are <= 1 too), log of s in [1, 3] (a sum of three
 * such exponentials, one of which is 1). Outside those ranges they are not used.
 * The polynomials are evaluated with fused multiply-adds (fma): one instruction each in the
 * engines' x86-64-v3/v4 versions and on GPUs; the baseline x86-64 version calls the C library's.
 * float: see ww_softexp_f32 below. */
#ifndef WW_MEASURES_SOFTMATH_H
#define WW_MEASURES_SOFTMATH_H

#include "real.h"

#include <stdint.h>
#include <string.h>

WW_HD static inline double ww_bits_to_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

WW_HD static inline uint64_t ww_double_to_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* The lesser and the greater of two numbers that are not NaN, as `a < b ? a : b` and
 * `a < b ? b : a` (the host's loops vectorise the comparison); on GPUs fmin/fmax, one instruction
 * where the comparison compiles to two (a compare and a select). */
WW_HD static inline double ww_lesser_f64(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return fmin(a, b);
#else
    return a < b ? a : b;
#endif
}
WW_HD static inline double ww_greater_f64(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return fmax(a, b);
#else
    return a < b ? b : a;
#endif
}
WW_HD static inline float ww_lesser_f32(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return fminf(a, b);
#else
    return a < b ? a : b;
#endif
}
WW_HD static inline float ww_greater_f32(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return fmaxf(a, b);
#else
    return a < b ? b : a;
#endif
}

/* exp(x) for x <= 0; -inf gives about 3e-308, which is 0 next to the sum's 1 (and a backward
 * weight of it multiplies an E that is 0). x = k ln2 + r, |r| <= ln2 / 2, exp(r) by the polynomial
 * of degree 11 interpolating it at the Chebyshev nodes (relative error below 2e-17, computed in 40
 * digits), 2^k from the exponent bits. */
WW_HD static inline double ww_softexp_f64(double x)
{
    x = x < -708.0 ? -708.0 : x;
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52: t's low mantissa bits hold round(x / ln2) */
    const double t = x * 1.4426950408889634 + shifter;
    const double k = t - shifter;
    const double r = fma(-k, 1.90821492927058770002e-10, fma(-k, 6.93147180369123816490e-01, x));
    double p = 2.5110037605963777e-08;
    p = fma(p, r, 2.763263963904103e-07);
    p = fma(p, r, 2.755724091857897e-06);
    p = fma(p, r, 2.4801485482328494e-05);
    p = fma(p, r, 0.00019841269890047113);
    p = fma(p, r, 0.0013888888952314775);
    p = fma(p, r, 0.008333333333319601);
    p = fma(p, r, 0.0416666666664881);
    p = fma(p, r, 0.1666666666666668);
    p = fma(p, r, 0.5000000000000019);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    const uint64_t scale = (ww_double_to_bits(t) << 52) + ((uint64_t)1023 << 52);
    return p * ww_bits_to_double(scale);
}

/* log(s) for s in [1, 3]: s = 2^e m with e in {0, 1}, m in [0.70, 1.5], and
 * log(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| <= 0.2, by its series to z^25 (next term below
 * 2e-18 relative). */
WW_HD static inline double ww_softlog_f64(double s)
{
    const int big = s > 1.4142135623730951;
    const double m = big ? s * 0.5 : s;
    const double z = (m - 1.0) / (m + 1.0), z2 = z * z;
    double p = 1.0 / 25;
    p = fma(p, z2, 1.0 / 23);
    p = fma(p, z2, 1.0 / 21);
    p = fma(p, z2, 1.0 / 19);
    p = fma(p, z2, 1.0 / 17);
    p = fma(p, z2, 1.0 / 15);
    p = fma(p, z2, 1.0 / 13);
    p = fma(p, z2, 1.0 / 11);
    p = fma(p, z2, 1.0 / 9);
    p = fma(p, z2, 1.0 / 7);
    p = fma(p, z2, 1.0 / 5);
    p = fma(p, z2, 1.0 / 3);
    p = fma(p, z2, 1.0);
    return 2.0 * z * p + (big ? 6.93147180559945309417e-01 : 0.0);
}

/* float: on the GPU the multifunction unit's base-2 exponential and logarithm, as __expf and
 * __logf use them (exp: 2 + 1.16 |x| ulp, which matters only where the term is tiny next to the
 * sum's 1; log of s in [1, 3]: below 4e-7 absolute, times gamma per cell), within the float32
 * budget of 1e-5 relative on values, but flushing denormals (.ftz): the exponentials of x <= 0
 * need no denormal result (a term below 1e-38 next to 1 is 0) and the logarithm sees none, and
 * the intrinsics' denormal handling costs instructions in every cell. The C library's on the
 * host. */
WW_HD static inline float ww_softexp_f32(float x)
{
#if defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
    return y;
#else
    return expf(x);
#endif
}
WW_HD static inline float ww_softlog_f32(float s)
{
#if defined(__CUDA_ARCH__)
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(s));
    return y * 0.693147180559945309f;
#else
    return logf(s);
#endif
}

#endif
