/* One pair on the GPU's wavefront engine, for comparing builds in one device call: DTW or TWED
 * (nu 1, lambda 1, p 2) of two random series of n samples of dim components, with an optional
 * window radius; three warm-up calls, then the min and median of `reps` timed calls (host data in,
 * result out). WW_WAVEFRONT_TILE (e.g. 4x1s16) forces a tile shape.
 *
 *   ww_bench_pair_probe n radius reps dtw|twed [dim]      (radius -1: no window)
 *
 * Prints one line: measure, dim, n, radius, tile, min, median and the value (which must agree
 * between builds to the last digit). */
#include <wavewarp.h>

#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s n radius reps dtw|twed [dim]\n", argv[0]);
        return 2;
    }
    const size_t n = strtoul(argv[1], NULL, 10), dim = argc > 5 ? strtoul(argv[5], NULL, 10) : 1;
    const long radius = atol(argv[2]);
    int reps = atoi(argv[3]);
    const char *name = argv[4];
    if (n == 0 || dim == 0 || reps < 1 || (strcmp(name, "dtw") != 0 && strcmp(name, "twed") != 0)) {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        return 2;
    }
    if (reps > 200)
        reps = 200;
    double *a = malloc(n * dim * sizeof *a), *b = malloc(n * dim * sizeof *b), t[200];
    if (!a || !b) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    srand(7);
    for (size_t i = 0; i < n * dim; i++) {
        a[i] = rand() / (double)RAND_MAX;
        b[i] = rand() / (double)RAND_MAX;
    }
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    o.engine = WW_ENGINE_CUDA_WAVEFRONT;
    ww_ctx *ctx = NULL;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], ww_strerror(st));
        free(a), free(b);
        return 1;
    }
    ww_measure m = strcmp(name, "twed") == 0 ? ww_measure_twed(1.0, 1.0, 2) : ww_measure_dtw();
    if (radius >= 0)
        ww_measure_set_window(&m, (size_t)radius);
    ww_series sa = ww_series_f64(a, NULL, n, dim), sb = ww_series_f64(b, NULL, n, dim);
    double v = 0;
    for (int k = 0; k < 3 && st == WW_OK; k++)
        st = ww_distance(ctx, &m, &sa, &sb, &v);
    for (int k = 0; k < reps && st == WW_OK; k++) {
        const double t0 = bench_now();
        st = ww_distance(ctx, &m, &sa, &sb, &v);
        t[k] = bench_now() - t0;
    }
    if (st != WW_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], ww_strerror(st));
        ww_ctx_destroy(ctx);
        free(a), free(b);
        return 1;
    }
    qsort(t, (size_t)reps, sizeof *t, bench_cmp_double);
    const char *tile = getenv("WW_WAVEFRONT_TILE");
    printf("%-5s d=%zu n=%-8zu r=%-7ld tile=%-7s min %8.3f ms  med %8.3f ms  value %.17g\n", name, dim, n, radius,
           tile ? tile : "auto", t[0] * 1e3, t[reps / 2] * 1e3, v);
    ww_ctx_destroy(ctx);
    free(a), free(b);
    return 0;
}
