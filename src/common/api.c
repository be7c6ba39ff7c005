/* The public API: status strings, contexts, descriptors, argument checks and dispatch to the
 * engines. Every entry point checks everything a user can get wrong before any engine runs. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#include "internal.h"
#include "twed_recurrence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

const char *ww_version(void) { return "0.1.0"; }

const char *ww_strerror(ww_status status)
{
    switch (status) {
    case WW_OK: return "success";
    case WW_ERR_NULL_POINTER: return "a required pointer argument is NULL";
    case WW_ERR_EMPTY: return "empty input: a series has length 0 or a dataset has no series";
    case WW_ERR_SHAPE: return "invalid shape: dim is 0, offsets are inconsistent, the block lies outside the matrix, or k is out of range";
    case WW_ERR_NONFINITE: return "a series value is NaN or infinite";
    case WW_ERR_STAMPS: return "time stamps must be finite, non-decreasing and at most half the largest value of their type in magnitude";
    case WW_ERR_PARAM: return "invalid parameter: need finite nu >= 0, lambda >= 0 and degree >= 1";
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

/* ---------------------------------------------------------------- descriptors */

ww_series ww_series_f64(const double *values, const double *stamps, size_t length, size_t dim)
{
    ww_series s = {values, stamps, length, dim, WW_F64, WW_HOST};
    return s;
}

ww_series ww_series_f32(const float *values, const float *stamps, size_t length, size_t dim)
{
    ww_series s = {values, stamps, length, dim, WW_F32, WW_HOST};
    return s;
}

ww_dataset ww_dataset_f64(const double *values, const double *stamps, const size_t *offsets,
                          size_t count, size_t length, size_t dim)
{
    ww_dataset d = {values, stamps, offsets, count, length, dim, WW_F64, WW_HOST};
    return d;
}

ww_dataset ww_dataset_f32(const float *values, const float *stamps, const size_t *offsets,
                          size_t count, size_t length, size_t dim)
{
    ww_dataset d = {values, stamps, offsets, count, length, dim, WW_F32, WW_HOST};
    return d;
}

static size_t dtype_size(ww_dtype t) { return t == WW_F32 ? sizeof(float) : sizeof(double); }

ww_status ww_check_series_shape(const ww_series *s)
{
    if (s == NULL)
        return WW_ERR_NULL_POINTER;
    if (s->dtype != WW_F64 && s->dtype != WW_F32)
        return WW_ERR_DTYPE;
    if (s->memory != WW_HOST && s->memory != WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    if (s->length == 0)
        return WW_ERR_EMPTY;
    if (s->dim == 0)
        return WW_ERR_SHAPE;
    if (s->values == NULL)
        return WW_ERR_NULL_POINTER;
    /* length + 1 and dim + 2 must not wrap around before the products are checked */
    size_t n;
    if (s->length > SIZE_MAX - 1 || s->dim > SIZE_MAX - 2 ||
        !ww_mul_size(s->length + 1, s->dim + 2, &n) || !ww_mul_size(n, sizeof(double), &n))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_check_dataset_shape(const ww_dataset *x)
{
    if (x == NULL)
        return WW_ERR_NULL_POINTER;
    if (x->dtype != WW_F64 && x->dtype != WW_F32)
        return WW_ERR_DTYPE;
    if (x->memory != WW_HOST && x->memory != WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    if (x->count == 0)
        return WW_ERR_EMPTY;
    if (x->dim == 0)
        return WW_ERR_SHAPE;
    if (x->values == NULL)
        return WW_ERR_NULL_POINTER;
    /* The CPU engines prepare (samples + count) * (dim + 2) doubles: that many bytes must fit. */
    if (x->dim > SIZE_MAX - 2)
        return WW_ERR_OVERFLOW;
    if (x->offsets == NULL) {
        if (x->length == 0)
            return WW_ERR_EMPTY;
        size_t total;
        if (!ww_mul_size(x->count, x->length, &total) || total > SIZE_MAX - x->count ||
            !ww_mul_size(total + x->count, x->dim + 2, &total) ||
            !ww_mul_size(total, sizeof(double), &total))
            return WW_ERR_OVERFLOW;
        return WW_OK;
    }
    if (x->offsets[0] != 0)
        return WW_ERR_SHAPE;
    for (size_t i = 0; i < x->count; i++) {
        if (x->offsets[i + 1] < x->offsets[i])
            return WW_ERR_SHAPE;
        if (x->offsets[i + 1] == x->offsets[i])
            return WW_ERR_EMPTY;
    }
    size_t total = x->offsets[x->count];
    if (total > SIZE_MAX - x->count || !ww_mul_size(total + x->count, x->dim + 2, &total) ||
        !ww_mul_size(total, sizeof(double), &total))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_check_values_host(const void *values, const void *stamps, size_t length, size_t dim,
                               ww_dtype dtype)
{
    size_t n = length * dim;
    if (dtype == WW_F64) {
        const double *v = (const double *)values;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(v[i]))
                return WW_ERR_NONFINITE;
        if (stamps) {
            const double *t = (const double *)stamps;
            for (size_t i = 0; i < length; i++)
                if (!ww_stamp_ok_f64(t[i]) || (i > 0 && t[i] < t[i - 1]))
                    return WW_ERR_STAMPS;
        }
    } else {
        const float *v = (const float *)values;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(v[i]))
                return WW_ERR_NONFINITE;
        if (stamps) {
            const float *t = (const float *)stamps;
            for (size_t i = 0; i < length; i++)
                if (!ww_stamp_ok_f32(t[i]) || (i > 0 && t[i] < t[i - 1]))
                    return WW_ERR_STAMPS;
        }
    }
    return WW_OK;
}

ww_status ww_dataset_series(const ww_dataset *x, size_t i, ww_series *out)
{
    if (x == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    if (i >= x->count)
        return WW_ERR_SHAPE;
    size_t begin = x->offsets ? x->offsets[i] : i * x->length;
    size_t end = x->offsets ? x->offsets[i + 1] : (i + 1) * x->length;
    if (end < begin)
        return WW_ERR_SHAPE;
    size_t es = dtype_size(x->dtype);
    out->values = (const char *)x->values + begin * x->dim * es;
    out->stamps = x->stamps ? (const char *)x->stamps + begin * es : NULL;
    out->length = end - begin;
    out->dim = x->dim;
    out->dtype = x->dtype;
    out->memory = x->memory;
    return WW_OK;
}

ww_status ww_series_check(const ww_series *s)
{
    ww_status st = ww_check_series_shape(s);
    if (st != WW_OK)
        return st;
    if (s->memory != WW_HOST)
        return WW_ERR_MEMORY_KIND;
    return ww_check_values_host(s->values, s->stamps, s->length, s->dim, s->dtype);
}

ww_status ww_dataset_check(const ww_dataset *x)
{
    ww_status st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    if (x->memory != WW_HOST)
        return WW_ERR_MEMORY_KIND;
    for (size_t i = 0; i < x->count; i++) {
        ww_series s;
        ww_dataset_series(x, i, &s);
        st = ww_check_values_host(s.values, s.stamps, s.length, s.dim, s.dtype);
        if (st != WW_OK)
            return st;
    }
    return WW_OK;
}

/* ---------------------------------------------------------------- parameters */

ww_twed_params ww_twed_params_default(void)
{
    ww_twed_params p;
    p.nu = 0.001;
    p.lambda = 1.0;
    p.degree = 2;
    return p;
}

ww_status ww_twed_params_check(const ww_twed_params *p)
{
    if (p == NULL)
        return WW_ERR_NULL_POINTER;
    if (!isfinite(p->nu) || !isfinite(p->lambda) || p->nu < 0 || p->lambda < 0 || p->degree < 1)
        return WW_ERR_PARAM;
    return WW_OK;
}

/* ---------------------------------------------------------------- distances */

ww_status ww_twed(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p,
                  double *out)
{
    if (ctx == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    ww_twed_params params = p ? *p : ww_twed_params_default();
    ww_status st = ww_twed_params_check(&params);
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
    int on_device = a->memory == WW_DEVICE || b->memory == WW_DEVICE;
    if (ctx->backend == WW_BACKEND_CUDA)
        return ww_cuda_twed(ctx, a, b, &params, out);
    if (on_device)
        return WW_ERR_MEMORY_KIND; /* device data on a CPU context */
    return ww_cpu_twed(ctx, a, b, &params, out);
}

ww_pairwise_options ww_pairwise_options_default(void)
{
    ww_pairwise_options o;
    memset(&o, 0, sizeof o);
    o.out_dtype = WW_F64;
    return o;
}

/* Checks both datasets and fills in the block of opt (end == 0 means to the end). */
static ww_status resolve_pairwise(const ww_dataset *x, const ww_dataset *y,
                                  const ww_pairwise_options *in, ww_pairwise_options *out)
{
    ww_status st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    if (y) {
        st = ww_check_dataset_shape(y);
        if (st != WW_OK)
            return st;
        if (y->dim != x->dim)
            return WW_ERR_SHAPE;
        if (y->dtype != x->dtype)
            return WW_ERR_DTYPE;
    }
    *out = in ? *in : ww_pairwise_options_default();
    size_t rows = x->count, cols = y ? y->count : x->count;
    if (out->row_end == 0)
        out->row_end = rows;
    if (out->col_end == 0)
        out->col_end = cols;
    if (out->row_begin >= out->row_end || out->row_end > rows || out->col_begin >= out->col_end ||
        out->col_end > cols)
        return WW_ERR_SHAPE;
    size_t width = out->col_end - out->col_begin;
    if (out->out_stride == 0)
        out->out_stride = width;
    if (out->out_stride < width)
        return WW_ERR_SHAPE;
    if (out->out_dtype != WW_F64 && out->out_dtype != WW_F32)
        return WW_ERR_DTYPE;
    size_t cells;
    if (!ww_mul_size(out->row_end - out->row_begin, out->out_stride, &cells) ||
        !ww_mul_size(cells, sizeof(double), &cells))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_twed_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y,
                           const ww_twed_params *p, void *out, const ww_pairwise_options *opt)
{
    if (ctx == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    ww_twed_params params = p ? *p : ww_twed_params_default();
    ww_status st = ww_twed_params_check(&params);
    if (st != WW_OK)
        return st;
    ww_pairwise_options o;
    st = resolve_pairwise(x, y, opt, &o);
    if (st != WW_OK)
        return st;
    int on_device = x->memory == WW_DEVICE || (y && y->memory == WW_DEVICE);
    if (ctx->backend == WW_BACKEND_CUDA)
        return ww_cuda_twed_pairwise(ctx, x, y, &params, out, &o);
    if (on_device)
        return WW_ERR_MEMORY_KIND;
    return ww_cpu_twed_pairwise(ctx, x, y, &params, out, &o);
}

/* ---------------------------------------------------------------- k nearest neighbours */

typedef struct knn_entry {
    double distance;
    size_t index;
} knn_entry;

/* Insertion into a sorted list of at most k entries (k is small in practice). */
static void knn_insert(knn_entry *best, size_t *filled, size_t k, double d, size_t index)
{
    size_t n = *filled;
    if (n == k && !(d < best[k - 1].distance))
        return; /* not better; equal distances keep the smaller index already there */
    size_t pos = n < k ? n : k - 1;
    while (pos > 0 && d < best[pos - 1].distance) {
        best[pos] = best[pos - 1];
        pos--;
    }
    best[pos].distance = d;
    best[pos].index = index;
    if (n < k)
        *filled = n + 1;
}

/* kNN runs the matrix engine on chunks of queries; progress is reported over all chunks, in cells. */
typedef struct knn_progress {
    ww_progress_fn user_fn;
    void *user;
    uint64_t done_before, total;
} knn_progress;

static int knn_progress_relay(uint64_t done, uint64_t chunk_total, void *user)
{
    (void)chunk_total;
    knn_progress *kp = (knn_progress *)user;
    return kp->user_fn(kp->done_before + done, kp->total, kp->user);
}

/* Distances of a chunk of queries to every series of the searched set, row-major. */
typedef ww_status (*knn_rows_fn)(ww_ctx *ctx, const ww_dataset *chunk, double *rows, const ww_pairwise_options *po,
                                 const void *user);

/* Queries per chunk of a kNN search: up to 256, with at most ~64 MB of distance rows. */
static size_t knn_chunk_rows(size_t count, size_t queries)
{
    size_t chunk = ((size_t)64 << 20) / sizeof(double) / count;
    if (chunk > 256)
        chunk = 256;
    if (chunk < 1)
        chunk = 1;
    return chunk < queries ? chunk : queries;
}

/* kNN over any searched set of `count` series and `samples` samples: distance rows for chunks of
 * queries, then a selection per query. */
static ww_status knn_search(ww_ctx *ctx, const ww_dataset *queries, size_t count, uint64_t samples, knn_rows_fn rows_of,
                            const void *user, size_t k, size_t *indices, double *distances,
                            const ww_pairwise_options *opt)
{
    if (k == 0 || k > count)
        return WW_ERR_SHAPE;
    const size_t chunk = knn_chunk_rows(count, queries->count);
    size_t row_bytes, best_bytes;
    if (!ww_mul_size(chunk, count, &row_bytes) || !ww_mul_size(row_bytes, sizeof(double), &row_bytes) ||
        !ww_mul_size(k, sizeof(knn_entry), &best_bytes) || row_bytes > SIZE_MAX - best_bytes)
        return WW_ERR_OVERFLOW;
    /* Not ctx->shared: the matrix engines keep their own scratch there (and may reallocate it). */
    char *scratch = (char *)malloc(row_bytes + best_bytes);
    if (scratch == NULL)
        return WW_ERR_MEMORY;
    double *rows = (double *)scratch;
    knn_entry *best = (knn_entry *)(scratch + row_bytes);

    /* Progress over the whole call: cells = (query samples) * (samples of the searched set). */
    const uint64_t q_samples =
        queries->offsets ? queries->offsets[queries->count] : (uint64_t)queries->count * queries->length;
    knn_progress kp = {opt ? opt->progress : NULL, opt ? opt->progress_user : NULL, 0, q_samples * samples};
    ww_status st = WW_OK;
    for (size_t q0 = 0; q0 < queries->count; q0 += chunk) {
        size_t q1 = q0 + chunk < queries->count ? q0 + chunk : queries->count;
        ww_dataset qs = *queries;
        /* A sub-dataset view of queries [q0, q1). */
        ww_series first;
        ww_dataset_series(queries, q0, &first);
        qs.values = first.values;
        qs.stamps = first.stamps;
        qs.count = q1 - q0;
        size_t *sub_offsets = NULL;
        if (queries->offsets) {
            sub_offsets = (size_t *)malloc((qs.count + 1) * sizeof(size_t));
            if (sub_offsets == NULL) {
                free(scratch);
                return WW_ERR_MEMORY;
            }
            for (size_t i = 0; i <= qs.count; i++)
                sub_offsets[i] = queries->offsets[q0 + i] - queries->offsets[q0];
            qs.offsets = sub_offsets;
        }
        ww_pairwise_options po = ww_pairwise_options_default();
        if (kp.user_fn) {
            po.progress = knn_progress_relay;
            po.progress_user = &kp;
        }
        st = rows_of(ctx, &qs, rows, &po, user);
        free(sub_offsets);
        if (st != WW_OK) {
            free(scratch);
            return st;
        }
        const uint64_t chunk_samples = queries->offsets
                                           ? queries->offsets[q1] - queries->offsets[q0]
                                           : (uint64_t)(q1 - q0) * queries->length;
        kp.done_before += chunk_samples * samples;
        /* The first chunk's call checked sizes, x and its queries; check the other queries too
         * before writing any result, so that a bad input leaves indices and distances untouched. */
        for (size_t q = q1; q0 == 0 && q < queries->count && queries->memory == WW_HOST; q++) {
            ww_series s;
            ww_dataset_series(queries, q, &s);
            st = ww_check_values_host(s.values, s.stamps, s.length, s.dim, s.dtype);
            if (st != WW_OK) {
                free(scratch);
                return st;
            }
        }
        for (size_t q = q0; q < q1; q++) {
            const double *row = rows + (q - q0) * count;
            size_t filled = 0;
            for (size_t j = 0; j < count; j++)
                knn_insert(best, &filled, k, row[j], j);
            for (size_t r = 0; r < k; r++) {
                indices[q * k + r] = best[r].index;
                distances[q * k + r] = best[r].distance;
            }
        }
    }
    free(scratch);
    return WW_OK;
}

typedef struct knn_dataset_target {
    const ww_dataset *x;
    const ww_twed_params *p;
} knn_dataset_target;

static ww_status rows_against_dataset(ww_ctx *ctx, const ww_dataset *chunk, double *rows,
                                      const ww_pairwise_options *po, const void *user)
{
    const knn_dataset_target *t = (const knn_dataset_target *)user;
    return ww_twed_pairwise(ctx, chunk, t->x, t->p, rows, po);
}

static uint64_t dataset_samples(const ww_dataset *x)
{
    return x->offsets ? (uint64_t)x->offsets[x->count] : (uint64_t)x->count * x->length;
}

ww_status ww_twed_knn(ww_ctx *ctx, const ww_dataset *queries, const ww_dataset *x,
                      const ww_twed_params *p, size_t k, size_t *indices, double *distances,
                      const ww_pairwise_options *opt)
{
    if (ctx == NULL || queries == NULL || x == NULL || indices == NULL || distances == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_check_dataset_shape(queries);
    if (st == WW_OK)
        st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    if (k == 0 || k > x->count)
        return WW_ERR_SHAPE;
    /* On the GPU, queries in several chunks would each upload and prepare x again: prepare it once
     * as an index. Device queries are checked whole first (by preparing them), since a bad value in
     * a later chunk must not leave the earlier chunks' results written. */
    const int chunks = queries->count > knn_chunk_rows(x->count, queries->count);
    if (ctx->backend == WW_BACKEND_CUDA && (chunks || queries->memory == WW_DEVICE)) {
        ww_index *qx = NULL, *ix = NULL;
        if (queries->memory == WW_DEVICE) {
            if ((st = ww_index_create(ctx, queries, p, &qx)) != WW_OK)
                return st;
            ww_index_destroy(qx);
        }
        if ((st = ww_index_create(ctx, x, p, &ix)) != WW_OK)
            return st;
        st = ww_index_knn(ctx, ix, queries, k, indices, distances, opt);
        ww_index_destroy(ix);
        return st;
    }
    knn_dataset_target t = {x, p};
    return knn_search(ctx, queries, x->count, dataset_samples(x), rows_against_dataset, &t, k, indices, distances,
                      opt);
}

/* ---------------------------------------------------------------- indexes */

ww_status ww_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_twed_params *p, ww_index **out)
{
    if (ctx == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    *out = NULL;
    ww_twed_params params = p ? *p : ww_twed_params_default();
    ww_status st = ww_twed_params_check(&params);
    if (st == WW_OK)
        st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    if (x->memory == WW_DEVICE && ctx->cuda == NULL)
        return WW_ERR_MEMORY_KIND;
    ww_index *ix = (ww_index *)calloc(1, sizeof *ix);
    if (ix == NULL)
        return WW_ERR_MEMORY;
    ix->ctx = ctx;
    ix->params = params;
    ix->count = x->count;
    if (ctx->backend == WW_BACKEND_CUDA) {
        st = ww_cuda_index_create(ctx, x, &params, ix);
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
    ww_status st = resolve_pairwise(queries, &ix->host, opt, &o);
    if (st != WW_OK)
        return st;
    if (ix->device)
        return ww_cuda_index_pairwise(ctx, ix, queries, out, &o);
    if (queries->memory == WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    return ww_cpu_twed_pairwise(ctx, queries, &ix->host, &ix->params, out, &o);
}

static ww_status rows_against_index(ww_ctx *ctx, const ww_dataset *chunk, double *rows, const ww_pairwise_options *po,
                                    const void *user)
{
    return ww_index_pairwise(ctx, (const ww_index *)user, chunk, rows, po);
}

ww_status ww_index_knn(ww_ctx *ctx, const ww_index *ix, const ww_dataset *queries, size_t k, size_t *indices,
                       double *distances, const ww_pairwise_options *opt)
{
    if (ctx == NULL || ix == NULL || queries == NULL || indices == NULL || distances == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_check_dataset_shape(queries);
    if (st != WW_OK)
        return st;
    if (queries->memory == WW_DEVICE && queries->count > knn_chunk_rows(ix->count, queries->count) && ix->device) {
        ww_index *qx = NULL; /* checks every query before any result is written */
        if ((st = ww_index_create(ctx, queries, &ix->params, &qx)) != WW_OK)
            return st;
        ww_index_destroy(qx);
    }
    return knn_search(ctx, queries, ix->count, dataset_samples(&ix->host), rows_against_index, ix, k, indices,
                      distances, opt);
}
