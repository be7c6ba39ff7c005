/* Indexes on the GPU: the columns' series prepared once for the index's measure and kept on the
 * device, for repeated matrices of queries against them (the matrix engine, pairwise.cu). */
#include "pairwise.cuh"

#include <stdlib.h>
#include <string.h>

struct cuda_index {
    set_buffers buffers;
    prepared_columns<double> f64;
    prepared_columns<float> f32;
    ww_device_buffer raw; /* the caller's device data, copied: the fallback for long series */
};

static ww_status index_create(ww_ctx *ctx, const ww_dataset *x, const ww_measure *m, ww_index *ix)
{
    ww_cuda_state *s = ctx->cuda;
    cuda_index *ci = (cuda_index *)calloc(1, sizeof *ci);
    if (ci == NULL)
        return WW_ERR_MEMORY;
    ix->device = ci;
    ww_status st = ww_device_reserve(&s->result, 64);
    if (st != WW_OK)
        return st;
    int *dflags = (int *)s->result.ptr;
    WW_CUDA_TRY(cudaMemsetAsync(dflags, 0, sizeof(int), s->stream));
    if (x->dtype == WW_F32)
        st = ww_cuda_upload_set(s, m, x, &ci->buffers, dflags, &ci->f32);
    else
        st = ww_cuda_upload_set(s, m, x, &ci->buffers, dflags, &ci->f64);
    if (st != WW_OK)
        return st;
    if ((st = ww_cuda_read_flags(s, dflags)) != WW_OK)
        return st;
    /* the raw series too, for the pair engine (long series) and as the index's own copy */
    if (x->memory == WW_HOST) {
        /* the raw upload has served its purpose: the index keeps the prepared set and a host copy */
        cudaFree(ci->buffers.raw.ptr);
        ci->buffers.raw.ptr = NULL;
        ci->buffers.raw.bytes = 0;
        return ww_index_copy_host(x, ix);
    }
    const size_t es = x->dtype == WW_F32 ? sizeof(float) : sizeof(double);
    const size_t samples = x->offsets ? x->offsets[x->count] : x->count * x->length;
    const size_t vbytes = samples * x->dim * es, tbytes = x->stamps ? samples * es : 0;
    if ((st = ww_device_reserve(&ci->raw, vbytes + tbytes + 256)) != WW_OK)
        return st;
    WW_CUDA_TRY(cudaMemcpyAsync(ci->raw.ptr, x->values, vbytes, cudaMemcpyDeviceToDevice, s->stream));
    if (tbytes)
        WW_CUDA_TRY(cudaMemcpyAsync((char *)ci->raw.ptr + vbytes, x->stamps, tbytes, cudaMemcpyDeviceToDevice, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    size_t obytes = x->offsets ? (x->count + 1) * sizeof(size_t) : 0;
    if (obytes) {
        ix->host_storage = malloc(obytes);
        if (ix->host_storage == NULL)
            return WW_ERR_MEMORY;
        memcpy(ix->host_storage, x->offsets, obytes);
    }
    ix->host = *x;
    ix->host.values = ci->raw.ptr;
    ix->host.stamps = tbytes ? (const char *)ci->raw.ptr + vbytes : NULL;
    ix->host.offsets = obytes ? (const size_t *)ix->host_storage : NULL;
    return WW_OK;
}

ww_status ww_cuda_index_create(ww_ctx *ctx, const ww_dataset *x_in, const ww_measure *m, ww_index *ix)
{
    if (ctx->cuda == NULL)
        return WW_ERR_NO_DEVICE;
    /* the series as the measure reads them (stamps dropped, and not kept, when it has none) */
    const ww_dataset xm = ww_cuda_measured_dataset(m, x_in);
    const ww_dataset *x = &xm;
    ww_status st = ww_cuda_check_set(x, m);
    if (st != WW_OK)
        return st;
    ww_cuda_device_guard guard = ww_cuda_enter(ctx->cuda);
    st = dispatch_measure(m->kind, [&](auto) { return index_create(ctx, x, m, ix); });
    ww_cuda_recover(ctx->cuda, st);
    ww_cuda_leave(guard);
    return st;
}

void ww_cuda_index_destroy(ww_index *ix)
{
    cuda_index *ci = (cuda_index *)ix->device;
    if (ci == NULL)
        return;
    ww_cuda_device_guard guard = ww_cuda_enter(ix->ctx->cuda);
    ww_cuda_release_set(&ci->buffers);
    if (ci->raw.ptr)
        cudaFree(ci->raw.ptr);
    free(ci);
    ix->device = NULL;
    ww_cuda_leave(guard);
}

ww_status ww_cuda_index_pairwise(ww_ctx *ctx, const ww_index *ix, const ww_dataset *queries, void *out,
                                 const ww_pairwise_options *opt)
{
    const cuda_index *ci = (const cuda_index *)ix->device;
    ww_status st = ww_cuda_check_set(queries, &ix->measure);
    if (st != WW_OK)
        return st;
    return ww_cuda_run_pairwise(ctx, &ix->measure, queries, &ix->host, &ci->f32, &ci->f64, out, opt, 1);
}
