/* The tile shapes of the wavefront engine and their kernels: for each shape, the kernel by kind
 * of sample, for one measure functor M, with or without a window (WIN). The choice among them is
 * pair.cu's; the instances are compiled in src/cuda/instances/ (WW_WAVEFRONT_INSTANCES). */
#ifndef WW_CUDA_WAVEFRONT_SHAPES_CUH
#define WW_CUDA_WAVEFRONT_SHAPES_CUH

#include "pair_kernels.cuh"
#include "../common/settings.h"

#include <stdlib.h>

#define WAVEFRONT_MAX_RESIDENT 4 /* bands per multiprocessor at once, at most */

/* A launch of a shape's kernel with at most `max_per_sm` bands per multiprocessor at once (pair.cu's
 * choice, at most WAVEFRONT_MAX_RESIDENT, or WW_WAVEFRONT_RESIDENT's), fewer if fewer fit. */
template <class M>
using wavefront_launcher = ww_status (*)(ww_cuda_state *s, const wavefront_args<M> &w, int max_per_sm);

template <class M, int R, int C, int SYNC, int LAG, int VD, int DEG, bool WIN>
ww_status launch_wavefront(ww_cuda_state *s, const wavefront_args<M> &w, int max_per_sm)
{
    size_t grid = w.nbands;
    if (grid > (size_t)s->sm_count) { /* more bands than multiprocessors: as many as fit at once */
        int per_sm = 0;
        WW_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, wavefront_kernel<M, R, C, SYNC, LAG, VD, DEG, WIN>, WAVEFRONT_THREADS, 0));
        const char *resident = ww_setting_value(WW_SETTING_WAVEFRONT_RESIDENT); /* benchmarks: replaces */
        if (resident && atoi(resident) > 0)                                     /* the choice, up or down */
            max_per_sm = atoi(resident);
        if (per_sm > max_per_sm)
            per_sm = max_per_sm;
        if (per_sm < 1)
            per_sm = 1;
        if (grid > (size_t)per_sm * s->sm_count)
            grid = (size_t)per_sm * s->sm_count;
    }
    wavefront_args<M> args = w;
    /* several blocks per multiprocessor: their first bands spread over the multiprocessors */
    args.spread = grid > (size_t)s->sm_count ? (unsigned)s->sm_count : 0;
    wavefront_kernel<M, R, C, SYNC, LAG, VD, DEG, WIN><<<(unsigned)grid, WAVEFRONT_THREADS, 0, s->stream>>>(args);
    WW_CUDA_TRY(cudaGetLastError());
    return WW_OK;
}

/* The kernel of a shape for vectors of VD components in registers and norm p = DEG, when the
 * measure can have that p (fixed_norm_p: DTW only p = 2); NULL otherwise. */
template <class M, int R, int C, int SYNC, int LAG, int VD, int DEG, bool WIN>
static constexpr wavefront_launcher<M> vec_kernel()
{
    if constexpr (M::fixed_p == 0 || M::fixed_p == DEG)
        return launch_wavefront<M, R, C, SYNC, LAG, VD, DEG, WIN>;
    else
        return NULL;
}

/* The shape of earlier versions (4 x 4): TWED without a window only, for the benchmark. */
template <class M, bool WIN> static constexpr wavefront_launcher<M> earlier_kernel()
{
    if constexpr (M::ops::kind == WW_MEASURE_TWED && !WIN)
        return launch_wavefront<M, 4, 4, 4, 1, 1, 0, WIN>;
    else
        return NULL;
}

/* DTW's narrow dim-1 kernels (measures without a carried term): lanes LAG = 2 steps apart
 * (wavefront_kernel). Against the policy's kernels of lanes one step apart, on an H200: pairs
 * without a window 0.86-0.91 of the time from 1,024 to 2^16 and 0.76 at 2^17, 10% windows
 * 0.85-0.96 from 1,024 to 2^21 (bench/results/gpu-dtw.md, twenty-fourth session). TWED's took
 * 1.02-1.07 of its time: it keeps LAG 1 (NULL here). */
template <class M, int R, bool WIN> static constexpr wavefront_launcher<M> lagged_kernel()
{
    if constexpr (!M::carries_before)
        return launch_wavefront<M, R, 1, 16, 2, 1, 0, WIN>;
    else
        return NULL;
}

/* A tile shape: R rows x C columns per thread, SYNC steps between two barriers, lanes LAG steps
 * apart, and its kernels by the kind of sample: dim 1; vectors of 2, 4 or 8 (zero-padded,
 * prepared_width) in registers, for norm p 1 or 2; anything else read from L1 per cell. NULL: not
 * built for that kind (registers, or the measure). The policy (pair.cu's wavefront_pick) takes the
 * first of the POLICY_SHAPES with a kernel for the samples whose bands number at most `fit` per
 * multiprocessor (0: any number), or else the last with a kernel; a windowed pair the first marked
 * `windows`. */
template <class M> struct wavefront_shape {
    int rows, cols, sync, lag;
    int fit;
    bool windows;
    wavefront_launcher<M> dim1, vec[3][2], any;
};

#define NO_VECTORS {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}}

/* By the rows of the pair (bench/results/gpu.md and gpu-dtw.md have the sweeps that chose them).
 * One thread block runs a band of 128 * R rows on one multiprocessor, and the critical path is
 * about n / C + (n / R) (31 LAG + SYNC) / 32 steps: narrow tiles (C = 1) and rare barriers make a
 * step short enough to win while the bands fit on the GPU at once, so the smallest R that fits them
 * is best; past two bands per multiprocessor the GPU is full and wider tiles, more work per step,
 * win. Under a window only the bands across its width are busy, and the narrow shapes win at every
 * size. TWED and DTW share the shapes but DTW's narrow dim-1 kernels, whose lanes are two steps
 * apart; the shape of earlier versions (4 x 4) is built for TWED without a window only, for the
 * benchmark. */
template <class M, bool WIN> const wavefront_shape<M> *wavefront_shapes()
{
    static const wavefront_shape<M> shapes[] = {
        /* DTW, dim 1: bands <= multiprocessors; windowed pairs at every size */
        {3, 1, 16, 2, 1, true, lagged_kernel<M, 3, WIN>(), NO_VECTORS, NULL},
        /* DTW, dim 1: bands <= 2 x multiprocessors (at 2^17: 16.8 ms, against 22.2 for the 8 x 1
         * that the rule of one band per multiprocessor gave it) */
        {4, 1, 16, 2, 2, false, lagged_kernel<M, 4, WIN>(), NO_VECTORS, NULL},
        /* bands <= multiprocessors (DTW: samples of other kinds) */
        {3, 1, 16, 1, 1, false, launch_wavefront<M, 3, 1, 16, 1, 1, 0, WIN>, NO_VECTORS,
         launch_wavefront<M, 3, 1, 16, 1, 0, 0, WIN>},
        /* the same; TWED's windowed pairs at every size (0.60-0.80 of 3 x 1's time from 2^10 to
         * 2^20), and DTW's of other samples (vectors in registers: 4 x 1 was faster at every size
         * measured) */
        {4,
         1,
         16,
         1,
         1,
         true,
         launch_wavefront<M, 4, 1, 16, 1, 1, 0, WIN>,
         {{vec_kernel<M, 4, 1, 16, 1, 2, 1, WIN>(), vec_kernel<M, 4, 1, 16, 1, 2, 2, WIN>()},
          {vec_kernel<M, 4, 1, 16, 1, 4, 1, WIN>(), vec_kernel<M, 4, 1, 16, 1, 4, 2, WIN>()},
          {vec_kernel<M, 4, 1, 16, 1, 8, 1, WIN>(), vec_kernel<M, 4, 1, 16, 1, 8, 2, WIN>()}},
         launch_wavefront<M, 4, 1, 16, 1, 0, 0, WIN>},
        /* bands <= 2 x multiprocessors, and beyond for vectors (vectors of 8 would spill) */
        {8,
         1,
         16,
         1,
         2,
         false,
         launch_wavefront<M, 8, 1, 16, 1, 1, 0, WIN>,
         {{vec_kernel<M, 8, 1, 16, 1, 2, 1, WIN>(), vec_kernel<M, 8, 1, 16, 1, 2, 2, WIN>()},
          {vec_kernel<M, 8, 1, 16, 1, 4, 1, WIN>(), vec_kernel<M, 8, 1, 16, 1, 4, 2, WIN>()},
          {NULL, NULL}},
         launch_wavefront<M, 8, 1, 16, 1, 0, 0, WIN>},
        /* more, dim 1 */
        {8, 2, 8, 1, 0, false, launch_wavefront<M, 8, 2, 8, 1, 1, 0, WIN>, NO_VECTORS, NULL},
        /* the shape of earlier versions, for the benchmark */
        {4, 4, 4, 1, 0, false, earlier_kernel<M, WIN>(), NO_VECTORS, NULL},
    };
    return shapes;
}

#undef NO_VECTORS

#define SHAPE_COUNT 7
#define POLICY_SHAPES 6 /* the first six take part in the choice */

/* `prefix` = extern: declares the instance of a measure's shape table with or without a window
 * (pair.cu); empty: compiles it (src/cuda/instances/). */
#define WW_WAVEFRONT_INSTANCE(prefix, Ops, WIN)                                                              \
    prefix template const wavefront_shape<measure_functor<Ops, double>> *                                    \
    wavefront_shapes<measure_functor<Ops, double>, WIN>();

#endif
