/* The CUDA backend's context: device selection, one stream, grow-only scratch, error mapping. */
#include "cuda_common.cuh"

#include <stdio.h>
#include <string.h>

ww_status ww_cuda_status(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return WW_OK;
    case cudaErrorMemoryAllocation: return WW_ERR_DEVICE_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice: return WW_ERR_NO_DEVICE;
    default: return WW_ERR_CUDA;
    }
}

int ww_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

ww_status ww_device_reserve(ww_device_buffer *b, size_t bytes)
{
    if (bytes <= b->bytes)
        return WW_OK;
    if (b->ptr) {
        cudaFree(b->ptr);
        b->ptr = NULL;
        b->bytes = 0;
    }
    size_t rounded = (bytes + 255) & ~(size_t)255;
    cudaError_t e = cudaMalloc(&b->ptr, rounded);
    if (e != cudaSuccess) {
        cudaGetLastError();
        b->ptr = NULL;
        return ww_cuda_status(e);
    }
    b->bytes = rounded;
    return WW_OK;
}

ww_status ww_pinned_reserve(void **pinned, size_t *pinned_bytes, size_t bytes)
{
    if (bytes <= *pinned_bytes)
        return WW_OK;
    if (*pinned) {
        cudaFreeHost(*pinned);
        *pinned = NULL;
        *pinned_bytes = 0;
    }
    size_t rounded = (bytes + 4095) & ~(size_t)4095;
    cudaError_t e = cudaMallocHost(pinned, rounded);
    if (e != cudaSuccess) {
        cudaGetLastError();
        *pinned = NULL;
        return e == cudaErrorMemoryAllocation ? WW_ERR_MEMORY : ww_cuda_status(e);
    }
    *pinned_bytes = rounded;
    return WW_OK;
}

/* An empty kernel: whether it has an image for the device tells whether this build runs there. */
__global__ void ww_cuda_probe_kernel(void) {}

ww_status ww_cuda_check_device_pointer(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return WW_ERR_MEMORY_KIND;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? WW_OK : WW_ERR_MEMORY_KIND;
}

ww_cuda_device_guard ww_cuda_enter(ww_cuda_state *s)
{
    ww_cuda_device_guard g = {-1};
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess) {
        cudaGetLastError();
        current = -1;
    }
    if (current != s->device && cudaSetDevice(s->device) == cudaSuccess)
        g.previous = current;
    return g;
}

void ww_cuda_leave(ww_cuda_device_guard g)
{
    if (g.previous >= 0)
        cudaSetDevice(g.previous);
}

ww_status ww_cuda_read_flags(ww_cuda_state *s, const int *dflags)
{
    int flags = 0;
    WW_CUDA_TRY(cudaMemcpyAsync(&flags, dflags, sizeof(int), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    return ww_flags_status(flags);
}

static ww_status init_on_device(ww_ctx *ctx, ww_cuda_state *s);
static void shutdown_state(ww_cuda_state *s);

/* One state (stream, scratch, cost model) for one device ordinal. */
static ww_status create_state(ww_ctx *ctx, int device, int count, ww_cuda_state **out)
{
    if (device < 0 && cudaGetDevice(&device) != cudaSuccess) { /* the caller's current device */
        cudaGetLastError();
        device = 0;
    }
    if (device >= count)
        return WW_ERR_NO_DEVICE;
    ww_cuda_state *s = (ww_cuda_state *)calloc(1, sizeof *s);
    if (s == NULL)
        return WW_ERR_MEMORY;
    s->device = device;
    /* the caller's current device is given back, as every entry point does */
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = init_on_device(ctx, s);
    ww_cuda_leave(guard);
    if (st != WW_OK) {
        free(s);
        return st;
    }
    *out = s;
    return WW_OK;
}

ww_status ww_cuda_init(ww_ctx *ctx)
{
    int count = ww_cuda_device_count();
    if (count <= 0)
        return WW_ERR_NO_DEVICE;
    const int wanted = ctx->device_count > 0 ? ctx->device_count : 1;
    ww_status st = WW_OK;
    for (int d = 0; d < wanted && st == WW_OK; d++) {
        st = create_state(ctx, ctx->device_count > 0 ? ctx->device_list[d] : ctx->device, count,
                          &ctx->cuda_devices[d]);
        if (st == WW_OK)
            ctx->cuda_count = d + 1;
    }
    if (st != WW_OK) {
        for (int d = 0; d < ctx->cuda_count; d++)
            shutdown_state(ctx->cuda_devices[d]);
        ctx->cuda_count = 0;
        /* the first device may have named its model already: no GPU, no model (backend auto goes
         * on with the CPU, for which ww_ctx_calibration() is "") */
        ctx->calibration_source[0] = '\0';
        return st;
    }
    ww_cuda_state *first = ctx->cuda_devices[0];
    ctx->cuda = first;
    ctx->device = first->device;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, first->device) != cudaSuccess) {
        cudaGetLastError();
        memset(&prop, 0, sizeof prop);
    }
    int n = snprintf(ctx->description, sizeof ctx->description, "cuda (%.100s, sm_%d%d, %d SMs", first->gpu_name,
                     prop.major, prop.minor, first->sm_count);
    for (int d = 0; d < ctx->cuda_count && ctx->cuda_count > 1 && n > 0 && (size_t)n < sizeof ctx->description; d++)
        n += snprintf(ctx->description + n, sizeof ctx->description - (size_t)n, "%s%d", d == 0 ? "; devices " : ",",
                      ctx->cuda_devices[d]->device);
    if (n > 0 && (size_t)n < sizeof ctx->description)
        snprintf(ctx->description + n, sizeof ctx->description - (size_t)n, ")");
    return WW_OK;
}

static ww_status init_on_device(ww_ctx *ctx, ww_cuda_state *s)
{
    const int device = s->device;
    cudaDeviceProp prop;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ww_cuda_status(e);
    }
    /* a GPU this build has no code for (it targets sm_90) is no usable device: auto uses the CPU */
    cudaFuncAttributes attributes;
    e = cudaFuncGetAttributes(&attributes, ww_cuda_probe_kernel);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return WW_ERR_NO_DEVICE;
    }
    s->sm_count = prop.multiProcessorCount;
    s->smem_optin = prop.sharedMemPerBlockOptin;
    s->programmatic_launch = prop.major >= 9;
    snprintf(s->gpu_name, sizeof s->gpu_name, "%s", prop.name);
    /* the cost model before the stream: a malformed file fails here with nothing to undo */
    char source[sizeof ctx->calibration_source];
    ww_status st = ww_calibration_resolve(ctx->calibration_path, s->gpu_name, s->sm_count, &s->model, source,
                                          sizeof source);
    if (st != WW_OK)
        return st;
    if (ctx->cuda_count == 0) /* the first device's is the one ww_ctx_calibration() names; cleared
                                 by ww_cuda_init if a later step or device fails */
        snprintf(ctx->calibration_source, sizeof ctx->calibration_source, "%s", source);
    e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        e = cudaEventCreateWithFlags(&s->image_copied[k], cudaEventDisableTiming);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return ww_cuda_status(e);
    }
    return WW_OK;
}

static void shutdown_state(ww_cuda_state *s)
{
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_cuda_pairwise_release(s);
    ww_device_buffer *buffers[] = {&s->input, &s->prepared, &s->work, &s->result};
    for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++)
        if (buffers[i]->ptr)
            cudaFree(buffers[i]->ptr);
    if (s->pinned)
        cudaFreeHost(s->pinned);
    for (int k = 0; k < 2; k++)
        if (s->image_copied[k])
            cudaEventDestroy(s->image_copied[k]);
    cudaStreamDestroy(s->stream);
    ww_cuda_leave(guard);
    free(s);
}

ww_cuda_model ww_cuda_context_model(const ww_ctx *ctx)
{
    return ctx && ctx->cuda ? ctx->cuda->model : ww_cuda_model_default();
}

void ww_cuda_shutdown(ww_ctx *ctx)
{
    for (int d = 0; d < ctx->cuda_count; d++)
        shutdown_state(ctx->cuda_devices[d]);
    ctx->cuda_count = 0;
    ctx->cuda = NULL;
}
