/* The 600 x 600 synthetic control matrix on the GPU, alone and after other work in the same
 * process (issue 12: after a CPU context and long one-pair calls on the GPU, the matrix took
 * 4.98 ms instead of 2.6 ms). Each variant runs in a process of its own:
 *
 *   ww_bench_gpu_after_pair DATA VARIANT
 *
 * VARIANT, the work done before the matrix is timed (warm: 3 calls first, then the median of 31):
 *   fresh         nothing
 *   cpu-ctx       a CPU context created (all cores), no call
 *   cpu-work      a CPU context that computed a matrix (its OpenMP threads have run)
 *   pair          a TWED pair of 2^20 samples on the GPU context
 *   cpu-work+pair both
 *   pair+pause    the pair, then 2 s of sleep before timing
 * Prints one line: variant, median and best milliseconds. */
#define _POSIX_C_SOURCE 200809L
#include "wavewarp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s synthetic_control.data VARIANT\n", argv[0]);
        return 2;
    }
    const char *variant = argv[2];
    FILE *fp = fopen(argv[1], "r");
    if (fp == NULL) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    enum { N = 600, L = 60 };
    static double x[N * L], out[N * N];
    for (int k = 0; k < N * L; k++)
        if (fscanf(fp, "%lf", &x[k]) != 1) {
            fprintf(stderr, "%s: expected %d values\n", argv[1], N * L);
            return 1;
        }
    fclose(fp);
    ww_dataset ds = ww_dataset_f64(x, NULL, NULL, N, L, 1);
    ww_measure m = ww_measure_twed(0.001, 1.0, 2);

    ww_ctx *cpu = NULL, *gpu = NULL;
    ww_ctx_options o = ww_ctx_options_default();
    if (strstr(variant, "cpu")) {
        o.backend = WW_BACKEND_CPU;
        if (ww_ctx_create(&cpu, &o) != WW_OK)
            return 1;
        if (strstr(variant, "cpu-work") && ww_pairwise(cpu, &m, &ds, NULL, out, NULL) != WW_OK)
            return 1;
    }
    o.backend = WW_BACKEND_CUDA;
    ww_status st = ww_ctx_create(&gpu, &o);
    if (st != WW_OK) {
        printf("%s: no GPU context (%s)\n", variant, ww_strerror(st));
        return 0;
    }
    if (strstr(variant, "pair")) {
        const size_t n = (size_t)1 << 20;
        double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), d;
        unsigned long long s = 12345;
        for (size_t k = 0; k < n; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            a[k] = (double)(s >> 11) / 9007199254740992.0;
            b[k] = a[k] * 0.5 + 0.25;
        }
        ww_series sa = ww_series_f64(a, NULL, n, 1), sb = ww_series_f64(b, NULL, n, 1);
        if (ww_distance(gpu, &m, &sa, &sb, &d) != WW_OK)
            return 1;
        free(a);
        free(b);
        if (strstr(variant, "pause")) {
            struct timespec pause = {2, 0};
            nanosleep(&pause, NULL);
        }
    }
    double t[31];
    for (int r = 0; r < 3 + 31; r++) {
        const double t0 = now();
        if ((st = ww_pairwise(gpu, &m, &ds, NULL, out, NULL)) != WW_OK) {
            fprintf(stderr, "%s: %s\n", variant, ww_strerror(st));
            return 1;
        }
        if (r >= 3)
            t[r - 3] = now() - t0;
    }
    qsort(t, 31, sizeof t[0], compare);
    printf("%-14s median %.3f ms  best %.3f ms  (ran on %s)\n", variant, 1e3 * t[15], 1e3 * t[0],
           ww_ctx_last_backend(gpu) == WW_BACKEND_CUDA ? "the GPU" : "the CPU");
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
    return 0;
}
