/* Tree edit distance on the CPU (issue 13): one pair of X-TED's Swissport trees at 100, 500 and
 * 1000 nodes (pair (0, 1), as X-TED's own benchmark), and the all-pairs matrix of a file's trees.
 *
 *   ww_bench_ted TREES_DIR [threads] [repetitions] [cpu|cuda]
 *
 * cuda: the GPU engine (backend CUDA), timed the same way; the default is cpu.
 * TREES_DIR holds swissport/swissport_nodes_N.txt and swissport_nodes_adj_N.txt (../shared/data/trees).
 * Prints, per size, the distance and the minimum and median time of one ww_ted call (parsing
 * excluded, everything else included), then the matrix of the 1000-node file. */
#include "bench_common.h"
#include "bench_trees.h"
#include "wavewarp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TREES_DIR [threads] [repetitions] [cpu|cuda]\n", argv[0]);
        return 2;
    }
    const int threads = argc > 2 ? atoi(argv[2]) : 0, reps = argc > 3 ? atoi(argv[3]) : 20;
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = argc > 4 && strcmp(argv[4], "cuda") == 0 ? WW_BACKEND_CUDA : WW_BACKEND_CPU;
    o.num_threads = threads;
    ww_ctx *ctx;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK) {
        fprintf(stderr, "no context: %s\n", ww_strerror(st));
        return 1;
    }
    printf("# %s, %d repetitions\n", ww_ctx_describe(ctx), reps);
    printf("| pair | nodes | distance | min (ms) | median (ms) |\n| --- | --- | --- | --- | --- |\n");
    const int sizes[] = {100, 500, 1000};
    for (int k = 0; k < 3; k++) {
        ww_labels *d;
        ww_labels_create(&d);
        ww_tree t[16];
        size_t n = bench_read_swissport(d, argv[1], sizes[k], t, 16);
        if (n < 2) {
            fprintf(stderr, "cannot read the %d-node Swissport files under %s\n", sizes[k], argv[1]);
            return 1;
        }
        double dist = 0, *times = malloc((size_t)reps * sizeof(double));
        if ((st = ww_ted(ctx, &t[0], &t[1], NULL, &dist)) != WW_OK) { /* warm-up: buffers */
            fprintf(stderr, "ww_ted: %s\n", ww_strerror(st));
            return 1;
        }
        for (int r = 0; r < reps; r++) {
            double t0 = bench_now();
            ww_ted(ctx, &t[0], &t[1], NULL, &dist);
            times[r] = bench_now() - t0;
        }
        double min = times[0];
        for (int r = 1; r < reps; r++)
            min = times[r] < min ? times[r] : min;
        printf("| swissport (0, 1) | %zu x %zu | %g | %.3f | %.3f |\n", t[0].count, t[1].count, dist, 1e3 * min,
               1e3 * bench_median(times, (size_t)reps));
        if (sizes[k] == 1000) {
            double *m = malloc(n * n * sizeof(double));
            double best = 1e30;
            for (int r = 0; r < 3; r++) {
                double t0 = bench_now();
                ww_ted_pairwise(ctx, t, n, NULL, 0, NULL, m, NULL);
                double e = bench_now() - t0;
                best = e < best ? e : best;
            }
            printf("\nAll pairs of the %zu 1000-node Swissport trees (each unordered pair once): %.1f ms (best of 3); "
                   "d(0, 1) = %g\n", n, 1e3 * best, m[1]);
            free(m);
        }
        free(times);
        for (size_t i = 0; i < n; i++)
            ww_tree_free(&t[i]);
        ww_labels_destroy(d);
    }
    ww_ctx_destroy(ctx);
    return 0;
}
