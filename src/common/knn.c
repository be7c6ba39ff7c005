/* k nearest neighbours: distance rows of chunks of queries (the matrix engines), then a selection
 * per query. Progress is reported over the whole call. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
/* The call's total is every query's samples times the searched set's; a chunk's matrix reports its
 * own cells (fewer with a window), which are scaled to the chunk's share of that total, so that
 * progress ends exactly at the total. */
typedef struct knn_progress {
    ww_progress_fn user_fn;
    void *user;
    uint64_t done_before, total, chunk_share;
} knn_progress;

static int knn_progress_relay(uint64_t done, uint64_t chunk_total, void *user)
{
    knn_progress *kp = (knn_progress *)user;
    const uint64_t scaled =
        chunk_total == 0 || done >= chunk_total ? kp->chunk_share
                                                : (uint64_t)((double)done / (double)chunk_total * (double)kp->chunk_share);
    return kp->user_fn(kp->done_before + scaled, kp->total, kp->user);
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
static ww_status knn_search(ww_ctx *ctx, const ww_measure *m, const ww_dataset *queries, size_t count, uint64_t samples,
                            knn_rows_fn rows_of,
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
    knn_progress kp = {opt ? opt->progress : NULL, opt ? opt->progress_user : NULL, 0, q_samples * samples, 0};
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
        const uint64_t chunk_samples = queries->offsets
                                           ? queries->offsets[q1] - queries->offsets[q0]
                                           : (uint64_t)(q1 - q0) * queries->length;
        kp.chunk_share = chunk_samples * samples;
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
        kp.done_before += kp.chunk_share;
        /* The first chunk's call checked sizes, x and its queries; check the other queries too
         * before writing any result, so that a bad input leaves indices and distances untouched. */
        for (size_t q = q1; q0 == 0 && q < queries->count && queries->memory == WW_HOST; q++) {
            ww_series s;
            ww_dataset_series(queries, q, &s);
            st = ww_check_values_host(s.values, ww_measure_stamps(m, s.stamps), s.length, s.dim, s.dtype);
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
    const ww_measure *m;
} knn_dataset_target;

static ww_status rows_against_dataset(ww_ctx *ctx, const ww_dataset *chunk, double *rows,
                                      const ww_pairwise_options *po, const void *user)
{
    const knn_dataset_target *t = (const knn_dataset_target *)user;
    return ww_pairwise(ctx, t->m, chunk, t->x, rows, po);
}

ww_status ww_knn(ww_ctx *ctx, const ww_measure *m, const ww_dataset *queries, const ww_dataset *x, size_t k,
                 size_t *indices, double *distances, const ww_pairwise_options *opt)
{
    if (ctx == NULL || m == NULL || queries == NULL || x == NULL || indices == NULL || distances == NULL)
        return WW_ERR_NULL_POINTER;
    ww_status st = ww_measure_check(m);
    if (st == WW_OK)
        st = ww_check_dataset_shape(queries);
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
    const int on_device = queries->memory == WW_DEVICE || x->memory == WW_DEVICE;
    ww_backend backend = WW_BACKEND_CPU;
    if (ctx->backend == WW_BACKEND_CUDA && (chunks || queries->memory == WW_DEVICE) &&
        ww_registry_route(ctx, m, WW_OP_INDEX, on_device, INFINITY, 0, &backend) == WW_OK &&
        backend == WW_BACKEND_CUDA) {
        ww_index *qx = NULL, *ix = NULL;
        if (queries->memory == WW_DEVICE) {
            if ((st = ww_index_create(ctx, queries, m, &qx)) != WW_OK)
                return st;
            ww_index_destroy(qx);
        }
        if ((st = ww_index_create(ctx, x, m, &ix)) != WW_OK)
            return st;
        st = ww_index_knn(ctx, ix, queries, k, indices, distances, opt);
        ww_index_destroy(ix);
        return st;
    }
    knn_dataset_target t = {x, m};
    return knn_search(ctx, m, queries, x->count, ww_dataset_samples(x), rows_against_dataset, &t, k, indices,
                      distances, opt);
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
        if ((st = ww_index_create(ctx, queries, &ix->measure, &qx)) != WW_OK)
            return st;
        ww_index_destroy(qx);
    }
    return knn_search(ctx, &ix->measure, queries, ix->count, ww_dataset_samples(&ix->host), rows_against_index, ix, k,
                      indices, distances, opt);
}
