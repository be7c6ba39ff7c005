/* GPU benchmark for distance matrices (issue 4), double and float, warm, whole-call times:
 *  1. UCI synthetic control, 600 x 600 self matrix, length 60 (host data in, host matrix out);
 *  2. one query against 60,000 series of length 28 in R^28 kept on the GPU (device dataset);
 *  3. all pairs of N series of length 28 in R^28 (host in, host out), N from the command line;
 *  4. a self matrix of mixed lengths, split by strategy (the default) against kept whole;
 *  then the strategy-by-size table;
 *  5. DTW (issue 15): cases 1 and 2, an index, and matrices with a 10% window against the band's
 *     share (WW_BENCH_TWED_ONLY=1 skips it: the tables of the commits before the measures were split
 *     out, for old-vs-new runs; WW_BENCH_DTW_ONLY=1 runs it alone; with WW_BENCH_BAND_SWEEP=1 too, then
 *     narrow bands of long series under each strategy forced).
 * Usage: ww_bench_gpu_batch [output.md] [N for case 3, default 60000; 0 skips it] */
#define _POSIX_C_SOURCE 200809L
#include "wavewarp.h"
#include "bench_common.h"
#include "common/internal.h" /* ww_cuda_describe_plan */

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static ww_ctx *make(ww_backend backend, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = backend;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    return ww_ctx_create(&ctx, &o) == WW_OK ? ctx : NULL;
}

/* Median time of `reps` calls of ww_pairwise under measure m after one warm-up. */
static double time_measure(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                           const ww_pairwise_options *o, int reps)
{
    double t[32];
    if (ww_pairwise(ctx, m, x, y, out, o) != WW_OK)
        return -1;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        ww_status st = ww_pairwise(ctx, m, x, y, out, o);
        t[r] = bench_now() - t0;
        if (st != WW_OK)
            return -1;
    }
    return bench_median(t, (size_t)reps);
}

/* Median time of `reps` calls after one warm-up. */
static double time_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, const ww_twed_params *p, void *out,
                            const ww_pairwise_options *o, int reps)
{
    double t[32];
    if (ww_twed_pairwise(ctx, x, y, p, out, o) != WW_OK)
        return -1;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        ww_status st = ww_twed_pairwise(ctx, x, y, p, out, o);
        t[r] = bench_now() - t0;
        if (st != WW_OK)
            return -1;
    }
    return bench_median(t, (size_t)reps);
}

static double *load_synthetic_control(void)
{
    const char *dir = getenv("WW_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/data/synthetic_control.data", dir ? dir : "../shared");
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    double *v = malloc(600 * 60 * sizeof(double));
    for (int i = 0; i < 600 * 60; i++)
        if (fscanf(f, "%lf", &v[i]) != 1) {
            free(v);
            fclose(f);
            return NULL;
        }
    fclose(f);
    return v;
}

static void row(FILE *md, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void row(FILE *md, const char *fmt, ...)
{
    va_list a, b;
    va_start(a, fmt);
    va_copy(b, a);
    vprintf(fmt, a);
    if (md)
        vfprintf(md, fmt, b);
    va_end(a);
    va_end(b);
    fflush(stdout);
}

/* Median time of `reps` index queries after one warm-up. */
static double time_index(ww_ctx *ctx, ww_index *ix, const ww_dataset *q, void *out, const ww_pairwise_options *o,
                         int reps)
{
    double t[32];
    if (ix == NULL || ww_index_pairwise(ctx, ix, q, out, o) != WW_OK)
        return -1;
    for (int k = 0; k < reps; k++) {
        double t0 = bench_now();
        ww_status st = ww_index_pairwise(ctx, ix, q, out, o);
        t[k] = bench_now() - t0;
        if (st != WW_OK)
            return -1;
    }
    return bench_median(t, (size_t)reps);
}

static double max_rel_diff(const double *got, const double *want, size_t n)
{
    double worst = 0;
    for (size_t k = 0; k < n; k++)
        if (want[k] != 0)
            worst = fmax(worst, fabs(got[k] - want[k]) / fabs(want[k]));
        else if (got[k] != 0)
            worst = INFINITY;
    return worst;
}

/* Cells of the band of radius r on an n x n matrix (window.h's closed form), over n^2. */
static double band_share(size_t n, size_t r)
{
    if (r >= n)
        return 1.0;
    return ((double)n * (double)(2 * r + 1) - (double)r * (double)(r + 1)) / ((double)n * (double)n);
}

/* DTW: synthetic control, one query against 60,000 series of length 28 in R^28 (device data each
 * call, and an index), then matrices with a 10% window against the band's share. */
static void dtw_tables(FILE *md, ww_ctx *gpu, ww_ctx *cpu, const double *v, const float *v32)
{
    const ww_measure dtw = ww_measure_dtw();
    ww_measure dtw6 = dtw;
    ww_measure_set_window(&dtw6, 6);
    row(md, "\nDTW (squared Euclidean local cost, no root; issue 15 targets: synthetic control <= 2 ms, one query "
            "against 60,000 in an index <= 0.5 ms):\n\n"
            "| case | f64 | f32 | f64 / f32 | CPU engine f64 (all host cores) | max rel. diff GPU vs CPU (f64) |\n"
            "| --- | --- | --- | --- | --- | --- |\n");
    double *sc = load_synthetic_control();
    if (sc) {
        float *sc32 = malloc(600 * 60 * sizeof(float));
        for (int i = 0; i < 600 * 60; i++)
            sc32[i] = (float)sc[i];
        ww_dataset x = ww_dataset_f64(sc, NULL, NULL, 600, 60, 1), x32 = ww_dataset_f32(sc32, NULL, NULL, 600, 60, 1);
        double *m = malloc(600 * 600 * sizeof(double)), *mc = malloc(600 * 600 * sizeof(double));
        float *m32 = malloc(600 * 600 * sizeof(float));
        ww_pairwise_options o32 = ww_pairwise_options_default();
        o32.out_dtype = WW_F32;
        for (int w = 0; w < 2; w++) {
            const ww_measure *ms = w ? &dtw6 : &dtw;
            double t64 = time_measure(gpu, ms, &x, NULL, m, NULL, 11);
            double t32 = time_measure(gpu, ms, &x32, NULL, m32, &o32, 11);
            double tc = time_measure(cpu, ms, &x, NULL, mc, NULL, 3);
            row(md, "| synthetic control 600 x 600, length 60%s | %.3f ms | %.3f ms | %.2f | %.1f ms | %.1e |\n",
                w ? ", radius 6 (10%)" : "", t64 * 1e3, t32 * 1e3, t64 / t32, tc * 1e3, max_rel_diff(m, mc, 600 * 600));
        }
        free(m), free(mc), free(m32), free(sc32), free(sc);
    } else {
        row(md, "| synthetic control: data file not found (set WW_SHARED_DIR) | | | | | |\n");
    }
    const size_t len = 28, dim = 28, nres = 60000;
    double *dv = NULL;
    float *dv32 = NULL;
    if (cudaMalloc((void **)&dv, nres * len * dim * sizeof(double)) != cudaSuccess ||
        cudaMalloc((void **)&dv32, nres * len * dim * sizeof(float)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return;
    }
    cudaMemcpy(dv, v, nres * len * dim * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dv32, v32, nres * len * dim * sizeof(float), cudaMemcpyHostToDevice);
    {
        ww_dataset q = ww_dataset_f64(v + 5 * len * dim, NULL, NULL, 1, len, dim);
        ww_dataset q32 = ww_dataset_f32(v32 + 5 * len * dim, NULL, NULL, 1, len, dim);
        ww_dataset x = ww_dataset_f64(dv, NULL, NULL, nres, len, dim), x32 = ww_dataset_f32(dv32, NULL, NULL, nres, len, dim);
        x.memory = x32.memory = WW_DEVICE;
        ww_dataset xh = ww_dataset_f64(v, NULL, NULL, nres, len, dim);
        double *r = malloc(nres * sizeof(double)), *rc = malloc(nres * sizeof(double));
        float *r32 = malloc(nres * sizeof(float));
        ww_pairwise_options o32 = ww_pairwise_options_default();
        o32.out_dtype = WW_F32;
        const double t64 = time_measure(gpu, &dtw, &q, &x, r, NULL, 11);
        const double t32 = time_measure(gpu, &dtw, &q32, &x32, r32, &o32, 11);
        const double tc = time_measure(cpu, &dtw, &q, &xh, rc, NULL, 1);
        row(md, "| 1 query vs 60,000 series in device memory, prepared each call | %.3f ms | %.3f ms | %.2f | %.1f ms | %.1e |\n",
            t64 * 1e3, t32 * 1e3, t64 / t32, tc * 1e3, max_rel_diff(r, rc, nres));
        ww_index *ix = NULL, *ix32 = NULL;
        ww_index_create(gpu, &x, &dtw, &ix);
        ww_index_create(gpu, &x32, &dtw, &ix32);
        const double i64 = time_index(gpu, ix, &q, r, NULL, 11), i32 = time_index(gpu, ix32, &q32, r32, &o32, 11);
        row(md, "| 1 query vs a ww_index of the 60,000 series (prepared once) | %.3f ms | %.3f ms | %.2f | - | %.1e |\n",
            i64 * 1e3, i32 * 1e3, i64 / i32, max_rel_diff(r, rc, nres));
        /* the staged kernel's shapes on this query (WW_STAGED_THREADS, WW_STAGED_ROWS) */
        char shapes[512];
        int at = snprintf(shapes, sizeof shapes, "| staged kernel shapes, index query (threads/rows: f64, f32) |");
        const char *threads[] = {"32", "64", "128"}, *rows[] = {"1", "2"};
        for (int t = 0; t < 3; t++)
            for (int k = 0; k < 2; k++) {
                setenv("WW_STAGED_THREADS", threads[t], 1);
                setenv("WW_STAGED_ROWS", rows[k], 1);
                const double s64 = time_index(gpu, ix, &q, r, NULL, 11), s32 = time_index(gpu, ix32, &q32, r32, &o32, 11);
                at += snprintf(shapes + at, sizeof shapes - (size_t)at, " %s/%s: %.3f, %.3f ms;", threads[t], rows[k],
                               s64 * 1e3, s32 * 1e3);
            }
        unsetenv("WW_STAGED_THREADS"), unsetenv("WW_STAGED_ROWS");
        row(md, "%s | | | | |\n", shapes);
        ww_index_destroy(ix), ww_index_destroy(ix32);
        free(r), free(rc), free(r32);
    }
    cudaFree(dv), cudaFree(dv32);

    /* windows: the same matrices with a 10% window (fraction 0.1) and without */
    row(md, "\nMatrices with a 10%% window (fraction 0.1), f64, host in and out: time against the band's share (time "
            "ratio / area ratio: 1 is proportional; the fixed cost of a call is in both; radius 0: the same call "
            "with n cells per pair, about its fixed cost; last column: the ratio of the two times less that "
            "one, against the area's):\n\n"
            "| matrix | measure | full | 10%% window | band / n^2 | time ratio | time ratio / area ratio | max rel. diff vs CPU (window) | radius 0 | less radius 0: ratio / area ratio |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    const size_t shapes[][2] = {{600, 60}, {1000, 400}, {256, 2048}, {48, 8192}};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        const size_t count = shapes[sh][0], L = shapes[sh][1];
        double *sv = malloc(count * L * sizeof(double)), *m = malloc(count * count * sizeof(double));
        double *mc = malloc(count * count * sizeof(double));
        for (size_t i = 0; i < count * L; i++)
            sv[i] = rand() / (RAND_MAX + 1.0);
        ww_dataset s = ww_dataset_f64(sv, NULL, NULL, count, L, 1);
        const int reps = L * count >= 2048 * 256 ? 1 : L * count <= 600 * 60 ? 21 : 3; /* small calls vary most */
        for (int k = 0; k < 2; k++) {
            const ww_measure full = k ? ww_measure_twed(1.0, 1.0, 2) : dtw;
            ww_measure win = full, thin = full;
            ww_measure_set_window_fraction(&win, 0.1);
            ww_measure_set_window(&thin, 0);
            const double tf = time_measure(gpu, &full, &s, NULL, m, NULL, reps);
            const double t0 = time_measure(gpu, &thin, &s, NULL, m, NULL, reps);
            const double tw = time_measure(gpu, &win, &s, NULL, m, NULL, reps);
            /* the CPU check on a few rows (the whole matrix would take long) */
            const size_t rows = count < 4 ? count : 4;
            ww_pairwise_options o = ww_pairwise_options_default();
            o.row_end = rows;
            ww_pairwise(cpu, &win, &s, NULL, mc, &o);
            double worst = 0;
            for (size_t i = 0; i < rows; i++)
                for (size_t j = 0; j < count; j++)
                    if (i != j && mc[i * count + j] != 0)
                        worst = fmax(worst, fabs(m[i * count + j] - mc[i * count + j]) / fabs(mc[i * count + j]));
            const double share = band_share(L, (size_t)(0.1 * (double)L));
            row(md, "| %zu x %zu, length %zu | %s | %.2f ms | %.2f ms | %.3f | %.3f | %.2f | %.1e | %.2f ms | %.2f |\n", count,
                count, L, k ? "TWED" : "DTW", tf * 1e3, tw * 1e3, share, tw / tf, tw / tf / share, worst, t0 * 1e3,
                (tw - t0) / (tf - t0) / share);
        }
        free(sv), free(m), free(mc);
    }
}

/* Narrow bands of series of one length (issue 15): each strategy forced and the cost model's choice,
 * DTW and TWED, one call after a warm-up each (the thread only where its buffer holds the band and
 * the pairs are many). */
static void band_sweep(FILE *md, ww_ctx *gpu)
{
    row(md, "\nNarrow bands of one length: each strategy forced (WW_MATRIX_STRATEGY) and the cost model's choice "
            "(auto), f64, host in and out, one call after a warm-up:\n\n"
            "| matrix | measure | radius | auto | thread | warp | block |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    const struct {
        size_t count, length, radii[6];
    } shapes[] = {{1000, 400, {10, 20, 40, 62, 100, 0}}, {256, 2048, {20, 62, 204, 0}}, {48, 8192, {204, 819, 0}}};
    const char *strategies[] = {NULL, "thread", "warp", "block"};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        const size_t count = shapes[sh].count, L = shapes[sh].length;
        double *sv = malloc(count * L * sizeof(double)), *m = malloc(count * count * sizeof(double));
        for (size_t i = 0; i < count * L; i++)
            sv[i] = rand() / (RAND_MAX + 1.0);
        ww_dataset s = ww_dataset_f64(sv, NULL, NULL, count, L, 1);
        for (int k = 0; k < 2; k++)
            for (size_t q = 0; q < 6 && shapes[sh].radii[q]; q++) {
                ww_measure w = k ? ww_measure_twed(1.0, 1.0, 2) : ww_measure_dtw();
                ww_measure_set_window(&w, shapes[sh].radii[q]);
                char cells[4][24];
                for (int st = 0; st < 4; st++) {
                    if (st == 1 && (L > 400 || 2 * shapes[sh].radii[q] + 5 > 257)) {
                        snprintf(cells[st], sizeof cells[st], "-");
                        continue;
                    }
                    if (strategies[st])
                        setenv("WW_MATRIX_STRATEGY", strategies[st], 1);
                    snprintf(cells[st], sizeof cells[st], "%.2f ms", time_measure(gpu, &w, &s, NULL, m, NULL, 1) * 1e3);
                    unsetenv("WW_MATRIX_STRATEGY");
                }
                row(md, "| %zu x %zu, length %zu | %s | %zu | %s | %s | %s | %s |\n", count, count, L, k ? "TWED" : "DTW",
                    shapes[sh].radii[q], cells[0], cells[1], cells[2], cells[3]);
            }
        free(sv), free(m);
    }
}

int main(int argc, char **argv)
{
    FILE *md = argc > 1 ? fopen(argv[1], "w") : NULL;
    size_t n_all = argc > 2 ? (size_t)atol(argv[2]) : 60000;
    if (!ww_cuda_available()) {
        printf("GPU batch benchmark skipped: no CUDA backend in this build or no GPU on this machine\n");
        return 0;
    }
    ww_ctx *gpu = make(WW_BACKEND_CUDA, 0), *cpu = make(WW_BACKEND_CPU, 0);
    row(md, "Device: %s; CPU engine: %s\n\n", ww_ctx_describe(gpu), ww_ctx_describe(cpu));
    if (getenv("WW_BENCH_DTW_ONLY")) { /* the measures' tables alone (issue 15) */
        const size_t count = 60000 * 28 * 28;
        double *v = malloc(count * sizeof(double));
        float *v32 = malloc(count * sizeof(float));
        srand(7);
        for (size_t i = 0; i < count; i++) {
            v[i] = rand() / (RAND_MAX + 1.0);
            v32[i] = (float)v[i];
        }
        dtw_tables(md, gpu, cpu, v, v32);
        if (getenv("WW_BENCH_BAND_SWEEP"))
            band_sweep(md, gpu);
        free(v), free(v32);
        if (md)
            fclose(md);
        ww_ctx_destroy(gpu), ww_ctx_destroy(cpu);
        return 0;
    }
    row(md, "| case | f64 | f32 | f64 / f32 | CPU engine f64 (all host cores) | max rel. diff GPU vs CPU (f64) |\n"
            "| --- | --- | --- | --- | --- | --- |\n");
    ww_twed_params p = {1.0, 1.0, 2};

    /* 1. synthetic control */
    double *sc = load_synthetic_control();
    if (sc) {
        float *sc32 = malloc(600 * 60 * sizeof(float));
        for (int i = 0; i < 600 * 60; i++)
            sc32[i] = (float)sc[i];
        double *stamps = malloc(60 * 600 * sizeof(double));
        float *stamps32 = malloc(60 * 600 * sizeof(float));
        for (int i = 0; i < 600 * 60; i++)
            stamps[i] = stamps32[i] = (float)(i % 60); /* 0..59, as cuTWED was run */
        ww_dataset x = ww_dataset_f64(sc, stamps, NULL, 600, 60, 1);
        ww_dataset x32 = ww_dataset_f32(sc32, stamps32, NULL, 600, 60, 1);
        double *m = malloc(600 * 600 * sizeof(double)), *mc = malloc(600 * 600 * sizeof(double));
        float *m32 = malloc(600 * 600 * sizeof(float));
        ww_pairwise_options o32 = ww_pairwise_options_default();
        o32.out_dtype = WW_F32;
        double t64 = time_pairwise(gpu, &x, NULL, &p, m, NULL, 11);
        double t32 = time_pairwise(gpu, &x32, NULL, &p, m32, &o32, 11);
        double tc = time_pairwise(cpu, &x, NULL, &p, mc, NULL, 3);
        double worst = 0;
        for (int k = 0; k < 600 * 600; k++)
            if (mc[k] != 0)
                worst = fmax(worst, fabs(m[k] - mc[k]) / fabs(mc[k]));
        row(md, "| synthetic control 600 x 600, length 60 (cuTWED: 587 ms) | %.3f ms | %.3f ms | %.2f | %.1f ms | %.1e |\n",
            t64 * 1e3, t32 * 1e3, t64 / t32, tc * 1e3, worst);
        free(m), free(mc), free(m32), free(sc32), free(stamps), free(stamps32), free(sc);
    } else {
        row(md, "| synthetic control: data file not found (set WW_SHARED_DIR) | | | | | |\n");
    }

    /* 2 and 3: series of length 28 in R^28, uniform random */
    const size_t len = 28, dim = 28, nres = 60000;
    size_t nmax = n_all > nres ? n_all : nres;
    double *v = malloc(nmax * len * dim * sizeof(double));
    float *v32 = malloc(nmax * len * dim * sizeof(float));
    srand(7);
    for (size_t i = 0; i < nmax * len * dim; i++) {
        v[i] = rand() / (RAND_MAX + 1.0);
        v32[i] = (float)v[i];
    }
    /* the resident set: uploaded once, outside the timing */
    double *dv = NULL;
    float *dv32 = NULL;
    if (cudaMalloc((void **)&dv, nres * len * dim * sizeof(double)) != cudaSuccess ||
        cudaMalloc((void **)&dv32, nres * len * dim * sizeof(float)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(dv, v, nres * len * dim * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dv32, v32, nres * len * dim * sizeof(float), cudaMemcpyHostToDevice);
    {
        ww_dataset q = ww_dataset_f64(v + 5 * len * dim, NULL, NULL, 1, len, dim);
        ww_dataset q32 = ww_dataset_f32(v32 + 5 * len * dim, NULL, NULL, 1, len, dim);
        ww_dataset x = ww_dataset_f64(dv, NULL, NULL, nres, len, dim);
        x.memory = WW_DEVICE;
        ww_dataset x32 = ww_dataset_f32(dv32, NULL, NULL, nres, len, dim);
        x32.memory = WW_DEVICE;
        ww_dataset xh = ww_dataset_f64(v, NULL, NULL, nres, len, dim);
        double *r = malloc(nres * sizeof(double)), *rc = malloc(nres * sizeof(double));
        float *r32 = malloc(nres * sizeof(float));
        ww_pairwise_options o32 = ww_pairwise_options_default();
        o32.out_dtype = WW_F32;
        double t64 = time_pairwise(gpu, &q, &x, &p, r, NULL, 11);
        double t32 = time_pairwise(gpu, &q32, &x32, &p, r32, &o32, 11);
        double tc = time_pairwise(cpu, &q, &xh, &p, rc, NULL, 1);
        double worst = 0;
        for (size_t k = 0; k < nres; k++)
            worst = fmax(worst, fabs(r[k] - rc[k]) / fabs(rc[k]));
        row(md, "| 1 query vs 60,000 series in device memory, prepared each call (cuTWED: 93 ms) | %.3f ms | %.3f ms | %.2f | %.1f ms | %.1e |\n",
            t64 * 1e3, t32 * 1e3, t64 / t32, tc * 1e3, worst);
        /* the same set as an index: prepared once */
        ww_index *ix = NULL, *ix32 = NULL;
        double i64 = -1, i32 = -1, iworst = 0;
        const ww_measure pm = ww_measure_twed(p.nu, p.lambda, p.degree);
        if (ww_index_create(gpu, &x, &pm, &ix) == WW_OK && ww_index_create(gpu, &x32, &pm, &ix32) == WW_OK) {
            double tt[11];
            for (int pass = 0; pass < 2; pass++) {
                ww_index_pairwise(gpu, pass ? ix32 : ix, pass ? &q32 : &q, pass ? (void *)r32 : (void *)r,
                                  pass ? &o32 : NULL);
                for (int k = 0; k < 11; k++) {
                    double t0 = bench_now();
                    ww_index_pairwise(gpu, pass ? ix32 : ix, pass ? &q32 : &q, pass ? (void *)r32 : (void *)r,
                                      pass ? &o32 : NULL);
                    tt[k] = bench_now() - t0;
                }
                bench_median(tt, 11);
                if (pass)
                    i32 = tt[5];
                else
                    i64 = tt[5];
                if (!pass)
                    for (size_t k = 0; k < nres; k++)
                        iworst = fmax(iworst, fabs(r[k] - rc[k]) / fabs(rc[k]));
            }
        }
        row(md, "| 1 query vs a ww_index of the 60,000 series (prepared once) | %.3f ms | %.3f ms | %.2f | - | %.1e |\n",
            i64 * 1e3, i32 * 1e3, i64 / i32, iworst);
        /* the fixed cost of a call (query upload, launch, copies back): the same with 600 series */
        {
            ww_dataset xs = ww_dataset_f64(dv, NULL, NULL, 600, len, dim);
            ww_dataset xs32 = ww_dataset_f32(dv32, NULL, NULL, 600, len, dim);
            xs.memory = xs32.memory = WW_DEVICE;
            ww_index *sx = NULL, *sx32 = NULL;
            double s64 = -1, s32 = -1;
            if (ww_index_create(gpu, &xs, &pm, &sx) == WW_OK && ww_index_create(gpu, &xs32, &pm, &sx32) == WW_OK) {
                double tt[11];
                for (int pass = 0; pass < 2; pass++) {
                    ww_index_pairwise(gpu, pass ? sx32 : sx, pass ? &q32 : &q, pass ? (void *)r32 : (void *)r,
                                      pass ? &o32 : NULL);
                    for (int k = 0; k < 11; k++) {
                        double t0 = bench_now();
                        ww_index_pairwise(gpu, pass ? sx32 : sx, pass ? &q32 : &q, pass ? (void *)r32 : (void *)r,
                                          pass ? &o32 : NULL);
                        tt[k] = bench_now() - t0;
                    }
                    bench_median(tt, 11);
                    *(pass ? &s32 : &s64) = tt[5];
                }
            }
            row(md, "| 1 query vs a ww_index of 600 of them (the fixed cost of a call) | %.3f ms | %.3f ms | - | - "
                    "| - |\n", s64 * 1e3, s32 * 1e3);
            ww_index_destroy(sx);
            ww_index_destroy(sx32);
        }
        ww_index_destroy(ix);
        ww_index_destroy(ix32);
        free(r), free(rc), free(r32);
    }
    cudaFree(dv);
    cudaFree(dv32);
    if (n_all > 0) {
        ww_dataset x = ww_dataset_f64(v, NULL, NULL, n_all, len, dim);
        ww_dataset x32 = ww_dataset_f32(v32, NULL, NULL, n_all, len, dim);
        double *m = malloc(n_all * n_all * sizeof(double));
        float *m32 = malloc(n_all * n_all * sizeof(float));
        if (!m || !m32) {
            row(md, "| all pairs of %zu: not enough host memory | | | | | |\n", n_all);
        } else {
            ww_pairwise_options o32 = ww_pairwise_options_default();
            o32.out_dtype = WW_F32;
            double t0 = bench_now();
            ww_status s64 = ww_twed_pairwise(gpu, &x, NULL, &p, m, NULL);
            double t64 = bench_now() - t0;
            t0 = bench_now();
            ww_status s32 = ww_twed_pairwise(gpu, &x32, NULL, &p, m32, &o32);
            double t32 = bench_now() - t0;
            /* spot check against the CPU: a few rows */
            double worst = 0;
            ww_ctx *c1 = cpu;
            double *rowc = malloc(n_all * sizeof(double));
            for (size_t i = 0; i < 3; i++) {
                size_t qi = i * (n_all / 3);
                ww_dataset q = ww_dataset_f64(v + qi * len * dim, NULL, NULL, 1, len, dim);
                ww_twed_pairwise(c1, &q, &x, &p, rowc, NULL);
                for (size_t j = 0; j < n_all; j++)
                    if (rowc[j] != 0)
                        worst = fmax(worst, fabs(m[qi * n_all + j] - rowc[j]) / fabs(rowc[j]));
            }
            free(rowc);
            row(md, "| all pairs of %zu series, length 28, dim 28, host matrix out (first call) | %.2f s%s | %.2f s%s | %.2f | - | %.1e (3 rows) |\n",
                n_all, t64, s64 == WW_OK ? "" : " (error)", t32, s32 == WW_OK ? "" : " (error)", t64 / t32, worst);
        }
        free(m);
        free(m32);
    }
    /* 4. Mixed lengths (dim 1): half the series of 1 to 60 samples, 5/12 of 150 to 500, 1/12 of 750 to
     * 1,500. The default splits the matrix into rectangles by strategy, run concurrently; against it,
     * the whole matrix with the strategy of its longest series (WW_MATRIX_GROUPS=0), and each
     * strategy forced. */
    if (getenv("WW_BENCH_NO_MIXED") == NULL) {
        const size_t count = 3000, max_len = 1500;
        size_t *offsets = malloc((count + 1) * sizeof(size_t));
        offsets[0] = 0;
        for (size_t i = 0; i < count; i++) {
            const int band = rand() % 12;
            const size_t lo = band < 6 ? 1 : band < 11 ? 150 : max_len / 2, hi = band < 6 ? 60 : band < 11 ? max_len / 3 : max_len;
            offsets[i + 1] = offsets[i] + lo + (size_t)rand() % (hi - lo + 1);
        }
        double *mv = malloc(offsets[count] * sizeof(double));
        for (size_t i = 0; i < offsets[count]; i++)
            mv[i] = rand() / (RAND_MAX + 1.0);
        ww_dataset x = ww_dataset_f64(mv, NULL, offsets, count, 0, 1);
        double *m = malloc(count * count * sizeof(double));
        char plan[2048];
        ww_cuda_describe_plan(gpu, &x, NULL, plan, sizeof plan);
        const double split = time_pairwise(gpu, &x, NULL, &p, m, NULL, 3);
        /* spot check against the CPU: a few rows */
        double worst = 0, *rowc = malloc(count * sizeof(double));
        for (size_t i = 0; i < count; i += count / 4) {
            ww_dataset q = ww_dataset_f64(mv + offsets[i], NULL, NULL, 1, offsets[i + 1] - offsets[i], 1);
            ww_twed_pairwise(cpu, &q, &x, &p, rowc, NULL);
            for (size_t j = 0; j < count; j++)
                if (rowc[j] != 0 && j != i)
                    worst = fmax(worst, fabs(m[i * count + j] - rowc[j]) / fabs(rowc[j]));
        }
        free(rowc);
        setenv("WW_MATRIX_GROUPS", "0", 1);
        char whole_plan[256];
        ww_cuda_describe_plan(gpu, &x, NULL, whole_plan, sizeof whole_plan);
        const double whole = time_pairwise(gpu, &x, NULL, &p, m, NULL, 3);
        unsetenv("WW_MATRIX_GROUPS");
        const char *forced[3] = {"warp", "block", "grid"};
        double ft[3];
        for (int k = 0; k < 3; k++) {
            setenv("WW_MATRIX_STRATEGY", forced[k], 1);
            ft[k] = k == 2 ? -1 : time_pairwise(gpu, &x, NULL, &p, m, NULL, 1); /* grid: hours */
            unsetenv("WW_MATRIX_STRATEGY");
        }
        for (char *c = whole_plan; *c; c++)
            if (*c == '\n')
                *c = 0;
        row(md, "\nMixed lengths: self matrix of %zu series of 1 to %zu samples (half of 1-60, 5/12 of 150-500, 1/12 of "
                "750-1,500), dim 1, f64, host in and out:\n\n"
                "| split by strategy (default) | whole, strategy of the longest (%s) | warp forced | block forced | "
                "max rel. diff vs CPU (4 rows) |\n| --- | --- | --- | --- | --- |\n"
                "| %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1e |\n\nThe split (rectangles by strategy, "
                "rows x columns, longest series):\n\n```\n%s```\n",
            count, max_len, whole_plan, split * 1e3, whole * 1e3, ft[0] * 1e3, ft[1] * 1e3, worst, plan);
        free(m), free(mv), free(offsets);
    }
    /* Strategy by table size (X-TED's threshold figure): time per pair of a self matrix with each
     * strategy forced (one thread, one warp, one block per pair, many pairs at once) and of the
     * whole-GPU wavefront engine (one pair at a time), dim 1, double; the last rows have few pairs,
     * where one warp per pair leaves most of the GPU idle. WW_BENCH_NO_TABLE=1 skips it. */
    if (getenv("WW_BENCH_NO_TABLE") == NULL) {
        row(md, "\nStrategy by table size (time per pair of a self matrix, dim 1, f64; * = the one the cost model "
                "picks for that matrix, from `ww_cuda_describe_plan`):\n\n"
                "| series length | series | one thread per pair | one warp per pair | one block per pair | "
                "whole GPU per pair (wavefront) |\n"
                "| --- | --- | --- | --- | --- | --- |\n");
        const size_t shapes[][2] = {{16, 512},  {32, 512},   {64, 512},   {128, 512}, {256, 512}, {512, 512},
                                    {1024, 512}, {2048, 256}, {4096, 256}, {1024, 24}, {4096, 24}, {8192, 12}};
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
            const size_t L = shapes[sh][0], count = shapes[sh][1];
            const double pairs = (double)count * (count - 1) / 2;
            const int reps = L * count >= 2048 * 256 ? 1 : L * count <= 600 * 60 ? 21 : 3; /* small calls vary most */
            double *sv = malloc(count * L * sizeof(double));
            double *m = malloc(count * count * sizeof(double));
            for (size_t i = 0; i < count * L; i++)
                sv[i] = rand() / (RAND_MAX + 1.0);
            ww_dataset s = ww_dataset_f64(sv, NULL, NULL, count, L, 1);
            /* thread, warp, block forced; thread only takes series up to 256 samples */
            const char *forced[3] = {"thread", "warp", "block"};
            double cand[4] = {-1, -1, -1, -1};
            for (int k = 0; k < 3; k++) {
                if (k == 0 && L > 256)
                    continue;
                setenv("WW_MATRIX_STRATEGY", forced[k], 1);
                cand[k] = time_pairwise(gpu, &s, NULL, &p, m, NULL, reps) / pairs;
                unsetenv("WW_MATRIX_STRATEGY");
            }
            ww_series a = ww_series_f64(sv, NULL, L, 1), b = ww_series_f64(sv + L, NULL, L, 1);
            double d, times[5];
            ww_twed(gpu, &a, &b, &p, &d);
            for (int k = 0; k < 5; k++) {
                double t0 = bench_now();
                ww_twed(gpu, &a, &b, &p, &d);
                times[k] = bench_now() - t0;
            }
            bench_median(times, 5);
            cand[3] = times[2];
            /* what the library picks for this matrix */
            char plan[256];
            ww_cuda_describe_plan(gpu, &s, NULL, plan, sizeof plan);
            const char *names[4] = {"thread ", "warp ", "block ", "grid "};
            int picked = -1;
            for (int k = 0; k < 4; k++)
                if (strncmp(plan, names[k], strlen(names[k])) == 0)
                    picked = k;
            char cell[4][48];
            for (int k = 0; k < 4; k++) {
                if (cand[k] < 0)
                    snprintf(cell[k], sizeof cell[k], "- (longer than it takes)");
                else
                    snprintf(cell[k], sizeof cell[k], "%.3g us%s", cand[k] * 1e6, picked == k ? " *" : "");
            }
            row(md, "| %zu | %zu | %s | %s | %s | %s |\n", L, count, cell[0], cell[1], cell[2], cell[3]);
            free(m);
            free(sv);
        }
    }
    if (getenv("WW_BENCH_TWED_ONLY") == NULL)
        dtw_tables(md, gpu, cpu, v, v32);
    free(v);
    free(v32);
    if (md)
        fclose(md);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
    return 0;
}
