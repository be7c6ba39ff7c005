/* Host-side pieces of the matrix engine shared by its files: the plan (pairwise_plan.cu: the cost
 * model and the split of a matrix into rectangles by strategy), the run (pairwise.cu: uploads,
 * chunks, workers, devices) and the index (index.cu). No kernels here. */
#ifndef WW_CUDA_PAIRWISE_CUH
#define WW_CUDA_PAIRWISE_CUH

#include "cuda_common.cuh"

#include <vector>

/* ---- the plan (pairwise_plan.cu) ---- */

/* In the order of the pairs they suit, shortest first: a pair is as hard as its longer series. */
enum strategy { STRATEGY_THREAD, STRATEGY_WARP, STRATEGY_BLOCK, STRATEGY_GRID };

/* A rectangle of the caller's block that one strategy computes. `whole`: the block itself, in the
 * caller's indices. Otherwise `rows` and `cols` list its series (original indices, increasing),
 * and the kernels address them through views of the uploaded sets gathered in that order. */
struct sub_block {
    enum strategy strategy;
    bool whole;
    std::vector<size_t> rows, cols;
    std::vector<uint64_t> row_samples; /* samples of the first k rows, k = 0 .. row_count (progress) */
    uint64_t col_samples;
    size_t row_count, col_count, max_row, max_col;
    size_t first_row, first_col; /* the kernels' index of the first row and column */
    bool equal_lengths;          /* every series of both sides has max_row = max_col samples */
};

/* X-TED's dynamic strategy on a block: each series gets a kind, the strategy the cost model picks
 * for a pair of two series of its length (given the block's pair count, so that throughput
 * counts); the rows of kind a against the columns of kind b make a rectangle, which gets the
 * strategy the model picks for its own pairs and lengths (a short series against a long one is
 * not a block's work: its strips are few), and the strategies run concurrently. A block whose
 * series are all of one kind (or a forced strategy) stays whole, as do equal-length datasets. */
struct pair_plan {
    std::vector<sub_block> blocks;
    uint64_t total_cells; /* the progress total: sum over rows of len(i) times sum over columns of len(j) */
};

/* Whether the warp strategy's pairs of at most max_x by max_y samples (elem_size bytes, dim
 * components) roll over its lanes under m's window: their rows take pairs_warp_kernel's ring when
 * the longest pairs would (shorter ones of a ragged set roll where their own band allows). */
bool ww_cuda_pairs_roll(const ww_measure *m, size_t max_x, size_t max_y, size_t elem_size, size_t dim);

/* The radius of the window's band when the thread strategy's pairs of series all of n samples take
 * the band in registers (pairs_band_kernel): samples of one component, a radius of BAND_RADIUS_MIN
 * to BAND_RADIUS_MAX (BAND_RADIUS_MAX_CARRIED for a measure with a carried term) narrower than n,
 * the shared series staged in shared memory; -1 otherwise, or when WW_BAND=0. */
int ww_cuda_band_radius(const ww_measure *m, size_t n, size_t dim, size_t elem_size);

/* The plan of block o of x against y (y == x for the self matrix) under measure m (its window
 * narrows the strips' work). */
ww_status ww_cuda_make_plan(const ww_cuda_state *s, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                            const ww_pairwise_options *o, int self, size_t elem_size, pair_plan *plan);

/* Warps of the warp strategy in flight and blocks of the block strategy, for series of at most
 * `longest` samples; the block strategy's scratch per block, in elements. */
size_t ww_cuda_warp_strategy_warps(int sm_count, size_t longest, size_t elem_size);
size_t ww_cuda_block_strategy_blocks(int sm_count, size_t longest, size_t elem_size);
static inline size_t ww_cuda_block_scratch_stride(size_t longest) { return 4 * (longest + 1); }
#define WARPS_PER_SM 32 /* warps of the warp strategy resident per multiprocessor */

/* ---- datasets ---- */

static inline size_t ww_cuda_esize(ww_dtype t) { return t == WW_F32 ? sizeof(float) : sizeof(double); }

/* Where series i starts in the prepared layout: its samples plus one sentinel per series before it. */
static inline size_t ww_cuda_prepared_base(const ww_dataset *d, size_t i)
{
    return (d->offsets ? d->offsets[i] : i * d->length) + i;
}

/* Samples of series [begin, end) of a dataset. */
static inline uint64_t ww_cuda_samples(const ww_dataset *d, size_t begin, size_t end)
{
    return d->offsets ? (uint64_t)(d->offsets[end] - d->offsets[begin]) : (uint64_t)(end - begin) * d->length;
}

/* Device copies of one dataset, prepared. Buffers are grow-only. */
struct set_buffers {
    ww_device_buffer raw, meta, prepared; /* meta: the offsets, bases and lengths of the series */
    /* a small host set is staged here (pinned) for its upload; `staged` follows the last copy out */
    void *staging;
    size_t staging_bytes;
    cudaEvent_t staged;
};

/* Frees a set's device and staging buffers. */
void ww_cuda_release_set(set_buffers *b);

/* The columns' series already on the device (an index): the prepared set as the kernels see it
 * (device_set<T>, pairwise_kernels.cuh, by its fields) and the longest series. */
template <typename T> struct prepared_columns {
    const T *values, *stamps, *delete_cost;
    const size_t *base;
    const int *length;
    size_t dim;
    size_t max_length;
};

/* Uploads and prepares a dataset for measure m on the state's stream (pairwise.cu); bad values
 * raise flags in dflags. */
ww_status ww_cuda_upload_set(ww_cuda_state *s, const ww_measure *m, const ww_dataset *d, set_buffers *b, int *dflags,
                             prepared_columns<double> *out);
ww_status ww_cuda_upload_set(ww_cuda_state *s, const ww_measure *m, const ww_dataset *d, set_buffers *b, int *dflags,
                             prepared_columns<float> *out);

/* The block o of x against y (NULL: x itself) under measure m on the context's first `devices`
 * devices, each uploading and preparing the data itself; c32 / c64: the columns already on the
 * first device (an index), or NULL. */
ww_status ww_cuda_run_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                               const prepared_columns<float> *c32, const prepared_columns<double> *c64, void *out,
                               const ww_pairwise_options *o, int devices);

/* Device datasets must hold device pointers; float data is computed in float, so the measure's
 * parameters must fit in a float. */
ww_status ww_cuda_check_set(const ww_dataset *d, const ww_measure *m);

#endif
