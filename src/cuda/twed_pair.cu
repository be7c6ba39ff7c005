/* TWED of one pair on the GPU. Two engines share the preparation step and the recurrence:
 *
 *  diagonal   - the ITWED paper's scheme (what cuTWED does): three anti-diagonal buffers in global
 *               memory cycled by pointer, one kernel launch per anti-diagonal. Baseline only.
 *  wavefront  - the rows are cut into bands of 256*R rows, one thread block per band. A thread
 *               owns R consecutive rows and, at step s, computes the R cells of its rows that lie
 *               on anti-diagonal s, so its R cells are independent (instruction-level
 *               parallelism). Row boundaries pass between lanes by warp shuffles, between warps
 *               through shared memory (one barrier per step), and between bands through a row
 *               buffer in global memory guarded by per-band progress counters, so the whole
 *               matrix is one launch and nothing waits on the host. Bands are taken in order from
 *               an atomic counter: a band only ever waits for an earlier band, which is already
 *               running, so any grid size is deadlock-free. Two row buffers suffice: band b+2 can
 *               only overwrite column c of band b's buffer after band b+1 has consumed it (band
 *               b+2 reaching column c needs band b+1's bottom row at column c).
 */
#include "cuda_common.cuh"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FULL_MASK 0xffffffffu

/* ------------------------------------------------------------------------------------------ */
/* Preparation: user data (type T) -> sentinel-padded series with deletion costs, plus checks. */
/* ------------------------------------------------------------------------------------------ */

template <typename Tin> struct prepare_job {
    const Tin *values, *stamps; /* user layout; stamps may be NULL */
    size_t n, dim;
    double *out_values, *out_stamps, *out_delete;
};

/* Values and stamps to double with sentinel sample 0; non-finite values and decreasing stamps raise
 * flags. blockIdx.y selects the series (0 = a, 1 = b). */
template <typename Tin> __global__ void prepare_values_kernel(prepare_job<Tin> ja, prepare_job<Tin> jb, int *flags)
{
    const prepare_job<Tin> &j = blockIdx.y == 0 ? ja : jb;
    const size_t dim = j.dim;
    for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s <= j.n; s += (size_t)gridDim.x * blockDim.x) {
        double *dst = j.out_values + s * dim;
        if (s == 0) {
            for (size_t k = 0; k < dim; k++)
                dst[k] = 0;
            j.out_stamps[0] = 0;
            continue;
        }
        const Tin *src = j.values + (s - 1) * dim;
        int bad = 0;
        for (size_t k = 0; k < dim; k++) {
            double v = (double)src[k];
            bad |= !isfinite(v);
            dst[k] = v;
        }
        double t = j.stamps ? (double)j.stamps[s - 1] : (double)s;
        if (j.stamps && (!isfinite(t) || (s >= 2 && t < (double)j.stamps[s - 2])))
            bad |= WW_FLAG_STAMPS;
        j.out_stamps[s] = t;
        if (bad)
            atomicOr(flags, bad);
    }
}

/* Deletion costs, from the converted values (a second launch: sample s needs sample s - 1). */
template <typename Tin> __global__ void prepare_costs_kernel(prepare_job<Tin> ja, prepare_job<Tin> jb, double nu,
                                                             double lambda, int degree)
{
    const prepare_job<Tin> &j = blockIdx.y == 0 ? ja : jb;
    const size_t dim = j.dim;
    for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s <= j.n; s += (size_t)gridDim.x * blockDim.x) {
        if (s == 0) {
            j.out_delete[0] = 0;
            continue;
        }
        const double *x = j.out_values + s * dim;
        j.out_delete[s] = delete_cost(lp_distance(x, x - dim, dim, degree), j.out_stamps[s], j.out_stamps[s - 1], nu,
                                      lambda);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Shared helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

template <typename T>
__device__ __forceinline__ T cell_match_part(const device_series<T> &a, const device_series<T> &b, size_t i,
                                             size_t j, T nu, int degree)
{
    T dist = lp_distance(a.values + i * a.dim, b.values + j * b.dim, a.dim, degree);
    return match_part(dist, a.stamps[i], b.stamps[j], nu);
}

/* D[i][j] from diagonals z1 (d-1) and z2 (d-2), all indexed by row. */
template <typename T>
__device__ __forceinline__ T diagonal_cell(const device_series<T> &a, const device_series<T> &b, size_t i,
                                           size_t j, const T *z1, const T *z2, T nu, int degree)
{
    if (i == 0 || j == 0)
        return infinity_of<T>();
    return twed_cell(z1[i - 1], z1[i], z2[i - 1], a.delete_cost[i], b.delete_cost[j],
                     cell_match_part(a, b, i, j, nu, degree), cell_match_part(a, b, i - 1, j - 1, nu, degree));
}

struct pair_result {
    double value;
    int flags;
};

/* ------------------------------------------------------------------------------------------ */
/* Baseline: one launch per anti-diagonal (the paper's algorithm as written).                  */
/* ------------------------------------------------------------------------------------------ */

template <typename T>
__global__ void diagonal_kernel(device_series<T> a, device_series<T> b, T nu, int degree, size_t d, size_t lo,
                                size_t hi, const T *z1, const T *z2, T *z0)
{
    size_t i = lo + blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i <= hi)
        z0[i] = diagonal_cell(a, b, i, d - i, z1, z2, nu, degree);
}

template <typename T> __global__ void diagonal_start_kernel(T *z1) { z1[0] = 0; }

template <typename T> __global__ void diagonal_finish_kernel(const T *z, size_t i, pair_result *r)
{
    r->value = (double)z[i];
}

template <typename T>
static ww_status run_diagonal(ww_cuda_state *s, const device_series<T> &a, const device_series<T> &b, T nu,
                              int degree, pair_result *result)
{
    const size_t na = a.length, nb = b.length;
    WW_CUDA_TRY(cudaGetLastError());
    ww_status st = ww_device_reserve(&s->work, 3 * (na + 1) * sizeof(T));
    if (st != WW_OK)
        return st;
    T *z0 = (T *)s->work.ptr, *z1 = z0 + (na + 1), *z2 = z1 + (na + 1);
    diagonal_start_kernel<T><<<1, 1, 0, s->stream>>>(z1);
    for (size_t d = 1; d <= na + nb; d++) {
        size_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        size_t cells = hi - lo + 1;
        unsigned threads = 256, blocks = (unsigned)((cells + threads - 1) / threads);
        diagonal_kernel<T><<<blocks, threads, 0, s->stream>>>(a, b, nu, degree, d, lo, hi, z1, z2, z0);
        T *t = z2;
        z2 = z1;
        z1 = z0;
        z0 = t;
    }
    diagonal_finish_kernel<T><<<1, 1, 0, s->stream>>>(z1, na, result);
    WW_CUDA_TRY(cudaGetLastError());
    return WW_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The wavefront engine: one thread block per band of rows.                                    */
/* ------------------------------------------------------------------------------------------ */

#define WAVEFRONT_WARPS 8 /* warps per block; a band has 32 * WAVEFRONT_WARPS * R rows */
#define WAVEFRONT_THREADS (32 * WAVEFRONT_WARPS)
#define INTERVAL 32 /* steps between block barriers = columns handed between bands at a time */

__device__ __forceinline__ unsigned load_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_release(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

struct wavefront_args {
    device_series<double> a, b; /* a: rows (cut into bands), b: columns */
    double nu;
    int degree;
    double *slot_d, *slot_m; /* 2 row buffers of D and match parts, nb + 1 each */
    unsigned *progress;      /* per band: columns of its bottom row published */
    unsigned *next_band;     /* band dispenser */
    unsigned nbands;
    pair_result *result;
};

/* Columns of B in a shared-memory ring. A column enters one interval before warp 0 needs it and
 * must stay until the band's last thread, (W-1) intervals and 256*R - 1 columns behind, has read it. */
template <int R> struct ring_size {
    enum { need = WAVEFRONT_THREADS * R + (WAVEFRONT_WARPS + 3) * INTERVAL,
           value = need <= 512 ? 512 : need <= 1024 ? 1024 : 2048 };
};

/* Thread t of the block owns rows row0 .. row0 + R - 1 of the band. At its step s it computes, for
 * each of its rows k, the cell at column s - t*R - k: all on one anti-diagonal, so independent.
 * Warp w runs INTERVAL steps behind warp w-1, and the warps meet at a barrier only every INTERVAL
 * steps: the cells a warp needs from the warp above were written to shared memory during the
 * previous interval. Inside a warp, rows pass down by shuffles, so the critical path of a step is
 * one shuffle and one cell.
 * Cells outside the matrix (column < 0 or > nb, rows > na, steps before a warp starts) are
 * computed anyway on whatever data is there, which keeps the loop free of branches: their values
 * only ever flow into other outside cells, and column 0 is forced to its boundary value.
 * Global memory is never read on the critical path: each interval, the last warp loads the B
 * columns and warp 0 the row above the band that the next interval needs (warp 0 first waits for
 * the band above to publish them); both reach shared memory at the end of the interval. */
template <int R, bool DIM1>
__global__ void __launch_bounds__(WAVEFRONT_THREADS) wavefront_kernel(wavefront_args w)
{
    constexpr int RING = ring_size<R>::value, K = INTERVAL;
    extern __shared__ double ring_t[]; /* then ring_del, then ring_val (dim 1) */
    double *ring_del = ring_t + RING, *ring_val = ring_del + RING;
    __shared__ double xfer_d[WAVEFRONT_WARPS][4 * K], xfer_m[WAVEFRONT_WARPS][4 * K]; /* warp bottoms */
    __shared__ double top_d[2 * K], top_m[2 * K];                                     /* row above */
    __shared__ unsigned band_shared;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool b_loader = warp == WAVEFRONT_WARPS - 1, top_loader = warp == 0;
    const int na = (int)w.a.length, nb = (int)w.b.length;
    const size_t dim = w.a.dim;
    const double inf = infinity_of<double>();
    const double nu = w.nu;
    const int degree = w.degree;
    const int band_rows = WAVEFRONT_THREADS * R;

    for (;;) {
        if (threadIdx.x == 0)
            band_shared = atomicAdd(w.next_band, 1u);
        __syncthreads();
        const unsigned band = band_shared;
        __syncthreads();
        if (band >= w.nbands)
            return;

        const int row0 = (int)band * band_rows + 1 + (int)threadIdx.x * R;
        double a_val[R], a_t[R], a_del[R];
#pragma unroll
        for (int k = 0; k < R; k++) {
            int r = row0 + k <= na ? row0 + k : 0;
            a_val[k] = DIM1 ? w.a.values[r] : 0.0;
            a_t[k] = w.a.stamps[r];
            a_del[k] = w.a.delete_cost[r];
        }
        double d1[R], d2[R], m1[R], m2[R], b_val[R], b_t[R], b_del[R];
#pragma unroll
        for (int k = 0; k < R; k++) {
            d1[k] = d2[k] = inf;
            m1[k] = m2[k] = 0;
            b_val[k] = b_t[k] = b_del[k] = 0;
        }
        double above_prev_d = inf, above_prev_m = 0;
        const double *in_d = w.slot_d + (size_t)((band + 1) & 1) * (nb + 1);
        const double *in_m = w.slot_m + (size_t)((band + 1) & 1) * (nb + 1);
        double *out_d = w.slot_d + (size_t)(band & 1) * (nb + 1);
        double *out_m = w.slot_m + (size_t)(band & 1) * (nb + 1);
        const bool publisher = band + 1 < w.nbands && threadIdx.x == WAVEFRONT_THREADS - 1;
        const int c0_offset = -(int)threadIdx.x * R; /* column of row k = s + c0_offset - k */
        /* D(na, nb) is computed by this thread at a known step, if at all */
        const int result_k = na >= row0 && na < row0 + R ? na - row0 : -1;
        const int result_step = result_k < 0 ? -1 : nb - c0_offset + result_k;

        /* staged loads: this lane's column of the next interval, held in registers until stored */
        double next_val = 0, next_t = 0, next_del = 0, next_d = inf, next_m = 0;
        auto load_b = [&](int c) { /* c: this lane's column */
            c = min(c, nb);
            next_val = DIM1 ? __ldg(w.b.values + c) : 0.0;
            next_t = __ldg(w.b.stamps + c);
            next_del = __ldg(w.b.delete_cost + c);
        };
        auto store_b = [&](int c) {
            if (DIM1)
                ring_val[c & (RING - 1)] = next_val;
            ring_t[c & (RING - 1)] = next_t;
            ring_del[c & (RING - 1)] = next_del;
        };
        /* the row above the band: row 0 of the matrix, or the band above's bottom row */
        auto load_top = [&](int first) { /* first: the interval's first column */
            const int c = first + lane;
            if (band == 0) {
                next_d = c == 0 ? 0.0 : inf;
                next_m = 0;
                return;
            }
            if (first > nb)
                return;
            const unsigned need = (unsigned)min(first + K, nb + 1);
            if (lane == 0)
                while (load_acquire(&w.progress[band - 1]) < need)
                    __nanosleep(20);
            __syncwarp();
            next_d = c <= nb ? __ldcg(in_d + c) : inf;
            next_m = c <= nb ? __ldcg(in_m + c) : 0.0;
        };
        auto store_top = [&](int first) {
            top_d[(first + lane) & (2 * K - 1)] = next_d;
            top_m[(first + lane) & (2 * K - 1)] = next_m;
        };
        /* prologue: interval 0's columns straight to shared memory, interval 1's into registers */
        if (b_loader) {
            load_b(lane);
            store_b(lane);
            load_b(K + lane);
        }
        if (top_loader) {
            load_top(0);
            store_top(0);
            load_top(K);
        }
        __syncthreads();

        const int skew = warp * K; /* this warp runs `skew` steps behind the block's clock */
        const int block_steps = nb + band_rows + (WAVEFRONT_WARPS - 1) * K;
        for (int s0 = 0; s0 < block_steps; s0 += K) {
            if (s0 > 0) {
                if (b_loader)
                    load_b(s0 + K + lane);
                if (top_loader)
                    load_top(s0 + K);
            }
#pragma unroll 2
            for (int i = 0; i < K; i++) {
                const int s = s0 + i - skew; /* this warp's step */
                const int c0 = s + c0_offset;
                /* the cell above this thread's first row: the lane above (shuffle), or for lane 0
                 * the warp above's bottom row or the row above the band (shared memory) */
                const double edge_d = warp == 0 ? top_d[s & (2 * K - 1)] : xfer_d[warp - 1][(s - 1) & (4 * K - 1)];
                const double edge_m = warp == 0 ? top_m[s & (2 * K - 1)] : xfer_m[warp - 1][(s - 1) & (4 * K - 1)];
                double above_d = __shfl_up_sync(FULL_MASK, d1[R - 1], 1);
                double above_m = __shfl_up_sync(FULL_MASK, m1[R - 1], 1);
                above_d = lane == 0 ? edge_d : above_d;
                above_m = lane == 0 ? edge_m : above_m;

                /* B columns move one row down per step; the first row takes the next column */
#pragma unroll
                for (int k = R - 1; k > 0; k--) {
                    b_val[k] = b_val[k - 1];
                    b_t[k] = b_t[k - 1];
                    b_del[k] = b_del[k - 1];
                }
                if (DIM1)
                    b_val[0] = ring_val[c0 & (RING - 1)];
                b_t[0] = ring_t[c0 & (RING - 1)];
                b_del[0] = ring_del[c0 & (RING - 1)];

                double d0[R], m0[R];
#pragma unroll
                for (int k = 0; k < R; k++) {
                    const int c = c0 - k;
                    const double up = k == 0 ? above_d : d1[k - 1];
                    const double diag = k == 0 ? above_prev_d : d2[k - 1];
                    const double before = k == 0 ? above_prev_m : m2[k - 1];
                    double dist;
                    if (DIM1)
                        dist = lp_distance(&a_val[k], &b_val[k], 1, degree);
                    else
                        dist = lp_distance(w.a.values + (size_t)(row0 + k <= na ? row0 + k : 0) * dim,
                                           w.b.values + (size_t)min(max(c, 0), nb) * dim, dim, degree);
                    const double nm = match_part(dist, a_t[k], b_t[k], nu);
                    const double nd = twed_cell(up, d1[k], diag, a_del[k], b_del[k], nm, before);
                    d0[k] = c == 0 ? inf : nd; /* column 0 below row 0 */
                    m0[k] = c == 0 ? 0.0 : nm;
                }
                above_prev_d = above_d;
                above_prev_m = above_m;
#pragma unroll
                for (int k = 0; k < R; k++) {
                    d2[k] = d1[k];
                    d1[k] = d0[k];
                    m2[k] = m1[k];
                    m1[k] = m0[k];
                }
                if (lane == 31) {
                    xfer_d[warp][s & (4 * K - 1)] = d0[R - 1];
                    xfer_m[warp][s & (4 * K - 1)] = m0[R - 1];
                }
                /* the band's bottom row goes to the next band; the release store orders the data
                 * stores before it */
                if (publisher) {
                    const int cb = c0 - (R - 1);
                    if (cb >= 0 && cb <= nb) {
                        __stcg(out_d + cb, d0[R - 1]);
                        __stcg(out_m + cb, m0[R - 1]);
                        if (((cb + 1) & (K - 1)) == 0 || cb == nb)
                            store_release(&w.progress[band], (unsigned)(cb + 1));
                    }
                }
                if (s == result_step) {
#pragma unroll
                    for (int k = 0; k < R; k++)
                        if (k == result_k)
                            w.result->value = d0[k];
                }
            }
            if (b_loader)
                store_b(s0 + K + lane);
            if (top_loader)
                store_top(s0 + K);
            __syncthreads();
        }
    }
}

/* Rows per thread: fewer rows mean more bands in flight (parallelism), more rows mean more
 * independent cells per step and fewer hand-overs (bench/results/gpu.md). WW_WAVEFRONT_ROWS
 * overrides the choice, for benchmarks and tests. */
static int wavefront_rows(size_t rows)
{
    const char *env = getenv("WW_WAVEFRONT_ROWS");
    if (env) {
        int r = atoi(env);
        if (r == 1 || r == 2 || r == 4)
            return r;
    }
    if (rows <= 4096)
        return 1;
    return rows <= ((size_t)1 << 18) ? 2 : 4;
}

template <int R, bool DIM1> static ww_status launch_wavefront(ww_cuda_state *s, const wavefront_args &w)
{
    const size_t ring_bytes = (DIM1 ? 3 : 2) * (size_t)ring_size<R>::value * sizeof(double);
    /* static + dynamic shared memory may pass the default 48 KB: opt in. The attribute belongs to
     * the current device, so it is set before every launch (a cheap call), not once per process. */
    WW_CUDA_TRY(cudaFuncSetAttribute(wavefront_kernel<R, DIM1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)ring_bytes));
    int per_sm = 0;
    WW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wavefront_kernel<R, DIM1>, WAVEFRONT_THREADS,
                                                              ring_bytes));
    if (per_sm < 1)
        per_sm = 1;
    size_t blocks = (size_t)per_sm * s->sm_count;
    if (blocks > w.nbands)
        blocks = w.nbands;
    wavefront_kernel<R, DIM1><<<(unsigned)blocks, WAVEFRONT_THREADS, ring_bytes, s->stream>>>(w);
    WW_CUDA_TRY(cudaGetLastError());
    return WW_OK;
}

template <int R> static ww_status launch_wavefront_dim(ww_cuda_state *s, const wavefront_args &w)
{
    return w.a.dim == 1 ? launch_wavefront<R, true>(s, w) : launch_wavefront<R, false>(s, w);
}

static ww_status run_wavefront(ww_cuda_state *s, const device_series<double> &a, const device_series<double> &b,
                               double nu, int degree, pair_result *result)
{
    const size_t nb = b.length;
    const int R = wavefront_rows(a.length);
    const size_t band_rows = (size_t)WAVEFRONT_THREADS * R;
    const size_t nbands = (a.length + band_rows - 1) / band_rows;
    /* the kernel indexes rows, columns and steps with int */
    if (a.length + 2 * band_rows >= (size_t)INT32_MAX || nb + 2 * band_rows >= (size_t)INT32_MAX)
        return WW_ERR_OVERFLOW;
    size_t slot_bytes = 4 * (nb + 1) * sizeof(double);
    size_t flag_bytes = (nbands + 1) * sizeof(unsigned);
    ww_status st = ww_device_reserve(&s->work, slot_bytes + flag_bytes + 256);
    if (st != WW_OK)
        return st;
    wavefront_args w;
    w.a = a;
    w.b = b;
    w.nu = nu;
    w.degree = degree;
    w.slot_d = (double *)s->work.ptr;
    w.slot_m = w.slot_d + 2 * (nb + 1);
    w.progress = (unsigned *)((char *)s->work.ptr + slot_bytes);
    w.next_band = w.progress + nbands;
    w.nbands = (unsigned)nbands;
    w.result = result;
    WW_CUDA_TRY(cudaMemsetAsync(w.progress, 0, flag_bytes, s->stream));
    switch (R) {
    case 1: return launch_wavefront_dim<1>(s, w);
    case 2: return launch_wavefront_dim<2>(s, w);
    default: return launch_wavefront_dim<4>(s, w);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* ww_twed on the GPU                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* Host series are packed into one pinned buffer and sent with one copy (small pairs are bound by
 * per-copy latency); device series are read in place. Either way they are converted to double on
 * the device: a float D chain over a million cells drifts by 1e-4 relative, and double costs the
 * wavefront engine nothing measurable (bench/results/gpu.md). */
template <typename Tin>
static ww_status run_pair(ww_ctx *ctx, const ww_series *sa, const ww_series *sb, const ww_twed_params *p,
                          double *out)
{
    ww_cuda_state *s = ctx->cuda;
    const size_t dim = sa->dim;
    const ww_series *in[2] = {sa, sb};
    size_t host_bytes = 0, off[2][2] = {{0, 0}, {0, 0}};
    for (int k = 0; k < 2; k++) {
        if (in[k]->memory != WW_HOST)
            continue;
        off[k][0] = host_bytes;
        host_bytes += (in[k]->length * dim * sizeof(Tin) + 255) & ~(size_t)255;
        off[k][1] = host_bytes;
        if (in[k]->stamps)
            host_bytes += (in[k]->length * sizeof(Tin) + 255) & ~(size_t)255;
    }
    ww_status st = ww_pinned_reserve(s, host_bytes + sizeof(pair_result));
    if (st == WW_OK && host_bytes)
        st = ww_device_reserve(&s->input, host_bytes);
    size_t prep_elems = (sa->length + 1) * (dim + 2) + (sb->length + 1) * (dim + 2);
    if (st == WW_OK)
        st = ww_device_reserve(&s->prepared, prep_elems * sizeof(double));
    if (st == WW_OK)
        st = ww_device_reserve(&s->result, sizeof(pair_result));
    if (st != WW_OK)
        return st;

    const Tin *dev_values[2], *dev_stamps[2];
    char *pinned = (char *)s->pinned;
    for (int k = 0; k < 2; k++) {
        if (in[k]->memory == WW_HOST) {
            memcpy(pinned + off[k][0], in[k]->values, in[k]->length * dim * sizeof(Tin));
            dev_values[k] = (const Tin *)((char *)s->input.ptr + off[k][0]);
            dev_stamps[k] = NULL;
            if (in[k]->stamps) {
                memcpy(pinned + off[k][1], in[k]->stamps, in[k]->length * sizeof(Tin));
                dev_stamps[k] = (const Tin *)((char *)s->input.ptr + off[k][1]);
            }
        } else {
            dev_values[k] = (const Tin *)in[k]->values;
            dev_stamps[k] = (const Tin *)in[k]->stamps;
        }
    }
    if (host_bytes)
        WW_CUDA_TRY(cudaMemcpyAsync(s->input.ptr, pinned, host_bytes, cudaMemcpyHostToDevice, s->stream));

    pair_result *dres = (pair_result *)s->result.ptr;
    /* poison the result with NaN (all-ones bytes) so an engine that fails to write it is caught */
    WW_CUDA_TRY(cudaMemsetAsync(&dres->value, 0xff, sizeof dres->value, s->stream));
    WW_CUDA_TRY(cudaMemsetAsync(&dres->flags, 0, sizeof dres->flags, s->stream));
    device_series<double> ds[2];
    prepare_job<Tin> jobs[2];
    double *prep = (double *)s->prepared.ptr;
    for (int k = 0; k < 2; k++) {
        size_t n = in[k]->length;
        jobs[k].values = dev_values[k];
        jobs[k].stamps = dev_stamps[k];
        jobs[k].n = n;
        jobs[k].dim = dim;
        jobs[k].out_values = prep;
        jobs[k].out_stamps = prep + (n + 1) * dim;
        jobs[k].out_delete = jobs[k].out_stamps + (n + 1);
        ds[k].values = jobs[k].out_values;
        ds[k].stamps = jobs[k].out_stamps;
        ds[k].delete_cost = jobs[k].out_delete;
        ds[k].length = n;
        ds[k].dim = dim;
        prep += (n + 1) * (dim + 2);
    }
    size_t longest = sa->length > sb->length ? sa->length : sb->length;
    unsigned pblocks = (unsigned)((longest + 256) / 256);
    if (pblocks > 4096)
        pblocks = 4096;
    prepare_values_kernel<Tin><<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], &dres->flags);
    prepare_costs_kernel<Tin><<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], p->nu, p->lambda, p->degree);
    WW_CUDA_TRY(cudaGetLastError());

    /* TWED is symmetric: the longer series gives the rows, so more bands run at once. */
    if (ctx->engine == WW_ENGINE_CUDA_DIAGONAL) {
        st = run_diagonal<double>(s, ds[0], ds[1], p->nu, p->degree, dres);
    } else {
        bool swap = ds[0].length < ds[1].length;
        st = run_wavefront(s, swap ? ds[1] : ds[0], swap ? ds[0] : ds[1], p->nu, p->degree, dres);
    }
    if (st != WW_OK)
        return st;
    pair_result *hres = (pair_result *)(pinned + host_bytes);
    WW_CUDA_TRY(cudaMemcpyAsync(hres, dres, sizeof(pair_result), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    if ((st = ww_flags_status(hres->flags)) != WW_OK)
        return st;
    if (isnan(hres->value)) /* still the poison: no engine wrote the result */
        return WW_ERR_CUDA;
    *out = hres->value;
    return WW_OK;
}

ww_status ww_cuda_twed(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p, double *out)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    /* Host data is checked on the host first: cheaper than a round trip when it is bad, and it
     * keeps the error identical to the CPU engine's. Device data is checked by prepare_kernel. */
    if (a->memory == WW_HOST) {
        ww_status st = ww_check_values_host(a->values, a->stamps, a->length, a->dim, a->dtype);
        if (st != WW_OK)
            return st;
    }
    if (b->memory == WW_HOST) {
        ww_status st = ww_check_values_host(b->values, b->stamps, b->length, b->dim, b->dtype);
        if (st != WW_OK)
            return st;
    }
    /* the GPU engines index rows and columns with int: longer pairs are the CPU's */
    const size_t int_limit = (size_t)INT32_MAX / 2;
    if (a->length >= int_limit || b->length >= int_limit) {
        if (ctx->requested == WW_BACKEND_AUTO && a->memory == WW_HOST && b->memory == WW_HOST)
            return ww_cpu_twed(ctx, a, b, p, out);
        return WW_ERR_OVERFLOW;
    }
    /* backend auto: a small pair on the host is done sooner by the CPU than by a round trip */
    if (ctx->requested == WW_BACKEND_AUTO && a->memory == WW_HOST && b->memory == WW_HOST &&
        (double)a->length * (double)b->length * (double)a->dim <= WW_CUDA_SMALL_WORK)
        return ww_cpu_twed(ctx, a, b, p, out);
    const ww_series *in[2] = {a, b};
    for (int k = 0; k < 2; k++)
        if (in[k]->memory == WW_DEVICE) {
            ww_status st = ww_cuda_check_device_pointer(in[k]->values);
            if (st == WW_OK && in[k]->stamps)
                st = ww_cuda_check_device_pointer(in[k]->stamps);
            if (st != WW_OK)
                return st;
        }
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = a->dtype == WW_F32 ? run_pair<float>(ctx, a, b, p, out) : run_pair<double>(ctx, a, b, p, out);
    ww_cuda_recover(s, st); /* leave the stream usable for the next call */
    ww_cuda_leave(guard);
    /* backend auto: a GPU that cannot hold the problem hands host data to the CPU engine */
    if (st == WW_ERR_DEVICE_MEMORY && ctx->requested == WW_BACKEND_AUTO && a->memory == WW_HOST &&
        b->memory == WW_HOST)
        return ww_cpu_twed(ctx, a, b, p, out);
    return st;
}
