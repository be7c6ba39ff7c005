/* Distance matrices on the GPU (ww_twed_pairwise with the CUDA backend).
 *
 * Strategy by table size, after the X-TED paper: a pair whose series are short is computed by one
 * thread (a row sweep with its row buffers in thread-local memory, thousands of pairs in flight);
 * longer pairs by one warp each (strips of 32 rows swept along anti-diagonals), or, when there are
 * few of them, one after the other by the single-pair wavefront engine, which spreads one table
 * over the whole GPU. choose_strategy() is the cost model; its constants are measured, not yet
 * calibrated at run time, and the block strategy is not written.
 *
 * The matrix is computed in chunks of rows: each chunk's block of the output is computed into
 * device memory and copied to the caller's matrix, so device memory stays bounded whatever the
 * matrix size, and progress/cancellation are reported between chunks.
 *
 * Float inputs are computed in float here (each entry is a short sum), double inputs in double. */
#include "cuda_common.cuh"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define THREAD_MAX_LENGTH 256       /* longest series the one-thread-per-pair kernel takes */
#define THREAD_STRATEGY_MAX 128     /* longest series the cost model gives it (bench/results/gpu-batch.md) */
#define CHUNK_TARGET_CELLS (1ull << 31) /* DP cells per launch: a progress report every ~10 ms */
#define CHUNK_MAX_BYTES ((size_t)128 << 20)  /* output bytes per chunk (two on the device, two pinned) */

/* A dataset on the device in the prepared layout: series i at base[i] (its sentinel sample 0),
 * samples base[i] .. base[i] + length[i], values (dim contiguous), stamps and deletion costs. */
template <typename T> struct device_set {
    const T *values, *stamps, *delete_cost;
    const size_t *base;
    const int *length;
    size_t dim;
};

template <typename Tin, typename T> struct prepare_set_job {
    const Tin *values, *stamps; /* the user's data (device pointers) */
    const size_t *offsets;      /* user offsets (device copy), count + 1 */
    T *out_values, *out_stamps, *out_delete;
    const size_t *base;
    size_t dim;
};

/* One block per series: values and stamps first, then (after a barrier) the deletion costs, which
 * read the previous prepared sample. */
template <typename Tin, typename T>
__global__ void prepare_set_kernel(prepare_set_job<Tin, T> j, T nu, T lambda, int degree, int *flags)
{
    const size_t i = blockIdx.x, dim = j.dim;
    const size_t first = j.offsets[i], n = j.offsets[i + 1] - first, base = j.base[i];
    int bad = 0;
    for (size_t s = threadIdx.x; s <= n; s += blockDim.x) {
        T *dst = j.out_values + (base + s) * dim;
        if (s == 0) {
            for (size_t k = 0; k < dim; k++)
                dst[k] = 0;
            j.out_stamps[base] = 0;
            continue;
        }
        const Tin *src = j.values + (first + s - 1) * dim;
        for (size_t k = 0; k < dim; k++) {
            T v = (T)src[k];
            bad |= !isfinite(v);
            dst[k] = v;
        }
        T t = j.stamps ? (T)j.stamps[first + s - 1] : (T)s;
        if (j.stamps && (!isfinite(t) || (s >= 2 && t < (T)j.stamps[first + s - 2])))
            bad |= WW_FLAG_STAMPS;
        j.out_stamps[base + s] = t;
    }
    if (bad)
        atomicOr(flags, bad);
    __syncthreads();
    for (size_t s = threadIdx.x; s <= n; s += blockDim.x) {
        if (s == 0) {
            j.out_delete[base] = 0;
            continue;
        }
        const T *x = j.out_values + (base + s) * dim;
        j.out_delete[base + s] =
            delete_cost(lp_distance(x, x - dim, dim, degree), j.out_stamps[base + s], j.out_stamps[base + s - 1], nu, lambda);
    }
}

struct block_geometry {
    size_t row_begin, row_end; /* rows of this chunk */
    size_t block_row_begin, block_row_end, col_begin, col_end; /* the caller's whole block */
    size_t width;              /* output row length in the device buffer */
    int self;
};

/* Same rule as the CPU engine: in the self matrix, (i, j) is computed unless it is on the diagonal
 * or its mirror (j, i) lies in the block and will be computed instead. */
__device__ __forceinline__ bool entry_needed(const block_geometry &g, size_t i, size_t j)
{
    if (!g.self)
        return true;
    if (i == j)
        return false;
    bool mirror_in_block = j >= g.block_row_begin && j < g.block_row_end && i >= g.col_begin && i < g.col_end;
    return !(mirror_in_block && j < i);
}

/* One thread per pair. The 32 lanes of a warp take 32 different series of one side ("lane" series)
 * and share one series of the other side ("shared" series): the sweep runs over the lane series'
 * samples (rows, outer loop) and the shared series' samples (columns, inner loop), so every load of
 * the shared series is the same address for the whole warp (one broadcast), and the row buffers in
 * local memory are read with unit stride across lanes. TWED is symmetric, so which side is which
 * does not change the value (bit for bit: the cell takes the same operands in another order).
 *
 * dim 1: four rows per pass over the columns, their left and diagonal neighbours in registers, so
 * the row buffer is read and written once per four rows. dim <= WIDE_DIM_MAX: the lane's sample
 * vector stays in registers, the shared sample vector is broadcast. Larger dims read both from
 * memory. */
#define ROWS_PER_PASS 4
#define WIDE_DIM_MAX 32

struct pair_map {
    int lanes_are_rows; /* lane series from x (rows) and shared series from y, or the reverse */
};

template <typename T, typename Tout, int MODE> /* MODE: 1 = dim 1, 2 = dim <= WIDE_DIM_MAX, 0 = any dim */
__global__ void __launch_bounds__(128) pairs_thread_kernel(device_set<T> x, device_set<T> y, block_geometry g, T nu,
                                                           int degree, pair_map map, Tout *out)
{
    /* lanes (blockIdx.y, threadIdx.x) over one side, blockIdx.x over the other (x allows 2^31 blocks) */
    const size_t lane_i = blockIdx.y * (size_t)blockDim.x + threadIdx.x, shared_i = blockIdx.x;
    const size_t i = map.lanes_are_rows ? g.row_begin + lane_i : g.row_begin + shared_i;
    const size_t j = map.lanes_are_rows ? g.col_begin + shared_i : g.col_begin + lane_i;
    if (i >= g.row_end || j >= g.col_end)
        return;
    Tout *dst = out + (i - g.row_begin) * g.width + (j - g.col_begin);
    if (!entry_needed(g, i, j)) {
        *dst = 0; /* diagonal, or filled from its mirror by the host afterwards */
        return;
    }
    const device_set<T> &ls = map.lanes_are_rows ? x : y, &ss = map.lanes_are_rows ? y : x;
    const size_t li = map.lanes_are_rows ? i : j, si = map.lanes_are_rows ? j : i;
    const size_t dim = x.dim;
    const int na = ls.length[li], nb = ss.length[si];
    const T *av = ls.values + ls.base[li] * dim, *at = ls.stamps + ls.base[li], *adel = ls.delete_cost + ls.base[li];
    const T *bv = ss.values + ss.base[si] * dim, *bt = ss.stamps + ss.base[si], *bdel = ss.delete_cost + ss.base[si];
    const T inf = infinity_of<T>();
    T row_d[THREAD_MAX_LENGTH + 1], row_m[THREAD_MAX_LENGTH + 1];
    row_d[0] = 0;
    row_m[0] = 0;
    for (int c = 1; c <= nb; c++) {
        row_d[c] = inf;
        row_m[c] = 0; /* match_part(0, c > 0) only meets D[0][c-1] = inf */
    }
    if (MODE == 1) {
        for (int r0 = 1; r0 <= na; r0 += ROWS_PER_PASS) {
            /* rows r0 .. r0+3; a row past na repeats the row above, so row_d ends on row na */
            T a[ROWS_PER_PASS], ta[ROWS_PER_PASS], da[ROWS_PER_PASS], left[ROWS_PER_PASS], diag[ROWS_PER_PASS],
                before[ROWS_PER_PASS];
            bool valid[ROWS_PER_PASS];
#pragma unroll
            for (int k = 0; k < ROWS_PER_PASS; k++) {
                valid[k] = r0 + k <= na;
                const int r = valid[k] ? r0 + k : na;
                a[k] = av[r];
                ta[k] = at[r];
                da[k] = adel[r];
                left[k] = inf;                         /* D(r, 0) */
                diag[k] = k == 0 ? row_d[0] : inf;     /* D(r - 1, 0) */
                before[k] = k == 0 ? row_m[0] : (T)0;  /* M(r - 1, 0) */
            }
            row_d[0] = inf;
            row_m[0] = 0;
            for (int c = 1; c <= nb; c++) {
                const T b = bv[c], tb = bt[c], db = bdel[c];
                T up = row_d[c], m_up = row_m[c];
#pragma unroll
                for (int k = 0; k < ROWS_PER_PASS; k++) {
                    const T here = match_part(lp_distance(&a[k], &b, 1, degree), ta[k], tb, nu);
                    T v = twed_cell(up, left[k], diag[k], da[k], db, here, before[k]);
                    const T m = valid[k] ? here : m_up;
                    v = valid[k] ? v : up;
                    diag[k] = up;   /* D(r - 1, c) is the next column's diagonal */
                    before[k] = m_up;
                    left[k] = v;
                    up = v;         /* the row below reads this cell as its up */
                    m_up = m;
                }
                row_d[c] = up;
                row_m[c] = m_up;
            }
        }
    } else {
        T a[MODE == 2 ? WIDE_DIM_MAX : 1];
        for (int r = 1; r <= na; r++) {
            const T ta = at[r], da = adel[r];
            const T *ar = av + (size_t)r * dim;
            if (MODE == 2) {
#pragma unroll
                for (int k = 0; k < WIDE_DIM_MAX; k++)
                    a[k] = k < (int)dim ? ar[k] : (T)0;
            }
            T diag = row_d[0], left = inf, before = row_m[0];
            row_d[0] = inf;
            row_m[0] = 0;
            for (int c = 1; c <= nb; c++) {
                const T up = row_d[c], m_up = row_m[c];
                const T *bc = bv + (size_t)c * dim;
                T dist;
                if (MODE == 2) {
                    /* the same L_p distance as lp_distance(), with the lane's vector in registers;
                     * the degree is dispatched outside the loop over dims, so that pow() is never
                     * evaluated (nor predicated) for p = 1 and p = 2 */
                    /* four partial sums: the dim loop is the bulk of the work and one running
                     * sum would make it one long dependent chain (the order of the additions
                     * differs from the CPU's by rounding only) */
                    T acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
                    if (degree == 2) {
#pragma unroll
                        for (int k = 0; k < WIDE_DIM_MAX; k += 4) {
                            if (k < (int)dim) { const T d = a[k] - bc[k]; acc0 += d * d; }
                            if (k + 1 < (int)dim) { const T d = a[k + 1] - bc[k + 1]; acc1 += d * d; }
                            if (k + 2 < (int)dim) { const T d = a[k + 2] - bc[k + 2]; acc2 += d * d; }
                            if (k + 3 < (int)dim) { const T d = a[k + 3] - bc[k + 3]; acc3 += d * d; }
                        }
                        dist = sqrt((acc0 + acc1) + (acc2 + acc3));
                    } else if (degree == 1) {
#pragma unroll
                        for (int k = 0; k < WIDE_DIM_MAX; k += 4) {
                            if (k < (int)dim) acc0 += fabs(a[k] - bc[k]);
                            if (k + 1 < (int)dim) acc1 += fabs(a[k + 1] - bc[k + 1]);
                            if (k + 2 < (int)dim) acc2 += fabs(a[k + 2] - bc[k + 2]);
                            if (k + 3 < (int)dim) acc3 += fabs(a[k + 3] - bc[k + 3]);
                        }
                        dist = (acc0 + acc1) + (acc2 + acc3);
                    } else {
                        for (int k = 0; k < (int)dim; k++)
                            acc0 += pow(fabs(ar[k] - bc[k]), (T)degree); /* rare: from memory */
                        dist = pow(acc0, (T)1 / (T)degree);
                    }
                } else {
                    dist = lp_distance(ar, bc, dim, degree);
                }
                const T here = match_part(dist, ta, bt[c], nu);
                const T v = twed_cell(up, left, diag, da, bdel[c], here, before);
                row_d[c] = v;
                row_m[c] = here;
                diag = up;
                left = v;
                before = m_up;
            }
        }
    }
    *dst = (Tout)row_d[nb];
}

#define FULL_MASK_PAIRS 0xffffffffu

/* One warp per pair (X-TED's warp strategy), for series too long for one thread. The pair's DP is
 * swept in strips of 32 rows: lane l owns row r0 + l and at step s computes column s - l + 1, so
 * the warp advances along an anti-diagonal; a lane takes the cell above from the lane above by a
 * shuffle, lane 0 from the strip above through a row buffer in global memory (written by lane 31
 * of the previous strip, in the same warp). Rows are the shorter series (fewer strips). Warps
 * loop over the chunk's pairs; each has its own row buffer in `scratch`. */
template <typename T, typename Tout, bool DIM1>
__global__ void __launch_bounds__(128) pairs_warp_kernel(device_set<T> x, device_set<T> y, block_geometry g, T nu,
                                                         int degree, T *scratch, size_t scratch_stride, Tout *out)
{
    const int lane = threadIdx.x & 31;
    const size_t warp_id = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    const size_t nwarps = (gridDim.x * (size_t)blockDim.x) >> 5;
    T *top_d = scratch + warp_id * scratch_stride, *top_m = top_d + scratch_stride / 2;
    const T inf = infinity_of<T>();
    const size_t dim = x.dim, npairs = (g.row_end - g.row_begin) * g.width;
    for (size_t pair = warp_id; pair < npairs; pair += nwarps) {
        const size_t i = g.row_begin + pair / g.width, j = g.col_begin + pair % g.width;
        if (!entry_needed(g, i, j)) {
            if (lane == 0)
                out[pair] = 0; /* diagonal, or filled from its mirror by the host afterwards */
            continue;
        }
        /* rows: the shorter series (TWED is symmetric) */
        const bool x_rows = x.length[i] <= y.length[j];
        const device_set<T> &rs = x_rows ? x : y, &cs = x_rows ? y : x;
        const size_t ri = x_rows ? i : j, ci = x_rows ? j : i;
        const int na = rs.length[ri], nb = cs.length[ci];
        const T *av = rs.values + rs.base[ri] * dim, *at = rs.stamps + rs.base[ri], *adel = rs.delete_cost + rs.base[ri];
        const T *bv = cs.values + cs.base[ci] * dim, *bt = cs.stamps + cs.base[ci], *bdel = cs.delete_cost + cs.base[ci];
        for (int c = lane; c <= nb; c += 32) { /* row 0 */
            top_d[c] = c == 0 ? (T)0 : inf;
            top_m[c] = 0;
        }
        __syncwarp();
        T result = 0;
        for (int r0 = 1; r0 <= na; r0 += 32) {
            const int r = r0 + lane <= na ? r0 + lane : na; /* lanes past na repeat row na, unused */
            const T a = DIM1 ? av[r] : (T)0, ta = at[r], da = adel[r];
            T d1 = inf, m1 = 0;                                   /* D(r, 0), M(r, 0) */
            /* D(r - 1, 0): 0 only above the first row (D[0][0]); column 0 is never in the row buffer */
            T above_prev_d = lane == 0 && r0 == 1 ? (T)0 : inf, above_prev_m = 0;
            for (int s = 0; s < nb + 31; s++) {
                const int c = s - lane + 1;
                const bool active = c >= 1 && c <= nb;
                const int cc = active ? c : (c < 1 ? 1 : nb);
                T above_d = __shfl_up_sync(FULL_MASK_PAIRS, d1, 1), above_m = __shfl_up_sync(FULL_MASK_PAIRS, m1, 1);
                if (lane == 0) {
                    above_d = top_d[cc];
                    above_m = top_m[cc];
                }
                T dist;
                if (DIM1)
                    dist = lp_distance(&a, bv + cc, 1, degree);
                else
                    dist = lp_distance(av + (size_t)r * dim, bv + (size_t)cc * dim, dim, degree);
                const T here = match_part(dist, ta, bt[cc], nu);
                const T v = twed_cell(above_d, d1, above_prev_d, da, bdel[cc], here, above_prev_m);
                if (active) {
                    d1 = v;
                    m1 = here;
                }
                above_prev_d = above_d;
                above_prev_m = above_m;
                if (lane == 31 && active) { /* the strip's last row, for the next strip */
                    top_d[c] = v;
                    top_m[c] = here;
                }
            }
            __syncwarp();
            if (r0 + 31 >= na)
                result = __shfl_sync(FULL_MASK_PAIRS, d1, na - r0);
        }
        if (lane == 0)
            out[pair] = (Tout)result;
        __syncwarp();
    }
}

/* ------------------------------------------------------------------------------------------ */

static size_t esize(ww_dtype t) { return t == WW_F32 ? sizeof(float) : sizeof(double); }

static size_t series_length(const ww_dataset *d, size_t i)
{
    return d->offsets ? d->offsets[i + 1] - d->offsets[i] : d->length;
}

/* Samples of series [begin, end) of a dataset, and of the block's columns. */
static uint64_t block_row_samples(const ww_dataset *d, size_t begin, size_t end)
{
    return d->offsets ? (uint64_t)(d->offsets[end] - d->offsets[begin]) : (uint64_t)(end - begin) * d->length;
}

static uint64_t block_column_samples(const ww_dataset *d, const ww_pairwise_options *o)
{
    return block_row_samples(d, o->col_begin, o->col_end);
}

/* Device copies of one dataset, prepared. Buffers are grow-only members of the state. */
struct set_buffers {
    ww_device_buffer raw, offsets, base, length, prepared;
};

struct pairwise_state {
    set_buffers x, y;
    ww_device_buffer out, warp_scratch;
    cudaEvent_t copied[2]; /* a chunk has reached pinned memory */
};

/* The context owns one pairwise_state; allocated on first use. */
static pairwise_state *state_of(ww_cuda_state *s)
{
    if (s->pairwise == NULL)
        s->pairwise = calloc(1, sizeof(pairwise_state));
    return (pairwise_state *)s->pairwise;
}

void ww_cuda_pairwise_release(ww_cuda_state *s)
{
    pairwise_state *ps = (pairwise_state *)s->pairwise;
    if (ps == NULL)
        return;
    ww_device_buffer *all[] = {&ps->x.raw, &ps->x.offsets, &ps->x.base, &ps->x.length, &ps->x.prepared,
                               &ps->y.raw, &ps->y.offsets, &ps->y.base, &ps->y.length, &ps->y.prepared, &ps->out,
                               &ps->warp_scratch};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k]->ptr)
            cudaFree(all[k]->ptr);
    for (int k = 0; k < 2; k++)
        if (ps->copied[k])
            cudaEventDestroy(ps->copied[k]);
    free(ps);
    s->pairwise = NULL;
}

template <typename T>
static ww_status upload_set(ww_cuda_state *s, const ww_dataset *d, const ww_twed_params *p, set_buffers *b,
                            int *flags, device_set<T> *out, size_t *max_length)
{
    const size_t count = d->count, dim = d->dim, es = esize(d->dtype);
    const size_t samples = d->offsets ? d->offsets[count] : count * d->length;
    size_t *host = (size_t *)malloc((2 * (count + 1)) * sizeof(size_t) + count * sizeof(int));
    if (host == NULL)
        return WW_ERR_MEMORY;
    size_t *offsets = host, *base = host + (count + 1);
    int *length = (int *)(base + (count + 1));
    *max_length = 0;
    for (size_t i = 0; i <= count; i++) {
        offsets[i] = d->offsets ? d->offsets[i] : i * d->length;
        base[i] = offsets[i] + i;
        if (i < count) {
            size_t n = series_length(d, i);
            if (n >= (size_t)INT32_MAX / 2) { /* the kernels index samples with int */
                free(host);
                return WW_ERR_OVERFLOW;
            }
            length[i] = (int)n;
            if (n > *max_length)
                *max_length = n;
        }
    }
    ww_status st = ww_device_reserve(&b->offsets, (count + 1) * sizeof(size_t));
    if (st == WW_OK)
        st = ww_device_reserve(&b->base, (count + 1) * sizeof(size_t));
    if (st == WW_OK)
        st = ww_device_reserve(&b->length, count * sizeof(int));
    if (st == WW_OK)
        st = ww_device_reserve(&b->prepared, (samples + count) * (dim + 2) * sizeof(T));
    const void *values = d->values, *stamps = d->stamps;
    if (st == WW_OK && d->memory == WW_HOST) {
        size_t vbytes = samples * dim * es, tbytes = d->stamps ? samples * es : 0;
        st = ww_device_reserve(&b->raw, vbytes + tbytes + 256);
        if (st == WW_OK) {
            cudaError_t e = cudaMemcpyAsync(b->raw.ptr, d->values, vbytes, cudaMemcpyHostToDevice, s->stream);
            if (e == cudaSuccess && tbytes)
                e = cudaMemcpyAsync((char *)b->raw.ptr + vbytes, d->stamps, tbytes, cudaMemcpyHostToDevice, s->stream);
            st = ww_cuda_status(e);
            values = b->raw.ptr;
            stamps = d->stamps ? (const char *)b->raw.ptr + vbytes : NULL;
        }
    }
    if (st == WW_OK) {
        cudaError_t e = cudaMemcpyAsync(b->offsets.ptr, offsets, (count + 1) * sizeof(size_t), cudaMemcpyHostToDevice,
                                        s->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(b->base.ptr, base, (count + 1) * sizeof(size_t), cudaMemcpyHostToDevice, s->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(b->length.ptr, length, count * sizeof(int), cudaMemcpyHostToDevice, s->stream);
        /* the host arrays must outlive the asynchronous copies */
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(s->stream);
        st = ww_cuda_status(e);
    }
    free(host);
    if (st != WW_OK)
        return st;
    T *prep = (T *)b->prepared.ptr;
    prepare_set_job<T, T> job;
    job.values = (const T *)values;
    job.stamps = (const T *)stamps;
    job.offsets = (const size_t *)b->offsets.ptr;
    job.out_values = prep;
    job.out_stamps = prep + (samples + count) * dim;
    job.out_delete = job.out_stamps + (samples + count);
    job.base = (const size_t *)b->base.ptr;
    job.dim = dim;
    prepare_set_kernel<T, T><<<(unsigned)count, 128, 0, s->stream>>>(job, (T)p->nu, (T)p->lambda, p->degree, flags);
    WW_CUDA_TRY(cudaGetLastError());
    out->values = job.out_values;
    out->stamps = job.out_stamps;
    out->delete_cost = job.out_delete;
    out->base = job.base;
    out->length = (const int *)b->length.ptr;
    out->dim = dim;
    return WW_OK;
}

enum strategy { STRATEGY_THREAD, STRATEGY_WARP, STRATEGY_GRID };

/* X-TED's cost model, reduced to the strategies above the one-thread kernel: the time of the block
 * with one warp per pair (pairs spread over the warps the GPU holds at once) against one pair at a
 * time on the whole GPU. The constants were measured on an H200 (bench/results/gpu-batch.md). */
#define WARP_STEP_SECONDS 1.5e-7 /* one step of a warp: 32 cells of one anti-diagonal */
#define GRID_PAIR_SECONDS 1.2e-4 /* fixed cost of one pair on the whole GPU */
#define GRID_STEP_SECONDS 4.0e-7 /* and per anti-diagonal of it */
#define WARPS_PER_SM 32          /* warps of the warp strategy resident per multiprocessor */
#define WARP_SCRATCH_BYTES ((size_t)512 << 20)

/* Warps of the warp strategy in flight: WARPS_PER_SM per multiprocessor, fewer when their row
 * buffers (two rows of the longest series each) would pass WARP_SCRATCH_BYTES. */
static size_t warp_strategy_warps(int sm_count, size_t longest, size_t elem_size)
{
    const size_t per_warp = 2 * (longest + 1) * elem_size;
    size_t warps = (size_t)sm_count * WARPS_PER_SM;
    if (warps * per_warp > WARP_SCRATCH_BYTES)
        warps = WARP_SCRATCH_BYTES / per_warp > 4 ? WARP_SCRATCH_BYTES / per_warp : 4;
    return warps;
}

static enum strategy choose_strategy(double pairs, size_t max_x, size_t max_y, int sm_count, size_t elem_size)
{
    const size_t longest = max_x > max_y ? max_x : max_y;
    /* WW_MATRIX_STRATEGY=thread|warp|grid forces one, for tests and benchmarks */
    const char *forced = getenv("WW_MATRIX_STRATEGY");
    if (forced && strcmp(forced, "warp") == 0)
        return STRATEGY_WARP;
    if (forced && strcmp(forced, "grid") == 0)
        return STRATEGY_GRID;
    if (forced && strcmp(forced, "thread") == 0 && longest <= THREAD_MAX_LENGTH)
        return STRATEGY_THREAD;
    /* measured: the two are even at 128 samples, the warp twice as fast at 256 */
    if (longest <= THREAD_STRATEGY_MAX)
        return STRATEGY_THREAD;
    const double rows = (double)(max_x < max_y ? max_x : max_y), cols = (double)longest;
    const double warps = (double)warp_strategy_warps(sm_count, longest, elem_size);
    const double t_warp = ceil(pairs / warps) * ceil(rows / 32.0) * (cols + 31.0) * WARP_STEP_SECONDS;
    const double t_grid = pairs * (GRID_PAIR_SECONDS + (rows + cols) * GRID_STEP_SECONDS);
    return t_warp < t_grid ? STRATEGY_WARP : STRATEGY_GRID;
}

template <typename T, typename Tout>
static ww_status run_chunks(ww_cuda_state *s, const device_set<T> &dx, const device_set<T> &dy, int self,
                                   const ww_twed_params *p, void *out, const ww_pairwise_options *o,
                                   uint64_t cells_per_pair, enum strategy strategy, size_t longest,
                                   const ww_dataset *hx, const ww_dataset *hy)
{
    pairwise_state *ps = state_of(s);
    const size_t width = o->col_end - o->col_begin;
    size_t rows_per_chunk = (size_t)(CHUNK_TARGET_CELLS / (cells_per_pair ? cells_per_pair : 1) / width);
    if (rows_per_chunk > 65535 * 128) /* lanes are counted in blockIdx.y */
        rows_per_chunk = 65535 * 128;
    if (rows_per_chunk < 1)
        rows_per_chunk = 1;
    /* the warp strategy needs several pairs per resident warp to fill the GPU */
    const size_t warp_pairs = 4 * (size_t)s->sm_count * WARPS_PER_SM;
    if (strategy == STRATEGY_WARP && rows_per_chunk * width < warp_pairs)
        rows_per_chunk = (warp_pairs + width - 1) / width;
    /* and the staging buffers stay bounded whatever the series' lengths */
    if (rows_per_chunk * width * sizeof(Tout) > CHUNK_MAX_BYTES)
        rows_per_chunk = CHUNK_MAX_BYTES / (width * sizeof(Tout)) > 0 ? CHUNK_MAX_BYTES / (width * sizeof(Tout)) : 1;
    const size_t rows = o->row_end - o->row_begin;
    if (rows_per_chunk > rows)
        rows_per_chunk = rows;
    /* Two chunks in flight: while the GPU computes chunk k+1, chunk k travels to pinned memory and
     * the host copies the previous one into the caller's matrix. */
    const size_t chunk_elems = rows_per_chunk * width;
    ww_status st = ww_device_reserve(&ps->out, 2 * chunk_elems * sizeof(Tout));
    if (st == WW_OK)
        st = ww_pinned_reserve(s, 2 * chunk_elems * sizeof(Tout));
    if (st != WW_OK)
        return st;
    for (int k = 0; k < 2; k++)
        if (ps->copied[k] == NULL)
            WW_CUDA_TRY(cudaEventCreateWithFlags(&ps->copied[k], cudaEventDisableTiming));
    Tout *dout = (Tout *)ps->out.ptr, *pinned = (Tout *)s->pinned;
    /* the warp strategy's row buffers: two rows (D, match parts) of the longest series per warp */
    const size_t stride = 2 * (longest + 1);
    const unsigned warp_blocks = (unsigned)((warp_strategy_warps(s->sm_count, longest, sizeof(T)) + 3) / 4);
    T *scratch = NULL;
    if (strategy == STRATEGY_WARP) {
        if ((st = ww_device_reserve(&ps->warp_scratch, (size_t)warp_blocks * 4 * stride * sizeof(T))) != WW_OK)
            return st;
        scratch = (T *)ps->warp_scratch.ptr;
    }
    /* progress in DP cells, as the CPU engine counts them: sum over rows of len(i) * sum of len(j) */
    const uint64_t col_samples = block_column_samples(hy, o);
    const uint64_t total = block_row_samples(hx, o->row_begin, o->row_end) * col_samples;
    uint64_t done = 0;
    /* copies chunk rows [q0, q1) from pinned buffer `buf` to the caller's matrix, reports progress */
    auto drain = [&](size_t q0, size_t q1, int buf) -> ww_status {
        WW_CUDA_TRY(cudaEventSynchronize(ps->copied[buf]));
        const Tout *src = pinned + (size_t)buf * chunk_elems;
        for (size_t r = q0; r < q1; r++)
            memcpy((Tout *)out + (r - o->row_begin) * o->out_stride, src + (r - q0) * width, width * sizeof(Tout));
        done += block_row_samples(hx, q0, q1) * col_samples;
        if (o->progress && o->progress(done, total, o->progress_user))
            return WW_ERR_CANCELLED;
        return WW_OK;
    };
    size_t prev0 = 0, prev1 = 0;
    int buf = 0, have_prev = 0;
    for (size_t r0 = o->row_begin; r0 < o->row_end; r0 += rows_per_chunk) {
        const size_t r1 = r0 + rows_per_chunk < o->row_end ? r0 + rows_per_chunk : o->row_end;
        block_geometry g = {r0, r1, o->row_begin, o->row_end, o->col_begin, o->col_end, width, self};
        /* lanes over the longer side of the chunk, so that warps are full (one query against a set) */
        pair_map map = {r1 - r0 >= width || width > (size_t)65535 * 128};
        const size_t lane_count = map.lanes_are_rows ? r1 - r0 : width, shared_count = map.lanes_are_rows ? width : r1 - r0;
        dim3 threads(128), blocks((unsigned)shared_count, (unsigned)((lane_count + 127) / 128));
        const T nu = (T)p->nu;
        Tout *d = dout + (size_t)buf * chunk_elems;
        if (strategy == STRATEGY_WARP) {
            if (dx.dim == 1)
                pairs_warp_kernel<T, Tout, true><<<warp_blocks, 128, 0, s->stream>>>(dx, dy, g, nu, p->degree,
                                                                                     scratch, stride, d);
            else
                pairs_warp_kernel<T, Tout, false><<<warp_blocks, 128, 0, s->stream>>>(dx, dy, g, nu, p->degree,
                                                                                      scratch, stride, d);
        } else if (dx.dim == 1)
            pairs_thread_kernel<T, Tout, 1><<<blocks, threads, 0, s->stream>>>(dx, dy, g, nu, p->degree, map, d);
        else if (dx.dim <= WIDE_DIM_MAX)
            pairs_thread_kernel<T, Tout, 2><<<blocks, threads, 0, s->stream>>>(dx, dy, g, nu, p->degree, map, d);
        else
            pairs_thread_kernel<T, Tout, 0><<<blocks, threads, 0, s->stream>>>(dx, dy, g, nu, p->degree, map, d);
        WW_CUDA_TRY(cudaGetLastError());
        WW_CUDA_TRY(cudaMemcpyAsync(pinned + (size_t)buf * chunk_elems, d, (r1 - r0) * width * sizeof(Tout),
                                    cudaMemcpyDeviceToHost, s->stream));
        WW_CUDA_TRY(cudaEventRecord(ps->copied[buf], s->stream));
        if (have_prev && (st = drain(prev0, prev1, buf ^ 1)) != WW_OK)
            break;
        prev0 = r0, prev1 = r1, have_prev = 1;
        buf ^= 1;
    }
    if (st == WW_OK && have_prev)
        st = drain(prev0, prev1, buf ^ 1);
    if (st != WW_OK)
        cudaStreamSynchronize(s->stream); /* leave no copy in flight into buffers we own */
    return st;
}

/* Long series: every needed entry through the single-pair engine (which fills the GPU). */
static ww_status run_pairs_one_by_one(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, int self,
                                      const ww_twed_params *p, void *out, const ww_pairwise_options *o)
{
    const uint64_t col_samples = block_column_samples(y, o);
    const uint64_t total = block_row_samples(x, o->row_begin, o->row_end) * col_samples;
    uint64_t done = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++) {
        for (size_t j = o->col_begin; j < o->col_end; j++) {
            bool mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
            double v = 0;
            if (!self || (i != j && !(mirror_in_block && j < i))) {
                ww_series a, b;
                ww_dataset_series(x, i, &a);
                ww_dataset_series(y, j, &b);
                ww_status st = ww_cuda_twed(ctx, &a, &b, p, &v);
                if (st != WW_OK)
                    return st;
            }
            size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
            if (o->out_dtype == WW_F32)
                ((float *)out)[at] = (float)v;
            else
                ((double *)out)[at] = v;
        }
        done += (uint64_t)series_length(x, i) * col_samples;
        if (o->progress && o->progress(done, total, o->progress_user))
            return WW_ERR_CANCELLED;
    }
    return WW_OK;
}

/* The columns' series already on the device (an index), or NULL to upload y (or use x when y is
 * NULL: the self matrix). */
template <typename T> struct prepared_columns {
    device_set<T> set;
    size_t max_length;
};

template <typename T>
static ww_status run_matrix(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, const prepared_columns<T> *cols,
                            const ww_twed_params *p, void *out, const ww_pairwise_options *o)
{
    ww_cuda_state *s = ctx->cuda;
    pairwise_state *ps = state_of(s);
    if (ps == NULL)
        return WW_ERR_MEMORY;
    const int self = y == NULL;
    ww_status st = ww_device_reserve(&s->result, 64);
    if (st != WW_OK)
        return st;
    int *dflags = (int *)s->result.ptr;
    WW_CUDA_TRY(cudaMemsetAsync(dflags, 0, sizeof(int), s->stream));
    device_set<T> dx, dy;
    size_t max_x = 0, max_y = 0;
    st = upload_set<T>(s, x, p, &ps->x, dflags, &dx, &max_x);
    if (st == WW_OK && !self && cols == NULL)
        st = upload_set<T>(s, y, p, &ps->y, dflags, &dy, &max_y);
    if (st != WW_OK)
        return st;
    if (self) {
        dy = dx;
        max_y = max_x;
    } else if (cols) {
        dy = cols->set;
        max_y = cols->max_length;
    }
    /* bad values anywhere stop the call before anything is written */
    if ((st = ww_cuda_read_flags(s, dflags)) != WW_OK)
        return st;

    const double pairs = (double)(o->row_end - o->row_begin) * (double)(o->col_end - o->col_begin) / (self ? 2.0 : 1.0);
    const enum strategy strategy = choose_strategy(pairs, max_x, max_y, s->sm_count, sizeof(T));
    const size_t longest = max_x > max_y ? max_x : max_y;
    if (strategy == STRATEGY_GRID)
        st = run_pairs_one_by_one(ctx, x, self ? x : y, self, p, out, o);
    else if (o->out_dtype == WW_F32)
        st = run_chunks<T, float>(s, dx, dy, self, p, out, o, (uint64_t)max_x * max_y, strategy, longest, x,
                                  self ? x : y);
    else
        st = run_chunks<T, double>(s, dx, dy, self, p, out, o, (uint64_t)max_x * max_y, strategy, longest, x,
                                   self ? x : y);
    if (st == WW_OK && self)
        ww_matrix_fill_mirror(o, out, ctx->num_threads);
    return st;
}

/* Small work on the host is done sooner by the CPU engine than by a GPU round trip. */
static bool small_host_work(const ww_dataset *x, const ww_dataset *y, const ww_pairwise_options *o)
{
    double cells = 0;
    for (size_t i = o->row_begin; i < o->row_end && cells <= WW_CUDA_SMALL_WORK; i++)
        cells += (double)series_length(x, i) * (double)x->dim *
                 (double)(y->offsets ? y->offsets[o->col_end] - y->offsets[o->col_begin]
                                     : (o->col_end - o->col_begin) * y->length);
    return cells <= WW_CUDA_SMALL_WORK;
}

/* Device datasets must hold device pointers; float data is computed in float here, so the
 * parameters must fit in a float. */
static ww_status check_inputs(const ww_dataset *d, const ww_twed_params *p)
{
    if (d == NULL)
        return WW_OK;
    if (d->memory == WW_DEVICE) {
        ww_status st = ww_cuda_check_device_pointer(d->values);
        if (st == WW_OK && d->stamps)
            st = ww_cuda_check_device_pointer(d->stamps);
        if (st != WW_OK)
            return st;
    }
    if (d->dtype == WW_F32 && (p->nu > FLT_MAX || p->lambda > FLT_MAX))
        return WW_ERR_PARAM;
    return WW_OK;
}

ww_status ww_cuda_twed_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, const ww_twed_params *p,
                                void *out, const ww_pairwise_options *opt)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    /* backend auto: a small matrix of host data is done sooner by the CPU engine */
    const int host = x->memory == WW_HOST && (y == NULL || y->memory == WW_HOST);
    if (ctx->requested == WW_BACKEND_AUTO && host && small_host_work(x, y ? y : x, opt))
        return ww_cpu_twed_pairwise(ctx, x, y, p, out, opt);
    ww_status st = check_inputs(x, p);
    if (st == WW_OK)
        st = check_inputs(y, p);
    if (st != WW_OK)
        return st;
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    st = x->dtype == WW_F32 ? run_matrix<float>(ctx, x, y, NULL, p, out, opt)
                            : run_matrix<double>(ctx, x, y, NULL, p, out, opt);
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    /* backend auto: a GPU that cannot hold the problem hands host data to the CPU engine */
    if (st == WW_ERR_DEVICE_MEMORY && ctx->requested == WW_BACKEND_AUTO && x->memory == WW_HOST &&
        (y == NULL || y->memory == WW_HOST))
        return ww_cpu_twed_pairwise(ctx, x, y, p, out, opt);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Indexes: the columns' series prepared once and kept on the device                           */
/* ------------------------------------------------------------------------------------------ */

struct cuda_index {
    set_buffers buffers;
    prepared_columns<double> f64;
    prepared_columns<float> f32;
    ww_device_buffer raw; /* the caller's device data, copied: the fallback for long series */
};

static ww_status index_create(ww_ctx *ctx, const ww_dataset *x, const ww_twed_params *p, ww_index *ix)
{
    ww_cuda_state *s = ctx->cuda;
    cuda_index *ci = (cuda_index *)calloc(1, sizeof *ci);
    if (ci == NULL)
        return WW_ERR_MEMORY;
    ix->device = ci;
    ww_status st = ww_device_reserve(&s->result, 64);
    if (st != WW_OK)
        return st;
    int *dflags = (int *)s->result.ptr;
    WW_CUDA_TRY(cudaMemsetAsync(dflags, 0, sizeof(int), s->stream));
    if (x->dtype == WW_F32)
        st = upload_set<float>(s, x, p, &ci->buffers, dflags, &ci->f32.set, &ci->f32.max_length);
    else
        st = upload_set<double>(s, x, p, &ci->buffers, dflags, &ci->f64.set, &ci->f64.max_length);
    if (st != WW_OK)
        return st;
    if ((st = ww_cuda_read_flags(s, dflags)) != WW_OK)
        return st;
    /* the raw series too, for the pair engine (long series) and as the index's own copy */
    if (x->memory == WW_HOST) {
        /* the raw upload has served its purpose: the index keeps the prepared set and a host copy */
        cudaFree(ci->buffers.raw.ptr);
        ci->buffers.raw.ptr = NULL;
        ci->buffers.raw.bytes = 0;
        return ww_index_copy_host(x, ix);
    }
    const size_t es = x->dtype == WW_F32 ? sizeof(float) : sizeof(double);
    const size_t samples = x->offsets ? x->offsets[x->count] : x->count * x->length;
    const size_t vbytes = samples * x->dim * es, tbytes = x->stamps ? samples * es : 0;
    if ((st = ww_device_reserve(&ci->raw, vbytes + tbytes + 256)) != WW_OK)
        return st;
    WW_CUDA_TRY(cudaMemcpyAsync(ci->raw.ptr, x->values, vbytes, cudaMemcpyDeviceToDevice, s->stream));
    if (tbytes)
        WW_CUDA_TRY(cudaMemcpyAsync((char *)ci->raw.ptr + vbytes, x->stamps, tbytes, cudaMemcpyDeviceToDevice, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    size_t obytes = x->offsets ? (x->count + 1) * sizeof(size_t) : 0;
    if (obytes) {
        ix->host_storage = malloc(obytes);
        if (ix->host_storage == NULL)
            return WW_ERR_MEMORY;
        memcpy(ix->host_storage, x->offsets, obytes);
    }
    ix->host = *x;
    ix->host.values = ci->raw.ptr;
    ix->host.stamps = tbytes ? (const char *)ci->raw.ptr + vbytes : NULL;
    ix->host.offsets = obytes ? (const size_t *)ix->host_storage : NULL;
    return WW_OK;
}

ww_status ww_cuda_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_twed_params *p, ww_index *ix)
{
    ww_status st = check_inputs(x, p);
    if (st != WW_OK)
        return st;
    ww_cuda_device_guard guard = ww_cuda_enter(ctx->cuda);
    st = index_create(ctx, x, p, ix);
    ww_cuda_recover(ctx->cuda, st);
    ww_cuda_leave(guard);
    return st;
}

void ww_cuda_index_destroy(ww_index *ix)
{
    cuda_index *ci = (cuda_index *)ix->device;
    if (ci == NULL)
        return;
    ww_cuda_device_guard guard = ww_cuda_enter(ix->ctx->cuda);
    ww_device_buffer *all[] = {&ci->buffers.raw,    &ci->buffers.offsets,  &ci->buffers.base, &ci->buffers.length,
                               &ci->buffers.prepared, &ci->raw};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k]->ptr)
            cudaFree(all[k]->ptr);
    free(ci);
    ix->device = NULL;
    ww_cuda_leave(guard);
}

ww_status ww_cuda_index_pairwise(ww_ctx *ctx, const ww_index *ix, const ww_dataset *queries, void *out,
                                 const ww_pairwise_options *opt)
{
    const cuda_index *ci = (const cuda_index *)ix->device;
    ww_cuda_state *s = ctx->cuda;
    ww_status st = check_inputs(queries, &ix->params);
    if (st != WW_OK)
        return st;
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    st = queries->dtype == WW_F32 ? run_matrix<float>(ctx, queries, &ix->host, &ci->f32, &ix->params, out, opt)
                                  : run_matrix<double>(ctx, queries, &ix->host, &ci->f64, &ix->params, out, opt);
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}
