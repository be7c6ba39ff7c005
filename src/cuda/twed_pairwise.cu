/* Distance matrices on the GPU (ww_twed_pairwise with the CUDA backend).
 *
 * Strategy by table size, after the X-TED paper: a pair whose series are short is computed by one
 * thread (a row sweep, thousands of pairs in flight; for dim 2..32 and short series with the
 * block's shared series and the row buffers in shared memory, else row buffers in local memory);
 * longer pairs by one warp each (strips of 32 rows swept along anti-diagonals), by one block each
 * (a warp per strip, strips pipelined), or, when there are few of them, one after the other by the
 * single-pair wavefront engine, which spreads one table over the whole GPU. choose_strategy() is
 * the cost model; its variables are built in (measured on an H200) or calibrated on the GPU at
 * hand (ww_cuda_calibrate, src/cuda/calibrate.cu).
 *
 * A batch of mixed lengths is split into rectangles of pairs by strategy (pair_plan), each seen by
 * the kernels through gathered views of the uploaded sets; the strategies run concurrently, each
 * on a stream ("lane") of its own, and on every device of the context.
 *
 * A rectangle is computed in chunks of rows: each chunk's block of the output is computed into
 * device memory and copied to the caller's matrix, so device memory stays bounded whatever the
 * matrix size, and progress/cancellation are reported between chunks.
 *
 * Float inputs are computed in float here (each entry is a short sum), double inputs in double. */
#include "cuda_common.cuh"
#include "../common/settings.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#define THREAD_MAX_LENGTH 256       /* longest series the one-thread-per-pair kernel takes */
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
        /* usable in the input's type and in the computing one */
        if (j.stamps && (!stamp_ok(j.stamps[first + s - 1]) || !stamp_ok(t) || (s >= 2 && t < (T)j.stamps[first + s - 2])))
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

/* A chunk of rows of a rectangle of the output. Indices are those of the kernels' sets: the
 * caller's own, or, when the rectangle is a group of pairs (pair_plan), positions in gathered
 * views whose original indices are row_origin[] and col_origin[]. */
struct block_geometry {
    size_t row_begin, row_end; /* rows of this chunk */
    size_t col_begin, col_end; /* columns of the rectangle */
    size_t width;              /* output row length in the device buffer */
    /* the self matrix's mirror rule works on original indices and the caller's whole block */
    int self;
    const size_t *row_origin, *col_origin; /* NULL: indices are original */
    size_t block_row_begin, block_row_end, block_col_begin, block_col_end;
};

/* Same rule as the CPU engine: in the self matrix, (i, j) is computed unless it is on the diagonal
 * or its mirror (j, i) lies in the block and will be computed instead. */
__device__ __forceinline__ bool entry_needed(const block_geometry &g, size_t i, size_t j)
{
    if (!g.self)
        return true;
    if (g.row_origin) {
        i = g.row_origin[i];
        j = g.col_origin[j];
    }
    if (i == j)
        return false;
    bool mirror_in_block =
        j >= g.block_row_begin && j < g.block_row_end && i >= g.block_col_begin && i < g.block_col_end;
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

/* One thread per pair for dim 2 .. STAGED_DIM_MAX, with the block's shared series staged in shared
 * memory. The thread kernel's MODE 2 reads the shared sample vector from global memory (one scalar
 * load per component per cell) and keeps its row buffers in local memory, which does not stay in
 * L1 with thousands of threads in flight. Here every thread of a block has the same shared series
 * (blockIdx.x), so it is copied once, zero padded to a multiple of 4 components, and read with
 * 16-byte broadcast loads; the row buffers are in shared memory, thread-major (thread t's column c
 * at c * blockDim + t: a warp reads 32 consecutive words, no bank conflict). ROWS lane rows per
 * pass, their sample vectors in registers: each shared sample loaded serves ROWS cells, and the row
 * buffers are read and written once per ROWS rows. The padding adds exact zeros, so the distance is
 * lp_distance's up to the order of the additions (partial sums, as in MODE 2). */
#define STAGED_DIM_MAX 32
#define STAGED_SMEM_MAX (48 * 1024) /* per block, the most without opting in */
#define STAGED_THREADS 64           /* per block: blocks of 64 lanes waste fewer lanes at the grid's end */

/* Components per staged sample vector, and samples per staged series (the longest + sample 0, made
 * even so that every part of the layout stays 16-byte aligned). */
__host__ __device__ __forceinline__ int staged_vector_stride(int dim) { return (dim + 3) & ~3; }
__host__ __device__ __forceinline__ int staged_cap(size_t longest) { return (int)((longest + 2) & ~(size_t)1); }

/* Layout, in elements: cap sample vectors, cap stamps, cap deletion costs, then the row buffers (D
 * and match parts, cap columns of `threads` each). */
static size_t staged_smem_bytes(size_t longest, size_t dim, unsigned threads, size_t elem_size)
{
    const size_t cap = (size_t)staged_cap(longest);
    return (cap * ((size_t)staged_vector_stride((int)dim) + 2) + 2 * cap * threads) * elem_size;
}

__device__ __forceinline__ void load4(const double *p, double v[4])
{
    const double2 lo = *(const double2 *)p, hi = *(const double2 *)(p + 2);
    v[0] = lo.x, v[1] = lo.y, v[2] = hi.x, v[3] = hi.y;
}
__device__ __forceinline__ void load4(const float *p, float v[4])
{
    const float4 q = *(const float4 *)p;
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}

/* ||a_q - b||_P for the pass's ROWS rows, P = 1 or 2 (P is a template argument so that the loop
 * holds no test of the degree). 4 / ROWS partial sums per row: independent chains of additions. */
template <typename T, int DIM_CAP, int ROWS, int P>
__device__ __forceinline__ void staged_distances(const T (&a)[ROWS][DIM_CAP], const T *b, int dim, T (&dist)[ROWS])
{
    constexpr int NACC = 4 / ROWS;
    T acc[ROWS][NACC];
#pragma unroll
    for (int q = 0; q < ROWS; q++)
#pragma unroll
        for (int u = 0; u < NACC; u++)
            acc[q][u] = 0;
#pragma unroll
    for (int k = 0; k < DIM_CAP; k += 4) {
        if (k < dim) {
            T bk[4];
            load4(b + k, bk);
#pragma unroll
            for (int q = 0; q < ROWS; q++)
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const T d = a[q][k + u] - bk[u];
                    acc[q][u % NACC] += P == 2 ? d * d : fabs(d);
                }
        }
    }
#pragma unroll
    for (int q = 0; q < ROWS; q++) {
        T sum = NACC == 4 ? (acc[q][0] + acc[q][1]) + (acc[q][2 % NACC] + acc[q][3 % NACC])
                          : NACC == 2 ? acc[q][0] + acc[q][1 % NACC] : acc[q][0];
        dist[q] = P == 2 ? sqrt(sum) : sum;
    }
}

template <typename T, typename Tout, int DIM_CAP, int ROWS>
__global__ void __launch_bounds__(128) pairs_staged_kernel(device_set<T> x, device_set<T> y, block_geometry g, T nu,
                                                           int degree, pair_map map, int cap, Tout *out)
{
    extern __shared__ __align__(16) unsigned char staged_bytes[];
    const int dim = (int)x.dim, vs = staged_vector_stride(dim), threads = (int)blockDim.x, t = (int)threadIdx.x;
    T *s_val = (T *)staged_bytes, *s_time = s_val + (size_t)cap * vs, *s_del = s_time + cap;
    T *row_d = s_del + cap + t, *row_m = row_d + (size_t)cap * threads; /* column c at [c * threads] */
    const device_set<T> &ls = map.lanes_are_rows ? x : y, &ss = map.lanes_are_rows ? y : x;
    /* the shared series, the same for the whole block: staged before any thread leaves */
    const size_t shared_i = blockIdx.x;
    const size_t si = map.lanes_are_rows ? g.col_begin + shared_i : g.row_begin + shared_i;
    const int nb = ss.length[si];
    {
        const T *bv = ss.values + ss.base[si] * dim, *bt = ss.stamps + ss.base[si], *bdel = ss.delete_cost + ss.base[si];
        for (int e = t; e < (nb + 1) * vs; e += threads) {
            const int c = e / vs, k = e - c * vs;
            s_val[e] = k < dim ? bv[(size_t)c * dim + k] : (T)0;
        }
        for (int c = t; c <= nb; c += threads) {
            s_time[c] = bt[c];
            s_del[c] = bdel[c];
        }
    }
    __syncthreads();
    const size_t lane_i = blockIdx.y * (size_t)threads + t;
    const size_t i = map.lanes_are_rows ? g.row_begin + lane_i : g.row_begin + shared_i;
    const size_t j = map.lanes_are_rows ? g.col_begin + shared_i : g.col_begin + lane_i;
    if (i >= g.row_end || j >= g.col_end)
        return;
    Tout *dst = out + (i - g.row_begin) * g.width + (j - g.col_begin);
    if (!entry_needed(g, i, j)) {
        *dst = 0; /* diagonal, or filled from its mirror by the host afterwards */
        return;
    }
    const size_t li = map.lanes_are_rows ? i : j;
    const int na = ls.length[li];
    const T *av = ls.values + ls.base[li] * dim, *at = ls.stamps + ls.base[li], *adel = ls.delete_cost + ls.base[li];
    const T inf = infinity_of<T>();
    row_d[0] = 0;
    row_m[0] = 0;
    for (int c = 1; c <= nb; c++) {
        row_d[c * threads] = inf;
        row_m[c * threads] = 0; /* match_part(0, c > 0) only meets D[0][c-1] = inf */
    }
    for (int r0 = 1; r0 <= na; r0 += ROWS) {
        /* rows r0 .. r0 + ROWS - 1; a row past na repeats the row above, so row_d ends on row na */
        T a[ROWS][DIM_CAP], ta[ROWS], da[ROWS], left[ROWS], diag[ROWS], before[ROWS];
        const T *ar[ROWS];
        bool valid[ROWS];
#pragma unroll
        for (int q = 0; q < ROWS; q++) {
            valid[q] = r0 + q <= na;
            const int r = valid[q] ? r0 + q : na;
            ar[q] = av + (size_t)r * dim;
#pragma unroll
            for (int k = 0; k < DIM_CAP; k++)
                a[q][k] = k < dim ? ar[q][k] : (T)0;
            ta[q] = at[r];
            da[q] = adel[r];
            left[q] = inf;                           /* D(r, 0) */
            diag[q] = q == 0 ? row_d[0] : inf;       /* D(r - 1, 0) */
            before[q] = q == 0 ? row_m[0] : (T)0;    /* M(r - 1, 0) */
        }
        row_d[0] = inf;
        row_m[0] = 0;
        for (int c = 1; c <= nb; c++) {
            const T *b = s_val + c * vs;
            T dist[ROWS];
            if (degree == 2) {
                staged_distances<T, DIM_CAP, ROWS, 2>(a, b, dim, dist);
            } else if (degree == 1) {
                staged_distances<T, DIM_CAP, ROWS, 1>(a, b, dim, dist);
            } else { /* rare: the lane's vectors from memory */
#pragma unroll
                for (int q = 0; q < ROWS; q++) {
                    T acc = 0;
                    for (int k = 0; k < dim; k++)
                        acc += pow(fabs(ar[q][k] - b[k]), (T)degree);
                    dist[q] = pow(acc, (T)1 / (T)degree);
                }
            }
            const T tb = s_time[c], db = s_del[c];
            T up = row_d[c * threads], m_up = row_m[c * threads];
#pragma unroll
            for (int q = 0; q < ROWS; q++) {
                const T here = match_part(dist[q], ta[q], tb, nu);
                T v = twed_cell(up, left[q], diag[q], da[q], db, here, before[q]);
                const T m = valid[q] ? here : m_up;
                v = valid[q] ? v : up;
                diag[q] = up;   /* D(r - 1, c) is the next column's diagonal */
                before[q] = m_up;
                left[q] = v;
                up = v;         /* the row below reads this cell as its up */
                m_up = m;
            }
            row_d[c * threads] = up;
            row_m[c * threads] = m_up;
        }
    }
    *dst = (Tout)row_d[nb * threads];
}

/* One block per pair (X-TED's block strategy), for pairs of a few hundred samples and more when
 * there are too few of them to fill the GPU one per warp. The warp kernel's strips of 32 rows (lane
 * l owns row r0 + l and at step s computes column s - l + 1), with the block's warps on consecutive
 * strips at once, pipelined. Time is cut into phases of BLOCK_PHASE_STEPS steps separated by
 * __syncthreads(). Strip k hands its last row to strip k + 1 through one of two row buffers
 * (global scratch, per block; lane 31 writes column c at its step c + 30, lane 0 of the next strip
 * reads it at its step c - 1): so strip k + 1 runs two phases behind strip k, and a warp starts its
 * next strip k + W once its current one is done. With J phases per strip:
 *   start(k) = (k / W) * max(J, 2W) + 2 (k % W).
 * The buffer strip k writes is rewritten by strip k + 2, which runs two phases behind strip k + 1,
 * so every column is rewritten in a later phase than strip k + 1 reads it. */
#define BLOCK_WARPS 4
#define BLOCK_PHASE_STEPS 32

/* Phases of one pair in the block kernel (rows: the shorter series), in 64 bits (ww_block_phases,
 * internal.h): an int overflows for series of about 3 million samples. The cost model gives the
 * strategy no more than BLOCK_PHASES_MAX phases (it would not win there anyway); the kernel counts
 * them in 64 bits all the same, for a forced strategy. */
#define BLOCK_PHASES_MAX ((long long)INT_MAX)
__host__ __device__ __forceinline__ long long block_phases(long long rows, long long cols, int warps)
{
    return ww_block_phases(rows, cols, warps, BLOCK_PHASE_STEPS);
}

template <typename T, typename Tout, bool DIM1>
__global__ void __launch_bounds__(BLOCK_WARPS * 32) pairs_block_kernel(device_set<T> x, device_set<T> y,
                                                                       block_geometry g, T nu, int degree,
                                                                       T *scratch, size_t scratch_stride, Tout *out)
{
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, W = blockDim.x >> 5;
    /* two row buffers, each D then match parts, of scratch_stride / 4 columns */
    const size_t L = scratch_stride / 4;
    T *buffers = scratch + blockIdx.x * scratch_stride;
    const T inf = infinity_of<T>();
    const size_t dim = x.dim, npairs = (g.row_end - g.row_begin) * g.width;
    for (size_t pair = blockIdx.x; pair < npairs; pair += gridDim.x) {
        const size_t i = g.row_begin + pair / g.width, j = g.col_begin + pair % g.width;
        if (!entry_needed(g, i, j)) { /* the same for the whole block: no barrier skipped unevenly */
            if (threadIdx.x == 0)
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
        const int strips = (na + 31) / 32, per_strip = (nb + 31 + BLOCK_PHASE_STEPS - 1) / BLOCK_PHASE_STEPS;
        const int round = per_strip > 2 * W ? per_strip : 2 * W;
        const long long phases = block_phases(na, nb, W); /* past INT_MAX for ~3 million samples */
        /* this warp's strip: its state lives across the phases of the strip */
        int r0 = 1, r = 1;
        T a = 0, ta = 0, da = 0, d1 = inf, m1 = 0, above_prev_d = inf, above_prev_m = 0;
        /* the phase counted in 64 bits; this warp's strip k = q W + w and its phase u in the current
         * round, counted along in int (no division; both stay below strips and round): u < 0 until
         * the warp's first strip starts, two phases per warp after the block's */
        int q = 0, u = -2 * w;
        for (long long phase = 0; phase < phases; phase++) {
            const int k = q * W + w;
            if (u >= 0 && k < strips && u < per_strip) { /* uniform in the warp: shuffles are safe */
                if (u == 0) {
                    r0 = 32 * k + 1;
                    r = r0 + lane <= na ? r0 + lane : na; /* lanes past na repeat row na, unused */
                    a = DIM1 ? av[r] : (T)0;
                    ta = at[r];
                    da = adel[r];
                    d1 = inf; /* D(r, 0) */
                    m1 = 0;
                    /* D(r - 1, 0): 0 only above the first row (D[0][0]) */
                    above_prev_d = lane == 0 && k == 0 ? (T)0 : inf;
                    above_prev_m = 0;
                }
                const T *in_d = buffers + ((k + 1) & 1) * 2 * L, *in_m = in_d + L;
                T *out_d = buffers + (k & 1) * 2 * L, *out_m = out_d + L;
                const int s_end = (u + 1) * BLOCK_PHASE_STEPS < nb + 31 ? (u + 1) * BLOCK_PHASE_STEPS : nb + 31;
                /* The step is pairs_warp_kernel's (edge from the row buffer or row 0). Folded into
                 * one device function shared by the two kernels, on an H200 (same run, A/B), the
                 * block kernel ran 4-7% slower (the warp kernel the same), so each keeps its copy:
                 * a change to one is a change to both. */
                for (int s = u * BLOCK_PHASE_STEPS; s < s_end; s++) {
                    const int c = s - lane + 1;
                    const bool active = c >= 1 && c <= nb;
                    const int cc = active ? c : (c < 1 ? 1 : nb);
                    T above_d = __shfl_up_sync(FULL_MASK_PAIRS, d1, 1), above_m = __shfl_up_sync(FULL_MASK_PAIRS, m1, 1);
                    if (lane == 0) { /* row 0 above the first strip; else the strip above's last row */
                        above_d = k == 0 ? inf : in_d[cc];
                        above_m = k == 0 ? (T)0 : in_m[cc];
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
                        out_d[c] = v;
                        out_m[c] = here;
                    }
                }
                if (u == per_strip - 1 && r0 + 31 >= na && lane == na - r0)
                    out[pair] = (Tout)d1; /* D(na, nb) */
            }
            __syncthreads(); /* this phase's row buffer writes are seen by the next phases */
            if (++u == round) { /* round >= 2 W > 2 w: a negative u reaches 0 first */
                u = 0;
                q++;
            }
        }
    }
}

/* Knobs of the staged kernel for tests and benchmarks: WW_STAGED=0 turns it off (the thread
 * kernel by mode instead), WW_STAGED_ROWS=1|2 sets the rows per pass, WW_STAGED_THREADS the block
 * size (32, 64 or 128). */
static int staged_knob(ww_setting setting, int fallback)
{
    const char *v = ww_setting_value(setting);
    return v ? atoi(v) : fallback;
}

template <typename T, typename Tout, int DIM_CAP>
static void launch_staged(int rows, dim3 blocks, unsigned threads, size_t bytes, cudaStream_t stream,
                          const device_set<T> &dx, const device_set<T> &dy, const block_geometry &g, T nu, int degree,
                          pair_map map, int cap, Tout *d)
{
    if (rows == 1)
        pairs_staged_kernel<T, Tout, DIM_CAP, 1><<<blocks, threads, bytes, stream>>>(dx, dy, g, nu, degree, map, cap, d);
    else
        pairs_staged_kernel<T, Tout, DIM_CAP, 2><<<blocks, threads, bytes, stream>>>(dx, dy, g, nu, degree, map, cap, d);
}

/* One thread per pair: the staged kernel when the shared series and the row buffers fit in shared
 * memory (short series, dim <= STAGED_DIM_MAX), else the thread kernel by mode. `lane_count` lanes
 * over one side, `shared_count` series of the other; `longest` bounds both sides' lengths. */
template <typename T, typename Tout>
static ww_status launch_thread_pairs(cudaStream_t stream, const device_set<T> &dx, const device_set<T> &dy,
                                     const block_geometry &g, T nu, int degree, pair_map map, size_t longest,
                                     size_t lane_count, size_t shared_count, Tout *d)
{
    const size_t dim = dx.dim;
    if (dim > 1 && dim <= STAGED_DIM_MAX && staged_knob(WW_SETTING_STAGED, 1)) {
        const int knob_threads = staged_knob(WW_SETTING_STAGED_THREADS, STAGED_THREADS);
        unsigned threads = knob_threads == 32 || knob_threads == 128 ? (unsigned)knob_threads : STAGED_THREADS;
        size_t bytes = staged_smem_bytes(longest, dim, threads, sizeof(T));
        if (bytes > STAGED_SMEM_MAX && threads > 32) { /* longer series: fewer lanes per block */
            threads = 32;
            bytes = staged_smem_bytes(longest, dim, threads, sizeof(T));
        }
        const size_t lane_blocks = (lane_count + threads - 1) / threads;
        if (bytes <= STAGED_SMEM_MAX && lane_blocks <= 65535) {
            const dim3 blocks((unsigned)shared_count, (unsigned)lane_blocks);
            const int cap = staged_cap(longest), rows = staged_knob(WW_SETTING_STAGED_ROWS, 2) == 1 ? 1 : 2;
            if (dim <= 8)
                launch_staged<T, Tout, 8>(rows, blocks, threads, bytes, stream, dx, dy, g, nu, degree, map, cap, d);
            else
                launch_staged<T, Tout, STAGED_DIM_MAX>(rows, blocks, threads, bytes, stream, dx, dy, g, nu, degree,
                                                       map, cap, d);
            return ww_cuda_status(cudaGetLastError());
        }
    }
    const dim3 threads(128), blocks((unsigned)shared_count, (unsigned)((lane_count + 127) / 128));
    if (dim == 1)
        pairs_thread_kernel<T, Tout, 1><<<blocks, threads, 0, stream>>>(dx, dy, g, nu, degree, map, d);
    else if (dim <= WIDE_DIM_MAX)
        pairs_thread_kernel<T, Tout, 2><<<blocks, threads, 0, stream>>>(dx, dy, g, nu, degree, map, d);
    else
        pairs_thread_kernel<T, Tout, 0><<<blocks, threads, 0, stream>>>(dx, dy, g, nu, degree, map, d);
    return ww_cuda_status(cudaGetLastError());
}

/* Blocks of the block strategy in flight (BLOCK_WARPS warps each, as many warps per multiprocessor
 * as the warp strategy), fewer when their row buffers (two pairs of rows of the longest series)
 * would pass WARP_SCRATCH_BYTES; and the scratch stride per block, in elements. */
static size_t block_strategy_blocks(int sm_count, size_t longest, size_t elem_size);
static size_t block_scratch_stride(size_t longest) { return 4 * (longest + 1); }

template <typename T, typename Tout>
static ww_status launch_block_pairs(cudaStream_t stream, const device_set<T> &dx, const device_set<T> &dy,
                                    const block_geometry &g, T nu, int degree, unsigned blocks, T *scratch,
                                    size_t stride, Tout *d)
{
    if (dx.dim == 1)
        pairs_block_kernel<T, Tout, true><<<blocks, BLOCK_WARPS * 32, 0, stream>>>(dx, dy, g, nu, degree, scratch,
                                                                                   stride, d);
    else
        pairs_block_kernel<T, Tout, false><<<blocks, BLOCK_WARPS * 32, 0, stream>>>(dx, dy, g, nu, degree, scratch,
                                                                                    stride, d);
    return ww_cuda_status(cudaGetLastError());
}

/* ------------------------------------------------------------------------------------------ */

static size_t esize(ww_dtype t) { return t == WW_F32 ? sizeof(float) : sizeof(double); }

static size_t series_length(const ww_dataset *d, size_t i)
{
    return d->offsets ? d->offsets[i + 1] - d->offsets[i] : d->length;
}

/* Where series i starts in the prepared layout: its samples plus one sentinel per series before it. */
static size_t prepared_base(const ww_dataset *d, size_t i)
{
    return (d->offsets ? d->offsets[i] : i * d->length) + i;
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

/* What one strategy's chunks need on a device: a stream of its own (the strategies of one matrix
 * run concurrently), output buffers for two chunks in flight on the device and in pinned memory,
 * and the warp and block strategies' row buffers. */
struct chunk_lane {
    cudaStream_t stream;
    ww_device_buffer out, scratch;
    void *pinned;
    size_t pinned_bytes;
    cudaEvent_t copied[2]; /* a chunk has reached pinned memory */
};

/* Lanes for the thread, warp and block strategies; the whole-GPU strategy runs on the pair engine
 * (the state's own stream and buffers). */
#define CHUNK_LANES 3

struct pairwise_state {
    set_buffers x, y;
    ww_device_buffer views; /* the pair groups' gathered views (see pair_plan) */
    chunk_lane lanes[CHUNK_LANES];
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
                               &ps->y.raw, &ps->y.offsets, &ps->y.base, &ps->y.length, &ps->y.prepared, &ps->views};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k]->ptr)
            cudaFree(all[k]->ptr);
    for (int l = 0; l < CHUNK_LANES; l++) {
        chunk_lane *lane = &ps->lanes[l];
        if (lane->out.ptr)
            cudaFree(lane->out.ptr);
        if (lane->scratch.ptr)
            cudaFree(lane->scratch.ptr);
        if (lane->pinned)
            cudaFreeHost(lane->pinned);
        for (int k = 0; k < 2; k++)
            if (lane->copied[k])
                cudaEventDestroy(lane->copied[k]);
        if (lane->stream)
            cudaStreamDestroy(lane->stream);
    }
    free(ps);
    s->pairwise = NULL;
}

/* The lane's stream and events, created on first use. */
static ww_status lane_ready(chunk_lane *lane)
{
    if (lane->stream == NULL)
        WW_CUDA_TRY(cudaStreamCreateWithFlags(&lane->stream, cudaStreamNonBlocking));
    for (int k = 0; k < 2; k++)
        if (lane->copied[k] == NULL)
            WW_CUDA_TRY(cudaEventCreateWithFlags(&lane->copied[k], cudaEventDisableTiming));
    return WW_OK;
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

/* In the order of the pairs they suit, shortest first: a pair is as hard as its longer series. */
enum strategy { STRATEGY_THREAD, STRATEGY_WARP, STRATEGY_BLOCK, STRATEGY_GRID };

/* X-TED's cost model, reduced to the strategies above the one-thread kernel: the time of the block
 * with one warp per pair (pairs spread over the warps the GPU holds at once) against one pair at a
 * time on the whole GPU. Its variables are the state's ww_cuda_model: built-in values measured on
 * an H200 (ww_cuda_model_default, bench/results/gpu-batch.md), or those ww_cuda_calibrate()
 * measured on the GPU at hand. */
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

/* The block strategy's time per step of a block's phase (BLOCK_WARPS warps, each 32 cells of an
 * anti-diagonal) with the GPU full of blocks is the model's block_step_seconds (built in: measured
 * on an H200, bench/results/gpu-batch.md). */

static size_t block_strategy_blocks(int sm_count, size_t longest, size_t elem_size)
{
    const size_t per_block = block_scratch_stride(longest) * elem_size;
    size_t blocks = (size_t)sm_count * (WARPS_PER_SM / BLOCK_WARPS);
    if (blocks * per_block > WARP_SCRATCH_BYTES)
        blocks = WARP_SCRATCH_BYTES / per_block > 1 ? WARP_SCRATCH_BYTES / per_block : 1;
    return blocks;
}

size_t ww_cuda_warps_in_flight(const ww_cuda_state *s, size_t longest, size_t elem_size)
{
    return warp_strategy_warps(s->sm_count, longest, elem_size);
}

double ww_cuda_block_strategy_steps(const ww_cuda_state *s, double pairs, size_t rows, size_t cols, size_t elem_size)
{
    const double blocks = (double)block_strategy_blocks(s->sm_count, cols > rows ? cols : rows, elem_size);
    return ceil(pairs / blocks) * (double)block_phases((long long)rows, (long long)cols, BLOCK_WARPS) *
           (double)BLOCK_PHASE_STEPS;
}

/* ww_cuda_calibrate forces each strategy in turn (s->forced_strategy); WW_MATRIX_STRATEGY=thread|warp|
 * block|grid forces one, for tests and benchmarks. */
static const char *forced_strategy_name(const ww_cuda_state *s)
{
    return s->forced_strategy ? s->forced_strategy : ww_setting_value(WW_SETTING_MATRIX_STRATEGY);
}

/* The strategy for `pairs` pairs of series of at most max_x and max_y samples; `forced`: a name
 * from forced_strategy_name(), or NULL. */
static enum strategy choose_strategy(double pairs, size_t max_x, size_t max_y, const ww_cuda_state *s,
                                     size_t elem_size, const char *forced)
{
    const size_t longest = max_x > max_y ? max_x : max_y;
    const ww_cuda_model &m = s->model;
    const int sm_count = s->sm_count;
    if (forced && strcmp(forced, "warp") == 0)
        return STRATEGY_WARP;
    if (forced && strcmp(forced, "grid") == 0)
        return STRATEGY_GRID;
    if (forced && strcmp(forced, "block") == 0)
        return STRATEGY_BLOCK;
    if (forced && strcmp(forced, "thread") == 0 && longest <= THREAD_MAX_LENGTH)
        return STRATEGY_THREAD;
    /* built in: the two are even at 128 samples, the warp twice as fast at 256 */
    if ((double)longest <= m.thread_max_length && longest <= THREAD_MAX_LENGTH)
        return STRATEGY_THREAD;
    const double rows = (double)(max_x < max_y ? max_x : max_y), cols = (double)longest;
    const double warps = (double)warp_strategy_warps(sm_count, longest, elem_size);
    const double t_warp = ceil(pairs / warps) * ceil(rows / 32.0) * (cols + 31.0) * m.warp_step_seconds;
    const double t_grid = pairs * (m.grid_pair_seconds + (rows + cols) * m.grid_step_seconds);
    /* one block per pair: phases of BLOCK_PHASE_STEPS steps, pairs spread over the blocks in flight;
     * not past BLOCK_PHASES_MAX phases (the longest pair has the most: the count grows with both) */
    const double t_block = ww_cuda_block_strategy_steps(s, pairs, (size_t)rows, (size_t)cols, elem_size) *
                           m.block_step_seconds;
    const bool block_fits = block_phases((long long)rows, (long long)cols, BLOCK_WARPS) <= BLOCK_PHASES_MAX;
    if (block_fits && t_block < t_warp && t_block < t_grid)
        return STRATEGY_BLOCK;
    return t_warp < t_grid ? STRATEGY_WARP : STRATEGY_GRID;
}

/* ------------------------------------------------------------------------------------------ */
/* Groups of pairs by strategy                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* A rectangle of the caller's block that one strategy computes. `whole`: the block itself, in the
 * caller's indices. Otherwise `rows` and `cols` list its series (original indices, increasing),
 * and the kernels address them through views of the uploaded sets gathered in that order. */
struct sub_block {
    enum strategy strategy;
    bool whole;
    std::vector<size_t> rows, cols;
    std::vector<uint64_t> row_samples; /* samples of the first k rows, k = 0 .. row_count (progress) */
    uint64_t col_samples;
    size_t row_count, col_count, max_row, max_col;
    size_t first_row, first_col; /* the kernels' index of the first row and column */
};

/* X-TED's dynamic strategy on a block: each series gets a kind, the strategy the cost model picks
 * for a pair of two series of its length (given the block's pair count, so that throughput
 * counts); the rows of kind a against the columns of kind b make a rectangle, which gets the
 * strategy the model picks for its own pairs and lengths (a short series against a long one is
 * not a block's work: its strips are few), and the strategies run concurrently. A block whose
 * series are all of one kind (or a forced strategy) stays whole, as do equal-length datasets. */
struct pair_plan {
    std::vector<sub_block> blocks;
    uint64_t total_cells; /* the progress total: sum over rows of len(i) times sum over columns of len(j) */
};

static bool known_strategy(const char *name)
{
    return name && (!strcmp(name, "thread") || !strcmp(name, "warp") || !strcmp(name, "block") || !strcmp(name, "grid"));
}

/* The strategy of each series of [begin, end) of d (into kinds), a bit per strategy seen, the longest. */
static unsigned series_kinds(const ww_dataset *d, size_t begin, size_t end, double pairs, const ww_cuda_state *s,
                             size_t elem_size, std::vector<unsigned char> *kinds, size_t *longest)
{
    kinds->resize(end - begin);
    size_t last = SIZE_MAX;
    unsigned char kind = 0, seen = 0;
    *longest = 0;
    for (size_t i = begin; i < end; i++) {
        const size_t n = series_length(d, i);
        if (n != last) { /* equal lengths in a row are common: one model call for the run */
            kind = (unsigned char)choose_strategy(pairs, n, n, s, elem_size, NULL);
            last = n;
        }
        (*kinds)[i - begin] = kind;
        seen |= (unsigned char)(1u << kind);
        if (n > *longest)
            *longest = n;
    }
    return seen;
}

static ww_status make_plan(const ww_cuda_state *s, const ww_dataset *x, const ww_dataset *y,
                           const ww_pairwise_options *o, int self, size_t elem_size, pair_plan *plan)
{
    try {
        const size_t rows = o->row_end - o->row_begin, cols = o->col_end - o->col_begin;
        plan->blocks.clear();
        plan->total_cells = block_row_samples(x, o->row_begin, o->row_end) * block_column_samples(y, o);
        if (rows == 0 || cols == 0)
            return WW_OK;
        const double pairs = (double)rows * (double)cols / (self ? 2.0 : 1.0);
        const char *forced = forced_strategy_name(s);
        std::vector<unsigned char> row_kind, col_kind;
        size_t max_x = x->offsets ? 0 : x->length, max_y = y->offsets ? 0 : y->length;
        unsigned seen = 0;
        /* WW_MATRIX_GROUPS=0 keeps the block whole (benchmarks: the gain of the split) */
        const char *groups = ww_setting_value(WW_SETTING_MATRIX_GROUPS);
        const bool split = !known_strategy(forced) && !(groups && strcmp(groups, "0") == 0);
        if (split && (x->offsets || y->offsets)) {
            seen = series_kinds(x, o->row_begin, o->row_end, pairs, s, elem_size, &row_kind, &max_x);
            seen |= series_kinds(y, o->col_begin, o->col_end, pairs, s, elem_size, &col_kind, &max_y);
        } else if (x->offsets || y->offsets) {
            std::vector<unsigned char> unused;
            series_kinds(x, o->row_begin, o->row_end, pairs, s, elem_size, &unused, &max_x);
            series_kinds(y, o->col_begin, o->col_end, pairs, s, elem_size, &unused, &max_y);
        }
        if ((seen & (seen - 1)) == 0) { /* one strategy (or none computed: equal lengths, forced) */
            sub_block b;
            b.strategy = choose_strategy(pairs, max_x, max_y, s, elem_size, forced);
            b.whole = true;
            b.col_samples = block_column_samples(y, o);
            b.row_count = rows, b.col_count = cols, b.max_row = max_x, b.max_col = max_y;
            b.first_row = o->row_begin, b.first_col = o->col_begin;
            plan->blocks.push_back(std::move(b));
            return WW_OK;
        }
        /* the series of kind a (rows) against those of kind b (columns) */
        auto add = [&](unsigned a, unsigned b) {
            sub_block blk;
            blk.whole = false;
            blk.first_row = blk.first_col = 0;
            blk.max_row = blk.max_col = 0;
            blk.col_samples = 0;
            blk.row_samples.push_back(0);
            for (size_t r = 0; r < rows; r++)
                if (row_kind[r] == a) {
                    const size_t n = series_length(x, o->row_begin + r);
                    blk.rows.push_back(o->row_begin + r);
                    blk.row_samples.push_back(blk.row_samples.back() + n);
                    blk.max_row = n > blk.max_row ? n : blk.max_row;
                }
            for (size_t c = 0; c < cols; c++)
                if (col_kind[c] == b) {
                    const size_t n = series_length(y, o->col_begin + c);
                    blk.cols.push_back(o->col_begin + c);
                    blk.col_samples += n;
                    blk.max_col = n > blk.max_col ? n : blk.max_col;
                }
            if (blk.rows.empty() || blk.cols.empty())
                return;
            blk.row_count = blk.rows.size(), blk.col_count = blk.cols.size();
            const double block_pairs = (double)blk.row_count * (double)blk.col_count / (self ? 2.0 : 1.0);
            blk.strategy = choose_strategy(block_pairs, blk.max_row, blk.max_col, s, elem_size, NULL);
            plan->blocks.push_back(std::move(blk));
        };
        for (unsigned a = STRATEGY_THREAD; a <= STRATEGY_GRID; a++)
            for (unsigned b = STRATEGY_THREAD; b <= STRATEGY_GRID; b++)
                add(a, b);
        return WW_OK;
    } catch (const std::bad_alloc &) {
        return WW_ERR_MEMORY;
    }
}

/* Work shared by the threads of one call: the strategies' lanes on each device, and the devices.
 * Each rectangle's rows are taken in chunks from its counter, so that a faster device takes more;
 * rows are disjoint, so every element is written once, and the self matrix's mirror is filled
 * after all have finished. Only the calling thread calls the progress callback; the others count
 * their cells in done_cells and stop at their next chunk once `stop` is set (a cancel, or a
 * failure anywhere). */
struct work_share {
    const pair_plan *plan;
    std::unique_ptr<std::atomic<size_t>[]> next_row; /* per rectangle: rows taken, from 0 */
    std::atomic<uint64_t> done_cells;
    std::atomic<int> stop;
    uint64_t reported; /* done_cells when the callback was last called (calling thread only) */
    std::thread::id caller;
    int devices;
};

/* On the calling thread: passes the cells done so far to the callback (when they changed); a
 * nonzero answer stops all. */
static void report_progress(work_share *share, const ww_pairwise_options *o)
{
    if (std::this_thread::get_id() != share->caller || !o->progress || share->stop.load())
        return;
    const uint64_t done = share->done_cells.load();
    if (done == share->reported)
        return;
    share->reported = done;
    if (o->progress(share->reported, share->plan->total_cells, o->progress_user))
        share->stop.store(1);
}

/* Counts finished cells. WW_ERR_CANCELLED: stop. */
static ww_status count_progress(work_share *share, uint64_t cells, const ww_pairwise_options *o)
{
    share->done_cells.fetch_add(cells);
    report_progress(share, o);
    return share->stop.load() ? WW_ERR_CANCELLED : WW_OK;
}

/* Runs work(k) for k in [0, n): k = 0 on the calling thread, the others on threads of their own;
 * while it waits for them, the calling thread reports progress. Returns a failure before the
 * cancellations it caused on the others, then WW_ERR_CANCELLED if the work was stopped. */
template <typename Work>
static ww_status run_workers(int n, work_share *share, const ww_pairwise_options *o, Work work)
{
    /* every allocation is inside the try, so no exception leaves the extern "C" entry points */
    if (n <= 0)
        return WW_OK;
    std::vector<ww_status> status;
    std::vector<std::thread> threads;
    std::mutex lock;
    std::condition_variable done;
    int finished = 0;
    try {
        status.assign((size_t)n, WW_OK);
        threads.reserve((size_t)n - 1);
        for (int k = 1; k < n; k++)
            threads.emplace_back([&, k] {
                const ww_status st = work(k);
                if (st != WW_OK)
                    share->stop.store(1);
                std::lock_guard<std::mutex> guard(lock);
                status[(size_t)k] = st;
                finished++;
                done.notify_all();
            });
    } catch (...) { /* no memory or no thread to be had: the started ones stop at their next chunk */
        share->stop.store(1);
        if (status.empty())
            return WW_ERR_MEMORY; /* nothing started */
        status[0] = WW_ERR_MEMORY;
    }
    if (status[0] == WW_OK && (status[0] = work(0)) != WW_OK)
        share->stop.store(1);
    for (;;) {
        {
            std::unique_lock<std::mutex> wait(lock);
            done.wait_for(wait, std::chrono::milliseconds(5), [&] { return finished == (int)threads.size(); });
            if (finished == (int)threads.size())
                break;
        }
        report_progress(share, o);
    }
    for (std::thread &t : threads)
        t.join();
    ww_status st = WW_OK;
    for (size_t k = 0; k < status.size() && st == WW_OK; k++)
        if (status[k] != WW_ERR_CANCELLED)
            st = status[k];
    if (st == WW_OK && share->stop.load())
        st = WW_ERR_CANCELLED;
    return st;
}

/* One rectangle by the thread, warp or block strategy on `lane`: chunks of its rows are computed
 * into device memory, copied to pinned memory and from there into the caller's matrix. */
template <typename T, typename Tout>
static ww_status run_chunks(ww_cuda_state *s, chunk_lane *lane, const device_set<T> &dx, const device_set<T> &dy,
                            const size_t *row_origin, const size_t *col_origin, int self, const ww_twed_params *p,
                            void *out, const ww_pairwise_options *o, const ww_dataset *hx, work_share *share,
                            size_t block_index)
{
    const sub_block &sb = share->plan->blocks[block_index];
    const enum strategy strategy = sb.strategy;
    const size_t width = sb.col_count, rows = sb.row_count;
    const size_t longest = sb.max_row > sb.max_col ? sb.max_row : sb.max_col;
    const uint64_t cells_per_pair = (uint64_t)sb.max_row * sb.max_col;
    size_t rows_per_chunk = (size_t)(CHUNK_TARGET_CELLS / (cells_per_pair ? cells_per_pair : 1) / width);
    if (rows_per_chunk > 65535 * 128) /* lanes are counted in blockIdx.y */
        rows_per_chunk = 65535 * 128;
    if (rows_per_chunk < 1)
        rows_per_chunk = 1;
    /* the warp strategy needs several pairs per resident warp to fill the GPU */
    const size_t warp_pairs = 4 * (size_t)s->sm_count * WARPS_PER_SM;
    if ((strategy == STRATEGY_WARP || strategy == STRATEGY_BLOCK) && rows_per_chunk * width < warp_pairs)
        rows_per_chunk = (warp_pairs + width - 1) / width;
    /* and the staging buffers stay bounded whatever the series' lengths */
    if (rows_per_chunk * width * sizeof(Tout) > CHUNK_MAX_BYTES)
        rows_per_chunk = CHUNK_MAX_BYTES / (width * sizeof(Tout)) > 0 ? CHUNK_MAX_BYTES / (width * sizeof(Tout)) : 1;
    if (rows_per_chunk > rows)
        rows_per_chunk = rows;
    /* several devices: chunks small enough that each gets some, and that they finish together */
    const size_t share_rows = (rows + 4 * (size_t)share->devices - 1) / (4 * (size_t)share->devices);
    if (share->devices > 1 && rows_per_chunk > share_rows)
        rows_per_chunk = share_rows;
    /* Two chunks in flight: while the GPU computes chunk k+1, chunk k travels to pinned memory and
     * the host copies the previous one into the caller's matrix. */
    const size_t chunk_elems = rows_per_chunk * width;
    ww_status st = lane_ready(lane);
    if (st == WW_OK)
        st = ww_device_reserve(&lane->out, 2 * chunk_elems * sizeof(Tout));
    if (st == WW_OK)
        st = ww_pinned_reserve(&lane->pinned, &lane->pinned_bytes, 2 * chunk_elems * sizeof(Tout));
    if (st != WW_OK)
        return st;
    Tout *dout = (Tout *)lane->out.ptr, *pinned = (Tout *)lane->pinned;
    /* the warp strategy's row buffers: two rows (D, match parts) of the longest series per warp;
     * the block strategy's: two pairs of rows per block */
    const size_t stride = 2 * (longest + 1);
    const unsigned warp_blocks = (unsigned)((warp_strategy_warps(s->sm_count, longest, sizeof(T)) + 3) / 4);
    const unsigned block_count = (unsigned)block_strategy_blocks(s->sm_count, longest, sizeof(T));
    size_t scratch_bytes = 0;
    if (strategy == STRATEGY_WARP)
        scratch_bytes = (size_t)warp_blocks * 4 * stride * sizeof(T);
    else if (strategy == STRATEGY_BLOCK)
        scratch_bytes = (size_t)block_count * block_scratch_stride(longest) * sizeof(T);
    if (scratch_bytes && (st = ww_device_reserve(&lane->scratch, scratch_bytes)) != WW_OK)
        return st;
    T *scratch = (T *)lane->scratch.ptr;
    /* copies chunk rows [q0, q1) from pinned buffer `buf` to the caller's matrix, counts progress
     * in DP cells as the CPU engine does (sum over rows of len(i) * sum of len(j)) */
    auto drain = [&](size_t q0, size_t q1, int buf) -> ww_status {
        WW_CUDA_TRY(cudaEventSynchronize(lane->copied[buf]));
        const Tout *src = pinned + (size_t)buf * chunk_elems;
        for (size_t q = q0; q < q1; q++) {
            const Tout *line = src + (q - q0) * width;
            Tout *dst = (Tout *)out + ((sb.whole ? q : sb.rows[q]) - o->row_begin) * o->out_stride;
            if (sb.whole) {
                memcpy(dst, line, width * sizeof(Tout));
                continue;
            }
            for (size_t c = 0; c < width; c++)
                dst[sb.cols[c] - o->col_begin] = line[c];
        }
        const uint64_t row_samples =
            sb.whole ? block_row_samples(hx, q0, q1) : sb.row_samples[q1] - sb.row_samples[q0];
        return count_progress(share, row_samples * sb.col_samples, o);
    };
    const size_t end_row = sb.first_row + rows;
    std::atomic<size_t> &taken = share->next_row[block_index];
    size_t prev0 = 0, prev1 = 0;
    int buf = 0, have_prev = 0;
    for (size_t r0 = sb.first_row + taken.fetch_add(rows_per_chunk); r0 < end_row;
         r0 = sb.first_row + taken.fetch_add(rows_per_chunk)) {
        if (share->stop.load()) { /* a cancel or a failure elsewhere: launch nothing more */
            st = WW_ERR_CANCELLED;
            break;
        }
        const size_t r1 = r0 + rows_per_chunk < end_row ? r0 + rows_per_chunk : end_row;
        const block_geometry g = {r0,         r1,          sb.first_col, sb.first_col + width,
                                  width,      self,        row_origin,   col_origin,
                                  o->row_begin, o->row_end, o->col_begin, o->col_end};
        /* lanes over the longer side of the chunk, so that warps are full (one query against a set) */
        pair_map map = {r1 - r0 >= width || width > (size_t)65535 * 128};
        const size_t lane_count = map.lanes_are_rows ? r1 - r0 : width, shared_count = map.lanes_are_rows ? width : r1 - r0;
        const T nu = (T)p->nu;
        Tout *d = dout + (size_t)buf * chunk_elems;
        if (strategy == STRATEGY_WARP) {
            if (dx.dim == 1)
                pairs_warp_kernel<T, Tout, true><<<warp_blocks, 128, 0, lane->stream>>>(dx, dy, g, nu, p->degree,
                                                                                        scratch, stride, d);
            else
                pairs_warp_kernel<T, Tout, false><<<warp_blocks, 128, 0, lane->stream>>>(dx, dy, g, nu, p->degree,
                                                                                         scratch, stride, d);
        } else if (strategy == STRATEGY_BLOCK) {
            st = launch_block_pairs<T, Tout>(lane->stream, dx, dy, g, nu, p->degree, block_count, scratch,
                                             block_scratch_stride(longest), d);
        } else {
            st = launch_thread_pairs<T, Tout>(lane->stream, dx, dy, g, nu, p->degree, map, longest, lane_count,
                                              shared_count, d);
        }
        if (st != WW_OK)
            break;
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(pinned + (size_t)buf * chunk_elems, d, (r1 - r0) * width * sizeof(Tout),
                                cudaMemcpyDeviceToHost, lane->stream);
        if (e == cudaSuccess)
            e = cudaEventRecord(lane->copied[buf], lane->stream);
        if ((st = ww_cuda_status(e)) != WW_OK)
            break;
        if (have_prev && (st = drain(prev0, prev1, buf ^ 1)) != WW_OK)
            break;
        prev0 = r0, prev1 = r1, have_prev = 1;
        buf ^= 1;
    }
    if (st == WW_OK && have_prev)
        st = drain(prev0, prev1, buf ^ 1);
    if (st != WW_OK) { /* leave no copy in flight into buffers we own, and no error for the next call */
        cudaStreamSynchronize(lane->stream);
        cudaGetLastError();
    }
    return st;
}

/* One rectangle of long series: every needed entry through the single-pair engine, which fills the
 * GPU by itself (on the context's first device, its own stream and buffers). */
static ww_status run_grid_block(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, int self,
                                const ww_twed_params *p, void *out, const ww_pairwise_options *o, work_share *share,
                                size_t block_index)
{
    const sub_block &sb = share->plan->blocks[block_index];
    std::atomic<size_t> &taken = share->next_row[block_index];
    for (size_t q = taken.fetch_add(1); q < sb.row_count; q = taken.fetch_add(1)) {
        const size_t i = sb.whole ? sb.first_row + q : sb.rows[q];
        for (size_t c = 0; c < sb.col_count; c++) {
            const size_t j = sb.whole ? sb.first_col + c : sb.cols[c];
            const bool mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
            double v = 0;
            if (!self || (i != j && !(mirror_in_block && j < i))) {
                if (share->stop.load()) /* a long pair each: stop between them */
                    return WW_ERR_CANCELLED;
                ww_series a, b;
                ww_dataset_series(x, i, &a);
                ww_dataset_series(y, j, &b);
                ww_status st = ww_cuda_twed_pair(ctx, &a, &b, p, &v);
                if (st != WW_OK)
                    return st;
            }
            const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
            if (o->out_dtype == WW_F32)
                ((float *)out)[at] = (float)v;
            else
                ((double *)out)[at] = v;
        }
        ww_status st = count_progress(share, (uint64_t)series_length(x, i) * sb.col_samples, o);
        if (st != WW_OK)
            return st;
    }
    return WW_OK;
}

/* The columns' series already on the device (an index), or NULL to upload y (or use x when y is
 * NULL: the self matrix). */
template <typename T> struct prepared_columns {
    device_set<T> set;
    size_t max_length;
};

/* A rectangle's sets as its kernels see them: the uploaded sets, or gathered views of them. */
template <typename T> struct block_views {
    device_set<T> x, y;
    const size_t *row_origin, *col_origin; /* NULL for a whole block */
};

/* Views of the plan's rectangles on one device: for each, its series' bases and lengths in its
 * order, and their original indices (for the mirror rule); one upload for all. */
template <typename T>
static ww_status make_views(ww_cuda_state *s, pairwise_state *ps, const pair_plan &plan, const ww_dataset *hx,
                            const ww_dataset *hy, const device_set<T> &dx, const device_set<T> &dy,
                            std::vector<block_views<T>> *views)
{
    try {
        const block_views<T> whole = {dx, dy, NULL, NULL};
        views->assign(plan.blocks.size(), whole);
        size_t words = 0, ints = 0;
        for (const sub_block &b : plan.blocks)
            if (!b.whole) {
                words += 2 * (b.row_count + b.col_count); /* bases and origins */
                ints += b.row_count + b.col_count;        /* lengths */
            }
        if (words == 0)
            return WW_OK;
        std::vector<size_t> host(words + (ints + 1) / 2); /* the ints after the words */
        size_t *word = host.data();
        int *length = (int *)(host.data() + words);
        struct at { size_t row_base, row_origin, col_base, col_origin, row_length, col_length; };
        std::vector<at> where(plan.blocks.size());
        size_t w = 0, n = 0;
        for (size_t k = 0; k < plan.blocks.size(); k++) {
            const sub_block &b = plan.blocks[k];
            if (b.whole)
                continue;
            at &a = where[k];
            a.row_base = w, a.row_origin = w + b.row_count, a.row_length = n;
            for (size_t r = 0; r < b.row_count; r++) {
                word[w + r] = prepared_base(hx, b.rows[r]);
                word[w + b.row_count + r] = b.rows[r];
                length[n + r] = (int)series_length(hx, b.rows[r]);
            }
            w += 2 * b.row_count, n += b.row_count;
            a.col_base = w, a.col_origin = w + b.col_count, a.col_length = n;
            for (size_t c = 0; c < b.col_count; c++) {
                word[w + c] = prepared_base(hy, b.cols[c]);
                word[w + b.col_count + c] = b.cols[c];
                length[n + c] = (int)series_length(hy, b.cols[c]);
            }
            w += 2 * b.col_count, n += b.col_count;
        }
        ww_status st = ww_device_reserve(&ps->views, host.size() * sizeof(size_t));
        if (st != WW_OK)
            return st;
        /* pageable memory, so the copy is complete when the stream is */
        WW_CUDA_TRY(cudaMemcpyAsync(ps->views.ptr, host.data(), host.size() * sizeof(size_t), cudaMemcpyHostToDevice,
                                    s->stream));
        WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
        const size_t *dword = (const size_t *)ps->views.ptr;
        const int *dlength = (const int *)(dword + words);
        for (size_t k = 0; k < plan.blocks.size(); k++) {
            if (plan.blocks[k].whole)
                continue;
            block_views<T> &v = (*views)[k];
            v.x.base = dword + where[k].row_base;
            v.x.length = dlength + where[k].row_length;
            v.y.base = dword + where[k].col_base;
            v.y.length = dlength + where[k].col_length;
            v.row_origin = dword + where[k].row_origin;
            v.col_origin = dword + where[k].col_origin;
        }
        return WW_OK;
    } catch (const std::bad_alloc &) {
        return WW_ERR_MEMORY;
    }
}

/* The plan on device `s`: the sets uploaded and prepared, then one lane per strategy present, run
 * concurrently (the whole-GPU strategy only on the first device, as one-pair calls run there). */
template <typename T>
static ww_status run_device_typed(ww_ctx *ctx, ww_cuda_state *s, const ww_dataset *x, const ww_dataset *y,
                                  const prepared_columns<T> *cols, const ww_twed_params *p, void *out,
                                  const ww_pairwise_options *o, work_share *share)
{
    pairwise_state *ps = state_of(s);
    if (ps == NULL)
        return WW_ERR_MEMORY;
    const pair_plan &plan = *share->plan;
    const int self = y == NULL;
    const ww_dataset *hy = self ? x : y;
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
    if (self)
        dy = dx;
    else if (cols)
        dy = cols->set;
    /* bad values anywhere stop the call before anything is written */
    if ((st = ww_cuda_read_flags(s, dflags)) != WW_OK)
        return st;
    std::vector<block_views<T>> views;
    if ((st = make_views<T>(s, ps, plan, x, hy, dx, dy, &views)) != WW_OK)
        return st;
    enum strategy lanes[STRATEGY_GRID + 1];
    int lane_count = 0;
    for (int k = STRATEGY_THREAD; k <= STRATEGY_GRID; k++) {
        if (k == STRATEGY_GRID && s != ctx->cuda)
            continue;
        for (const sub_block &b : plan.blocks)
            if (b.strategy == k) {
                lanes[lane_count++] = (enum strategy)k;
                break;
            }
    }
    return run_workers(lane_count, share, o, [&](int k) -> ww_status {
        const enum strategy lane = lanes[k];
        const ww_cuda_device_guard guard = ww_cuda_enter(s); /* a new thread starts on device 0 */
        ww_status r = WW_OK;
        for (size_t b = 0; b < plan.blocks.size() && r == WW_OK; b++) {
            const block_views<T> &v = views[b];
            if (plan.blocks[b].strategy != lane)
                continue;
            if (lane == STRATEGY_GRID)
                r = run_grid_block(ctx, x, hy, self, p, out, o, share, b);
            else if (o->out_dtype == WW_F32)
                r = run_chunks<T, float>(s, &ps->lanes[lane], v.x, v.y, v.row_origin, v.col_origin, self, p, out, o, x,
                                         share, b);
            else
                r = run_chunks<T, double>(s, &ps->lanes[lane], v.x, v.y, v.row_origin, v.col_origin, self, p, out, o,
                                          x, share, b);
        }
        ww_cuda_leave(guard);
        return r;
    });
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

/* The plan's part on one device. */
static ww_status run_device_part(ww_ctx *ctx, ww_cuda_state *s, const ww_dataset *x, const ww_dataset *y,
                                 const prepared_columns<float> *c32, const prepared_columns<double> *c64,
                                 const ww_twed_params *p, void *out, const ww_pairwise_options *o, work_share *share)
{
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = x->dtype == WW_F32 ? run_device_typed<float>(ctx, s, x, y, c32, p, out, o, share)
                                      : run_device_typed<double>(ctx, s, x, y, c64, p, out, o, share);
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}

/* The block of x against y (NULL: x itself) on the context's first `devices` devices, each
 * uploading and preparing the data itself; `c32`/`c64`: the columns already on the first device
 * (an index), or NULL. */
static ww_status run_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y,
                              const prepared_columns<float> *c32, const prepared_columns<double> *c64,
                              const ww_twed_params *p, void *out, const ww_pairwise_options *o, int devices)
{
    const int self = y == NULL;
    pair_plan plan;
    work_share share;
    ww_status st = make_plan(ctx->cuda, x, self ? x : y, o, self, esize(x->dtype), &plan);
    if (st != WW_OK || plan.blocks.empty())
        return st;
    bool all_grid = true;
    for (const sub_block &b : plan.blocks)
        all_grid = all_grid && b.strategy == STRATEGY_GRID;
    share.plan = &plan;
    share.next_row.reset(new (std::nothrow) std::atomic<size_t>[plan.blocks.size()]);
    if (!share.next_row)
        return WW_ERR_MEMORY;
    for (size_t b = 0; b < plan.blocks.size(); b++)
        share.next_row[b].store(0);
    share.done_cells.store(0);
    share.stop.store(0);
    share.reported = 0;
    share.caller = std::this_thread::get_id();
    share.devices = all_grid ? 1 : devices; /* long series stay on the first device */
    st = run_workers(share.devices, &share, o, [&](int d) {
        return run_device_part(ctx, d == 0 ? ctx->cuda : ctx->cuda_devices[d], x, y, c32, c64, p, out, o, &share);
    });
    /* the callback sees the end (once) */
    if (st == WW_OK && o->progress && share.reported != share.done_cells.load() &&
        o->progress(share.done_cells.load(), plan.total_cells, o->progress_user))
        st = WW_ERR_CANCELLED;
    if (st == WW_OK && self)
        ww_matrix_fill_mirror(o, out, ctx->num_threads);
    return st;
}

int ww_cuda_describe_plan(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, char *buf, size_t size)
{
    static const char *const names[] = {"thread", "warp", "block", "grid"};
    if (size)
        buf[0] = 0;
    if (ctx == NULL || ctx->cuda == NULL || x == NULL)
        return -1;
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = x->count;
    o.col_end = y ? y->count : x->count;
    pair_plan plan;
    if (make_plan(ctx->cuda, x, y ? y : x, &o, y == NULL, esize(x->dtype), &plan) != WW_OK)
        return -1;
    size_t used = 0;
    for (const sub_block &b : plan.blocks) {
        const int n = snprintf(size > used ? buf + used : NULL, size > used ? size - used : 0, "%s %zu x %zu, longest %zu x %zu%s\n",
                               names[b.strategy], b.row_count, b.col_count, b.max_row, b.max_col,
                               b.whole ? " (whole)" : "");
        used += n > 0 ? (size_t)n : 0;
    }
    return (int)plan.blocks.size();
}

ww_status ww_cuda_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                           const ww_pairwise_options *opt)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    if (m->kind != WW_MEASURE_TWED) /* the registry routes only TWED here for now */
        return WW_ERR_UNSUPPORTED;
    const ww_twed_params *p = &m->params.twed;
    const int host = x->memory == WW_HOST && (y == NULL || y->memory == WW_HOST);
    ww_status st = check_inputs(x, p);
    if (st == WW_OK)
        st = check_inputs(y, p);
    if (st != WW_OK)
        return st;
    /* several devices take host data only: a device pointer belongs to one GPU */
    return run_pairwise(ctx, x, y, NULL, NULL, p, out, opt, ctx->cuda_count > 1 && host ? ctx->cuda_count : 1);
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

ww_status ww_cuda_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_measure *m, ww_index *ix)
{
    if (m->kind != WW_MEASURE_TWED) /* the registry routes only TWED here for now */
        return WW_ERR_UNSUPPORTED;
    const ww_twed_params *p = &m->params.twed;
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
    ww_status st = check_inputs(queries, &ix->measure.params.twed);
    if (st != WW_OK)
        return st;
    st = run_pairwise(ctx, queries, &ix->host, &ci->f32, &ci->f64, &ix->measure.params.twed, out, opt, 1);
    return st;
}
