/* ww_cuda_calibrate: measures the matrix engine's cost-model variables (ww_cuda_model) on the GPU
 * at hand. Each strategy is forced in turn on short matrices of random series of dim 1 in double,
 * timed as whole calls (the way users see them, copies included), and the model's variables are
 * fitted to the times with the same formulas choose_strategy() (pairwise_plan.cu) uses:
 *   one thread per pair: pairs * rows * cols * thread_cell_seconds (the GPU full of pairs, so
 *     the throughput of many tables, not the latency of one);
 *   one warp per pair:   ceil(pairs / warps) * ceil(rows / 32) * (cols + 31) * warp_step_seconds;
 *   one block per pair:  (its steps, ww_cuda_block_strategy_steps) * block_step_seconds;
 *   whole GPU per pair:  pairs * (grid_pair_seconds + (rows + cols) * grid_step_seconds).
 * The threshold between the first two is where their measured times cross. The matrices run
 * through the engine layer (ww_cuda_pairwise), not the public API: no routing to the CPU, no
 * argument checks in the timings. The model is the same for every measure (TWED is timed).
 * Trees: the tree engine's thresholds (ted_*_cells) are where its strategies' times per table
 * cross, each strategy forced on batches of path pairs (measure_trees). */
#include "cuda_common.cuh"
#include "../common/ted_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Lengths of the thread/warp sweep; the last is the longest the one-thread kernel takes without a
 * window. */
static const size_t sweep_lengths[] = {32, 64, 96, 128, 160, 192, 224, 256};
#define SWEEP_COUNT (sizeof sweep_lengths / sizeof sweep_lengths[0])
static const size_t warp_lengths[] = {256, 512, 1024};
static const size_t grid_lengths[] = {1024, 2048, 4096};
#define GRID_PAIRS 3
#define SWEEP_CELLS (1u << 30) /* DP cells per timed matrix: ~5-20 ms on an H100/H200 */
#define REPEATS 3             /* the fastest of these, after one warm-up call */

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Everything one timed run needs; `values` holds enough random samples for the largest matrix. */
struct calibration_run {
    ww_ctx *ctx;
    const double *values;
    double *out;
};

/* Fastest whole-call time of a rows x cols matrix of series of `length` under `strategy`. */
static ww_status time_matrix(calibration_run *run, const char *strategy, size_t rows, size_t cols, size_t length,
                             double *seconds)
{
    ww_cuda_state *s = run->ctx->cuda;
    ww_dataset x = ww_dataset_f64(run->values, NULL, NULL, rows, length, 1);
    ww_dataset y = ww_dataset_f64(run->values + rows * length, NULL, NULL, cols, length, 1);
    const ww_twed_params p = ww_twed_params_default();
    const ww_measure m = ww_measure_twed(p.nu, p.lambda, p.degree);
    ww_pairwise_options o;
    ww_status st = ww_resolve_pairwise(&x, &y, NULL, &o);
    if (st != WW_OK)
        return st;
    s->forced_strategy = strategy;
    double best = INFINITY;
    for (int r = 0; r <= REPEATS && st == WW_OK; r++) {
        double t0 = seconds_now();
        st = ww_cuda_pairwise(run->ctx, &m, &x, &y, run->out, &o);
        double t = seconds_now() - t0;
        if (r > 0 && t < best) /* r == 0 warms up: buffers grow, kernels load */
            best = t;
    }
    s->forced_strategy = NULL;
    *seconds = best;
    return st;
}

/* A square-ish matrix of about `pairs` pairs. */
static void matrix_shape(double pairs, size_t *rows, size_t *cols)
{
    size_t r = (size_t)ceil(sqrt(pairs));
    *rows = r > 0 ? r : 1;
    *cols = (size_t)ceil(pairs / (double)*rows);
}

static ww_status measure(calibration_run *run, ww_cuda_model *m)
{
    ww_cuda_state *s = run->ctx->cuda;
    const double warps = (double)ww_cuda_warps_in_flight(s, 1024, sizeof(double));
    ww_status st = WW_OK;

    /* one thread against one warp per pair, up to the longest series the thread kernel takes without
     * a window */
    double thread_time[SWEEP_COUNT], warp_time[SWEEP_COUNT], cells[SWEEP_COUNT];
    for (size_t k = 0; k < SWEEP_COUNT && st == WW_OK; k++) {
        const double n = (double)sweep_lengths[k];
        size_t rows, cols;
        matrix_shape(SWEEP_CELLS / (n * n), &rows, &cols);
        cells[k] = (double)rows * (double)cols * n * n;
        st = time_matrix(run, "thread", rows, cols, sweep_lengths[k], &thread_time[k]);
        if (st == WW_OK)
            st = time_matrix(run, "warp", rows, cols, sweep_lengths[k], &warp_time[k]);
    }
    if (st != WW_OK)
        return st;
    /* the threshold: where log(thread / warp) crosses 0, linearly between the measured lengths */
    double threshold = (double)sweep_lengths[SWEEP_COUNT - 1];
    for (size_t k = 0; k < SWEEP_COUNT; k++) {
        const double ratio = log(thread_time[k] / warp_time[k]);
        if (ratio <= 0)
            continue;
        if (k == 0) {
            threshold = (double)sweep_lengths[0] / 2; /* slower already at the shortest: half of it */
        } else {
            const double before = log(thread_time[k - 1] / warp_time[k - 1]);
            const double a = (double)sweep_lengths[k - 1], b = (double)sweep_lengths[k];
            threshold = a + (b - a) * (0 - before) / (ratio - before);
        }
        break;
    }
    m->thread_max_length = floor(threshold);
    /* time per cell over the lengths the threshold gives the thread kernel (at least the first) */
    double t_sum = 0, c_sum = 0;
    for (size_t k = 0; k < SWEEP_COUNT; k++)
        if (k == 0 || (double)sweep_lengths[k] <= threshold) {
            t_sum += thread_time[k];
            c_sum += cells[k];
        }
    m->thread_cell_seconds = t_sum / c_sum;

    /* one warp and one block per pair on longer series: enough pairs for several per warp in flight */
    double t_warp = 0, warp_units = 0, t_block = 0, block_units = 0;
    for (size_t k = 0; k < sizeof warp_lengths / sizeof warp_lengths[0] && st == WW_OK; k++) {
        const double n = (double)warp_lengths[k], pairs = 4 * warps;
        size_t rows, cols;
        matrix_shape(pairs, &rows, &cols);
        double t = 0;
        st = time_matrix(run, "warp", rows, cols, warp_lengths[k], &t);
        t_warp += t;
        warp_units += ceil((double)rows * (double)cols / warps) * ceil(n / 32) * (n + 31);
        if (st == WW_OK)
            st = time_matrix(run, "block", rows, cols, warp_lengths[k], &t);
        t_block += t;
        block_units += ww_cuda_block_strategy_steps(s, (double)rows * (double)cols, warp_lengths[k], warp_lengths[k],
                                                    sizeof(double));
    }
    if (st != WW_OK)
        return st;
    m->warp_step_seconds = t_warp / warp_units;
    m->block_step_seconds = t_block / block_units;

    /* one pair at a time on the whole GPU: per-pair time = a + (rows + cols) * b, least squares */
    const size_t grid_count = sizeof grid_lengths / sizeof grid_lengths[0];
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t k = 0; k < grid_count && st == WW_OK; k++) {
        double t = 0;
        st = time_matrix(run, "grid", 1, GRID_PAIRS, grid_lengths[k], &t);
        const double xk = 2.0 * (double)grid_lengths[k], yk = t / GRID_PAIRS;
        sx += xk, sy += yk, sxx += xk * xk, sxy += xk * yk;
    }
    if (st != WW_OK)
        return st;
    const double nk = (double)grid_count, slope = (nk * sxy - sx * sy) / (nk * sxx - sx * sx);
    const double intercept = (sy - slope * sx) / nk;
    /* no negative cost: when the long pairs grow faster than linearly (the engine is then bound by
     * throughput, not synchronisation) the free fit's intercept drops below 0; the fit through the
     * origin (an insignificant fixed cost) is then the best one with both terms >= 0 */
    if (intercept > 1e-9 && slope > 1e-12) {
        m->grid_step_seconds = slope;
        m->grid_pair_seconds = intercept;
    } else {
        m->grid_step_seconds = sxy / sxx > 1e-12 ? sxy / sxx : 1e-12;
        m->grid_pair_seconds = 1e-9;
    }
    return WW_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Trees                                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Path trees of s nodes: a path has one keyroot, so each pair is exactly one (s + 1) x (s + 1)
 * table (the figure of bench/bench_ted_gpu.c). A batch is K of them against one more path, K as
 * many as fill TREE_CELLS cells, at most TREE_PAIRS. */
static const int tree_sizes[] = {2, 4, 8, 16, 32, 64, 128, 256};
#define TREE_SIZE_COUNT (sizeof tree_sizes / sizeof tree_sizes[0])
#define TREE_CELLS (1u << 24)
#define TREE_PAIRS 20000
enum { TREE_THREAD, TREE_WARP, TREE_BLOCK, TREE_TILES, TREE_STRATEGIES };

/* K: the pairs of a batch of n-node paths */
static size_t batch_pairs(int n)
{
    const size_t k = TREE_CELLS / ((size_t)(n + 1) * (size_t)(n + 1));
    return k < 1 ? 1 : k > TREE_PAIRS ? TREE_PAIRS : k;
}

/* Fastest call of the engine on x[0..k) against y with one strategy forced on every table. */
static ww_status time_trees(ww_ctx *ctx, const ww_tree *x, size_t k, const ww_tree *y, int strategy, double *out,
                            double *seconds)
{
    const size_t all = (size_t)1 << 40;
    const ww_ted_gpu_thresholds forced[TREE_STRATEGIES] = {{all, all, all}, {0, all, all}, {0, 0, all}, {0, 0, 0}};
    const ww_ted_params p = ww_ted_params_default();
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = k, o.col_end = 1, o.out_stride = 1;
    double best = INFINITY;
    ww_status st = WW_OK;
    for (int r = 0; r <= REPEATS && st == WW_OK; r++) {
        const double t0 = seconds_now();
        st = ww_cuda_ted_pairwise(ctx, x, y, &p, &forced[strategy], out, &o);
        const double t = seconds_now() - t0;
        if (r > 0 && t < best) /* the first call warms up */
            best = t;
    }
    *seconds = best;
    return st;
}

/* The collections' thresholds from each strategy's time per table across table sizes, from the
 * smallest tables up: one thread while within 10% of a warp (it spends no warp on a tiny table),
 * then one warp while within 5% of the fastest (a margin over the noise of two near-equal
 * strategies: on an H100, warp and tiles at 33 x 33 cells came 1.4% apart, in either order between
 * runs), then one block while faster than the tiles. The one-pair
 * block limit is not measured here (a table's latency alone does not predict a pair's time:
 * src/common/ted.c); it keeps its value. */
static ww_status measure_trees(ww_ctx *ctx, ww_cuda_model *m)
{
    size_t max_labels = 0; /* (K + 1) n for the largest batch */
    for (size_t q = 0; q < TREE_SIZE_COUNT; q++) {
        const size_t n = (size_t)tree_sizes[q], k = batch_pairs(tree_sizes[q]);
        max_labels = (k + 1) * n > max_labels ? (k + 1) * n : max_labels;
    }
    int32_t *parent = (int32_t *)malloc((size_t)tree_sizes[TREE_SIZE_COUNT - 1] * sizeof(int32_t));
    int32_t *labels = (int32_t *)malloc(max_labels * sizeof(int32_t));
    ww_tree *trees = (ww_tree *)malloc((TREE_PAIRS + 1) * sizeof(ww_tree));
    double *out = (double *)malloc(TREE_PAIRS * sizeof(double));
    ww_status st = parent && labels && trees && out ? WW_OK : WW_ERR_MEMORY;
    double t[TREE_SIZE_COUNT][TREE_STRATEGIES];
    for (size_t q = 0; q < TREE_SIZE_COUNT && st == WW_OK; q++) {
        const int n = tree_sizes[q];
        const size_t k = batch_pairs(n);
        for (int i = 0; i < n; i++)
            parent[i] = i - 1;
        unsigned long long seed = 12345; /* 8 labels: some relabellings free, most not */
        for (size_t i = 0; i < (k + 1) * (size_t)n; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            labels[i] = (int32_t)((seed >> 33) % 8);
        }
        for (size_t i = 0; i <= k; i++)
            trees[i] = ww_tree{(size_t)n, parent, labels + i * (size_t)n};
        for (int g = 0; g < TREE_STRATEGIES && st == WW_OK; g++) {
            st = time_trees(ctx, trees, k, &trees[k], g, out, &t[q][g]);
            t[q][g] /= (double)k;
        }
    }
    free(parent), free(labels), free(trees), free(out);
    if (st != WW_OK)
        return st;
    double thread_cells = 0, warp_cells, block_cells;
    size_t q = 0;
    for (; q < TREE_SIZE_COUNT && t[q][TREE_THREAD] <= 1.1 * t[q][TREE_WARP]; q++)
        thread_cells = (double)(tree_sizes[q] + 1) * (tree_sizes[q] + 1);
    warp_cells = thread_cells;
    for (; q < TREE_SIZE_COUNT && t[q][TREE_WARP] <= 1.05 * fmin(t[q][TREE_BLOCK], t[q][TREE_TILES]); q++)
        warp_cells = (double)(tree_sizes[q] + 1) * (tree_sizes[q] + 1);
    block_cells = warp_cells;
    for (; q < TREE_SIZE_COUNT && t[q][TREE_BLOCK] < t[q][TREE_TILES]; q++)
        block_cells = (double)(tree_sizes[q] + 1) * (tree_sizes[q] + 1);
    m->ted_thread_cells = thread_cells;
    m->ted_warp_cells = warp_cells;
    m->ted_block_cells = block_cells;
    return WW_OK;
}

ww_status ww_cuda_calibrate(ww_ctx *ctx, const char *path, char *report, size_t report_size)
{
    if (ctx == NULL)
        return WW_ERR_NULL_POINTER;
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    /* where the file goes; a failure here is a failure to write it, told once the model is
     * measured and in use (see below) */
    char target[4096];
    ww_status write_status = WW_OK;
    if (path == NULL)
        write_status = ww_calibration_default_path(s->gpu_name, 1, target, sizeof target);
    else if (snprintf(target, sizeof target, "%s", path) >= (int)sizeof target)
        write_status = WW_ERR_IO;
    ww_status st = WW_OK;

    /* the largest matrix: the sweep's shortest series, rows + cols series of it */
    size_t max_rows, max_cols, max_samples = 0, max_out = 0;
    for (size_t k = 0; k < SWEEP_COUNT; k++) {
        const double n = (double)sweep_lengths[k];
        matrix_shape(SWEEP_CELLS / (n * n), &max_rows, &max_cols);
        if ((max_rows + max_cols) * sweep_lengths[k] > max_samples)
            max_samples = (max_rows + max_cols) * sweep_lengths[k];
        if (max_rows * max_cols > max_out)
            max_out = max_rows * max_cols;
    }
    const double warps = (double)ww_cuda_warps_in_flight(s, 1024, sizeof(double));
    matrix_shape(4 * warps, &max_rows, &max_cols);
    if ((max_rows + max_cols) * 1024 > max_samples)
        max_samples = (max_rows + max_cols) * 1024;
    if (max_rows * max_cols > max_out)
        max_out = max_rows * max_cols;
    if ((1 + GRID_PAIRS) * (size_t)4096 > max_samples)
        max_samples = (1 + GRID_PAIRS) * (size_t)4096;
    double *values = (double *)malloc(max_samples * sizeof(double));
    double *out = (double *)malloc(max_out * sizeof(double));
    if (values == NULL || out == NULL) {
        free(values);
        free(out);
        return WW_ERR_MEMORY;
    }
    /* a random walk, so that the cells' minima vary as in real data (fixed seed: repeatable) */
    unsigned long long state = 0x9e3779b97f4a7c15ull;
    double walk = 0;
    for (size_t i = 0; i < max_samples; i++) {
        state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
        walk += (double)((state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0) - 0.5;
        values[i] = walk;
    }

    /* timed on the first device alone, and the whole-GPU strategy with the wavefront engine whatever
     * the context's engine (the file serves every context on this GPU, and they use that engine
     * unless told otherwise); a context is used by one thread at a time, so the fields are put back
     * after */
    const ww_engine engine = ctx->engine;
    const int cuda_count = ctx->cuda_count;
    ctx->engine = WW_ENGINE_CUDA_WAVEFRONT;
    ctx->cuda_count = 1;
    calibration_run run = {ctx, values, out};
    ww_cuda_model model = s->model;
    st = measure(&run, &model);
    if (st == WW_OK)
        st = measure_trees(ctx, &model);
    ctx->engine = engine;
    ctx->cuda_count = cuda_count;
    free(values);
    free(out);
    if (st != WW_OK)
        return st;

    char text[2048];
    ww_calibration_format(text, sizeof text, s->gpu_name, s->sm_count, &model);
    if (write_status == WW_OK)
        write_status = ww_calibration_write(target, text);
    /* from now on in this context, on every device that is the same GPU, written or not (the
     * measurement is no less valid for a full disk) */
    for (int d = 0; d < ctx->cuda_count; d++)
        if (strcmp(ctx->cuda_devices[d]->gpu_name, s->gpu_name) == 0 && ctx->cuda_devices[d]->sm_count == s->sm_count)
            ctx->cuda_devices[d]->model = model;
    if (write_status == WW_OK)
        snprintf(ctx->calibration_source, sizeof ctx->calibration_source, "%s", target);
    else
        snprintf(ctx->calibration_source, sizeof ctx->calibration_source, "measured (not saved)");
    if (report && report_size > 0)
        snprintf(report, report_size, "%s", text);
    return write_status;
}
