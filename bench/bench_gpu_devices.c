/* GPU benchmark for several GPUs of one host (issue 4): all pairs of N series of length 28 in R^28
 * (host data in, host matrix out, the 60k x 60k case of bench_gpu_batch), on devices 0 alone and on
 * every visible device (ww_ctx_options.devices), f64 then f32; a few rows checked against the CPU.
 * Usage: ww_bench_gpu_devices [N, default 60000] [output.md]
 * WW_BENCH_DEVICES_NO_SINGLE=1 skips the one-device baseline. */
#define _POSIX_C_SOURCE 200809L
#include "wavewarp.h"
#include "bench_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void row(FILE *md, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void row(FILE *md, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (md) {
        va_start(ap, fmt);
        vfprintf(md, fmt, ap);
        va_end(ap);
    }
}

static ww_ctx *on_devices(const int *devices, int count)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    o.devices = devices;
    o.device_count = count;
    ww_ctx *ctx = NULL;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK)
        fprintf(stderr, "context on %d device(s): %s\n", count, ww_strerror(st));
    return st == WW_OK ? ctx : NULL;
}

/* One whole-matrix call (the first: pinned buffers are allocated in it, as a user's first call). */
static double time_matrix(ww_ctx *ctx, const ww_dataset *x, void *out, ww_dtype out_dtype, ww_status *st)
{
    ww_pairwise_options o = ww_pairwise_options_default();
    o.out_dtype = out_dtype;
    double t0 = bench_now();
    *st = ww_twed_pairwise(ctx, x, NULL, NULL, out, &o);
    return bench_now() - t0;
}

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 60000, len = 28, dim = 28;
    FILE *md = argc > 2 ? fopen(argv[2], "w") : NULL;
    const int visible = ww_cuda_device_count();
    if (!ww_cuda_available() || n < 2) {
        printf("multi-GPU benchmark skipped: no CUDA backend in this build, no GPU, or N < 2\n");
        return 0;
    }
    int all[64];
    const int count = visible < 64 ? visible : 64;
    for (int d = 0; d < count; d++)
        all[d] = d;
    double *v = malloc(n * len * dim * sizeof(double));
    float *v32 = malloc(n * len * dim * sizeof(float));
    double *m = malloc(n * n * sizeof(double));
    if (!v || !v32 || !m) {
        printf("multi-GPU benchmark: not enough host memory for N = %zu\n", n);
        return 1;
    }
    unsigned long long s = 12345;
    for (size_t k = 0; k < n * len * dim; k++) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        v[k] = (double)((s * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
        v32[k] = (float)v[k];
    }
    ww_dataset x = ww_dataset_f64(v, NULL, NULL, n, len, dim), x32 = ww_dataset_f32(v32, NULL, NULL, n, len, dim);
    ww_ctx *many = on_devices(all, count), *one = NULL;
    row(md, "Devices: %d visible; %s\n\n", visible, many ? ww_ctx_describe(many) : "(no context)");
    row(md, "| all pairs of %zu series, length 28, dim 28, host matrix out | devices | f64 | f32 | max rel. diff vs CPU (f64, 3 rows) |\n"
            "| --- | --- | --- | --- | --- |\n", n);
    double t1 = -1;
    if (getenv("WW_BENCH_DEVICES_NO_SINGLE") == NULL && (one = on_devices(all, 1)) != NULL) {
        ww_status st;
        t1 = time_matrix(one, &x, m, WW_F64, &st);
        row(md, "| first call | 1 | %.2f s%s | - | - |\n", t1, st == WW_OK ? "" : " (error)");
        ww_ctx_destroy(one);
    }
    if (many) {
        ww_status s64, s32;
        double t64 = time_matrix(many, &x, m, WW_F64, &s64);
        /* a few rows against the CPU engine */
        ww_ctx_options co = ww_ctx_options_default();
        co.backend = WW_BACKEND_CPU;
        ww_ctx *cpu = NULL;
        double worst = 0, *want = malloc(n * sizeof(double));
        if (ww_ctx_create(&cpu, &co) == WW_OK && want) {
            for (size_t i = 0; i < 3; i++) {
                size_t qi = i * (n / 3) + i; /* rows of different devices' chunks */
                ww_dataset q = ww_dataset_f64(v + qi * len * dim, NULL, NULL, 1, len, dim);
                ww_twed_pairwise(cpu, &q, &x, NULL, want, NULL);
                for (size_t j = 0; j < n; j++)
                    if (want[j] != 0)
                        worst = fmax(worst, fabs(m[qi * n + j] - want[j]) / fabs(want[j]));
                    else if (m[qi * n + j] != 0)
                        worst = INFINITY;
            }
        }
        free(want);
        ww_ctx_destroy(cpu);
        double t32 = time_matrix(many, &x32, m, WW_F32, &s32); /* f32 output fits in the f64 buffer */
        row(md, "| first call | %d | %.2f s%s | %.2f s%s | %.1e |\n", count, t64, s64 == WW_OK ? "" : " (error)", t32,
            s32 == WW_OK ? "" : " (error)", worst);
        if (t1 > 0 && count > 1)
            row(md, "\nSpeed-up of %d devices over one (f64): %.2fx\n", count, t1 / t64);
        ww_ctx_destroy(many);
    }
    free(v), free(v32), free(m);
    if (md)
        fclose(md);
    return 0;
}
