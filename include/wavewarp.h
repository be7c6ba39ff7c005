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
    WW_ERR_PARAM = 6,          /* nu < 0, lambda < 0, degree < 1, or a non-finite parameter */
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
typedef enum ww_dtype { WW_F64 = 0, WW_F32 = 1 } ww_dtype;
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
 * its window's band. Progress callbacks count these. */
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
 * Host memory (device series: WW_ERR_UNSUPPORTED in this version). The table R of the forward pass
 * is kept whole when it fits the memory budget (ww_softdtw_set_memory_budget), else one row in
 * about sqrt(nA) is kept and the rows between recomputed (O(nB sqrt(nA)) memory, about twice the
 * work): both give the same bits. WW_ERR_NOT_DIFFERENTIABLE for TWED and DTW. */
WW_API ww_status ww_gradient(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *value,
                             double *grad_a, double *grad_b);

/* B aligned pairs (x_b, y_b), b = 0 .. count - 1, for training: x and y are datasets of the same
 * count, dim and dtype (their series may have any lengths, each pair its own). values: count
 * numbers of the data's dtype; grad_x, grad_y (either or both may be NULL): arrays of the data's
 * dtype laid out like x's and y's values (the gradient of values[b] with respect to x_b, y_b). All
 * in the data's memory (host only in this version: device data is WW_ERR_UNSUPPORTED). The pairs
 * are shared among the context's threads. F32 data is computed in double and rounded once. */
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
