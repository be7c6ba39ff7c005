/* Soft-DTW batches on the GPU (device data): the pairs' metadata, the memory plan and the launches
 * of softdtw_kernels.cuh. The table of every pair is stored whole (in the data's type); a batch
 * whose tables do not fit the free device memory runs in chunks of pairs that do, and a pair whose
 * own table does not fit is WW_ERR_DEVICE_MEMORY (the device has no checkpointed backward pass in
 * this version: the CPU's has). */
#include "cuda_common.cuh"
#include "softdtw_kernels.cuh"

#include <vector>

#define SDTW_THREADS 256

template <typename T> static inline typename coef_of<T>::type coef_of_measure(const ww_measure *m);
template <> inline ww_coef_f64 coef_of_measure<double>(const ww_measure *m) { return ww_measure_coef_f64(m); }
template <> inline ww_coef_f32 coef_of_measure<float>(const ww_measure *m) { return ww_measure_coef_f32(m); }

static size_t first_sample(const ww_dataset *d, size_t i) { return d->offsets ? d->offsets[i] : i * d->length; }

/* Bytes of device memory a pair needs: its table and its scratch. */
static size_t pair_bytes(size_t n, size_t m, size_t elem) { return ((n + 2) * (m + 2) + 6 * (n + 2)) * elem; }

/* One pass over the pairs [begin, end) of the batch: the pairs (x_b, y_b) of a and b, forward and,
 * with gradients, backward, scaled by `scale` into values, ga and gb (device, already zeroed). */
template <typename T>
static ww_status run_pass(ww_cuda_state *s, const ww_measure *m, const ww_dataset *a, const ww_dataset *b,
                          T scale, T *values, T *ga, T *gb, int grads)
{
    const size_t count = a->count;
    const typename coef_of<T>::type c = coef_of_measure<T>(m);
    size_t begin = 0;
    std::vector<sdtw_pair> pairs;
    while (begin < count) {
        size_t free_bytes = 0, total_bytes = 0;
        WW_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
        const size_t budget = free_bytes / 10 * 9 + s->work.bytes; /* the work buffer is reused */
        /* the chunk: pairs while their tables fit */
        pairs.clear();
        size_t bytes = 0, end = begin;
        while (end < count) {
            const size_t n = ww_dataset_length(a, end), mm = ww_dataset_length(b, end);
            const size_t need = pair_bytes(n, mm, sizeof(T));
            if (bytes + need > budget && end > begin)
                break;
            sdtw_pair p;
            p.x0 = (long long)first_sample(a, end);
            p.y0 = (long long)first_sample(b, end);
            p.n = (int)n;
            p.m = (int)mm;
            p.r0 = (long long)(bytes / sizeof(T));
            p.s0 = p.r0 + (long long)((n + 2) * (mm + 2));
            const size_t r = ww_measure_radius(m, n, mm);
            p.radius = ww_measure_windowed(m, n, mm) ? (long long)r : -1;
            pairs.push_back(p);
            bytes += need;
            end++;
        }
        if (bytes > budget)
            return WW_ERR_DEVICE_MEMORY;
        /* the pairs' metadata after the tables, at an offset aligned for its 8-byte fields (the
         * tables of float data end on any multiple of 4 bytes) */
        const size_t tables = (bytes + 255) & ~(size_t)255;
        const size_t meta = (pairs.size() * sizeof(sdtw_pair) + 255) & ~(size_t)255;
        ww_status st = ww_device_reserve(&s->work, tables + meta);
        if (st != WW_OK)
            return st;
        T *table = (T *)s->work.ptr;
        sdtw_pair *dpairs = (sdtw_pair *)((char *)s->work.ptr + tables);
        WW_CUDA_TRY(cudaMemcpyAsync(dpairs, pairs.data(), pairs.size() * sizeof(sdtw_pair), cudaMemcpyHostToDevice,
                                    s->stream));
        const unsigned blocks = (unsigned)pairs.size();
        /* threads per block: the longest diagonal of the chunk (the shorter series), in warps, at most
         * SDTW_THREADS */
        int diagonal = 1;
        for (const sdtw_pair &q : pairs)
            diagonal = (q.n < q.m ? q.n : q.m) > diagonal ? (q.n < q.m ? q.n : q.m) : diagonal;
        const int threads = diagonal >= SDTW_THREADS ? SDTW_THREADS : (diagonal + 31) / 32 * 32;
        sdtw_forward_kernel<T><<<blocks, threads, 0, s->stream>>>(
            dpairs, (const T *)a->values, (const T *)b->values, (int)a->dim, c, table, values + begin, scale);
        WW_CUDA_TRY(cudaGetLastError());
        if (grads) {
            sdtw_backward_kernel<T><<<blocks, threads, 0, s->stream>>>(
                dpairs, (const T *)a->values, (const T *)b->values, (int)a->dim, c.inv_gamma, table, table, ga, gb, scale);
            WW_CUDA_TRY(cudaGetLastError());
        }
        /* the next chunk reuses the buffers: wait for this one (the host reads `pairs` again) */
        WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
        begin = end;
    }
    return WW_OK;
}

static size_t samples_of(const ww_dataset *d) { return d->offsets ? d->offsets[d->count] : d->count * d->length; }

template <typename T>
static ww_status batch_typed(ww_cuda_state *s, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                             void *values, void *grad_x, void *grad_y)
{
    const size_t nx = samples_of(x) * x->dim, ny = samples_of(y) * y->dim;
    /* NaN or infinite values: nothing is written */
    ww_status st = ww_device_reserve(&s->result, 2 * sizeof(double)); /* [0]: the flag */
    if (st != WW_OK)
        return st;
    int *flag = (int *)s->result.ptr, host_flag = 0;
    WW_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int), s->stream));
    sdtw_check_kernel<T><<<256, 256, 0, s->stream>>>((const T *)x->values, (long long)nx, flag);
    sdtw_check_kernel<T><<<256, 256, 0, s->stream>>>((const T *)y->values, (long long)ny, flag);
    WW_CUDA_TRY(cudaMemcpyAsync(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    if (host_flag)
        return WW_ERR_NONFINITE;
    const int grads = grad_x != NULL || grad_y != NULL;
    T *v = (T *)values, *gx = (T *)grad_x, *gy = (T *)grad_y;
    WW_CUDA_TRY(cudaMemsetAsync(v, 0, x->count * sizeof(T), s->stream));
    if (gx)
        WW_CUDA_TRY(cudaMemsetAsync(gx, 0, nx * sizeof(T), s->stream));
    if (gy)
        WW_CUDA_TRY(cudaMemsetAsync(gy, 0, ny * sizeof(T), s->stream));
    if ((st = run_pass<T>(s, m, x, y, (T)1, v, gx, gy, grads)) != WW_OK)
        return st;
    if (m->params.softdtw.divergence) {
        /* D = sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2: each self term's gradient lands twice in its array */
        if ((st = run_pass<T>(s, m, x, x, (T)-0.5, v, gx, gx, grads && gx)) != WW_OK ||
            (st = run_pass<T>(s, m, y, y, (T)-0.5, v, gy, gy, grads && gy)) != WW_OK)
            return st;
    }
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    return WW_OK;
}

ww_status ww_cuda_softdtw_batch(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                void *values, void *grad_x, void *grad_y)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    const void *pointers[5] = {x->values, y->values, values, grad_x, grad_y};
    for (int k = 0; k < 5; k++)
        if (pointers[k] != NULL) {
            ww_status st = ww_cuda_check_device_pointer(pointers[k]);
            if (st != WW_OK)
                return st;
        }
    for (size_t b = 0; b < x->count; b++)
        if (ww_dataset_length(x, b) >= WW_CUDA_MAX_LENGTH || ww_dataset_length(y, b) >= WW_CUDA_MAX_LENGTH)
            return WW_ERR_OVERFLOW;
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = x->dtype == WW_F32 ? batch_typed<float>(s, m, x, y, values, grad_x, grad_y)
                                      : batch_typed<double>(s, m, x, y, values, grad_x, grad_y);
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}

ww_status ww_cuda_softdtw_gradient(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b,
                                   double *value, double *grad_a, double *grad_b)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    if (a->dtype != WW_F64) /* the gradients are doubles: float32 device series go through the batch */
        return WW_ERR_UNSUPPORTED;
    ww_dataset x = ww_dataset_f64((const double *)a->values, NULL, NULL, 1, a->length, a->dim);
    ww_dataset y = ww_dataset_f64((const double *)b->values, NULL, NULL, 1, b->length, b->dim);
    x.memory = y.memory = WW_DEVICE;
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = ww_device_reserve(&s->result, 2 * sizeof(double));
    ww_cuda_leave(guard);
    if (st != WW_OK)
        return st;
    double *dvalue = (double *)s->result.ptr + 1; /* [0] is the batch's NaN flag */
    if ((st = ww_cuda_softdtw_batch(ctx, m, &x, &y, dvalue, grad_a, grad_b)) != WW_OK)
        return st;
    if (value) {
        guard = ww_cuda_enter(s);
        const cudaError_t e = cudaMemcpy(value, dvalue, sizeof(double), cudaMemcpyDeviceToHost);
        ww_cuda_leave(guard);
        if (e != cudaSuccess)
            return ww_cuda_status(e);
    }
    return WW_OK;
}
