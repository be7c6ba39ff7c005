/*
 * wavewarp: exact elastic distances between sequences, in linear memory, on CPUs and NVIDIA GPUs.
 *
 * One public header. Everything returns a ww_status; ww_strerror() explains it. Nothing in the
 * library prints or exits. A ww_ctx owns threads, GPU streams and scratch memory: its large buffers
 * grow to the largest problem seen and are kept, so repeated calls do not allocate them again
 * (small bookkeeping arrays are still allocated per call). A context may be used by one thread at
 * a time. With the CUDA backend, calls run on the context's device and give the caller's current
 * device back.
 */
#ifndef WAVEWARP_H
#define WAVEWARP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(WAVEWARP_SHARED_BUILD)
#define WW_API __declspec(dllexport)
#elif defined(__GNUC__)
#define WW_API __attribute__((visibility("default")))
#else
#define WW_API
#endif

#define WW_VERSION_MAJOR 0
#define WW_VERSION_MINOR 2
#define WW_VERSION_PATCH 0
WW_API const char *ww_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Status codes                                                                                */
/* ------------------------------------------------------------------------------------------ */
typedef enum ww_status {
    WW_OK = 0,
    WW_ERR_NULL_POINTER = 1,   /* a required pointer argument is NULL */
    WW_ERR_EMPTY = 2,          /* a series has length 0, or a dataset has no series */
    WW_ERR_SHAPE = 3,          /* dim == 0, inconsistent offsets, block outside the matrix, k too big */
    WW_ERR_NONFINITE = 4,      /* a value is NaN or infinite */
    WW_ERR_STAMPS = 5,         /* stamps not finite, decreasing or beyond half the type's range */
    WW_ERR_PARAM = 6,          /* nu < 0, lambda < 0, degree < 1, a window fraction outside [0, 1], or a
                                * non-finite parameter */
    WW_ERR_DTYPE = 7,          /* unknown dtype, or mixed dtypes where one is required */
    WW_ERR_MEMORY = 8,         /* host out of memory */
    WW_ERR_DEVICE_MEMORY = 9,  /* GPU out of memory */
    WW_ERR_NO_DEVICE = 10,     /* a GPU was required (backend CUDA or device pointers) but none */
    WW_ERR_NO_CUDA = 11,       /* the library was built without CUDA */
    WW_ERR_CUDA = 12,          /* any other CUDA runtime failure */
    WW_ERR_CANCELLED = 13,     /* the progress callback asked to stop */
    WW_ERR_BACKEND = 14,       /* unknown backend/engine, or engine unsuitable for the request */
    WW_ERR_OVERFLOW = 15,      /* a size computation would overflow size_t */
    WW_ERR_MEMORY_KIND = 16,   /* host/device memory kind not valid for this call */
    WW_ERR_IO = 17,            /* a file could not be read, written or created */
    WW_ERR_CALIBRATION = 18,   /* a GPU calibration file is malformed */
    WW_ERR_UNSUPPORTED = 19,   /* the measure (or its option) is not available on this backend/engine */
    WW_ERR_MEASURE = 20,       /* unknown measure kind */
    WW_ERR_TREE = 21,          /* a malformed tree: parents not in preorder or not one root, or tree
                                * text that does not parse (brackets, X-TED files) */
    WW_ERR_TREE_SIZE = 22,     /* a pair of trees needs more memory than the limit (ww_ted_memory_limit) */
    WW_ERR_NOT_DIFFERENTIABLE = 25, /* a gradient was asked of a measure that has none (soft-DTW has) */
} ww_status;

/* A static, human-readable sentence for a status code (never NULL). */
WW_API const char *ww_strerror(ww_status status);

/* ------------------------------------------------------------------------------------------ */
/* Contexts                                                                                    */
/* ------------------------------------------------------------------------------------------ */
typedef enum ww_backend {
    WW_BACKEND_AUTO = 0, /* the GPU if the library has CUDA and a usable device, else the CPU
                          * (ww_ctx_create says when it fails instead) */
    WW_BACKEND_CPU = 1,
    WW_BACKEND_CUDA = 2,
} ww_backend;

/* Which algorithm computes one pair. AUTO picks the fastest of the context's backend. The others
 * exist for tests and benchmarks, which compare engines against each other. */
typedef enum ww_engine {
    WW_ENGINE_AUTO = 0,
    WW_ENGINE_CPU_REFERENCE = 1, /* the full (nA+1)x(nB+1) matrix; tests only, O(n^2) memory */
    WW_ENGINE_CPU_BAND = 2,      /* the paper's three anti-diagonals over the whole matrix */
    WW_ENGINE_CPU_STRIP = 3,     /* anti-diagonals inside cache-sized strips of rows (default) */
    WW_ENGINE_CUDA_DIAGONAL = 4, /* the paper's CUDA scheme: one kernel launch per anti-diagonal */
    WW_ENGINE_CUDA_WAVEFRONT = 5 /* on-chip wavefront, blocks pipelined over column tiles */
} ww_engine;

typedef struct ww_ctx_options {
    ww_backend backend; /* default AUTO */
    ww_engine engine;   /* default AUTO */
    int num_threads;    /* CPU threads; <= 0 means all cores */
    int device;         /* CUDA device ordinal; < 0 means the current/first device */
    /* Several GPUs of one host: with device_count > 0, the context uses devices[0 .. device_count)
     * and `device` is ignored (the array is copied; an ordinal may repeat, which runs two workers
     * on one GPU). ww_twed_pairwise then spreads the rows of the matrix over them; one-pair calls,
     * indexes and kNN searches through an index run on devices[0]. Default: NULL, 0. */
    const int *devices;
    int device_count;
    /* The GPU cost-model file written by ww_cuda_calibrate(). NULL: the file named by the
     * environment variable WW_CALIBRATION, else the per-user cache file of the GPU
     * ($XDG_CACHE_HOME/wavewarp/calibration-<gpu>.txt, or ~/.cache/...) when it exists, else the
     * built-in H100/H200 values. A file for another GPU is ignored. A file named here or through
     * WW_CALIBRATION that is malformed (or of a format this version does not know) fails
     * ww_ctx_create with WW_ERR_CALIBRATION, one that cannot be read with WW_ERR_IO, whatever the
     * backend asked for. The cache file, found rather than named, never fails a context: one that
     * cannot be read, is malformed or of another format is ignored like one for another GPU (the
     * built-in values are used, and ww_ctx_calibration() says why). "" means the built-in values,
     * whatever the environment and the cache hold. Numbers are read and written with '.' as the
     * decimal point whatever the program's locale (LC_NUMERIC). Read only when a GPU context is
     * created (backend CUDA, or AUTO with a usable GPU). Default NULL. */
    const char *calibration;
} ww_ctx_options;

WW_API ww_ctx_options ww_ctx_options_default(void);

typedef struct ww_ctx ww_ctx;

/* opt == NULL means ww_ctx_options_default(). Fails, whatever the backend, on bad options
 * (WW_ERR_BACKEND, WW_ERR_NO_DEVICE or WW_ERR_NULL_POINTER for a bad device list) and for want of
 * host memory (WW_ERR_MEMORY). With backend CUDA it also fails when the GPU context cannot be
 * made: no usable GPU (WW_ERR_NO_DEVICE, or WW_ERR_NO_CUDA in a build without CUDA), a CUDA error,
 * or a bad named calibration file (see ww_ctx_options.calibration). With AUTO the only GPU-side
 * failure is that named calibration file, malformed (WW_ERR_CALIBRATION) or unreadable
 * (WW_ERR_IO), and only where a usable GPU is present (it is not read otherwise); anything else
 * that keeps the GPU from being used (no CUDA, no device, a device this build has no code for, a
 * CUDA error, a device of the list failing) silently gives a CPU context. */
WW_API ww_status ww_ctx_create(ww_ctx **out, const ww_ctx_options *opt);
WW_API void ww_ctx_destroy(ww_ctx *ctx);
/* The backend actually in use (never AUTO), and its name ("cpu", "cuda"). */
WW_API ww_backend ww_ctx_backend(const ww_ctx *ctx);
WW_API const char *ww_backend_name(ww_backend backend);
WW_API int ww_ctx_num_threads(const ww_ctx *ctx);
/* Describes the backend in use, e.g. "cpu (2 threads, avx512)" or "cuda (NVIDIA H100, sm_90)". */
WW_API const char *ww_ctx_describe(const ww_ctx *ctx);
/* Where the context's last computing call ran (a CUDA context runs small work, and work the GPU has
 * no engine for, on the CPU with backend AUTO): CPU or CUDA; AUTO before any call or for NULL. */
WW_API ww_backend ww_ctx_last_backend(const ww_ctx *ctx);
/* Non-zero when this build has the CUDA backend and a device is usable. */
WW_API int ww_cuda_available(void);
/* CUDA devices visible to this process (0 without CUDA or without a GPU). */
WW_API int ww_cuda_device_count(void);
/* Where the GPU cost model of the context comes from: "built-in defaults" (followed by a note in
 * parentheses when the per-user cache file was ignored, e.g. "built-in defaults (ignored <path>:
 * malformed or of another format)"), the path of the calibration file in use, or "measured (not
 * saved)" after a ww_cuda_calibrate() that could not write its file; "" for a CPU context, also
 * one that backend AUTO made after failing to set up the GPU. */
WW_API const char *ww_ctx_calibration(const ww_ctx *ctx);

/* Measures the cost-model variables of the matrix engine on the context's (first) GPU with short
 * timed runs of each strategy (a few seconds), fits them, uses them in this context from now on,
 * and writes them with the GPU's name, its multiprocessor count and the date as `key = value`
 * lines to `path` (NULL: the per-user cache file that contexts load by default; its directory is
 * created). The file is replaced atomically. The whole-GPU strategy (long series, one pair at a
 * time) is timed with the wavefront engine whatever the context's engine (the file is for every
 * context on this GPU). `report`, when not NULL, receives the file's text (truncated to
 * report_size). WW_ERR_NULL_POINTER for a NULL ctx, WW_ERR_NO_DEVICE on a CPU context,
 * WW_ERR_NO_CUDA in a build without CUDA, WW_ERR_IO when the file (or the cache directory) cannot
 * be written: the measured model is then in use in this context all the same, `report` filled,
 * and ww_ctx_calibration() says "measured (not saved)". Another failure (of the measurement)
 * leaves the context's model as it was. */
WW_API ww_status ww_cuda_calibrate(ww_ctx *ctx, const char *path, char *report, size_t report_size);

/* ------------------------------------------------------------------------------------------ */
/* Data descriptors                                                                            */
/* ------------------------------------------------------------------------------------------ */
/* WW_U8 (unsigned 8-bit) is for images only (ww_image): series and datasets reject it (WW_ERR_DTYPE). */
typedef enum ww_dtype { WW_F64 = 0, WW_F32 = 1, WW_U8 = 2 } ww_dtype;
typedef enum ww_memory { WW_HOST = 0, WW_DEVICE = 1 } ww_memory;

/* One series: `length` samples in R^dim, row-major (sample-major: values[t*dim + k]).
 * stamps: NULL means 1, 2, ..., length; else `length` finite non-decreasing values of `dtype`, at
 *         most half its largest value in magnitude (so that every difference of two is finite).
 * memory: where values and stamps live. WW_DEVICE requires the CUDA backend and pointers to memory
 * of the context's GPU (anything else is WW_ERR_MEMORY_KIND); the data must be complete when the
 * call is made: the library works on a stream of its own, which does not wait for the caller's. */
typedef struct ww_series {
    const void *values;
    const void *stamps;
    size_t length;
    size_t dim;
    ww_dtype dtype;
    ww_memory memory;
} ww_series;

/* Many series of one dim and dtype in one buffer. Series i occupies samples
 * [offsets[i], offsets[i+1]) of `values` (and of `stamps` when given). offsets == NULL means every
 * series has `length` samples, series i starting at sample i*length. offsets always live on the
 * host, even when values are on the device. */
typedef struct ww_dataset {
    const void *values;
    const void *stamps;
    const size_t *offsets; /* count + 1 entries, offsets[0] == 0, non-decreasing; or NULL */
    size_t count;
    size_t length; /* used only when offsets == NULL */
    size_t dim;
    ww_dtype dtype;
    ww_memory memory;
} ww_dataset;

/* Helpers to fill descriptors for host arrays. */
WW_API ww_series ww_series_f64(const double *values, const double *stamps, size_t length, size_t dim);
WW_API ww_series ww_series_f32(const float *values, const float *stamps, size_t length, size_t dim);
WW_API ww_dataset ww_dataset_f64(const double *values, const double *stamps, const size_t *offsets,
                                 size_t count, size_t length, size_t dim);
WW_API ww_dataset ww_dataset_f32(const float *values, const float *stamps, const size_t *offsets,
                                 size_t count, size_t length, size_t dim);
/* Series i of a dataset as a ww_series (no copy). Fails on i >= count or bad offsets. */
WW_API ww_status ww_dataset_series(const ww_dataset *x, size_t i, ww_series *out);

/* Checks a descriptor completely (shape, finiteness, stamps); the distance functions do the same
 * before computing. Host memory only; device data is checked on the device by the calls. */
WW_API ww_status ww_series_check(const ww_series *s);
WW_API ww_status ww_dataset_check(const ww_dataset *x);

/* ------------------------------------------------------------------------------------------ */
/* Measures                                                                                    */
/* ------------------------------------------------------------------------------------------ */
/* A measure is a tagged descriptor: its kind, its parameters and a window. Every computing call
 * (ww_distance, ww_pairwise, ww_knn, ww_index_create) takes one; make it with a constructor below
 * and, optionally, ww_measure_set_window(). The descriptor is a plain value: copy it freely.
 *
 * TWED (Marteau 2009), with A_0 = 0 and TA_0 = 0 before the first sample, ||.|| the L_degree norm
 * (p-th root taken) and stamps TA, TB (1, 2, ..., n when none are given):
 *   D[0][0] = 0, D[i][0] = D[0][j] = +inf,
 *   D[i][j] = min( D[i-1][j]   + ||A_i - A_{i-1}|| + nu (TA_i - TA_{i-1}) + lambda,
 *                  D[i][j-1]   + ||B_j - B_{j-1}|| + nu (TB_j - TB_{j-1}) + lambda,
 *                  D[i-1][j-1] + ||A_i - B_j|| + ||A_{i-1} - B_{j-1}|| + nu (|TA_i - TB_j| + |TA_{i-1} - TB_{j-1}|) )
 *   and the distance is D[nA][nB].
 * DTW, with the squared Euclidean distance between samples (aeon's dtw_distance; tslearn and
 * dtaidistance return the square root of this value):
 *   D[0][0] = 0, D[i][0] = D[0][j] = +inf,
 *   D[i][j] = ||A_i - B_j||_2^2 + min(D[i-1][j], D[i][j-1], D[i-1][j-1]),  distance D[nA][nB].
 *   DTW does not use time stamps: they are neither read nor checked.
 *
 * Window (Sakoe-Chiba band), the same rule for every measure: a radius r in samples (WW_NO_WINDOW,
 * the default, means none), or aeon's fraction of the shorter series, turned into a radius for
 * each pair (ww_measure_set_window_fraction). For series of lengths n and m, the band holds the 0-based cells (p, q)
 * with, when n == m, |p - q| <= r; otherwise, with s = min(n, m) and l = max(n, m), for every
 * step = 0 .. l, L = floor(step l / (l + 1)) and S = floor(step s / (l + 1)) (exact integers), the
 * cells (short index k, long index L) with max(0, S - r) <= k <= min(s - 1, S + r). The band follows
 * the diagonal, holds (0, 0) and (n - 1, m - 1), and even with r = 0 a path from corner to corner.
 * This is aeon 1.6's band (aeon takes the floors in floating point, which makes its band one
 * cell narrower at some steps where step s / (l + 1) is an exact integer, first at lengths 22 and
 * 43). Every measure applies it to its samples: D[i][j] is inside when (i - 1, j - 1) is (DTW as
 * aeon's dtw_distance, TWED as aeon's twe_distance, which builds the band on the series without
 * their padding sample). Cells outside are +inf and never computed: a call costs the band's area.
 */
typedef enum ww_measure_kind {
    WW_MEASURE_TWED = 1,
    WW_MEASURE_DTW = 2,
    WW_MEASURE_SOFTDTW = 3, /* soft-DTW, see the section "Soft-DTW" at the end */
} ww_measure_kind;

#define WW_NO_WINDOW SIZE_MAX

/* The parameters of TWED. */
typedef struct ww_twed_params {
    double nu;     /* stiffness, >= 0 */
    double lambda; /* deletion penalty, >= 0 */
    int degree;    /* p of the L_p norm, >= 1 (2 = Euclidean) */
} ww_twed_params;

/* The parameters of soft-DTW (section "Soft-DTW" at the end). */
typedef struct ww_softdtw_params {
    double gamma;   /* smoothing, > 0 */
    int divergence; /* non-zero: the soft-DTW divergence instead of the value */
} ww_softdtw_params;

typedef struct ww_measure {
    ww_measure_kind kind;
    size_t window; /* Sakoe-Chiba radius in samples; WW_NO_WINDOW: no window */
    /* aeon's window, a fraction of the shorter series: radius = (size_t)(window_fraction *
     * min(n, m)) for each pair, computed in double as aeon does; negative: unused (the default). */
    double window_fraction;
    union {
        ww_twed_params twed;
        ww_softdtw_params softdtw; /* soft-DTW (section "Soft-DTW" below) */
        double reserved[8]; /* room for the parameters of later measures */
    } params;
} ww_measure;

/* TWED with these parameters (no window). Parameters are checked by the calls (WW_ERR_PARAM). */
WW_API ww_measure ww_measure_twed(double nu, double lambda, int degree);
/* DTW, squared Euclidean local cost (no window). */
WW_API ww_measure ww_measure_dtw(void);
/* Sets the Sakoe-Chiba radius in samples (WW_NO_WINDOW: none), and clears a window fraction.
 * WW_ERR_NULL_POINTER for NULL. */
WW_API ww_status ww_measure_set_window(ww_measure *m, size_t radius);
/* Sets aeon's window: for each pair of lengths n and m, the radius (size_t)(fraction * min(n, m))
 * (1 means no window). Clears a radius. WW_ERR_PARAM unless 0 <= fraction <= 1. */
WW_API ww_status ww_measure_set_window_fraction(ww_measure *m, double fraction);
/* The radius the measure uses for a pair of lengths n and m (WW_NO_WINDOW: none). */
WW_API size_t ww_measure_radius(const ww_measure *m, size_t n, size_t m_length);
/* The cells of the dynamic program the measure computes for a pair of lengths n and m: n m, or
 * its window's band. Progress callbacks count these. Saturates at UINT64_MAX; lengths of 2^32 or
 * more under a window (which the computing calls refuse, WW_ERR_OVERFLOW) count n m. */
WW_API uint64_t ww_measure_cells(const ww_measure *m, size_t n, size_t m_length);
/* WW_OK for a known kind with valid parameters; WW_ERR_MEASURE for an unknown kind, WW_ERR_PARAM
 * for bad parameters, WW_ERR_NULL_POINTER for NULL. */
WW_API ww_status ww_measure_check(const ww_measure *m);
/* "twed", "dtw"; "unknown" for another kind or NULL. */
WW_API const char *ww_measure_name(const ww_measure *m);

/* ------------------------------------------------------------------------------------------ */
/* Computing: one pair, matrices, nearest neighbours                                          */
/* ------------------------------------------------------------------------------------------ */
/* Called now and then from the calling thread during long calls: `done` of `total` cells so far.
 * Return non-zero to cancel; the call then returns WW_ERR_CANCELLED (output contents undefined).
 * The call's context is busy meanwhile (on the GPU, other threads of the call use it): the callback
 * must not call the library with the same context. */
typedef int (*ww_progress_fn)(uint64_t done_cells, uint64_t total_cells, void *user);

typedef struct ww_pairwise_options {
    /* The block of the full matrix to compute: rows [row_begin, row_end) (series of x) and columns
     * [col_begin, col_end) (series of y, or of x when y == NULL). end == 0 means "to the end". */
    size_t row_begin, row_end;
    size_t col_begin, col_end;
    /* out is row-major with this many elements between rows; 0 means the block's width. */
    size_t out_stride;
    ww_dtype out_dtype; /* WW_F64 (default) or WW_F32 */
    ww_progress_fn progress;
    void *progress_user;
} ww_pairwise_options;

WW_API ww_pairwise_options ww_pairwise_options_default(void);

/* The distance between two series under measure m. a and b must share dim and dtype. */
WW_API ww_status ww_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b,
                             double *out);

/* Distance matrix of x against y (y == NULL: x against itself, each unordered pair computed once,
 * mirrored, zero diagonal). out must hold the block: (row_end-row_begin) rows of out_stride
 * elements of out_dtype, on the host. opt == NULL means the whole matrix as F64.
 * Precision: the CPU engines compute F32 data in double. The GPU matrix engine computes F32 data in
 * float (each entry within float rounding of the double result, about 1e-6 relative for series of
 * a few hundred samples) and then needs the measure's parameters within float range (else
 * WW_ERR_PARAM). */
WW_API ww_status ww_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                             void *out, const ww_pairwise_options *opt);

/* The k nearest series of x for each query: indices (size_t) and distances (double), each
 * queries->count * k, row-major, nearest first, ties broken by the smaller index. k <= x->count.
 * opt may be NULL; only its progress fields are used. */
WW_API ww_status ww_knn(ww_ctx *ctx, const ww_measure *m, const ww_dataset *queries, const ww_dataset *x, size_t k,
                        size_t *indices, double *distances, const ww_pairwise_options *opt);

/* ------------------------------------------------------------------------------------------ */
/* TWED: the calls of version 0.1, kept as thin wrappers of the generic ones                   */
/* ------------------------------------------------------------------------------------------ */
/* The measure is defined above (ww_measure). These calls never use a window. */
/* nu = 0.001, lambda = 1, degree = 2 (aeon's defaults). */
WW_API ww_twed_params ww_twed_params_default(void);
WW_API ww_status ww_twed_params_check(const ww_twed_params *p);

/* ww_distance with the TWED measure of p (NULL: the defaults). */
WW_API ww_status ww_twed(ww_ctx *ctx, const ww_series *a, const ww_series *b,
                         const ww_twed_params *p, double *out);
/* ww_pairwise with the TWED measure of p (NULL: the defaults). */
WW_API ww_status ww_twed_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y,
                                  const ww_twed_params *p, void *out,
                                  const ww_pairwise_options *opt);
/* ww_knn with the TWED measure of p (NULL: the defaults). */
WW_API ww_status ww_twed_knn(ww_ctx *ctx, const ww_dataset *queries, const ww_dataset *x,
                             const ww_twed_params *p, size_t k, size_t *indices, double *distances,
                             const ww_pairwise_options *opt);

/* ------------------------------------------------------------------------------------------ */
/* Indexes: a dataset prepared once and kept by the context, for repeated queries              */
/* ------------------------------------------------------------------------------------------ */
/* Like a FAISS index on the GPU: with the CUDA backend the series are converted, their per-sample
 * terms (TWED's deletion costs) computed and the result kept in device memory, so a query pays only
 * for its own series and the distances. With the CPU backend the index keeps a private copy. The
 * measure (kind, parameters, window) is part of the index; m == NULL is WW_ERR_NULL_POINTER. The
 * caller's buffers may be freed once ww_index_create returns. An index is used with the context
 * that made it, and destroyed before it. */
typedef struct ww_index ww_index;

WW_API ww_status ww_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_measure *m, ww_index **out);
WW_API void ww_index_destroy(ww_index *index);
WW_API size_t ww_index_count(const ww_index *index);

/* Distances of every query to every indexed series: queries->count rows of ww_index_count()
 * columns (or the block of opt), as ww_pairwise(ctx, m, queries, x, ...) would give. */
WW_API ww_status ww_index_pairwise(ww_ctx *ctx, const ww_index *index, const ww_dataset *queries, void *out,
                                   const ww_pairwise_options *opt);
/* The k nearest indexed series of each query, as ww_knn(ctx, m, queries, x, ...) would give. */
WW_API ww_status ww_index_knn(ww_ctx *ctx, const ww_index *index, const ww_dataset *queries, size_t k,
                              size_t *indices, double *distances, const ww_pairwise_options *opt);

/* ------------------------------------------------------------------------------------------ */
/* Tree edit distance (issue 13)                                                               */
/* ------------------------------------------------------------------------------------------ */
/* Ordered, labelled trees. Nodes are numbered in preorder: parent[0] == -1 and, for i > 0,
 * 0 <= parent[i] < i with node i a child of node i - 1 or of one of its ancestors (so that the
 * numbering is a preorder; children are ordered by their numbers). labels[i] is an integer id (equal
 * ids, equal labels); labels == NULL means every node has the same label. count == 0 is the empty
 * tree (valid; pointers may then be NULL). Anything else is WW_ERR_TREE. */
typedef struct ww_tree {
    size_t count;
    const int32_t *parent;
    const int32_t *labels;
} ww_tree;

/* The costs of the edit operations, finite and >= 0 (else WW_ERR_PARAM): deleting a node (its
 * children take its place, in order), inserting one, and relabelling one whose label differs
 * (relabelling to an equal label costs 0). */
typedef struct ww_ted_params {
    double delete_cost, insert_cost, relabel_cost;
} ww_ted_params;

/* 1, 1, 1 (unit costs: every distance is an integer). */
WW_API ww_ted_params ww_ted_params_default(void);
WW_API ww_status ww_ted_params_check(const ww_ted_params *p);
/* WW_OK for a valid tree, WW_ERR_TREE (or WW_ERR_NULL_POINTER) otherwise. */
WW_API ww_status ww_tree_check(const ww_tree *t);

/* The tree edit distance (Zhang and Shasha 1989; APTED computes the same value): the least total
 * cost of deletions, insertions and relabellings turning a into b. Exact in double precision.
 * p == NULL: unit costs. The CPU engine keeps two tables of (a->count + 1) x (b->count + 1)
 * doubles; a pair needing more than ww_ted_memory_limit() bytes fails up front with
 * WW_ERR_TREE_SIZE. It uses the context's threads for one large pair. A context created with
 * backend CUDA computes on the GPU (a first engine: keyroot tables by dependency depth, each on one
 * thread, warp or block by its size, results identical to the CPU's; device memory for na x nb
 * doubles and more, else WW_ERR_DEVICE_MEMORY); backend AUTO computes on the CPU. */
WW_API ww_status ww_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, double *out);

/* Distance matrix of trees x[0 .. nx) against y[0 .. ny) (y == NULL: x against itself, ny ignored, each
 * unordered pair computed once, mirrored, zero diagonal), row-major, with the block, stride,
 * out_dtype and progress/cancel of opt (NULL: the whole matrix as F64). Progress counts
 * count_a * count_b cells per pair (at least 1). Pairs run in parallel on the context's threads; a
 * block with one pair to compute (or at most threads / 4) runs each pair over all the threads, and
 * reports progress and honours a cancel inside the pair (one long pair, a 1 x 1 block, is how to
 * get progress and Ctrl-C for it). */
WW_API ww_status ww_ted_pairwise(ww_ctx *ctx, const ww_tree *x, size_t nx, const ww_tree *y, size_t ny,
                                 const ww_ted_params *p, double *out, const ww_pairwise_options *opt);

/* One step of an optimal edit script: node a of tree A mapped to node b of tree B (a relabelling,
 * free for equal labels), a == -1: b inserted, b == -1: a deleted. Node numbers are preorder. */
typedef struct ww_ted_edit {
    int32_t a, b;
} ww_ted_edit;

/* The distance and an optimal edit mapping (as APTED's computeEditMapping): every node of a and of
 * b appears in exactly one edit, so *count <= a->count + b->count, the size `edits` must have;
 * the edits' costs sum to *distance. Sorted by a's node, then b's (insertions, a == -1, first).
 * Computed on the CPU whatever the context. */
WW_API ww_status ww_ted_mapping(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                                ww_ted_edit *edits, size_t *count, double *distance);

/* The most bytes one pair's tables may take (default: three quarters of the physical memory).
 * ww_ted_set_memory_limit(0) restores the default. Process-wide. */
WW_API size_t ww_ted_memory_limit(void);
WW_API void ww_ted_set_memory_limit(size_t bytes);
/* Bytes the CPU engine needs for a pair of trees of these sizes (SIZE_MAX on overflow). */
WW_API size_t ww_ted_pair_bytes(size_t count_a, size_t count_b);

/* Parsers. Label strings become ids through a dictionary shared across the trees of a call (equal
 * strings, equal ids, numbered 0, 1, ... in order of first appearance). Parsed trees own their
 * arrays: release them with ww_tree_free. Malformed text is WW_ERR_TREE. */
typedef struct ww_labels ww_labels;
WW_API ww_status ww_labels_create(ww_labels **out);
WW_API void ww_labels_destroy(ww_labels *d);
WW_API size_t ww_labels_count(const ww_labels *d);
/* The string of an id (NUL-terminated; NULL for an id out of range). */
WW_API const char *ww_labels_name(const ww_labels *d, int32_t id);
/* The id of a string (len bytes, may hold any byte), added when new. */
WW_API ww_status ww_labels_intern(ww_labels *d, const char *name, size_t len, int32_t *id);

/* The bracket notation of APTED and tree-similarity, e.g. "{a{b}{c{d}}}": a node is '{', its label,
 * its children, '}'. In labels "\{", "\}" and "\\" stand for '{', '}' and '\' (another '\' is kept
 * as it is). White space around the tree is ignored, inside labels it is kept. Unbalanced brackets,
 * empty text, a node without a label ("{}") and text after the tree are WW_ERR_TREE. */
WW_API ww_status ww_tree_parse_bracket(ww_labels *d, const char *text, size_t len, ww_tree *out);
/* One tree of X-TED's pair of files: `labels` is a line of *_nodes_N.txt (the labels in preorder,
 * separated by white space), `adjacency` the matching line of *_nodes_adj_N.txt (children lists in
 * preorder numbering, "[[1, 2], [], ...]"). Counts that differ, bad syntax, a node listed twice or
 * not at all, or a numbering that is not a preorder are WW_ERR_TREE. */
WW_API ww_status ww_tree_parse_xted(ww_labels *d, const char *labels, size_t labels_len, const char *adjacency,
                                    size_t adjacency_len, ww_tree *out);
/* Frees the arrays of a tree made by a parser and zeroes it (NULL or a zeroed tree: nothing). */
WW_API void ww_tree_free(ww_tree *t);
/* Images: elastic image matching (issue 11)                                                   */
/* ------------------------------------------------------------------------------------------ */
/* The approximate two-dimensional DP of elastic image matching. The 1D DPA of sequences A (length
 * N) and B (length M) under a local distance d is Sakoe-Chiba's symmetric recursion with slope
 * constraint 1 (0-based; a term with a negative index is +inf):
 *   D(0, 0) = 2 d(0, 0)
 *   D(i, j) = min( D(i-1, j-2) + 2 d(i, j-1) + d(i, j),
 *                  D(i-1, j-1) + 2 d(i, j),
 *                  D(i-2, j-1) + 2 d(i-1, j) + d(i, j) )
 *   DPA(A, B) = D(N-1, M-1) / (N + M).
 * No path exists when N - 1 > 2 (M - 1) or M - 1 > 2 (N - 1) (one sequence more than about twice as
 * long as the other): DPA is then +inf, which is a result, not an error. Pixels are vectors of
 * `channels` components; d is |a - b| for one channel, the Euclidean distance for several, or the
 * squared Euclidean distance (ww_image_params.squared). For images X (H1 x W1) and Y (H2 x W2): the
 * row distances r(i, j) = DPA(row i of X, row j of Y), and the image distance is the DPA over the
 * rows with local distance r: D on the H1 x H2 matrix r, divided by H1 + H2. It is symmetric, 0
 * between an image and itself, and +inf when the heights or the widths are too unequal.
 *
 * The CPU engine computes u8 and f32 pixels in float (about 1e-6 relative of the double result)
 * and f64 pixels in double (a call with any f64 image computes all of it in double). On a CUDA
 * context, matrices and kNN searches of more than WW_SMALL_WORK cells (all of them with backend
 * CUDA) run on the GPU engine, which computes every dtype in float (one block per image pair;
 * images up to 128 pixels wide, a pair within a block's shared memory; larger ones run on the CPU
 * with backend AUTO, and give WW_ERR_UNSUPPORTED with backend CUDA). Images in device memory
 * (memory = WW_DEVICE, on the context's GPU; every image of a call's sets then on the device, else
 * WW_ERR_MEMORY_KIND) are read in place by the GPU engine, their pixels checked there
 * (WW_ERR_NONFINITE before anything is written); without a GPU in the context, or for the map,
 * they are WW_ERR_MEMORY_KIND, and images the GPU engine cannot take WW_ERR_UNSUPPORTED. The warping
 * map always runs on the CPU (WW_ERR_UNSUPPORTED with backend CUDA). */
typedef struct ww_image {
    const void *pixels; /* row-major, channels last: pixel (i, n) component c at (i * width + n) * channels + c */
    size_t height, width, channels;
    ww_dtype dtype;  /* WW_U8, WW_F32 or WW_F64 */
    ww_memory memory;
} ww_image;

typedef struct ww_image_params {
    int squared; /* non-zero: d is the squared Euclidean distance (default 0) */
} ww_image_params;

WW_API ww_image_params ww_image_params_default(void);
/* A host image descriptor. */
WW_API ww_image ww_image_make(const void *pixels, size_t height, size_t width, size_t channels, ww_dtype dtype);
/* Checks an image: WW_ERR_NULL_POINTER, WW_ERR_DTYPE, WW_ERR_MEMORY_KIND, WW_ERR_EMPTY (height,
 * width or channels 0), WW_ERR_OVERFLOW, WW_ERR_NONFINITE (a NaN or infinite float pixel; the
 * pixels of a device image are not read here: the GPU engine checks them). */
WW_API ww_status ww_image_check(const ww_image *img);

/* The distance of two images (same channels, else WW_ERR_SHAPE; dtypes may differ). p may be NULL
 * (the defaults). */
WW_API ww_status ww_image_distance(ww_ctx *ctx, const ww_image *a, const ww_image *b, const ww_image_params *p,
                                   double *out);
/* The distance matrix of the images x[0 .. nx) against y[0 .. ny) (y == NULL: x against itself,
 * each unordered pair computed once, mirrored, zero diagonal). Sizes may differ from image to
 * image; all share one channel count. opt as for ww_pairwise (block, stride, out dtype, progress
 * and cancel); progress counts DP cells: H1 H2 W1 W2 + H1 H2 per pair. */
WW_API ww_status ww_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny,
                                   const ww_image_params *p, void *out, const ww_pairwise_options *opt);
/* The k nearest images of x for each query: nq * k indices and distances, nearest first, ties to
 * the smaller index. 1 <= k <= nx, else WW_ERR_SHAPE. opt: only its progress fields are used. */
WW_API ww_status ww_image_knn(ww_ctx *ctx, const ww_image *queries, size_t nq, const ww_image *x, size_t nx,
                              const ww_image_params *p, size_t k, size_t *indices, double *distances,
                              const ww_pairwise_options *opt);
/* The warping map of one pair: the matched pixels along the optimal paths, as (i, n, j, m)
 * quadruples (pixel (i, n) of a matched with pixel (j, m) of b), in path order: the row path of
 * the outer DP, and within each of its row pairs the pixel path of the inner DP. Every pixel of a
 * and every pixel of b appears at least once; a pixel matched with several (where a path repeats
 * a row or a pixel) appears once per match. `matches` receives 4 * count entries; `capacity` is its
 * size in quadruples, at least ww_image_map_capacity(a, b) (else WW_ERR_SHAPE). On +inf (no path)
 * count is 0. */
WW_API size_t ww_image_map_capacity(const ww_image *a, const ww_image *b);
WW_API ww_status ww_image_map(ww_ctx *ctx, const ww_image *a, const ww_image *b, const ww_image_params *p,
                              double *distance, size_t *matches, size_t capacity, size_t *count);
/* Soft-DTW (issue 14): values, divergences, gradients, batches                                */
/* ------------------------------------------------------------------------------------------ */
/* Soft-DTW (Cuturi and Blondel 2017), squared Euclidean local cost, smoothing gamma > 0:
 *   R[0][0] = 0, R[i][0] = R[0][j] = +inf,
 *   R[i][j] = ||A_i - B_j||_2^2 + softmin(R[i-1][j-1], R[i-1][j], R[i][j-1]),
 *   softmin(a, b, c) = -gamma log(e^{-a/gamma} + e^{-b/gamma} + e^{-c/gamma}),  value R[nA][nB]
 * (tslearn's soft_dtw). It tends to DTW as gamma -> 0, is not 0 for a series against itself (it
 * may be negative), and is symmetric. The window applies as for every measure (cells outside are
 * +inf and drop out of the soft minimum). Stamps are neither read nor checked. With divergence set
 * (ww_measure_set_divergence), every call gives the soft-DTW divergence (Blondel, Mensch and Vert
 * 2021) D(a, b) = sdtw(a, b) - (sdtw(a, a) + sdtw(b, b)) / 2, which is >= 0 and 0 for a = b, and
 * its gradient. ww_distance, ww_pairwise (the diagonal of a self matrix is sdtw(x_i, x_i), or 0 for
 * the divergence), ww_knn and indexes take the measure; they run on the CPU (a CUDA context with
 * backend AUTO sends them there; backend CUDA: WW_ERR_UNSUPPORTED). Parameters: WW_ERR_PARAM
 * unless gamma is finite and > 0. */
WW_API ww_measure ww_measure_softdtw(double gamma);
/* Turns the divergence on (non-zero) or off. WW_ERR_MEASURE for a measure other than soft-DTW. */
WW_API ww_status ww_measure_set_divergence(ww_measure *m, int on);

/* The value of a differentiable measure (soft-DTW) for a and b and its exact gradient with respect
 * to each series (the backward recursion of the expected alignment E, then
 * grad_a[i] = sum_j E[i][j] 2 (a_i - b_j), and the same for b). grad_a and grad_b hold
 * length x dim doubles each (row-major like the values); either may be NULL, value may be NULL.
 * Host memory, or device memory when both series are on the device (float64 there; float32 device
 * series go through ww_softdtw_batch). The table R of the forward pass is kept whole when it fits
 * the memory budget (ww_softdtw_set_memory_budget), else one row in about sqrt(nA) is kept and the
 * rows between recomputed (about twice the work): both give the same bits. On the GPU the rows are
 * swept in bands (up to 2,048 rows in float32, 1,024 in float64): checkpointed, it keeps each band's
 * first row and one band's table, band rows x nB numbers per pair, whatever the budget.
 * WW_ERR_NOT_DIFFERENTIABLE for TWED and DTW. */
WW_API ww_status ww_gradient(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *value,
                             double *grad_a, double *grad_b);

/* B aligned pairs (x_b, y_b), b = 0 .. count - 1, for training: x and y are datasets of the same
 * count, dim and dtype (their series may have any lengths, each pair its own). values: count
 * numbers of the data's dtype; grad_x, grad_y (either or both may be NULL): arrays of the data's
 * dtype laid out like x's and y's values (the gradient of values[b] with respect to x_b, y_b). All
 * in the data's memory: host memory (the pairs shared among the context's threads, F32 data
 * computed in double and rounded once) or device memory (the GPU engine, one block per pair, F32
 * data computed in float32 with the fast exponential: values within 1e-5 relative of float64 on
 * the tests; gradients of long pairs lose more, since R's rounding, over gamma, enters every
 * backward weight). The forward pass alone needs memory linear in the lengths; gradients, the
 * budget's table or its checkpoints (ww_softdtw_set_memory_budget). */
WW_API ww_status ww_softdtw_batch(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                  void *values, void *grad_x, void *grad_y);

/* Bytes of stored table a gradient may use per pair before the backward pass switches to
 * checkpointing (default 256 MiB; the env. variable WW_SOFTDTW_MEMORY, in bytes, sets the default
 * of new contexts). 0 forces checkpointing; SIZE_MAX forces the whole table. Tests use both. */
WW_API ww_status ww_softdtw_set_memory_budget(ww_ctx *ctx, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* WAVEWARP_H */
