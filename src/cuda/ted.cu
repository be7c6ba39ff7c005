/* Tree edit distance on the GPU, first engine (issue 13): X-TED's schedule of keyroot tables by
 * dependency depth with two of its strategies. The keyroot pairs of one depth (level(k1) +
 * level(k2)) write disjoint entries of td and read only shallower ones, so the launches of one
 * depth compute all of them: tables of at most `thread_max_cells` cells one per thread (row by
 * row, as the CPU), larger ones one per block, sweeping their anti-diagonals (cell (x, y) reads
 * (x-1, y), (x, y-1), (x-1, y-1) and (l(i) - l1, l(j) - l2), all on earlier anti-diagonals). Each
 * thread or block takes pairs in a grid-stride loop with its own forest table in global memory.
 * The cells are ww_ted_cell, as on the CPU, so results are bit-identical. The warp and multi-block
 * strategies of the paper, and batching of many pairs per launch, are not here yet. */
#include "../common/ted_internal.h"
#include "../measures/ted.h"
#include "cuda_common.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

const int TABLE_THREADS = 128;           /* threads per block (one table) */
const size_t SLOT_BYTES_BUDGET = 256u << 20; /* forest tables of the blocks of one launch */

struct dev_tree {
    const int32_t *label, *leftmost;
    int32_t n;
};

/* One table per thread: small tables, row by row (the CPU's order). */
__global__ void keyroot_tables_thread_kernel(dev_tree A, dev_tree B, const int2 *pairs, int pair_count, double *td,
                                             double *slots, size_t slot_doubles, double del, double ins, double ren)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    double *fd = slots + t * slot_doubles;
    for (size_t p = t; p < (size_t)pair_count; p += stride) {
        const int k1 = pairs[p].x, k2 = pairs[p].y;
        const int l1 = A.leftmost[k1], l2 = B.leftmost[k2];
        const int rows = k1 - l1 + 1, cols = k2 - l2 + 1;
        const size_t w = (size_t)cols + 1;
        fd[0] = 0;
        for (int y = 1; y <= cols; y++)
            fd[y] = fd[y - 1] + ins;
        for (int x = 1; x <= rows; x++) {
            const int i = l1 + x - 1, li = A.leftmost[i];
            double *row = fd + (size_t)x * w;
            const double *up = row - w, *sub = fd + (size_t)(li - l1) * w;
            double left = up[0] + del;
            row[0] = left;
            for (int y = 1; y <= cols; y++) {
                const int j = l2 + y - 1, lj = B.leftmost[j];
                const bool trees = li == l1 && lj == l2;
                const double match = trees ? up[y - 1] + ww_ted_relabel(A.label[i], B.label[j], ren)
                                           : sub[lj - l2] + td[(size_t)i * B.n + j];
                left = ww_ted_cell(up[y], left, match, del, ins);
                row[y] = left;
                if (trees)
                    td[(size_t)i * B.n + j] = left;
            }
        }
    }
}

/* One table per block: larger tables, by anti-diagonals. */
__global__ void keyroot_tables_kernel(dev_tree A, dev_tree B, const int2 *pairs, int pair_count, double *td,
                                      double *slots, size_t slot_doubles, double del, double ins, double ren)
{
    double *fd = slots + (size_t)blockIdx.x * slot_doubles;
    for (int p = blockIdx.x; p < pair_count; p += gridDim.x) {
        const int k1 = pairs[p].x, k2 = pairs[p].y;
        const int l1 = A.leftmost[k1], l2 = B.leftmost[k2];
        const int rows = k1 - l1 + 1, cols = k2 - l2 + 1;
        const size_t w = (size_t)cols + 1;
        if (threadIdx.x == 0) { /* the borders, summed in the CPU's order */
            fd[0] = 0;
            for (int y = 1; y <= cols; y++)
                fd[y] = fd[y - 1] + ins;
            for (int x = 1; x <= rows; x++)
                fd[x * w] = fd[(x - 1) * w] + del;
        }
        __syncthreads();
        for (int s = 2; s <= rows + cols; s++) {
            const int x_lo = s - cols > 1 ? s - cols : 1, x_hi = s - 1 < rows ? s - 1 : rows;
            for (int x = x_lo + (int)threadIdx.x; x <= x_hi; x += blockDim.x) {
                const int y = s - x, i = l1 + x - 1, j = l2 + y - 1;
                const int li = A.leftmost[i], lj = B.leftmost[j];
                const size_t at = (size_t)x * w + y;
                const bool trees = li == l1 && lj == l2;
                const double match = trees ? fd[at - w - 1] + ww_ted_relabel(A.label[i], B.label[j], ren)
                                           : fd[(size_t)(li - l1) * w + (lj - l2)] + td[(size_t)i * B.n + j];
                const double v = ww_ted_cell(fd[at - w], fd[at - 1], match, del, ins);
                fd[at] = v;
                if (trees)
                    td[(size_t)i * B.n + j] = v;
            }
            __syncthreads();
        }
    }
}

/* Device allocations of one call, freed together. */
struct call_buffers {
    void *ptr[4] = {NULL, NULL, NULL, NULL};
    ~call_buffers()
    {
        for (void *p : ptr)
            if (p)
                cudaFree(p);
    }
};

double sum_of(size_t n, double cost) /* as the CPU sums an empty side */
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += cost;
    return s;
}

/* One pair, on the context's device (entered by the caller). */
ww_status ted_pair(ww_cuda_state *s, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                   size_t thread_max_cells, double *out)
{
    if (a->count == 0 || b->count == 0) {
        *out = a->count == 0 ? sum_of(b->count, p->insert_cost) : sum_of(a->count, p->delete_cost);
        return WW_OK;
    }
    const size_t na = a->count, nb = b->count, big = na > nb ? na : nb;
    /* both trees, both orientations, on the host; the cheaper orientation goes to the GPU */
    const size_t ints_a = ww_ted_prepared_ints(na) + 4 * big, ints_b = ww_ted_prepared_ints(nb) + 4 * big;
    int32_t *host = (int32_t *)malloc((2 * ints_a + 2 * ints_b) * sizeof(int32_t));
    if (host == NULL)
        return WW_ERR_MEMORY;
    ww_ted_prepared al, ar, bl, br;
    ww_ted_prepare(a, 0, host, &al);
    ww_ted_prepare(a, 1, host + ints_a, &ar);
    ww_ted_prepare(b, 0, host + 2 * ints_a, &bl);
    ww_ted_prepare(b, 1, host + 2 * ints_a + ints_b, &br);
    const bool right = ar.cost * br.cost < al.cost * bl.cost;
    const ww_ted_prepared &A = right ? ar : al, &B = right ? br : bl;

    /* keyroot pairs by depth, and in a depth the one-thread tables first: a counting sort on
     * key = 2 depth + (table larger than thread_max_cells) */
    int32_t levels_a = 0, levels_b = 0;
    for (int32_t k = 0; k < A.keyroot_count; k++)
        levels_a = A.level[k] + 1 > levels_a ? A.level[k] + 1 : levels_a;
    for (int32_t k = 0; k < B.keyroot_count; k++)
        levels_b = B.level[k] + 1 > levels_b ? B.level[k] + 1 : levels_b;
    const int keys = 2 * (levels_a + levels_b - 1);
    const size_t pair_count = (size_t)A.keyroot_count * (size_t)B.keyroot_count;
    int2 *pairs = (int2 *)malloc(pair_count * sizeof(int2));
    size_t *start = (size_t *)calloc((size_t)keys + 1, sizeof(size_t));
    size_t *slot = (size_t *)calloc((size_t)keys, sizeof(size_t)); /* largest table of each key */
    if (pairs == NULL || start == NULL || slot == NULL || pair_count > (size_t)INT32_MAX) {
        free(host), free(pairs), free(start), free(slot);
        return pair_count > (size_t)INT32_MAX ? WW_ERR_TREE_SIZE : WW_ERR_MEMORY;
    }
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        for (int32_t u = 0; u < A.keyroot_count; u++)
            for (int32_t v = 0; v < B.keyroot_count; v++) {
                const int32_t k1 = A.keyroots[u], k2 = B.keyroots[v];
                const size_t cells = (size_t)(k1 - A.leftmost[k1] + 2) * (size_t)(k2 - B.leftmost[k2] + 2);
                const int key = 2 * (A.level[u] + B.level[v]) + (cells > thread_max_cells);
                if (pass == 0) {
                    start[key + 1]++;
                    slot[key] = cells > slot[key] ? cells : slot[key];
                } else {
                    pairs[start[key]++] = make_int2(k1, k2);
                }
            }
        if (pass == 0)
            for (int k = 0; k < keys; k++)
                start[k + 1] += start[k];
    }
    for (int k = keys; k > 0; k--) /* the fill moved every start to the next key's */
        start[k] = start[k - 1];
    start[0] = 0;
    /* the forest tables of one launch: the budget, or the largest table when it is larger; each
     * launch runs as many blocks (threads) as the GPU holds and the budget fits at its table size */
    size_t slot_doubles = 0;
    for (int k = 0; k < keys; k++)
        slot_doubles = slot[k] > slot_doubles ? slot[k] : slot_doubles;
    size_t slot_total = SLOT_BYTES_BUDGET / sizeof(double);
    slot_total = slot_total > slot_doubles ? slot_total : slot_doubles;
    const size_t max_blocks = (size_t)s->sm_count * 16, max_threads = (size_t)s->sm_count * 2048;

    call_buffers buf;
    ww_status st = WW_OK;
    const size_t tree_ints = na + nb;
    double *td = NULL, *slots = NULL;
    int32_t *trees = NULL;
    int2 *dpairs = NULL;
    cudaError_t e = cudaMalloc(&buf.ptr[0], na * nb * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc(&buf.ptr[1], slot_total * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc(&buf.ptr[2], 2 * tree_ints * sizeof(int32_t));
    if (e == cudaSuccess)
        e = cudaMalloc(&buf.ptr[3], pair_count * sizeof(int2));
    if (e == cudaSuccess) {
        td = (double *)buf.ptr[0];
        slots = (double *)buf.ptr[1];
        trees = (int32_t *)buf.ptr[2];
        dpairs = (int2 *)buf.ptr[3];
        /* labels and leftmost leaves of A, then of B */
        e = cudaMemcpyAsync(trees, A.label, na * sizeof(int32_t), cudaMemcpyHostToDevice, s->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(trees + na, A.leftmost, na * sizeof(int32_t), cudaMemcpyHostToDevice, s->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(trees + 2 * na, B.label, nb * sizeof(int32_t), cudaMemcpyHostToDevice, s->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(trees + 2 * na + nb, B.leftmost, nb * sizeof(int32_t), cudaMemcpyHostToDevice,
                                s->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(dpairs, pairs, pair_count * sizeof(int2), cudaMemcpyHostToDevice, s->stream);
    }
    const dev_tree dA = {trees, trees + na, (int32_t)na}, dB = {trees + 2 * na, trees + 2 * na + nb, (int32_t)nb};
    for (int key = 0; key < keys && e == cudaSuccess; key++) {
        const size_t count = start[key + 1] - start[key];
        if (count == 0)
            continue;
        const size_t fit = slot_total / slot[key];
        if (key % 2 == 0) { /* one table per thread */
            size_t threads = fit < max_threads ? fit : max_threads;
            threads = threads < count ? threads : count;
            /* whole blocks, never more threads than slots */
            const size_t per_block = threads < (size_t)TABLE_THREADS ? threads : (size_t)TABLE_THREADS;
            const size_t grid = threads / per_block;
            keyroot_tables_thread_kernel<<<(unsigned)grid, (unsigned)per_block, 0, s->stream>>>(
                dA, dB, dpairs + start[key], (int)count, td, slots, slot[key], p->delete_cost, p->insert_cost,
                p->relabel_cost);
        } else { /* one table per block */
            size_t grid = fit < max_blocks ? fit : max_blocks;
            grid = grid < count ? grid : count;
            keyroot_tables_kernel<<<(unsigned)grid, TABLE_THREADS, 0, s->stream>>>(dA, dB, dpairs + start[key],
                                                                                   (int)count, td, slots, slot[key],
                                                                                   p->delete_cost, p->insert_cost,
                                                                                   p->relabel_cost);
        }
        e = cudaGetLastError();
    }
    double result = 0;
    if (e == cudaSuccess) /* the roots' entry: a pageable copy, synchronous with the stream */
        e = cudaMemcpyAsync(&result, td + na * nb - 1, sizeof(double), cudaMemcpyDeviceToHost, s->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->stream);
    st = ww_cuda_status(e);
    if (st == WW_OK)
        *out = result;
    free(host), free(pairs), free(start), free(slot);
    return st;
}

} // namespace

ww_status ww_cuda_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                      size_t thread_max_cells, double *out)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = ted_pair(s, a, b, p, thread_max_cells, out);
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}

ww_status ww_cuda_ted_pairwise(ww_ctx *ctx, const ww_tree *x, const ww_tree *y, const ww_ted_params *p,
                               size_t thread_max_cells, void *out, const ww_pairwise_options *o)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    const int self = y == NULL;
    const ww_tree *cols = self ? x : y;
    const int mirror = self && p->delete_cost == p->insert_cost;
    uint64_t total = 0, done = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++)
            total += (uint64_t)(x[i].count * cols[j].count > 0 ? x[i].count * cols[j].count : 1);
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = WW_OK;
    /* one pair after the other (the batched strategies of the paper are to come) */
    for (size_t i = o->row_begin; i < o->row_end && st == WW_OK; i++)
        for (size_t j = o->col_begin; j < o->col_end && st == WW_OK; j++) {
            double d = 0;
            const bool mirrored = mirror && j < i && j >= o->row_begin && j < o->row_end && i >= o->col_begin &&
                                  i < o->col_end;
            if (self && i == j)
                d = 0;
            else if (mirrored) /* computed as (j, i), earlier in the block */
                d = o->out_dtype == WW_F32 ? ((float *)out)[(j - o->row_begin) * o->out_stride + (i - o->col_begin)]
                                           : ((double *)out)[(j - o->row_begin) * o->out_stride + (i - o->col_begin)];
            else
                st = ted_pair(s, &x[i], &cols[j], p, thread_max_cells, &d);
            if (st != WW_OK)
                break;
            const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
            if (o->out_dtype == WW_F32)
                ((float *)out)[at] = (float)d;
            else
                ((double *)out)[at] = d;
            done += (uint64_t)(x[i].count * cols[j].count > 0 ? x[i].count * cols[j].count : 1);
            if (o->progress && o->progress(done, total, o->progress_user))
                st = WW_ERR_CANCELLED;
        }
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}
