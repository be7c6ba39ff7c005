/* Soft-DTW's launches: the kernels of softdtw_kernels.cuh instantiated for each rows-per-thread
 * count K and dimension D (1..SDTW_MAX_DIM in registers, 0: any), chosen at run time from the
 * launch's shape. The instances are compiled in src/cuda/instances/softdtw_f32.cu and _f64.cu (in
 * parallel); softdtw.cu, the policy, sees only the declaration. */
#ifndef WW_CUDA_SOFTDTW_LAUNCH_CUH
#define WW_CUDA_SOFTDTW_LAUNCH_CUH

#include "softdtw_kernels.cuh"

/* A launch's block: `threads` threads of `rows_per_thread` rows. */
struct sdtw_shape {
    int threads, rows_per_thread;
};

struct sdtw_launch_args {
    unsigned blocks;
    sdtw_shape shape;
    int dim, mode;  /* mode: enum sdtw_mode */
    int accumulate; /* the forward pass adds to the values (else stores them) */
    cudaStream_t stream;
};

/* The forward (backward = 0) or backward pass of the pairs of a launch. */
template <typename T>
cudaError_t sdtw_launch(const sdtw_launch_args &L, const sdtw_pairs &pairs, const T *X, const T *Y,
                        const typename coef_of<T>::type &c, T *work, T *values, T *gx, T *gy, T scale, int backward);

#ifdef WW_SDTW_INSTANTIATE
template <typename T, int K, int D>
static cudaError_t sdtw_launch_kd(const sdtw_launch_args &L, const sdtw_pairs &pairs, const T *X, const T *Y,
                                  const typename coef_of<T>::type &c, T *work, T *values, T *gx, T *gy, T scale, int backward)
{
    if (backward)
        sdtw_backward_kernel<T, K, D>
            <<<L.blocks, L.shape.threads, 0, L.stream>>>(pairs, X, Y, L.dim, c, work, gx, gy, scale, L.mode);
    else
        sdtw_forward_kernel<T, K, D>
            <<<L.blocks, L.shape.threads, 0, L.stream>>>(pairs, X, Y, L.dim, c, work, values, scale, L.mode, L.accumulate);
    return cudaGetLastError();
}

template <typename T, int K>
static cudaError_t sdtw_launch_k(const sdtw_launch_args &L, const sdtw_pairs &pairs, const T *X, const T *Y,
                                 const typename coef_of<T>::type &c, T *work, T *values, T *gx, T *gy, T scale, int backward)
{
    switch (L.dim) {
    case 1: return sdtw_launch_kd<T, K, 1>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    case 2: return sdtw_launch_kd<T, K, 2>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    case 3: return sdtw_launch_kd<T, K, 3>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    default: return sdtw_launch_kd<T, K, 0>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    }
}

template <typename T>
cudaError_t sdtw_launch(const sdtw_launch_args &L, const sdtw_pairs &pairs, const T *X, const T *Y,
                        const typename coef_of<T>::type &c, T *work, T *values, T *gx, T *gy, T scale, int backward)
{
    switch (L.shape.rows_per_thread) {
    case 1: return sdtw_launch_k<T, 1>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    case 2: return sdtw_launch_k<T, 2>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    default: return sdtw_launch_k<T, 4>(L, pairs, X, Y, c, work, values, gx, gy, scale, backward);
    }
}

#endif
#endif
