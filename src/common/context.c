/* Status strings, small utilities, scratch buffers and contexts. The rest of the public API:
 * descriptors.c (series and datasets), measure.c (measures), dispatch.c (distances and matrices,
 * through the registry), knn.c and index.c. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

const char *ww_version(void) { return "0.2.0"; }

const char *ww_strerror(ww_status status)
{
    switch (status) {
    case WW_OK: return "success";
    case WW_ERR_NULL_POINTER: return "a required pointer argument is NULL";
    case WW_ERR_EMPTY: return "empty input: a series has length 0 or a dataset has no series";
    case WW_ERR_SHAPE: return "invalid shape: dim is 0, offsets are inconsistent, the block lies outside the matrix, or k is out of range";
    case WW_ERR_NONFINITE: return "a series value is NaN or infinite";
    case WW_ERR_STAMPS: return "time stamps must be finite, non-decreasing and at most half the largest value of their type in magnitude";
    case WW_ERR_PARAM: return "invalid parameter: TWED needs finite nu >= 0, lambda >= 0 and degree >= 1; soft-DTW a finite gamma > 0; a window fraction is 0 to 1";
    case WW_ERR_DTYPE: return "unknown dtype, or the series do not share one dtype";
    case WW_ERR_MEMORY: return "out of host memory";
    case WW_ERR_DEVICE_MEMORY: return "out of GPU memory";
    case WW_ERR_NO_DEVICE: return "no usable CUDA GPU was found";
    case WW_ERR_NO_CUDA: return "this build of wavewarp has no CUDA backend";
    case WW_ERR_CUDA: return "a CUDA runtime call failed";
    case WW_ERR_CANCELLED: return "cancelled by the progress callback";
    case WW_ERR_BACKEND: return "unknown backend or engine, or one that cannot serve this request";
    case WW_ERR_OVERFLOW: return "the problem is too large: a size overflows";
    case WW_ERR_MEMORY_KIND: return "device memory given where host memory is required (or the reverse)";
    case WW_ERR_IO: return "a file could not be read, written or created";
    case WW_ERR_CALIBRATION: return "the GPU calibration file is malformed (run 'wavewarp calibrate' again, or remove it)";
    case WW_ERR_UNSUPPORTED: return "this measure, or its window, is not available on the backend or engine asked for";
    case WW_ERR_MEASURE: return "unknown measure kind";
    case WW_ERR_TREE: return "malformed tree: parents not in preorder or not exactly one root, or tree text that does not parse (unbalanced or empty brackets, X-TED labels and adjacency that do not match)";
    case WW_ERR_TREE_SIZE: return "the pair of trees is too large: its tables need more memory than the limit (ww_ted_memory_limit)";
    case WW_ERR_NOT_DIFFERENTIABLE: return "the measure has no gradient (only soft-DTW is differentiable)";
    }
    return "unknown wavewarp status code";
}

/* ---------------------------------------------------------------- small utilities */

int ww_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

ww_status ww_buffer_reserve(ww_buffer *b, size_t bytes)
{
    if (bytes <= b->bytes)
        return WW_OK;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes)
        return WW_ERR_OVERFLOW;
    void *p = NULL;
    if (posix_memalign(&p, 64, rounded) != 0 || p == NULL)
        return WW_ERR_MEMORY;
    free(b->ptr);
    b->ptr = p;
    b->bytes = rounded;
    return WW_OK;
}

void ww_buffer_free(ww_buffer *b)
{
    free(b->ptr);
    b->ptr = NULL;
    b->bytes = 0;
}

/* ---------------------------------------------------------------- contexts */

ww_ctx_options ww_ctx_options_default(void)
{
    ww_ctx_options o;
    o.backend = WW_BACKEND_AUTO;
    o.engine = WW_ENGINE_AUTO;
    o.num_threads = 0;
    o.device = -1;
    o.devices = NULL;
    o.device_count = 0;
    o.calibration = NULL;
    return o;
}

const char *ww_backend_name(ww_backend backend)
{
    switch (backend) {
    case WW_BACKEND_AUTO: return "auto";
    case WW_BACKEND_CPU: return "cpu";
    case WW_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

static int engine_is_cpu(ww_engine e)
{
    return e == WW_ENGINE_CPU_REFERENCE || e == WW_ENGINE_CPU_BAND || e == WW_ENGINE_CPU_STRIP;
}

static int engine_is_cuda(ww_engine e)
{
    return e == WW_ENGINE_CUDA_DIAGONAL || e == WW_ENGINE_CUDA_WAVEFRONT;
}

static const char *cpu_isa_name(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return "avx512";
    if (__builtin_cpu_supports("avx2"))
        return "avx2";
    return "sse2";
#else
    return "portable";
#endif
}

int ww_cuda_available(void) { return ww_cuda_device_count() > 0; }

ww_status ww_ctx_create(ww_ctx **out, const ww_ctx_options *opt)
{
    if (out == NULL)
        return WW_ERR_NULL_POINTER;
    *out = NULL;
    ww_ctx_options o = opt ? *opt : ww_ctx_options_default();
    if (o.backend != WW_BACKEND_AUTO && o.backend != WW_BACKEND_CPU && o.backend != WW_BACKEND_CUDA)
        return WW_ERR_BACKEND;
    if (o.engine != WW_ENGINE_AUTO && !engine_is_cpu(o.engine) && !engine_is_cuda(o.engine))
        return WW_ERR_BACKEND;
    /* An explicit engine implies its backend; contradicting the backend is an error. */
    if (engine_is_cpu(o.engine)) {
        if (o.backend == WW_BACKEND_CUDA)
            return WW_ERR_BACKEND;
        o.backend = WW_BACKEND_CPU;
    } else if (engine_is_cuda(o.engine)) {
        if (o.backend == WW_BACKEND_CPU)
            return WW_ERR_BACKEND;
        o.backend = WW_BACKEND_CUDA;
    }

    if (o.device_count < 0 || o.device_count > WW_MAX_DEVICES)
        return WW_ERR_NO_DEVICE;
    if (o.device_count > 0 && o.devices == NULL)
        return WW_ERR_NULL_POINTER;
    for (int d = 0; d < o.device_count; d++)
        if (o.devices[d] < 0)
            return WW_ERR_NO_DEVICE;

    ww_ctx *ctx = (ww_ctx *)calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return WW_ERR_MEMORY;
    ctx->device_count = o.device_count;
    for (int d = 0; d < o.device_count; d++)
        ctx->device_list[d] = o.devices[d];
    if (o.calibration) {
        size_t n = strlen(o.calibration) + 1;
        ctx->calibration_path = (char *)malloc(n);
        if (ctx->calibration_path == NULL) {
            free(ctx);
            return WW_ERR_MEMORY;
        }
        memcpy(ctx->calibration_path, o.calibration, n);
    }
    int threads = o.num_threads;
#ifdef _OPENMP
    if (threads <= 0)
        threads = omp_get_num_procs();
#endif
    if (threads <= 0)
        threads = 1;
    ctx->num_threads = threads;
    ctx->engine = o.engine;
    ctx->softdtw_memory_budget = ww_softdtw_default_budget();
    ctx->device = o.device;
    ctx->requested = o.backend;
    ctx->cpu = (ww_cpu_scratch *)calloc((size_t)threads, sizeof *ctx->cpu);
    if (ctx->cpu == NULL) {
        ww_ctx_destroy(ctx);
        return WW_ERR_MEMORY;
    }

    ctx->backend = WW_BACKEND_CPU;
    if (o.backend == WW_BACKEND_CUDA || (o.backend == WW_BACKEND_AUTO && ww_cuda_available())) {
        ww_status st = ww_cuda_init(ctx);
        if (st == WW_OK) {
            ctx->backend = WW_BACKEND_CUDA;
        } else if (o.backend == WW_BACKEND_CUDA || st == WW_ERR_CALIBRATION || st == WW_ERR_IO) {
            /* a bad calibration file the user named (the option or WW_CALIBRATION; the cache
             * file never fails) is the user's to fix, even where auto could use the CPU */
            ww_ctx_destroy(ctx);
            return st;
        }
    }
    if (ctx->backend == WW_BACKEND_CPU) {
        ctx->calibration_source[0] = '\0'; /* a CPU context has no GPU model, even after a fallback */
        snprintf(ctx->description, sizeof ctx->description, "cpu (%d thread%s, %s)", threads,
                 threads == 1 ? "" : "s", cpu_isa_name());
    }
    *out = ctx;
    return WW_OK;
}

void ww_ctx_destroy(ww_ctx *ctx)
{
    if (ctx == NULL)
        return;
    if (ctx->cuda)
        ww_cuda_shutdown(ctx);
    if (ctx->cpu) {
        for (int t = 0; t < ctx->num_threads; t++) {
            ww_buffer_free(&ctx->cpu[t].a);
            ww_buffer_free(&ctx->cpu[t].b);
            ww_buffer_free(&ctx->cpu[t].work);
        }
        free(ctx->cpu);
    }
    ww_buffer_free(&ctx->shared);
    free(ctx->calibration_path);
    free(ctx);
}

ww_backend ww_ctx_backend(const ww_ctx *ctx) { return ctx ? ctx->backend : WW_BACKEND_AUTO; }
int ww_ctx_num_threads(const ww_ctx *ctx) { return ctx ? ctx->num_threads : 0; }
const char *ww_ctx_describe(const ww_ctx *ctx) { return ctx ? ctx->description : "(null context)"; }
const char *ww_ctx_calibration(const ww_ctx *ctx) { return ctx ? ctx->calibration_source : ""; }
ww_backend ww_ctx_last_backend(const ww_ctx *ctx) { return ctx ? ctx->last_backend : WW_BACKEND_AUTO; }

