/* Indexes: a dataset prepared once and kept by the context (on the GPU when the registry has an
 * engine for the measure there), for repeated queries. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ww_status ww_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_measure *m, ww_index **out)
{
    if (ctx == NULL || out == NULL || m == NULL)
        return WW_ERR_NULL_POINTER;
    *out = NULL;
    ww_status st = ww_measure_check(m);
    if (st == WW_OK)
        st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    ww_backend backend;
    if ((st = ww_registry_route(ctx, m, WW_OP_INDEX, x->memory == WW_DEVICE, INFINITY, 0, &backend)) != WW_OK)
        return st;
    ww_index *ix = (ww_index *)calloc(1, sizeof *ix);
    if (ix == NULL)
        return WW_ERR_MEMORY;
    ix->ctx = ctx;
    ix->measure = *m;
    ix->count = x->count;
    if (backend == WW_BACKEND_CUDA) {
        st = ww_cuda_index_create(ctx, x, m, ix);
    } else {
        st = ww_dataset_check(x);
        if (st == WW_OK)
            st = ww_index_copy_host(x, ix);
    }
    if (st != WW_OK) {
        ww_index_destroy(ix);
        return st;
    }
    *out = ix;
    return WW_OK;
}

void ww_index_destroy(ww_index *ix)
{
    if (ix == NULL)
        return;
    if (ix->device)
        ww_cuda_index_destroy(ix);
    free(ix->host_storage);
    free(ix);
}

size_t ww_index_count(const ww_index *ix) { return ix ? ix->count : 0; }

ww_status ww_index_copy_host(const ww_dataset *x, ww_index *ix)
{
    const size_t es = x->dtype == WW_F32 ? sizeof(float) : sizeof(double);
    const size_t samples = x->offsets ? x->offsets[x->count] : x->count * x->length;
    size_t vbytes = samples * x->dim * es, tbytes = x->stamps ? samples * es : 0;
    size_t obytes = x->offsets ? (x->count + 1) * sizeof(size_t) : 0;
    char *mem = (char *)malloc(vbytes + tbytes + obytes + 1);
    if (mem == NULL)
        return WW_ERR_MEMORY;
    memcpy(mem, x->values, vbytes);
    if (tbytes)
        memcpy(mem + vbytes, x->stamps, tbytes);
    if (obytes)
        memcpy(mem + vbytes + tbytes, x->offsets, obytes);
    ix->host = *x;
    ix->host.values = mem;
    ix->host.stamps = tbytes ? mem + vbytes : NULL;
    ix->host.offsets = obytes ? (const size_t *)(mem + vbytes + tbytes) : NULL;
    ix->host.memory = WW_HOST;
    ix->host_storage = mem;
    return WW_OK;
}

ww_status ww_index_pairwise(ww_ctx *ctx, const ww_index *ix, const ww_dataset *queries, void *out,
                            const ww_pairwise_options *opt)
{
    if (ctx == NULL || ix == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    if (ix->ctx != ctx)
        return WW_ERR_BACKEND;
    ww_pairwise_options o;
    ww_status st = ww_resolve_pairwise(queries, &ix->host, opt, &o);
    if (st != WW_OK)
        return st;
    ctx->last_backend = ix->device ? WW_BACKEND_CUDA : WW_BACKEND_CPU;
    if (ix->device)
        return ww_cuda_index_pairwise(ctx, ix, queries, out, &o);
    if (queries->memory == WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    if (ix->measure.kind == WW_MEASURE_SOFTDTW)
        return ww_softdtw_cpu_pairwise(ctx, &ix->measure, queries, &ix->host, out, &o);
    return ww_cpu_pairwise(ctx, &ix->measure, queries, &ix->host, out, &o);
}

