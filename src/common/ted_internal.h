/* Tree edit distance: what the API layer (src/common/ted.c) and the CPU engine (src/cpu/ted.c)
 * share. Not installed. */
#ifndef WW_TED_INTERNAL_H
#define WW_TED_INTERNAL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tree as the Zhang-Shasha engine reads it: nodes renumbered in postorder of one orientation
 * (left to right, or mirrored: children right to left, which lets the engine pick the cheaper of
 * the left and right decompositions; mirroring both trees keeps their distance). Arrays of n
 * entries, indexed by postorder number. */
typedef struct ww_ted_prepared {
    int32_t n;
    const int32_t *label;     /* label of each node */
    const int32_t *leftmost;  /* its leftmost leaf (postorder) */
    const int32_t *preorder;  /* its number in the caller's tree */
    const int32_t *keyroots;  /* keyroot_count keyroots, ascending */
    const int32_t *level;     /* per keyroot: 0 without keyroots below it, else 1 + their largest */
    int32_t keyroot_count;
    double cost;              /* sum of the keyroots' subtree sizes: the work factor of the tree */
} ww_ted_prepared;

/* int32 entries of storage that ww_ted_prepare needs for a tree of n nodes. */
size_t ww_ted_prepared_ints(size_t n);
/* Prepares a checked tree in the given orientation. */
void ww_ted_prepare(const ww_tree *t, int mirrored, int32_t *storage, ww_ted_prepared *out);

/* Doubles of the tables of one pair: td (na x nb) and one forest-distance table ((na+1) x (nb+1)). */
size_t ww_ted_table_doubles(size_t na, size_t nb);

/* One pair on the CPU (trees checked, params valid, memory limit checked). threads: how many of
 * the context's threads may share this pair. */
ww_status ww_cpu_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, int threads,
                     double *out);
/* The distance and an optimal mapping (edits: na + nb entries). */
ww_status ww_cpu_ted_mapping(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                             ww_ted_edit *edits, size_t *count, double *distance);
/* A block of the matrix (opt complete: block resolved, stride set). threads: at most this many. */
ww_status ww_cpu_ted_pairwise(ww_ctx *ctx, const ww_tree *x, size_t nx, const ww_tree *y, size_t ny,
                              const ww_ted_params *p, void *out, const ww_pairwise_options *o, int threads);

/* The GPU engine (src/cuda/ted.cu; src/cuda/ted_stub.c without CUDA): keyroot tables by dependency
 * depth, each table by one thread, one warp, one block or many warps of several blocks according
 * to its cells. Trees checked, params valid; a matrix in batches of pairs computed together. */
typedef struct ww_ted_gpu_thresholds {
    size_t thread_cells; /* tables of at most this many cells: one thread each */
    size_t warp_cells;   /* ... at most this many: one warp each */
    size_t block_cells;  /* ... at most this many: one block each; larger: tiles over many warps */
} ww_ted_gpu_thresholds;
ww_status ww_cuda_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                      const ww_ted_gpu_thresholds *limits, double *out);
ww_status ww_cuda_ted_pairwise(ww_ctx *ctx, const ww_tree *x, const ww_tree *y, const ww_ted_params *p,
                               const ww_ted_gpu_thresholds *limits, void *out, const ww_pairwise_options *o);

#ifdef __cplusplus
}
#endif
#endif
