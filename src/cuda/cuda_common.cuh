/* Shared by the CUDA engines: error mapping, the context's device state, the entry points of the
 * engine layer, and the prepared-series layout. The measures reach the kernels as functors
 * (measure.cuh). */
#ifndef WW_CUDA_COMMON_CUH
#define WW_CUDA_COMMON_CUH

#include <cuda_runtime.h>

#include "../common/internal.h"
#include "../measures/measures.h"
#include "measure.cuh"

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
    bool programmatic_launch; /* compute capability 9.0 or more: a kernel may start while the one
                               * before it in the stream runs (programmatic dependent launch) */
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
    void *pairwise;            /* the matrix engine's buffers (pairwise.cu) */
    cudaEvent_t image_copied[2]; /* the image engine's two output buffers: copied to the host */
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
/* One pair on the GPU with `engine` (WW_ENGINE_CUDA_WAVEFRONT, or WW_ENGINE_CUDA_DIAGONAL for
 * TWED without a window; anything else: the wavefront), the measure's window included (pair.cu).
 * Host or device series; values are checked here. For ww_cuda_distance and the matrix engine's
 * whole-GPU strategy. */
ww_status ww_cuda_pair(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a, const ww_series *b,
                       double *out);
/* The series as the measure reads it: its stamps dropped when the measure does not use them (the
 * CPU engines ignore them too, unchecked). */
static inline ww_series ww_cuda_measured_series(const ww_measure *m, const ww_series *s)
{
    ww_series r = *s;
    r.stamps = ww_measure_stamps(m, s->stamps);
    return r;
}
static inline ww_dataset ww_cuda_measured_dataset(const ww_measure *m, const ww_dataset *d)
{
    ww_dataset r = *d;
    r.stamps = ww_measure_stamps(m, d->stamps);
    return r;
}
/* Warps the one-warp-per-pair strategy keeps in flight (a term of the cost model, for calibrate.cu). */
size_t ww_cuda_warps_in_flight(const ww_cuda_state *s, size_t longest, size_t elem_size);
/* Steps of the one-block-per-pair strategy for `pairs` pairs of rows x cols (times block_step_seconds). */
double ww_cuda_block_strategy_steps(const ww_cuda_state *s, double pairs, size_t rows, size_t cols, size_t elem_size);

/* Overloads that pick the float or double instance of the stamp check. */
__device__ __forceinline__ bool stamp_ok(double t) { return ww_stamp_ok_f64(t); }
__device__ __forceinline__ bool stamp_ok(float t) { return ww_stamp_ok_f32(t); }

template <typename T> __device__ __forceinline__ T infinity_of();
template <> __device__ __forceinline__ double infinity_of<double>() { return __longlong_as_double(0x7ff0000000000000LL); }
template <> __device__ __forceinline__ float infinity_of<float>() { return __int_as_float(0x7f800000); }

/* The multiprocessor the calling thread runs on (%smid, which may exceed the count of them). The
 * emulation's runtime (tests/emulation/cuda_runtime.h) has its own: the host thread of the block. */
#if defined(__CUDACC__)
__device__ __forceinline__ unsigned multiprocessor_id()
{
    unsigned id;
    asm("mov.u32 %0, %%smid;" : "=r"(id)); /* a block never moves */
    return id;
}

/* Hides a value from the compiler (an empty asm that may have changed it): what is derived from it
 * after this point is computed there, not kept from before (see wavefront_kernel). The emulation's
 * runtime has its own, which does nothing. */
__device__ __forceinline__ void hide_from_compiler(int &v) { asm volatile("" : "+r"(v)); }
__device__ __forceinline__ void hide_from_compiler(unsigned &v) { asm volatile("" : "+r"(v)); }
__device__ __forceinline__ void hide_from_compiler(long long &v) { asm volatile("" : "+l"(v)); }
#endif

/* A series on the device in compute type T, time order, sentinel sample 0 in front (the same
 * layout as ww_prepared on the CPU). */
template <typename T> struct device_series {
    const T *values; /* (length + 1) * dim */
    const T *stamps; /* length + 1; unused (unwritten) for a measure without stamps */
    const T *delete_cost; /* the measure's per-sample term (aux), when it has one */
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
