/* The GPU tree edit distance's strategies across table sizes (issue 13; the X-TED paper's threshold
 * figure for our kernels): for each size s, K pairs of s-node paths (a path has one keyroot, so
 * each pair is exactly one (s + 1) x (s + 1) table), computed in one ww_ted_pairwise call with every
 * table on a thread, then on a warp, then on a block, then in tiles over many warps of several
 * blocks (the multi-block strategy; WW_TED_THREAD_CELLS / WW_TED_WARP_CELLS / WW_TED_BLOCK_CELLS).
 * Prints the time per table of each strategy, the fastest, and the one the built-in thresholds
 * (BUILTIN_*_CELLS: the built-in model's, keep them the same; a calibration file changes them) pick. Results are checked equal
 * between strategies. The thread strategy is skipped past 512 nodes (minutes).
 *
 *   ww_bench_ted_gpu [max_nodes] [K]    (default 512; 1024 adds a row of 1025^2 cells per table;
 *                                         K = 1: one table a call, its latency, as at a pair's deep
 *                                         depths; default as many as fill 2^24 cells, at most 20,000) */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "bench_common.h"
#include "wavewarp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILTIN_THREAD_CELLS 64  /* src/common/calibration.c, ww_cuda_model_default: ted_thread_cells */
#define BUILTIN_WARP_CELLS 4225  /* ... ted_warp_cells */
#define BUILTIN_BLOCK_CELLS 4225  /* ... ted_block_cells (collections: K > 1) */
#define BUILTIN_PAIR_BLOCK_CELLS 1050625 /* ... ted_pair_block_cells (one table alone: K = 1) */

static double run(ww_ctx *ctx, const char *thread_cells, const char *warp_cells, const char *block_cells,
                  const ww_tree *x, size_t k, const ww_tree *y, double *out)
{
    setenv("WW_TED_THREAD_CELLS", thread_cells, 1);
    setenv("WW_TED_WARP_CELLS", warp_cells, 1);
    setenv("WW_TED_BLOCK_CELLS", block_cells, 1);
    double best = INFINITY;
    for (int r = 0; r < 3; r++) {
        const double t0 = bench_now();
        ww_status st = ww_ted_pairwise(ctx, x, k, y, 1, NULL, out, NULL);
        const double e = bench_now() - t0;
        if (st != WW_OK) {
            fprintf(stderr, "ww_ted_pairwise: %s\n", ww_strerror(st));
            exit(1);
        }
        best = e < best ? e : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    const int max_nodes = argc > 1 ? atoi(argv[1]) : 512;
    const size_t fixed_k = argc > 2 ? (size_t)atol(argv[2]) : 0;
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    ww_ctx *ctx;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK) {
        fprintf(stderr, "no GPU context: %s\n", ww_strerror(st));
        return 1;
    }
    printf("# %s; K pairs of s-node paths, one table of (s+1)^2 cells each; best of 3\n\n", ww_ctx_describe(ctx));
    printf("| s | cells per table | K | thread (us/table) | warp (us/table) | block (us/table) | multi-block "
           "(us/table) | fastest | built-in thresholds pick |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int s = 2; s <= max_nodes; s *= 2) {
        const size_t cells = (size_t)(s + 1) * (size_t)(s + 1);
        size_t k = ((size_t)1 << 24) / cells;
        k = k < 1 ? 1 : k > 20000 ? 20000 : k;
        if (fixed_k > 0)
            k = fixed_k;
        int32_t *parent = malloc((size_t)s * sizeof(int32_t)), *labels = malloc((k + 1) * (size_t)s * sizeof(int32_t));
        ww_tree *x = malloc((k + 1) * sizeof(ww_tree));
        double *a = malloc(k * sizeof(double)), *b = malloc(k * sizeof(double)), *c = malloc(k * sizeof(double));
        double *m = malloc(k * sizeof(double));
        for (int i = 0; i < s; i++)
            parent[i] = i - 1;
        unsigned long long seed = 12345;
        for (size_t i = 0; i < (k + 1) * (size_t)s; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            labels[i] = (int32_t)((seed >> 33) % 8);
        }
        for (size_t t = 0; t <= k; t++)
            x[t] = (ww_tree){(size_t)s, parent, labels + t * (size_t)s};
        const char *all = "1000000000000";
        const double block = run(ctx, "0", "0", all, x, k, &x[k], c);
        const double warp = run(ctx, "0", all, all, x, k, &x[k], b);
        const double multi = run(ctx, "0", "0", "0", x, k, &x[k], m);
        const double thread = s <= 512 ? run(ctx, all, all, all, x, k, &x[k], a) : INFINITY;
        for (size_t t = 0; t < k; t++)
            if ((s <= 512 && a[t] != c[t]) || b[t] != c[t] || m[t] != c[t]) {
                fprintf(stderr, "strategies differ at s = %d, pair %zu: %g, %g, %g, %g\n", s, t, a[t], b[t], c[t], m[t]);
                return 1;
            }
        const char *fastest = thread <= warp && thread <= block && thread <= multi ? "thread"
                              : warp <= block && warp <= multi                    ? "warp"
                              : block <= multi                                    ? "block"
                                                                                  : "multi-block";
        char thread_text[32] = "-";
        if (s <= 512)
            snprintf(thread_text, sizeof thread_text, "%.3f", 1e6 * thread / (double)k);
        printf("| %d | %zu | %zu | %s | %.3f | %.3f | %.3f | %s | %s |\n", s, cells, k, thread_text,
               1e6 * warp / (double)k, 1e6 * block / (double)k, 1e6 * multi / (double)k, fastest,
               cells <= BUILTIN_THREAD_CELLS  ? "thread"
               : cells <= BUILTIN_WARP_CELLS  ? "warp"
               : cells <= (k == 1 ? BUILTIN_PAIR_BLOCK_CELLS : BUILTIN_BLOCK_CELLS) ? "block"
                                              : "multi-block");
        free(parent), free(labels), free(x), free(a), free(b), free(c), free(m);
    }
    unsetenv("WW_TED_THREAD_CELLS");
    unsetenv("WW_TED_WARP_CELLS");
    unsetenv("WW_TED_BLOCK_CELLS");
    ww_ctx_destroy(ctx);
    return 0;
}
