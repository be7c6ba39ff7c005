/* The measure contract (src/measures/) as compile-time functors for the CUDA kernels, the way FAISS
 * turns a runtime metric into a functor that one generic kernel is instantiated over: every kernel
 * is a template over `Measure`, a measure_functor<Ops, T> for a measure's operations Ops and a
 * computing type T, and calls the measure only through it. Its traits are constants, so the branches
 * on them fold away and each instance computes exactly what the measure needs (TWED's instance
 * compiles to the code the TWED-only kernels had).
 *
 * Also here: the window of a pair (the measure's radius or fraction) and the column range of a row
 * of the dynamic program inside it, for the kernels that skip the cells outside. */
#ifndef WW_CUDA_MEASURE_CUH
#define WW_CUDA_MEASURE_CUH

#include <limits.h>
#include <stdint.h>

#include "../common/internal.h"
#include "../measures/measures.h"

/* ------------------------------------------------------------------------------------------ */
/* One measure's operations, both computing types as overloads                                  */
/* ------------------------------------------------------------------------------------------ */

/* The measure's functions (src/measures/<m>.h) for double and float, and its traits, as one struct
 * of static overloads (the cell is given no coefficients: only measures whose cell reads none, TWED
 * and DTW, are instantiated here; soft-DTW has kernels of its own, src/cuda/softdtw*.cu): WW_CUDA_MEASURE_OPS(twed, TWED, WW_MEASURE_TWED) defines twed_ops. A measure
 * that pads its series with +inf values (padding_inf_values) leaves the cells before column 1
 * infinite through its local cost; one whose padding behind the series repeats D(n, m) in the cells
 * past the end (padding_repeats_last: TWED, whose padding has zero deletion costs) may have its
 * result read there. */
#define WW_CUDA_MEASURE_OPS(m, MU, KIND)                                                                     \
    struct m##_ops {                                                                                         \
        static constexpr ww_measure_kind kind = KIND;                                                        \
        static constexpr bool has_aux = WW_MEASURE_TRAIT(MU, HAS_AUX) != 0;                                  \
        static constexpr bool carries_before = WW_MEASURE_TRAIT(MU, CARRIES_BEFORE) != 0;                    \
        static constexpr bool uses_stamps = WW_MEASURE_TRAIT(MU, USES_STAMPS) != 0;                          \
        static constexpr bool symmetric = WW_MEASURE_TRAIT(MU, SYMMETRIC) != 0;                              \
        static constexpr bool norm_root = WW_MEASURE_TRAIT(MU, NORM_ROOT) != 0;                              \
        __host__ __device__ __forceinline__ static int norm_p(const ww_coef_f64 *c)                          \
        {                                                                                                    \
            return WW_MEASURE_FN(m, norm_p_f64)(c);                                                          \
        }                                                                                                    \
        __host__ __device__ __forceinline__ static int norm_p(const ww_coef_f32 *c)                          \
        {                                                                                                    \
            return WW_MEASURE_FN(m, norm_p_f32)(c);                                                          \
        }                                                                                                    \
        __device__ __forceinline__ static double local_from_norm(double n, double ta, double tb,             \
                                                                 const ww_coef_f64 *c)                       \
        {                                                                                                    \
            return WW_MEASURE_FN(m, local_from_norm_f64)(n, ta, tb, c);                                      \
        }                                                                                                    \
        __device__ __forceinline__ static float local_from_norm(float n, float ta, float tb, const ww_coef_f32 *c) \
        {                                                                                                    \
            return WW_MEASURE_FN(m, local_from_norm_f32)(n, ta, tb, c);                                      \
        }                                                                                                    \
        __device__ __forceinline__ static double local(const double *a, const double *b, size_t dim, double ta, \
                                                       double tb, const ww_coef_f64 *c)                      \
        {                                                                                                    \
            return WW_MEASURE_FN(m, local_f64)(a, b, dim, ta, tb, c);                                        \
        }                                                                                                    \
        __device__ __forceinline__ static float local(const float *a, const float *b, size_t dim, float ta,  \
                                                      float tb, const ww_coef_f32 *c)                        \
        {                                                                                                    \
            return WW_MEASURE_FN(m, local_f32)(a, b, dim, ta, tb, c);                                        \
        }                                                                                                    \
        __device__ __forceinline__ static double aux(const double *x, const double *xp, size_t dim, double t, \
                                                     double tp, const ww_coef_f64 *c)                        \
        {                                                                                                    \
            return WW_MEASURE_FN(m, aux_f64)(x, xp, dim, t, tp, c);                                          \
        }                                                                                                    \
        __device__ __forceinline__ static float aux(const float *x, const float *xp, size_t dim, float t,    \
                                                    float tp, const ww_coef_f32 *c)                          \
        {                                                                                                    \
            return WW_MEASURE_FN(m, aux_f32)(x, xp, dim, t, tp, c);                                          \
        }                                                                                                    \
        __device__ __forceinline__ static double cell(double u, double l, double d, double xa, double xb,    \
                                                      double h, double b)                                    \
        {                                                                                                    \
            return WW_MEASURE_FN(m, cell_f64)(u, l, d, xa, xb, h, b, NULL);                                        \
        }                                                                                                    \
        __device__ __forceinline__ static float cell(float u, float l, float d, float xa, float xb, float h, \
                                                     float b)                                                \
        {                                                                                                    \
            return WW_MEASURE_FN(m, cell_f32)(u, l, d, xa, xb, h, b, NULL);                                        \
        }                                                                                                    \
        __device__ __forceinline__ static double cell_up_last(double u, double l, double d, double xa,       \
                                                              double xb, double h, double b)                 \
        {                                                                                                    \
            return WW_MEASURE_FN(m, cell_up_last_f64)(u, l, d, xa, xb, h, b, NULL);                                \
        }                                                                                                    \
        __device__ __forceinline__ static double cell_left_last(double u, double l, double d, double xa,     \
                                                                double xb, double h, double b)               \
        {                                                                                                    \
            return WW_MEASURE_FN(m, cell_left_last_f64)(u, l, d, xa, xb, h, b, NULL);                              \
        }                                                                                                    \
        __device__ __forceinline__ static float cell_up_last(float u, float l, float d, float xa, float xb,     \
                                                             float h, float b)                               \
        {                                                                                                    \
            return WW_MEASURE_FN(m, cell_up_last_f32)(u, l, d, xa, xb, h, b, NULL);                                \
        }                                                                                                    \
        __device__ __forceinline__ static float cell_left_last(float u, float l, float d, float xa, float xb,   \
                                                               float h, float b)                             \
        {                                                                                                    \
            return WW_MEASURE_FN(m, cell_left_last_f32)(u, l, d, xa, xb, h, b, NULL);                              \
        }                                                                                                    \
        __device__ __forceinline__ static double finish(double v) { return WW_MEASURE_FN(m, finish_f64)(v); } \
        __device__ __forceinline__ static float finish(float v) { return WW_MEASURE_FN(m, finish_f32)(v); }   \
    };

WW_CUDA_MEASURE_OPS(twed, TWED, WW_MEASURE_TWED)
WW_CUDA_MEASURE_OPS(dtw, DTW, WW_MEASURE_DTW)

/* How the pair engine pads a measure's series (see SERIES_PAD_FRONT in prepare.cuh): TWED by
 * infinite deletion costs in front and zero ones behind, so cells past the end repeat D(n, m);
 * a measure without per-sample costs by +inf values in front and behind, so that every cell outside
 * the matrix is +inf or NaN and flows only into other outside cells (its result is read at the
 * exact cell). */
template <class Ops> struct padding_of {
    static constexpr bool repeats_last = Ops::has_aux;
    static constexpr bool inf_values = !Ops::has_aux;
};

/* The norm's p when the measure fixes it: a measure without the root takes the squared Euclidean
 * norm (DTW), p = 2 whatever its coefficients; 0: p is a coefficient (TWED's degree). Kernels
 * specialised on p are instantiated only for the p a measure can have. */
template <class Ops> struct fixed_norm_p {
    static constexpr int value = Ops::norm_root ? 0 : 2;
};

/* The coefficients of a measure in a computing type. */
template <typename T> struct coef_of;
template <> struct coef_of<double> {
    typedef ww_coef_f64 type;
};
template <> struct coef_of<float> {
    typedef ww_coef_f32 type;
};

/* ------------------------------------------------------------------------------------------ */
/* The functor                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* A measure in computing type T with its coefficients: what the kernels call. */
template <class Ops, typename T> struct measure_functor {
    typedef T real;
    typedef Ops ops;
    typedef typename coef_of<T>::type coef_type;
    static constexpr bool has_aux = Ops::has_aux;
    static constexpr bool carries_before = Ops::carries_before;
    static constexpr bool uses_stamps = Ops::uses_stamps;
    static constexpr bool symmetric = Ops::symmetric;
    static constexpr bool pad_repeats_last = padding_of<Ops>::repeats_last;
    static constexpr bool pad_inf_values = padding_of<Ops>::inf_values;
    static constexpr int fixed_p = fixed_norm_p<Ops>::value;
    /* The order in which the matrix engine's one-thread kernel adds a sample distance's terms:
     * TWED's stays the one its results were recorded with before the measures were split out
     * (issue 15 pins them bit for bit); other measures take four interleaved partial sums, more
     * independent chains of additions. */
    static constexpr bool pinned_sum_order = Ops::kind == WW_MEASURE_TWED;

    coef_type c;

    __host__ __device__ __forceinline__ int norm_p() const { return Ops::norm_p(&c); }
    /* the local term of samples a and b (dim components) at stamps ta, tb */
    __device__ __forceinline__ T local(const T *a, const T *b, size_t dim, T ta, T tb) const
    {
        return Ops::local(a, b, dim, ta, tb, &c);
    }
    /* the same with the norm's p fixed at compile time (P = 1 or 2; the measure's p must be P) */
    template <int P> __device__ __forceinline__ T local_p(const T *a, const T *b, size_t dim, T ta, T tb) const
    {
        if constexpr (Ops::norm_root)
            return Ops::local_from_norm(lp_distance(a, b, dim, P), ta, tb, &c);
        else
            return Ops::local(a, b, dim, ta, tb, &c);
    }
    /* the norm from a sum of its terms |d|^P that an engine accumulated itself (P = 1 or 2), for
     * local_from_norm: the root for a measure that takes it (a p-th root of P = 1 is the sum) */
    template <int P> __device__ __forceinline__ static T norm_from_sum(T sum)
    {
        return Ops::norm_root && P == 2 ? sqrt(sum) : sum;
    }
    __device__ __forceinline__ T local_from_norm(T norm, T ta, T tb) const
    {
        return Ops::local_from_norm(norm, ta, tb, &c);
    }
    __device__ __forceinline__ T aux(const T *x, const T *xp, size_t dim, T t, T tp) const
    {
        return Ops::aux(x, xp, dim, t, tp, &c);
    }
    __device__ __forceinline__ static T cell(T up, T left, T diag, T aux_a, T aux_b, T here, T before)
    {
        return Ops::cell(up, left, diag, aux_a, aux_b, here, before);
    }
    __device__ __forceinline__ static T cell_up_last(T up, T left, T diag, T aux_a, T aux_b, T here, T before)
    {
        return Ops::cell_up_last(up, left, diag, aux_a, aux_b, here, before);
    }
    __device__ __forceinline__ static T cell_left_last(T up, T left, T diag, T aux_a, T aux_b, T here, T before)
    {
        return Ops::cell_left_last(up, left, diag, aux_a, aux_b, here, before);
    }
    __device__ __forceinline__ static T finish(T d) { return Ops::finish(d); }

  private:
    __device__ __forceinline__ static double lp_distance(const double *a, const double *b, size_t dim, int p)
    {
        return ww_lp_distance_f64(a, b, dim, p);
    }
    __device__ __forceinline__ static float lp_distance(const float *a, const float *b, size_t dim, int p)
    {
        return ww_lp_distance_f32(a, b, dim, p);
    }
};

/* A measure's functor in double and in float. */
template <class Ops> using measure_f64 = measure_functor<Ops, double>;
template <class Ops> using measure_f32 = measure_functor<Ops, float>;

/* The functor of a measure descriptor (host side). */
template <class Ops, typename T> static inline measure_functor<Ops, T> make_functor(const ww_measure *m);
template <> inline measure_functor<twed_ops, double> make_functor<twed_ops, double>(const ww_measure *m)
{
    return {ww_measure_coef_f64(m)};
}
template <> inline measure_functor<twed_ops, float> make_functor<twed_ops, float>(const ww_measure *m)
{
    return {ww_measure_coef_f32(m)};
}
template <> inline measure_functor<dtw_ops, double> make_functor<dtw_ops, double>(const ww_measure *m)
{
    return {ww_measure_coef_f64(m)};
}
template <> inline measure_functor<dtw_ops, float> make_functor<dtw_ops, float>(const ww_measure *m)
{
    return {ww_measure_coef_f32(m)};
}

/* Calls f(Ops()) with the operations of the measure's kind (f: a generic lambda, which takes
 * `auto ops` and names the type decltype(ops)); WW_ERR_UNSUPPORTED for a kind the GPU engines were
 * not instantiated for. The one place to add a measure's line on the GPU. */
template <class F> static inline ww_status dispatch_measure(ww_measure_kind kind, F &&f)
{
    switch (kind) {
    case WW_MEASURE_TWED: return f(twed_ops());
    case WW_MEASURE_DTW: return f(dtw_ops());
    case WW_MEASURE_SOFTDTW: break; /* its own kernels (the registry never routes it here) */
    }
    return WW_ERR_UNSUPPORTED;
}

/* ------------------------------------------------------------------------------------------ */
/* Windows                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* A measure's window as the kernels read it: per pair, the radius of ww_measure_radius(). */
struct window_spec {
    unsigned long long radius; /* WW_NO_WINDOW (as 64 bits): none, or a fraction */
    double fraction;           /* >= 0: radius (size_t)(fraction * min(n, m)), the product in double */
};

static inline window_spec window_of(const ww_measure *m)
{
    window_spec w;
    w.radius = m->window == WW_NO_WINDOW ? ULLONG_MAX : (unsigned long long)m->window;
    w.fraction = m->window == WW_NO_WINDOW ? m->window_fraction : -1.0;
    return w;
}

/* The band of one pair: rows 1..n of the dynamic program against columns 1..m, radius r. Rows
 * give their columns [lo, hi] (window.h, ww_window_row) without a division for equal lengths, with
 * 32-bit divisions while the products of window.h fit in 32 bits, else through window.h. */
struct pair_band {
    unsigned n, m, r;
    int mode; /* 0: no window (every column), 1: equal lengths, 2: 32-bit, 3: 64-bit (window.h) */

    __host__ __device__ __forceinline__ static pair_band make(const window_spec &w, size_t n, size_t m)
    {
        pair_band b;
        b.n = (unsigned)n, b.m = (unsigned)m;
        const size_t shorter = n < m ? n : m, longer = n < m ? m : n;
        unsigned long long r = w.radius;
        if (r == ULLONG_MAX && w.fraction >= 0.0)
            r = (unsigned long long)(w.fraction * (double)shorter);
        if (r >= shorter) { /* as wide as the shorter series (or no window): the whole matrix */
            b.r = 0, b.mode = 0;
            return b;
        }
        b.r = (unsigned)r;
        b.mode = n == m ? 1 : longer < 46000 ? 2 : 3; /* 2 (l + 1)^2 < 2^32 */
        return b;
    }
    __host__ __device__ __forceinline__ bool windowed() const { return mode != 0; }

    /* DP row i (1..n): columns [*lo, *hi] within 1..m */
    __host__ __device__ __forceinline__ void row(int i, int *lo, int *hi) const
    {
        if (mode == 0) {
            *lo = 1, *hi = (int)m;
        } else if (mode == 1) {
            const int p = i - 1, rr = (int)r;
            *lo = (p > rr ? p - rr : 0) + 1;
            *hi = (p + rr < (int)m - 1 ? p + rr : (int)m - 1) + 1;
        } else if (mode == 2) {
            row32(i, lo, hi);
        } else {
            size_t l0, h0;
            ww_window_row(n, m, r, (size_t)i, &l0, &h0);
            *lo = (int)l0, *hi = (int)h0;
        }
    }

  private:
    /* ww_band_row (window.h) in 32-bit arithmetic: the same integer formulas, exact while every
     * product is below 2^32 (lengths below 46,000) */
    __host__ __device__ __forceinline__ void row32(int i, int *lo, int *hi) const
    {
        const unsigned l = n > m ? n : m, s = n > m ? m : n, p = (unsigned)i - 1;
        if (n > m) {
            const unsigned st0 = (p * (l + 1) + l - 1) / l;
            unsigned st1 = ((p + 1) * (l + 1) + l - 1) / l - 1;
            if (st1 > l)
                st1 = l;
            const unsigned s0 = st0 * s / (l + 1), s1 = st1 * s / (l + 1);
            *lo = (int)(s0 > r ? s0 - r : 0) + 1;
            *hi = (int)(s1 + r < s - 1 ? s1 + r : s - 1) + 1;
            return;
        }
        const unsigned v0 = p > r ? p - r : 0, v1 = p + r;
        const unsigned st0 = (v0 * (l + 1) + s - 1) / s;
        unsigned st1 = ((v1 + 1) * (l + 1) + s - 1) / s - 1;
        if (st1 > l)
            st1 = l;
        *lo = (int)(st0 * l / (l + 1)) + 1;
        *hi = (int)(st1 * l / (l + 1)) + 1;
    }
};

#endif
