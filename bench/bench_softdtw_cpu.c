/* Soft-DTW's CPU engine on one thread, timed in the thread's CPU time (CLOCK_THREAD_CPUTIME_ID):
 * on a shared machine the wall clock counts the time other processes hold the core, which made
 * bench_softdtw.py's figures move by 2x from one run to the next; CPU time moves by a few percent.
 * Workloads of issue 14 (gamma 1, float64, uniform values in [-1, 1]):
 *   value     one pair 2048 x 2048, dim 2 (ww_distance)
 *   fwd+bwd   B = 64 pairs of 512 x 512, dim 2 (ww_softdtw_batch, both gradients)
 *   fwd       the same batch, values only
 *   bary      B = 100 pairs of 60 x 60, dim 1, gradients of x only (one barycenter iteration)
 * Prints one Markdown row per workload: best of --rounds (default 5), Mcells/s.
 *
 *   ww_bench_softdtw [rounds] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "wavewarp.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill(double *x, size_t n, unsigned *state)
{
    for (size_t k = 0; k < n; k++) {
        *state = *state * 1664525u + 1013904223u;
        x[k] = (double)(*state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
    }
}

static void batch_row(ww_ctx *ctx, const ww_measure *m, const char *name, size_t count, size_t n, size_t dim,
                      int grads, int rounds, unsigned *state)
{
    double *x = malloc(count * n * dim * sizeof(double)), *y = malloc(count * n * dim * sizeof(double));
    double *gx = malloc(count * n * dim * sizeof(double)), *gy = malloc(count * n * dim * sizeof(double));
    double *values = malloc(count * sizeof(double));
    if (!x || !y || !gx || !gy || !values) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    fill(x, count * n * dim, state);
    fill(y, count * n * dim, state);
    const ww_dataset dx = ww_dataset_f64(x, NULL, NULL, count, n, dim), dy = ww_dataset_f64(y, NULL, NULL, count, n, dim);
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        const double t = cpu_now();
        const ww_status st = ww_softdtw_batch(ctx, m, &dx, &dy, values, grads ? gx : NULL, grads == 2 ? gy : NULL);
        const double dt = cpu_now() - t;
        if (st != WW_OK) {
            fprintf(stderr, "%s: %s\n", name, ww_strerror(st));
            exit(1);
        }
        best = dt < best ? dt : best;
    }
    printf("| %s | %zu x %zu x %zu, dim %zu | %.4f | %.0f |\n", name, count, n, n, dim, best,
           (double)count * (double)n * (double)n / best / 1e6);
    free(x), free(y), free(gx), free(gy), free(values);
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 5;
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.num_threads = 1;
    ww_ctx *ctx = NULL;
    if (ww_ctx_create(&ctx, &o) != WW_OK)
        return 1;
    const ww_measure m = ww_measure_softdtw(1.0);
    unsigned state = 12345u;
    printf("| workload | pairs x cells | best CPU time (s), 1 thread | Mcells/s |\n| --- | --- | --- | --- |\n");
    {
        const size_t n = 2048, dim = 2;
        double *a = malloc(n * dim * sizeof(double)), *b = malloc(n * dim * sizeof(double));
        fill(a, n * dim, &state);
        fill(b, n * dim, &state);
        const ww_series sa = ww_series_f64(a, NULL, n, dim), sb = ww_series_f64(b, NULL, n, dim);
        double best = 1e30, v = 0;
        for (int r = 0; r < rounds; r++) {
            const double t = cpu_now();
            if (ww_distance(ctx, &m, &sa, &sb, &v) != WW_OK)
                return 1;
            const double dt = cpu_now() - t;
            best = dt < best ? dt : best;
        }
        printf("| value | 1 x %zu x %zu, dim %zu | %.4f | %.0f |\n", n, n, dim, best, (double)n * n / best / 1e6);
        free(a), free(b);
    }
    batch_row(ctx, &m, "fwd+bwd", 64, 512, 2, 2, rounds, &state);
    batch_row(ctx, &m, "fwd", 64, 512, 2, 0, rounds, &state);
    batch_row(ctx, &m, "bary", 100, 60, 1, 1, rounds, &state);
    ww_ctx_destroy(ctx);
    return 0;
}
