/* Tree edit distance on the GPU, first engine (issue 13): X-TED's schedule of keyroot tables by
 * dependency depth with three of its strategies, for a batch of pairs at once. The keyroot pairs
 * of one depth (level(k1) + level(k2)) write disjoint entries of their pair's td and read only
 * shallower ones, so the launches of one depth compute all of them, for every pair of the batch
 * together: tables of at most `thread_cells` cells one per thread (row by row, as the CPU), up to
 * `warp_cells` one per warp, larger ones one per block; warps and blocks sweep their table's
 * anti-diagonals (cell (x, y) reads (x-1, y), (x, y-1), (x-1, y-1) and (l(i) - l1, l(j) - l2), all
 * on earlier anti-diagonals). Each thread, warp or block takes tables in a grid-stride loop with
 * its own forest table in global memory. The cells are ww_ted_cell, as on the CPU, so results are
 * bit-identical. The paper's multi-block strategy is not here yet. */
#include "../common/ted_internal.h"
#include "../measures/ted.h"
#include "cuda_common.cuh"

#include <stdlib.h>
#include <string.h>

#include <vector>

namespace {

const int TABLE_THREADS = 128;               /* threads per block of the thread and warp strategies */
const int BLOCK_THREADS = 512; /* threads of a block-strategy table: an anti-diagonal of a 1000-node
                                * pair's root table in two steps, one block synchronisation each */
const size_t SLOT_BYTES_BUDGET = 256u << 20; /* forest tables of the threads or blocks of one launch */
const size_t BATCH_TD_BYTES = 1u << 30;      /* tree distances of the pairs of one batch */
const size_t BATCH_TABLES = 1u << 26;        /* keyroot tables of one batch */

/* A pair of the batch: where its trees' arrays and its td start. */
struct pair_meta {
    int a, b;     /* offsets of A's and B's nodes in the label and leftmost arrays */
    int nb;       /* B's nodes: the width of td */
    size_t td;    /* offset of its td (na x nb doubles) */
};

/* One table: (pair, k1, k2). */
struct table_task {
    int pair, k1, k2;
};

struct batch_view {
    const int32_t *label, *leftmost;
    const pair_meta *meta;
    double *td;
};

/* One table of a task, as its kernels read it. */
struct table {
    const int32_t *a_label, *a_left, *b_label, *b_left;
    double *td;
    int nb, l1, l2, rows, cols;
    size_t w; /* the forest table's row length: cols + 1 */
};

__device__ __forceinline__ table table_of(const batch_view &v, const table_task &task)
{
    const pair_meta m = v.meta[task.pair];
    table t;
    t.a_label = v.label + m.a;
    t.a_left = v.leftmost + m.a;
    t.b_label = v.label + m.b;
    t.b_left = v.leftmost + m.b;
    t.td = v.td + m.td;
    t.nb = m.nb;
    t.l1 = t.a_left[task.k1];
    t.l2 = t.b_left[task.k2];
    t.rows = task.k1 - t.l1 + 1;
    t.cols = task.k2 - t.l2 + 1;
    t.w = (size_t)t.cols + 1;
    return t;
}

/* The borders of a forest table (one thread), summed in the CPU's order. */
__device__ __forceinline__ void table_borders(const table &t, double *fd, double del, double ins)
{
    fd[0] = 0;
    for (int y = 1; y <= t.cols; y++)
        fd[y] = fd[y - 1] + ins;
    for (int x = 1; x <= t.rows; x++)
        fd[(size_t)x * t.w] = fd[(size_t)(x - 1) * t.w] + del;
}

/* Cell (x, y) of a forest table whose earlier anti-diagonals are done (warp and block sweeps). */
__device__ __forceinline__ void table_cell(const table &t, double *fd, int x, int y, double del, double ins,
                                           double ren)
{
    const int i = t.l1 + x - 1, j = t.l2 + y - 1;
    const int li = t.a_left[i], lj = t.b_left[j];
    const size_t at = (size_t)x * t.w + y;
    const bool trees = li == t.l1 && lj == t.l2;
    const double match = trees ? fd[at - t.w - 1] + ww_ted_relabel(t.a_label[i], t.b_label[j], ren)
                               : fd[(size_t)(li - t.l1) * t.w + (lj - t.l2)] + t.td[(size_t)i * t.nb + j];
    const double val = ww_ted_cell(fd[at - t.w], fd[at - 1], match, del, ins);
    fd[at] = val;
    if (trees)
        t.td[(size_t)i * t.nb + j] = val;
}

/* One table per thread: small tables, row by row (the CPU's order). */
__global__ void keyroot_tables_thread_kernel(batch_view v, const table_task *tasks, int task_count, double *slots,
                                             size_t slot_doubles, double del, double ins, double ren)
{
    const size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    double *fd = slots + t * slot_doubles;
    for (size_t p = t; p < (size_t)task_count; p += stride) {
        const table tb = table_of(v, tasks[p]);
        fd[0] = 0;
        for (int y = 1; y <= tb.cols; y++)
            fd[y] = fd[y - 1] + ins;
        for (int x = 1; x <= tb.rows; x++) {
            const int i = tb.l1 + x - 1, li = tb.a_left[i];
            double *row = fd + (size_t)x * tb.w;
            const double *up = row - tb.w, *sub = fd + (size_t)(li - tb.l1) * tb.w;
            double left = up[0] + del;
            row[0] = left;
            for (int y = 1; y <= tb.cols; y++) {
                const int j = tb.l2 + y - 1, lj = tb.b_left[j];
                const bool trees = li == tb.l1 && lj == tb.l2;
                const double match = trees ? up[y - 1] + ww_ted_relabel(tb.a_label[i], tb.b_label[j], ren)
                                           : sub[lj - tb.l2] + tb.td[(size_t)i * tb.nb + j];
                left = ww_ted_cell(up[y], left, match, del, ins);
                row[y] = left;
                if (trees)
                    tb.td[(size_t)i * tb.nb + j] = left;
            }
        }
    }
}

/* One table per warp: medium tables, by anti-diagonals. (A launch with fewer than 32 threads per
 * block, which the host never makes, would use them as one narrower warp.) */
__global__ void keyroot_tables_warp_kernel(batch_view v, const table_task *tasks, int task_count, double *slots,
                                           size_t slot_doubles, double del, double ins, double ren)
{
    const int lanes = blockDim.x < 32 ? (int)blockDim.x : 32, lane = (int)threadIdx.x % lanes;
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / (size_t)lanes;
    const size_t warps = (size_t)gridDim.x * blockDim.x / (size_t)lanes;
    double *fd = slots + warp * slot_doubles;
    for (size_t p = warp; p < (size_t)task_count; p += warps) {
        const table t = table_of(v, tasks[p]);
        if (lane == 0)
            table_borders(t, fd, del, ins);
        __syncwarp();
        for (int s = 2; s <= t.rows + t.cols; s++) {
            const int x_lo = s - t.cols > 1 ? s - t.cols : 1, x_hi = s - 1 < t.rows ? s - 1 : t.rows;
            for (int x = x_lo + lane; x <= x_hi; x += lanes)
                table_cell(t, fd, x, s - x, del, ins, ren);
            __syncwarp();
        }
    }
}

/* One table per block: larger tables, by anti-diagonals. */
__global__ void keyroot_tables_kernel(batch_view v, const table_task *tasks, int task_count, double *slots,
                                      size_t slot_doubles, double del, double ins, double ren)
{
    double *fd = slots + (size_t)blockIdx.x * slot_doubles;
    for (int p = blockIdx.x; p < task_count; p += gridDim.x) {
        const table t = table_of(v, tasks[p]);
        if (threadIdx.x == 0)
            table_borders(t, fd, del, ins);
        __syncthreads();
        for (int s = 2; s <= t.rows + t.cols; s++) {
            const int x_lo = s - t.cols > 1 ? s - t.cols : 1, x_hi = s - 1 < t.rows ? s - 1 : t.rows;
            for (int x = x_lo + (int)threadIdx.x; x <= x_hi; x += blockDim.x)
                table_cell(t, fd, x, s - x, del, ins, ren);
            __syncthreads();
        }
    }
}

double sum_of(size_t n, double cost) /* as the CPU sums an empty side */
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += cost;
    return s;
}

/* A batch being built on the host: the chosen orientation of each pair's trees, its keyroots. */
struct batch {
    std::vector<int32_t> label, leftmost;
    std::vector<pair_meta> meta;
    std::vector<std::vector<int32_t>> keyroots_a, keyroots_b, levels_a, levels_b;
    std::vector<int32_t> sizes_a; /* per pair: na (for the result's td entry) */
    size_t td_doubles = 0, tables = 0;
    std::vector<int32_t> scratch;

    void clear()
    {
        label.clear(), leftmost.clear(), meta.clear(), keyroots_a.clear(), keyroots_b.clear();
        levels_a.clear(), levels_b.clear(), sizes_a.clear();
        td_doubles = tables = 0;
    }

    /* Adds a pair of non-empty checked trees in its cheaper orientation. */
    void add(const ww_tree *a, const ww_tree *b)
    {
        const size_t na = a->count, nb = b->count, big = na > nb ? na : nb;
        const size_t ints_a = ww_ted_prepared_ints(na) + 4 * big, ints_b = ww_ted_prepared_ints(nb) + 4 * big;
        scratch.resize(2 * ints_a + 2 * ints_b);
        int32_t *host = scratch.data();
        ww_ted_prepared al, ar, bl, br;
        ww_ted_prepare(a, 0, host, &al);
        ww_ted_prepare(a, 1, host + ints_a, &ar);
        ww_ted_prepare(b, 0, host + 2 * ints_a, &bl);
        ww_ted_prepare(b, 1, host + 2 * ints_a + ints_b, &br);
        const bool right = ar.cost * br.cost < al.cost * bl.cost;
        const ww_ted_prepared &A = right ? ar : al, &B = right ? br : bl;
        pair_meta m;
        m.a = (int)label.size();
        label.insert(label.end(), A.label, A.label + na);
        leftmost.insert(leftmost.end(), A.leftmost, A.leftmost + na);
        m.b = (int)label.size();
        label.insert(label.end(), B.label, B.label + nb);
        leftmost.insert(leftmost.end(), B.leftmost, B.leftmost + nb);
        m.nb = (int)nb;
        m.td = td_doubles;
        td_doubles += na * nb;
        tables += (size_t)A.keyroot_count * (size_t)B.keyroot_count;
        meta.push_back(m);
        sizes_a.push_back((int32_t)na);
        keyroots_a.emplace_back(A.keyroots, A.keyroots + A.keyroot_count);
        levels_a.emplace_back(A.level, A.level + A.keyroot_count);
        keyroots_b.emplace_back(B.keyroots, B.keyroots + B.keyroot_count);
        levels_b.emplace_back(B.level, B.level + B.keyroot_count);
    }
};

/* Computes every pair of the batch; out[k]: the distance of pair k. */
ww_status run_batch(ww_cuda_state *s, const batch &bt, const ww_ted_params *p, const ww_ted_gpu_thresholds *limits,
                    double *out)
{
    const size_t pairs = bt.meta.size();
    if (pairs == 0)
        return WW_OK;
    if (bt.label.size() > (size_t)INT32_MAX || bt.tables > (size_t)INT32_MAX)
        return WW_ERR_TREE_SIZE;
    /* every table of the batch by key = 3 depth + strategy (0 thread, 1 warp, 2 block): a counting sort */
    int depths = 1;
    for (size_t k = 0; k < pairs; k++) {
        int la = 0, lb = 0;
        for (int32_t l : bt.levels_a[k])
            la = l + 1 > la ? l + 1 : la;
        for (int32_t l : bt.levels_b[k])
            lb = l + 1 > lb ? l + 1 : lb;
        depths = la + lb - 1 > depths ? la + lb - 1 : depths;
    }
    const int keys = 3 * depths;
    std::vector<size_t> start((size_t)keys + 1, 0), slot((size_t)keys, 0);
    std::vector<table_task> tasks(bt.tables);
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        for (size_t k = 0; k < pairs; k++) {
            const int32_t *left_a = bt.leftmost.data() + bt.meta[k].a, *left_b = bt.leftmost.data() + bt.meta[k].b;
            const std::vector<int32_t> &ka = bt.keyroots_a[k], &kb = bt.keyroots_b[k];
            for (size_t u = 0; u < ka.size(); u++)
                for (size_t v = 0; v < kb.size(); v++) {
                    const int32_t k1 = ka[u], k2 = kb[v];
                    const size_t cells = (size_t)(k1 - left_a[k1] + 2) * (size_t)(k2 - left_b[k2] + 2);
                    const int strategy = cells <= limits->thread_cells ? 0 : cells <= limits->warp_cells ? 1 : 2;
                    const int key = 3 * (bt.levels_a[k][u] + bt.levels_b[k][v]) + strategy;
                    if (pass == 0) {
                        start[(size_t)key + 1]++;
                        slot[(size_t)key] = cells > slot[(size_t)key] ? cells : slot[(size_t)key];
                    } else {
                        tasks[start[(size_t)key]++] = table_task{(int)k, k1, k2};
                    }
                }
        }
        if (pass == 0)
            for (int k = 0; k < keys; k++)
                start[(size_t)k + 1] += start[(size_t)k];
    }
    for (int k = keys; k > 0; k--) /* the fill moved every start to the next key's */
        start[(size_t)k] = start[(size_t)k - 1];
    start[0] = 0;
    /* the forest tables of one launch: the budget, or the largest table when it is larger; each
     * launch runs as many blocks (threads) as the GPU holds and the budget fits at its table size */
    size_t slot_doubles = 0;
    for (size_t x : slot)
        slot_doubles = x > slot_doubles ? x : slot_doubles;
    size_t slot_total = SLOT_BYTES_BUDGET / sizeof(double);
    slot_total = slot_total > slot_doubles ? slot_total : slot_doubles;
    const size_t max_blocks = (size_t)s->sm_count * 16, max_threads = (size_t)s->sm_count * 2048;

    /* device memory: two of the context's grow-only buffers, kept for the next call, whose
     * contents no other engine expects to find again (`work` is left alone: the wavefront engine
     * keeps hand-over records there): td and the forest tables in `prepared`; trees, tasks and
     * pairs in `input` */
    auto aligned = [](size_t bytes) { return (bytes + 255) & ~(size_t)255; };
    const size_t td_bytes = aligned(bt.td_doubles * sizeof(double));
    const size_t ints_bytes = aligned(2 * bt.label.size() * sizeof(int32_t));
    const size_t tasks_bytes = aligned(tasks.size() * sizeof(table_task));
    ww_status st = ww_device_reserve(&s->prepared, td_bytes + slot_total * sizeof(double));
    if (st == WW_OK)
        st = ww_device_reserve(&s->input, ints_bytes + tasks_bytes + pairs * sizeof(pair_meta));
    if (st != WW_OK)
        return st;
    char *input = (char *)s->input.ptr;
    int32_t *dints = (int32_t *)input;
    table_task *dtasks = (table_task *)(input + ints_bytes);
    pair_meta *dmeta = (pair_meta *)(input + ints_bytes + tasks_bytes);
    double *slots = (double *)((char *)s->prepared.ptr + td_bytes);
    batch_view view;
    view.td = (double *)s->prepared.ptr;
    view.label = dints;
    view.leftmost = dints + bt.label.size();
    view.meta = dmeta;
    cudaError_t e = cudaMemcpyAsync(dints, bt.label.data(), bt.label.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                                    s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dints + bt.label.size(), bt.leftmost.data(), bt.leftmost.size() * sizeof(int32_t),
                            cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dtasks, tasks.data(), tasks.size() * sizeof(table_task), cudaMemcpyHostToDevice, s->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dmeta, bt.meta.data(), pairs * sizeof(pair_meta), cudaMemcpyHostToDevice, s->stream);
    for (int key = 0; key < keys && e == cudaSuccess; key++) {
        const size_t count = start[(size_t)key + 1] - start[(size_t)key];
        if (count == 0)
            continue;
        const size_t fit = slot_total / slot[(size_t)key];
        const table_task *at = dtasks + start[(size_t)key];
        if (key % 3 == 0) { /* one table per thread */
            size_t threads = fit < max_threads ? fit : max_threads;
            threads = threads < count ? threads : count;
            /* whole blocks, never more threads than slots */
            const size_t per_block = threads < (size_t)TABLE_THREADS ? threads : (size_t)TABLE_THREADS;
            const size_t grid = threads / per_block;
            keyroot_tables_thread_kernel<<<(unsigned)grid, (unsigned)per_block, 0, s->stream>>>(
                view, at, (int)count, slots, slot[(size_t)key], p->delete_cost, p->insert_cost, p->relabel_cost);
        } else if (key % 3 == 1) { /* one table per warp */
            size_t warps = fit < max_threads / 32 ? fit : max_threads / 32;
            warps = warps < count ? warps : count;
            const size_t per_block = warps < (size_t)TABLE_THREADS / 32 ? warps : (size_t)TABLE_THREADS / 32;
            const size_t grid = warps / per_block;
            keyroot_tables_warp_kernel<<<(unsigned)grid, (unsigned)(32 * per_block), 0, s->stream>>>(
                view, at, (int)count, slots, slot[(size_t)key], p->delete_cost, p->insert_cost, p->relabel_cost);
        } else { /* one table per block */
            size_t grid = fit < max_blocks ? fit : max_blocks;
            grid = grid < count ? grid : count;
            keyroot_tables_kernel<<<(unsigned)grid, BLOCK_THREADS, 0, s->stream>>>(
                view, at, (int)count, slots, slot[(size_t)key], p->delete_cost, p->insert_cost, p->relabel_cost);
        }
        e = cudaGetLastError();
    }
    /* each pair's result: the entry of its roots, the last of its td */
    for (size_t k = 0; k < pairs && e == cudaSuccess; k++)
        e = cudaMemcpyAsync(&out[k], view.td + bt.meta[k].td + (size_t)bt.sizes_a[k] * (size_t)bt.meta[k].nb - 1,
                            sizeof(double), cudaMemcpyDeviceToHost, s->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s->stream);
    return ww_cuda_status(e);
}

} // namespace

ww_status ww_cuda_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                      const ww_ted_gpu_thresholds *limits, double *out)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    if (a->count == 0 || b->count == 0) {
        *out = a->count == 0 ? sum_of(b->count, p->insert_cost) : sum_of(a->count, p->delete_cost);
        return WW_OK;
    }
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st;
    try {
        batch bt;
        bt.add(a, b);
        st = run_batch(s, bt, p, limits, out);
    } catch (...) { /* std::bad_alloc of the host vectors */
        st = WW_ERR_MEMORY;
    }
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}

ww_status ww_cuda_ted_pairwise(ww_ctx *ctx, const ww_tree *x, const ww_tree *y, const ww_ted_params *p,
                               const ww_ted_gpu_thresholds *limits, void *out, const ww_pairwise_options *o)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    const int self = y == NULL;
    const ww_tree *cols = self ? x : y;
    const int mirror = self && p->delete_cost == p->insert_cost;
    /* the entries to compute, in row-major order; a mirrored one is copied afterwards */
    auto computed = [&](size_t i, size_t j) {
        if (self && i == j)
            return false;
        const bool mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
        return !(mirror && mirror_in_block && j < i);
    };
    auto store = [&](size_t i, size_t j, double d) {
        const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
        if (o->out_dtype == WW_F32)
            ((float *)out)[at] = (float)d;
        else
            ((double *)out)[at] = d;
    };
    uint64_t total = 0, done = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++)
            if (computed(i, j))
                total += (uint64_t)(x[i].count * cols[j].count > 0 ? x[i].count * cols[j].count : 1);
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = WW_OK;
    try {
        /* batches of pairs within the td and table budgets, computed together */
        batch bt;
        std::vector<size_t> rows_of, cols_of;
        std::vector<double> results;
        auto flush = [&]() {
            results.resize(bt.meta.size());
            ww_status r = run_batch(s, bt, p, limits, results.data());
            if (r != WW_OK)
                return r;
            for (size_t k = 0; k < results.size(); k++) {
                store(rows_of[k], cols_of[k], results[k]);
                done += (uint64_t)x[rows_of[k]].count * cols[cols_of[k]].count;
            }
            bt.clear();
            rows_of.clear();
            cols_of.clear();
            if (o->progress && o->progress(done, total, o->progress_user))
                return WW_ERR_CANCELLED;
            return WW_OK;
        };
        for (size_t i = o->row_begin; i < o->row_end && st == WW_OK; i++)
            for (size_t j = o->col_begin; j < o->col_end && st == WW_OK; j++) {
                if (!computed(i, j))
                    continue;
                const ww_tree *a = &x[i], *b = &cols[j];
                if (a->count == 0 || b->count == 0) {
                    store(i, j, a->count == 0 ? sum_of(b->count, p->insert_cost) : sum_of(a->count, p->delete_cost));
                    done++;
                    continue;
                }
                const size_t td = a->count * b->count;
                if (!bt.meta.empty() && ((bt.td_doubles + td) * sizeof(double) > BATCH_TD_BYTES ||
                                         bt.tables + a->count * b->count > BATCH_TABLES))
                    st = flush();
                if (st != WW_OK)
                    break;
                bt.add(a, b);
                rows_of.push_back(i);
                cols_of.push_back(j);
            }
        if (st == WW_OK)
            st = flush();
    } catch (...) {
        st = WW_ERR_MEMORY;
    }
    if (st == WW_OK && self) { /* mirrored entries and the diagonal */
        for (size_t i = o->row_begin; i < o->row_end; i++)
            for (size_t j = o->col_begin; j < o->col_end; j++)
                if (i == j)
                    store(i, j, 0);
                else if (!computed(i, j))
                    store(i, j,
                          o->out_dtype == WW_F32
                              ? (double)((float *)out)[(j - o->row_begin) * o->out_stride + (i - o->col_begin)]
                              : ((double *)out)[(j - o->row_begin) * o->out_stride + (i - o->col_begin)]);
    }
    if (st == WW_OK && o->progress && o->progress(total, total, o->progress_user))
        st = WW_ERR_CANCELLED;
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}
