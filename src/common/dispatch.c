/* Distances and matrices: argument checks, then the registry's choice of backend. Every entry
 * point checks everything a user can get wrong before any engine runs. */
#include "internal.h"
#include "../measures/window.h"

#include <math.h>
#include <stddef.h>

static int engine_is_cpu(ww_engine e)
{
    return e == WW_ENGINE_CPU_REFERENCE || e == WW_ENGINE_CPU_BAND || e == WW_ENGINE_CPU_STRIP;
}

/* The CPU engine for one pair: the context's own when it forced a CPU engine, else the default. */
static ww_engine cpu_engine(const ww_ctx *ctx) { return engine_is_cpu(ctx->engine) ? ctx->engine : WW_ENGINE_AUTO; }

/* A window's band is computed in 64-bit products of two lengths. */
static ww_status check_window_lengths(const ww_measure *m, size_t longest)
{
    return ww_measure_has_window(m) && longest >= WW_WINDOW_MAX_LENGTH ? WW_ERR_OVERFLOW : WW_OK;
}

ww_status ww_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *out)
{
    if (ctx == NULL || out == NULL || m == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_measure_check(m);
    if (st == WW_OK)
        st = ww_check_series_shape(a);
    if (st == WW_OK)
        st = ww_check_series_shape(b);
    if (st != WW_OK)
        return st;
    if (a->dim != b->dim)
        return WW_ERR_SHAPE;
    if (a->dtype != b->dtype)
        return WW_ERR_DTYPE;
    const size_t longest = a->length > b->length ? a->length : b->length;
    if ((st = check_window_lengths(m, longest)) != WW_OK)
        return st;
    const int on_device = a->memory == WW_DEVICE || b->memory == WW_DEVICE;
    const double cells = (double)ww_measure_cells(m, a->length, b->length) * (double)a->dim;
    ww_backend backend;
    if ((st = ww_registry_route(ctx, m, WW_OP_DISTANCE, on_device, cells, longest, &backend)) != WW_OK)
        return st;
    ctx->last_backend = backend;
    if (backend == WW_BACKEND_CPU)
        return m->kind == WW_MEASURE_SOFTDTW ? ww_softdtw_cpu_distance(ctx, cpu_engine(ctx), m, a, b, out)
                                             : ww_cpu_distance(ctx, cpu_engine(ctx), m, a, b, out);
    st = ww_cuda_distance(ctx, m, a, b, out);
    if (!ww_registry_retry_on_cpu(ctx, st, on_device))
        return st;
    ctx->last_backend = WW_BACKEND_CPU;
    return ww_cpu_distance(ctx, WW_ENGINE_AUTO, m, a, b, out);
}

/* The longest series of a dataset. */
static size_t longest_series(const ww_dataset *x)
{
    if (x->offsets == NULL)
        return x->length;
    size_t longest = 0;
    for (size_t i = 0; i < x->count; i++)
        if (ww_dataset_length(x, i) > longest)
            longest = ww_dataset_length(x, i);
    return longest;
}

static uint64_t samples_between(const ww_dataset *x, size_t begin, size_t end)
{
    return x->offsets ? (uint64_t)(x->offsets[end] - x->offsets[begin]) : (uint64_t)(end - begin) * x->length;
}

ww_status ww_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                      const ww_pairwise_options *opt)
{
    if (ctx == NULL || out == NULL || m == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_measure_check(m);
    if (st != WW_OK)
        return st;
    ww_pairwise_options o;
    if ((st = ww_resolve_pairwise(x, y, opt, &o)) != WW_OK)
        return st;
    const size_t lx = longest_series(x), ly = y ? longest_series(y) : lx, longest = lx > ly ? lx : ly;
    if ((st = check_window_lengths(m, longest)) != WW_OK)
        return st;
    const int on_device = x->memory == WW_DEVICE || (y && y->memory == WW_DEVICE);
    /* the block's cells (x dim), scaled by the window's share of the longest pair */
    const ww_dataset *cols = y ? y : x;
    double cells = (double)samples_between(x, o.row_begin, o.row_end) *
                   (double)samples_between(cols, o.col_begin, o.col_end) * (double)x->dim;
    if (ww_measure_has_window(m) && longest > 0)
        cells *= (double)ww_measure_cells(m, longest, longest) / ((double)longest * (double)longest);
    ww_backend backend;
    if ((st = ww_registry_route(ctx, m, WW_OP_PAIRWISE, on_device, cells, longest, &backend)) != WW_OK)
        return st;
    ctx->last_backend = backend;
    if (backend == WW_BACKEND_CPU)
        return m->kind == WW_MEASURE_SOFTDTW ? ww_softdtw_cpu_pairwise(ctx, m, x, y, out, &o)
                                             : ww_cpu_pairwise(ctx, m, x, y, out, &o);
    st = ww_cuda_pairwise(ctx, m, x, y, out, &o);
    if (!ww_registry_retry_on_cpu(ctx, st, on_device))
        return st;
    ctx->last_backend = WW_BACKEND_CPU;
    return ww_cpu_pairwise(ctx, m, x, y, out, &o);
}

/* ---------------------------------------------------------------- the TWED calls of 0.1 */

static ww_measure twed_measure(const ww_twed_params *p)
{
    const ww_twed_params d = p ? *p : ww_twed_params_default();
    return ww_measure_twed(d.nu, d.lambda, d.degree);
}

ww_status ww_twed(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p, double *out)
{
    const ww_measure m = twed_measure(p);
    return ww_distance(ctx, &m, a, b, out);
}

ww_status ww_twed_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, const ww_twed_params *p, void *out,
                           const ww_pairwise_options *opt)
{
    const ww_measure m = twed_measure(p);
    return ww_pairwise(ctx, &m, x, y, out, opt);
}

ww_status ww_twed_knn(ww_ctx *ctx, const ww_dataset *queries, const ww_dataset *x, const ww_twed_params *p, size_t k,
                      size_t *indices, double *distances, const ww_pairwise_options *opt)
{
    const ww_measure m = twed_measure(p);
    return ww_knn(ctx, &m, queries, x, k, indices, distances, opt);
}
