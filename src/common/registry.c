/* The registry: which backend serves which measure and operation, and where a call runs. All the
 * policy of the library is here (what backend AUTO picks, when GPU work goes to the CPU instead);
 * the engines compute what they are given and never hand work to another backend. */
#include "internal.h"
#include "../measures/measures.h"

#define OP_BIT(op) (1u << (op))
#define ALL_OPS (OP_BIT(WW_OP_DISTANCE) | OP_BIT(WW_OP_PAIRWISE) | OP_BIT(WW_OP_INDEX))
#define ENGINE_BIT(e) (1u << (e))

typedef struct support {
    ww_measure_kind kind;
    unsigned cpu_ops, cuda_ops;   /* operations each backend has engines for */
    int cpu_window, cuda_window;  /* ... with a window */
    unsigned cuda_pair_engines;   /* the GPU engines that may be forced for one pair ... */
    unsigned cuda_window_engines; /* ... and for one pair with a window */
} support;

/* One row per measure. The CPU engines are generic over every measure and window. The GPU's are
 * too (src/cuda/: the wavefront pair engine, the matrix strategies and indexes, each a template over
 * the measure and the window), except the per-diagonal baseline, which computes TWED without a
 * window only. */
#define CUDA_PAIR_ALL (ENGINE_BIT(WW_ENGINE_CUDA_DIAGONAL) | ENGINE_BIT(WW_ENGINE_CUDA_WAVEFRONT))
#define CUDA_PAIR_WAVEFRONT ENGINE_BIT(WW_ENGINE_CUDA_WAVEFRONT)
static const support registry[] = {
    {WW_MEASURE_TWED, ALL_OPS, ALL_OPS, 1, 1, CUDA_PAIR_ALL, CUDA_PAIR_WAVEFRONT},
    {WW_MEASURE_DTW, ALL_OPS, ALL_OPS, 1, 1, CUDA_PAIR_WAVEFRONT, CUDA_PAIR_WAVEFRONT},
    /* soft-DTW: the CPU engines (the cell reads gamma, which the GPU's generic kernels do not pass) */
    {WW_MEASURE_SOFTDTW, ALL_OPS, 0, 1, 0, 0, 0},
};

static const support *support_of(ww_measure_kind kind)
{
    for (size_t k = 0; k < sizeof registry / sizeof registry[0]; k++)
        if (registry[k].kind == kind)
            return &registry[k];
    return NULL;
}

static int engine_is_cuda(ww_engine e) { return e == WW_ENGINE_CUDA_DIAGONAL || e == WW_ENGINE_CUDA_WAVEFRONT; }

static ww_status supports(const ww_ctx *ctx, ww_backend backend, const ww_measure *m, ww_op op, int windowed)
{
    const support *s = support_of(m->kind);
    if (s == NULL)
        return WW_ERR_MEASURE;
    if (backend == WW_BACKEND_CPU)
        return (s->cpu_ops & OP_BIT(op)) && (!windowed || s->cpu_window) ? WW_OK : WW_ERR_UNSUPPORTED;
    if (!(s->cuda_ops & OP_BIT(op)) || (windowed && !s->cuda_window))
        return WW_ERR_UNSUPPORTED;
    if (op == WW_OP_DISTANCE && engine_is_cuda(ctx->engine) &&
        !((windowed ? s->cuda_window_engines : s->cuda_pair_engines) & ENGINE_BIT(ctx->engine)))
        return WW_ERR_UNSUPPORTED;
    return WW_OK;
}

ww_status ww_registry_supports(const ww_ctx *ctx, ww_backend backend, const ww_measure *m, ww_op op)
{
    return supports(ctx, backend, m, op, ww_measure_has_window(m));
}

ww_status ww_registry_route(const ww_ctx *ctx, const ww_measure *m, ww_op op, int on_device, double cells,
                            size_t longest, ww_backend *backend)
{
    if (ww_measure_traits_of(m->kind) == NULL)
        return WW_ERR_MEASURE;
    /* a radius as wide as the matrix is no window; a fraction is a window (below 1) */
    const int windowed = m->window != WW_NO_WINDOW ? m->window < longest
                                                   : m->window_fraction >= 0.0 && m->window_fraction < 1.0;
    *backend = WW_BACKEND_CPU;
    if (ctx->backend == WW_BACKEND_CPU)
        return on_device ? WW_ERR_MEMORY_KIND : supports(ctx, WW_BACKEND_CPU, m, op, windowed);
    /* a CUDA context: with backend AUTO, host work the GPU cannot serve, or serve sooner, is the CPU's */
    const int may_use_cpu = ctx->requested == WW_BACKEND_AUTO && !on_device &&
                            supports(ctx, WW_BACKEND_CPU, m, op, windowed) == WW_OK;
    ww_status st = supports(ctx, WW_BACKEND_CUDA, m, op, windowed);
    if (st != WW_OK)
        return may_use_cpu ? WW_OK : st;
    if (longest >= WW_CUDA_MAX_LENGTH)
        return may_use_cpu ? WW_OK : WW_ERR_OVERFLOW;
    if (may_use_cpu && cells <= WW_SMALL_WORK)
        return WW_OK;
    *backend = WW_BACKEND_CUDA;
    return WW_OK;
}

int ww_registry_retry_on_cpu(const ww_ctx *ctx, ww_status st, int on_device)
{
    return st == WW_ERR_DEVICE_MEMORY && ctx->requested == WW_BACKEND_AUTO && !on_device;
}
