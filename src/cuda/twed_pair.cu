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

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FULL_MASK 0xffffffffu

/* ------------------------------------------------------------------------------------------ */
/* Preparation: user data (type T) -> sentinel-padded series with deletion costs, plus checks. */
/* ------------------------------------------------------------------------------------------ */

template <typename T> struct prepare_job {
    const T *values, *stamps; /* user layout; stamps may be NULL */
    size_t n, dim;
    T *out_values, *out_stamps, *out_delete;
};

/* blockIdx.y selects the series (0 = a, 1 = b). The thread of sample 1 also writes sentinel 0,
 * so the deletion cost of sample 1 can read the zero vector without a second launch. */
template <typename T>
__global__ void prepare_kernel(prepare_job<T> ja, prepare_job<T> jb, T nu, T lambda, int degree, int *flags)
{
    const prepare_job<T> &j = blockIdx.y == 0 ? ja : jb;
    const size_t dim = j.dim;
    for (size_t s = 1 + blockIdx.x * (size_t)blockDim.x + threadIdx.x; s <= j.n; s += (size_t)gridDim.x * blockDim.x) {
        const T *src = j.values + (s - 1) * dim;
        T *dst = j.out_values + s * dim;
        int bad = 0;
        for (size_t k = 0; k < dim; k++) {
            T v = src[k];
            bad |= !isfinite(v);
            dst[k] = v;
        }
        T t = j.stamps ? j.stamps[s - 1] : (T)s;
        T t_prev = s == 1 ? (T)0 : (j.stamps ? j.stamps[s - 2] : (T)(s - 1));
        if (j.stamps && (!isfinite(t) || (s >= 2 && t < t_prev)))
            bad |= WW_FLAG_STAMPS;
        const T *prev = src - dim;
        if (s == 1) {
            T *zero = j.out_values;
            for (size_t k = 0; k < dim; k++)
                zero[k] = 0;
            j.out_stamps[0] = 0;
            j.out_delete[0] = 0;
            prev = zero;
        }
        j.out_stamps[s] = t;
        j.out_delete[s] = delete_cost(lp_distance(src, prev, dim, degree), t, t_prev, nu, lambda);
        if (bad)
            atomicOr(flags, bad);
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

#define WAVEFRONT_WARPS 8  /* warps per block; a band has 32 * WAVEFRONT_WARPS * R rows */
#define WAVEFRONT_CHUNK 32 /* columns published / fetched at a time between bands */
#define WAVEFRONT_THREADS (32 * WAVEFRONT_WARPS)

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

template <typename T> struct wavefront_args {
    device_series<T> a, b; /* a: rows (cut into bands), b: columns */
    T nu;
    int degree;
    T *slot_d, *slot_m;  /* 2 row buffers of D and match parts, nb + 1 each */
    unsigned *progress;  /* per band: columns of its bottom row published */
    unsigned *next_band; /* band dispenser */
    unsigned nbands;
    pair_result *result;
};

/* Thread t of the block owns rows row0 .. row0 + R - 1 of the band and, at step s, computes the
 * cell of each of its rows on anti-diagonal s of the band: row k at column s - t*R - k. Every cell
 * of a step depends only on the previous two steps, so one barrier per step orders the block.
 * Cells outside the matrix (column < 0 or > nb, rows > na) are computed anyway on clamped data,
 * which keeps the loop free of branches: their values only ever flow into other outside cells,
 * and column 0 is forced to its boundary value. */
template <typename T, int R, bool DIM1>
__global__ void __launch_bounds__(WAVEFRONT_THREADS) wavefront_kernel(wavefront_args<T> w)
{
    __shared__ T xfer_d[2][WAVEFRONT_WARPS], xfer_m[2][WAVEFRONT_WARPS]; /* warp boundaries */
    __shared__ T top_d[WAVEFRONT_CHUNK], top_m[WAVEFRONT_CHUNK];         /* row above the band */
    __shared__ unsigned band_shared;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int na = (int)w.a.length, nb = (int)w.b.length;
    const size_t dim = w.a.dim;
    const T inf = infinity_of<T>();
    const T nu = w.nu;
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
        T a_val[R], a_t[R], a_del[R];
#pragma unroll
        for (int k = 0; k < R; k++) {
            int r = row0 + k <= na ? row0 + k : 0;
            a_val[k] = DIM1 ? w.a.values[r] : (T)0;
            a_t[k] = w.a.stamps[r];
            a_del[k] = w.a.delete_cost[r];
        }
        T d1[R], d2[R], m1[R], m2[R], b_val[R], b_t[R], b_del[R];
#pragma unroll
        for (int k = 0; k < R; k++) {
            d1[k] = d2[k] = inf;
            m1[k] = m2[k] = 0;
            b_val[k] = b_t[k] = b_del[k] = 0;
        }
        T above_prev_d = inf, above_prev_m = 0;
        const T *in_d = w.slot_d + (size_t)((band + 1) & 1) * (nb + 1);
        const T *in_m = w.slot_m + (size_t)((band + 1) & 1) * (nb + 1);
        T *out_d = w.slot_d + (size_t)(band & 1) * (nb + 1);
        T *out_m = w.slot_m + (size_t)(band & 1) * (nb + 1);
        const bool publisher = band + 1 < w.nbands && threadIdx.x == WAVEFRONT_THREADS - 1;
        const int c0_offset = -(int)threadIdx.x * R; /* column of row k = s + c0_offset - k */
        /* D(na, nb) is computed by this thread at a known step, if at all */
        const int result_k = na >= row0 && na < row0 + R ? na - row0 : -1;
        const int result_step = result_k < 0 ? -1 : nb - c0_offset + result_k;

        /* B data one and two steps ahead; indices clamped so loads never leave the array */
        T pf1_val, pf1_t, pf1_del, pf2_val, pf2_t, pf2_del;
        {
            int c = min(max(c0_offset, 0), nb);
            pf1_val = DIM1 ? w.b.values[c] : (T)0, pf1_t = w.b.stamps[c], pf1_del = w.b.delete_cost[c];
            c = min(max(c0_offset + 1, 0), nb);
            pf2_val = DIM1 ? w.b.values[c] : (T)0, pf2_t = w.b.stamps[c], pf2_del = w.b.delete_cost[c];
        }

        const int steps = nb + band_rows;
        for (int s = 0; s < steps; s++) {
            /* warp 0 fetches the row above the band, a chunk at a time */
            if (warp == 0 && (s & (WAVEFRONT_CHUNK - 1)) == 0 && s <= nb) {
                const int c = s + lane;
                T vd, vm;
                if (band == 0) {
                    vd = c == 0 ? (T)0 : inf; /* row 0: D[0][0] = 0, D[0][j] = inf */
                    vm = 0;
                } else {
                    const unsigned need = (unsigned)min(s + WAVEFRONT_CHUNK, nb + 1);
                    if (lane == 0)
                        while (load_acquire(&w.progress[band - 1]) < need)
                            __nanosleep(20);
                    __syncwarp();
                    vd = c <= nb ? __ldcg(in_d + c) : inf;
                    vm = c <= nb ? __ldcg(in_m + c) : (T)0;
                }
                top_d[lane] = vd;
                top_m[lane] = vm;
                __syncwarp();
            }
            /* the cell above this thread's first row: from the lane above, across a warp
             * boundary through shared memory, or from the row above the band */
            T above_d = __shfl_up_sync(FULL_MASK, d1[R - 1], 1);
            T above_m = __shfl_up_sync(FULL_MASK, m1[R - 1], 1);
            if (lane == 0) {
                if (warp == 0) {
                    above_d = top_d[s & (WAVEFRONT_CHUNK - 1)];
                    above_m = top_m[s & (WAVEFRONT_CHUNK - 1)];
                } else {
                    above_d = xfer_d[(s + 1) & 1][warp - 1];
                    above_m = xfer_m[(s + 1) & 1][warp - 1];
                }
            }

            /* B columns move one row down per step; the first row takes the next column */
#pragma unroll
            for (int k = R - 1; k > 0; k--) {
                b_val[k] = b_val[k - 1];
                b_t[k] = b_t[k - 1];
                b_del[k] = b_del[k - 1];
            }
            b_val[0] = pf1_val, b_t[0] = pf1_t, b_del[0] = pf1_del;
            pf1_val = pf2_val, pf1_t = pf2_t, pf1_del = pf2_del;
            const int c0 = s + c0_offset;
            {
                const int c = min(max(c0 + 2, 0), nb);
                pf2_val = DIM1 ? __ldg(w.b.values + c) : (T)0;
                pf2_t = __ldg(w.b.stamps + c);
                pf2_del = __ldg(w.b.delete_cost + c);
            }

            T d0[R], m0[R];
#pragma unroll
            for (int k = 0; k < R; k++) {
                const int c = c0 - k;
                const T up = k == 0 ? above_d : d1[k - 1];
                const T diag = k == 0 ? above_prev_d : d2[k - 1];
                const T before = k == 0 ? above_prev_m : m2[k - 1];
                T dist;
                if (DIM1)
                    dist = lp_distance(&a_val[k], &b_val[k], 1, degree);
                else
                    dist = lp_distance(w.a.values + (size_t)(row0 + k <= na ? row0 + k : 0) * dim,
                                       w.b.values + (size_t)min(max(c, 0), nb) * dim, dim, degree);
                T nm = match_part(dist, a_t[k], b_t[k], nu);
                T nd = twed_cell(up, d1[k], diag, a_del[k], b_del[k], nm, before);
                d0[k] = c == 0 ? inf : nd; /* column 0 below row 0 */
                m0[k] = c == 0 ? (T)0 : nm;
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
                xfer_d[s & 1][warp] = d0[R - 1];
                xfer_m[s & 1][warp] = m0[R - 1];
            }
            /* the band's bottom row goes to the next band */
            if (publisher) {
                const int cb = c0 - (R - 1);
                if (cb >= 0 && cb <= nb) {
                    __stcg(out_d + cb, d0[R - 1]);
                    __stcg(out_m + cb, m0[R - 1]);
                    if (((cb + 1) & (WAVEFRONT_CHUNK - 1)) == 0 || cb == nb) {
                        __threadfence();
                        store_release(&w.progress[band], (unsigned)(cb + 1));
                    }
                }
            }
            if (s == result_step) {
#pragma unroll
                for (int k = 0; k < R; k++)
                    if (k == result_k)
                        w.result->value = (double)d0[k];
            }
            __syncthreads();
        }
    }
}

/* Rows per thread: fewer rows mean more bands in flight (parallelism), more rows mean fewer
 * shuffles and hand-overs per cell (bench/results/gpu.md). WW_WAVEFRONT_ROWS overrides it. */
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

template <typename T, int R, bool DIM1>
static ww_status launch_wavefront(ww_cuda_state *s, wavefront_args<T> w)
{
    int per_sm = 0;
    WW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wavefront_kernel<T, R, DIM1>,
                                                              WAVEFRONT_THREADS, 0));
    if (per_sm < 1)
        per_sm = 1;
    size_t blocks = (size_t)per_sm * s->sm_count;
    if (blocks > w.nbands)
        blocks = w.nbands;
    wavefront_kernel<T, R, DIM1><<<(unsigned)blocks, WAVEFRONT_THREADS, 0, s->stream>>>(w);
    WW_CUDA_TRY(cudaGetLastError());
    return WW_OK;
}

template <typename T, int R>
static ww_status launch_wavefront_dim(ww_cuda_state *s, const wavefront_args<T> &w)
{
    return w.a.dim == 1 ? launch_wavefront<T, R, true>(s, w) : launch_wavefront<T, R, false>(s, w);
}

template <typename T>
static ww_status run_wavefront(ww_cuda_state *s, const device_series<T> &a, const device_series<T> &b, T nu,
                               int degree, pair_result *result)
{
    const size_t nb = b.length;
    const int R = wavefront_rows(a.length);
    const size_t band_rows = (size_t)WAVEFRONT_THREADS * R;
    const size_t nbands = (a.length + band_rows - 1) / band_rows;
    /* the kernel indexes rows and columns with int */
    if (a.length + band_rows >= (size_t)INT32_MAX || nb + band_rows >= (size_t)INT32_MAX)
        return WW_ERR_OVERFLOW;
    size_t slot_bytes = 4 * (nb + 1) * sizeof(T);
    size_t flag_bytes = (nbands + 1) * sizeof(unsigned);
    ww_status st = ww_device_reserve(&s->work, slot_bytes + flag_bytes + 256);
    if (st != WW_OK)
        return st;
    wavefront_args<T> w;
    w.a = a;
    w.b = b;
    w.nu = nu;
    w.degree = degree;
    w.slot_d = (T *)s->work.ptr;
    w.slot_m = w.slot_d + 2 * (nb + 1);
    w.progress = (unsigned *)((char *)s->work.ptr + slot_bytes);
    w.next_band = w.progress + nbands;
    w.nbands = (unsigned)nbands;
    w.result = result;
    WW_CUDA_TRY(cudaMemsetAsync(w.progress, 0, flag_bytes, s->stream));
    switch (R) {
    case 1: return launch_wavefront_dim<T, 1>(s, w);
    case 2: return launch_wavefront_dim<T, 2>(s, w);
    default: return launch_wavefront_dim<T, 4>(s, w);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* ww_twed on the GPU                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* Host series are packed into one pinned buffer and sent with one copy (small pairs are bound by
 * per-copy latency); device series are read in place. */
template <typename T>
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
        host_bytes += (in[k]->length * dim * sizeof(T) + 255) & ~(size_t)255;
        off[k][1] = host_bytes;
        if (in[k]->stamps)
            host_bytes += (in[k]->length * sizeof(T) + 255) & ~(size_t)255;
    }
    ww_status st = ww_pinned_reserve(s, host_bytes + sizeof(pair_result));
    if (st == WW_OK && host_bytes)
        st = ww_device_reserve(&s->input, host_bytes);
    size_t prep_elems = (sa->length + 1) * (dim + 2) + (sb->length + 1) * (dim + 2);
    if (st == WW_OK)
        st = ww_device_reserve(&s->prepared, prep_elems * sizeof(T));
    if (st == WW_OK)
        st = ww_device_reserve(&s->result, sizeof(pair_result));
    if (st != WW_OK)
        return st;

    const T *dev_values[2], *dev_stamps[2];
    char *pinned = (char *)s->pinned;
    for (int k = 0; k < 2; k++) {
        if (in[k]->memory == WW_HOST) {
            memcpy(pinned + off[k][0], in[k]->values, in[k]->length * dim * sizeof(T));
            dev_values[k] = (const T *)((char *)s->input.ptr + off[k][0]);
            dev_stamps[k] = NULL;
            if (in[k]->stamps) {
                memcpy(pinned + off[k][1], in[k]->stamps, in[k]->length * sizeof(T));
                dev_stamps[k] = (const T *)((char *)s->input.ptr + off[k][1]);
            }
        } else {
            dev_values[k] = (const T *)in[k]->values;
            dev_stamps[k] = (const T *)in[k]->stamps;
        }
    }
    if (host_bytes)
        WW_CUDA_TRY(cudaMemcpyAsync(s->input.ptr, pinned, host_bytes, cudaMemcpyHostToDevice, s->stream));

    pair_result *dres = (pair_result *)s->result.ptr;
    /* poison the result with NaN (all-ones bytes) so an engine that fails to write it is caught */
    WW_CUDA_TRY(cudaMemsetAsync(&dres->value, 0xff, sizeof dres->value, s->stream));
    WW_CUDA_TRY(cudaMemsetAsync(&dres->flags, 0, sizeof dres->flags, s->stream));
    device_series<T> ds[2];
    prepare_job<T> jobs[2];
    T *prep = (T *)s->prepared.ptr;
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
    unsigned pblocks = (unsigned)((longest + 255) / 256);
    if (pblocks > 4096)
        pblocks = 4096;
    prepare_kernel<T><<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], (T)p->nu, (T)p->lambda, p->degree,
                                                              &dres->flags);
    WW_CUDA_TRY(cudaGetLastError());

    /* TWED is symmetric: the longer series gives the rows, so more bands run at once. */
    const T nu = (T)p->nu;
    if (ctx->engine == WW_ENGINE_CUDA_DIAGONAL) {
        st = run_diagonal<T>(s, ds[0], ds[1], nu, p->degree, dres);
    } else {
        bool swap = ds[0].length < ds[1].length;
        st = run_wavefront<T>(s, swap ? ds[1] : ds[0], swap ? ds[0] : ds[1], nu, p->degree, dres);
    }
    if (st != WW_OK)
        return st;
    pair_result *hres = (pair_result *)(pinned + host_bytes);
    WW_CUDA_TRY(cudaMemcpyAsync(hres, dres, sizeof(pair_result), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    if (hres->flags & WW_FLAG_NONFINITE)
        return WW_ERR_NONFINITE;
    if (hres->flags & WW_FLAG_STAMPS)
        return WW_ERR_STAMPS;
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
    WW_CUDA_TRY(cudaSetDevice(s->device));
    ww_status st = a->dtype == WW_F32 ? run_pair<float>(ctx, a, b, p, out) : run_pair<double>(ctx, a, b, p, out);
    if (st == WW_ERR_CUDA || st == WW_ERR_DEVICE_MEMORY) {
        /* leave the stream usable for the next call */
        cudaStreamSynchronize(s->stream);
        cudaGetLastError();
    }
    /* backend auto: a GPU that cannot hold the problem hands host data to the CPU engine */
    if (st == WW_ERR_DEVICE_MEMORY && ctx->requested == WW_BACKEND_AUTO && a->memory == WW_HOST &&
        b->memory == WW_HOST)
        return ww_cpu_twed(ctx, a, b, p, out);
    return st;
}

ww_status ww_cuda_twed_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, const ww_twed_params *p,
                                void *out, const ww_pairwise_options *opt)
{
    /* The batched GPU engine is a later piece of work: host data is served by the CPU engine. */
    if (x->memory == WW_DEVICE || (y && y->memory == WW_DEVICE))
        return WW_ERR_MEMORY_KIND;
    return ww_cpu_twed_pairwise(ctx, x, y, p, out, opt);
}
