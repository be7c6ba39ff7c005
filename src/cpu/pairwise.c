/* CPU engine for distance matrices: SIMD across pairs. The kernels are written once, in
 * pairwise_lanes.inc, and instantiated for every measure; this file schedules them.
 *
 * One row series of x is compared with LANES column series of y at once. The column series are
 * interleaved (sample-major, lane-minor) so that every step of the row-by-row sweep does the same
 * arithmetic on LANES independent pairs: the inner loop over lanes vectorises, and the LANES
 * independent dependency chains hide the latency of the add/min chain along a row.
 * The block's columns are sorted by (length, index) and cut into groups of LANES neighbours in that
 * order, so a ragged dataset fills the lanes with columns of equal or nearly equal lengths wherever
 * they lie in the block. A group's sweep runs to its longest column and each lane's result is read
 * at the lane's own length (cells past it never feed the cells before). Work items (group, chunk of
 * rows) are shared among threads dynamically. */
#include "pairwise_lanes.h"
#include "work_queue.h"

#include <stdlib.h>
#include <string.h>


#define ROWS_PER_ITEM 8

#define WW_ENGINE_SOFTDTW_ELSEWHERE /* soft-DTW's instances: softdtw_engines.c */
#define WW_ENGINE_TEMPLATE "../cpu/pairwise_lanes.inc" /* relative to for_each_measure.h */
#include "../measures/for_each_measure.h"
#undef WW_ENGINE_TEMPLATE
#undef WW_ENGINE_SOFTDTW_ELSEWHERE
#define lanes_softdtw ww_cpu_lanes_softdtw

/* The instance of the job's measure. */
static void run_lanes(const ww_measure *m, const ww_prepared *a, const lane_group *g, const ww_coef_f64 *c,
                      lane_band *band, lane_rows *rw, double *out)
{
    switch (m->kind) {
#define X(tok, TOK, KIND)                                          \
    case KIND:                                                     \
        WW_CAT(lanes_, tok)(a, g, c, band, rw, out);               \
        break;
        WW_FOR_EACH_MEASURE(X)
#undef X
    }
}

/* ------------------------------------------------------------------ the matrix */

/* A column of the block with its length: the block's columns are sorted by (length, column). */
typedef struct column_key {
    size_t length, column;
} column_key;

typedef struct column_group {
    size_t first, count; /* keys [first, first + count) of the sorted columns, count <= LANES */
} column_group;

/* The cells of a pair of lengths (na, nb) under the job's measure, remembered: with a window and
 * unequal lengths ww_measure_cells walks the band row by row, and the progress count asks for every
 * entry. Direct-mapped; filled while the total is counted (one thread), only read by the workers. */
#define CELLS_MEMO 8192
typedef struct cells_memo_entry {
    size_t na, nb;
    uint64_t cells;
} cells_memo_entry;

typedef struct pairwise_job {
    const ww_dataset *x, *y; /* y == x for the self matrix */
    int self;
    const ww_measure *m;
    ww_coef_f64 coef;
    const ww_pairwise_options *o;
    void *out;
    ww_prepared *xp, *yp; /* prepared series, time order */
    column_key *columns;  /* the block's columns, sorted by (length, column) */
    size_t *sorted_position; /* of block column c in `columns`: sorted_position[c - col_begin] */
    column_group *groups;
    size_t group_count, row_chunks;
    cells_memo_entry *memo; /* CELLS_MEMO entries; na = 0 marks an empty one */
} pairwise_job;

static size_t memo_slot(size_t na, size_t nb) { return (na * 2654435761u + nb * 40503u) & (CELLS_MEMO - 1); }

/* The cells of an entry of lengths na x nb (progress counts them); `fill`: store a computed value. */
static uint64_t entry_cells(const pairwise_job *job, size_t na, size_t nb, int fill)
{
    if (!ww_measure_has_window(job->m))
        return (uint64_t)na * nb;
    cells_memo_entry *e = &job->memo[memo_slot(na, nb)];
    if (e->na == na && e->nb == nb)
        return e->cells;
    const uint64_t cells = ww_measure_cells(job->m, na, nb);
    if (fill) {
        e->na = na;
        e->nb = nb;
        e->cells = cells;
    }
    return cells;
}

/* Entry (i, j) of the block (row i, column j) whose mirror (j, i) lies in the block too. */
static int mirror_in_block(const ww_pairwise_options *o, size_t i, size_t j)
{
    return j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
}

/* In the self matrix, (i, j) is computed unless it is on the diagonal or its mirror (j, i) is in
 * the block too and will be computed instead. Of two mirrored entries, the one whose column comes
 * later in the sorted column order is computed: a row then needs only the groups from its own group
 * on, a triangle of groups, whereas "j > i" would make a group of columns scattered over the block
 * run for nearly every row and discard half of its lanes. With equal lengths the sorted order is
 * the index order, so this is the upper triangle. Either entry of a mirrored pair has the same
 * bits: each operation of the recurrence is symmetric in the two series. */
static int entry_needed(const pairwise_job *job, size_t i, size_t j)
{
    if (!job->self)
        return 1;
    if (i == j)
        return 0;
    const ww_pairwise_options *o = job->o;
    return !(mirror_in_block(o, i, j) &&
             job->sorted_position[j - o->col_begin] < job->sorted_position[i - o->col_begin]);
}

/* Stores a computed entry. A mirrored pair goes to its upper entry (row < column) whichever
 * orientation computed it, so that the mirror pass, shared with the GPU engine, completes the
 * block by index. */
static void store(const pairwise_job *job, size_t i, size_t j, double v)
{
    const ww_pairwise_options *o = job->o;
    if (job->self && j < i && mirror_in_block(o, i, j)) {
        size_t t = i;
        i = j;
        j = t;
    }
    size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
    if (o->out_dtype == WW_F32)
        ((float *)job->out)[at] = (float)v;
    else
        ((double *)job->out)[at] = v;
}

/* Column of lane l of a group. */
static size_t group_column(const pairwise_job *job, const column_group *cg, size_t l)
{
    return job->columns[cg->first + l].column;
}

/* The longest column of a group: its last, as the columns are sorted by length. */
static size_t group_length(const pairwise_job *job, const column_group *cg)
{
    return job->columns[cg->first + cg->count - 1].length;
}

static void interleave_group(const pairwise_job *job, const column_group *cg, double *storage, lane_group *g)
{
    const size_t nb = group_length(job, cg), dim = job->x->dim;
    g->length = nb;
    g->dim = dim;
    g->values = storage;
    g->stamps = storage + (nb + 1) * dim * LANES;
    g->aux = g->stamps + (nb + 1) * LANES;
    for (size_t l = 0; l < LANES; l++) {
        /* lanes past the group's end repeat its last column; their results are discarded */
        const ww_prepared *src = &job->yp[group_column(job, cg, l < cg->count ? l : cg->count - 1)];
        const size_t len = src->length;
        g->lane_length[l] = len;
        for (size_t s = 0; s <= nb; s++) {
            /* past its end a lane repeats its last sample: any finite values would do */
            const size_t from = s <= len ? s : len;
            for (size_t k = 0; k < dim; k++)
                g->values[(s * dim + k) * LANES + l] = src->values[from * dim + k];
            g->stamps[s * LANES + l] = src->stamps[from];
            g->aux[s * LANES + l] = src->aux[from];
        }
    }
}

static ww_status run_item(const pairwise_job *job, size_t item, ww_cpu_scratch *sc, uint64_t *cells)
{
    const column_group *cg = &job->groups[item / job->row_chunks];
    const ww_pairwise_options *o = job->o;
    size_t r0 = o->row_begin + (item % job->row_chunks) * ROWS_PER_ITEM;
    size_t r1 = r0 + ROWS_PER_ITEM < o->row_end ? r0 + ROWS_PER_ITEM : o->row_end;
    *cells = 0;

    int any = 0;
    for (size_t i = r0; i < r1 && !any; i++)
        for (size_t l = 0; l < cg->count && !any; l++)
            any = entry_needed(job, i, group_column(job, cg, l));
    if (!any)
        return WW_OK;

    const size_t nb = group_length(job, cg), dim = job->x->dim;
    ww_status st = ww_buffer_reserve(&sc->b, (nb + 1) * (dim + 2) * LANES * sizeof(double));
    if (st == WW_OK)
        st = ww_buffer_reserve(&sc->work, 3 * (nb + 1) * LANES * sizeof(double));
    if (st != WW_OK)
        return st;
    lane_group g;
    interleave_group(job, cg, (double *)sc->b.ptr, &g);
    lane_rows rw;
    rw.d = (double *)sc->work.ptr;
    rw.m = rw.d + (nb + 1) * LANES;
    rw.m_next = rw.m + (nb + 1) * LANES;

    double result[LANES];
    lane_band band;
    band.m = job->m;
    band.lane_length = g.lane_length;
    band.uniform = g.lane_length[0] == g.lane_length[LANES - 1]; /* sorted by length */
    for (size_t i = r0; i < r1; i++) {
        int row_any = 0;
        for (size_t l = 0; l < cg->count; l++)
            row_any |= entry_needed(job, i, group_column(job, cg, l));
        if (!row_any)
            continue;
        const ww_prepared *a = &job->xp[i];
        const ww_pair_window w = ww_pair_window_of(job->m, a->length, nb);
        band.na = a->length;
        band.radius = w.radius;
        const int windowed = band.uniform ? w.active : ww_measure_has_window(job->m);
        run_lanes(job->m, a, &g, &job->coef, windowed ? &band : NULL, &rw, result);
        for (size_t l = 0; l < cg->count; l++) {
            const size_t j = group_column(job, cg, l);
            if (entry_needed(job, i, j)) {
                store(job, i, j, result[l]);
                /* progress counts the entries kept, at their own lengths, as the total does */
                *cells += entry_cells(job, a->length, job->columns[cg->first + l].length, 0);
            }
        }
    }
    return WW_OK;
}

static ww_status pairwise_item(void *job, size_t item, ww_cpu_scratch *sc, uint64_t *cells)
{
    return run_item((const pairwise_job *)job, item, sc, cells);
}

static int compare_column_keys(const void *a, const void *b)
{
    const column_key *p = (const column_key *)a, *q = (const column_key *)b;
    if (p->length != q->length)
        return p->length < q->length ? -1 : 1;
    return (p->column > q->column) - (p->column < q->column);
}

/* Sorts the block's columns by (length, column) and cuts the sorted list into groups of LANES
 * neighbours, from the longest down, so that the one partial group holds the shortest columns:
 * a sweep costs LANES lanes times its longest column, and this cut minimises the sum of the groups'
 * longest lengths. The keys are unique, so the order does not depend on the sort's stability: the
 * lanes a column lands in, and so the results, are deterministic. */
static void group_columns(pairwise_job *job)
{
    const ww_pairwise_options *o = job->o;
    const size_t n = o->col_end - o->col_begin;
    int in_order = 1; /* equal-length datasets always are: no sort */
    for (size_t k = 0; k < n; k++) {
        job->columns[k].column = o->col_begin + k;
        job->columns[k].length = ww_dataset_length(job->y, o->col_begin + k);
        if (k > 0 && job->columns[k].length < job->columns[k - 1].length)
            in_order = 0;
    }
    if (!in_order)
        qsort(job->columns, n, sizeof *job->columns, compare_column_keys);
    job->group_count = 0;
    for (size_t k = 0; k < n;) {
        column_group g = {k, k == 0 && n % LANES != 0 ? n % LANES : LANES};
        job->groups[job->group_count++] = g;
        k += g.count;
    }
    for (size_t k = 0; k < n; k++)
        job->sorted_position[job->columns[k].column - o->col_begin] = k;
}

/* Prepares every series of a dataset (time order) into one block of `storage`. */
static void prepare_dataset(const ww_dataset *x, const ww_measure *m, double *storage, ww_prepared *out)
{
    for (size_t i = 0; i < x->count; i++) {
        ww_series s;
        ww_dataset_series(x, i, &s);
        ww_prepare(&s, m, 0, storage, &out[i]);
        storage += ww_prepared_doubles(s.length, s.dim);
    }
}

/* Every series of a dataset, its stamps only when the measure reads them. */
static ww_status check_dataset_values(const ww_dataset *x, const ww_measure *m)
{
    ww_dataset v = *x;
    v.stamps = ww_measure_stamps(m, x->stamps);
    return ww_check_dataset_values(&v);
}

static size_t dataset_prepared_doubles(const ww_dataset *x)
{
    size_t samples = x->offsets ? x->offsets[x->count] : x->count * x->length;
    return (samples + x->count) * (x->dim + 2);
}

ww_status ww_cpu_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                          const ww_pairwise_options *o)
{
    pairwise_job job;
    memset(&job, 0, sizeof job);
    job.self = y == NULL;
    job.x = x;
    job.y = y ? y : x;
    job.m = m;
    job.coef = ww_measure_coef_f64(m);
    job.o = o;
    job.out = out;

    /* Call-wide scratch: prepared x (and y), their descriptors, the column groups, the block's
     * sorted columns and their positions, the prefix sums of the column lengths, the memo of band
     * cells (every element a
     * multiple of 8 bytes, so each part stays aligned). The sizes are checked before any value is
     * read (the dataset checks bound each term, not their sum), and so is the per-thread lane
     * buffer of the longest column, which is at most yd_all * LANES doubles. */
    size_t xd = dataset_prepared_doubles(x), yd = job.self ? 0 : dataset_prepared_doubles(y);
    size_t yd_all = job.self ? xd : yd;
    size_t ny = job.y->count, block_cols = o->col_end - o->col_begin;
    size_t terms[8] = {xd, yd, x->count + (job.self ? 0 : ny), block_cols, block_cols, block_cols, ny + 1,
                       CELLS_MEMO};
    const size_t term_size[8] = {sizeof(double),     sizeof(double), sizeof(ww_prepared), sizeof(column_group),
                                 sizeof(column_key), sizeof(size_t), sizeof(uint64_t),    sizeof(cells_memo_entry)};
    size_t bytes = 64, lane_bytes;
    for (int t = 0; t < 8; t++) {
        if (!ww_mul_size(terms[t], term_size[t], &terms[t]) || terms[t] > SIZE_MAX - bytes)
            return WW_ERR_OVERFLOW;
        bytes += terms[t];
    }
    if (!ww_mul_size(yd_all, LANES * sizeof(double), &lane_bytes))
        return WW_ERR_OVERFLOW;

    ww_status st = check_dataset_values(x, m);
    if (st == WW_OK && !job.self)
        st = check_dataset_values(y, m);
    if (st != WW_OK)
        return st;
    if ((st = ww_buffer_reserve(&ctx->shared, bytes)) != WW_OK)
        return st;
    double *storage = (double *)ctx->shared.ptr;
    job.xp = (ww_prepared *)(storage + xd + yd);
    job.yp = job.self ? job.xp : job.xp + x->count;
    job.groups = (column_group *)(job.xp + x->count + (job.self ? 0 : ny));
    job.columns = (column_key *)(job.groups + block_cols);
    job.sorted_position = (size_t *)(job.columns + block_cols);
    prepare_dataset(x, m, storage, job.xp);
    if (!job.self)
        prepare_dataset(y, m, storage + xd, job.yp);
    group_columns(&job);
    size_t rows = o->row_end - o->row_begin;
    job.row_chunks = (rows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
    const size_t items = job.group_count * job.row_chunks;

    /* total cells, for progress: per row, the needed columns' lengths from prefix sums. Counting the
     * mirrored entries of rows x columns as j < i gives the same sum as entry_needed's sorted order
     * does: each unordered pair counts once, with the same product of lengths. */
    uint64_t *prefix = (uint64_t *)(job.sorted_position + block_cols);
    job.memo = (cells_memo_entry *)(prefix + ny + 1);
    memset(job.memo, 0, CELLS_MEMO * sizeof(cells_memo_entry));
    prefix[0] = 0;
    for (size_t j = 0; j < ny; j++)
        prefix[j + 1] = prefix[j] + ww_dataset_length(job.y, j);
    uint64_t total = 0;
    for (size_t i = o->row_begin; i < o->row_end && ww_measure_has_window(m); i++) /* window: entry by entry */
        for (size_t j = o->col_begin; j < o->col_end; j++)
            if (!job.self || (i != j && !(mirror_in_block(o, i, j) && j < i)))
                total += entry_cells(&job, ww_dataset_length(x, i), ww_dataset_length(job.y, j), 1);
    for (size_t i = o->row_begin; i < o->row_end && !ww_measure_has_window(m); i++) {
        uint64_t cols = prefix[o->col_end] - prefix[o->col_begin];
        if (job.self && i >= o->col_begin && i < o->col_end) {
            cols -= ww_dataset_length(x, i);
            size_t lo = o->row_begin > o->col_begin ? o->row_begin : o->col_begin;
            size_t hi = i < o->row_end ? i : o->row_end; /* mirrored: j in [lo, hi) */
            if (hi > lo)
                cols -= prefix[hi] - prefix[lo];
        }
        total += (uint64_t)ww_dataset_length(x, i) * cols;
    }

    const ww_status failure = ww_cpu_run_items(ctx, ctx->num_threads, items, total, o, NULL, pairwise_item, &job);
    if (failure != WW_OK)
        return failure;

    /* the self matrix: zero diagonal, mirrored entries */
    if (job.self)
        ww_matrix_fill_mirror(o, out, ctx->num_threads);
    if (o->progress && o->progress(total, total, o->progress_user))
        return WW_ERR_CANCELLED;
    return WW_OK;
}
