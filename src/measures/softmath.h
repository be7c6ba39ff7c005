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
 * of degree 10 interpolating it at the Chebyshev nodes (relative error below 4e-16, computed in 50
 * digits), evaluated by Estrin's scheme: 4 dependent fmas rather than Horner's 10, so that the
 * cells in flight overlap (a cell's latency, not the arithmetic, limited the engines); 2^k from
 * the exponent bits. This one takes x >= -708 (no clamp); ww_softexp_f64 clamps. */
WW_HD static inline double ww_softexp_unclamped_f64(double x)
{
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52: t's low mantissa bits hold round(x / ln2) */
    const double t = x * 1.4426950408889634 + shifter;
    const double k = t - shifter;
    const double r = fma(-k, 1.90821492927058770002e-10, fma(-k, 6.93147180369123816490e-01, x));
    const double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const double p01 = fma(1.0000000000000067, r, 1.0), p23 = fma(0.16666666666554406, r, 0.5000000000000006);
    const double p45 = fma(0.008333333385667782, r, 0.04166666666657314);
    const double p67 = fma(0.00019841170270440067, r, 0.0013888888932488599);
    const double p89 = fma(2.764018079620985e-06, r, 2.4801504346997686e-05);
    const double q03 = fma(p23, r2, p01), q47 = fma(p67, r2, p45), q810 = fma(2.7626357241447223e-07, r2, p89);
    const double p = fma(q810, r8, fma(q47, r4, q03));
    const uint64_t scale = (ww_double_to_bits(t) << 52) + ((uint64_t)1023 << 52);
    return p * ww_bits_to_double(scale);
}

WW_HD static inline double ww_softexp_f64(double x)
{
    return ww_softexp_unclamped_f64(x > -708.0 ? x : -708.0);
}

/* exp(max(x, floor)), floor a number near -708 that the compiler cannot see as a constant (the
 * caller's): a clamp to a constant is carried by gcc through the computation as blends of
 * precomputed constants (three selects where one max instruction does). */
WW_HD static inline double ww_softexp_floor_f64(double x, double floor)
{
    return ww_softexp_unclamped_f64(x > floor ? x : floor);
}

/* log(s) for s in [1, 3]: with c = sqrt(3) (rounded to a double), log(s) = log(c) + 2 atanh(z),
 * z = (s - c) / (s + c), |z| <= 0.268, and 2 atanh(z) / z as a polynomial of degree 8 in
 * w = z^2 <= 0.0718 (interpolating at the Chebyshev nodes: relative error below 6e-17, computed in
 * 50 digits), by Estrin's scheme. No range reduction, so no select: compilers carried both
 * candidates of a reduced argument through the division. This part: 2 atanh(z) / z of w = z^2. */
WW_HD static inline double ww_softlog_series_f64(double w)
{
    const double w2 = w * w, w4 = w2 * w2, w8 = w4 * w4;
    const double p01 = fma(0.6666666666665426, w, 2.0), p23 = fma(0.2857142791648975, w, 0.4000000000459849);
    const double p45 = fma(0.18179961152215077, w, 0.22222268835944023);
    const double p67 = fma(0.12754249500801584, w, 0.1542781815964451);
    return fma(0.1583188945908436, w8, fma(fma(p67, w2, p45), w4, fma(p23, w2, p01)));
}

WW_HD static inline double ww_softlog_f64(double s)
{
    const double c = 1.7320508075688772;
    const double z = (s - c) / (s + c);
    return fma(z, ww_softlog_series_f64(z * z), 0.5493061443340548); /* log(c) */
}

/* log(s) as ww_softlog_f64 (to a few units in the last place, not the same bits) and 1 / s, from
 * one division: q = 1 / (s (s + c)) gives 1 / (s + c) = s q and 1 / s = (s + c) q (a division
 * costs as much as the rest of a soft-DTW cell's latency). */
WW_HD static inline double ww_softlog_inv_f64(double s, double *inv_s)
{
    const double c = 1.7320508075688772;
    const double sc = s + c, q = 1.0 / (s * sc);
    const double z = (s - c) * (s * q);
    *inv_s = sc * q;
    return fma(z, ww_softlog_series_f64(z * z), 0.5493061443340548);
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
WW_HD static inline float ww_softexp_unclamped_f32(float x) { return ww_softexp_f32(x); }
WW_HD static inline float ww_softexp_floor_f32(float x, float floor)
{
    (void)floor; /* no clamp needed: expf of -inf is 0 */
    return ww_softexp_f32(x);
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
WW_HD static inline float ww_softlog_inv_f32(float s, float *inv_s)
{
    *inv_s = 1.0f / s;
    return ww_softlog_f32(s);
}

/* Soft-DTW in base 2 with a finite "off" value, the form of the float32 GPU kernels
 * (src/cuda/softdtw_kernels.cuh). With R' = R / (gamma ln 2) and the costs scaled alike, the soft
 * minimum is
 *   softmin2(a, b, c) = m - log2(2^(m - a) + 2^(m - b) + 2^(m - c)),  m = min(a, b, c),
 * three base-2 exponentials of x <= 0 (one is 2^0 = 1) and a base-2 logarithm of s in [1, 3]:
 * each one instruction of the multifunction unit, with no scaling by 1 / gamma or ln 2 in the
 * cell. Cells off the table or the window hold WW_SOFT2_OFF_F32 (2^125), not +inf: every
 * difference stays finite (no inf - inf), so the cell needs no select, and a cell whose three
 * predecessors are off stays off (2^125 + cost - log2 3 rounds back to 2^125 for any cost below
 * 2^101, and the cell is clamped to it). A value of R' at or above WW_SOFT2_OFF_F32 / 2 reads as
 * +inf: R above 2^124 gamma ln 2 = 1.5e37 gamma, which float32 data can reach with a small gamma
 * (gamma 1e-3: R above 1.5e34); such data want float64 (documented in README.md). */
#define WW_SOFT2_OFF_F32 4.2535295865117308e37f /* 2^125 */

WW_HD static inline float ww_softexp2_f32(float x)
{
#if defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return exp2f(x);
#endif
}
WW_HD static inline float ww_softlog2_f32(float s)
{
#if defined(__CUDA_ARCH__)
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(s));
    return y;
#else
    return log2f(s);
#endif
}
WW_HD static inline float ww_softmin2_f32(float a, float b, float c)
{
    const float m = ww_lesser_f32(ww_lesser_f32(a, b), c);
    const float s = (ww_softexp2_f32(m - a) + ww_softexp2_f32(m - b)) + ww_softexp2_f32(m - c);
    return m - ww_softlog2_f32(s);
}
/* R' of a cell from its predecessors' and its cost (scaled), clamped to the off value */
WW_HD static inline float ww_softdtw2_cell_f32(float up, float left, float diag, float cost)
{
    return ww_lesser_f32(cost + ww_softmin2_f32(up, left, diag), WW_SOFT2_OFF_F32);
}
/* The backward weight of a successor, exp((R[succ] - cost[succ] - R[here]) / gamma), in base 2:
 * q = R'[succ] - cost'[succ] (-off for a successor off the table: the weight is 0). */
WW_HD static inline float ww_softdtw2_back_weight_f32(float q, float here) { return ww_softexp2_f32(q - here); }

#endif
