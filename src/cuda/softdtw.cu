/* Soft-DTW batches on the GPU (device data): the pairs' metadata, the launch shape, the memory plan
 * and the launches of softdtw_kernels.cuh. The value alone needs one boundary row per pair. With
 * gradients, R is stored whole (compact) when every pair's table fits the context's soft-DTW budget
 * per pair (ww_softdtw_set_memory_budget, as on the CPU), else the bands' boundary rows are kept and
 * the backward pass recomputes each band (the same bits, about twice the forward's work). A batch
 * whose memory does not fit the free device memory runs in chunks of pairs that do; a pair that
 * does not fit alone is WW_ERR_DEVICE_MEMORY. */
#include "cuda_common.cuh"
#include "softdtw_launch.cuh"

#include <limits.h>
#include <vector>

template <typename T> static inline typename coef_of<T>::type coef_of_measure(const ww_measure *m);
template <> inline ww_coef_f64 coef_of_measure<double>(const ww_measure *m) { return ww_measure_coef_f64(m); }
template <> inline ww_coef_f32 coef_of_measure<float>(const ww_measure *m) { return ww_measure_coef_f32(m); }

static size_t first_sample(const ww_dataset *d, size_t i) { return d->offsets ? d->offsets[i] : i * d->length; }

/* The block of a launch: P threads of K rows each (a band of H = P K rows; rows are the first
 * series' samples). A step costs a thread about as much bookkeeping (exchange, barrier, the next
 * samples) as one cell, and the cells of its K rows are independent: so K = 4 rows per thread
 * wherever the series have 4 rows per lane of a warp, and the threads the longest series needs, up
 * to sdtw_max_threads (longer series: several bands). A band of H rows leaves (H - 1) / (m + H - 1)
 * of its thread-steps idle (the ramp of the anti-diagonals), which more rows per thread also cut.
 * Measured on an H200 (bench/results/gpu-softdtw.md): B = 512, N = 512 took 1.11 ms forward with
 * 512 threads of one row, the first version. */
template <typename T> static sdtw_shape choose_shape(size_t longest_rows)
{
    const size_t most = (size_t)sdtw_max_threads<T>();
    if (longest_rows <= 32)
        return {32, 1};
    if (longest_rows <= 64)
        return {32, 2};
    const size_t lanes = (longest_rows + 3) / 4, warps = (lanes + 31) / 32;
    return {(int)(warps * 32 < most ? warps * 32 : most), 4};
}

/* Elements of device memory a pair needs: its boundary rows, then its table (see sdtw_pair);
 * SIZE_MAX: more than can be counted. */
static size_t pair_rows(size_t n, size_t m, size_t band_rows, int mode)
{
    const size_t bands = (n + band_rows - 1) / band_rows;
    return (mode == SDTW_CHECKPOINTS ? bands : 1) * (m + 1) + 2 * (m + 2);
}
static size_t pair_table(size_t n, size_t m, size_t band_rows, int mode)
{
    const size_t bands = (n + band_rows - 1) / band_rows;
    size_t cells = 0;
    if (mode == SDTW_VALUE)
        return 0;
    if (!ww_mul_size(mode == SDTW_COMPACT ? bands * band_rows : band_rows, m, &cells))
        return SIZE_MAX;
    return cells;
}

/* A pass's memory plan: the block shape, what it keeps of R, and the device memory its pairs need
 * (elements of T, each pair's boundary rows, table and entry of the table of pairs). */
struct pass_plan {
    sdtw_shape shape;
    size_t band_rows, meta_per_pair, total, largest;
    int mode;
};

/* Elements of device memory beyond the pairs' own: the two 256-byte alignments of the work buffer's
 * parts (at most 510 bytes). A chunk reserves its elements plus this, and the plan's fast path
 * checks the same sum, so that a batch that passes it never grows the buffer unchecked. */
template <typename T> static size_t plan_slack() { return 1024 / sizeof(T); }

template <typename T> static void plan_memory(pass_plan *pl, const ww_dataset *a, const ww_dataset *b)
{
    pl->total = pl->largest = 0;
    for (size_t k = 0; k < a->count; k++) {
        const size_t n = ww_dataset_length(a, k), mm = ww_dataset_length(b, k);
        const size_t rows = pair_rows(n, mm, pl->band_rows, pl->mode), table = pair_table(n, mm, pl->band_rows, pl->mode);
        if (table == SIZE_MAX || table > SIZE_MAX / 4 - rows ||
            pl->total > SIZE_MAX / 4 - rows - table - pl->meta_per_pair) {
            pl->total = pl->largest = SIZE_MAX / 4; /* more than any device holds */
            return;
        }
        const size_t need = rows + table + pl->meta_per_pair;
        pl->total += need;
        pl->largest = need > pl->largest ? need : pl->largest;
    }
}

/* The plan of a pass over the pairs (a_b, b_b), checked against the device's memory before anything
 * is written: WW_ERR_DEVICE_MEMORY when a pair cannot fit alone. With gradients, R is kept whole
 * when every pair's table fits the budget per pair and the batch runs in at most a few chunks of
 * pairs that fill the GPU; else (a pair over the budget, or whole tables that leave too few pairs
 * per chunk or do not fit at all) the batch keeps checkpoints, each pair recomputing its bands:
 * about 1.6 times the time of whole tables, but a chunk of pairs costs a synchronisation, and a
 * chunk of fewer pairs than the GPU's multiprocessors leaves most of it idle. */
template <typename T>
static ww_status plan_pass(ww_cuda_state *s, size_t table_budget, const ww_dataset *a, const ww_dataset *b, int grads,
                           pass_plan *pl)
{
    size_t longest = 0;
    for (size_t k = 0; k < a->count; k++)
        longest = ww_dataset_length(a, k) > longest ? ww_dataset_length(a, k) : longest;
    pl->shape = choose_shape<T>(longest);
    pl->band_rows = (size_t)pl->shape.threads * (size_t)pl->shape.rows_per_thread;
    /* a regular batch (fixed lengths) needs no table of pairs on the device (sdtw_pairs); an
     * irregular one's table is counted with its pairs' memory, in elements of T */
    const bool regular = a->offsets == NULL && b->offsets == NULL;
    pl->meta_per_pair = regular ? 0 : (sizeof(sdtw_pair) + sizeof(T) - 1) / sizeof(T);
    pl->mode = SDTW_VALUE;
    if (grads) {
        pl->mode = SDTW_COMPACT;
        for (size_t k = 0; k < a->count && pl->mode == SDTW_COMPACT; k++) {
            const size_t cells = pair_table(ww_dataset_length(a, k), ww_dataset_length(b, k), pl->band_rows, SDTW_COMPACT);
            if (cells == SIZE_MAX || cells > table_budget / sizeof(T))
                pl->mode = SDTW_CHECKPOINTS;
        }
    }
    const size_t slack = plan_slack<T>();
    for (;;) {
        plan_memory<T>(pl, a, b);
        if (pl->total + slack <= s->work.bytes / sizeof(T))
            return WW_OK; /* the work buffer holds it as it is */
        size_t free_bytes = 0, total_bytes = 0;
        WW_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
        const size_t available = (free_bytes / 10 * 9 + s->work.bytes) / sizeof(T);
        const size_t per_chunk = pl->largest + slack <= available ? (available - slack) / pl->largest : 0;
        const size_t enough = a->count < 2 * (size_t)s->sm_count ? a->count : 2 * (size_t)s->sm_count;
        if (pl->mode == SDTW_COMPACT && pl->total + slack > available && per_chunk < enough) {
            pl->mode = SDTW_CHECKPOINTS;
            continue;
        }
        return pl->largest + slack > available ? WW_ERR_DEVICE_MEMORY : WW_OK;
    }
}

/* One pass over the pairs (x_b, y_b) of a and b, as planned: forward and, with gradients, backward,
 * scaled by `scale` into values, ga and gb (device, already zeroed), unless *nonfinite (device) is
 * set. */
template <typename T>
static ww_status run_pass(ww_cuda_state *s, const pass_plan &plan, const ww_measure *m, const ww_dataset *a,
                          const ww_dataset *b, T scale, T *values, T *ga, T *gb, int grads, int accumulate,
                          const int *nonfinite)
{
    const size_t count = a->count;
    if (count == 0)
        return WW_OK;
    const typename coef_of<T>::type c = coef_of_measure<T>(m);
    const sdtw_shape shape = plan.shape;
    const size_t band_rows = plan.band_rows, meta_per_pair = plan.meta_per_pair;
    size_t total = plan.total;
    const int mode = plan.mode;
    const bool regular = a->offsets == NULL && b->offsets == NULL;
    const size_t slack = plan_slack<T>();
    size_t free_bytes = 0, total_bytes = 0;
    sdtw_launch_args L;
    L.shape = shape;
    L.dim = (int)a->dim;
    L.mode = mode;
    L.accumulate = accumulate;
    L.stream = s->stream;
    size_t begin = 0;
    std::vector<sdtw_pair> pairs;
    while (begin < count) {
        /* the chunk: every pair when they fit the work buffer already reserved, else pairs while they
         * fit the free device memory (the work buffer is reused); at most INT_MAX pairs (blocks) */
        size_t budget = SIZE_MAX / 4;
        if (total + slack > s->work.bytes / sizeof(T)) {
            WW_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
            budget = (free_bytes / 10 * 9 + s->work.bytes) / sizeof(T) - slack;
        }
        pairs.clear();
        size_t used = 0, end = begin;
        sdtw_pair first = {};
        while (end < count && end - begin < (size_t)INT_MAX) {
            const size_t n = ww_dataset_length(a, end), mm = ww_dataset_length(b, end);
            const size_t rows = pair_rows(n, mm, band_rows, mode), table = pair_table(n, mm, band_rows, mode);
            if (used + rows + table + meta_per_pair * (end - begin + 1) > budget) {
                if (end == begin)
                    return WW_ERR_DEVICE_MEMORY;
                break;
            }
            sdtw_pair p;
            p.x0 = (long long)first_sample(a, end);
            p.y0 = (long long)first_sample(b, end);
            p.n = (int)n;
            p.m = (int)mm;
            p.rows0 = (long long)used;
            p.table0 = (long long)(used + rows);
            const size_t r = ww_measure_radius(m, n, mm);
            p.radius = ww_measure_windowed(m, n, mm) ? (long long)r : -1;
            if (end == begin)
                first = p;
            if (!regular)
                pairs.push_back(p);
            used += rows + table;
            end++;
        }
        total -= used + meta_per_pair * (end - begin);
        /* the pairs' table after the rows and tables, at an offset aligned for its 8-byte fields
         * (float data ends on any multiple of 4 bytes) */
        const size_t data = (used * sizeof(T) + 255) & ~(size_t)255;
        /* the chunk's elements and the slack, the sum plan_pass checks: a next call of this shape
         * fits as it is and asks nothing of the driver (cudaMemGetInfo: about 20 us); growing the
         * buffer frees the old one (cudaFree waits for a previous pass's kernels) */
        ww_status st = ww_device_reserve(&s->work, (used + meta_per_pair * (end - begin) + slack) * sizeof(T));
        if (st != WW_OK)
            return st;
        T *work = (T *)s->work.ptr;
        sdtw_pairs launch_pairs;
        launch_pairs.table = NULL;
        launch_pairs.first = first;
        launch_pairs.x_step = (long long)a->length, launch_pairs.y_step = (long long)b->length;
        launch_pairs.memory_step = (long long)(pair_rows(a->length, b->length, band_rows, mode) +
                                               pair_table(a->length, b->length, band_rows, mode));
        launch_pairs.nonfinite = nonfinite;
        if (!regular) {
            sdtw_pair *dpairs = (sdtw_pair *)((char *)s->work.ptr + data);
            WW_CUDA_TRY(cudaMemcpyAsync(dpairs, pairs.data(), pairs.size() * sizeof(sdtw_pair), cudaMemcpyHostToDevice,
                                        s->stream));
            launch_pairs.table = dpairs;
        }
        L.blocks = (unsigned)(end - begin);
        const T *X = (const T *)a->values, *Y = (const T *)b->values;
        WW_CUDA_TRY(sdtw_launch<T>(L, launch_pairs, X, Y, c, work, values + begin, ga, gb, scale, 0));
        if (grads)
            WW_CUDA_TRY(sdtw_launch<T>(L, launch_pairs, X, Y, c, work, values + begin, ga, gb, scale, 1));
        /* a next chunk reuses the work buffer: wait for this one's kernels (the table of pairs was
         * copied out of `pairs` before cudaMemcpyAsync returned: pageable memory) */
        if (end < count)
            WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
        begin = end;
    }
    return WW_OK;
}

static size_t samples_of(const ww_dataset *d) { return d->offsets ? d->offsets[d->count] : d->count * d->length; }

template <typename T>
static ww_status batch_typed(ww_cuda_state *s, size_t table_budget, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                             void *values, void *grad_x, void *grad_y)
{
    const size_t nx = samples_of(x) * x->dim, ny = samples_of(y) * y->dim;
    /* NaN or infinite values: nothing is written (every kernel after the check reads its flag: no
     * round trip to the host before the work) */
    ww_status st = ww_device_reserve(&s->result, 2 * sizeof(double)); /* [0]: the flag */
    if (st != WW_OK)
        return st;
    int *flag = (int *)s->result.ptr, host_flag = 0;
    WW_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int), s->stream));
    sdtw_check_kernel<T><<<256, 256, 0, s->stream>>>((const T *)x->values, (long long)nx, (const T *)y->values,
                                                    (long long)ny, flag);
    const int grads = grad_x != NULL || grad_y != NULL;
    T *v = (T *)values, *gx = (T *)grad_x, *gy = (T *)grad_y;
    /* the values: stored by the first pass (run_pass's accumulate) */
    if (gx)
        sdtw_zero_kernel<T><<<256, 256, 0, s->stream>>>(gx, (long long)nx, flag);
    if (gy)
        sdtw_zero_kernel<T><<<256, 256, 0, s->stream>>>(gy, (long long)ny, flag);
    WW_CUDA_TRY(cudaGetLastError());
    /* every pass planned before the first runs: a pass that cannot fit fails before any writes
     * (the divergence's self terms may need more memory than the pairs) */
    const int divergence = m->params.softdtw.divergence;
    pass_plan plan_xy, plan_xx, plan_yy;
    if ((st = plan_pass<T>(s, table_budget, x, y, grads, &plan_xy)) != WW_OK ||
        (divergence && (st = plan_pass<T>(s, table_budget, x, x, grads && gx, &plan_xx)) != WW_OK) ||
        (divergence && (st = plan_pass<T>(s, table_budget, y, y, grads && gy, &plan_yy)) != WW_OK))
        return st;
    if ((st = run_pass<T>(s, plan_xy, m, x, y, (T)1, v, gx, gy, grads, 0, flag)) != WW_OK)
        return st;
    if (divergence) {
        /* D = sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2: each self term's gradient lands twice in its array */
        if ((st = run_pass<T>(s, plan_xx, m, x, x, (T)-0.5, v, gx, gx, grads && gx, 1, flag)) != WW_OK ||
            (st = run_pass<T>(s, plan_yy, m, y, y, (T)-0.5, v, gy, gy, grads && gy, 1, flag)) != WW_OK)
            return st;
    }
    WW_CUDA_TRY(cudaMemcpyAsync(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    return host_flag ? WW_ERR_NONFINITE : WW_OK;
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
    ww_status st = x->dtype == WW_F32 ? batch_typed<float>(s, ctx->softdtw_memory_budget, m, x, y, values, grad_x, grad_y)
                                      : batch_typed<double>(s, ctx->softdtw_memory_budget, m, x, y, values, grad_x, grad_y);
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
