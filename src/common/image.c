/* Elastic image matching: the API (checks, options) and the policy of where it runs. The CPU engine
 * is src/cpu/image.c; the recurrence src/measures/dpa.h. */
#include "image_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ww_image_params ww_image_params_default(void)
{
    ww_image_params p;
    p.squared = 0;
    return p;
}

ww_image ww_image_make(const void *pixels, size_t height, size_t width, size_t channels, ww_dtype dtype)
{
    ww_image img = {pixels, height, width, channels, dtype, WW_HOST};
    return img;
}

static ww_status check_shape(const ww_image *img)
{
    if (img == NULL)
        return WW_ERR_NULL_POINTER;
    if (img->dtype != WW_U8 && img->dtype != WW_F32 && img->dtype != WW_F64)
        return WW_ERR_DTYPE;
    if (img->memory != WW_HOST && img->memory != WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    if (img->height == 0 || img->width == 0 || img->channels == 0)
        return WW_ERR_EMPTY;
    if (img->pixels == NULL)
        return WW_ERR_NULL_POINTER;
    /* the interleaved copy of an image holds (height + 15) x width x channels doubles, and a pair's
     * scratch height1 x height2 and width1 x width2: keep every such product far from overflowing */
    size_t n;
    if (img->height > ((size_t)1 << 24) || img->width > ((size_t)1 << 24) || img->channels > ((size_t)1 << 16) ||
        !ww_mul_size(img->height + 64, img->width, &n) || !ww_mul_size(n, img->channels, &n) ||
        !ww_mul_size(n, sizeof(double), &n))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_image_check(const ww_image *img)
{
    ww_status st = check_shape(img);
    if (st != WW_OK || img->memory == WW_DEVICE) /* device pixels: checked by the GPU engine */
        return st;
    const size_t n = img->height * img->width * img->channels;
    if (img->dtype == WW_F32) {
        const float *p = (const float *)img->pixels;
        for (size_t k = 0; k < n; k++)
            if (!isfinite(p[k]))
                return WW_ERR_NONFINITE;
    } else if (img->dtype == WW_F64) {
        const double *p = (const double *)img->pixels;
        for (size_t k = 0; k < n; k++)
            if (!isfinite(p[k]))
                return WW_ERR_NONFINITE;
    }
    return WW_OK;
}

/* Every image of a set, one channel count for all (*channels: 0 before the first) and one memory
 * kind (*memory: -1 before the first): host and device images do not mix. */
static ww_status check_set(const ww_image *set, size_t count, size_t *channels, int *memory)
{
    if (count == 0)
        return WW_ERR_EMPTY;
    if (set == NULL)
        return WW_ERR_NULL_POINTER;
    for (size_t k = 0; k < count; k++) {
        ww_status st = ww_image_check(&set[k]);
        if (st != WW_OK)
            return st;
        if (*channels == 0)
            *channels = set[k].channels;
        else if (set[k].channels != *channels)
            return WW_ERR_SHAPE;
        if (*memory == -1)
            *memory = (int)set[k].memory;
        else if ((int)set[k].memory != *memory)
            return WW_ERR_MEMORY_KIND;
    }
    return WW_OK;
}

/* Policy for one pair's map: the CPU engine (the GPU engine computes distances only). A context that
 * allows the GPU only (backend CUDA asked for) cannot serve it. */
static ww_status route(ww_ctx *ctx)
{
    if (ctx == NULL)
        return WW_ERR_NULL_POINTER;
    if (ctx->requested == WW_BACKEND_CUDA)
        return WW_ERR_UNSUPPORTED;
    ctx->last_backend = WW_BACKEND_CPU;
    return WW_OK;
}

/* Policy for a block of the matrix: on a GPU context, the GPU engine when the work is large enough
 * to pay for the round trip (WW_SMALL_WORK cells, as for series) or when backend CUDA was asked
 * for; the CPU engine otherwise, and, with backend AUTO, for what the GPU engine cannot take
 * (images too wide for it) or has no memory for. */
static ww_status run_block(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared,
                           void *out, const ww_pairwise_options *o)
{
    if (x[0].memory == WW_DEVICE) { /* device images: the GPU engine, or nothing */
        if (ctx->backend != WW_BACKEND_CUDA)
            return WW_ERR_MEMORY_KIND;
        ww_status st = ww_cuda_image_pairwise(ctx, x, nx, y, ny, squared, out, o);
        if (st == WW_OK)
            ctx->last_backend = WW_BACKEND_CUDA;
        return st;
    }
    if (ctx->backend == WW_BACKEND_CUDA) {
        double cells = 0;
        const ww_image *ys = y ? y : x;
        for (size_t i = o->row_begin; i < o->row_end && cells < WW_SMALL_WORK; i++)
            for (size_t j = o->col_begin; j < o->col_end && cells < WW_SMALL_WORK; j++)
                cells += (double)ww_image_pair_cells(&x[i], &ys[j]) * (double)x[i].channels;
        if (cells >= WW_SMALL_WORK || ctx->requested == WW_BACKEND_CUDA) {
            ww_status st = ww_cuda_image_pairwise(ctx, x, nx, y, ny, squared, out, o);
            if (st == WW_OK)
                ctx->last_backend = WW_BACKEND_CUDA;
            if (ctx->requested == WW_BACKEND_CUDA || (st != WW_ERR_UNSUPPORTED && st != WW_ERR_DEVICE_MEMORY))
                return st;
        }
    }
    ctx->last_backend = WW_BACKEND_CPU;
    return ww_cpu_image_pairwise(ctx, x, nx, y, ny, squared, out, o);
}

static int params_squared(const ww_image_params *p) { return p ? p->squared != 0 : 0; }

/* The block of opt (end == 0: to the end), as ww_resolve_pairwise does for datasets. */
static ww_status resolve_block(size_t nx, size_t ny, const ww_pairwise_options *in, ww_pairwise_options *o)
{
    *o = in ? *in : ww_pairwise_options_default();
    if (o->row_end == 0)
        o->row_end = nx;
    if (o->col_end == 0)
        o->col_end = ny;
    if (o->row_begin >= o->row_end || o->row_end > nx || o->col_begin >= o->col_end || o->col_end > ny)
        return WW_ERR_SHAPE;
    const size_t width = o->col_end - o->col_begin;
    if (o->out_stride == 0)
        o->out_stride = width;
    if (o->out_stride < width)
        return WW_ERR_SHAPE;
    if (o->out_dtype != WW_F64 && o->out_dtype != WW_F32)
        return WW_ERR_DTYPE;
    size_t n;
    if (!ww_mul_size(o->row_end - o->row_begin, o->out_stride, &n) || !ww_mul_size(n, sizeof(double), &n))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny,
                            const ww_image_params *p, void *out, const ww_pairwise_options *opt)
{
    if (ctx == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    size_t channels = 0;
    int memory = -1;
    ww_status st = check_set(x, nx, &channels, &memory);
    if (st == WW_OK && y != NULL)
        st = check_set(y, ny, &channels, &memory);
    if (st != WW_OK)
        return st;
    ww_pairwise_options o;
    st = resolve_block(nx, y ? ny : nx, opt, &o);
    if (st != WW_OK)
        return st;
    return run_block(ctx, x, nx, y, ny, params_squared(p), out, &o);
}

ww_status ww_image_distance(ww_ctx *ctx, const ww_image *a, const ww_image *b, const ww_image_params *p, double *out)
{
    if (a == NULL || b == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    return ww_image_pairwise(ctx, a, 1, b, 1, p, out, NULL);
}

typedef struct knn_entry {
    double distance;
    size_t index;
} knn_entry;

static int compare_entries(const void *a, const void *b)
{
    const knn_entry *x = (const knn_entry *)a, *y = (const knn_entry *)b;
    /* +inf sorts last; ties by index */
    if (x->distance < y->distance)
        return -1;
    if (x->distance > y->distance)
        return 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Progress over the whole search: each chunk's cells offset by those of the chunks before. */
typedef struct knn_relay {
    ww_progress_fn fn;
    void *user;
    uint64_t before, total;
} knn_relay;

static int relay_progress(uint64_t done, uint64_t total, void *user)
{
    (void)total;
    knn_relay *k = (knn_relay *)user;
    return k->fn(k->before + done, k->total, k->user);
}

ww_status ww_image_knn(ww_ctx *ctx, const ww_image *queries, size_t nq, const ww_image *x, size_t nx,
                       const ww_image_params *p, size_t k, size_t *indices, double *distances,
                       const ww_pairwise_options *opt)
{
    if (ctx == NULL || indices == NULL || distances == NULL || x == NULL || queries == NULL)
        return WW_ERR_NULL_POINTER;
    size_t channels = 0;
    int memory = -1;
    ww_status st = check_set(queries, nq, &channels, &memory);
    if (st == WW_OK)
        st = check_set(x, nx, &channels, &memory);
    if (st != WW_OK)
        return st;
    if (k == 0 || k > nx)
        return WW_ERR_SHAPE;
    /* chunks of queries whose distance rows take at most ~64 MB */
    size_t chunk = ((size_t)64 << 20) / sizeof(double) / nx;
    chunk = chunk < 1 ? 1 : chunk > 256 ? 256 : chunk;
    chunk = chunk < nq ? chunk : nq;
    double *rows = (double *)malloc(chunk * nx * sizeof(double));
    knn_entry *entries = (knn_entry *)malloc(nx * sizeof(knn_entry));
    if (rows == NULL || entries == NULL) {
        free(rows);
        free(entries);
        return WW_ERR_MEMORY;
    }
    knn_relay relay = {opt ? opt->progress : NULL, opt ? opt->progress_user : NULL, 0, 0};
    for (size_t q = 0; q < nq; q++)
        for (size_t i = 0; i < nx; i++)
            relay.total += ww_image_pair_cells(&queries[q], &x[i]);
    for (size_t q0 = 0; q0 < nq && st == WW_OK; q0 += chunk) {
        const size_t q1 = q0 + chunk < nq ? q0 + chunk : nq;
        ww_pairwise_options po = ww_pairwise_options_default();
        if (relay.fn) {
            po.progress = relay_progress;
            po.progress_user = &relay;
        }
        st = run_block(ctx, queries + q0, q1 - q0, x, nx, params_squared(p), rows,
                                   &(ww_pairwise_options){0, q1 - q0, 0, nx, nx, WW_F64, po.progress,
                                                          po.progress_user});
        for (size_t q = q0; q < q1 && st == WW_OK; q++) {
            for (size_t i = 0; i < nx; i++) {
                entries[i].distance = rows[(q - q0) * nx + i];
                entries[i].index = i;
            }
            qsort(entries, nx, sizeof *entries, compare_entries);
            for (size_t r = 0; r < k; r++) {
                indices[q * k + r] = entries[r].index;
                distances[q * k + r] = entries[r].distance;
            }
        }
        for (size_t q = q0; q < q1; q++)
            for (size_t i = 0; i < nx; i++)
                relay.before += ww_image_pair_cells(&queries[q], &x[i]);
    }
    free(rows);
    free(entries);
    return st;
}

size_t ww_image_map_capacity(const ww_image *a, const ww_image *b)
{
    if (a == NULL || b == NULL)
        return 0;
    size_t n;
    if (!ww_mul_size(a->height + b->height, a->width + b->width, &n))
        return SIZE_MAX;
    return n;
}

ww_status ww_image_map(ww_ctx *ctx, const ww_image *a, const ww_image *b, const ww_image_params *p,
                       double *distance, size_t *matches, size_t capacity, size_t *count)
{
    if (ctx == NULL || distance == NULL || matches == NULL || count == NULL || a == NULL || b == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_image_check(a);
    if (st == WW_OK)
        st = ww_image_check(b);
    if (st != WW_OK)
        return st;
    if (a->memory != WW_HOST || b->memory != WW_HOST) /* the map is the CPU engine's */
        return WW_ERR_MEMORY_KIND;
    if (a->channels != b->channels || capacity < ww_image_map_capacity(a, b))
        return WW_ERR_SHAPE;
    st = route(ctx);
    if (st != WW_OK)
        return st;
    return ww_cpu_image_map(ctx, a, b, params_squared(p), distance, matches, count);
}
