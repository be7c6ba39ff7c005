/* Soft-DTW's batch kernels: one block per pair, the table swept by anti-diagonals (the cells of one
 * are independent: the block's threads share them, a block barrier between diagonals), R stored
 * whole in device memory for the backward pass, which walks the diagonals in reverse keeping E and
 * Q = R - cost on three rolling diagonals (per pair scratch). The cell and the backward weight are
 * the measure's (src/measures/softdtw.h), in the computing type T (float for float32 data: expf/
 * logf; double: the measure's own exp/log). Scheduling only: no policy here (softdtw.cu). */
#ifndef WW_CUDA_SOFTDTW_KERNELS_CUH
#define WW_CUDA_SOFTDTW_KERNELS_CUH

#include "measure.cuh"

/* One pair of the batch. */
struct sdtw_pair {
    long long x0, y0;  /* first sample of each series in its values array */
    long long r0, s0;  /* offsets of the pair's table ((n + 2)(m + 2)) and scratch (6 (n + 2)) */
    long long radius;  /* the window's radius, -1: none */
    int n, m;
};

__device__ __forceinline__ double sdtw_cell(double up, double left, double diag, double cost, const ww_coef_f64 *c)
{
    return ww_softdtw_cell_f64(up, left, diag, 0, 0, cost, 0, c);
}
__device__ __forceinline__ float sdtw_cell(float up, float left, float diag, float cost, const ww_coef_f32 *c)
{
    return ww_softdtw_cell_f32(up, left, diag, 0, 0, cost, 0, c);
}
__device__ __forceinline__ double sdtw_weight(double q, double here, double inv_gamma)
{
    return ww_softdtw_back_weight_f64(q, here, 0, inv_gamma, 1);
}
__device__ __forceinline__ float sdtw_weight(float q, float here, float inv_gamma)
{
    return ww_softdtw_back_weight_f32(q, here, 0, inv_gamma, 1);
}

template <typename T> __device__ __forceinline__ T sdtw_inf() { return (T)INFINITY; }

/* Thread t of the block owns rows 1 + t, 1 + t + blockDim, ... on every diagonal: the first of its
 * rows at or past ilo (so that a row's gradient is only ever touched by its owner). */
__device__ __forceinline__ int sdtw_first_row(int ilo)
{
    int i = 1 + (int)threadIdx.x;
    if (i < ilo)
        i += (ilo - i + (int)blockDim.x - 1) / (int)blockDim.x * (int)blockDim.x;
    return i;
}

template <typename T>
__device__ __forceinline__ T sdtw_cost(const T *X, const T *Y, const sdtw_pair &p, int i, int j, int dim)
{
    const T *x = X + (p.x0 + i - 1) * (long long)dim, *y = Y + (p.y0 + j - 1) * (long long)dim;
    T acc = 0;
    for (int k = 0; k < dim; k++) {
        const T d = x[k] - y[k];
        acc += d * d;
    }
    return acc;
}

template <typename T>
__device__ __forceinline__ bool sdtw_in_window(const sdtw_pair &p, int i, int j)
{
    if (p.radius < 0)
        return true;
    size_t lo, hi;
    ww_window_row((size_t)p.n, (size_t)p.m, (size_t)p.radius, (size_t)i, &lo, &hi);
    return (size_t)j >= lo && (size_t)j <= hi;
}

/* Forward: R of every pair, values[b] += scale R[n][m]. */
template <typename T>
__global__ void sdtw_forward_kernel(const sdtw_pair *pairs, const T *X, const T *Y, int dim,
                                    typename coef_of<T>::type c, T *R_all, T *values, T scale)
{
    const sdtw_pair p = pairs[blockIdx.x];
    const int n = p.n, m = p.m;
    const long long w = m + 2;
    T *R = R_all + p.r0;
    for (long long k = threadIdx.x; k < w; k += blockDim.x)
        R[k] = k == 0 ? (T)0 : sdtw_inf<T>();
    for (long long i = threadIdx.x + 1; i <= n; i += blockDim.x)
        R[i * w] = sdtw_inf<T>();
    __syncthreads();
    for (int t = 2; t <= n + m; t++) {
        const int ilo = t - m > 1 ? t - m : 1, ihi = t - 1 < n ? t - 1 : n;
        for (int i = sdtw_first_row(ilo); i <= ihi; i += blockDim.x) {
            const int j = t - i;
            T v = sdtw_inf<T>();
            if (sdtw_in_window<T>(p, i, j))
                v = sdtw_cell(R[(i - 1) * w + j], R[i * w + j - 1], R[(i - 1) * w + j - 1], sdtw_cost(X, Y, p, i, j, dim),
                              &c);
            R[i * w + j] = v;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        values[blockIdx.x] += scale * R[(long long)n * w + m];
}

/* Backward: E by anti-diagonals from the last cell, the gradients added, scaled by `scale`: a row's
 * by its owning thread, a column's atomically (and both atomically when GX and GY are one array: a
 * pair of a series with itself). */
template <typename T>
__global__ void sdtw_backward_kernel(const sdtw_pair *pairs, const T *X, const T *Y, int dim, T inv_gamma,
                                     const T *R_all, T *scratch_all, T *GX, T *GY, T scale)
{
    const sdtw_pair p = pairs[blockIdx.x];
    const int n = p.n, m = p.m;
    const long long w = m + 2, len = n + 2;
    const T *R = R_all + p.r0;
    T *E[3], *Q[3];
    for (int r = 0; r < 3; r++) {
        E[r] = scratch_all + p.s0 + r * len;
        Q[r] = scratch_all + p.s0 + (3 + r) * len;
    }
    for (long long k = threadIdx.x; k < 3 * len; k += blockDim.x) {
        scratch_all[p.s0 + k] = 0;
        scratch_all[p.s0 + 3 * len + k] = -sdtw_inf<T>();
    }
    __syncthreads();
    for (int t = n + m; t >= 2; t--) {
        const int ilo = t - m > 1 ? t - m : 1, ihi = t - 1 < n ? t - 1 : n;
        T *e0 = E[t % 3], *q0 = Q[t % 3];
        const T *e1 = E[(t + 1) % 3], *q1 = Q[(t + 1) % 3], *e2 = E[(t + 2) % 3], *q2 = Q[(t + 2) % 3];
        for (int i = sdtw_first_row(ilo); i <= ihi; i += blockDim.x) {
            const int j = t - i;
            const T here = R[i * w + j];
            T e;
            if (t == n + m)
                e = 1;
            else
                e = (e1[i + 1] * sdtw_weight(q1[i + 1], here, inv_gamma) + e1[i] * sdtw_weight(q1[i], here, inv_gamma)) +
                    e2[i + 1] * sdtw_weight(q2[i + 1], here, inv_gamma);
            e0[i] = e;
            q0[i] = here < sdtw_inf<T>() ? here - sdtw_cost(X, Y, p, i, j, dim) : -sdtw_inf<T>();
            if (e != (T)0) {
                const T *x = X + (p.x0 + i - 1) * (long long)dim, *y = Y + (p.y0 + j - 1) * (long long)dim;
                for (int k = 0; k < dim; k++) {
                    const T g = (T)2 * scale * e * (x[k] - y[k]);
                    if (GX && GX == GY)
                        atomicAdd(&GX[(p.x0 + i - 1) * (long long)dim + k], g);
                    else if (GX)
                        GX[(p.x0 + i - 1) * (long long)dim + k] += g;
                    if (GY)
                        atomicAdd(&GY[(p.y0 + j - 1) * (long long)dim + k], -g);
                }
            }
        }
        if (threadIdx.x == 0) { /* the diagonal's two ends: off the table for the diagonals before */
            e0[ilo - 1] = 0, q0[ilo - 1] = -sdtw_inf<T>();
            e0[ihi + 1] = 0, q0[ihi + 1] = -sdtw_inf<T>();
        }
        __syncthreads();
    }
}

/* Sets *flag when a value is NaN or infinite. */
template <typename T> __global__ void sdtw_check_kernel(const T *v, long long count, int *flag)
{
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < count; k += (long long)gridDim.x * blockDim.x)
        if (!isfinite(v[k]))
            *flag = 1;
}

#endif
