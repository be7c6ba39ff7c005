/* The subcommands of the command-line tool: distance, pairwise, knn, classify, demo, generate. */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "synth.h"

/* ---------------------------------------------------------------- data for the API */

/* A dataset described for the API; f32 is the float32 copy made for --precision float. */
typedef struct prepared_data {
    ww_dataset desc;
    float *f32;
} prepared_data;

/* The backend the last call ran on: the context's description, or "cpu" when a GPU context handed
 * the work to the CPU (small work, or a measure or window the GPU has no engine for). */
static const char *ran_on(const ww_ctx *ctx, char *buf, size_t size)
{
    if (ww_ctx_backend(ctx) == WW_BACKEND_CUDA && ww_ctx_last_backend(ctx) == WW_BACKEND_CPU) {
        snprintf(buf, size, "cpu (on a context of %s)", ww_ctx_describe(ctx));
        return buf;
    }
    return ww_ctx_describe(ctx);
}

static void prepared_free(prepared_data *p)
{
    free(p->f32);
    p->f32 = NULL;
}

static uint64_t total_samples(const cli_dataset *d) { return d->offsets[d->count]; }

static int load_dataset(const cli_settings *s, const char *path, int single_series, cli_dataset *d)
{
    cli_read_options ro = {s->labels, single_series};
    char err[CLI_ERR_SIZE];
    if (cli_read_dataset(path, &ro, d, err) != 0) {
        cli_error("%s", err);
        return CLI_EXIT_RUNTIME;
    }
    /* Say what auto-detection made of the first column of a text file, either way, since a wrong
     * guess changes every distance silently (classify needs labels, so there is nothing to say). */
    cli_format format = cli_input_format(path);
    if (s->labels != CLI_LABELS_AUTO || (format != CLI_FORMAT_WHITESPACE && format != CLI_FORMAT_CSV) ||
        (single_series && d->count == 1) || s->command == CLI_CMD_CLASSIFY || s->quiet)
        return CLI_EXIT_OK;
    if (d->label_guess)
        fprintf(stderr,
                "wavewarp: note: %s: the first column holds only integers, so it is read as class labels (not "
                "data); pass --no-labels to read it as data\n",
                path);
    else if (d->one_column) /* nothing to guess: a label would leave no values */
        fprintf(stderr, "wavewarp: note: %s: each line holds a single value, so each line is a series of length 1 "
                        "(no label column)\n",
                path);
    else
        fprintf(stderr,
                "wavewarp: note: %s: the first column holds non-integers, so it is read as data (no label "
                "column); pass --labels to read it as class labels\n",
                path);
    return CLI_EXIT_OK;
}

static int prepare(const char *path, const cli_dataset *d, int use_float, prepared_data *p)
{
    memset(p, 0, sizeof *p);
    const size_t *offsets = d->ragged ? d->offsets : NULL; /* equal lengths: the simpler descriptor */
    size_t length = cli_series_length(d, 0);
    if (!use_float) {
        p->desc = ww_dataset_f64(d->values, NULL, offsets, d->count, length, d->dim);
        return CLI_EXIT_OK;
    }
    size_t n = (size_t)total_samples(d) * d->dim;
    p->f32 = malloc(n * sizeof(float) + 1);
    if (p->f32 == NULL) {
        cli_error("%s: out of memory for the float32 copy", path);
        return CLI_EXIT_RUNTIME;
    }
    for (size_t i = 0; i < n; i++) {
        if (fabs(d->values[i]) > FLT_MAX) {
            cli_error("%s: value %g does not fit in float32 (use --precision double)", path, d->values[i]);
            prepared_free(p);
            return CLI_EXIT_RUNTIME;
        }
        p->f32[i] = (float)d->values[i];
    }
    p->desc = ww_dataset_f32(p->f32, NULL, offsets, d->count, length, d->dim);
    return CLI_EXIT_OK;
}

static int check_same_dim(const char *path_a, const cli_dataset *a, const char *path_b, const cli_dataset *b)
{
    if (a->dim == b->dim)
        return CLI_EXIT_OK;
    cli_error("%s has samples of dimension %zu but %s has dimension %zu", path_a, a->dim, path_b, b->dim);
    return CLI_EXIT_RUNTIME;
}

static int open_context(const cli_settings *s, ww_ctx **ctx)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = s->backend;
    o.num_threads = s->threads;
    int all[64];
    if (s->all_devices) {
        int count = ww_cuda_device_count();
        if (count <= 0) {
            cli_error("--devices all: no CUDA GPU is visible (or this build has no CUDA backend)");
            *ctx = NULL;
            return CLI_EXIT_RUNTIME;
        }
        for (int d = 0; d < count && d < 64; d++)
            all[d] = d;
        o.devices = all;
        o.device_count = count < 64 ? count : 64;
    } else if (s->device_count > 0) {
        o.devices = s->devices;
        o.device_count = s->device_count;
    }
    if (o.device_count > 0 && o.backend == WW_BACKEND_AUTO)
        o.backend = WW_BACKEND_CUDA; /* GPUs were named: not finding them is an error, not the CPU */
    ww_status st = ww_ctx_create(ctx, &o);
    if (st != WW_OK) {
        cli_error("cannot use the %s backend: %s", o.backend == WW_BACKEND_CUDA ? "cuda" : "requested",
                  ww_strerror(st));
        *ctx = NULL;
        return CLI_EXIT_RUNTIME;
    }
    return CLI_EXIT_OK;
}

/* The measure in words: "twed (nu = 0.001, lambda = 1, degree = 2), no window", "dtw, window
 * radius 6", "dtw, window fraction 0.1 of the shorter series". */
static const char *describe_measure(const ww_measure *m, char *buf, size_t size)
{
    int used = m->kind == WW_MEASURE_TWED
                   ? snprintf(buf, size, "twed (nu = %g, lambda = %g, degree = %d)", m->params.twed.nu,
                              m->params.twed.lambda, m->params.twed.degree)
               : m->kind == WW_MEASURE_SOFTDTW
                   ? snprintf(buf, size, "softdtw (gamma = %g%s)", m->params.softdtw.gamma,
                              m->params.softdtw.divergence ? ", divergence" : "")
                   : snprintf(buf, size, "%s", ww_measure_name(m));
    size_t at = used > 0 && (size_t)used < size ? (size_t)used : 0;
    if (m->window != WW_NO_WINDOW)
        snprintf(buf + at, size - at, ", window radius %zu", m->window);
    else if (m->window_fraction >= 0)
        snprintf(buf + at, size - at, ", window fraction %g of the shorter series", m->window_fraction);
    else
        snprintf(buf + at, size - at, ", no window");
    return buf;
}

/* Exit code and message for a failed library call. */
static int report_failure(const cli_settings *s, ww_ctx *ctx, ww_status st, const char *what)
{
    if (st == WW_ERR_CANCELLED) {
        fprintf(stderr, "wavewarp: interrupted; no output written\n");
        return CLI_EXIT_INTERRUPTED;
    }
    if (st == WW_ERR_UNSUPPORTED) {
        char measure[160];
        cli_error("%s: %s on %s: %s; --backend cpu computes it", what,
                  describe_measure(&s->measure, measure, sizeof measure), ctx ? ww_ctx_describe(ctx) : "this backend",
                  ww_strerror(st));
        return CLI_EXIT_RUNTIME;
    }
    cli_error("%s: %s", what, ww_strerror(st));
    return CLI_EXIT_RUNTIME;
}

static int require_output(const cli_settings *s, cli_format *format, int allow_npy)
{
    if (s->output == NULL)
        return cli_usage_error(s, "missing the output file (-o FILE)");
    *format = cli_output_format(s->output);
    if (*format == CLI_FORMAT_UNKNOWN || (*format == CLI_FORMAT_NPY && !allow_npy))
        return cli_usage_error(s, "%s: unknown output format; use %s.csv, .tsv or .txt", s->output,
                               allow_npy ? ".npy, " : "");
    return CLI_EXIT_OK;
}

/* ---------------------------------------------------------------- cells, for progress and cells/s */

/* --window or --window-fraction was given (a radius past every length is still counted as one) */
static int has_window(const ww_measure *m) { return m->window != WW_NO_WINDOW || m->window_fraction >= 0; }

/* The distinct lengths of some series, ascending, with how many series have each. */
typedef struct length_counts {
    size_t *length;
    uint64_t *count;
    uint64_t *row_cells; /* rows only: cells of a row of that length against every column */
    size_t distinct;
} length_counts;

static int compare_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static void length_counts_free(length_counts *h)
{
    free(h->length);
    free(h->count);
    free(h->row_cells);
    memset(h, 0, sizeof *h);
}

/* Series [begin, end) of d. -1 when out of memory. */
static int length_counts_of(const cli_dataset *d, size_t begin, size_t end, length_counts *h)
{
    memset(h, 0, sizeof *h);
    size_t n = end - begin;
    h->length = malloc((n ? n : 1) * sizeof(size_t));
    h->count = malloc((n ? n : 1) * sizeof(uint64_t));
    h->row_cells = malloc((n ? n : 1) * sizeof(uint64_t));
    if (h->length == NULL || h->count == NULL || h->row_cells == NULL) {
        length_counts_free(h);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        h->length[i] = cli_series_length(d, begin + i);
    qsort(h->length, n, sizeof(size_t), compare_size);
    for (size_t i = 0; i < n; i++) {
        if (h->distinct == 0 || h->length[h->distinct - 1] != h->length[i]) {
            h->length[h->distinct] = h->length[i];
            h->count[h->distinct++] = 0;
        }
        h->count[h->distinct - 1]++;
    }
    return 0;
}

/* Where length n is in h (it is there). */
static size_t length_position(const length_counts *h, size_t n)
{
    size_t lo = 0, hi = h->distinct;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->length[mid] <= n)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Counts the cells of the dynamic programme that the library computes, and reports as progress, for
 * blocks of rows of a matrix: every pair of a row of x and a column of y, or of x itself without
 * the diagonal and with each unordered pair inside a block once. Without a window a pair of lengths
 * n and m has n m cells; with one, its band's (ww_measure_cells), counted once for each pair of distinct
 * lengths, so the count is cheap even for large sets. */
typedef struct cell_counter {
    const ww_measure *m;
    const cli_dataset *x, *y; /* y NULL: x against itself */
    int windowed;
    length_counts rows, columns; /* windowed only: x's and the columns' lengths */
} cell_counter;

static void cell_counter_free(cell_counter *c)
{
    length_counts_free(&c->rows);
    length_counts_free(&c->columns);
}

/* -1 when out of memory (message printed). */
static int cell_counter_init(cell_counter *c, const ww_measure *m, const cli_dataset *x, const cli_dataset *y)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    c->x = x;
    c->y = y;
    c->windowed = has_window(m);
    if (!c->windowed)
        return 0;
    const cli_dataset *cols = y ? y : x;
    if (length_counts_of(x, 0, x->count, &c->rows) != 0 || length_counts_of(cols, 0, cols->count, &c->columns) != 0) {
        cell_counter_free(c);
        cli_error("out of memory");
        return -1;
    }
    for (size_t a = 0; a < c->rows.distinct; a++) {
        uint64_t cells = 0;
        for (size_t b = 0; b < c->columns.distinct; b++)
            cells += c->columns.count[b] * ww_measure_cells(m, c->rows.length[a], c->columns.length[b]);
        c->rows.row_cells[a] = cells;
    }
    return 0;
}

/* Without a window: a row pays its length times the columns' samples, less, for x against itself,
 * its own entry and the entries of earlier rows in the block (computed there, mirrored here). */
static uint64_t plain_block_cells(const cli_dataset *x, const cli_dataset *y, size_t r0, size_t r1)
{
    uint64_t all_columns = total_samples(y ? y : x), earlier_in_block = 0, cells = 0;
    for (size_t i = r0; i < r1; i++) {
        uint64_t length = cli_series_length(x, i), columns = all_columns;
        if (y == NULL) {
            columns -= length + earlier_in_block;
            earlier_in_block += length;
        }
        cells += length * columns;
    }
    return cells;
}

/* Cells of rows [r0, r1), counted as the library counts them (out of memory for a block's lengths:
 * its pairs counted one by one). */
static uint64_t block_cells(const cell_counter *c, size_t r0, size_t r1)
{
    if (!c->windowed)
        return plain_block_cells(c->x, c->y, r0, r1);
    uint64_t cells = 0, diagonal = 0;
    for (size_t i = r0; i < r1; i++) {
        size_t n = cli_series_length(c->x, i);
        cells += c->rows.row_cells[length_position(&c->rows, n)];
        if (c->y == NULL)
            diagonal += ww_measure_cells(c->m, n, n);
    }
    if (c->y != NULL)
        return cells;
    /* x against itself: without the diagonal, and each unordered pair inside the block once; the
     * pairs inside the block, by their lengths (the whole matrix: all of them) */
    if (r0 == 0 && r1 == c->x->count)
        return (cells - diagonal) / 2;
    uint64_t inside = 0;
    length_counts block;
    if (length_counts_of(c->x, r0, r1, &block) == 0) {
        for (size_t a = 0; a < block.distinct; a++)
            for (size_t b = 0; b < block.distinct; b++)
                inside += block.count[a] * block.count[b] * ww_measure_cells(c->m, block.length[a], block.length[b]);
        length_counts_free(&block);
    } else {
        for (size_t i = r0; i < r1; i++)
            for (size_t j = r0; j < r1; j++)
                inside += ww_measure_cells(c->m, cli_series_length(c->x, i), cli_series_length(c->x, j));
    }
    return cells - diagonal - (inside - diagonal) / 2;
}

/* Every cell of a matrix computed in one block. */
static uint64_t all_cells(const cell_counter *c) { return block_cells(c, 0, c->x->count); }

/* ---------------------------------------------------------------- distance */

static int pick_row(const cli_settings *s, const char *path, const cli_dataset *d, size_t row, const char *flag,
                    size_t *out)
{
    if (row == SIZE_MAX) {
        if (d->count != 1)
            return cli_usage_error(s, "%s holds %zu series; pick one with %s I (0-based)", path, d->count,
                                   flag);
        *out = 0;
    } else if (row >= d->count) {
        return cli_usage_error(s, "%s %zu is out of range: %s holds %zu series (0-based)", flag, row, path,
                               d->count);
    } else {
        *out = row;
    }
    return CLI_EXIT_OK;
}

int cli_cmd_distance(const cli_settings *s)
{
    const char *path_a = s->positional[0], *path_b = s->positional[1];
    cli_dataset a = {0}, b = {0};
    prepared_data pa = {0}, pb = {0};
    ww_ctx *ctx = NULL;
    size_t ia = 0, ib = 0;
    int rc = load_dataset(s, path_a, s->row_a == SIZE_MAX, &a);
    if (rc == CLI_EXIT_OK)
        rc = load_dataset(s, path_b, s->row_b == SIZE_MAX, &b);
    if (rc == CLI_EXIT_OK)
        rc = pick_row(s, path_a, &a, s->row_a, "--row", &ia);
    if (rc == CLI_EXIT_OK)
        rc = pick_row(s, path_b, &b, s->row_b, "--row-b", &ib);
    if (rc == CLI_EXIT_OK)
        rc = check_same_dim(path_a, &a, path_b, &b);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_a, &a, s->use_float, &pa);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_b, &b, s->use_float, &pb);
    if (rc == CLI_EXIT_OK)
        rc = open_context(s, &ctx);
    if (rc == CLI_EXIT_OK) {
        ww_series sa, sb;
        double d = 0;
        ww_status st = ww_dataset_series(&pa.desc, ia, &sa);
        if (st == WW_OK)
            st = ww_dataset_series(&pb.desc, ib, &sb);
        if (st == WW_OK)
            st = ww_distance(ctx, &s->measure, &sa, &sb, &d);
        if (st == WW_OK)
            printf("%.17g\n", d);
        else
            rc = report_failure(s, ctx, st, "distance");
    }
    ww_ctx_destroy(ctx);
    prepared_free(&pa);
    prepared_free(&pb);
    cli_dataset_free(&a);
    cli_dataset_free(&b);
    return rc;
}

/* ---------------------------------------------------------------- pairwise */

typedef struct timed_run {
    cli_progress progress;
    double seconds;
} timed_run;

static void run_begin(timed_run *r, const cli_settings *s, const char *label, uint64_t cells)
{
    cli_progress_start(&r->progress, label, s->progress, cells);
    r->seconds = cli_now();
}

/* The Ctrl-C handler is installed for the whole process (main.c): a first interrupt is seen at the
 * next check, which discards every output; a second removes the temporary files and exits. */
static void run_end(timed_run *r)
{
    r->seconds = cli_now() - r->seconds;
    cli_progress_finish(&r->progress);
}

/* After a failed write or commit: the exit code, and a message. */
static int output_failure(const char *err)
{
    if (cli_interrupted()) {
        fprintf(stderr, "wavewarp: interrupted; no output written\n");
        return CLI_EXIT_INTERRUPTED;
    }
    cli_error("%s", err);
    return CLI_EXIT_RUNTIME;
}

/* Commits the outputs of a command (b may be NULL) unless Ctrl-C came in the meantime: both are
 * written out and closed, then, if no interrupt came, both renamed into place, so that an
 * interrupted command leaves neither (an interrupt during the renames is too late to matter: the
 * outputs are complete). */
static int commit_outputs(cli_output *a, cli_output *b, char *err)
{
    if (cli_output_finish(a, err) != 0 || (b && cli_output_finish(b, err) != 0))
        return -1;
    if (cli_interrupted()) {
        snprintf(err, CLI_ERR_SIZE, "interrupted");
        return -1;
    }
    return cli_output_publish(a, err) != 0 || (b && cli_output_publish(b, err) != 0) ? -1 : 0;
}

static int commit_output(cli_output *o, char *err) { return commit_outputs(o, NULL, err); }

/* "960 B", "4.5 KiB", "32 GiB": powers of 1024, as --max-memory reads them. */
static const char *human_bytes(char *buf, size_t size, double bytes)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t unit = 0;
    while (bytes >= 1024 && unit + 1 < sizeof units / sizeof units[0]) {
        bytes /= 1024;
        unit++;
    }
    snprintf(buf, size, unit == 0 ? "%.0f %s" : "%.3g %s", bytes, units[unit]);
    return buf;
}

/* Half the physical memory, or 1 GiB where the system does not tell. */
static uint64_t default_memory_budget(void)
{
#ifdef _SC_PHYS_PAGES
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0)
        return (uint64_t)pages * (uint64_t)page_size / 2;
#endif
    return (uint64_t)1 << 30;
}

/* Rows of the matrix that fit in `budget` bytes: at least one, since nothing smaller can be
 * computed, and at most all of them. */
static size_t rows_per_block(uint64_t budget, size_t rows, size_t row_bytes)
{
    uint64_t fit = budget / row_bytes;
    if (fit < 1)
        fit = 1;
    if (fit > rows)
        fit = rows;
    if (fit > SIZE_MAX / row_bytes)
        fit = SIZE_MAX / row_bytes;
    return (size_t)fit;
}

/* One pairwise run: the data, where the rows go, and the block buffer. */
typedef struct pairwise_plan {
    const cli_dataset *x, *y;  /* y NULL: X against itself */
    const ww_dataset *dx, *dy; /* as given to the library */
    size_t rows, cols, block_rows;
    ww_dtype out_dtype;
    void *block;    /* block_rows x cols elements of out_dtype */
    cell_counter counter;
    uint64_t cells; /* over all blocks, as the library counts them */
} pairwise_plan;

/* End of the block of rows that starts at r0: block_rows on, or the last row. */
static size_t block_end(const pairwise_plan *plan, size_t r0)
{
    return plan->rows - r0 < plan->block_rows ? plan->rows : r0 + plan->block_rows;
}

/* Computes the matrix a block of rows at a time and appends each block to the output as soon as it
 * is done, so that only block_rows rows are ever in memory; with one block this is the plain
 * in-memory computation. X against itself passes y == NULL with each block: the library computes
 * each unordered pair inside the block once, but a pair with one series in this block and the
 * other in another block is computed in both blocks, once for each of its two entries. That is the
 * price of bounded memory: at most twice the work, and none when the matrix fits. Returns an exit
 * code, the message printed. */
static int compute_in_blocks(ww_ctx *ctx, const cli_settings *s, const pairwise_plan *plan,
                             cli_matrix_writer *writer, timed_run *run)
{
    char err[CLI_ERR_SIZE];
    uint64_t cells_before = 0;
    for (size_t r0 = 0; r0 < plan->rows; r0 += plan->block_rows) {
        size_t r1 = block_end(plan, r0);
        if (cli_interrupted()) /* Ctrl-C while the previous block was being written */
            return report_failure(s, ctx, WW_ERR_CANCELLED, "pairwise");
        ww_pairwise_options po = ww_pairwise_options_default();
        po.row_begin = r0;
        po.row_end = r1;
        po.out_dtype = plan->out_dtype;
        po.progress = cli_progress_callback;
        po.progress_user = &run->progress;
        cli_progress_next_part(&run->progress, cells_before);
        ww_status st = ww_pairwise(ctx, &s->measure, plan->dx, plan->dy, plan->block, &po);
        if (st != WW_OK)
            return report_failure(s, ctx, st, "pairwise");
        if (cli_matrix_append(writer, plan->block, r1 - r0, err) != 0)
            return output_failure(err);
        cells_before += block_cells(&plan->counter, r0, r1);
    }
    return CLI_EXIT_OK;
}

int cli_cmd_pairwise(const cli_settings *s)
{
    const char *path_x = s->positional[0], *path_y = s->positional_count > 1 ? s->positional[1] : NULL;
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = require_output(s, &format, 1);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_dataset x = {0}, y = {0};
    prepared_data px = {0}, py = {0};
    ww_ctx *ctx = NULL;
    cli_output out = {0};
    pairwise_plan plan = {0};
    char err[CLI_ERR_SIZE];
    rc = load_dataset(s, path_x, 0, &x);
    if (rc == CLI_EXIT_OK && path_y)
        rc = load_dataset(s, path_y, 0, &y);
    if (rc == CLI_EXIT_OK && path_y)
        rc = check_same_dim(path_x, &x, path_y, &y);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_x, &x, s->use_float, &px);
    if (rc == CLI_EXIT_OK && path_y)
        rc = prepare(path_y, &y, s->use_float, &py);

    /* .npy takes the library's output as it is, float32 with --precision float; text prints doubles */
    int float32 = format == CLI_FORMAT_NPY && s->use_float;
    size_t element_size = float32 ? sizeof(float) : sizeof(double);
    uint64_t budget = s->max_memory ? s->max_memory : default_memory_budget();
    plan.x = &x;
    plan.y = path_y ? &y : NULL;
    plan.dx = &px.desc;
    plan.dy = path_y ? &py.desc : NULL;
    plan.rows = x.count;
    plan.cols = path_y ? y.count : x.count;
    plan.out_dtype = float32 ? WW_F32 : WW_F64;
    double matrix_bytes = (double)plan.rows * (double)plan.cols * (double)element_size;
    if (rc == CLI_EXIT_OK && cell_counter_init(&plan.counter, &s->measure, &x, plan.y) != 0)
        rc = CLI_EXIT_RUNTIME;
    if (rc == CLI_EXIT_OK) {
        plan.block_rows = rows_per_block(budget, plan.rows, plan.cols * element_size);
        plan.block = malloc(plan.block_rows * plan.cols * element_size);
        if (plan.block == NULL) {
            char need[32];
            double block_bytes = (double)plan.block_rows * (double)plan.cols * (double)element_size;
            cli_error("out of memory for %zu rows of the %zu x %zu matrix (%s); a smaller --max-memory "
                      "computes it in smaller blocks",
                      plan.block_rows, plan.rows, plan.cols, human_bytes(need, sizeof need, block_bytes));
            rc = CLI_EXIT_RUNTIME;
        }
    }
    if (rc == CLI_EXIT_OK)
        rc = open_context(s, &ctx);
    /* create the output before computing: an unwritable place fails now, not after hours */
    cli_matrix_writer writer;
    if (rc == CLI_EXIT_OK && (cli_output_open(&out, s->output, err) != 0 ||
                              cli_matrix_begin(&writer, &out, format, plan.rows, plan.cols, float32, err) != 0)) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    size_t blocks = plan.block_rows ? (plan.rows + plan.block_rows - 1) / plan.block_rows : 0;
    if (rc == CLI_EXIT_OK && blocks > 1 && !s->quiet) {
        char matrix_size[32], budget_size[32];
        fprintf(stderr,
                "wavewarp: note: the %zu x %zu matrix (%s) is larger than the memory budget (%s%s): "
                "computing it in %zu blocks of %zu row%s, each written to %s when done\n",
                plan.rows, plan.cols, human_bytes(matrix_size, sizeof matrix_size, matrix_bytes),
                human_bytes(budget_size, sizeof budget_size, (double)budget),
                s->max_memory ? ", --max-memory" : ", half the RAM", blocks, plan.block_rows,
                plan.block_rows == 1 ? "" : "s", s->output);
    }
    if (rc == CLI_EXIT_OK) {
        for (size_t r0 = 0; r0 < plan.rows; r0 += plan.block_rows)
            plan.cells += block_cells(&plan.counter, r0, block_end(&plan, r0));
        timed_run run;
        run_begin(&run, s, "pairwise", plan.cells);
        rc = compute_in_blocks(ctx, s, &plan, &writer, &run);
        run_end(&run);
        if (rc == CLI_EXIT_OK && commit_output(&out, err) != 0)
            rc = output_failure(err);
        if (rc == CLI_EXIT_OK && !s->quiet) {
            char in_blocks[64] = "";
            if (blocks > 1)
                snprintf(in_blocks, sizeof in_blocks, " (%zu blocks)", blocks);
            char measure[160], where[256];
            fprintf(stderr, "wavewarp: %zu x %zu distances%s, %s, in %.3f s (%llu cells, %.3g cells/s, %s) -> %s\n",
                    plan.rows, plan.cols, in_blocks, describe_measure(&s->measure, measure, sizeof measure),
                    run.seconds, (unsigned long long)plan.cells,
                    (double)plan.cells / (run.seconds > 0 ? run.seconds : 1e-9), ran_on(ctx, where, sizeof where),
                    s->output);
        }
    }
    cli_output_discard(&out);
    ww_ctx_destroy(ctx);
    cell_counter_free(&plan.counter);
    free(plan.block);
    prepared_free(&px);
    prepared_free(&py);
    cli_dataset_free(&x);
    cli_dataset_free(&y);
    return rc;
}

/* ---------------------------------------------------------------- knn */

static int write_knn_table(cli_output *o, cli_format format, const size_t *indices, const double *distances,
                           size_t queries, size_t k, char *err)
{
    char sep = format == CLI_FORMAT_CSV ? ',' : '\t';
    int bad = fprintf(o->fp, "query%crank%cindex%cdistance\n", sep, sep, sep) < 0;
    for (size_t q = 0; q < queries && !bad; q++)
        for (size_t r = 0; r < k && !bad; r++)
            bad = fprintf(o->fp, "%zu%c%zu%c%zu%c%.17g\n", q, sep, r + 1, sep, indices[q * k + r], sep,
                          distances[q * k + r]) < 0;
    if (bad)
        snprintf(err, CLI_ERR_SIZE, "%s: write error", o->path);
    return bad ? -1 : 0;
}

static int write_knn_indices_npy(cli_output *o, const size_t *indices, size_t queries, size_t k, char *err)
{
    size_t shape[2] = {queries, k};
    int bad = cli_write_npy_header(o->fp, "<i8", shape, 2) != 0;
    int64_t buf[256];
    for (size_t i = 0; i < queries * k && !bad; i += 256) {
        size_t n = queries * k - i < 256 ? queries * k - i : 256;
        for (size_t j = 0; j < n; j++)
            buf[j] = (int64_t)indices[i + j];
        bad = cli_write_i64_le(o->fp, buf, n) != 0;
    }
    if (bad)
        snprintf(err, CLI_ERR_SIZE, "%s: write error", o->path);
    return bad ? -1 : 0;
}

int cli_cmd_knn(const cli_settings *s)
{
    const char *path_q = s->positional[0], *path_x = s->positional[1];
    cli_format format = CLI_FORMAT_UNKNOWN, dist_format = CLI_FORMAT_UNKNOWN;
    int rc = require_output(s, &format, 1);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (s->distances_output) {
        if (format != CLI_FORMAT_NPY)
            return cli_usage_error(s, "--distances goes with -o FILE.npy (a text table already holds them)");
        dist_format = cli_output_format(s->distances_output);
        if (dist_format == CLI_FORMAT_UNKNOWN)
            return cli_usage_error(s, "%s: unknown output format; use .npy, .csv, .tsv or .txt",
                                   s->distances_output);
    }
    cli_dataset q = {0}, x = {0};
    prepared_data pq = {0}, px = {0};
    ww_ctx *ctx = NULL;
    size_t *indices = NULL;
    double *distances = NULL;
    cli_output out = {0}, dist_out = {0};
    cell_counter counter = {0};
    char err[CLI_ERR_SIZE];
    rc = load_dataset(s, path_q, 0, &q);
    if (rc == CLI_EXIT_OK)
        rc = load_dataset(s, path_x, 0, &x);
    if (rc == CLI_EXIT_OK && s->k > x.count)
        rc = cli_usage_error(s, "-k %zu is larger than the %zu series of %s", s->k, x.count, path_x);
    if (rc == CLI_EXIT_OK)
        rc = check_same_dim(path_q, &q, path_x, &x);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_q, &q, s->use_float, &pq);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_x, &x, s->use_float, &px);
    if (rc == CLI_EXIT_OK) {
        int overflow = q.count > SIZE_MAX / sizeof(double) / s->k;
        indices = overflow ? NULL : malloc(q.count * s->k * sizeof(size_t));
        distances = overflow ? NULL : malloc(q.count * s->k * sizeof(double));
        if (indices == NULL || distances == NULL) {
            cli_error("out of memory for %zu x %zu neighbours", q.count, s->k);
            rc = CLI_EXIT_RUNTIME;
        }
    }
    if (rc == CLI_EXIT_OK && cell_counter_init(&counter, &s->measure, &q, &x) != 0)
        rc = CLI_EXIT_RUNTIME;
    if (rc == CLI_EXIT_OK)
        rc = open_context(s, &ctx);
    if (rc == CLI_EXIT_OK &&
        (cli_output_open(&out, s->output, err) != 0 ||
         (s->distances_output && cli_output_open(&dist_out, s->distances_output, err) != 0))) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK) {
        uint64_t cells = all_cells(&counter);
        ww_pairwise_options po = ww_pairwise_options_default();
        timed_run run;
        po.progress = cli_progress_callback;
        po.progress_user = &run.progress;
        run_begin(&run, s, "knn", cells);
        ww_status st = ww_knn(ctx, &s->measure, &pq.desc, &px.desc, s->k, indices, distances, &po);
        run_end(&run);
        int bad = 0;
        if (st != WW_OK) {
            rc = report_failure(s, ctx, st, "knn");
        } else {
            if (format == CLI_FORMAT_NPY)
                bad = write_knn_indices_npy(&out, indices, q.count, s->k, err) != 0 ||
                      (s->distances_output &&
                       cli_write_matrix(&dist_out, dist_format, distances, q.count, s->k, err) != 0);
            else
                bad = write_knn_table(&out, format, indices, distances, q.count, s->k, err) != 0;
            bad = bad || commit_outputs(&out, s->distances_output ? &dist_out : NULL, err) != 0;
            if (bad) {
                rc = output_failure(err);
            } else if (!s->quiet) {
                char measure[160], where[256];
                fprintf(stderr,
                        "wavewarp: %zu nearest of %zu series for %zu queries, %s, in %.3f s (%llu cells, %.3g "
                        "cells/s, %s) -> %s\n",
                        s->k, x.count, q.count, describe_measure(&s->measure, measure, sizeof measure), run.seconds,
                        (unsigned long long)cells, (double)cells / (run.seconds > 0 ? run.seconds : 1e-9),
                        ran_on(ctx, where, sizeof where), s->output);
            }
        }
    }
    cli_output_discard(&out);
    cli_output_discard(&dist_out);
    cell_counter_free(&counter);
    ww_ctx_destroy(ctx);
    free(indices);
    free(distances);
    prepared_free(&pq);
    prepared_free(&px);
    cli_dataset_free(&q);
    cli_dataset_free(&x);
    return rc;
}

/* ---------------------------------------------------------------- 1-NN classification */

typedef struct nn_result {
    size_t *nearest;
    double *distance;
    size_t correct;
    double seconds;
    uint64_t cells;
} nn_result;

static void nn_result_free(nn_result *r)
{
    free(r->nearest);
    free(r->distance);
    memset(r, 0, sizeof *r);
}

/* Nearest training series of every test series, and how many share its label. */
static int classify_1nn(const cli_settings *s, ww_ctx *ctx, const cli_dataset *train,
                        const prepared_data *ptrain, const cli_dataset *test, const prepared_data *ptest,
                        nn_result *r)
{
    memset(r, 0, sizeof *r);
    r->nearest = malloc(test->count * sizeof(size_t));
    r->distance = malloc(test->count * sizeof(double));
    if (r->nearest == NULL || r->distance == NULL) {
        nn_result_free(r);
        cli_error("out of memory");
        return CLI_EXIT_RUNTIME;
    }
    cell_counter counter;
    if (cell_counter_init(&counter, &s->measure, test, train) != 0) {
        nn_result_free(r);
        return CLI_EXIT_RUNTIME;
    }
    r->cells = all_cells(&counter);
    cell_counter_free(&counter);
    ww_pairwise_options po = ww_pairwise_options_default();
    timed_run run;
    po.progress = cli_progress_callback;
    po.progress_user = &run.progress;
    run_begin(&run, s, "classify", r->cells);
    ww_status st = ww_knn(ctx, &s->measure, &ptest->desc, &ptrain->desc, 1, r->nearest, r->distance, &po);
    run_end(&run);
    r->seconds = run.seconds;
    if (st != WW_OK) {
        nn_result_free(r);
        return report_failure(s, ctx, st, "classify");
    }
    for (size_t i = 0; i < test->count; i++)
        r->correct += train->labels[r->nearest[i]] == test->labels[i];
    return CLI_EXIT_OK;
}

static void print_classification(const cli_settings *s, ww_ctx *ctx, size_t test_count, size_t train_count,
                                 const nn_result *r)
{
    double accuracy = (double)r->correct / (double)test_count;
    printf("accuracy: %.4f (%zu of %zu correct)\n", accuracy, r->correct, test_count);
    printf("error rate: %.4f\n", 1.0 - accuracy);
    char measure[160];
    describe_measure(&s->measure, measure, sizeof measure);
    printf("time: %.3f s (%zu x %zu %s distances)\n", r->seconds, test_count, train_count,
           ww_measure_name(&s->measure));
    printf("cells/s: %.3g (%llu cells%s)\n", (double)r->cells / (r->seconds > 0 ? r->seconds : 1e-9),
           (unsigned long long)r->cells, has_window(&s->measure) ? ", in the window" : "");
    char where[256];
    printf("backend: %s\n", ran_on(ctx, where, sizeof where));
    printf("measure: %s\n", measure);
    printf("precision: %s\n", s->use_float ? "float" : "double");
}

/* Everything a 1-NN run (classify, demo) holds, released in one place. */
static void nn_run_free(nn_result *r, ww_ctx *ctx, prepared_data *ptrain, prepared_data *ptest, cli_dataset *train,
                        cli_dataset *test)
{
    nn_result_free(r);
    ww_ctx_destroy(ctx);
    prepared_free(ptrain);
    prepared_free(ptest);
    cli_dataset_free(train);
    cli_dataset_free(test);
}

static int require_labels(const char *path, const cli_dataset *d)
{
    if (d->labels)
        return CLI_EXIT_OK;
    if (cli_input_format(path) == CLI_FORMAT_NPY)
        cli_error("%s: .npy files hold no labels; classify needs labelled text files (UCR layout: label first)",
                  path);
    else if (cli_input_format(path) == CLI_FORMAT_TS)
        cli_error("%s: the file has no class labels (its header says @classLabel false, or names none); classify "
                  "needs them",
                  path);
    else
        cli_error("%s: no label column (its first column is not all integers); classify needs the class label "
                  "first on every line (UCR layout), or --labels",
                  path);
    return CLI_EXIT_RUNTIME;
}

int cli_cmd_classify(const cli_settings *s)
{
    const char *path_train = s->positional[0], *path_test = s->positional[1];
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = s->output ? require_output(s, &format, 0) : CLI_EXIT_OK;
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_dataset train = {0}, test = {0};
    prepared_data ptrain = {0}, ptest = {0};
    ww_ctx *ctx = NULL;
    cli_output out = {0};
    nn_result r = {0};
    char err[CLI_ERR_SIZE];
    rc = load_dataset(s, path_train, 0, &train);
    if (rc == CLI_EXIT_OK)
        rc = load_dataset(s, path_test, 0, &test);
    if (rc == CLI_EXIT_OK)
        rc = require_labels(path_train, &train);
    if (rc == CLI_EXIT_OK)
        rc = require_labels(path_test, &test);
    /* .ts class names: the test file's numbered as the training file's */
    if (rc == CLI_EXIT_OK && cli_align_class_labels(&train, &test, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK)
        rc = check_same_dim(path_train, &train, path_test, &test);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_train, &train, s->use_float, &ptrain);
    if (rc == CLI_EXIT_OK)
        rc = prepare(path_test, &test, s->use_float, &ptest);
    if (rc == CLI_EXIT_OK)
        rc = open_context(s, &ctx);
    if (rc == CLI_EXIT_OK && s->output && cli_output_open(&out, s->output, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK)
        rc = classify_1nn(s, ctx, &train, &ptrain, &test, &ptest, &r);
    if (rc == CLI_EXIT_OK && s->output) {
        char sep = format == CLI_FORMAT_CSV ? ',' : '\t';
        int bad = fprintf(out.fp, "test%clabel%cpredicted%cnearest%cdistance\n", sep, sep, sep, sep) < 0;
        for (size_t i = 0; i < test.count && !bad; i++)
            bad = fprintf(out.fp, "%zu%c%.17g%c%.17g%c%zu%c%.17g\n", i, sep, test.labels[i], sep,
                          train.labels[r.nearest[i]], sep, r.nearest[i], sep, r.distance[i]) < 0;
        if (bad)
            snprintf(err, sizeof err, "%s: write error", s->output);
        if (bad || commit_output(&out, err) != 0)
            rc = output_failure(err);
    }
    if (rc == CLI_EXIT_OK)
        print_classification(s, ctx, test.count, train.count, &r);
    cli_output_discard(&out);
    nn_run_free(&r, ctx, &ptrain, &ptest, &train, &test);
    return rc;
}

/* ---------------------------------------------------------------- calibrate */

int cli_cmd_calibrate(const cli_settings *s)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    o.calibration = ""; /* the built-in model: a malformed cache file must not stop its replacement */
    ww_ctx *ctx = NULL;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK) {
        cli_error("calibrate needs a CUDA GPU: %s", ww_strerror(st));
        return CLI_EXIT_RUNTIME;
    }
    if (!s->quiet)
        fprintf(stderr, "wavewarp: calibrating the matrix engine on %s (a few seconds)\n", ww_ctx_describe(ctx));
    char report[2048];
    st = ww_cuda_calibrate(ctx, s->output, report, sizeof report);
    int rc = CLI_EXIT_OK;
    if (st == WW_ERR_IO) {
        cli_error("cannot write the calibration file %s: %s", s->output ? s->output : "in the cache directory",
                  ww_strerror(st));
        rc = CLI_EXIT_RUNTIME;
    } else if (st != WW_OK) {
        rc = report_failure(s, ctx, st, "calibrate");
    } else {
        fputs(report, stdout);
        if (!s->quiet)
            fprintf(stderr, "wavewarp: calibration written to %s\n", ww_ctx_calibration(ctx));
    }
    ww_ctx_destroy(ctx);
    return rc;
}

/* ---------------------------------------------------------------- demo and generate */

/* The synthetic control set as a cli_dataset (labelled, equal lengths). */
static int synthetic_dataset(uint64_t seed, size_t per_class, size_t length, cli_dataset *d)
{
    memset(d, 0, sizeof *d);
    size_t count = WW_SYNTH_CLASSES * per_class;
    if (length > SIZE_MAX / sizeof(double) / count)
        return -1;
    d->values = malloc(count * length * sizeof(double));
    d->labels = malloc(count * sizeof(double));
    d->offsets = malloc((count + 1) * sizeof(size_t));
    if (d->values == NULL || d->labels == NULL || d->offsets == NULL) {
        cli_dataset_free(d);
        return -1;
    }
    ww_synth_dataset(seed, per_class, length, d->values, d->labels);
    for (size_t i = 0; i <= count; i++)
        d->offsets[i] = i * length;
    d->count = count;
    d->dim = 1;
    return 0;
}

int cli_cmd_demo(const cli_settings *s)
{
    cli_dataset train = {0}, test = {0};
    prepared_data ptrain = {0}, ptest = {0};
    ww_ctx *ctx = NULL;
    nn_result r = {0};
    uint64_t test_seed = s->seed + 1;
    int rc = CLI_EXIT_OK;
    if (synthetic_dataset(s->seed, s->train_per_class, s->length, &train) != 0 ||
        synthetic_dataset(test_seed, s->test_per_class, s->length, &test) != 0) {
        cli_error("out of memory for the generated data");
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK)
        rc = prepare("train", &train, s->use_float, &ptrain);
    if (rc == CLI_EXIT_OK)
        rc = prepare("test", &test, s->use_float, &ptest);
    if (rc == CLI_EXIT_OK)
        rc = open_context(s, &ctx);
    if (rc == CLI_EXIT_OK) {
        char measure[160];
        printf("wavewarp demo: 1-NN classification of synthetic control charts under %s\n",
               describe_measure(&s->measure, measure, sizeof measure));
        printf("data: generated here (Alcock & Manolopoulos 1999), 6 classes, length %zu, nothing downloaded\n",
               s->length);
        printf("train: %zu series (%zu per class, seed %llu)\n", train.count, s->train_per_class,
               (unsigned long long)s->seed);
        printf("test: %zu series (%zu per class, seed %llu)\n", test.count, s->test_per_class,
               (unsigned long long)test_seed);
        fflush(stdout);
        rc = classify_1nn(s, ctx, &train, &ptrain, &test, &ptest, &r);
    }
    if (rc == CLI_EXIT_OK) {
        print_classification(s, ctx, test.count, train.count, &r);
        printf("per class:");
        for (int label = 1; label <= WW_SYNTH_CLASSES; label++) {
            size_t right = 0, all = 0;
            for (size_t i = 0; i < test.count; i++)
                if (test.labels[i] == label) {
                    all++;
                    right += train.labels[r.nearest[i]] == label;
                }
            printf(" %s %.2f%s", ww_synth_class_name(label), all ? (double)right / (double)all : 0.0,
                   label < WW_SYNTH_CLASSES ? "," : "\n");
        }
    }
    nn_run_free(&r, ctx, &ptrain, &ptest, &train, &test);
    return rc;
}

int cli_cmd_generate(const cli_settings *s)
{
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = require_output(s, &format, 1);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_dataset d;
    if (synthetic_dataset(s->seed, s->per_class, s->length, &d) != 0) {
        cli_error("out of memory for %zu series of length %zu", WW_SYNTH_CLASSES * s->per_class, s->length);
        return CLI_EXIT_RUNTIME;
    }
    cli_output out;
    char err[CLI_ERR_SIZE];
    const double *labels = s->labels == CLI_LABELS_NONE ? NULL : d.labels;
    if (cli_output_open(&out, s->output, err) != 0 ||
        cli_write_dataset(&out, format, d.values, labels, d.count, s->length, err) != 0 ||
        commit_output(&out, err) != 0) {
        rc = output_failure(err);
    } else if (!s->quiet) {
        fprintf(stderr, "wavewarp: wrote %zu series of length %zu (6 classes, %zu each, seed %llu%s) to %s\n",
                d.count, s->length, s->per_class, (unsigned long long)s->seed,
                format == CLI_FORMAT_NPY || !labels ? ", no labels" : ", label first", s->output);
    }
    cli_output_discard(&out);
    cli_dataset_free(&d);
    return rc;
}
