/*
 * wavewarp._wavewarp: the CPython binding of the C library.
 *
 * The public Python functions live in wavewarp/__init__.py; they call the functions here. This
 * module turns Python objects into ww_series / ww_dataset descriptors (copying only when NumPy
 * must, for dtype or layout), runs the C code with the GIL released, and turns statuses into
 * exceptions. A single pair is converted entirely here, because that path must cost well under
 * 10 microseconds; collections are packed by wavewarp/_arrays.py and arrive as "packs", tuples
 *     (values, stamps, offsets, count, length, dim, is_f32)
 * whose arrays are already C-contiguous and of the right dtype; this file re-checks what it relies
 * on so that a wrong pack raises instead of reading out of bounds.
 *
 * Arrays exposing __cuda_array_interface__ (CuPy, PyTorch, Numba) are passed to the library as
 * device pointers (memory = WW_DEVICE) without any copy.
 *
 * Every computing entry point takes the measure as a "spec", the tuple
 *     (name, nu, lmbda, degree, radius, window)
 * built by wavewarp._measure (name "twed" or "dtw"; the TWED parameters None for DTW; radius an
 * integer number of samples or None, window aeon's fraction or None, at most one of the two), and
 * calls the library's generic functions (ww_distance, ww_pairwise, ww_knn, ww_index_create): one
 * set of entry points for every measure; the twed* functions of the package call them too.
 *
 * The type Index (wrapped by wavewarp.Index and wavewarp.TwedIndex) holds a ww_index and the
 * context that made it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include "wavewarp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef WW_PY_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* size_t* outputs of ww_knn are written straight into NumPy intp arrays. */
_Static_assert(sizeof(size_t) == sizeof(npy_intp), "size_t and npy_intp must have the same width");

static PyObject *WavewarpError; /* wavewarp.WavewarpError, a RuntimeError */

/* ---------------------------------------------------------------------------------- errors */

/* Sets the Python exception for a failed status and returns NULL. Bad input is a ValueError, out of
 * memory a MemoryError, everything else (no GPU, CUDA failures, a measure or window that the backend
 * asked for does not have: WW_ERR_UNSUPPORTED...) a WavewarpError. */
static PyObject *raise_status(ww_status status)
{
    PyObject *type = WavewarpError;
    switch (status) {
    case WW_ERR_NULL_POINTER:
    case WW_ERR_EMPTY:
    case WW_ERR_SHAPE:
    case WW_ERR_NONFINITE:
    case WW_ERR_STAMPS:
    case WW_ERR_PARAM:
    case WW_ERR_DTYPE:
    case WW_ERR_MEMORY_KIND:
    case WW_ERR_OVERFLOW:
    case WW_ERR_MEASURE:
    case WW_ERR_TREE:
    case WW_ERR_NOT_DIFFERENTIABLE:
        type = PyExc_ValueError;
        break;
    case WW_ERR_MEMORY:
    case WW_ERR_DEVICE_MEMORY:
    case WW_ERR_TREE_SIZE:
        type = PyExc_MemoryError;
        break;
    default:
        break;
    }
    PyErr_SetString(type, ww_strerror(status));
    return NULL;
}

/* ---------------------------------------------------------------------------------- arguments */

/* Backend names are matched without regard to case ("CPU", "Cuda"), as the CLI's are. */
static int parse_backend(PyObject *obj, ww_backend *out)
{
    static const struct {
        const char *name;
        ww_backend backend;
    } names[] = {{"auto", WW_BACKEND_AUTO}, {"cpu", WW_BACKEND_CPU}, {"cuda", WW_BACKEND_CUDA}};
    const char *text = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (text != NULL) {
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            size_t i = 0;
            while (text[i] != '\0' && (text[i] | 0x20) == names[k].name[i]) /* ASCII letters only */
                i++;
            if (text[i] == '\0' && names[k].name[i] == '\0') {
                *out = names[k].backend;
                return 0;
            }
        }
    } else if (PyUnicode_Check(obj)) {
        PyErr_Clear(); /* not encodable (lone surrogates): reported below like any other name */
    }
    PyErr_Format(PyExc_ValueError, "backend must be 'auto', 'cpu' or 'cuda', not %R", obj);
    return -1;
}

#define MAX_THREADS 65536

/* An integer parameter in [low, high]: TypeError for bools (True is not 1 thread or degree 1) and
 * non-integers, ValueError naming the range for other values, huge ones included. */
static int parse_bounded_int(PyObject *obj, const char *name, const char *none_or, long low, long high,
                             long *out)
{
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be %san integer, not %R", name, none_or, obj);
        return -1;
    }
    int overflow = 0;
    PyObject *value = PyNumber_Index(obj);
    if (value == NULL)
        return -1;
    long v = PyLong_AsLongAndOverflow(value, &overflow);
    Py_DECREF(value);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow != 0 || v < low || v > high) {
        PyErr_Format(PyExc_ValueError, "%s must be %san integer >= %ld and at most %ld, not %R", name, none_or,
                     low, high, obj);
        return -1;
    }
    *out = v;
    return 0;
}

/* threads: None means every core (the library's 0), else 1..MAX_THREADS. */
static int parse_threads(PyObject *obj, int *out)
{
    if (obj == Py_None) {
        *out = 0;
        return 0;
    }
    long value;
    if (parse_bounded_int(obj, "threads", "None or ", 1, MAX_THREADS, &value) != 0)
        return -1;
    *out = (int)value;
    return 0;
}

/* A real number parameter; bools are refused (nu=True is a slip, not 1.0), as for window. */
static int parse_real(PyObject *obj, const char *name, const char *range, double *out)
{
    if (PyBool_Check(obj) || PyArray_IsScalar(obj, Bool)) {
        PyErr_Format(PyExc_TypeError, "%s must be a number %s, not %R", name, range, obj);
        return -1;
    }
    *out = PyFloat_AsDouble(obj);
    if (*out == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError))
            return -1;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a number %s, not %R", name, range, obj);
        return -1;
    }
    return 0;
}

/* The TWED parameters of a spec: nu and lmbda numbers (not bools), degree an integer in
 * [1, INT32_MAX] (the library checks the ranges of nu and lambda and reports WW_ERR_PARAM with its
 * own message). */
static int parse_twed_params(PyObject *nu, PyObject *lmbda, PyObject *degree, ww_twed_params *out)
{
    long d;
    if (parse_real(nu, "nu", ">= 0", &out->nu) != 0 || parse_real(lmbda, "lmbda", ">= 0", &out->lambda) != 0 ||
        parse_bounded_int(degree, "degree", "", 1, INT32_MAX, &d) != 0)
        return -1;
    out->degree = (int)d;
    return 0;
}

static PyObject *zero_long; /* the int 0, made at import */

/* The window of a spec: radius (None or an integer >= 0, in samples) or window (None or aeon's
 * fraction of the shorter series, 0 <= window <= 1), not both. */
static int parse_window(PyObject *radius, PyObject *window, ww_measure *m)
{
    if (radius != Py_None && window != Py_None) {
        PyErr_SetString(PyExc_ValueError, "give window (aeon's fraction of the shorter series) or radius "
                        "(samples), not both");
        return -1;
    }
    if (radius != Py_None) {
        if (PyBool_Check(radius) || !PyIndex_Check(radius)) {
            PyErr_Format(PyExc_TypeError, "radius must be None or an integer number of samples, not %R", radius);
            return -1;
        }
        PyObject *value = PyNumber_Index(radius);
        if (value == NULL)
            return -1;
        int negative = PyObject_RichCompareBool(value, zero_long, Py_LT);
        size_t r = negative ? 0 : PyLong_AsSize_t(value);
        Py_DECREF(value);
        if (negative != 0) {
            if (negative > 0)
                PyErr_Format(PyExc_ValueError, "radius must be >= 0, not %R", radius);
            return -1;
        }
        if (r == (size_t)-1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                return -1;
            PyErr_Clear();
            r = WW_NO_WINDOW; /* beyond size_t: wider than any series, i.e. no window */
        }
        ww_measure_set_window(m, r);
    }
    if (window != Py_None) {
        if (PyBool_Check(window)) {
            PyErr_Format(PyExc_TypeError, "window must be None or a number between 0 and 1, not %R", window);
            return -1;
        }
        double f = PyFloat_AsDouble(window);
        if (f == -1.0 && PyErr_Occurred())
            return -1;
        if (ww_measure_set_window_fraction(m, f) != WW_OK) {
            PyErr_Format(PyExc_ValueError, "window must be between 0 and 1 (aeon's fraction of the shorter "
                         "series), not %R", window);
            return -1;
        }
    }
    return 0;
}

/* A spec (name, nu, lmbda, degree, radius, window) -> a checked ww_measure. */
static int parse_measure(PyObject *spec, ww_measure *out)
{
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 6) {
        PyErr_SetString(PyExc_TypeError, "internal error: a measure spec is a tuple "
                        "(name, nu, lmbda, degree, radius, window)");
        return -1;
    }
    PyObject *name = PyTuple_GET_ITEM(spec, 0);
    PyObject *nu = PyTuple_GET_ITEM(spec, 1), *lmbda = PyTuple_GET_ITEM(spec, 2);
    PyObject *degree = PyTuple_GET_ITEM(spec, 3);
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "twed") == 0) {
        ww_twed_params p;
        if (parse_twed_params(nu, lmbda, degree, &p) != 0)
            return -1;
        *out = ww_measure_twed(p.nu, p.lambda, p.degree);
    } else if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "dtw") == 0) {
        if (nu != Py_None || lmbda != Py_None || degree != Py_None) {
            PyErr_SetString(PyExc_ValueError, "dtw takes no parameters (nu, lmbda and degree are TWED's)");
            return -1;
        }
        *out = ww_measure_dtw();
    } else if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "softdtw") == 0) {
        /* soft-DTW's spec: (name, gamma, divergence, None, radius, window) */
        double gamma;
        if (parse_real(nu, "gamma", "> 0", &gamma) != 0)
            return -1;
        /* a real bool: divergence="no" would be true */
        if (!PyBool_Check(lmbda) && !PyArray_IsScalar(lmbda, Bool)) {
            PyErr_Format(PyExc_TypeError, "divergence must be True or False, not %R", lmbda);
            return -1;
        }
        const int divergence = PyObject_IsTrue(lmbda);
        if (divergence < 0)
            return -1;
        *out = ww_measure_softdtw(gamma);
        ww_measure_set_divergence(out, divergence);
        if (ww_measure_check(out) == WW_ERR_PARAM) {
            PyErr_Format(PyExc_ValueError, "softdtw needs a finite gamma > 0, not %R", nu);
            return -1;
        }
    } else {
        PyErr_Format(PyExc_ValueError, "measure must be 'twed' or 'dtw' or 'softdtw', not %R", name);
        return -1;
    }
    if (parse_window(PyTuple_GET_ITEM(spec, 4), PyTuple_GET_ITEM(spec, 5), out) != 0)
        return -1;
    ww_status status = ww_measure_check(out);
    if (status != WW_OK) {
        raise_status(status);
        return -1;
    }
    return 0;
}

/* Whether a measure reads time stamps (TWED does, DTW does not: given to DTW they are an error,
 * never silently ignored). */
static int measure_uses_stamps(const ww_measure *m)
{
    return m->kind == WW_MEASURE_TWED;
}

static int reject_stamps(const ww_measure *m, const char *what)
{
    PyErr_Format(PyExc_ValueError, "%s: %s does not use time stamps; leave them out", what, ww_measure_name(m));
    return -1;
}

/* GPU data can only be read by the CUDA backend: "auto" then means CUDA, so that a build or a
 * machine without one reports that (WavewarpError) rather than a host/device mix-up. An explicit
 * "cpu" stays, and the library rejects the device memory (ValueError). */
static ww_backend backend_for_memory(ww_backend requested, int any_on_device)
{
    return requested == WW_BACKEND_AUTO && any_on_device ? WW_BACKEND_CUDA : requested;
}

/* ---------------------------------------------------------------------------------- contexts */

/* Idle contexts, keyed by the requested backend and thread count. A context serves one thread at
 * a time, and the GIL is released while it works, so each call takes one out of the pool and puts
 * it back afterwards: concurrent calls get separate contexts, repeated calls reuse warm ones. The
 * pool is only touched with the GIL held. */
#define POOL_CAPACITY 16
typedef struct pooled_ctx {
    ww_ctx *ctx;
    ww_backend backend;
    int threads;
} pooled_ctx;
static pooled_ctx idle_pool[POOL_CAPACITY];
static int idle_count;
static Py_ssize_t contexts_created; /* for tests: proof that repeated calls reuse contexts */

static ww_ctx *ctx_acquire(ww_backend backend, int threads)
{
    for (int i = idle_count - 1; i >= 0; i--) {
        if (idle_pool[i].backend == backend && idle_pool[i].threads == threads) {
            ww_ctx *ctx = idle_pool[i].ctx;
            idle_pool[i] = idle_pool[--idle_count];
            return ctx;
        }
    }
    ww_ctx_options opt = ww_ctx_options_default();
    opt.backend = backend;
    opt.num_threads = threads;
    ww_ctx *ctx = NULL;
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_ctx_create(&ctx, &opt);
    Py_END_ALLOW_THREADS
    if (status != WW_OK) {
        raise_status(status);
        return NULL;
    }
    contexts_created++;
    return ctx;
}

static void ctx_release(ww_ctx *ctx, ww_backend backend, int threads)
{
    if (idle_count < POOL_CAPACITY) {
        idle_pool[idle_count].ctx = ctx;
        idle_pool[idle_count].backend = backend;
        idle_pool[idle_count].threads = threads;
        idle_count++;
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    ww_ctx_destroy(ctx);
    Py_END_ALLOW_THREADS
}

/* Several GPUs: devices is None (the pooled context), "all", or a sequence of device ordinals
 * (repeats allowed). Fills `list` and returns its length, 0 for None, -1 with an exception set. */
#define MAX_DEVICES 64
static int parse_devices(PyObject *obj, int *list)
{
    if (obj == Py_None)
        return 0;
    if (PyUnicode_Check(obj)) {
        if (PyUnicode_CompareWithASCIIString(obj, "all") != 0) {
            PyErr_Format(PyExc_ValueError, "devices must be None, 'all' or a sequence of GPU ordinals, not %R", obj);
            return -1;
        }
        int count = ww_cuda_device_count();
        if (count <= 0) { /* the library's own reason: no CUDA in this build, or no GPU */
            ww_ctx_options o = ww_ctx_options_default();
            o.backend = WW_BACKEND_CUDA;
            ww_ctx *probe = NULL;
            ww_status st = ww_ctx_create(&probe, &o);
            if (st == WW_OK) {
                ww_ctx_destroy(probe);
                st = WW_ERR_NO_DEVICE;
            }
            raise_status(st);
            return -1;
        }
        if (count > MAX_DEVICES)
            count = MAX_DEVICES;
        for (int d = 0; d < count; d++)
            list[d] = d;
        return count;
    }
    PyObject *seq = PySequence_Fast(obj, "devices must be None, 'all' or a sequence of GPU ordinals");
    if (seq == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > MAX_DEVICES) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "devices must name between 1 and %d GPUs, not %zd", MAX_DEVICES, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        long v = PyBool_Check(item) ? -1 : PyLong_AsLong(item);
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        if (v < 0 || v > INT32_MAX) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "devices must be GPU ordinals (integers >= 0), not %R", item);
            return -1;
        }
        list[i] = (int)v;
    }
    Py_DECREF(seq);
    return (int)n;
}

/* A context of its own (not pooled) on the listed GPUs; NULL with an exception set. */
static ww_ctx *ctx_on_devices(int threads, const int *list, int count)
{
    ww_ctx_options opt = ww_ctx_options_default();
    opt.backend = WW_BACKEND_CUDA;
    opt.num_threads = threads;
    opt.devices = list;
    opt.device_count = count;
    ww_ctx *ctx = NULL;
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_ctx_create(&ctx, &opt);
    Py_END_ALLOW_THREADS
    if (status != WW_OK) {
        raise_status(status);
        return NULL;
    }
    contexts_created++;
    return ctx;
}

/* The context of a matrix call: pooled, or (devices given) its own, which `devices_done` destroys. */
static ww_ctx *ctx_for_call(ww_backend *backend, int threads, PyObject *devices_obj, int *list, int *count)
{
    if (devices_obj != Py_None && *backend == WW_BACKEND_CPU) {
        PyErr_SetString(PyExc_ValueError, "devices does not apply to backend 'cpu'");
        return NULL;
    }
    *count = parse_devices(devices_obj, list);
    if (*count < 0)
        return NULL;
    if (*count == 0)
        return ctx_acquire(*backend, threads);
    *backend = WW_BACKEND_CUDA;
    return ctx_on_devices(threads, list, *count);
}

static void ctx_done(ww_ctx *ctx, ww_backend backend, int threads, int device_count)
{
    if (device_count == 0) {
        ctx_release(ctx, backend, threads);
        return;
    }
    Py_BEGIN_ALLOW_THREADS
    ww_ctx_destroy(ctx);
    Py_END_ALLOW_THREADS
}

/* ---------------------------------------------------------------------------------- progress */

/* State of the progress callback that the library calls from the calling thread while the GIL is
 * released. At most every `interval` seconds it takes the GIL back to check for signals (Ctrl-C)
 * and to call the user's progress function; either can cancel the run, leaving the exception set
 * on this thread for the caller to raise. */
typedef struct poll_state {
    PyObject *progress; /* callable(done, total) or NULL */
    double interval;
    double next_poll;
} poll_state;

static double poll_interval_seconds = 0.1;

static double monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int poll_callback(uint64_t done, uint64_t total, void *user)
{
    poll_state *state = (poll_state *)user;
    int finished = total > 0 && done >= total;
    double now = monotonic_seconds();
    if (now < state->next_poll && !finished)
        return 0;
    state->next_poll = now + state->interval;
    int cancel = 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    if (PyErr_CheckSignals() < 0) {
        cancel = 1;
    } else if (state->progress != NULL) {
        PyObject *r = PyObject_CallFunction(state->progress, "KK", (unsigned long long)done,
                                            (unsigned long long)total);
        if (r == NULL)
            cancel = 1;
        else
            Py_DECREF(r);
    }
    PyGILState_Release(gil);
    return cancel;
}

static void poll_init(poll_state *state, PyObject *progress)
{
    state->progress = progress == Py_None ? NULL : progress;
    state->interval = poll_interval_seconds;
    state->next_poll = monotonic_seconds() + state->interval;
}

/* Options of a long call: progress and Ctrl-C through `poll` (set up here from the user's progress
 * argument), results in float32 when is_f32. */
static ww_pairwise_options poll_options(poll_state *poll, PyObject *progress, int is_f32)
{
    poll_init(poll, progress);
    ww_pairwise_options opt = ww_pairwise_options_default();
    opt.out_dtype = is_f32 ? WW_F32 : WW_F64;
    opt.progress = poll_callback;
    opt.progress_user = poll;
    return opt;
}

/* The two arrays of a kNN result, n x k: indices (intp) and distances (float64). */
static int knn_arrays(size_t n, size_t k, PyObject **indices, PyObject **distances)
{
    npy_intp dims[2] = {(npy_intp)n, (npy_intp)k};
    *indices = PyArray_SimpleNew(2, dims, NPY_INTP);
    *distances = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    if (*indices == NULL || *distances == NULL) {
        Py_CLEAR(*indices);
        Py_CLEAR(*distances);
        return -1;
    }
    return 0;
}

/* After a call that used poll_callback: a cancelled call has its exception already set. */
static PyObject *raise_after_poll(ww_status status)
{
    if (status == WW_ERR_CANCELLED && PyErr_Occurred())
        return NULL;
    return raise_status(status);
}

/* ---------------------------------------------------------------------------------- non-finite values */

/* Index of the first NaN or infinite element among n (host, or device memory copied in chunks),
 * or SIZE_MAX when none is found (or device memory cannot be read here); *value is that element.
 * Only called once the library has reported WW_ERR_NONFINITE, to say where. */
static size_t first_nonfinite(const void *data, int is_f32, ww_memory memory, size_t n, double *value)
{
    size_t item = is_f32 ? sizeof(float) : sizeof(double);
    if (data == NULL)
        return SIZE_MAX;
    if (memory == WW_HOST) {
        for (size_t i = 0; i < n; i++) {
            double v = is_f32 ? (double)((const float *)data)[i] : ((const double *)data)[i];
            if (!isfinite(v)) {
                *value = v;
                return i;
            }
        }
        return SIZE_MAX;
    }
#ifdef WW_PY_HAVE_CUDA
    enum { CHUNK = 1 << 17 };
    void *buffer = malloc(CHUNK * sizeof(double));
    if (buffer == NULL)
        return SIZE_MAX;
    size_t found = SIZE_MAX;
    for (size_t start = 0; start < n && found == SIZE_MAX; start += CHUNK) {
        size_t count = n - start < CHUNK ? n - start : CHUNK;
        if (cudaMemcpy(buffer, (const char *)data + start * item, count * item, cudaMemcpyDefault) != cudaSuccess)
            break;
        size_t at = first_nonfinite(buffer, is_f32, WW_HOST, count, value);
        if (at != SIZE_MAX)
            found = start + at;
    }
    free(buffer);
    return found;
#else
    (void)item;
    return SIZE_MAX;
#endif
}

static const char *nonfinite_word(double v) { return isnan(v) ? "NaN" : v > 0 ? "inf" : "-inf"; }

/* Raises ValueError for WW_ERR_NONFINITE naming the series and sample of the first bad value in
 * one of the (up to two) datasets, as the CLI names the line and column: the library's message,
 * then "X: series 3, sample 17 (0-based) is NaN". Only the library's message when it cannot be
 * found. Returns NULL. */
static PyObject *raise_nonfinite(const char *what_a, const ww_dataset *a, const char *what_b, const ww_dataset *b)
{
    const char *whats[2] = {what_a, what_b};
    const ww_dataset *sets[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const ww_dataset *d = sets[s];
        if (d == NULL || d->dim == 0)
            continue;
        size_t samples = d->offsets ? d->offsets[d->count] : d->count * d->length;
        double v = 0;
        size_t at = first_nonfinite(d->values, d->dtype == WW_F32, d->memory, samples * d->dim, &v);
        if (at == SIZE_MAX)
            continue;
        size_t sample = at / d->dim, component = at % d->dim, series = 0;
        if (d->offsets) {
            size_t lo = 0, hi = d->count; /* the last series starting at or before `sample` */
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (d->offsets[mid] <= sample)
                    lo = mid;
                else
                    hi = mid;
            }
            series = lo;
            sample -= d->offsets[lo];
        } else {
            series = sample / d->length;
            sample %= d->length;
        }
        if (d->dim > 1)
            PyErr_Format(PyExc_ValueError,
                         "%s: %s: series %zu, sample %zu, component %zu (0-based) is %s",
                         ww_strerror(WW_ERR_NONFINITE), whats[s], series, sample, component, nonfinite_word(v));
        else
            PyErr_Format(PyExc_ValueError, "%s: %s: series %zu, sample %zu (0-based) is %s",
                         ww_strerror(WW_ERR_NONFINITE), whats[s], series, sample, nonfinite_word(v));
        return NULL;
    }
    return raise_status(WW_ERR_NONFINITE);
}

/* The same for the two series of distance(): "a: sample 17 (0-based) is inf". */
static PyObject *raise_nonfinite_pair(const ww_series *a, const ww_series *b)
{
    const ww_series *pair[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const ww_series *x = pair[s];
        double v = 0;
        size_t at = first_nonfinite(x->values, x->dtype == WW_F32, x->memory, x->length * x->dim, &v);
        if (at == SIZE_MAX || x->dim == 0)
            continue;
        if (x->dim > 1)
            PyErr_Format(PyExc_ValueError, "%s: %s: sample %zu, component %zu (0-based) is %s",
                         ww_strerror(WW_ERR_NONFINITE), s == 0 ? "a" : "b", at / x->dim, at % x->dim,
                         nonfinite_word(v));
        else
            PyErr_Format(PyExc_ValueError, "%s: %s: sample %zu (0-based) is %s", ww_strerror(WW_ERR_NONFINITE),
                         s == 0 ? "a" : "b", at, nonfinite_word(v));
        return NULL;
    }
    return raise_status(WW_ERR_NONFINITE);
}

/* ---------------------------------------------------------------------------------- GPU arrays */

/* What we use of a __cuda_array_interface__ (version 2 or 3). */
typedef struct device_array {
    uintptr_t pointer;
    npy_intp shape[3];
    int ndim;
    int is_f32;
    int contiguous;
    uintptr_t stream; /* producer's stream to synchronise with; 0 = none given */
} device_array;

/* New reference to obj.__cuda_array_interface__, or NULL: with an exception set if looking it up
 * failed for another reason than its absence. */
static PyObject *cuda_interface_of(PyObject *obj)
{
    static PyObject *name = NULL;
    if (name == NULL && (name = PyUnicode_InternFromString("__cuda_array_interface__")) == NULL)
        return NULL;
    PyObject *iface = PyObject_GetAttr(obj, name);
    if (iface == NULL && PyErr_ExceptionMatches(PyExc_AttributeError))
        PyErr_Clear();
    return iface;
}

static int parse_cuda_interface(PyObject *iface, const char *what, device_array *out)
{
    memset(out, 0, sizeof *out);
    if (!PyDict_Check(iface)) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ is not a dict", what);
        return -1;
    }
    PyObject *typestr = PyDict_GetItemString(iface, "typestr");
    PyObject *shape = PyDict_GetItemString(iface, "shape");
    PyObject *data = PyDict_GetItemString(iface, "data");
    if (typestr == NULL || shape == NULL || data == NULL || !PyUnicode_Check(typestr) ||
        !PyTuple_Check(shape) || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1) {
        PyErr_Format(PyExc_ValueError, "%s: malformed __cuda_array_interface__", what);
        return -1;
    }
    if (PyUnicode_CompareWithASCIIString(typestr, "<f4") == 0) {
        out->is_f32 = 1;
    } else if (PyUnicode_CompareWithASCIIString(typestr, "<f8") != 0) {
        PyErr_Format(PyExc_ValueError, "%s: GPU arrays must be float32 or float64, not typestr %R",
                     what, typestr);
        return -1;
    }
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    if (ndim > 3) {
        PyErr_Format(PyExc_ValueError, "%s: arrays may have at most 3 dimensions, not %zd", what, ndim);
        return -1;
    }
    out->ndim = (int)ndim;
    for (Py_ssize_t i = 0; i < ndim; i++) {
        out->shape[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (out->shape[i] < 0) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%s: negative extent in GPU array shape", what);
            return -1;
        }
    }
    PyObject *ptr = PyTuple_GET_ITEM(data, 0);
    out->pointer = (uintptr_t)PyLong_AsVoidPtr(ptr);
    if (PyErr_Occurred())
        return -1;
    PyObject *mask = PyDict_GetItemString(iface, "mask");
    if (mask != NULL && mask != Py_None) {
        PyErr_Format(PyExc_ValueError, "%s: masked GPU arrays are not supported", what);
        return -1;
    }
    /* C-contiguous unless strides say otherwise (extents of 1 may carry any stride) */
    out->contiguous = 1;
    PyObject *strides = PyDict_GetItemString(iface, "strides");
    if (strides != NULL && strides != Py_None) {
        if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim) {
            PyErr_Format(PyExc_ValueError, "%s: malformed strides in __cuda_array_interface__", what);
            return -1;
        }
        Py_ssize_t expected = out->is_f32 ? 4 : 8;
        for (Py_ssize_t i = ndim - 1; i >= 0; i--) {
            Py_ssize_t stride = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
            if (stride == -1 && PyErr_Occurred())
                return -1;
            if (out->shape[i] > 1 && stride != expected)
                out->contiguous = 0;
            expected *= out->shape[i];
        }
    }
    PyObject *stream = PyDict_GetItemString(iface, "stream");
    if (stream != NULL && stream != Py_None) {
        out->stream = (uintptr_t)PyLong_AsVoidPtr(stream);
        if (PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* The interface's stream (v3) says where the producer may still be writing the data: wait for it,
 * as the protocol asks of consumers. 1 and 2 are the legacy and per-thread default streams, which
 * the CUDA runtime accepts as these very handle values. */
static int sync_producer_stream(uintptr_t stream)
{
    if (stream == 0)
        return 0;
#ifdef WW_PY_HAVE_CUDA
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaStreamSynchronize((cudaStream_t)stream);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        PyErr_Format(WavewarpError, "waiting for the GPU array's stream failed: %s",
                     cudaGetErrorString(err));
        return -1;
    }
#endif
    return 0;
}

/* A non-contiguous GPU array is copied by its own library (wavewarp._arrays.device_contiguous
 * knows CuPy, PyTorch and Numba); returns a new reference to the copy's interface. */
static PyObject *contiguous_device_interface(PyObject *obj, PyObject **copy_out)
{
    PyObject *arrays = PyImport_ImportModule("wavewarp._arrays");
    if (arrays == NULL)
        return NULL;
    PyObject *copy = PyObject_CallMethod(arrays, "device_contiguous", "O", obj);
    Py_DECREF(arrays);
    if (copy == NULL)
        return NULL;
    PyObject *iface = cuda_interface_of(copy);
    if (iface == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "the contiguous copy of a GPU array is not a GPU array");
        Py_DECREF(copy);
        return NULL;
    }
    *copy_out = copy;
    return iface;
}

/* ---------------------------------------------------------------------------------- one series */

/* An argument of distance(): a NumPy array (any dtype, not yet converted) or a GPU array. */
typedef struct operand {
    PyObject *host;   /* new reference to an ndarray, or NULL */
    PyObject *device; /* new reference to the GPU array object (maybe a contiguous copy), or NULL */
    device_array dev;
} operand;

static void operand_clear(operand *op)
{
    Py_CLEAR(op->host);
    Py_CLEAR(op->device);
}

static int operand_open(PyObject *obj, const char *what, operand *op)
{
    memset(op, 0, sizeof *op);
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        op->host = obj;
        return 0;
    }
    PyObject *iface = cuda_interface_of(obj);
    if (iface == NULL) {
        if (PyErr_Occurred())
            return -1;
        /* anything NumPy can read: lists, scalars, CPU tensors, buffers; dtype kept for now */
        op->host = PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (op->host == NULL) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: expected an array of numbers, got %.100s", what,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        return 0;
    }
    Py_INCREF(obj);
    op->device = obj;
    int rc = parse_cuda_interface(iface, what, &op->dev);
    Py_DECREF(iface);
    if (rc == 0 && !op->dev.contiguous) {
        PyObject *copy = NULL;
        iface = contiguous_device_interface(obj, &copy);
        if (iface == NULL)
            rc = -1;
        else {
            Py_SETREF(op->device, copy);
            rc = parse_cuda_interface(iface, what, &op->dev);
            Py_DECREF(iface);
        }
    }
    if (rc != 0)
        operand_clear(op);
    return rc;
}

static int operand_is_f32(const operand *op)
{
    if (op->device)
        return op->dev.is_f32;
    return PyArray_TYPE((PyArrayObject *)op->host) == NPY_FLOAT32;
}

/* Checks the operand's rank (1..max_ndim: 2 for values, 1 for stamps) and fills values, length
 * and dim; host data is converted to `want_f32`'s dtype, C-contiguous (a copy only when the array
 * is not already so). GPU data must already have that dtype. */
static int operand_finish(operand *op, const char *what, int want_f32, int max_ndim,
                          const void **values, npy_intp *length, npy_intp *dim)
{
    const npy_intp *shape;
    int ndim;
    if (op->device) {
        if (op->dev.is_f32 != want_f32) {
            PyErr_Format(PyExc_ValueError,
                         "%s: GPU arrays must all be float32 or all float64 (wavewarp does not "
                         "cast on the GPU; use .astype() first)", what);
            return -1;
        }
        if (sync_producer_stream(op->dev.stream) != 0)
            return -1;
        shape = op->dev.shape;
        ndim = op->dev.ndim;
        *values = (const void *)op->dev.pointer;
    } else {
        PyObject *conv = PyArray_FromAny(op->host, PyArray_DescrFromType(want_f32 ? NPY_FLOAT32 : NPY_FLOAT64),
                                         0, 0, NPY_ARRAY_IN_ARRAY, NULL);
        if (conv == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError))
                return -1; /* e.g. MemoryError: keep it */
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: cannot convert an array of dtype %R to %s", what,
                         (PyObject *)PyArray_DESCR((PyArrayObject *)op->host),
                         want_f32 ? "float32" : "float64");
            return -1;
        }
        Py_SETREF(op->host, conv);
        PyArrayObject *arr = (PyArrayObject *)conv;
        shape = PyArray_SHAPE(arr);
        ndim = PyArray_NDIM(arr);
        *values = PyArray_DATA(arr);
    }
    if (ndim < 1 || ndim > max_ndim) {
        if (max_ndim == 1)
            PyErr_Format(PyExc_ValueError, "%s: time stamps must be a 1-D array, got %d dimensions",
                         what, ndim);
        else
            PyErr_Format(PyExc_ValueError,
                         "%s: a series must be 1-D (length,) or 2-D (length, dim), got %d dimensions"
                         "%s", what, ndim,
                         ndim == 3 ? " (use pairwise or twed_pairwise for batches of series)" : "");
        return -1;
    }
    *length = shape[0];
    *dim = ndim == 2 ? shape[1] : 1;
    return 0;
}

/* Everything distance() needs, converted; owns references to the arrays the descriptors point into. */
typedef struct pair_input {
    operand a, b, ta, tb;
    ww_series sa, sb;
    int is_f32;
} pair_input;

static void pair_clear(pair_input *p)
{
    operand_clear(&p->a);
    operand_clear(&p->b);
    operand_clear(&p->ta);
    operand_clear(&p->tb);
}

static int series_fill(operand *values, operand *stamps, const char *vname, const char *sname,
                       int is_f32, ww_series *s)
{
    npy_intp length, dim, stamp_length, unused;
    const void *v = NULL, *t = NULL;
    if (operand_finish(values, vname, is_f32, 2, &v, &length, &dim) != 0)
        return -1;
    if (stamps->host || stamps->device) {
        if ((stamps->device != NULL) != (values->device != NULL)) {
            PyErr_Format(PyExc_ValueError, "%s and %s must both be GPU arrays or both host arrays",
                         vname, sname);
            return -1;
        }
        if (operand_finish(stamps, sname, is_f32, 1, &t, &stamp_length, &unused) != 0)
            return -1;
        if (stamp_length != length) {
            PyErr_Format(PyExc_ValueError, "%s has %zd time stamps but %s has %zd samples", sname,
                         (Py_ssize_t)stamp_length, vname, (Py_ssize_t)length);
            return -1;
        }
    }
    s->values = v;
    s->stamps = t;
    s->length = (size_t)length;
    s->dim = (size_t)dim;
    s->dtype = is_f32 ? WW_F32 : WW_F64;
    s->memory = values->device ? WW_DEVICE : WW_HOST;
    return 0;
}

/* Two series of one sample of many dimensions are most likely aeon's (n_channels, n_timepoints)
 * read as our (length, dim): wavewarp._arrays decides from dim (few channels are taken as meant),
 * words the LayoutWarning and points it at the caller's line. An error when the warning filter
 * turns it into one. */
static int warn_single_sample_pair(const ww_series *a, const ww_series *b)
{
    if (a->length != 1 || b->length != 1 || a->dim < 2)
        return 0;
    PyObject *arrays = PyImport_ImportModule("wavewarp._arrays");
    if (arrays == NULL)
        return -1;
    PyObject *result = PyObject_CallMethod(arrays, "warn_single_sample_pair", "n", (Py_ssize_t)a->dim);
    Py_DECREF(arrays);
    if (result == NULL)
        return -1;
    Py_DECREF(result);
    return 0;
}

static int pair_open(PyObject *a, PyObject *b, PyObject *ta, PyObject *tb, pair_input *p)
{
    memset(p, 0, sizeof *p);
    if (operand_open(a, "a", &p->a) != 0 || operand_open(b, "b", &p->b) != 0)
        goto fail;
    if (ta != Py_None && operand_open(ta, "ta", &p->ta) != 0)
        goto fail;
    if (tb != Py_None && operand_open(tb, "tb", &p->tb) != 0)
        goto fail;
    /* results follow the input precision: float32 only when both series are float32 */
    p->is_f32 = operand_is_f32(&p->a) && operand_is_f32(&p->b);
    if (series_fill(&p->a, &p->ta, "a", "ta", p->is_f32, &p->sa) != 0 ||
        series_fill(&p->b, &p->tb, "b", "tb", p->is_f32, &p->sb) != 0)
        goto fail;
    if (p->sa.dim != p->sb.dim) {
        PyErr_Format(PyExc_ValueError, "a and b must have the same dim, got %zu and %zu", p->sa.dim,
                     p->sb.dim);
        goto fail;
    }
    if (warn_single_sample_pair(&p->sa, &p->sb) != 0)
        goto fail;
    return 0;
fail:
    pair_clear(p);
    return -1;
}

static PyObject *float_result(double value, int is_f32)
{
    if (!is_f32)
        return PyFloat_FromDouble(value);
    PyObject *scalar = PyArrayScalar_New(Float);
    if (scalar != NULL)
        PyArrayScalar_ASSIGN(scalar, Float, (npy_float)value);
    return scalar;
}

/* distance(a, b, ta, tb, spec, backend, threads) -> float (numpy.float32 for float32) */
static PyObject *py_distance(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.distance takes 7 positional arguments");
        return NULL;
    }
    ww_measure measure;
    ww_backend backend;
    int threads;
    if (parse_measure(args[4], &measure) != 0 || parse_backend(args[5], &backend) != 0 ||
        parse_threads(args[6], &threads) != 0)
        return NULL;
    if (!measure_uses_stamps(&measure) && (args[2] != Py_None || args[3] != Py_None))
        return (void)reject_stamps(&measure, args[2] != Py_None ? "ta" : "tb"), NULL;
    pair_input pair;
    if (pair_open(args[0], args[1], args[2], args[3], &pair) != 0)
        return NULL;
    backend = backend_for_memory(backend, pair.sa.memory == WW_DEVICE || pair.sb.memory == WW_DEVICE);
    ww_ctx *ctx = ctx_acquire(backend, threads);
    if (ctx == NULL) {
        pair_clear(&pair);
        return NULL;
    }
    double distance = 0.0;
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_distance(ctx, &measure, &pair.sa, &pair.sb, &distance);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    int is_f32 = pair.is_f32;
    if (status == WW_ERR_NONFINITE) {
        raise_nonfinite_pair(&pair.sa, &pair.sb);
        pair_clear(&pair);
        return NULL;
    }
    pair_clear(&pair);
    if (status != WW_OK)
        return raise_status(status);
    return float_result(distance, is_f32);
}

/* Seconds per bare ww_distance call on a, b (host arrays), timed in C around the library call:
 * what the benchmark subtracts to get the binding's own overhead. */
static PyObject *time_c_distance(PyObject *a, PyObject *b, const ww_measure *measure, PyObject *backend_obj,
                                 PyObject *threads_obj, PyObject *repetitions_obj)
{
    ww_backend backend;
    int threads;
    if (parse_backend(backend_obj, &backend) != 0 || parse_threads(threads_obj, &threads) != 0)
        return NULL;
    long repetitions = PyLong_AsLong(repetitions_obj);
    if (repetitions == -1 && PyErr_Occurred())
        return NULL;
    if (repetitions < 1) {
        PyErr_SetString(PyExc_ValueError, "repetitions must be >= 1");
        return NULL;
    }
    pair_input pair;
    if (pair_open(a, b, Py_None, Py_None, &pair) != 0)
        return NULL;
    ww_ctx *ctx = ctx_acquire(backend, threads);
    if (ctx == NULL) {
        pair_clear(&pair);
        return NULL;
    }
    double distance = 0.0, elapsed = 0.0;
    ww_status status = WW_OK;
    Py_BEGIN_ALLOW_THREADS
    double start = monotonic_seconds();
    for (long r = 0; r < repetitions && status == WW_OK; r++)
        status = ww_distance(ctx, measure, &pair.sa, &pair.sb, &distance);
    elapsed = monotonic_seconds() - start;
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    pair_clear(&pair);
    if (status != WW_OK)
        return raise_status(status);
    return PyFloat_FromDouble(elapsed / (double)repetitions);
}

/* _time_c_distance(a, b, spec, backend, threads, repetitions) -> seconds per call */
static PyObject *py_time_c_distance(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp._time_c_distance takes 6 positional arguments");
        return NULL;
    }
    ww_measure measure;
    if (parse_measure(args[2], &measure) != 0)
        return NULL;
    return time_c_distance(args[0], args[1], &measure, args[3], args[4], args[5]);
}

/* _time_c_twed(a, b, nu, lmbda, degree, backend, threads, repetitions): the TWED form that
 * bench/bench_python.py calls. */
static PyObject *py_time_c_twed(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp._time_c_twed takes 8 positional arguments");
        return NULL;
    }
    ww_twed_params p;
    if (parse_twed_params(args[2], args[3], args[4], &p) != 0)
        return NULL;
    const ww_measure measure = ww_measure_twed(p.nu, p.lambda, p.degree);
    return time_c_distance(args[0], args[1], &measure, args[5], args[6], args[7]);
}

/* measure_check(spec) -> None: raises what a computing call would raise for this measure. */
static PyObject *py_measure_check(PyObject *self, PyObject *spec)
{
    (void)self;
    ww_measure measure;
    if (parse_measure(spec, &measure) != 0)
        return NULL;
    Py_RETURN_NONE;
}

/* measure_radius(spec, n, m) -> the radius used for a pair of lengths n and m, None for none */
static PyObject *py_measure_radius(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.measure_radius takes 3 positional arguments");
        return NULL;
    }
    ww_measure measure;
    if (parse_measure(args[0], &measure) != 0)
        return NULL;
    size_t n = PyLong_AsSize_t(args[1]), m = PyLong_AsSize_t(args[2]);
    if ((n == (size_t)-1 || m == (size_t)-1) && PyErr_Occurred())
        return NULL;
    size_t r = ww_measure_radius(&measure, n, m);
    if (r == WW_NO_WINDOW)
        Py_RETURN_NONE;
    return PyLong_FromSize_t(r);
}

/* ---------------------------------------------------------------------------------- collections */

typedef struct dataset_input {
    ww_dataset ds;
    PyObject *values, *stamps, *offsets; /* borrowed from the pack tuple */
} dataset_input;

/* Number of elements the dataset's `values` must hold, or -1 with an exception. */
static int dataset_sizes(const ww_dataset *ds, const char *what, size_t *samples)
{
    size_t n;
    if (ds->offsets)
        n = ds->offsets[ds->count];
    else if (ds->length != 0 && ds->count > SIZE_MAX / ds->length) {
        PyErr_Format(PyExc_ValueError, "%s: too many samples", what);
        return -1;
    } else
        n = ds->count * ds->length;
    *samples = n;
    return 0;
}

/* Checks that `obj` (host ndarray or GPU array of the pack) is C-contiguous, of the pack's dtype,
 * with at least `elements` elements; returns its data pointer and memory kind. */
static int pack_array(PyObject *obj, const char *what, int is_f32, size_t elements, const void **data,
                      ww_memory *memory)
{
    if (PyArray_Check(obj)) {
        PyArrayObject *arr = (PyArrayObject *)obj;
        if (PyArray_TYPE(arr) != (is_f32 ? NPY_FLOAT32 : NPY_FLOAT64) ||
            !PyArray_ISCARRAY_RO(arr) || (size_t)PyArray_SIZE(arr) < elements) {
            PyErr_Format(PyExc_ValueError, "%s: internal error: badly packed array", what);
            return -1;
        }
        *data = PyArray_DATA(arr);
        *memory = WW_HOST;
        return 0;
    }
    PyObject *iface = cuda_interface_of(obj);
    if (iface == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s: internal error: packed values are neither a NumPy "
                         "nor a GPU array", what);
        return -1;
    }
    device_array dev;
    int rc = parse_cuda_interface(iface, what, &dev);
    Py_DECREF(iface);
    if (rc != 0)
        return -1;
    size_t size = 1;
    for (int i = 0; i < dev.ndim; i++)
        size *= (size_t)dev.shape[i];
    if (dev.is_f32 != is_f32 || !dev.contiguous || size < elements) {
        PyErr_Format(PyExc_ValueError, "%s: internal error: badly packed GPU array", what);
        return -1;
    }
    if (sync_producer_stream(dev.stream) != 0)
        return -1;
    *data = (const void *)dev.pointer;
    *memory = WW_DEVICE;
    return 0;
}

static int dataset_from_pack(PyObject *pack, const char *what, dataset_input *out)
{
    memset(out, 0, sizeof *out);
    Py_ssize_t count, length, dim;
    int is_f32;
    if (!PyTuple_Check(pack) ||
        !PyArg_ParseTuple(pack, "OOOnnnp", &out->values, &out->stamps, &out->offsets, &count, &length,
                          &dim, &is_f32)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: internal error: not a pack", what);
        return -1;
    }
    if (count < 0 || length < 0 || dim < 0) {
        PyErr_Format(PyExc_ValueError, "%s: internal error: negative size in pack", what);
        return -1;
    }
    ww_dataset *ds = &out->ds;
    ds->count = (size_t)count;
    ds->length = (size_t)length;
    ds->dim = (size_t)dim;
    ds->dtype = is_f32 ? WW_F32 : WW_F64;
    if (out->offsets != Py_None) {
        PyArrayObject *off = (PyArrayObject *)out->offsets;
        if (!PyArray_Check(out->offsets) || PyArray_TYPE(off) != NPY_UINTP || !PyArray_ISCARRAY_RO(off) ||
            PyArray_SIZE(off) != count + 1) {
            PyErr_Format(PyExc_ValueError, "%s: internal error: badly packed offsets", what);
            return -1;
        }
        ds->offsets = (const size_t *)PyArray_DATA(off);
    }
    size_t samples;
    if (dataset_sizes(ds, what, &samples) != 0)
        return -1;
    if (dim != 0 && samples > SIZE_MAX / (size_t)dim) {
        PyErr_Format(PyExc_ValueError, "%s: too many samples", what);
        return -1;
    }
    if (samples == 0) { /* empty series or no series: not read, and the library says which */
        static const double no_values[1];
        ds->values = no_values;
    }
    else if (pack_array(out->values, what, is_f32, samples * (size_t)dim, &ds->values, &ds->memory) != 0)
        return -1;
    if (out->stamps != Py_None && samples > 0) {
        ww_memory stamp_memory;
        if (pack_array(out->stamps, what, is_f32, samples, &ds->stamps, &stamp_memory) != 0)
            return -1;
        if (stamp_memory != ds->memory) {
            PyErr_Format(PyExc_ValueError,
                         "%s: values and time stamps must both be GPU arrays or both host arrays", what);
            return -1;
        }
    }
    return 0;
}

/* dataset_check(pack, what) -> None: the library's checks of a collection (shapes, empty series,
 * NaN or infinite values, named as the computing calls name them), without computing anything:
 * what the estimator's fit runs so that bad training data is reported there, not at predict. GPU
 * data is left to the calls, which check it on the device. */
static PyObject *py_dataset_check(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.dataset_check takes a pack and its argument's name");
        return NULL;
    }
    const char *what = PyUnicode_AsUTF8(args[1]);
    dataset_input d;
    if (what == NULL || dataset_from_pack(args[0], what, &d) != 0)
        return NULL;
    if (d.ds.memory != WW_HOST)
        Py_RETURN_NONE;
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_dataset_check(&d.ds);
    Py_END_ALLOW_THREADS
    if (status == WW_ERR_NONFINITE)
        return raise_nonfinite(what, &d.ds, NULL, NULL);
    if (status != WW_OK)
        return raise_status(status);
    Py_RETURN_NONE;
}

/* A pack with time stamps for a measure that does not read them is an error (stamps_what names
 * the user's argument). */
static int check_pack_stamps(const ww_measure *m, const dataset_input *d, const char *stamps_what)
{
    if (d->stamps != NULL && d->stamps != Py_None && !measure_uses_stamps(m))
        return reject_stamps(m, stamps_what);
    return 0;
}

/* pairwise(xpack, ypack or None, spec, backend, threads, progress, devices) -> ndarray */
static PyObject *py_pairwise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.pairwise takes 7 positional arguments");
        return NULL;
    }
    ww_measure measure;
    ww_backend backend;
    int threads;
    dataset_input x, y;
    int self_matrix = args[1] == Py_None;
    if (parse_measure(args[2], &measure) != 0 || parse_backend(args[3], &backend) != 0 ||
        parse_threads(args[4], &threads) != 0 || dataset_from_pack(args[0], "X", &x) != 0 ||
        (!self_matrix && dataset_from_pack(args[1], "Y", &y) != 0) ||
        check_pack_stamps(&measure, &x, "tX") != 0 || (!self_matrix && check_pack_stamps(&measure, &y, "tY") != 0))
        return NULL;
    backend = backend_for_memory(backend, x.ds.memory == WW_DEVICE || (!self_matrix && y.ds.memory == WW_DEVICE));
    int is_f32 = x.ds.dtype == WW_F32;
    npy_intp dims[2] = {(npy_intp)x.ds.count, (npy_intp)(self_matrix ? x.ds.count : y.ds.count)};
    if (dims[0] == 0 || dims[1] == 0)
        return raise_status(WW_ERR_EMPTY);
    PyObject *out = PyArray_SimpleNew(2, dims, is_f32 ? NPY_FLOAT32 : NPY_FLOAT64);
    if (out == NULL)
        return NULL;
    int device_list[MAX_DEVICES], device_count;
    ww_ctx *ctx = ctx_for_call(&backend, threads, args[6], device_list, &device_count);
    if (ctx == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[5], is_f32);
    void *dst = PyArray_DATA((PyArrayObject *)out);
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_pairwise(ctx, &measure, &x.ds, self_matrix ? NULL : &y.ds, dst, &opt);
    Py_END_ALLOW_THREADS
    ctx_done(ctx, backend, threads, device_count);
    if (status != WW_OK) {
        Py_DECREF(out);
        if (status == WW_ERR_NONFINITE)
            return raise_nonfinite("X", &x.ds, "Y", self_matrix ? NULL : &y.ds);
        return raise_after_poll(status);
    }
    return out;
}

/* knn(qpack, xpack, k, spec, backend, threads, progress, devices) -> (indices, distances) */
static PyObject *py_knn(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.knn takes 8 positional arguments");
        return NULL;
    }
    ww_measure measure;
    ww_backend backend;
    int threads;
    dataset_input q, x;
    Py_ssize_t k = PyLong_AsSsize_t(args[2]);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (parse_measure(args[3], &measure) != 0 || parse_backend(args[4], &backend) != 0 ||
        parse_threads(args[5], &threads) != 0 || dataset_from_pack(args[0], "queries", &q) != 0 ||
        dataset_from_pack(args[1], "X", &x) != 0 || check_pack_stamps(&measure, &q, "tqueries") != 0 ||
        check_pack_stamps(&measure, &x, "tX") != 0)
        return NULL;
    if (q.ds.count == 0 || x.ds.count == 0)
        return raise_status(WW_ERR_EMPTY);
    backend = backend_for_memory(backend, q.ds.memory == WW_DEVICE || x.ds.memory == WW_DEVICE);
    if (k < 1 || (size_t)k > x.ds.count) {
        PyErr_Format(PyExc_ValueError, "k must be between 1 and the number of series in X (%zu), not %zd",
                     x.ds.count, k);
        return NULL;
    }
    PyObject *indices, *distances;
    if (knn_arrays(q.ds.count, (size_t)k, &indices, &distances) != 0)
        return NULL;
    int device_list[MAX_DEVICES], device_count;
    ww_ctx *ctx = ctx_for_call(&backend, threads, args[7], device_list, &device_count);
    if (ctx == NULL) {
        Py_DECREF(indices);
        Py_DECREF(distances);
        return NULL;
    }
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[6], 0);
    size_t *idx = (size_t *)PyArray_DATA((PyArrayObject *)indices);
    double *dist = (double *)PyArray_DATA((PyArrayObject *)distances);
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_knn(ctx, &measure, &q.ds, &x.ds, (size_t)k, idx, dist, &opt);
    Py_END_ALLOW_THREADS
    ctx_done(ctx, backend, threads, device_count);
    if (status != WW_OK) {
        Py_DECREF(indices);
        Py_DECREF(distances);
        if (status == WW_ERR_NONFINITE)
            return raise_nonfinite("queries", &q.ds, "X", &x.ds);
        return raise_after_poll(status);
    }
    return Py_BuildValue("(NN)", indices, distances);
}

/* ---------------------------------------------------------------------------------- indexes */

/* _wavewarp.Index: a ww_index together with the context that made it (wavewarp.Index wraps
 * it). An index is used with its own context only, so the context is taken out of the pool for the
 * index's lifetime and handed back only after ww_index_destroy: the context always outlives the
 * index, whatever order Python frees things in. A context serves one thread at a time, and the GIL
 * is released while it works, so `lock` serialises the calls on one index; a thread waits for it
 * with the GIL released. busy/owner (read and written with the GIL held) tell which thread is
 * computing, so that a call from that thread's own progress callback raises instead of
 * deadlocking. No Python references to other objects are held but `description`, a str: no GC. */
typedef struct IndexObject {
    PyObject_HEAD
    ww_ctx *ctx;     /* NULL once closed */
    ww_index *index; /* NULL once closed */
    ww_backend pool_backend; /* the pool key the context was taken with */
    int pool_threads;
    PyThread_type_lock lock;
    int busy;
    unsigned long owner;
    size_t count, dim;
    int is_f32;
    int uses_stamps;       /* the measure reads time stamps (queries with stamps are an error else) */
    ww_backend backend;    /* the backend in use (never AUTO) */
    PyObject *description; /* ww_ctx_describe() of the context, a str */
} IndexObject;

static PyTypeObject IndexType;

/* Destroys the index, then hands its context back to the pool. */
static void index_destroy(IndexObject *self, int allow_threads)
{
    ww_index *index = self->index;
    ww_ctx *ctx = self->ctx;
    self->index = NULL;
    self->ctx = NULL;
    if (index != NULL) {
        if (allow_threads) {
            Py_BEGIN_ALLOW_THREADS
            ww_index_destroy(index);
            Py_END_ALLOW_THREADS
        } else {
            ww_index_destroy(index);
        }
    }
    if (ctx != NULL)
        ctx_release(ctx, self->pool_backend, self->pool_threads);
}

static void index_dealloc(PyObject *obj)
{
    IndexObject *self = (IndexObject *)obj;
    /* nothing can be computing: a running method holds a reference to the object */
    index_destroy(self, 0);
    if (self->lock != NULL)
        PyThread_free_lock(self->lock);
    Py_CLEAR(self->description);
    Py_TYPE(obj)->tp_free(obj);
}

static PyObject *raise_closed(void)
{
    PyErr_SetString(PyExc_ValueError, "operation on a closed index");
    return NULL;
}

static int index_reentered(IndexObject *self, const char *what)
{
    if (self->busy && self->owner == PyThread_get_thread_ident()) {
        PyErr_Format(PyExc_RuntimeError, "an index cannot be %s from the progress callback of its "
                     "own running call", what);
        return 1;
    }
    return 0;
}

/* Takes the index's lock, waiting with the GIL released; Ctrl-C (main thread) stops the wait. */
static int index_lock(IndexObject *self)
{
    if (PyThread_acquire_lock(self->lock, NOWAIT_LOCK))
        return 0;
    for (;;) {
        PyLockStatus got;
        Py_BEGIN_ALLOW_THREADS
        got = PyThread_acquire_lock_timed(self->lock, 50000 /* microseconds */, 0);
        Py_END_ALLOW_THREADS
        if (got == PY_LOCK_ACQUIRED)
            return 0;
        if (PyErr_CheckSignals() < 0)
            return -1;
    }
}

/* Before a computation: the index open, not busy in this thread, its lock taken and marked busy. */
static int index_enter(IndexObject *self)
{
    if (index_reentered(self, "used"))
        return -1;
    if (self->index == NULL) {
        raise_closed();
        return -1;
    }
    if (index_lock(self) != 0)
        return -1;
    if (self->index == NULL) { /* closed by another thread while we waited */
        PyThread_release_lock(self->lock);
        raise_closed();
        return -1;
    }
    self->busy = 1;
    self->owner = PyThread_get_thread_ident();
    return 0;
}

static void index_leave(IndexObject *self)
{
    self->busy = 0;
    self->owner = 0;
    PyThread_release_lock(self->lock);
}

/* index_create(xpack, spec, backend, threads) -> Index */
static PyObject *py_index_create(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.index_create takes 4 positional arguments");
        return NULL;
    }
    ww_measure measure;
    ww_backend backend;
    int threads;
    dataset_input x;
    if (parse_measure(args[1], &measure) != 0 || parse_backend(args[2], &backend) != 0 ||
        parse_threads(args[3], &threads) != 0 || dataset_from_pack(args[0], "X", &x) != 0 ||
        check_pack_stamps(&measure, &x, "tX") != 0)
        return NULL;
    if (x.ds.count == 0)
        return raise_status(WW_ERR_EMPTY);
    backend = backend_for_memory(backend, x.ds.memory == WW_DEVICE);
    IndexObject *self = PyObject_New(IndexObject, &IndexType);
    if (self == NULL)
        return NULL;
    self->ctx = NULL;
    self->index = NULL;
    self->pool_backend = backend;
    self->pool_threads = threads;
    self->busy = 0;
    self->owner = 0;
    self->count = x.ds.count;
    self->dim = x.ds.dim;
    self->is_f32 = x.ds.dtype == WW_F32;
    self->uses_stamps = measure_uses_stamps(&measure);
    self->description = NULL;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    if ((self->ctx = ctx_acquire(backend, threads)) == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->backend = ww_ctx_backend(self->ctx);
    if ((self->description = PyUnicode_FromString(ww_ctx_describe(self->ctx))) == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    ww_index *index = NULL;
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_index_create(self->ctx, &x.ds, &measure, &index);
    Py_END_ALLOW_THREADS
    if (status != WW_OK) {
        Py_DECREF(self); /* hands the context back */
        if (status == WW_ERR_NONFINITE)
            return raise_nonfinite("X", &x.ds, NULL, NULL);
        return raise_status(status);
    }
    self->index = index;
    return (PyObject *)self;
}

/* The queries of a pack, checked against the index (the wrapper checks first, with the user's
 * names; these keep a wrong pack from reaching the library). */
static int index_queries(IndexObject *self, PyObject *pack, dataset_input *q)
{
    if (dataset_from_pack(pack, "queries", q) != 0)
        return -1;
    if (!self->uses_stamps && q->stamps != Py_None) {
        PyErr_SetString(PyExc_ValueError, "tqueries: the index's measure does not use time stamps; leave them out");
        return -1;
    }
    if ((q->ds.dtype == WW_F32) != self->is_f32) {
        PyErr_Format(PyExc_ValueError, "queries are %s but the index holds %s series",
                     q->ds.dtype == WW_F32 ? "float32" : "float64", self->is_f32 ? "float32" : "float64");
        return -1;
    }
    if (q->ds.dim != self->dim) {
        PyErr_Format(PyExc_ValueError, "queries have dim %zu but the index has dim %zu", q->ds.dim, self->dim);
        return -1;
    }
    if (q->ds.count == 0) {
        raise_status(WW_ERR_EMPTY);
        return -1;
    }
    return 0;
}

/* Index.pairwise(qpack, progress) -> ndarray (n_queries, count) */
static PyObject *index_pairwise(PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
    IndexObject *self = (IndexObject *)obj;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "Index.pairwise takes 2 positional arguments");
        return NULL;
    }
    if (index_reentered(self, "used"))
        return NULL;
    if (self->index == NULL)
        return raise_closed();
    dataset_input q;
    if (index_queries(self, args[0], &q) != 0)
        return NULL;
    npy_intp dims[2] = {(npy_intp)q.ds.count, (npy_intp)self->count};
    PyObject *out = PyArray_SimpleNew(2, dims, self->is_f32 ? NPY_FLOAT32 : NPY_FLOAT64);
    if (out == NULL)
        return NULL;
    if (index_enter(self) != 0) {
        Py_DECREF(out);
        return NULL;
    }
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[1], self->is_f32);
    void *dst = PyArray_DATA((PyArrayObject *)out);
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_index_pairwise(self->ctx, self->index, &q.ds, dst, &opt);
    Py_END_ALLOW_THREADS
    index_leave(self);
    if (status != WW_OK) {
        Py_DECREF(out);
        if (status == WW_ERR_NONFINITE)
            return raise_nonfinite("queries", &q.ds, NULL, NULL);
        return raise_after_poll(status);
    }
    return out;
}

/* Index.knn(qpack, k, progress) -> (indices, distances as float64) */
static PyObject *index_knn(PyObject *obj, PyObject *const *args, Py_ssize_t nargs)
{
    IndexObject *self = (IndexObject *)obj;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "Index.knn takes 3 positional arguments");
        return NULL;
    }
    if (index_reentered(self, "used"))
        return NULL;
    if (self->index == NULL)
        return raise_closed();
    Py_ssize_t k = PyLong_AsSsize_t(args[1]);
    if (k == -1 && PyErr_Occurred())
        return NULL;
    if (k < 1 || (size_t)k > self->count) {
        PyErr_Format(PyExc_ValueError, "k must be between 1 and the number of series in the index (%zu), "
                     "not %zd", self->count, k);
        return NULL;
    }
    dataset_input q;
    if (index_queries(self, args[0], &q) != 0)
        return NULL;
    PyObject *indices, *distances;
    if (knn_arrays(q.ds.count, (size_t)k, &indices, &distances) != 0)
        return NULL;
    if (index_enter(self) != 0) {
        Py_DECREF(indices);
        Py_DECREF(distances);
        return NULL;
    }
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[2], 0);
    size_t *idx = (size_t *)PyArray_DATA((PyArrayObject *)indices);
    double *dist = (double *)PyArray_DATA((PyArrayObject *)distances);
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_index_knn(self->ctx, self->index, &q.ds, (size_t)k, idx, dist, &opt);
    Py_END_ALLOW_THREADS
    index_leave(self);
    if (status != WW_OK) {
        Py_DECREF(indices);
        Py_DECREF(distances);
        if (status == WW_ERR_NONFINITE)
            return raise_nonfinite("queries", &q.ds, NULL, NULL);
        return raise_after_poll(status);
    }
    return Py_BuildValue("(NN)", indices, distances);
}

/* Index.close(): frees the index (waiting for running calls of other threads); idempotent. */
static PyObject *index_close(PyObject *obj, PyObject *unused)
{
    (void)unused;
    IndexObject *self = (IndexObject *)obj;
    if (index_reentered(self, "closed"))
        return NULL;
    if (self->index == NULL)
        Py_RETURN_NONE;
    if (index_lock(self) != 0)
        return NULL;
    index_destroy(self, 1);
    PyThread_release_lock(self->lock);
    Py_RETURN_NONE;
}

static PyObject *index_get_count(PyObject *obj, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(((IndexObject *)obj)->count);
}

static PyObject *index_get_dim(PyObject *obj, void *closure)
{
    (void)closure;
    return PyLong_FromSize_t(((IndexObject *)obj)->dim);
}

static PyObject *index_get_is_f32(PyObject *obj, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((IndexObject *)obj)->is_f32);
}

static PyObject *index_get_closed(PyObject *obj, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((IndexObject *)obj)->index == NULL);
}

static PyObject *index_get_backend(PyObject *obj, void *closure)
{
    (void)closure;
    return PyUnicode_FromString(ww_backend_name(((IndexObject *)obj)->backend));
}

static PyObject *index_get_description(PyObject *obj, void *closure)
{
    (void)closure;
    IndexObject *self = (IndexObject *)obj;
    return Py_NewRef(self->description ? self->description : Py_None);
}

static PyMethodDef index_methods[] = {
    {"pairwise", (PyCFunction)(void (*)(void))index_pairwise, METH_FASTCALL,
     "pairwise(qpack, progress): see wavewarp.Index.pairwise"},
    {"knn", (PyCFunction)(void (*)(void))index_knn, METH_FASTCALL,
     "knn(qpack, k, progress): see wavewarp.Index.knn (distances always float64 here)"},
    {"close", index_close, METH_NOARGS, "Frees the index and hands its context back; idempotent."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef index_getset[] = {
    {"count", index_get_count, NULL, "Number of indexed series.", NULL},
    {"dim", index_get_dim, NULL, "Dimension of the samples.", NULL},
    {"is_f32", index_get_is_f32, NULL, "True for a float32 index.", NULL},
    {"closed", index_get_closed, NULL, "True once closed.", NULL},
    {"backend", index_get_backend, NULL, "The backend in use: 'cpu' or 'cuda'.", NULL},
    {"description", index_get_description, NULL, "The context's description (wavewarp.describe).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wavewarp._wavewarp.Index",
    .tp_doc = "A dataset prepared once for repeated queries under one measure; made by index_create. "
              "Use wavewarp.Index (or wavewarp.TwedIndex).",
    .tp_basicsize = sizeof(IndexObject),
    .tp_itemsize = 0,
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
#else
    .tp_flags = Py_TPFLAGS_DEFAULT,
#endif
    .tp_dealloc = index_dealloc,
    .tp_methods = index_methods,
    .tp_getset = index_getset,
};

/* ---------------------------------------------------------------------------------- images */

#include "image_module.c"

/* ---------------------------------------------------------------------------------- information */

static PyObject *py_cuda_available(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    int available;
    Py_BEGIN_ALLOW_THREADS
    available = ww_cuda_available();
    Py_END_ALLOW_THREADS
    return PyBool_FromLong(available);
}

static PyObject *py_describe(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    ww_backend backend;
    int threads;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.describe takes 2 positional arguments");
        return NULL;
    }
    if (parse_backend(args[0], &backend) != 0 || parse_threads(args[1], &threads) != 0)
        return NULL;
    ww_ctx *ctx = ctx_acquire(backend, threads);
    if (ctx == NULL)
        return NULL;
    PyObject *text = PyUnicode_FromString(ww_ctx_describe(ctx));
    ctx_release(ctx, backend, threads);
    return text;
}

static PyObject *py_set_poll_interval(PyObject *self, PyObject *arg)
{
    (void)self;
    double seconds = PyFloat_AsDouble(arg);
    if (seconds == -1.0 && PyErr_Occurred())
        return NULL;
    if (!(seconds > 0.0 && seconds < 3600.0)) {
        PyErr_SetString(PyExc_ValueError, "the poll interval must be in (0, 3600) seconds");
        return NULL;
    }
    double previous = poll_interval_seconds;
    poll_interval_seconds = seconds;
    return PyFloat_FromDouble(previous);
}

static PyObject *py_raise_status(PyObject *self, PyObject *arg)
{
    (void)self;
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    if (code == WW_OK)
        Py_RETURN_NONE;
    return raise_status((ww_status)code);
}

static PyObject *py_contexts_created(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromSsize_t(contexts_created);
}

/* tree edit distance (issue 13): its functions, and WW_TED_METHODS for the table below */
#include "ted_module.c"
#include "softdtw_module.c"

static PyMethodDef module_methods[] = {
    {"softdtw_gradient", (PyCFunction)(void (*)(void))py_softdtw_gradient, METH_FASTCALL,
     "softdtw_gradient(a, b, spec, backend, threads) -> (value, grad_a, grad_b)"},
    {"softdtw_batch", (PyCFunction)(void (*)(void))py_softdtw_batch, METH_FASTCALL,
     "softdtw_batch(xpack, ypack, spec, backend, threads, grads) -> (values, grad_x, grad_y)"},
    {"distance", (PyCFunction)(void (*)(void))py_distance, METH_FASTCALL,
     "distance(a, b, ta, tb, spec, backend, threads): see wavewarp.distance"},
    {"pairwise", (PyCFunction)(void (*)(void))py_pairwise, METH_FASTCALL,
     "pairwise(xpack, ypack, spec, backend, threads, progress, devices): see wavewarp.pairwise"},
    {"knn", (PyCFunction)(void (*)(void))py_knn, METH_FASTCALL,
     "knn(qpack, xpack, k, spec, backend, threads, progress, devices): see wavewarp.knn"},
    {"index_create", (PyCFunction)(void (*)(void))py_index_create, METH_FASTCALL,
     "index_create(xpack, spec, backend, threads) -> Index: see wavewarp.Index"},
    {"dataset_check", (PyCFunction)(void (*)(void))py_dataset_check, METH_FASTCALL,
     "dataset_check(pack, what): raises what a computing call raises for this collection's data."},
    {"measure_check", py_measure_check, METH_O,
     "measure_check(spec): raises what a computing call raises for this measure spec."},
    {"measure_radius", (PyCFunction)(void (*)(void))py_measure_radius, METH_FASTCALL,
     "measure_radius(spec, n, m): the window radius for lengths n and m (None: no window)."},
    {"cuda_available", py_cuda_available, METH_NOARGS,
     "True when this build has the CUDA backend and a GPU is usable."},
    {"describe", (PyCFunction)(void (*)(void))py_describe, METH_FASTCALL,
     "describe(backend, threads): the backend a context of these settings uses, in words."},
    {"_time_c_distance", (PyCFunction)(void (*)(void))py_time_c_distance, METH_FASTCALL,
     "_time_c_distance(a, b, spec, backend, threads, repetitions): seconds per bare ww_distance call."},
    {"_time_c_twed", (PyCFunction)(void (*)(void))py_time_c_twed, METH_FASTCALL,
     "_time_c_twed(a, b, nu, lmbda, degree, backend, threads, repetitions): the same for TWED."},
    {"_set_poll_interval", py_set_poll_interval, METH_O,
     "Sets how often (seconds) long calls check for Ctrl-C and report progress; returns the old value."},
    {"_raise_status", py_raise_status, METH_O,
     "Raises the exception that a library status code maps to (tests of the mapping)."},
    {"_contexts_created", py_contexts_created, METH_NOARGS,
     "How many library contexts this process has created (tests: repeated calls reuse them)."},
    WW_TED_METHODS
    {"image_pairwise", (PyCFunction)(void (*)(void))py_image_pairwise, METH_FASTCALL,
     "image_pairwise(xlist, ylist, squared, threads, progress, backend): see wavewarp.image_pairwise"},
    {"image_knn", (PyCFunction)(void (*)(void))py_image_knn, METH_FASTCALL,
     "image_knn(qlist, xlist, k, squared, threads, progress, backend): see wavewarp.image_knn"},
    {"image_map", (PyCFunction)(void (*)(void))py_image_map, METH_FASTCALL,
     "image_map(alist, blist, squared, threads): see wavewarp.image_distance(return_map=True)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_wavewarp",
    "Binding of the wavewarp C library; use the functions of the wavewarp package.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__wavewarp(void);
PyMODINIT_FUNC PyInit__wavewarp(void)
{
    import_array();
    if (zero_long == NULL && (zero_long = PyLong_FromLong(0)) == NULL)
        return NULL;
    if (PyType_Ready(&IndexType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    WavewarpError = PyErr_NewExceptionWithDoc(
        "wavewarp.WavewarpError",
        "A failure of the wavewarp library that is not bad input or lack of memory: no GPU, no CUDA "
        "in this build, a CUDA runtime error, an unsuitable backend.",
        PyExc_RuntimeError, NULL);
    if (WavewarpError == NULL || PyModule_AddObjectRef(module, "WavewarpError", WavewarpError) != 0 ||
        PyModule_AddObjectRef(module, "Index", (PyObject *)&IndexType) != 0 ||
        PyModule_AddStringConstant(module, "library_version", ww_version()) != 0 ||
        PyModule_AddIntConstant(module, "built_with_cuda",
#ifdef WW_PY_HAVE_CUDA
                                1
#else
                                0
#endif
                                ) != 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
