/* TWED of one pair on the GPU. Two engines share the preparation step and the recurrence:
 *
 *  diagonal   - the ITWED paper's scheme (what cuTWED does): three anti-diagonal buffers in global
 *               memory cycled by pointer, one kernel launch per anti-diagonal. Baseline only.
 *  wavefront  - the rows are cut into bands of 128*R rows, one thread block of 4 warps per band. A
 *               thread owns R consecutive rows and sweeps the columns in blocks of C, computing an
 *               R x C tile of the matrix in registers per step (the shape follows the pair's
 *               size: 3 x 1 to 8 x 1 while the bands fit on the GPU at once, 8 x 2 beyond;
 *               samples of up to 8 components sit in registers, wider ones are read per cell). Tiles
 *               pass down between lanes by warp shuffles, between warps through shared memory (a
 *               barrier every few steps), and between bands through one row buffer in global
 *               memory whose values carry a check of the band and call that wrote them, so the
 *               whole matrix is one launch and nothing waits on the host. Bands are taken in order
 *               from an atomic counter: a band only ever waits for an earlier band, which is
 *               already running, so any grid size is deadlock-free.
 */
#include "cuda_common.cuh"
#include "../common/settings.h"

#include <atomic>
#include <chrono>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FULL_MASK 0xffffffffu

/* ------------------------------------------------------------------------------------------ */
/* Preparation: user data (type T) -> sentinel-padded series with deletion costs, plus checks. */
/* ------------------------------------------------------------------------------------------ */

/* Prepared series are padded: SERIES_PAD_FRONT samples before sample 0, so that sample 1 (the
 * first of every column block) is 32-byte aligned for vector loads, and SERIES_PAD_BACK samples
 * after sample n, so that the last block never reads past the data. The padding lets the
 * wavefront engine compute whole tiles without a branch for the matrix's edges:
 *  - in front: zero values and stamps and an infinite deletion cost (sample 0's too: the recurrence
 *    never deletes it). Tiles before column 1 come out infinite: the boundary column D(i, 0).
 *  - behind: infinite values (so no match reaches them) and a zero deletion cost. A column (row)
 *    past the end then repeats the last one exactly: D(i, nb + 1) = min(D(i, nb), D(i - 1, nb + 1)
 *    + delete_a(i)), and the second term is never smaller, since the recurrence already took every
 *    chain of deletions down column nb, rounding included. So D(na, nb) can be read at any row
 *    >= na and column >= nb, e.g. at the last cell of the last tile. (A match between two padded
 *    samples is inf - inf = NaN, which twed_cell's comparisons drop: it only ever compares the
 *    match candidate as `match < m`.) */
#define SERIES_PAD_FRONT 3
#define SERIES_PAD_BACK 8

template <typename Tin> struct prepare_job {
    const Tin *values, *stamps; /* user layout; stamps may be NULL */
    size_t n, dim;
    size_t width; /* of a prepared sample: dim, or more with zeros after (see prepared_width) */
    double *out_values, *out_stamps, *out_delete; /* sample 0 of each */
};

/* Prepared samples of 2 to 8 components are zero-padded to 2, 4 or 8, so that the wavefront engine
 * can hold them in registers with a width known at compile time. The zeros change no distance:
 * each adds |0 - 0| = 0 to a sum of non-negative terms, exactly. */
static size_t prepared_width(size_t dim)
{
    return dim <= 2 ? dim : dim <= 4 ? 4 : dim <= 8 ? 8 : dim;
}

/* Values and stamps to double with sentinel sample 0; non-finite values and decreasing stamps raise
 * flags. blockIdx.y selects the series (0 = a, 1 = b). For dim 1 the deletion costs too (small
 * pairs pay for every launch): the thread of sample s converts sample s - 1 again, the same
 * conversion, so the same value, and the distance of two samples is |x - y| in every engine. */
template <typename Tin>
__global__ void prepare_values_kernel(prepare_job<Tin> ja, prepare_job<Tin> jb, double nu, double lambda, int *flags)
{
    const prepare_job<Tin> &j = blockIdx.y == 0 ? ja : jb;
    const size_t dim = j.dim, width = j.width;
    for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s <= j.n + SERIES_PAD_BACK;
         s += (size_t)gridDim.x * blockDim.x) {
        double *dst = j.out_values + s * width;
        if (s > j.n) { /* padding behind: see SERIES_PAD_BACK */
            for (size_t k = 0; k < width; k++)
                dst[k] = infinity_of<double>();
            j.out_stamps[s] = j.stamps ? (double)j.stamps[j.n - 1] : (double)j.n;
            if (dim == 1)
                j.out_delete[s] = 0;
            continue;
        }
        if (s == 0) { /* the sentinel and the front padding */
            for (int e = 0; e <= SERIES_PAD_FRONT; e++) {
                for (size_t k = 0; k < width; k++)
                    dst[k - e * width] = 0;
                j.out_stamps[-e] = 0;
                if (dim == 1)
                    j.out_delete[-e] = infinity_of<double>();
            }
            continue;
        }
        const Tin *src = j.values + (s - 1) * dim;
        int bad = 0;
        for (size_t k = 0; k < dim; k++) {
            double v = (double)src[k];
            bad |= !isfinite(v);
            dst[k] = v;
        }
        for (size_t k = dim; k < width; k++)
            dst[k] = 0;
        double t = j.stamps ? (double)j.stamps[s - 1] : (double)s;
        if (j.stamps && (!stamp_ok(j.stamps[s - 1]) || (s >= 2 && t < (double)j.stamps[s - 2])))
            bad |= WW_FLAG_STAMPS;
        j.out_stamps[s] = t;
        if (bad)
            atomicOr(flags, bad);
        if (dim == 1) {
            const double prev = s >= 2 ? (double)src[-1] : 0.0;
            const double t_prev = s >= 2 ? (j.stamps ? (double)j.stamps[s - 2] : (double)(s - 1)) : 0.0;
            j.out_delete[s] = delete_cost(lp_distance(dst, &prev, 1, 2), t, t_prev, nu, lambda);
        }
    }
}

/* Deletion costs for dim > 1, from the converted values (a second launch: sample s needs sample
 * s - 1). */
template <typename Tin> __global__ void prepare_costs_kernel(prepare_job<Tin> ja, prepare_job<Tin> jb, double nu,
                                                             double lambda, int degree)
{
    const prepare_job<Tin> &j = blockIdx.y == 0 ? ja : jb;
    const size_t width = j.width; /* the zeros after dim change no distance (prepared_width) */
    for (size_t s = blockIdx.x * (size_t)blockDim.x + threadIdx.x; s <= j.n + SERIES_PAD_BACK;
         s += (size_t)gridDim.x * blockDim.x) {
        if (s == 0) {
            for (int e = 0; e <= SERIES_PAD_FRONT; e++)
                j.out_delete[-e] = infinity_of<double>();
            continue;
        }
        if (s > j.n) {
            j.out_delete[s] = 0;
            continue;
        }
        const double *x = j.out_values + s * width;
        j.out_delete[s] = delete_cost(lp_distance(x, x - width, width, degree), j.out_stamps[s], j.out_stamps[s - 1], nu,
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

/* A call's result and its state on the device. It travels to the device with the input series, in
 * the same copy: value NaN (the poison: an engine that fails to write it is caught), no flags, the
 * band dispenser at 0. */
struct pair_result {
    double value;
    int flags;
    unsigned next_band; /* the wavefront engine's band dispenser */
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
/* The wavefront engine: register tiles, one thread block per band of rows.                    */
/* ------------------------------------------------------------------------------------------ */

#define WAVEFRONT_WARPS 4 /* one warp per scheduler of a multiprocessor; a band has 128 * R rows */
#define WAVEFRONT_THREADS (32 * WAVEFRONT_WARPS)
/* A warp runs 31 + SYNC steps behind the warp above, SYNC being the steps between two block
 * barriers (a template parameter: small tiles want rarer barriers). The warps' bottom rows wait in
 * a ring of 2 * SYNC blocks at least: block j + slots is written after block j was read. */
#define XFER_SLOTS(sync) ((sync) > 8 ? 2 * (sync) : 16)
/* blocks of the row above the band fetched at a time: a stage of 16 is fetched a stage ahead and
 * checked half a stage later (SYNC < 16), or fetched an interval ahead and checked just before use
 * (SYNC = 16) */
#define TOP_STAGE 16
#define TOP_SLOTS 32

/* The bottom row of a band travels to the next band through global memory as (value, check)
 * pairs, check = id ^ bits(value), where id numbers the band and the call. A reader takes a pair
 * only when its check matches the id it waits for: a value of another band or call, a torn read
 * (half old, half new) or never-written memory all fail it, so no flag, fence or reset is needed,
 * and one buffer serves every band: band b + 1 overwrites column block j only after it has
 * computed it, hence after reading band b's value there. */
struct handover {
    double value;
    unsigned long long check;
};

__device__ __forceinline__ unsigned long long handover_check(double v, unsigned long long id)
{
    return id ^ (unsigned long long)__double_as_longlong(v);
}

struct wavefront_args {
    device_series<double> a, b; /* a: rows (cut into bands), b: columns (cut into blocks of C) */
    double nu;
    int degree;
    int column_blocks;
    handover *rows;          /* column_blocks * C: the last published bottom row of each column */
    unsigned long long call; /* ids of this call's bands: call << 24 | band (bands < 2^23) */
    unsigned *next_band;     /* band dispenser */
    unsigned nbands;
    pair_result *result;
};

/* C consecutive values from 16-byte aligned memory (the prepared layout guarantees it). */
template <int C> __device__ __forceinline__ void load_block(const double *p, double *v)
{
    if constexpr (C == 1) {
        v[0] = __ldg(p);
    } else {
#pragma unroll
        for (int c = 0; c < C; c += 2) {
            const double2 x = __ldg((const double2 *)(p + c));
            v[c] = x.x;
            v[c + 1] = x.y;
        }
    }
}

/* The values of columns col0 .. col0 + C - 1 into registers: VD = 1 as one block, VD > 1 as C
 * vectors of VD (16-byte aligned: sample 0 is, and VD is even), VD = 0 (read per cell) none. */
template <int C, int VD>
__device__ __forceinline__ void load_values(const double *values, int col0, double (&v)[C][VD > 0 ? VD : 1])
{
    if constexpr (VD == 1) {
        double flat[C];
        load_block<C>(values + col0, flat);
#pragma unroll
        for (int c = 0; c < C; c++)
            v[c][0] = flat[c];
    } else if constexpr (VD > 1) {
#pragma unroll
        for (int c = 0; c < C; c++)
#pragma unroll
            for (int k = 0; k < VD; k += 2) {
                const double2 x = __ldg((const double2 *)(values + (ptrdiff_t)(col0 + c) * VD + k));
                v[c][k] = x.x;
                v[c][k + 1] = x.y;
            }
    }
}

/* Thread t of a band owns R consecutive rows and sweeps the columns in blocks of C: at each step it
 * computes an R x C tile of D in registers (R + C - 1 dependent levels, up to min(R, C) cells
 * independent at each). Small pairs are bound by the latency of a step and want narrow tiles and
 * rare barriers; large ones by the work of a step and want wider tiles (see dim1_shapes).
 * A tile needs the tile above it (same columns, one step earlier): inside a warp it comes from the
 * lane above by shuffles; lane 0 reads it from shared memory, where lane 31 of the warp above left
 * it, or for warp 0 from the row above the band. Lane l of warp w handles column block
 * S - l - w * WARP_SKEW at block step S. Warps meet at a barrier every SYNC steps, so the warp
 * above must be SYNC steps ahead of the natural pipeline: WARP_SKEW = 31 + SYNC.
 * Global memory is read only for the columns (vector loads of the block's C values, or C sample
 * vectors of VD components, L1 hits: all lanes walk the same series; VD = 0 reads each cell's two
 * vectors of any width instead) and, by warp 0, for the row above the band: fetched in stages of
 * TOP_STAGE blocks, one per lane, ahead of use, so that their latency is hidden; warp 0 waits
 * only if the band above is really behind.
 * Tiles outside the matrix are computed anyway, which keeps the loop free of branches: before
 * column 1 they read the padding in front of sample 0, whose infinite deletion costs make them
 * infinite (the boundary column, see SERIES_PAD_FRONT); past the last column or row they read
 * clamped data and their values only flow into other outside cells. */
template <int R, int C, int SYNC, int VD, int DEG>
__global__ void __launch_bounds__(WAVEFRONT_THREADS, 1) wavefront_kernel(wavefront_args w)
{
    constexpr int VW = VD > 0 ? VD : 1; /* registers per sample value (VD = 0: read from L1) */
    static_assert(SYNC <= TOP_STAGE && (SYNC & (SYNC - 1)) == 0, "SYNC: a power of two up to TOP_STAGE");
    constexpr int WARP_SKEW = 31 + SYNC, SLOTS = XFER_SLOTS(SYNC);
    __shared__ double xfer[WAVEFRONT_WARPS][SLOTS][C]; /* warps' bottom rows, per block */
    __shared__ double top[TOP_SLOTS][C];               /* the row above the band */
    __shared__ unsigned band_shared;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int na = (int)w.a.length, blocks = w.column_blocks;
    const size_t dim = w.a.dim;
    const double inf = infinity_of<double>();
    const double nu = w.nu;
    const int degree = w.degree;
    const int steps = blocks + (WAVEFRONT_WARPS - 1) * WARP_SKEW + 31;

    for (;;) {
        if (threadIdx.x == 0)
            band_shared = atomicAdd(w.next_band, 1u);
        __syncthreads();
        const unsigned band = band_shared;
        __syncthreads();
        if (band >= w.nbands)
            return;

        /* rows row0 - 1 .. row0 + R - 1: the row above this thread's first, then its own */
        const int row0 = (int)band * (WAVEFRONT_THREADS * R) + 1 + (int)threadIdx.x * R;
        double a_val[R + 1][VW], a_t[R + 1], a_del[R];
        int a_row[R + 1];
#pragma unroll
        for (int r = 0; r <= R; r++) {
            a_row[r] = min(row0 - 1 + r, na + 1); /* rows past na: the padding, which repeats row na */
#pragma unroll
            for (int k = 0; k < VW; k++)
                a_val[r][k] = VD > 0 ? w.a.values[(size_t)a_row[r] * VW + k] : 0.0;
            a_t[r] = w.a.stamps[a_row[r]];
            if (r > 0)
                a_del[r - 1] = w.a.delete_cost[a_row[r]];
        }
        /* carried from the previous tile: its last column of D and of match parts, and D of the
         * row above at that column */
        double d_left[R], m_left[R + 1], d_bottom[C];
        double corner = row0 == 1 ? 0.0 : inf; /* D(0, 0) above-left of the first tile */
#pragma unroll
        for (int k = 0; k < R; k++)
            d_left[k] = inf;
#pragma unroll
        for (int r = 0; r <= R; r++)
            m_left[r] = 0;
#pragma unroll
        for (int c = 0; c < C; c++)
            d_bottom[c] = inf;
        /* D(na, nb) = the last cell of the last tile of the last band (see SERIES_PAD_BACK) */
        const bool result_thread = band + 1 == w.nbands && threadIdx.x == WAVEFRONT_THREADS - 1;
        const int skew = warp * WARP_SKEW + lane; /* this thread's block at step S is S - skew */
        const unsigned long long in_id = (w.call << 24) | (band - 1), out_id = (w.call << 24) | band;
        handover *const publish = band + 1 < w.nbands && threadIdx.x == WAVEFRONT_THREADS - 1 ? w.rows : NULL;
        /* lane 0 of warp w > 0 reads the warp above's blocks < 0 before that warp has written them:
         * they are outside the matrix, infinite */
        for (int k = threadIdx.x; k < WAVEFRONT_WARPS * SLOTS * C; k += WAVEFRONT_THREADS)
            (&xfer[0][0][0])[k] = inf;

        /* warp 0: the row above the band, TOP_STAGE blocks per stage (one block per lane) */
        handover staged[C];
        auto top_fetch = [&](int first) {
            const int blk = first + lane;
            if (band == 0 || lane >= TOP_STAGE || blk >= blocks)
                return;
#pragma unroll
            for (int c = 0; c < C; c++) {
                const double2 x = __ldcg((const double2 *)(w.rows + (size_t)blk * C + c));
                staged[c].value = x.x;
                staged[c].check = (unsigned long long)__double_as_longlong(x.y);
            }
        };
        auto top_commit = [&](int first) { /* waits for the band above if it is behind */
            const int blk = first + lane;
            if (lane < TOP_STAGE) {
                double *dst = top[blk & (TOP_SLOTS - 1)];
                if (band == 0 || blk >= blocks) { /* row 0 of the matrix, or past the last block */
#pragma unroll
                    for (int c = 0; c < C; c++)
                        dst[c] = inf;
                } else {
                    for (;;) {
                        bool ready = true;
#pragma unroll
                        for (int c = 0; c < C; c++)
                            ready &= staged[c].check == handover_check(staged[c].value, in_id);
                        if (ready)
                            break;
                        __nanosleep(32);
                        top_fetch(first);
                    }
#pragma unroll
                    for (int c = 0; c < C; c++)
                        dst[c] = staged[c].value;
                }
            }
            __syncwarp();
        };
        if (warp == 0) {
            top_fetch(0);
            top_commit(0);
            top_fetch(TOP_STAGE);
        }
        __syncthreads();

        /* the columns of a tile are loaded one step ahead, so that their latency is hidden */
        auto tile_columns = [&](int j) { /* first column of block j: blocks < 0 read the padding */
            return 1 + min(max(j, -1), blocks - 1) * C;
        };
        double next_val[C][VW], next_t[C], next_del[C];
        {
            const int col0 = tile_columns(-skew);
            load_values<C, VD>(w.b.values, col0, next_val);
            load_block<C>(w.b.stamps + col0, next_t);
            load_block<C>(w.b.delete_cost + col0, next_del);
        }
        for (int s0 = 0; s0 < steps; s0 += SYNC) {
            /* the row above the band: each stage is fetched ahead and checked (a wait only if the
             * band above is behind) before lane 0 needs it (see TOP_STAGE) */
            if (warp == 0 && TOP_STAGE > SYNC) {
                if ((s0 & (TOP_STAGE - 1)) == TOP_STAGE / 2)
                    top_commit(s0 + TOP_STAGE / 2);
                else if ((s0 & (TOP_STAGE - 1)) == 0 && s0 > 0)
                    top_fetch(s0 + TOP_STAGE);
            } else if (warp == 0 && s0 > 0) {
                top_commit(s0);
                top_fetch(s0 + TOP_STAGE);
            }
#pragma unroll
            for (int i = 0; i < SYNC; i++) {
                const int j = s0 + i - skew;
                const int col0 = tile_columns(j);
                double b_val[C][VW], b_t[C], b_del[C];
#pragma unroll
                for (int c = 0; c < C; c++) {
#pragma unroll
                    for (int k = 0; k < VW; k++)
                        b_val[c][k] = next_val[c][k];
                    b_t[c] = next_t[c];
                    b_del[c] = next_del[c];
                }
                {
                    const int next0 = tile_columns(j + 1);
                    load_values<C, VD>(w.b.values, next0, next_val);
                    load_block<C>(w.b.stamps + next0, next_t);
                    load_block<C>(w.b.delete_cost + next0, next_del);
                }

                double above[C]; /* D of the row above this tile */
#pragma unroll
                for (int c = 0; c < C; c++)
                    above[c] = __shfl_up_sync(FULL_MASK, d_bottom[c], 1);
                { /* lane 0: from shared memory (every lane reads the same address: a broadcast,
                   * and no branch, which would split the unrolled steps' basic block) */
                    const double *src = warp == 0 ? top[j & (TOP_SLOTS - 1)] : xfer[warp - 1][j & (SLOTS - 1)];
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const double edge = src[c];
                        above[c] = lane == 0 ? edge : above[c];
                    }
                }

                /* match parts of rows row0 - 1 .. row0 + R - 1 against the tile's columns */
                double mm[R + 1][C];
#pragma unroll
                for (int r = 0; r <= R; r++)
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        double dist;
                        if constexpr (VD == 1)
                            dist = fabs(a_val[r][0] - b_val[c][0]);
                        else if constexpr (VD > 1) /* the shared formula, unrolled over registers */
                            dist = lp_distance(a_val[r], b_val[c], (size_t)VD, DEG);
                        else
                            dist = lp_distance(w.a.values + (size_t)a_row[r] * dim,
                                               w.b.values + (ptrdiff_t)(col0 + c) * (ptrdiff_t)dim, dim, degree);
                        mm[r][c] = match_part(dist, a_t[r], b_t[c], nu);
                    }
                double d[R][C];
#pragma unroll
                for (int k = 0; k < R; k++)
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const double up = k == 0 ? above[c] : d[k - 1][c];
                        const double left = c == 0 ? d_left[k] : d[k][c - 1];
                        const double diag = k == 0 ? (c == 0 ? corner : above[c - 1]) : (c == 0 ? d_left[k - 1] : d[k - 1][c - 1]);
                        const double before = c == 0 ? m_left[k] : mm[k][c - 1];
                        /* the input computed last is taken last: `up` in the first column (from
                         * the lane above, or the row above in this tile), `left` in the rest of
                         * the first row; inside the tile both come from the same level */
                        if (c == 0)
                            d[k][c] = ww_twed_cell_up_last_f64(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                        else if (k == 0)
                            d[k][c] = ww_twed_cell_left_last_f64(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                        else
                            d[k][c] = twed_cell(up, left, diag, a_del[k], b_del[c], mm[k + 1][c], before);
                    }
#pragma unroll
                for (int k = 0; k < R; k++)
                    d_left[k] = d[k][C - 1];
#pragma unroll
                for (int r = 0; r <= R; r++)
                    m_left[r] = mm[r][C - 1];
                corner = above[C - 1];
#pragma unroll
                for (int c = 0; c < C; c++)
                    d_bottom[c] = d[R - 1][c];

                if (lane == 31 && warp < WAVEFRONT_WARPS - 1) {
#pragma unroll
                    for (int c = 0; c < C; c++)
                        xfer[warp][j & (SLOTS - 1)][c] = d[R - 1][c];
                }
                if (publish && j >= 0 && j < blocks) {
#pragma unroll
                    for (int c = 0; c < C; c++) {
                        const double v = d[R - 1][c];
                        __stcg((double2 *)(publish + (size_t)j * C + c),
                               make_double2(v, __longlong_as_double((long long)handover_check(v, out_id))));
                    }
                }
                if (result_thread && j == blocks - 1)
                    w.result->value = d[R - 1][C - 1];
            }
            __syncthreads();
        }
    }
}

typedef ww_status (*wavefront_launcher)(ww_cuda_state *s, const wavefront_args &w);

template <int R, int C, int SYNC, int VD, int DEG>
static ww_status launch_wavefront(ww_cuda_state *s, const wavefront_args &w)
{
    size_t grid = w.nbands;
    if (grid > (size_t)s->sm_count) { /* more bands than multiprocessors: as many as fit at once */
        int per_sm = 0;
        WW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wavefront_kernel<R, C, SYNC, VD, DEG>,
                                                                  WAVEFRONT_THREADS, 0));
        if (per_sm < 1)
            per_sm = 1;
        if (grid > (size_t)per_sm * s->sm_count)
            grid = (size_t)per_sm * s->sm_count;
    }
    wavefront_kernel<R, C, SYNC, VD, DEG><<<(unsigned)grid, WAVEFRONT_THREADS, 0, s->stream>>>(w);
    WW_CUDA_TRY(cudaGetLastError());
    return WW_OK;
}

/* A tile shape: R rows x C columns per thread, SYNC steps between two barriers, and its kernels by
 * the kind of sample: dim 1; vectors of 2, 4 or 8 (zero-padded, prepared_width) in registers, for
 * degree 1 or 2; anything else read from L1 per cell. NULL: not built for that kind (registers). */
struct wavefront_shape {
    int rows, cols, sync;
    wavefront_launcher dim1, vec[3][2], any;
};

/* By the rows of the pair (bench/results/gpu.md has the sweeps that chose them). One thread
 * block runs a band of 128 * R rows on one multiprocessor, and the critical path is about
 * n / C + (n / R) (31 + SYNC) / 32 steps: narrow tiles (C = 1) and rare barriers make a step short
 * enough to win while the bands fit on the GPU at once, so the smallest R that fits them is best;
 * past two bands per multiprocessor the GPU is full and wider tiles, more work per step, win. */
static const wavefront_shape wavefront_shapes[] = {
    /* bands <= multiprocessors (vectors in registers: 4 x 1 was faster at every size measured) */
    {3, 1, 16, launch_wavefront<3, 1, 16, 1, 0>, {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}},
     launch_wavefront<3, 1, 16, 0, 0>},
    /* the same */
    {4,
     1,
     16,
     launch_wavefront<4, 1, 16, 1, 0>,
     {{launch_wavefront<4, 1, 16, 2, 1>, launch_wavefront<4, 1, 16, 2, 2>},
      {launch_wavefront<4, 1, 16, 4, 1>, launch_wavefront<4, 1, 16, 4, 2>},
      {launch_wavefront<4, 1, 16, 8, 1>, launch_wavefront<4, 1, 16, 8, 2>}},
     launch_wavefront<4, 1, 16, 0, 0>},
    /* bands <= 2 x multiprocessors, and beyond for vectors (vectors of 8 would spill) */
    {8,
     1,
     16,
     launch_wavefront<8, 1, 16, 1, 0>,
     {{launch_wavefront<8, 1, 16, 2, 1>, launch_wavefront<8, 1, 16, 2, 2>},
      {launch_wavefront<8, 1, 16, 4, 1>, launch_wavefront<8, 1, 16, 4, 2>},
      {NULL, NULL}},
     launch_wavefront<8, 1, 16, 0, 0>},
    /* more, dim 1 */
    {8, 2, 8, launch_wavefront<8, 2, 8, 1, 0>, {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}}, NULL},
    /* the shape of earlier versions, for the benchmark */
    {4, 4, 4, launch_wavefront<4, 4, 4, 1, 0>, {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}}, NULL},
};
#define POLICY_SHAPES 4 /* the first four take part in the choice by size */

/* A shape's kernel for samples of `width` prepared components (prepared_width) and `degree`. */
static wavefront_launcher wavefront_kernel_for(const wavefront_shape &k, size_t width, int degree)
{
    if (width == 1)
        return k.dim1;
    const int v = width == 2 ? 0 : width == 4 ? 1 : width == 8 ? 2 : -1;
    if (v >= 0 && (degree == 1 || degree == 2))
        return k.vec[v][degree - 1];
    return k.any;
}

/* The shape for a pair whose longer series has `rows` samples, and its kernel (*launch).
 * WW_WAVEFRONT_TILE ("RxCsSYNC", one of wavefront_shapes) overrides the choice, for benchmarks and
 * tests. */
static const wavefront_shape *wavefront_pick(size_t width, int degree, size_t rows, int sm_count,
                                             wavefront_launcher *launch)
{
    const char *env = ww_setting_value(WW_SETTING_WAVEFRONT_TILE);
    if (env && *env) {
        int r = 0, c = 0, sync = 0, used = 0;
        if (sscanf(env, "%3dx%3ds%3d%n", &r, &c, &sync, &used) == 3 && env[used] == '\0')
            for (const wavefront_shape &k : wavefront_shapes)
                if (k.rows == r && k.cols == c && k.sync == sync && (*launch = wavefront_kernel_for(k, width, degree)))
                    return &k;
        static std::atomic<bool> warned(false); /* a benchmark must not measure another shape unawares */
        if (!warned.exchange(true))
            fprintf(stderr,
                    "wavewarp: WW_WAVEFRONT_TILE=%s names no tile shape built for these samples (see "
                    "wavefront_shapes in twed_pair.cu); the shape is chosen by size\n",
                    env);
    }
    const size_t sms = sm_count > 0 ? (size_t)sm_count : 1;
    const wavefront_shape *last = NULL;
    for (int k = 0; k < POLICY_SHAPES; k++) {
        const wavefront_shape &shape = wavefront_shapes[k];
        if (!wavefront_kernel_for(shape, width, degree))
            continue;
        last = &shape;
        const size_t band_rows = (size_t)WAVEFRONT_THREADS * shape.rows;
        const size_t fit = shape.rows == 8 ? 2 * sms : sms;
        if ((rows + band_rows - 1) / band_rows <= fit)
            break;
    }
    *launch = wavefront_kernel_for(*last, width, degree);
    return last;
}

/* Numbers the calls of the whole process (not of a context: buffers move between contexts
 * through the allocator), starting from a value that differs between processes, so that a
 * hand-over pair left in memory by any earlier call never carries the id a band waits for. 40
 * bits: never wraps in practice. */
static unsigned long long next_wavefront_call(void)
{
    static std::atomic<unsigned long long> counter(
        ((unsigned long long)std::chrono::steady_clock::now().time_since_epoch().count() * 0x9E3779B97F4A7C15ull) >> 25);
    unsigned long long call;
    do
        call = ++counter & ((1ull << 40) - 1);
    while (call == 0); /* zero (cleared memory) must never be a valid id's call */
    return call;
}

static ww_status run_wavefront(ww_cuda_state *s, const device_series<double> &a, const device_series<double> &b,
                               double nu, int degree, pair_result *result)
{
    wavefront_launcher launch = NULL;
    const wavefront_shape *shape = wavefront_pick(a.dim, degree, a.length, s->sm_count, &launch);
    const size_t band_rows = (size_t)WAVEFRONT_THREADS * shape->rows;
    const size_t nbands = (a.length + band_rows - 1) / band_rows;
    const size_t blocks = (b.length + shape->cols - 1) / shape->cols;
    /* the kernel indexes rows, columns and steps with int */
    if (a.length + 2 * band_rows >= (size_t)INT32_MAX || b.length + 1024 >= (size_t)INT32_MAX)
        return WW_ERR_OVERFLOW;
    const size_t row_bytes = blocks * shape->cols * sizeof(handover);
    const size_t had = s->work.bytes;
    ww_status st = ww_device_reserve(&s->work, row_bytes);
    if (st != WW_OK)
        return st;
    /* a new buffer may hold another context's hand-over pairs: zeros fail every check */
    if (s->work.bytes != had)
        WW_CUDA_TRY(cudaMemsetAsync(s->work.ptr, 0, s->work.bytes, s->stream));
    wavefront_args w;
    w.a = a;
    w.b = b;
    w.nu = nu;
    w.degree = degree;
    w.column_blocks = (int)blocks;
    w.rows = (handover *)s->work.ptr;
    w.call = next_wavefront_call();
    w.next_band = &result->next_band;
    w.nbands = (unsigned)nbands;
    w.result = result;
    return launch(s, w);
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
    const size_t dim = sa->dim, width = prepared_width(dim);
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
    /* pinned: the inputs, the result's initial state, the result read back */
    const size_t result_at = host_bytes, readback_at = host_bytes + 256;
    ww_status st = ww_pinned_reserve(&s->pinned, &s->pinned_bytes, readback_at + sizeof(pair_result));
    if (st == WW_OK)
        st = ww_device_reserve(&s->input, result_at + sizeof(pair_result));
    /* each prepared array holds the padded samples and is rounded up to 4 doubles (32 bytes) */
    size_t padded[2], prep_elems = 0;
    for (int k = 0; k < 2; k++) {
        padded[k] = (SERIES_PAD_FRONT + in[k]->length + 1 + SERIES_PAD_BACK + 3) & ~(size_t)3;
        prep_elems += padded[k] * (width + 2);
    }
    if (st == WW_OK)
        st = ww_device_reserve(&s->prepared, prep_elems * sizeof(double));
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
    pair_result *init = (pair_result *)(pinned + result_at), *dres = (pair_result *)((char *)s->input.ptr + result_at);
    init->value = NAN;
    init->flags = 0;
    init->next_band = 0;
    /* one copy: the host series (if any) and the result's initial state behind them */
    WW_CUDA_TRY(cudaMemcpyAsync(s->input.ptr, pinned, result_at + sizeof(pair_result), cudaMemcpyHostToDevice,
                                s->stream));
    device_series<double> ds[2];
    prepare_job<Tin> jobs[2];
    double *prep = (double *)s->prepared.ptr;
    for (int k = 0; k < 2; k++) {
        size_t n = in[k]->length;
        jobs[k].values = dev_values[k];
        jobs[k].stamps = dev_stamps[k];
        jobs[k].n = n;
        jobs[k].dim = dim;
        jobs[k].width = width;
        jobs[k].out_values = prep + SERIES_PAD_FRONT * width;
        jobs[k].out_stamps = prep + padded[k] * width + SERIES_PAD_FRONT;
        jobs[k].out_delete = jobs[k].out_stamps + padded[k];
        ds[k].values = jobs[k].out_values;
        ds[k].stamps = jobs[k].out_stamps;
        ds[k].delete_cost = jobs[k].out_delete;
        ds[k].length = n;
        ds[k].dim = width; /* the engines see the prepared samples */
        prep += padded[k] * (width + 2);
    }
    size_t longest = sa->length > sb->length ? sa->length : sb->length;
    unsigned pblocks = (unsigned)((longest + 256) / 256);
    if (pblocks > 4096)
        pblocks = 4096;
    prepare_values_kernel<Tin><<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], p->nu, p->lambda, &dres->flags);
    if (dim > 1)
        prepare_costs_kernel<Tin>
            <<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], p->nu, p->lambda, p->degree);
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
    pair_result *hres = (pair_result *)(pinned + readback_at);
    WW_CUDA_TRY(cudaMemcpyAsync(hres, dres, sizeof(pair_result), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    if ((st = ww_flags_status(hres->flags)) != WW_OK)
        return st;
    if (isnan(hres->value)) /* still the poison: no engine wrote the result */
        return WW_ERR_CUDA;
    *out = hres->value;
    return WW_OK;
}

ww_status ww_cuda_twed_pair(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p, double *out)
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
    /* the GPU engines index rows and columns with int (the registry sends longer pairs of host
     * data to the CPU) */
    if (a->length >= WW_CUDA_MAX_LENGTH || b->length >= WW_CUDA_MAX_LENGTH)
        return WW_ERR_OVERFLOW;
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
    return st;
}

ww_status ww_cuda_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *out)
{
    if (m->kind != WW_MEASURE_TWED) /* the registry routes only TWED here for now */
        return WW_ERR_UNSUPPORTED;
    return ww_cuda_twed_pair(ctx, a, b, &m->params.twed, out);
}
