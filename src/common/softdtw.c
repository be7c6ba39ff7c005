/* Soft-DTW: the API of gradients and batches, and what matrices of the measure need beyond the
 * generic engines (the diagonal of a self matrix, the divergence's self terms). The policy (memory
 * budget, compact table or checkpoints, threads) is here; the computing is src/cpu/softdtw.c's and
 * the generic CPU engines'. */
#include "internal.h"
#include "settings.h"
#include "../cpu/work_queue.h"
#include "../measures/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUDGET ((size_t)256 << 20)
#define BATCH_CELLS_PER_THREAD ((uint64_t)1 << 19) /* about 2 ms of forward + backward on one core */

size_t ww_softdtw_default_budget(void)
{
    const char *v = ww_setting_value(WW_SETTING_SOFTDTW_MEMORY);
    if (v == NULL)
        return DEFAULT_BUDGET;
    char *end = NULL;
    const unsigned long long bytes = strtoull(v, &end, 10);
    return end && *end == '\0' ? (size_t)bytes : DEFAULT_BUDGET;
}

ww_status ww_softdtw_set_memory_budget(ww_ctx *ctx, size_t bytes)
{
    if (ctx == NULL)
        return WW_ERR_NULL_POINTER;
    ctx->softdtw_memory_budget = bytes;
    return WW_OK;
}

size_t ww_softdtw_keep_rows(size_t budget_bytes, size_t na, size_t nb)
{
    const size_t diagonals = na + nb; /* all of them: the compact table */
    const size_t whole = ww_cpu_softdtw_work_doubles(na, nb, 1, diagonals);
    if (whole != 0 && whole <= budget_bytes / sizeof(double))
        return diagonals;
    size_t keep = (size_t)ceil(sqrt((double)diagonals));
    return keep < 1 ? 1 : keep;
}

/* ------------------------------------------------------------------ one pair */

/* Scratch of one pair's gradient in a thread's buffers: prepared a, b, the table, and the
 * gradients in double. */
static ww_status pair_scratch(ww_cpu_scratch *sc, size_t budget, const ww_series *a, const ww_series *b,
                              size_t *keep, ww_prepared *pa, ww_prepared *pb, double **work, double **ga, double **gb)
{
    *keep = ww_softdtw_keep_rows(budget, a->length, b->length);
    const size_t table = ww_cpu_softdtw_work_doubles(a->length, b->length, a->dim, *keep);
    size_t grads = 0, ab;
    if (table == 0 || !ww_mul_size(a->length + b->length, a->dim, &grads) || table > SIZE_MAX / 8 - grads ||
        !ww_mul_size(table + grads, sizeof(double), &ab))
        return WW_ERR_OVERFLOW;
    ww_status st;
    if ((st = ww_buffer_reserve(&sc->a, (ww_prepared_doubles(a->length, a->dim) +
                                         ww_prepared_doubles(b->length, b->dim)) * sizeof(double))) != WW_OK ||
        (st = ww_buffer_reserve(&sc->work, ab)) != WW_OK)
        return st;
    *work = (double *)sc->work.ptr;
    *ga = *work + table;
    *gb = *ga + a->length * a->dim;
    (void)pa, (void)pb;
    return WW_OK;
}

/* Value and gradients (either may be NULL, length x dim doubles, overwritten) of one host pair,
 * checked, with the measure's divergence if set. */
static ww_status pair_gradient(ww_cpu_scratch *sc, size_t budget, const ww_measure *m, const ww_series *a,
                               const ww_series *b, double *value, double *grad_a, double *grad_b)
{
    size_t keep = 0;
    ww_prepared pa, pb;
    double *work, *ga, *gb;
    ww_status st;
    if (grad_a == NULL && grad_b == NULL) { /* the value engine's work only */
        const size_t longer = a->length > b->length ? a->length : b->length;
        if ((st = ww_buffer_reserve(&sc->a, (ww_prepared_doubles(a->length, a->dim) +
                                             ww_prepared_doubles(b->length, b->dim)) * sizeof(double))) != WW_OK ||
            (st = ww_buffer_reserve(&sc->work, ww_cpu_softdtw_value_doubles(longer, longer, a->dim) *
                                                    sizeof(double))) != WW_OK)
            return st;
        work = (double *)sc->work.ptr;
    } else if ((st = pair_scratch(sc, budget, a, b, &keep, &pa, &pb, &work, &ga, &gb)) != WW_OK) {
        return st;
    }
    double *storage = (double *)sc->a.ptr;
    ww_prepare(a, m, 0, storage, &pa);
    ww_prepare(b, m, 0, storage + ww_prepared_doubles(a->length, a->dim), &pb);
    if (grad_a == NULL && grad_b == NULL) { /* values only: the forward pass on three diagonals */
        double v = ww_cpu_softdtw_value_base2(m, &pa, &pb, work);
        if (m->params.softdtw.divergence)
            v -= (ww_cpu_softdtw_value_base2(m, &pa, &pa, work) + ww_cpu_softdtw_value_base2(m, &pb, &pb, work)) / 2;
        if (value)
            *value = v;
        return WW_OK;
    }
    if (grad_a)
        memset(grad_a, 0, a->length * a->dim * sizeof(double));
    if (grad_b)
        memset(grad_b, 0, b->length * b->dim * sizeof(double));
    double v = ww_cpu_softdtw_gradient(m, &pa, &pb, keep, 1.0, grad_a, grad_b, work);
    if (m->params.softdtw.divergence) {
        /* D = sdtw(a, b) - (sdtw(a, a) + sdtw(b, b)) / 2; a self term depends on its series twice */
        const size_t keep_a = ww_softdtw_keep_rows(budget, a->length, a->length);
        const size_t keep_b = ww_softdtw_keep_rows(budget, b->length, b->length);
        double *wk;
        if ((st = ww_buffer_reserve(&sc->b, (ww_cpu_softdtw_work_doubles(a->length, a->length, a->dim, keep_a) >
                                                     ww_cpu_softdtw_work_doubles(b->length, b->length, b->dim, keep_b)
                                                 ? ww_cpu_softdtw_work_doubles(a->length, a->length, a->dim, keep_a)
                                                 : ww_cpu_softdtw_work_doubles(b->length, b->length, b->dim, keep_b)) *
                                                sizeof(double))) != WW_OK)
            return st;
        wk = (double *)sc->b.ptr;
        const double saa = ww_cpu_softdtw_gradient(m, &pa, &pa, keep_a, -0.5, grad_a, grad_a, wk);
        const double sbb = ww_cpu_softdtw_gradient(m, &pb, &pb, keep_b, -0.5, grad_b, grad_b, wk);
        v = v - (saa + sbb) / 2;
    }
    if (value)
        *value = v;
    return WW_OK;
}

/* Device data: the GPU's batch engine, on a CUDA context, with every array on the device. */
static ww_status ww_softdtw_route_device(const ww_ctx *ctx, int all_on_device)
{
    if (ctx->backend != WW_BACKEND_CUDA)
        return WW_ERR_MEMORY_KIND;
    return all_on_device ? WW_OK : WW_ERR_MEMORY_KIND;
}

static ww_status check_pair(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b)
{
    ww_status st = ww_measure_check(m);
    if (st != WW_OK)
        return st;
    if (m->kind != WW_MEASURE_SOFTDTW)
        return WW_ERR_NOT_DIFFERENTIABLE;
    if ((st = ww_check_series_shape(a)) != WW_OK || (st = ww_check_series_shape(b)) != WW_OK)
        return st;
    if (a->dim != b->dim)
        return WW_ERR_SHAPE;
    if (a->dtype != b->dtype)
        return WW_ERR_DTYPE;
    const size_t longest = a->length > b->length ? a->length : b->length;
    if (ww_measure_has_window(m) && longest >= WW_WINDOW_MAX_LENGTH)
        return WW_ERR_OVERFLOW;
    const int on_device = a->memory == WW_DEVICE || b->memory == WW_DEVICE;
    if (on_device)
        return ww_softdtw_route_device(ctx, a->memory == WW_DEVICE && b->memory == WW_DEVICE);
    ww_backend backend;
    return ww_registry_route(ctx, m, WW_OP_DISTANCE, 0, 0.0, longest, &backend);
}

ww_status ww_gradient(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *value,
                      double *grad_a, double *grad_b)
{
    if (ctx == NULL || m == NULL || a == NULL || b == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = check_pair(ctx, m, a, b);
    if (st != WW_OK)
        return st;
    if (a->memory == WW_DEVICE) {
        ctx->last_backend = WW_BACKEND_CUDA;
        return ww_cuda_softdtw_gradient(ctx, m, a, b, value, grad_a, grad_b);
    }
    if ((st = ww_check_values_host(a->values, NULL, a->length, a->dim, a->dtype)) != WW_OK ||
        (st = ww_check_values_host(b->values, NULL, b->length, b->dim, b->dtype)) != WW_OK)
        return st;
    ctx->last_backend = WW_BACKEND_CPU;
    return pair_gradient(&ctx->cpu[0], ctx->softdtw_memory_budget, m, a, b, value, grad_a, grad_b);
}

/* ------------------------------------------------------------------ batches */

static void store_real(void *out, ww_dtype t, size_t at, double v)
{
    if (t == WW_F32)
        ((float *)out)[at] = (float)v;
    else
        ((double *)out)[at] = v;
}

static size_t first_sample(const ww_dataset *x, size_t i) { return x->offsets ? x->offsets[i] : i * x->length; }

/* One pair of a batch, an item of the CPU threading layer (work_queue.h). */
typedef struct batch_job {
    const ww_measure *m;
    const ww_dataset *x, *y;
    void *values, *grad_x, *grad_y;
    size_t budget;
} batch_job;

static ww_status batch_item(void *job_, size_t p, ww_cpu_scratch *sc, uint64_t *cells)
{
    const batch_job *job = (const batch_job *)job_;
    ww_series a, b;
    ww_dataset_series(job->x, p, &a);
    ww_dataset_series(job->y, p, &b);
    /* gradients in double in a buffer of their own (sc->b serves the divergence), then stored in
     * the dtype */
    const size_t na = a.length * a.dim, nb = b.length * b.dim;
    const int grads = job->grad_x || job->grad_y;
    double *gmem = grads ? (double *)malloc((na + nb) * sizeof(double)) : NULL;
    if (grads && gmem == NULL)
        return WW_ERR_MEMORY;
    double *ga = job->grad_x ? gmem : NULL, *gb = job->grad_y ? gmem + na : NULL;
    double v = 0;
    const ww_status st = pair_gradient(sc, job->budget, job->m, &a, &b, &v, ga, gb);
    if (st == WW_OK) {
        store_real(job->values, job->x->dtype, p, v);
        const size_t ox = first_sample(job->x, p) * job->x->dim, oy = first_sample(job->y, p) * job->y->dim;
        for (size_t k = 0; ga && k < na; k++)
            store_real(job->grad_x, job->x->dtype, ox + k, ga[k]);
        for (size_t k = 0; gb && k < nb; k++)
            store_real(job->grad_y, job->y->dtype, oy + k, gb[k]);
    }
    free(gmem);
    *cells = (uint64_t)a.length * b.length;
    return st;
}

ww_status ww_softdtw_batch(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *values,
                           void *grad_x, void *grad_y)
{
    if (ctx == NULL || m == NULL || x == NULL || y == NULL || values == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_measure_check(m);
    if (st != WW_OK)
        return st;
    if (m->kind != WW_MEASURE_SOFTDTW)
        return WW_ERR_NOT_DIFFERENTIABLE;
    if ((st = ww_check_dataset_shape(x)) != WW_OK || (st = ww_check_dataset_shape(y)) != WW_OK)
        return st;
    if (x->count != y->count || x->dim != y->dim)
        return WW_ERR_SHAPE;
    if (x->dtype != y->dtype)
        return WW_ERR_DTYPE;
    const int on_device = x->memory == WW_DEVICE || y->memory == WW_DEVICE;
    if (on_device) {
        if ((st = ww_softdtw_route_device(ctx, x->memory == WW_DEVICE && y->memory == WW_DEVICE)) != WW_OK)
            return st;
        ctx->last_backend = WW_BACKEND_CUDA;
        return ww_cuda_softdtw_batch(ctx, m, x, y, values, grad_x, grad_y);
    }
    ww_backend backend;
    if ((st = ww_registry_route(ctx, m, WW_OP_DISTANCE, 0, 0.0, 0, &backend)) != WW_OK)
        return st;
    /* every value is checked before anything is written */
    if ((st = ww_check_dataset_values(x)) != WW_OK || (st = ww_check_dataset_values(y)) != WW_OK)
        return st;
    size_t longest = 0;
    for (size_t i = 0; i < x->count; i++) {
        const size_t l = ww_dataset_length(x, i) > ww_dataset_length(y, i) ? ww_dataset_length(x, i)
                                                                              : ww_dataset_length(y, i);
        longest = l > longest ? l : longest;
    }
    if (ww_measure_has_window(m) && longest >= WW_WINDOW_MAX_LENGTH)
        return WW_ERR_OVERFLOW;
    ctx->last_backend = WW_BACKEND_CPU;
    batch_job job = {m, x, y, values, grad_x, grad_y, ctx->softdtw_memory_budget};
    uint64_t total = 0;
    for (size_t p = 0; p < x->count; p++)
        total += (uint64_t)ww_dataset_length(x, p) * ww_dataset_length(y, p);
    /* A thread per BATCH_CELLS_PER_THREAD cells at most: a parallel region costs tens of
     * microseconds on idle cores, but on busy ones its end waits for a worker the scheduler has not
     * run yet, a time slice; a barycenter's batches (100 pairs of 60 x 60, 3 ms on one thread) ran
     * 1.5-2x slower on two threads than on one here (bench/results/cpu-softdtw.md). */
    int threads = ctx->num_threads;
    if (total / BATCH_CELLS_PER_THREAD < (uint64_t)threads)
        threads = total / BATCH_CELLS_PER_THREAD > 1 ? (int)(total / BATCH_CELLS_PER_THREAD) : 1;
    /* the batch API has no progress callback: the threading layer's scheduling, nothing to report */
    const ww_pairwise_options none = ww_pairwise_options_default();
    return ww_cpu_run_items(ctx, threads, x->count, total, &none, NULL, batch_item, &job);
}

/* ------------------------------------------------------------------ matrices */

/* sdtw(s, s) for series [begin, end) of a dataset, into self[k - begin]: items of the CPU
 * threading layer. */
typedef struct self_job {
    const ww_measure *m;
    const ww_dataset *d;
    size_t begin;
    double *self;
} self_job;

static ww_status self_item(void *job_, size_t item, ww_cpu_scratch *sc, uint64_t *cells)
{
    const self_job *job = (const self_job *)job_;
    ww_series s;
    ww_dataset_series(job->d, job->begin + item, &s);
    const size_t work = ww_cpu_softdtw_value_doubles(s.length, s.length, s.dim);
    const size_t prep = ww_prepared_doubles(s.length, s.dim);
    ww_status st = ww_buffer_reserve(&sc->a, prep * sizeof(double));
    if (st == WW_OK)
        st = ww_buffer_reserve(&sc->work, work * sizeof(double));
    if (st != WW_OK)
        return st;
    ww_prepared pa;
    ww_prepare(&s, job->m, 0, (double *)sc->a.ptr, &pa);
    job->self[item] = ww_cpu_softdtw_value(job->m, &pa, &pa, (double *)sc->work.ptr);
    *cells = (uint64_t)s.length * s.length;
    return WW_OK;
}

static ww_status self_values(ww_ctx *ctx, const ww_measure *m, const ww_dataset *d, size_t begin, size_t end,
                             double *self)
{
    self_job job = {m, d, begin, self};
    /* after the matrix's own progress reached its end: nothing more to report */
    const ww_pairwise_options none = ww_pairwise_options_default();
    return ww_cpu_run_items(ctx, ctx->num_threads, end - begin, 0, &none, NULL, self_item, &job);
}

ww_status ww_softdtw_complete_matrix(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                     void *out, const ww_pairwise_options *o)
{
    const int self = y == NULL, divergence = m->params.softdtw.divergence;
    if (!self && !divergence)
        return WW_OK;
    const ww_dataset *cols = self ? x : y;
    const size_t rows = o->row_end - o->row_begin, ncols = o->col_end - o->col_begin;
    double *rs = (double *)malloc((rows + ncols + 1) * sizeof(double));
    if (rs == NULL)
        return WW_ERR_MEMORY;
    double *cs = rs + rows;
    ww_status st = self_values(ctx, m, x, o->row_begin, o->row_end, rs);
    if (st == WW_OK)
        st = self_values(ctx, m, cols, o->col_begin, o->col_end, cs);
    if (st != WW_OK) {
        free(rs);
        return st;
    }
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < ncols; j++) {
            const size_t at = i * o->out_stride + j;
            const int diagonal = self && o->row_begin + i == o->col_begin + j;
            double v;
            if (diagonal)
                v = divergence ? 0.0 : rs[i];
            else if (!divergence)
                continue;
            else
                v = (o->out_dtype == WW_F32 ? (double)((float *)out)[at] : ((double *)out)[at]) - (rs[i] + cs[j]) / 2;
            store_real(out, o->out_dtype, at, v);
        }
    free(rs);
    return WW_OK;
}

ww_status ww_softdtw_cpu_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                  void *out, const ww_pairwise_options *o)
{
    if (!(m->params.softdtw.divergence && o->out_dtype == WW_F32)) {
        ww_status st = ww_cpu_pairwise(ctx, m, x, y, out, o);
        return st == WW_OK ? ww_softdtw_complete_matrix(ctx, m, x, y, out, o) : st;
    }
    /* the divergence subtracts the self terms from sdtw: in double, rounded once */
    const size_t rows = o->row_end - o->row_begin, ncols = o->col_end - o->col_begin;
    size_t n;
    if (!ww_mul_size(rows, ncols, &n) || n > SIZE_MAX / sizeof(double))
        return WW_ERR_OVERFLOW;
    double *tmp = (double *)malloc((n ? n : 1) * sizeof(double));
    if (tmp == NULL)
        return WW_ERR_MEMORY;
    ww_pairwise_options od = *o;
    od.out_dtype = WW_F64;
    od.out_stride = ncols;
    ww_status st = ww_cpu_pairwise(ctx, m, x, y, tmp, &od);
    if (st == WW_OK)
        st = ww_softdtw_complete_matrix(ctx, m, x, y, tmp, &od);
    if (st == WW_OK)
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < ncols; j++)
                ((float *)out)[i * o->out_stride + j] = (float)tmp[i * ncols + j];
    free(tmp);
    return st;
}

/* One value by soft-DTW's own anti-diagonal engine (src/cpu/softdtw.c): it computes the local
 * costs a component at a time across a diagonal, so it vectorises for any dim, where the generic
 * strip engine does for dim 1 only. */
static ww_status value_of_pair(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a,
                               const ww_series *b, double *out)
{
    if (engine != WW_ENGINE_AUTO) /* a forced generic engine (tests compare them) */
        return ww_cpu_distance(ctx, engine, m, a, b, out);
    ww_status st;
    if ((st = ww_check_values_host(a->values, NULL, a->length, a->dim, a->dtype)) != WW_OK ||
        (st = ww_check_values_host(b->values, NULL, b->length, b->dim, b->dtype)) != WW_OK)
        return st;
    ww_cpu_scratch *sc = &ctx->cpu[0];
    if ((st = ww_buffer_reserve(&sc->a, (ww_prepared_doubles(a->length, a->dim) +
                                         ww_prepared_doubles(b->length, b->dim)) * sizeof(double))) != WW_OK ||
        (st = ww_buffer_reserve(&sc->work, ww_cpu_softdtw_value_doubles(a->length, b->length, a->dim) *
                                                sizeof(double))) != WW_OK)
        return st;
    ww_prepared pa, pb;
    double *storage = (double *)sc->a.ptr;
    ww_prepare(a, m, 0, storage, &pa);
    ww_prepare(b, m, 0, storage + ww_prepared_doubles(a->length, a->dim), &pb);
    *out = ww_cpu_softdtw_value_base2(m, &pa, &pb, (double *)sc->work.ptr);
    return WW_OK;
}

ww_status ww_softdtw_cpu_distance(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a,
                                  const ww_series *b, double *out)
{
    double ab, aa = 0, bb = 0;
    ww_status st = value_of_pair(ctx, engine, m, a, b, &ab);
    if (st != WW_OK || !m->params.softdtw.divergence) {
        if (st == WW_OK)
            *out = ab;
        return st;
    }
    if ((st = value_of_pair(ctx, engine, m, a, a, &aa)) != WW_OK ||
        (st = value_of_pair(ctx, engine, m, b, b, &bb)) != WW_OK)
        return st;
    *out = ab - (aa + bb) / 2;
    return WW_OK;
}
