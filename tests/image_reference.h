/* The plain reference of elastic image matching (tests and benchmarks only): the recursion of
 * include/wavewarp.h written out directly on whole matrices in double, with no band and no
 * vectorisation, independent of the library's engines (src/measures/dpa.h). */
#ifndef WW_IMAGE_REFERENCE_H
#define WW_IMAGE_REFERENCE_H

#include <math.h>
#include <stdlib.h>

/* The 1D DPA on an n x m matrix of local distances d (row-major): D(n-1, m-1) / (n + m). */
static inline double ref_dpa(const double *d, size_t n, size_t m)
{
    double *D = (double *)malloc(n * m * sizeof(double));
    if (D == NULL)
        return NAN;
#define REF_D(i, j) ((i) < 0 || (j) < 0 ? INFINITY : D[(size_t)(i) * m + (size_t)(j)])
#define REF_d(i, j) d[(size_t)(i) * m + (size_t)(j)]
    for (long i = 0; i < (long)n; i++)
        for (long j = 0; j < (long)m; j++) {
            if (i == 0 && j == 0) {
                D[0] = 2 * REF_d(0, 0);
                continue;
            }
            double best = INFINITY;
            if (i >= 1 && j >= 2) {
                double t = REF_D(i - 1, j - 2) + 2 * REF_d(i, j - 1) + REF_d(i, j);
                best = t < best ? t : best;
            }
            if (i >= 1 && j >= 1) {
                double t = REF_D(i - 1, j - 1) + 2 * REF_d(i, j);
                best = t < best ? t : best;
            }
            if (i >= 2 && j >= 1) {
                double t = REF_D(i - 2, j - 1) + 2 * REF_d(i - 1, j) + REF_d(i, j);
                best = t < best ? t : best;
            }
            D[i * (long)m + j] = best;
        }
#undef REF_D
#undef REF_d
    double v = D[n * m - 1] / (double)(n + m);
    free(D);
    return v;
}

/* Pixel distance: |a - b| for one channel, Euclidean (or squared) for several. */
static inline double ref_pixel(const double *a, const double *b, size_t channels, int squared)
{
    double s = 0;
    for (size_t c = 0; c < channels; c++)
        s += (a[c] - b[c]) * (a[c] - b[c]);
    return squared ? s : sqrt(s);
}

/* The image distance of x (h1 x w1) and y (h2 x w2), pixels row-major with `channels` components. */
static inline double ref_image_distance(const double *x, size_t h1, size_t w1, const double *y, size_t h2, size_t w2,
                                        size_t channels, int squared)
{
    double *r = (double *)malloc(h1 * h2 * sizeof(double));
    double *d = (double *)malloc(w1 * w2 * sizeof(double));
    if (r == NULL || d == NULL) {
        free(r);
        free(d);
        return NAN;
    }
    for (size_t i = 0; i < h1; i++)
        for (size_t j = 0; j < h2; j++) {
            for (size_t n = 0; n < w1; n++)
                for (size_t m = 0; m < w2; m++)
                    d[n * w2 + m] = ref_pixel(x + (i * w1 + n) * channels, y + (j * w2 + m) * channels, channels,
                                              squared);
            r[i * h2 + j] = ref_dpa(d, w1, w2);
        }
    double v = ref_dpa(r, h1, h2);
    free(r);
    free(d);
    return v;
}

/* The same recursion in the engine's own precision, to check the engine to the bit: the CPU engine
 * computes u8 and f32 images in float, in this order of operations (d = |a - b| for one channel, the
 * root of the squares summed in channel order for several; ((D + 2 d') + d) for the bent moves).
 * Every cell of the whole matrices, where the engine computes bands and factors the bent terms:
 * the minimum over paths is the same number either way, floating-point addition being monotonic. */
#define REF_DPA_TYPED(T, R, SQRT, FABS)                                                                 \
    static inline R ref_dpa_##T(const R *d, size_t n, size_t m, R *D)                                     \
    {                                                                                                     \
        for (size_t i = 0; i < n; i++)                                                                    \
            for (size_t j = 0; j < m; j++) {                                                              \
                const R here = d[i * m + j];                                                              \
                if (i == 0 && j == 0) {                                                                   \
                    D[0] = 2 * here;                                                                      \
                    continue;                                                                             \
                }                                                                                         \
                R best = (R)INFINITY;                                                                     \
                if (i >= 1 && j >= 2) {                                                                   \
                    const R t = D[(i - 1) * m + j - 2] + 2 * d[i * m + j - 1] + here;                     \
                    best = t < best ? t : best;                                                           \
                }                                                                                         \
                if (i >= 1 && j >= 1) {                                                                   \
                    const R t = D[(i - 1) * m + j - 1] + 2 * here;                                        \
                    best = t < best ? t : best;                                                           \
                }                                                                                         \
                if (i >= 2 && j >= 1) {                                                                   \
                    const R t = D[(i - 2) * m + j - 1] + 2 * d[(i - 1) * m + j] + here;                   \
                    best = t < best ? t : best;                                                           \
                }                                                                                         \
                D[i * m + j] = best;                                                                      \
            }                                                                                             \
        return D[n * m - 1] / (R)(n + m);                                                                 \
    }                                                                                                     \
    static inline double ref_image_distance_##T(const R *x, size_t h1, size_t w1, const R *y, size_t h2,  \
                                                size_t w2, size_t channels, int squared)                  \
    {                                                                                                     \
        const size_t big = (h1 * h2 > w1 * w2 ? h1 * h2 : w1 * w2);                                       \
        R *r = (R *)malloc(h1 * h2 * sizeof(R)), *d = (R *)malloc(w1 * w2 * sizeof(R));                   \
        R *D = (R *)malloc(big * sizeof(R));                                                              \
        double v = NAN;                                                                                   \
        if (r != NULL && d != NULL && D != NULL) {                                                        \
            for (size_t i = 0; i < h1; i++)                                                               \
                for (size_t j = 0; j < h2; j++) {                                                         \
                    for (size_t n = 0; n < w1; n++)                                                       \
                        for (size_t m = 0; m < w2; m++) {                                                 \
                            const R *a = x + (i * w1 + n) * channels, *b = y + (j * w2 + m) * channels;   \
                            R s = 0;                                                                      \
                            for (size_t c = 0; c < channels; c++)                                         \
                                s += (a[c] - b[c]) * (a[c] - b[c]);                                       \
                            d[n * w2 + m] = channels == 1 && !squared ? FABS(a[0] - b[0])                 \
                                            : squared               ? s                                   \
                                                                    : SQRT(s);                            \
                        }                                                                                 \
                    r[i * h2 + j] = ref_dpa_##T(d, w1, w2, D);                                            \
                }                                                                                         \
            v = (double)ref_dpa_##T(r, h1, h2, D);                                                        \
        }                                                                                                 \
        free(r);                                                                                          \
        free(d);                                                                                          \
        free(D);                                                                                          \
        return v;                                                                                         \
    }
REF_DPA_TYPED(f32, float, sqrtf, fabsf)
REF_DPA_TYPED(f64, double, sqrt, fabs)
#undef REF_DPA_TYPED

/* The reference distance of two images held as doubles, computed in the engine's type for
 * float32 data (its pixels converted into xf and yf, of room enough) and in double otherwise. */
static inline double ref_image_distance_as(int f32, const double *x, size_t h1, size_t w1, const double *y, size_t h2,
                                           size_t w2, size_t channels, int squared, float *xf, float *yf)
{
    if (!f32)
        return ref_image_distance_f64(x, h1, w1, y, h2, w2, channels, squared);
    for (size_t k = 0; k < h1 * w1 * channels; k++)
        xf[k] = (float)x[k];
    for (size_t k = 0; k < h2 * w2 * channels; k++)
        yf[k] = (float)y[k];
    return ref_image_distance_f32(xf, h1, w1, yf, h2, w2, channels, squared);
}

#endif
