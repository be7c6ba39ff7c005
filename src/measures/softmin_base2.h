/* Soft-DTW's soft minimum in base 2, double, for the CPU anti-diagonal engine's forward passes
 * (src/cpu/softdtw.c: the value, and the table of the gradients); the float path, the GPU and the
 * matrices' lane engine keep softdtw.h's natural-base functions.
 *
 * With the table scaled as R' = R / (gamma ln 2) (costs multiplied by 1 / (gamma ln 2), the value
 * multiplied back at the end) the recurrence of softdtw.h becomes
 *   R'[i][j] = c'(i, j) + r - log2(1 + 2^(r - p) + 2^(r - q)),
 * r the smallest of up, left and diag, p and q the other two: no multiply by 1 / gamma, the
 * exponential's argument needs no multiply by 1 / ln 2 nor a two-part ln 2 for its reduction
 * (x = k + f with k = round(x), f = x - k exact), and no multiply by gamma after the logarithm.
 *
 * Accuracy, as softmath.h's (the tests compare the engines to 1e-12): 2^f on [-1/2, 1/2] by the
 * degree-10 polynomial interpolating it at the Chebyshev nodes, 3.2e-16 relative; log2 of s in
 * [1, 3] as log2(c) + z P(z^2), z = (s - c) / (s + c), c = sqrt(3), P of degree 8 interpolating
 * 2 atanh(z) / (z ln 2), 7e-17 relative (both computed in 60 digits). Written with arithmetic,
 * selects and bit casts only, so that compilers vectorise the engine's loops. */
#ifndef WW_MEASURES_SOFTMIN_BASE2_H
#define WW_MEASURES_SOFTMIN_BASE2_H

#include "softmath.h"

/* 2^x for x in [-1021, 0] (the caller clamps: the scale is added to the exponent bits of the
 * polynomial's value, in [0.7, 1.42], which must stay a normal number). */
static inline double ww_exp2_clamped_f64(double x)
{
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52: t's low mantissa bits hold round(x) */
    const double t = x + shifter;
    const double f = x - (t - shifter); /* exact, |f| <= 1/2 */
    const double f2 = f * f, f4 = f2 * f2;
    const double p01 = fma(0.69314718055995, f, 1.0), p23 = fma(0.05550410866444772, f, 0.24022650695910097);
    const double p45 = fma(0.0013333558230164974, f, 0.009618129107606888);
    const double p67 = fma(1.5252657260200837e-05, f, 0.0001540353044173605);
    const double p89 = fma(1.0208690299958306e-07, f, 1.321544258792169e-06);
    const double q03 = fma(p23, f2, p01), q47 = fma(p67, f2, p45), q810 = fma(7.072585949269223e-09, f2, p89);
    /* q03 + f^4 (q47 + f^4 q810): the powers f^2, f^4 only (Estrin's f^8 costs a multiply more) */
    const double p = fma(fma(q810, f4, q47), f4, q03);
    /* round(x) << 52 is 2^round(x) added to the exponent field (two's complement, k <= 0) */
    return ww_bits_to_double(ww_double_to_bits(p) + (ww_double_to_bits(t) << 52));
}

/* log2(s) for s in [1, 3] is log2(c) + z P(z^2): P of w = z^2 <= 0.0718. */
static inline double ww_log2_series_f64(double w)
{
    const double w2 = w * w, w4 = w2 * w2;
    const double p01 = fma(0.9617966939257967, w, 2.8853900817779268);
    const double p23 = fma(0.412198573668315, w, 0.5770780164218792);
    const double p45 = fma(0.26228140945793804, w, 0.3205995701131558);
    const double p67 = fma(0.18400679879357773, w, 0.22257616372280403);
    const double q03 = fma(p23, w2, p01), q47 = fma(p67, w2, p45);
    return fma(fma(0.22839891719395153, w4, q47), w4, q03);
}

/* log2(s) for s in [1, 3], subtracted from `from`: from - log2(s) (the engine passes r + c'). The
 * logarithm first, then one subtraction: where s = 1 (the two others far above r, common) log2(s)
 * is ~1e-16 and from comes back unchanged; fma(-z, P, from - log2(c)) rounded twice at from's
 * magnitude, a bias the same in every cell (long pairs were 2e-14 off, now 1e-15). */
static inline double ww_sub_log2_f64(double from, double s)
{
    const double c = 1.7320508075688772;
    const double z = (s - c) / (s + c);
    return from - fma(z, ww_log2_series_f64(z * z), 0.792481250360578); /* log2(c) */
}

/* The same (to a few units in the last place, not the same bits) and 1 / s, from one division:
 * q = 1 / (s (s + c)) gives 1 / (s + c) = s q and 1 / s = (s + c) q. */
static inline double ww_sub_log2_inv_f64(double from, double s, double *inv_s)
{
    const double c = 1.7320508075688772;
    const double sc = s + c, q = 1.0 / (s * sc);
    const double z = (s - c) * (s * q);
    *inv_s = sc * q;
    return from - fma(z, ww_log2_series_f64(z * z), 0.792481250360578);
}

/* The first stage: r = min(up, left, diag), and the exponents r - p, r - q of the two others,
 * clamped below at `floor` (about -1000, from the caller at run time: a clamp to a constant gcc
 * carries through the exponential as selects of precomputed results). up and left enter through
 * their minimum and maximum only, so swapping the series gives the same bits. The others are
 * hi = max(up, left) and max(diag, lo): whichever of diag and lo is not r. Infinite arguments (off
 * the table or the window) give x = -inf, clamped; all three infinite give inf - inf = NaN, which
 * the clamp (x > floor ? x : floor) also turns into the floor, and r = +inf carries on. */
static inline double ww_softmin2_args_f64(double up, double left, double diag, double floor, double *x_hi,
                                          double *x_other)
{
    const double lo = up < left ? up : left, hi = up < left ? left : up;
    const double r = diag < lo ? diag : lo, other = diag < lo ? lo : diag;
    const double xh = r - hi, xo = r - other;
    *x_hi = xh > floor ? xh : floor;
    *x_other = xo > floor ? xo : floor;
    return r;
}

/* The second stage: s = 1 + 2^x_hi + 2^x_other, in [1, 3]. */
static inline double ww_softmin2_sum_f64(double x_hi, double x_other)
{
    return (1.0 + ww_exp2_clamped_f64(x_hi)) + ww_exp2_clamped_f64(x_other);
}

/* The second stage with the backward weights (see ww_softmin_weights in softdtw.h): from - log2(s)
 * and the soft minimum's probabilities of up, left and diag, 1 / s for r, 2^x_hi / s for hi and
 * 2^x_other / s for the other (as ww_softmin2_args_f64 chose them), 0 for +inf arguments. They do
 * not depend on the base: the backward pass is the natural base's. */
static inline double ww_softmin2_weights_finish_f64(double up, double left, double diag, double from, double s,
                                                    double e_hi, double e_other, double *w_up, double *w_left,
                                                    double *w_diag)
{
    const int up_first = up < left;
    const double lo = up_first ? up : left, hi = up_first ? left : up;
    const int diag_below = diag < lo;
    const double r = diag_below ? diag : lo, other = diag_below ? lo : diag;
    double inv_s;
    const double out = ww_sub_log2_inv_f64(from, s, &inv_s);
    const double p_r = r < INFINITY ? inv_s : 0.0;
    const double p_hi = hi < INFINITY ? e_hi * inv_s : 0.0, p_other = other < INFINITY ? e_other * inv_s : 0.0;
    const double p_lo = diag_below ? p_other : p_r;
    *w_diag = diag_below ? p_r : p_other;
    *w_up = up_first ? p_lo : p_hi;
    *w_left = up_first ? p_hi : p_lo;
    return out;
}

#endif
