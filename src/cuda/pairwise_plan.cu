/* The matrix engine's policy: the cost model that picks a strategy for a rectangle of pairs (one
 * thread, warp or block per pair, or one pair at a time on the whole GPU, after the X-TED paper),
 * and the split of a mixed-length matrix into rectangles by strategy. Its variables are the
 * state's ww_cuda_model: built-in values measured on an H200 (ww_cuda_model_default,
 * bench/results/gpu-batch.md), or those ww_cuda_calibrate() measured on the GPU at hand. The same
 * for every measure; a window narrows the work of the strips (not the whole-GPU engine's critical
 * path, which is the pair's anti-diagonals). */
#include "pairwise.cuh"
#include "pairwise_kernels.cuh" /* THREAD_MAX_LENGTH, BLOCK_WARPS, block_phases */
#include "../common/settings.h"

#include <math.h>
#include <new>
#include <stdio.h>
#include <string.h>

#define WARP_SCRATCH_BYTES ((size_t)512 << 20)
#define THREAD_BAND_PAIRS_PER_SM 1024 /* half the threads a multiprocessor holds */
#define BLOCK_WINDOW_STEP_COST 1.2    /* a step of pairs_block_window_kernel, in the fixed schedule's */

/* Warps of the warp strategy in flight: WARPS_PER_SM per multiprocessor, fewer when their row
 * buffers (two rows of the longest series each) would pass WARP_SCRATCH_BYTES. */
size_t ww_cuda_warp_strategy_warps(int sm_count, size_t longest, size_t elem_size)
{
    const size_t per_warp = 2 * (longest + 1) * elem_size;
    size_t warps = (size_t)sm_count * WARPS_PER_SM;
    if (warps * per_warp > WARP_SCRATCH_BYTES)
        warps = WARP_SCRATCH_BYTES / per_warp > 4 ? WARP_SCRATCH_BYTES / per_warp : 4;
    return warps;
}

/* Blocks of the block strategy in flight (BLOCK_WARPS warps each, as many warps per multiprocessor
 * as the warp strategy), fewer when their row buffers (two pairs of rows of the longest series)
 * would pass WARP_SCRATCH_BYTES. The block strategy's time per step of a block's phase
 * (BLOCK_WARPS warps, each 32 cells of an anti-diagonal) with the GPU full of blocks is the model's
 * block_step_seconds. */
size_t ww_cuda_block_strategy_blocks(int sm_count, size_t longest, size_t elem_size)
{
    const size_t per_block = ww_cuda_block_scratch_stride(longest) * elem_size;
    size_t blocks = (size_t)sm_count * (WARPS_PER_SM / BLOCK_WARPS);
    if (blocks * per_block > WARP_SCRATCH_BYTES)
        blocks = WARP_SCRATCH_BYTES / per_block > 1 ? WARP_SCRATCH_BYTES / per_block : 1;
    return blocks;
}

size_t ww_cuda_warps_in_flight(const ww_cuda_state *s, size_t longest, size_t elem_size)
{
    return ww_cuda_warp_strategy_warps(s->sm_count, longest, elem_size);
}

double ww_cuda_block_strategy_steps(const ww_cuda_state *s, double pairs, size_t rows, size_t cols, size_t elem_size)
{
    const double blocks = (double)ww_cuda_block_strategy_blocks(s->sm_count, cols > rows ? cols : rows, elem_size);
    return ceil(pairs / blocks) * (double)block_phases((long long)rows, (long long)cols, BLOCK_WARPS) *
           (double)BLOCK_PHASE_STEPS;
}

/* ww_cuda_calibrate forces each strategy in turn (s->forced_strategy); WW_MATRIX_STRATEGY=thread|warp|
 * block|grid forces one, for tests and benchmarks. */
static const char *forced_strategy_name(const ww_cuda_state *s)
{
    return s->forced_strategy ? s->forced_strategy : ww_setting_value(WW_SETTING_MATRIX_STRATEGY);
}

/* The columns a strip of 32 rows sweeps in a pair of rows x cols (rows the shorter) under the
 * measure's window: all of them without one; with radius r, about the band's width (2 r + 1 plus
 * the columns a row's diagonal moves by), its drift over the strip's 32 rows added by the kernels. */
static double strip_columns(const ww_measure *m, double rows, double cols)
{
    if (!ww_measure_windowed(m, (size_t)rows, (size_t)cols))
        return cols;
    const double r = (double)ww_measure_radius(m, (size_t)rows, (size_t)cols);
    const double width = 2 * r + ceil(cols / (rows > 0 ? rows : 1)) + 32;
    return width < cols ? width : cols;
}

/* Whether pairs of rows x cols samples roll under m's window (band_rolls: warp_pair_rolling), and
 * their P. */
static bool pairs_roll(const ww_measure *m, double rows, double cols, size_t elem_size, size_t dim, long long *period)
{
    if (rows > cols) {
        const double shorter = cols;
        cols = rows, rows = shorter;
    }
    if (!ww_measure_windowed(m, (size_t)rows, (size_t)cols))
        return false;
    const ww_measure_traits *t = ww_measure_traits_of(m->kind);
    *period = band_period(pair_band::make(window_of(m), (size_t)rows, (size_t)cols));
    return band_rolls(*period, column_bytes(elem_size, dim, t->uses_stamps, t->has_aux));
}

bool ww_cuda_pairs_roll(const ww_measure *m, size_t max_x, size_t max_y, size_t elem_size, size_t dim)
{
    long long period = 0;
    return pairs_roll(m, (double)max_x, (double)max_y, elem_size, dim, &period);
}

int ww_cuda_band_radius(const ww_measure *m, size_t n, size_t dim, size_t elem_size)
{
    const char *knob = ww_setting_value(WW_SETTING_BAND);
    if (dim != 1 || n > (size_t)INT_MAX / 2 || (knob && strcmp(knob, "0") == 0))
        return -1;
    const pair_band band = pair_band::make(window_of(m), n, n);
    const ww_measure_traits *t = ww_measure_traits_of(m->kind);
    const unsigned widest = t->carries_before ? BAND_RADIUS_MAX_CARRIED : BAND_RADIUS_MAX;
    if (band.mode != 1 || band.r < BAND_RADIUS_MIN || band.r > widest)
        return -1;
    if (band_smem_bytes(n, band.r, elem_size, t->uses_stamps, t->has_aux) > STAGED_SMEM_MAX)
        return -1;
    return (int)band.r;
}

/* Steps of one pair of the warp strategy: strips of 32 rows, each sweeping its columns plus a
 * pipeline of 31 steps, or, under a window whose band rolls, its rows rolling over the lanes:
 * cols + (rows - 1) P / 32 steps. A rolling step took 0.88-1.08 of a strip's (H200, nineteenth
 * session), so the model counts them alike. */
static double warp_pair_steps(const ww_measure *m, double rows, double cols, size_t elem_size, size_t dim)
{
    long long period = 0;
    if (pairs_roll(m, rows, cols, elem_size, dim, &period))
        return cols + (rows - 1) * (double)period / 32;
    return ceil(rows / 32.0) * (strip_columns(m, rows, cols) + 31.0);
}

/* Entries of one thread's row buffer that the pairs need (pairs_thread_kernel): a row of the longer
 * series, or, when every pair has series of one length under a window, the widest pass of
 * ROWS_PER_PASS rows over the band, 2 r + ROWS_PER_PASS + 1 columns whatever the length (the buffer
 * follows the band). Lengths that differ keep the row: the band of a pair whose series differ
 * widens with the ratio of their lengths. */
static size_t thread_buffer_span(const ww_measure *m, size_t max_x, size_t max_y, bool equal_lengths)
{
    const size_t row = (max_x > max_y ? max_x : max_y) + 1;
    if (!equal_lengths || !ww_measure_windowed(m, max_x, max_y))
        return row;
    const size_t band = 2 * ww_measure_radius(m, max_x, max_y) + ROWS_PER_PASS + 1;
    return band < row ? band : row;
}

/* The strategy for `pairs` pairs of series of at most max_x and max_y samples under measure m (all of
 * one length when equal_lengths); `forced`: a name from forced_strategy_name(), or NULL. */
static enum strategy choose_strategy(double pairs, size_t max_x, size_t max_y, bool equal_lengths,
                                     const ww_cuda_state *s, size_t elem_size, size_t dim, const ww_measure *msr,
                                     const char *forced)
{
    const size_t longest = max_x > max_y ? max_x : max_y;
    const ww_cuda_model &m = s->model;
    const int sm_count = s->sm_count;
    if (forced && strcmp(forced, "warp") == 0)
        return STRATEGY_WARP;
    if (forced && strcmp(forced, "grid") == 0)
        return STRATEGY_GRID;
    if (forced && strcmp(forced, "block") == 0)
        return STRATEGY_BLOCK;
    const size_t span = thread_buffer_span(msr, max_x, max_y, equal_lengths);
    if (forced && strcmp(forced, "thread") == 0 && span <= THREAD_MAX_LENGTH + 1)
        return STRATEGY_THREAD;
    /* built in: the two are even at 128 samples, the warp twice as fast at 256 */
    if ((double)longest <= m.thread_max_length && longest <= THREAD_MAX_LENGTH)
        return STRATEGY_THREAD;
    /* a band of longer series of one length: one thread per pair while its span is at most a quarter
     * of the model's thread length and the pairs fill the GPU (a thread runs its pair's rows one
     * after the other: 32,640 pairs of 2,048 samples took it 14 times as long as the warp). On an
     * H200 with 1,000 series of 400 samples, the thread against the warp's rolling rows (nineteenth
     * session): 0.80-0.87 of its time at a span of 25 (DTW and TWED), 0.92-1.30 (DTW, three runs)
     * and 1.55-1.58 (TWED) at 45, 1.8-2.0 at 85 (bench/results/gpu-dtw.md). */
    if (span <= longest && span <= THREAD_MAX_LENGTH + 1 && (double)(span - 1) * 4 <= m.thread_max_length &&
        pairs >= (double)sm_count * THREAD_BAND_PAIRS_PER_SM)
        return STRATEGY_THREAD;
    /* the band in registers (pairs_band_kernel): wherever it is built for the pairs, once they fill
     * the GPU (H200, twenty-fifth session: 1,000 series of 400 samples with radius 10, 0.27 of the
     * row sweep's time; bench/results/gpu-dtw.md) */
    if (equal_lengths && max_x == max_y && ww_cuda_band_radius(msr, max_x, dim, elem_size) >= 0 &&
        pairs >= (double)sm_count * THREAD_BAND_PAIRS_PER_SM)
        return STRATEGY_THREAD;
    const double rows = (double)(max_x < max_y ? max_x : max_y), cols = (double)longest;
    const double swept = strip_columns(msr, rows, cols);
    const double warps = (double)ww_cuda_warp_strategy_warps(sm_count, longest, elem_size);
    const double t_warp = ceil(pairs / warps) * warp_pair_steps(msr, rows, cols, elem_size, dim) * m.warp_step_seconds;
    const double t_grid = pairs * (m.grid_pair_seconds + (rows + cols) * m.grid_step_seconds);
    /* one block per pair: phases of BLOCK_PHASE_STEPS steps, pairs spread over the blocks in flight;
     * not past BLOCK_PHASES_MAX phases (the longest pair has the most: the count grows with both).
     * Under a window a strip's steps start and end with its window and its phases on multiples of
     * BLOCK_PHASE_STEPS (pairs_block_window_kernel): one phase more per strip on average. Without it
     * the model took the block where the warp was 1.2-1.5 times as fast (H200, 1,000 series of 400
     * samples with radius 100, 256 of 2,048 with radius 62: bench/results/gpu-dtw.md, seventeenth
     * session). Its posted schedule's step costs more than the fixed one's (BLOCK_WINDOW_STEP_COST):
     * 256 series of 2,048 samples with radius 204 took the block 99-101 ms, the strips of the warp
     * 100-107 ms and its rolling rows 76-79 ms (nineteenth session), which the model had the other
     * way round without it. */
    const bool windowed = swept < cols;
    const double block_cols = windowed ? fmin(swept + BLOCK_PHASE_STEPS, cols) : swept;
    const double t_block = ww_cuda_block_strategy_steps(s, pairs, (size_t)rows, (size_t)block_cols, elem_size) *
                           m.block_step_seconds * (windowed ? BLOCK_WINDOW_STEP_COST : 1.0);
    const bool block_fits = block_phases((long long)rows, (long long)cols, BLOCK_WARPS) <= BLOCK_PHASES_MAX;
    if (block_fits && t_block < t_warp && t_block < t_grid)
        return STRATEGY_BLOCK;
    return t_warp < t_grid ? STRATEGY_WARP : STRATEGY_GRID;
}

static bool known_strategy(const char *name)
{
    return name && (!strcmp(name, "thread") || !strcmp(name, "warp") || !strcmp(name, "block") || !strcmp(name, "grid"));
}

/* The strategy of each series of [begin, end) of d (into kinds), a bit per strategy seen, the longest. */
static unsigned series_kinds(const ww_dataset *d, size_t begin, size_t end, double pairs, const ww_cuda_state *s,
                             size_t elem_size, const ww_measure *m, std::vector<unsigned char> *kinds, size_t *longest)
{
    kinds->resize(end - begin);
    size_t last = SIZE_MAX;
    unsigned char kind = 0, seen = 0;
    *longest = 0;
    for (size_t i = begin; i < end; i++) {
        const size_t n = ww_dataset_length(d, i);
        if (n != last) { /* equal lengths in a row are common: one model call for the run */
            kind = (unsigned char)choose_strategy(pairs, n, n, false, s, elem_size, d->dim, m, NULL);
            last = n;
        }
        (*kinds)[i - begin] = kind;
        seen |= (unsigned char)(1u << kind);
        if (n > *longest)
            *longest = n;
    }
    return seen;
}

ww_status ww_cuda_make_plan(const ww_cuda_state *s, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                            const ww_pairwise_options *o, int self, size_t elem_size, pair_plan *plan)
{
    try {
        const size_t rows = o->row_end - o->row_begin, cols = o->col_end - o->col_begin;
        plan->blocks.clear();
        plan->total_cells = ww_cuda_samples(x, o->row_begin, o->row_end) * ww_cuda_samples(y, o->col_begin, o->col_end);
        if (rows == 0 || cols == 0)
            return WW_OK;
        const double pairs = (double)rows * (double)cols / (self ? 2.0 : 1.0);
        const char *forced = forced_strategy_name(s);
        std::vector<unsigned char> row_kind, col_kind;
        size_t max_x = x->offsets ? 0 : x->length, max_y = y->offsets ? 0 : y->length;
        unsigned seen = 0;
        /* WW_MATRIX_GROUPS=0 keeps the block whole (benchmarks: the gain of the split) */
        const char *groups = ww_setting_value(WW_SETTING_MATRIX_GROUPS);
        const bool split = !known_strategy(forced) && !(groups && strcmp(groups, "0") == 0);
        if (split && (x->offsets || y->offsets)) {
            seen = series_kinds(x, o->row_begin, o->row_end, pairs, s, elem_size, m, &row_kind, &max_x);
            seen |= series_kinds(y, o->col_begin, o->col_end, pairs, s, elem_size, m, &col_kind, &max_y);
        } else if (x->offsets || y->offsets) {
            std::vector<unsigned char> unused;
            series_kinds(x, o->row_begin, o->row_end, pairs, s, elem_size, m, &unused, &max_x);
            series_kinds(y, o->col_begin, o->col_end, pairs, s, elem_size, m, &unused, &max_y);
        }
        if ((seen & (seen - 1)) == 0) { /* one strategy (or none computed: equal lengths, forced) */
            sub_block b;
            /* series of one length on both sides: a window's band bounds a thread's buffer */
            const bool equal = !x->offsets && !y->offsets && x->length == y->length;
            b.strategy = choose_strategy(pairs, max_x, max_y, equal, s, elem_size, x->dim, m, forced);
            b.whole = true;
            b.equal_lengths = equal;
            b.col_samples = ww_cuda_samples(y, o->col_begin, o->col_end);
            b.row_count = rows, b.col_count = cols, b.max_row = max_x, b.max_col = max_y;
            b.first_row = o->row_begin, b.first_col = o->col_begin;
            plan->blocks.push_back(std::move(b));
            return WW_OK;
        }
        /* the series of kind a (rows) against those of kind b (columns) */
        auto add = [&](unsigned a, unsigned b) {
            sub_block blk;
            blk.whole = false;
            blk.equal_lengths = false;
            blk.first_row = blk.first_col = 0;
            blk.max_row = blk.max_col = 0;
            blk.col_samples = 0;
            blk.row_samples.push_back(0);
            for (size_t r = 0; r < rows; r++)
                if (row_kind[r] == a) {
                    const size_t n = ww_dataset_length(x, o->row_begin + r);
                    blk.rows.push_back(o->row_begin + r);
                    blk.row_samples.push_back(blk.row_samples.back() + n);
                    blk.max_row = n > blk.max_row ? n : blk.max_row;
                }
            for (size_t c = 0; c < cols; c++)
                if (col_kind[c] == b) {
                    const size_t n = ww_dataset_length(y, o->col_begin + c);
                    blk.cols.push_back(o->col_begin + c);
                    blk.col_samples += n;
                    blk.max_col = n > blk.max_col ? n : blk.max_col;
                }
            if (blk.rows.empty() || blk.cols.empty())
                return;
            blk.row_count = blk.rows.size(), blk.col_count = blk.cols.size();
            const double block_pairs = (double)blk.row_count * (double)blk.col_count / (self ? 2.0 : 1.0);
            blk.strategy =
                choose_strategy(block_pairs, blk.max_row, blk.max_col, false, s, elem_size, x->dim, m, NULL);
            plan->blocks.push_back(std::move(blk));
        };
        for (unsigned a = STRATEGY_THREAD; a <= STRATEGY_GRID; a++)
            for (unsigned b = STRATEGY_THREAD; b <= STRATEGY_GRID; b++)
                add(a, b);
        return WW_OK;
    } catch (const std::bad_alloc &) {
        return WW_ERR_MEMORY;
    }
}

int ww_cuda_describe_plan(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, char *buf, size_t size)
{
    static const char *const names[] = {"thread", "warp", "block", "grid"};
    if (size)
        buf[0] = 0;
    if (ctx == NULL || ctx->cuda == NULL || x == NULL)
        return -1;
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = x->count;
    o.col_end = y ? y->count : x->count;
    pair_plan plan;
    const ww_measure twed = ww_measure_twed(0.001, 1.0, 2); /* the plan is the same for every measure without a window */
    if (ww_cuda_make_plan(ctx->cuda, &twed, x, y ? y : x, &o, y == NULL, ww_cuda_esize(x->dtype), &plan) != WW_OK)
        return -1;
    size_t used = 0;
    for (const sub_block &b : plan.blocks) {
        const int n = snprintf(size > used ? buf + used : NULL, size > used ? size - used : 0, "%s %zu x %zu, longest %zu x %zu%s\n",
                               names[b.strategy], b.row_count, b.col_count, b.max_row, b.max_col,
                               b.whole ? " (whole)" : "");
        used += n > 0 ? (size_t)n : 0;
    }
    return (int)plan.blocks.size();
}
