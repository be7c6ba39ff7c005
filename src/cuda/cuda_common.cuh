/* Shared by the CUDA engines: error mapping, the context's device state, typed wrappers of the
 * measures (src/measures/, the same code the CPU runs), and the prepared-series layout. */
#ifndef WW_CUDA_COMMON_CUH
#define WW_CUDA_COMMON_CUH

#include <cuda_runtime.h>

#include "../common/internal.h"
#include "../measures/measures.h"

ww_status ww_cuda_status(cudaError_t e);

/* Returns the mapped status from the enclosing function when a CUDA call fails. */
#define WW_CUDA_TRY(call)                                                                          \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return ww_cuda_status(err_);                                                           \
    } while (0)

/* A grow-only device allocation owned by the context. */
struct ww_device_buffer {
    void *ptr;
    size_t bytes;
};

ww_status ww_device_reserve(ww_device_buffer *b, size_t bytes);

struct ww_cuda_state {
    int device;
    int sm_count;
    size_t smem_optin; /* shared memory a block may use after opting in */
    char gpu_name[256];
    ww_cuda_model model; /* the matrix engine's cost model: built in, or from a calibration file */
    /* "thread", "warp", "grid", ...: the matrix strategy ww_cuda_calibrate times; NULL lets the
     * cost model (or the environment variable WW_MATRIX_STRATEGY) choose */
    const char *forced_strategy;
    cudaStream_t stream;
    ww_device_buffer input;    /* raw user data copied from the host */
    ww_device_buffer prepared; /* series converted to the compute type, with deletion costs */
    ww_device_buffer work;     /* engine scratch: diagonals, slots, flags */
    ww_device_buffer result;   /* small: result and error flags */
    void *pinned;              /* page-locked staging for host inputs and the result */
    size_t pinned_bytes;
    void *pairwise;            /* the matrix engine's buffers (twed_pairwise.cu) */
};

/* A grow-only page-locked host allocation (*pinned, *pinned_bytes) of at least `bytes`. */
ww_status ww_pinned_reserve(void **pinned, size_t *pinned_bytes, size_t bytes);

__global__ void ww_cuda_probe_kernel(void);

/* WW_OK when p is device (or managed) memory; a host pointer in a WW_DEVICE descriptor would end
 * in an illegal address, which breaks the whole CUDA context, so it is refused first. */
ww_status ww_cuda_check_device_pointer(const void *p);

/* The entry points run on the context's device and give the caller's current device back. */
struct ww_cuda_device_guard {
    int previous; /* the device to restore, or -1 */
};
ww_cuda_device_guard ww_cuda_enter(ww_cuda_state *s);
void ww_cuda_leave(ww_cuda_device_guard g);

/* After a failed call: wait for the stream and clear a non-sticky error, so the next call works. */
static inline void ww_cuda_recover(ww_cuda_state *s, ww_status st)
{
    if (st == WW_ERR_CUDA || st == WW_ERR_DEVICE_MEMORY || st == WW_ERR_MEMORY) {
        cudaStreamSynchronize(s->stream);
        cudaGetLastError();
    }
}
void ww_cuda_pairwise_release(ww_cuda_state *s);
/* TWED of one pair on the GPU (twed_pair.cu): the pair engine, also for the matrix engine's
 * whole-GPU strategy. Host or device series; no window. */
ww_status ww_cuda_twed_pair(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p,
                            double *out);
/* Warps the one-warp-per-pair strategy keeps in flight (a term of the cost model, for calibrate.cu). */
size_t ww_cuda_warps_in_flight(const ww_cuda_state *s, size_t longest, size_t elem_size);
/* Steps of the one-block-per-pair strategy for `pairs` pairs of rows x cols (times block_step_seconds). */
double ww_cuda_block_strategy_steps(const ww_cuda_state *s, double pairs, size_t rows, size_t cols, size_t elem_size);

/* Overloads that pick the float or double instance of the shared recurrence. */
__device__ __forceinline__ bool stamp_ok(double t) { return ww_stamp_ok_f64(t); }
__device__ __forceinline__ bool stamp_ok(float t) { return ww_stamp_ok_f32(t); }
__device__ __forceinline__ double lp_distance(const double *x, const double *y, size_t dim, int p)
{
    return ww_lp_distance_f64(x, y, dim, p);
}
__device__ __forceinline__ float lp_distance(const float *x, const float *y, size_t dim, int p)
{
    return ww_lp_distance_f32(x, y, dim, p);
}
__device__ __forceinline__ double match_part(double dist, double ta, double tb, double nu)
{
    return ww_twed_match_part_f64(dist, ta, tb, nu);
}
__device__ __forceinline__ float match_part(float dist, float ta, float tb, float nu)
{
    return ww_twed_match_part_f32(dist, ta, tb, nu);
}
__device__ __forceinline__ double delete_cost(double step, double t, double tp, double nu, double lambda)
{
    return ww_twed_delete_cost_f64(step, t, tp, nu, lambda);
}
__device__ __forceinline__ float delete_cost(float step, float t, float tp, float nu, float lambda)
{
    return ww_twed_delete_cost_f32(step, t, tp, nu, lambda);
}
__device__ __forceinline__ double twed_cell(double up, double left, double diag, double da, double db,
                                            double here, double before)
{
    return ww_twed_cell_f64(up, left, diag, da, db, here, before);
}
__device__ __forceinline__ float twed_cell(float up, float left, float diag, float da, float db,
                                           float here, float before)
{
    return ww_twed_cell_f32(up, left, diag, da, db, here, before);
}

template <typename T> __device__ __forceinline__ T infinity_of();
template <> __device__ __forceinline__ double infinity_of<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ float infinity_of<float>() { return __int_as_float(0x7f800000); }

/* A series on the device in compute type T, time order, sentinel sample 0 in front (the same
 * layout as ww_prepared on the CPU). */
template <typename T> struct device_series {
    const T *values; /* (length + 1) * dim */
    const T *stamps; /* length + 1 */
    const T *delete_cost;
    size_t length, dim;
};

/* Error flags the preparation kernels raise (bitwise or). */
enum { WW_FLAG_NONFINITE = 1, WW_FLAG_STAMPS = 2 };

/* The status for raised flags: the same precedence as the host checks (values before stamps). */
static inline ww_status ww_flags_status(int flags)
{
    return (flags & WW_FLAG_NONFINITE) ? WW_ERR_NONFINITE : (flags & WW_FLAG_STAMPS) ? WW_ERR_STAMPS : WW_OK;
}

/* Waits for the stream and reads the flags the preparation kernels raised in `dflags`. */
ww_status ww_cuda_read_flags(ww_cuda_state *s, const int *dflags);

#endif
