/* Launches of the matrix engine's kernels for one rectangle's chunk: which kernel computes the
 * thread, warp and block strategies for the samples at hand (the staged kernel, the thread kernel
 * by dim, dim 1 or any), for a measure functor M, output type Tout and window (WIN). The instances
 * are compiled in src/cuda/instances/ (WW_PAIRWISE_INSTANCE). */
#ifndef WW_CUDA_PAIRWISE_LAUNCH_CUH
#define WW_CUDA_PAIRWISE_LAUNCH_CUH

#include "pairwise_kernels.cuh"
#include "../common/settings.h"

#include <stdlib.h>

/* What every kernel of a chunk is given besides its sets: the output block, the measure and its
 * window. */
template <class M> struct chunk_args {
    block_geometry g;
    M m;
    window_spec win;
    int band_radius; /* every pair's window radius when all series have one length (-1: not so) */
};

/* Knobs of the staged kernel for tests and benchmarks: WW_STAGED=0 turns it off (the thread
 * kernel by mode instead), WW_STAGED_ROWS=1|2 sets the rows per pass, WW_STAGED_THREADS the block
 * size (32, 64 or 128), WW_STAGED_LANES=1|2 the lanes per pair (default: chosen by staged_lanes). */
static inline int staged_knob(ww_setting setting, int fallback)
{
    const char *v = ww_setting_value(setting);
    return v ? atoi(v) : fallback;
}

template <class M, typename Tout, int DIM_CAP, bool WIN>
void launch_staged(int rows, int lanes, dim3 blocks, unsigned threads, size_t bytes, cudaStream_t stream,
                          const device_set<typename M::real> &dx, const device_set<typename M::real> &dy,
                          const chunk_args<M> &k, pair_map map, int cap, Tout *d)
{
    if (rows == 1)
        pairs_staged_kernel<M, Tout, DIM_CAP, 1, WIN, 1><<<blocks, threads, bytes, stream>>>(dx, dy, k.g, k.m, k.win,
                                                                                             map, cap, d);
    else if (lanes == 2)
        pairs_staged_kernel<M, Tout, DIM_CAP, 2, WIN, 2><<<blocks, threads, bytes, stream>>>(dx, dy, k.g, k.m, k.win,
                                                                                             map, cap, d);
    else
        pairs_staged_kernel<M, Tout, DIM_CAP, 2, WIN, 1><<<blocks, threads, bytes, stream>>>(dx, dy, k.g, k.m, k.win,
                                                                                             map, cap, d);
}

/* Lanes per pair of the staged kernel: 2 for double data when the launch's pairs are too few to
 * keep the GPU's schedulers busy one lane each (fewer than STAGED_SPLIT_PAIRS_PER_SM per
 * multiprocessor: one query against an index), the norm's degree is 1 or 2 (the split sums) and the
 * measure keeps one row buffer (two per lane would halve the blocks that fit). Float data keeps one
 * lane: its vectors take half the registers, and two lanes were slower. Measured on an H200 with
 * one query against 60,000 series of 28 samples in R^28: bench/results/gpu-dtw.md. */
#define STAGED_SPLIT_PAIRS_PER_SM 1024
template <class M> static int staged_lanes(const M &m, size_t pairs, int rows)
{
    if (rows != 2 || (m.norm_p() != 1 && m.norm_p() != 2))
        return 1;
    const int knob = staged_knob(WW_SETTING_STAGED_LANES, 0);
    if (knob == 1 || knob == 2)
        return knob;
    /* the cheap tests first: no runtime call for float data or two row buffers */
    if (sizeof(typename M::real) != sizeof(double) || M::carries_before)
        return 1;
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    return pairs < (size_t)sms * STAGED_SPLIT_PAIRS_PER_SM ? 2 : 1;
}

/* pairs_band_kernel for the radius at hand: one instance per radius BAND_RADIUS_MIN .. band_radius_max<M>(). */
template <class M, typename Tout, int R>
static void launch_band(int radius, int n, dim3 blocks, size_t bytes, cudaStream_t stream,
                        const device_set<typename M::real> &dx, const device_set<typename M::real> &dy,
                        const chunk_args<M> &k, pair_map map, Tout *d)
{
    static_assert(R >= BAND_RADIUS_MIN, "the radii the band is built for");
    if constexpr (R <= band_radius_max<M>()) {
        if (radius == R)
            pairs_band_kernel<M, Tout, R><<<blocks, 128, bytes, stream>>>(dx, dy, k.g, k.m, map, n, d);
        else
            launch_band<M, Tout, R + 1>(radius, n, blocks, bytes, stream, dx, dy, k, map, d);
    }
}

/* One thread per pair: the band in registers (pairs_band_kernel) when every pair has the band of
 * radius k.band_radius (ww_cuda_band_radius, or -1); the staged kernel when the shared series and
 * the row buffers fit in shared memory (short series, dim <= STAGED_DIM_MAX); else the thread kernel
 * by mode. `lane_count` lanes over one side, `shared_count` series of the other; `longest` bounds
 * both sides' lengths. */
template <class M, typename Tout, bool WIN>
ww_status launch_thread_pairs(cudaStream_t stream, const device_set<typename M::real> &dx,
                                     const device_set<typename M::real> &dy, const chunk_args<M> &k, pair_map map,
                                     size_t longest, size_t lane_count, size_t shared_count, Tout *d)
{
    typedef typename M::real T;
    const size_t dim = dx.dim;
    if constexpr (WIN) {
        if (k.band_radius >= BAND_RADIUS_MIN && k.band_radius <= band_radius_max<M>()) {
            const dim3 blocks((unsigned)shared_count, (unsigned)((lane_count + 127) / 128));
            const size_t bytes = band_smem_bytes(longest, (size_t)k.band_radius, sizeof(T), M::uses_stamps, M::has_aux);
            launch_band<M, Tout, BAND_RADIUS_MIN>(k.band_radius, (int)longest, blocks, bytes, stream, dx, dy, k, map, d);
            return ww_cuda_status(cudaGetLastError());
        }
    }
    if (dim > 1 && dim <= STAGED_DIM_MAX && staged_knob(WW_SETTING_STAGED, 1)) {
        const int knob_threads = staged_knob(WW_SETTING_STAGED_THREADS, STAGED_THREADS);
        unsigned threads = knob_threads == 32 || knob_threads == 128 ? (unsigned)knob_threads : STAGED_THREADS;
        const size_t row_buffers = M::carries_before ? 2 : 1;
        size_t bytes = staged_smem_bytes(longest, dim, threads, sizeof(T), row_buffers);
        if (bytes > STAGED_SMEM_MAX && threads > 32) { /* longer series: fewer lanes per block */
            threads = 32;
            bytes = staged_smem_bytes(longest, dim, threads, sizeof(T), row_buffers);
        }
        const int cap = staged_cap(longest), rows = staged_knob(WW_SETTING_STAGED_ROWS, 2) == 1 ? 1 : 2;
        const int lanes = staged_lanes(k.m, lane_count * shared_count, rows);
        const size_t lane_blocks = (lane_count * (size_t)lanes + threads - 1) / threads;
        if (bytes <= STAGED_SMEM_MAX && lane_blocks <= 65535) {
            const dim3 blocks((unsigned)shared_count, (unsigned)lane_blocks);
            /* the kernel's vectors are exactly the staged stride: no test of dim in its loops */
            switch (staged_vector_stride((int)dim)) {
#define WW_STAGED_CASE(width)                                                                                   \
    case width:                                                                                                 \
        launch_staged<M, Tout, width, WIN>(rows, lanes, blocks, threads, bytes, stream, dx, dy, k, map, cap, d); \
        break;
                WW_STAGED_CASE(4)
                WW_STAGED_CASE(8)
                WW_STAGED_CASE(12)
                WW_STAGED_CASE(16)
                WW_STAGED_CASE(20)
                WW_STAGED_CASE(24)
                WW_STAGED_CASE(28)
                WW_STAGED_CASE(32)
#undef WW_STAGED_CASE
            default:
                return WW_ERR_BACKEND; /* dim <= STAGED_DIM_MAX: unreachable */
            }
            return ww_cuda_status(cudaGetLastError());
        }
    }
    const dim3 threads(128), blocks((unsigned)shared_count, (unsigned)((lane_count + 127) / 128));
    if (dim == 1)
        pairs_thread_kernel<M, Tout, 1, WIN><<<blocks, threads, 0, stream>>>(dx, dy, k.g, k.m, k.win, map, d);
    else if (dim <= WIDE_DIM_MAX)
        pairs_thread_kernel<M, Tout, 2, WIN><<<blocks, threads, 0, stream>>>(dx, dy, k.g, k.m, k.win, map, d);
    else
        pairs_thread_kernel<M, Tout, 0, WIN><<<blocks, threads, 0, stream>>>(dx, dy, k.g, k.m, k.win, map, d);
    return ww_cuda_status(cudaGetLastError());
}

/* At most the blocks of `kernel` that the GPU holds at once (its occupancy on each multiprocessor):
 * the warp and block kernels deal out their pairs by a fixed stride, so a block beyond those would
 * start only when a resident one had done all of its pairs, and run its own pairs as a tail on an
 * almost idle GPU (a kernel of 72 registers fits 7 blocks of 128 threads per multiprocessor, of
 * the 8 that the strategies' WARPS_PER_SM asks for). */
template <typename K> static unsigned resident_blocks(K kernel, unsigned threads, unsigned wanted)
{
    int device = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)threads, 0) != cudaSuccess || per_sm < 1) {
        cudaGetLastError();
        return wanted;
    }
    const unsigned resident = (unsigned)sms * (unsigned)per_sm;
    return wanted < resident ? wanted : resident;
}

template <class M, typename Tout, bool WIN>
ww_status launch_warp_pairs(cudaStream_t stream, const device_set<typename M::real> &dx,
                                   const device_set<typename M::real> &dy, const chunk_args<M> &k, unsigned blocks,
                                   typename M::real *scratch, size_t stride, bool roll, Tout *d)
{
    static_assert(ROLL_WARPS * 32 == 128, "the warp kernel's blocks");
    auto kernel = dx.dim == 1 ? pairs_warp_kernel<M, Tout, true, WIN, false> : pairs_warp_kernel<M, Tout, false, WIN, false>;
    if constexpr (WIN) {
        if (roll)
            kernel = dx.dim == 1 ? pairs_warp_kernel<M, Tout, true, true, true> : pairs_warp_kernel<M, Tout, false, true, true>;
    } else {
        (void)roll;
    }
    kernel<<<resident_blocks(kernel, 128, blocks), 128, 0, stream>>>(dx, dy, k.g, k.m, k.win, scratch, stride, d);
    return ww_cuda_status(cudaGetLastError());
}

/* The block strategy: the fixed schedule without a window, the posted one with (pairs_block_window_kernel). */
template <class M, typename Tout, bool WIN>
ww_status launch_block_pairs(cudaStream_t stream, const device_set<typename M::real> &dx,
                                    const device_set<typename M::real> &dy, const chunk_args<M> &k, unsigned blocks,
                                    typename M::real *scratch, size_t stride, Tout *d)
{
    const unsigned threads = BLOCK_WARPS * 32;
    if constexpr (WIN) {
        auto kernel = dx.dim == 1 ? pairs_block_window_kernel<M, Tout, true> : pairs_block_window_kernel<M, Tout, false>;
        kernel<<<resident_blocks(kernel, threads, blocks), threads, 0, stream>>>(dx, dy, k.g, k.m, k.win, scratch, stride, d);
    } else {
        auto kernel = dx.dim == 1 ? pairs_block_kernel<M, Tout, true> : pairs_block_kernel<M, Tout, false>;
        kernel<<<resident_blocks(kernel, threads, blocks), threads, 0, stream>>>(dx, dy, k.g, k.m, scratch, stride, d);
    }
    return ww_cuda_status(cudaGetLastError());
}

/* The lower triangle of a square self chunk from its upper one (mirror_lower_kernel). */
template <typename Tout> ww_status launch_mirror_lower(cudaStream_t stream, Tout *d, size_t n)
{
    const unsigned tiles = (unsigned)((n + 31) / 32);
    mirror_lower_kernel<Tout><<<dim3(tiles, tiles), dim3(32, 8), 0, stream>>>(d, n);
    return ww_cuda_status(cudaGetLastError());
}

#define WW_PAIRWISE_LAUNCHERS(prefix, M, Tout, WIN)                                                          \
    prefix template ww_status launch_thread_pairs<M, Tout, WIN>(cudaStream_t, const device_set<typename M::real> &,          \
                                                                const device_set<typename M::real> &, const chunk_args<M> &, \
                                                                pair_map, size_t, size_t, size_t, Tout *);          \
    prefix template ww_status launch_warp_pairs<M, Tout, WIN>(cudaStream_t, const device_set<typename M::real> &,            \
                                                              const device_set<typename M::real> &, const chunk_args<M> &,   \
                                                              unsigned, typename M::real *, size_t, bool, Tout *);          \
    prefix template ww_status launch_block_pairs<M, Tout, WIN>(cudaStream_t, const device_set<typename M::real> &,           \
                                                               const device_set<typename M::real> &, const chunk_args<M> &,  \
                                                               unsigned, typename M::real *, size_t, Tout *);

/* `prefix` = extern: declares a measure's launches with or without a window (pairwise.cu); empty:
 * compiles them, for float and double data and output (src/cuda/instances/). */
#define WW_PAIRWISE_INSTANCE(prefix, Ops, WIN)                                                               \
    WW_PAIRWISE_LAUNCHERS(prefix, measure_f64<Ops>, double, WIN)                                              \
    WW_PAIRWISE_LAUNCHERS(prefix, measure_f64<Ops>, float, WIN)                                               \
    WW_PAIRWISE_LAUNCHERS(prefix, measure_f32<Ops>, double, WIN)                                              \
    WW_PAIRWISE_LAUNCHERS(prefix, measure_f32<Ops>, float, WIN)

#endif
