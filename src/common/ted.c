/* Tree edit distance: the API layer. Every check a user can fail (pointers, costs, trees, block,
 * memory) comes before any engine runs; the policy (which backend, how many threads share one
 * pair within the memory limit) is here, the keyroot tables are src/cpu/ted.c's. */
#include "settings.h"
#include "ted_internal.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

ww_ted_params ww_ted_params_default(void)
{
    ww_ted_params p = {1.0, 1.0, 1.0};
    return p;
}

static int cost_ok(double c) { return isfinite(c) && c >= 0; }

ww_status ww_ted_params_check(const ww_ted_params *p)
{
    if (p == NULL)
        return WW_ERR_NULL_POINTER;
    return cost_ok(p->delete_cost) && cost_ok(p->insert_cost) && cost_ok(p->relabel_cost) ? WW_OK : WW_ERR_PARAM;
}

ww_status ww_tree_check(const ww_tree *t)
{
    if (t == NULL)
        return WW_ERR_NULL_POINTER;
    if (t->count == 0)
        return WW_OK;
    if (t->parent == NULL)
        return WW_ERR_NULL_POINTER;
    if (t->count > (size_t)INT32_MAX / 2 || t->parent[0] != -1)
        return WW_ERR_TREE;
    /* preorder: the parent of i is i - 1 or one of its ancestors. The walk up from i - 1 passes
     * nodes that leave the rightmost path for good, so it is linear over the whole tree. */
    for (size_t i = 1; i < t->count; i++) {
        const int32_t p = t->parent[i];
        if (p < 0 || (size_t)p >= i)
            return WW_ERR_TREE;
        int32_t v = (int32_t)i - 1;
        while (v > p)
            v = t->parent[v];
        if (v != p)
            return WW_ERR_TREE;
    }
    return WW_OK;
}

/* ---------------------------------------------------------------- memory */

static size_t memory_limit_set; /* 0: the default */

size_t ww_ted_memory_limit(void)
{
    if (memory_limit_set)
        return memory_limit_set;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0)
        return (size_t)1 << 32; /* unknown: 4 GiB */
    const double bytes = (double)pages * (double)page * 0.75;
    return bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

void ww_ted_set_memory_limit(size_t bytes) { memory_limit_set = bytes; }

/* The forest table alone (one per thread sharing a pair). */
static size_t forest_bytes(size_t na, size_t nb)
{
    size_t cells;
    if (!ww_mul_size(na + 1, nb + 1, &cells) || !ww_mul_size(cells, sizeof(double), &cells))
        return SIZE_MAX;
    return cells;
}

size_t ww_ted_pair_bytes(size_t count_a, size_t count_b)
{
    if (count_a > (size_t)INT32_MAX || count_b > (size_t)INT32_MAX)
        return SIZE_MAX;
    const size_t doubles = ww_ted_table_doubles(count_a, count_b);
    size_t bytes;
    if (doubles == 0 || !ww_mul_size(doubles, sizeof(double), &bytes))
        return SIZE_MAX;
    /* prepared trees, both orientations, and their temporaries */
    const size_t ints = 20 * (count_a + count_b) + 64;
    return bytes > SIZE_MAX - ints * sizeof(int32_t) ? SIZE_MAX : bytes + ints * sizeof(int32_t);
}

/* Threads that may share (or, many = 1, each run) pairs of these sizes within the limit: 0 when
 * not even one fits. */
static int threads_within_limit(const ww_ctx *ctx, size_t na, size_t nb, int many)
{
    const size_t limit = ww_ted_memory_limit(), one = ww_ted_pair_bytes(na, nb);
    if (one == SIZE_MAX || one > limit)
        return 0;
    const size_t extra = many ? one : forest_bytes(na, nb); /* per further thread */
    int threads = 1;
    size_t used = one;
    while (threads < ctx->num_threads && extra <= limit - used) {
        used += extra;
        threads++;
    }
    return threads;
}

/* The GPU engine's thresholds between its strategies: tables of at most ted_thread_cells cells go
 * one per thread, up to ted_warp_cells one per warp, up to the block limit one per block, larger
 * ones in tiles of 32 x 32 cells over many warps of several blocks (X-TED's multi-block strategy).
 * A thread computes a table of r x c cells in r c steps, a warp or a block in r + c anti-diagonals
 * with a sync each, the tiles in about (r + c) / 32 tiles of 63 warp steps along the critical path
 * (the table's bands of 32 rows in a pipeline), with more work in flight. They are variables of the
 * GPU's cost model (ww_cuda_model: built-in values measured on an H100 and an H200, or the ones
 * `wavewarp calibrate` measured on this GPU):
 * - many tables at once (a depth of a matrix): the crossovers of each strategy's time per table
 *   across table sizes (bench/results/gpu-ted.md: the warp fastest up to 65 x 65 cells, tiles from
 *   there; the 1000-node matrix took 39 ms with tiles from 66 x 66 on, 76-81 ms without);
 * - one pair (a table's latency at its deep depths): tables on one block up to
 *   ted_pair_block_cells, from the pairs' times (the 1000-node pair: 5.93 ms with blocks up to 1025
 *   x 1025, 6.25 ms with tiles from 514 x 514 on, although one 1025 x 1025 table alone is faster in
 *   tiles), not calibrated.
 * WW_TED_THREAD_CELLS, WW_TED_WARP_CELLS and WW_TED_BLOCK_CELLS in the environment (settings.h)
 * override them, for one pair and collections alike (tests force each strategy so: 0 0 0 is every
 * table in tiles; 0 0 1000000000000 every table on a block); a value that is not a whole number is
 * ignored. */
static size_t setting_cells(ww_setting setting, size_t fallback)
{
    const char *value = ww_setting_value(setting);
    if (value == NULL)
        return fallback;
    char *end = NULL;
    const unsigned long long v = strtoull(value, &end, 10);
    return *end == '\0' && value[0] >= '0' && value[0] <= '9' ? (size_t)v : fallback;
}

/* one_pair: the call computes one pair (its tables' latency matters), else a collection */
static ww_ted_gpu_thresholds gpu_thresholds(const ww_ctx *ctx, int one_pair)
{
    const ww_cuda_model m = ww_cuda_context_model(ctx);
    ww_ted_gpu_thresholds t = {
        setting_cells(WW_SETTING_TED_THREAD_CELLS, (size_t)m.ted_thread_cells),
        setting_cells(WW_SETTING_TED_WARP_CELLS, (size_t)m.ted_warp_cells),
        setting_cells(WW_SETTING_TED_BLOCK_CELLS,
                      (size_t)(one_pair ? m.ted_pair_block_cells : m.ted_block_cells))};
    return t;
}

/* Where trees are computed: the GPU engine only for a context that asked for CUDA; backend AUTO
 * computes on the CPU (until the GPU engine's figures on an H100/H200 say where it is faster). */
static ww_backend route(ww_ctx *ctx)
{
    ctx->last_backend = ctx->requested == WW_BACKEND_CUDA && ctx->cuda ? WW_BACKEND_CUDA : WW_BACKEND_CPU;
    return ctx->last_backend;
}

static ww_status check_pair(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, const void *out,
                            ww_ted_params *params)
{
    if (ctx == NULL || a == NULL || b == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    *params = p ? *p : ww_ted_params_default();
    ww_status st = ww_ted_params_check(params);
    if (st == WW_OK)
        st = ww_tree_check(a);
    if (st == WW_OK)
        st = ww_tree_check(b);
    return st;
}

ww_status ww_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, double *out)
{
    ww_ted_params params;
    ww_status st = check_pair(ctx, a, b, p, out, &params);
    if (st != WW_OK)
        return st;
    const int threads = threads_within_limit(ctx, a->count, b->count, 0);
    if (threads == 0)
        return WW_ERR_TREE_SIZE;
    if (route(ctx) == WW_BACKEND_CUDA) {
        const ww_ted_gpu_thresholds limits = gpu_thresholds(ctx, 1);
        return ww_cuda_ted(ctx, a, b, &params, &limits, out);
    }
    return ww_cpu_ted(ctx, a, b, &params, threads, out);
}

ww_status ww_ted_mapping(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                         ww_ted_edit *edits, size_t *count, double *distance)
{
    ww_ted_params params;
    if (count == NULL || distance == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = check_pair(ctx, a, b, p, edits, &params);
    if (st != WW_OK)
        return st;
    if (threads_within_limit(ctx, a->count, b->count, 0) == 0)
        return WW_ERR_TREE_SIZE;
    ctx->last_backend = WW_BACKEND_CPU; /* the mapping is the CPU's whatever the context */
    return ww_cpu_ted_mapping(ctx, a, b, &params, edits, count, distance);
}

static size_t largest(const ww_tree *t, size_t begin, size_t end)
{
    size_t m = 0;
    for (size_t i = begin; i < end; i++)
        if (t[i].count > m)
            m = t[i].count;
    return m;
}

ww_status ww_ted_pairwise(ww_ctx *ctx, const ww_tree *x, size_t nx, const ww_tree *y, size_t ny,
                          const ww_ted_params *p, double *out, const ww_pairwise_options *opt)
{
    if (ctx == NULL || out == NULL || (x == NULL && nx > 0))
        return WW_ERR_NULL_POINTER;
    ww_ted_params params = p ? *p : ww_ted_params_default();
    ww_status st = ww_ted_params_check(&params);
    if (st != WW_OK)
        return st;
    if (nx == 0 || (y != NULL && ny == 0))
        return WW_ERR_EMPTY;
    for (size_t i = 0; i < nx && st == WW_OK; i++)
        st = ww_tree_check(&x[i]);
    for (size_t j = 0; y && j < ny && st == WW_OK; j++)
        st = ww_tree_check(&y[j]);
    if (st != WW_OK)
        return st;
    /* the block, as for series (ww_resolve_pairwise) */
    ww_pairwise_options o = opt ? *opt : ww_pairwise_options_default();
    const size_t rows = nx, cols = y ? ny : nx;
    if (o.row_end == 0)
        o.row_end = rows;
    if (o.col_end == 0)
        o.col_end = cols;
    if (o.row_begin >= o.row_end || o.row_end > rows || o.col_begin >= o.col_end || o.col_end > cols)
        return WW_ERR_SHAPE;
    const size_t width = o.col_end - o.col_begin;
    if (o.out_stride == 0)
        o.out_stride = width;
    if (o.out_stride < width)
        return WW_ERR_SHAPE;
    if (o.out_dtype != WW_F64 && o.out_dtype != WW_F32)
        return WW_ERR_DTYPE;
    size_t cells;
    if (!ww_mul_size(o.row_end - o.row_begin, o.out_stride, &cells) || !ww_mul_size(cells, sizeof(double), &cells))
        return WW_ERR_OVERFLOW;
    const ww_tree *c = y ? y : x;
    /* a 1 x 1 block is one pair over the threads (src/cpu/ted.c): a forest table per further thread */
    const int one_pair = o.row_end - o.row_begin == 1 && width == 1;
    const int threads =
        threads_within_limit(ctx, largest(x, o.row_begin, o.row_end), largest(c, o.col_begin, o.col_end), !one_pair);
    if (threads == 0)
        return WW_ERR_TREE_SIZE;
    if (route(ctx) == WW_BACKEND_CUDA) {
        const ww_ted_gpu_thresholds limits = gpu_thresholds(ctx, one_pair);
        return ww_cuda_ted_pairwise(ctx, x, y, &params, &limits, out, &o);
    }
    return ww_cpu_ted_pairwise(ctx, x, nx, y, ny, &params, out, &o, threads);
}
