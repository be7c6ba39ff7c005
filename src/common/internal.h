/* Library-internal declarations shared by the API layer and the engines. Not installed. */
#ifndef WW_INTERNAL_H
#define WW_INTERNAL_H

#include "wavewarp.h"
#include "../measures/real.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A grow-only, 64-byte aligned buffer: scratch memory that contexts keep between calls. */
typedef struct ww_buffer {
    void *ptr;
    size_t bytes;
} ww_buffer;

ww_status ww_buffer_reserve(ww_buffer *b, size_t bytes);
void ww_buffer_free(ww_buffer *b);

/* Multiplies with overflow detection: returns 0 on overflow. */
int ww_mul_size(size_t a, size_t b, size_t *out);

/* A series converted for the CPU engines: double precision, with the sentinel sample 0 (the zero
 * vector at time 0) in front, and the measure's per-sample term precomputed (TWED: the deletion
 * cost; zeros for a measure without one). Stored either in time order (index s = sample s) or
 * reversed (index k = sample length - k), which lets an anti-diagonal sweep read both series with
 * unit stride. A measure that does not use stamps gets 0, 1, ..., length whatever was given. */
typedef struct ww_prepared {
    double *values; /* (length + 1) * dim */
    double *stamps; /* length + 1 */
    double *aux;    /* length + 1; the entry of sample 0 is 0 and never used */
    size_t length;
    size_t dim;
} ww_prepared;

/* Doubles needed to prepare a series of this length and dim. */
size_t ww_prepared_doubles(size_t length, size_t dim);
/* Fills p from s (host memory, already checked) using storage (ww_prepared_doubles() doubles). */
void ww_prepare(const ww_series *s, const ww_measure *m, int reversed, double *storage, ww_prepared *p);

/* Per-thread scratch of the CPU backend. */
typedef struct ww_cpu_scratch {
    ww_buffer a, b, work;
} ww_cpu_scratch;

typedef struct ww_cuda_state ww_cuda_state; /* defined by the CUDA backend */

/* The cost model of the GPU engines (the matrix engine's choose_strategy() in src/cuda/pairwise_plan.cu, the tree engine's thresholds): machine
 * variables that ww_cuda_calibrate() measures, and the thresholds derived from them. The built-in
 * values were measured on an H200 and hold for H100/H200 (bench/results/gpu-batch.md). To add a
 * variable: a field here, its default in ww_cuda_model_default(), a line in the key table of
 * src/common/calibration.c, and its measurement in src/cuda/calibrate.cu. */
typedef struct ww_cuda_model {
    /* one thread per pair: seconds per DP cell with the GPU full of pairs (throughput, not the
     * latency of one table) */
    double thread_cell_seconds;
    double warp_step_seconds; /* one warp per pair: one step of a warp (32 cells of an anti-diagonal) */
    double grid_pair_seconds; /* one pair at a time on the whole GPU: fixed cost per pair ... */
    double grid_step_seconds; /* ... and per anti-diagonal (a grid-wide synchronisation) */
    /* one block per pair: one step of a block's phase (its warps on 32 cells each, then a block
     * synchronisation), with the GPU full of blocks */
    double block_step_seconds;
    /* longest series given one thread per pair: where its modelled throughput meets the warp's */
    double thread_max_length;
    /* The tree engine's thresholds between its strategies (src/common/ted.c), in cells of a
     * keyroot table: one thread each up to ted_thread_cells, one warp up to ted_warp_cells, one
     * block up to ted_block_cells (collections) or ted_pair_block_cells (one pair), larger in tiles
     * over many warps. Measured crossovers of each strategy's time per table (X-TED's threshold
     * figure, bench/bench_ted_gpu.c), the one-pair limit only by the pairs (built in). */
    double ted_thread_cells, ted_warp_cells, ted_block_cells, ted_pair_block_cells;
} ww_cuda_model;

ww_cuda_model ww_cuda_model_default(void);
/* The model of a context's first GPU (the built-in one without a GPU or CUDA). */
ww_cuda_model ww_cuda_context_model(const ww_ctx *ctx);

/* Calibration files (src/common/calibration.c, compiled in every build): `key = value` lines, '#'
 * comments, numbers in the "C" locale (read and written so whatever LC_NUMERIC the program set).
 * ww_calibration_parse fills `model` (keys it lacks keep their values) and sets *applies to 1 when
 * the file is for this GPU (same name and multiprocessor count), to 0 (model untouched) when it is
 * for another; WW_ERR_CALIBRATION (model untouched) when it is malformed or of another format
 * (WW_ERR_MEMORY, rarely: no memory for the "C" locale object it parses in). */
ww_status ww_calibration_parse(const char *text, const char *gpu_name, int sm_count, ww_cuda_model *model,
                               int *applies);
/* The same for a file: WW_ERR_IO when it cannot be read. */
ww_status ww_calibration_load(const char *path, const char *gpu_name, int sm_count, ww_cuda_model *model,
                              int *applies);
/* Writes the file's text into buf (NUL-terminated, truncated to size); returns its full length. */
size_t ww_calibration_format(char *buf, size_t size, const char *gpu_name, int sm_count, const ww_cuda_model *model);
/* Replaces `path` atomically (a temporary file in the same directory, renamed). */
ww_status ww_calibration_write(const char *path, const char *text);
/* The per-user cache file of a GPU; with create_dir, its directory is created. */
ww_status ww_calibration_default_path(const char *gpu_name, int create_dir, char *buf, size_t size);
/* The model of a GPU for a new context: the built-in one for "", the explicit file if given, else
 * $WW_CALIBRATION, else the cache file if it exists, else the defaults; `source` receives the file
 * used or "built-in defaults". A named file (explicit or $WW_CALIBRATION) that cannot be read is
 * WW_ERR_IO, a malformed one WW_ERR_CALIBRATION. The cache file never fails: one that cannot be
 * read or is malformed is ignored like one for another GPU, and `source` then reads "built-in
 * defaults (ignored <path>: <why>)". */
ww_status ww_calibration_resolve(const char *explicit_path, const char *gpu_name, int sm_count, ww_cuda_model *model,
                                 char *source, size_t source_size);

/* Phases of one pair in the GPU block strategy's kernel (pairs_block_kernel, src/cuda/pairwise_kernels.cuh):
 * `rows` (the shorter series) in strips of 32, each strip ceil((cols + 31) / phase_steps) phases
 * long, `warps` strips at once, strip k + 1 two phases behind strip k. In 64 bits: the count is
 * about rows * cols / 4096 with 4 warps of 32-step phases, past INT_MAX for series of about
 * 3 million samples. Here (not in the .cu) so that the tests check it without a GPU. */
#if defined(__CUDACC__)
#define WW_HOST_DEVICE __host__ __device__
#else
#define WW_HOST_DEVICE
#endif
static inline WW_HOST_DEVICE long long ww_block_phases(long long rows, long long cols, int warps, int phase_steps)
{
    const long long strips = (rows + 31) / 32, per_strip = (cols + 31 + phase_steps - 1) / phase_steps;
    const long long round = per_strip > 2LL * warps ? per_strip : 2LL * warps, last = strips - 1;
    return (last / warps) * round + 2 * (last % warps) + per_strip;
}

#define WW_MAX_DEVICES 64 /* GPUs one context may be given */

struct ww_ctx {
    ww_backend backend;   /* CPU or CUDA, never AUTO */
    ww_backend requested; /* as asked: AUTO lets a GPU call fall back to the CPU */
    ww_engine engine;
    int num_threads;
    int device;
    char description[160];
    ww_cpu_scratch *cpu; /* num_threads entries */
    ww_buffer shared;    /* call-wide CPU scratch (prepared datasets, kNN rows) */
    ww_cuda_state *cuda; /* NULL on the CPU backend; else cuda_devices[0] */
    /* several GPUs (ww_ctx_options.devices): one state per entry, the first being `cuda` */
    int device_list[WW_MAX_DEVICES];
    int device_count; /* entries of device_list; 0: the single `device` */
    ww_cuda_state *cuda_devices[WW_MAX_DEVICES];
    int cuda_count;          /* states in cuda_devices (1 on one GPU) */
    char *calibration_path;  /* ww_ctx_options.calibration, copied; or NULL */
    ww_backend last_backend; /* where the last computing call ran (ww_ctx_last_backend) */
    char calibration_source[4096]; /* ww_ctx_calibration() */
    size_t softdtw_memory_budget;  /* bytes of stored table per pair (ww_softdtw_set_memory_budget) */
};

/* A prepared dataset (wavewarp.h). `host` is a private host copy, or with the CUDA backend a
 * descriptor of the caller's data kept for shapes and for long series that go through the pair
 * engine (host_storage then owns a copy too); `device` is the backend's prepared copy, NULL when
 * the index runs on the CPU. */
struct ww_index {
    ww_ctx *ctx;
    ww_measure measure;
    size_t count;
    ww_dataset host;
    void *host_storage;
    void *device;
};

ww_status ww_index_copy_host(const ww_dataset *x, ww_index *ix);

/* Checks of descriptors (host data only for the element checks). */
ww_status ww_check_series_shape(const ww_series *s);
ww_status ww_check_dataset_shape(const ww_dataset *x);
ww_status ww_check_values_host(const void *values, const void *stamps, size_t length, size_t dim,
                               ww_dtype dtype);
/* Every series of a host dataset (stamps checked only when given). */
ww_status ww_check_dataset_values(const ww_dataset *x);
/* Checks both datasets of a matrix call and fills in the block of opt (end == 0 means to the end). */
ww_status ww_resolve_pairwise(const ww_dataset *x, const ww_dataset *y, const ww_pairwise_options *in,
                              ww_pairwise_options *out);
/* Samples of a dataset, and the length of series i. */
uint64_t ww_dataset_samples(const ww_dataset *x);
static inline size_t ww_dataset_length(const ww_dataset *x, size_t i)
{
    return x->offsets ? x->offsets[i + 1] - x->offsets[i] : x->length;
}

/* Completes a self-matrix block: copies every entry whose mirror was computed instead (j < i, both
 * (i, j) and (j, i) in the block) and zeroes the diagonal (src/common/matrix.c). */
void ww_matrix_fill_mirror(const ww_pairwise_options *o, void *out, int threads);

/* Copies `rows` rows of `row_bytes` bytes from src (rows src_stride bytes apart) to dst (dst_stride
 * apart), on up to `threads` threads when the copy is large (src/common/matrix.c). */
void ww_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows,
                  int threads);

/* Evicts [p, p + bytes) from the CPU's caches, on up to `threads` threads: a GPU's copy into pinned
 * memory that the host's cores have just read runs at half speed (src/common/matrix.c). */
void ww_evict_from_caches(const void *p, size_t bytes, int threads);

/* ---- measures (src/common/measure.c) ---- */
/* What the host code needs to know of a measure at run time (the engines have the same as
 * compile-time constants, src/measures/). NULL for an unknown kind. */
typedef struct ww_measure_traits {
    ww_measure_kind kind;
    const char *name;
    int has_aux, carries_before, uses_stamps, symmetric, zero_self;
} ww_measure_traits;
const ww_measure_traits *ww_measure_traits_of(ww_measure_kind kind);
/* The measure's parameters in the computing type (src/measures/real.h). */
ww_coef_f64 ww_measure_coef_f64(const ww_measure *m);
ww_coef_f32 ww_measure_coef_f32(const ww_measure *m);
/* Is the window narrower than the matrix of this pair (lengths n, m)? Else the engines ignore it. */
int ww_measure_windowed(const ww_measure *m, size_t n, size_t m_length);
/* Has the measure a window at all (a radius or a fraction)? */
int ww_measure_has_window(const ww_measure *m);
/* Stamps as the measure reads them: NULL when it does not use them. */
static inline const void *ww_measure_stamps(const ww_measure *m, const void *stamps)
{
    const ww_measure_traits *t = ww_measure_traits_of(m->kind);
    return t && t->uses_stamps ? stamps : NULL;
}

/* ---- soft-DTW (src/common/softdtw.c, src/cpu/softdtw.c) ---- */
/* The default table budget of a new context: $WW_SOFTDTW_MEMORY, else 256 MiB. */
size_t ww_softdtw_default_budget(void);
/* After a matrix of a soft-DTW measure was computed with a zero diagonal: puts sdtw(x_i, x_i) on the
 * diagonal of a self matrix, and with the divergence subtracts the self terms from every entry. */
ww_status ww_softdtw_complete_matrix(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                     void *out, const ww_pairwise_options *o);
/* The CPU engine of gradients: one pair of prepared series (time order, both) with the table kept
 * in segments of `keep` anti-diagonals (all of them when keep >= na + nb): value and gradients
 * (either may be NULL, each length x dim, added to, scaled by `scale`). Scratch from
 * ww_cpu_softdtw_work_doubles (0: overflow). */
size_t ww_cpu_softdtw_work_doubles(size_t na, size_t nb, size_t dim, size_t keep);
double ww_cpu_softdtw_gradient(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, size_t keep,
                               double scale, double *grad_a, double *grad_b, double *work);
/* The CPU matrix of a soft-DTW measure: the generic engine, then ww_softdtw_complete_matrix (in
 * double when the divergence is written as F32). */
ww_status ww_softdtw_cpu_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                  void *out, const ww_pairwise_options *o);
/* One pair of a soft-DTW measure on the CPU: the engine's value, less the self terms with the
 * divergence. */
ww_status ww_softdtw_cpu_distance(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a,
                                  const ww_series *b, double *out);
/* The value alone by the same anti-diagonal forward pass: work of ww_cpu_softdtw_value_doubles,
 * prepared series both in time order. */
size_t ww_cpu_softdtw_value_doubles(size_t na, size_t nb, size_t dim);
double ww_cpu_softdtw_value(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, double *work);
/* The same value on the table scaled to base 2 (fewer operations a cell; src/cpu/softdtw.c), or by
 * ww_cpu_softdtw_value where the scaled table could leave a double's range. Same work. Not for
 * the diagonal and divergence terms of matrices, which must be the lane engine's bits. */
double ww_cpu_softdtw_value_base2(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, double *work);
/* The anti-diagonals per segment of the backward pass of a pair under the budget: na + nb (all:
 * the compact table) or about sqrt(na + nb) (checkpoints). */
size_t ww_softdtw_keep_rows(size_t budget_bytes, size_t na, size_t nb);

/* Soft-DTW on the GPU (src/cuda/softdtw.cu): a batch of device data (values and gradients on the
 * device, in the data's dtype), and one pair of F64 device series (value to the host, gradients
 * on the device). Checked shapes; the values are checked on the device. */
ww_status ww_cuda_softdtw_batch(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                void *values, void *grad_x, void *grad_y);
ww_status ww_cuda_softdtw_gradient(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b,
                                   double *value, double *grad_a, double *grad_b);

/* ---- the registry (src/common/registry.c): what runs where ---- */
typedef enum ww_op { WW_OP_DISTANCE = 0, WW_OP_PAIRWISE = 1, WW_OP_INDEX = 2 } ww_op;
/* WW_OK when the backend (CPU or CUDA) has an engine for the measure and operation (with its
 * window, if any), and the context's forced engine (if any) serves it; WW_ERR_UNSUPPORTED else. */
ww_status ww_registry_supports(const ww_ctx *ctx, ww_backend backend, const ww_measure *m, ww_op op);
/* Where a call runs: *backend is CPU or CUDA. On a CUDA context with backend AUTO, host work that
 * the GPU cannot serve (measure, window, size limit of its engines) or that is small enough for
 * the CPU to finish before a GPU round trip (`cells` x dim below WW_SMALL_WORK) runs on the CPU.
 * WW_ERR_UNSUPPORTED when the only backend allowed cannot serve it; WW_ERR_MEMORY_KIND for device
 * data on a CPU context. */
ww_status ww_registry_route(const ww_ctx *ctx, const ww_measure *m, ww_op op, int on_device, double cells,
                            size_t longest, ww_backend *backend);
/* After a GPU call failed with `st`: may it be run again on the CPU? (backend AUTO, host data, the
 * GPU out of memory) */
int ww_registry_retry_on_cpu(const ww_ctx *ctx, ww_status st, int on_device);
/* With backend auto, host problems of at most this many cells x dim go to the CPU engines: below it
 * a GPU round trip (copies, launches, synchronisation) costs more than the CPU needs
 * (bench/results/gpu.md: n = 1,024 takes 0.5 ms on one core, 0.6 ms on the GPU). */
#define WW_SMALL_WORK (2.0 * 1024 * 1024)
/* The GPU engines index rows and columns with int: longer series are the CPU's. */
#define WW_CUDA_MAX_LENGTH ((size_t)INT32_MAX / 2)

/* ---- CPU engines (src/cpu) ---- */
/* One pair with the given engine (REFERENCE, BAND or STRIP; AUTO: STRIP). Host data, checked. */
ww_status ww_cpu_distance(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a,
                          const ww_series *b, double *out);
/* Doubles of `work` each engine needs. Returns 0 on overflow. */
size_t ww_cpu_pair_work_doubles(ww_engine engine, size_t na, size_t nb);
/* One pair on prepared series (a in time order, b reversed), for tests and the engines above. */
double ww_cpu_pair_engine(ww_engine engine, const ww_measure *m, const ww_prepared *a, const ww_prepared *b_reversed,
                          double *work);
/* Block of the distance matrix on the CPU. opt is complete (block resolved, stride set). */
ww_status ww_cpu_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                          const ww_pairwise_options *opt);

/* ---- CUDA backend (src/cuda, or cuda_stub.c when built without CUDA) ---- */
ww_status ww_cuda_init(ww_ctx *ctx);
void ww_cuda_shutdown(ww_ctx *ctx);
/* The GPU engines never fall back to the CPU themselves (the registry decides). */
ww_status ww_cuda_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *out);
ww_status ww_cuda_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                           const ww_pairwise_options *opt);
ww_status ww_cuda_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_measure *m, ww_index *ix);
void ww_cuda_index_destroy(ww_index *ix);
/* How ww_cuda_pairwise would split the whole matrix of x against y (NULL: x itself) into
 * rectangles by strategy, one line each ("warp 40 x 120, longest 600 x 2000"), for tests and
 * benchmarks. Returns the number of rectangles, -1 without a GPU. */
int ww_cuda_describe_plan(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, char *buf, size_t size);
ww_status ww_cuda_index_pairwise(ww_ctx *ctx, const ww_index *ix, const ww_dataset *queries, void *out,
                                 const ww_pairwise_options *opt);

#ifdef __cplusplus
}
#endif
#endif
