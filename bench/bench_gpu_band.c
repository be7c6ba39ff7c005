/* The GPU thread strategy's band in registers (pairs_band_kernel) against its row sweep
 * (pairs_thread_kernel, WW_BAND=0) in one process, calls interleaved: matrices of series of one
 * length under narrow windows, DTW and TWED, f64 and f32 output, min and median of timed calls of
 * ww_pairwise (host data in, host matrix out) after a warm-up; and the 10% window of a 600 x 600
 * matrix of length 60 against its full matrix (issue 15's "within 1.5x of proportional").
 *
 *   ww_bench_gpu_band [out.md] [reps]   (WW_SHARED_DIR: the synthetic control data, else random) */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "bench_common.h"
#include "wavewarp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void row(FILE *md, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row(FILE *md, const char *fmt, ...)
{
    va_list a;
    va_start(a, fmt);
    vprintf(fmt, a);
    va_end(a);
    if (md) {
        va_start(a, fmt);
        vfprintf(md, fmt, a);
        va_end(a);
    }
    fflush(stdout);
}

/* min and median of `reps` calls with the band (band = 1) or the row sweep, the two interleaved */
static void time_both(ww_ctx *gpu, const ww_measure *m, const ww_dataset *x, void *out, const ww_pairwise_options *o,
                      int reps, double stats[2][2])
{
    double t[2][256];
    for (int k = 0; k < 2; k++) { /* warm-up of each */
        if (k)
            setenv("WW_BAND", "0", 1);
        ww_pairwise(gpu, m, x, NULL, out, o);
        unsetenv("WW_BAND");
    }
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < 2; k++) {
            if (k)
                setenv("WW_BAND", "0", 1);
            const double t0 = bench_now();
            const ww_status st = ww_pairwise(gpu, m, x, NULL, out, o);
            t[k][r] = st == WW_OK ? bench_now() - t0 : NAN;
            unsetenv("WW_BAND");
        }
    for (int k = 0; k < 2; k++) {
        double lo = t[k][0];
        for (int r = 1; r < reps; r++)
            lo = fmin(lo, t[k][r]);
        stats[k][0] = lo;
        stats[k][1] = bench_median(t[k], (size_t)reps);
    }
}

/* cells of the band of radius r over an n x n matrix */
static double band_cells(size_t n, size_t r)
{
    double cells = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t lo = i > r ? i - r : 0, hi = i + r < n - 1 ? i + r : n - 1;
        cells += (double)(hi - lo + 1);
    }
    return cells;
}

static double *load_values(size_t count, size_t length, int *real)
{
    double *v = malloc(count * length * sizeof(double));
    *real = 0;
    const char *dir = getenv("WW_SHARED_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/data/synthetic_control.data", dir ? dir : "../shared");
    FILE *f = count == 600 && length == 60 ? fopen(path, "r") : NULL;
    if (f) {
        size_t k = 0;
        while (k < count * length && fscanf(f, "%lf", &v[k]) == 1)
            k++;
        fclose(f);
        *real = k == count * length;
    }
    if (!*real)
        for (size_t k = 0; k < count * length; k++)
            v[k] = rand() / (RAND_MAX + 1.0);
    return v;
}

int main(int argc, char **argv)
{
    FILE *md = argc > 1 ? fopen(argv[1], "w") : NULL;
    const int reps = argc > 2 ? atoi(argv[2]) : 41;
    if (reps < 1 || reps > 256) {
        fprintf(stderr, "ww_bench_gpu_band: reps must be 1 to 256 (got '%s')\n", argv[2]);
        return 2;
    }
    if (!ww_cuda_available()) {
        printf("band benchmark skipped: no CUDA backend in this build or no GPU on this machine\n");
        return 0;
    }
    ww_ctx_options co = ww_ctx_options_default();
    co.backend = WW_BACKEND_CUDA;
    ww_ctx *gpu = NULL;
    if (ww_ctx_create(&gpu, &co) != WW_OK)
        return 1;
    const struct {
        size_t count, length;
    } shapes[] = {{600, 60}, {2000, 60}, {1000, 400}};
    row(md, "| matrix | measure | radius | out | sweep min / median ms | band min / median ms | band / sweep (medians) |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n");
    double full_median[2] = {0, 0}, window_median[2][2] = {{0, 0}, {0, 0}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        const size_t count = shapes[sh].count, n = shapes[sh].length;
        int real = 0;
        double *v = load_values(count, n, &real);
        ww_dataset x = ww_dataset_f64(v, NULL, NULL, count, n, 1);
        void *out = malloc(count * count * sizeof(double));
        const size_t radii[] = {0, 3, 6, 10, 16, 24, 32, SIZE_MAX};
        for (int twed = 0; twed <= 1; twed++)
            for (size_t q = 0; q < sizeof radii / sizeof radii[0]; q++)
                for (int f32 = 0; f32 <= 1; f32++) {
                    if (n > 60 && (f32 || (radii[q] != 10 && radii[q] != 16 && radii[q] != 24 && radii[q] != 32)))
                        continue;
                    ww_measure m = twed ? ww_measure_twed(1.0, 1.0, 2) : ww_measure_dtw();
                    if (radii[q] != SIZE_MAX)
                        ww_measure_set_window(&m, radii[q]);
                    ww_pairwise_options o = ww_pairwise_options_default();
                    o.out_dtype = f32 ? WW_F32 : WW_F64;
                    double s[2][2];
                    time_both(gpu, &m, &x, out, &o, count * n > 600 * 60 ? (reps + 4) / 5 : reps, s);
                    char rad[24];
                    snprintf(rad, sizeof rad, radii[q] == SIZE_MAX ? "none" : "%zu", radii[q]);
                    row(md, "| %zu x %zu, length %zu%s | %s | %s | %s | %.1f / %.1f us | %.1f / %.1f us | %.3f |\n", count,
                        count, n, real ? " (synthetic control)" : "", twed ? "TWED" : "DTW", rad, f32 ? "f32" : "f64",
                        s[1][0] * 1e6, s[1][1] * 1e6, s[0][0] * 1e6, s[0][1] * 1e6, s[0][1] / s[1][1]);
                    if (sh == 0 && !f32 && radii[q] == SIZE_MAX)
                        full_median[twed] = s[0][1];
                    if (sh == 0 && !f32 && radii[q] == 6)
                        window_median[twed][0] = s[0][1], window_median[twed][1] = s[1][1];
                }
        free(v), free(out);
    }
    const double share = band_cells(60, 6) / (60.0 * 60.0);
    row(md, "\n600 x 600 of length 60, radius 6 (10%%) against the full matrix (band share %.3f): time ratio / area ratio "
            "(1.5 is issue 15's bound):\n\n| measure | full median | radius 6, band | ratio / area | radius 6, sweep | ratio / area |\n"
            "| --- | --- | --- | --- | --- | --- |\n",
        share);
    for (int twed = 0; twed <= 1; twed++)
        row(md, "| %s | %.1f us | %.1f us | %.2f | %.1f us | %.2f |\n", twed ? "TWED" : "DTW", full_median[twed] * 1e6,
            window_median[twed][0] * 1e6, window_median[twed][0] / full_median[twed] / share,
            window_median[twed][1] * 1e6, window_median[twed][1] / full_median[twed] / share);
    /* the band against the other strategies, for the cost model (pairwise_plan.cu) */
    row(md, "\nThe thread strategy with the band against the others (WW_MATRIX_STRATEGY; auto: the cost model's "
            "choice), f64 in and out, self matrices, median of 5 calls after a warm-up:\n\n"
            "| matrix | measure | radius | pairs | auto | thread (band) | warp | block |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    const struct {
        size_t count, length, radii[5];
    } sweep[] = {{1000, 400, {4, 10, 16, 24, 32}}, {2000, 128, {4, 16, 24, 32, 0}}, {400, 1000, {8, 16, 32, 0, 0}},
                 {120, 1000, {16, 32, 0, 0, 0}},   {256, 2048, {4, 16, 32, 0, 0}},  {64, 2048, {16, 0, 0, 0, 0}},
                 {48, 4096, {16, 0, 0, 0, 0}}};
    const char *strategies[] = {NULL, "thread", "warp", "block"};
    for (size_t sh = 0; sh < sizeof sweep / sizeof sweep[0]; sh++) {
        const size_t count = sweep[sh].count, n = sweep[sh].length;
        int real = 0;
        double *v = load_values(count, n, &real);
        ww_dataset x = ww_dataset_f64(v, NULL, NULL, count, n, 1);
        double *out = malloc(count * count * sizeof(double));
        for (int twed = 0; twed <= 1; twed++)
            for (size_t q = 0; q < 5 && sweep[sh].radii[q]; q++) {
                ww_measure m = twed ? ww_measure_twed(1.0, 1.0, 2) : ww_measure_dtw();
                ww_measure_set_window(&m, sweep[sh].radii[q]);
                double t[4];
                for (int st = 0; st < 4; st++) {
                    if (strategies[st])
                        setenv("WW_MATRIX_STRATEGY", strategies[st], 1);
                    double r5[5];
                    ww_pairwise(gpu, &m, &x, NULL, out, NULL);
                    for (int k = 0; k < 5; k++) {
                        const double t0 = bench_now();
                        r5[k] = ww_pairwise(gpu, &m, &x, NULL, out, NULL) == WW_OK ? bench_now() - t0 : NAN;
                    }
                    t[st] = bench_median(r5, 5);
                    unsetenv("WW_MATRIX_STRATEGY");
                }
                row(md, "| %zu x %zu, length %zu | %s | %zu | %zu | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", count, count, n,
                    twed ? "TWED" : "DTW", sweep[sh].radii[q], count * (count - 1) / 2, t[0] * 1e3, t[1] * 1e3, t[2] * 1e3,
                    t[3] * 1e3);
            }
        free(v), free(out);
    }
    ww_ctx_destroy(gpu);
    if (md)
        fclose(md);
    return 0;
}
