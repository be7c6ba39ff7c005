/* Soft-DTW functions of the module _wavewarp (issue 14): gradients of one pair and batches of
 * pairs. Included by _wavewarp.c (it reuses that file's static helpers: measures, contexts,
 * argument conversion), never compiled on its own. */

/* softdtw_gradient(a, b, spec, backend, threads) -> (value, grad_a, grad_b): float and two float64
 * arrays (length, dim); the Python layer reshapes and casts them like the inputs. */
static PyObject *py_softdtw_gradient(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.softdtw_gradient takes 5 positional arguments");
        return NULL;
    }
    ww_measure measure;
    ww_backend backend;
    int threads;
    if (parse_measure(args[2], &measure) != 0 || parse_backend(args[3], &backend) != 0 ||
        parse_threads(args[4], &threads) != 0)
        return NULL;
    pair_input pair;
    if (pair_open(args[0], args[1], Py_None, Py_None, &pair) != 0)
        return NULL;
    npy_intp da[2] = {(npy_intp)pair.sa.length, (npy_intp)pair.sa.dim};
    npy_intp db[2] = {(npy_intp)pair.sb.length, (npy_intp)pair.sb.dim};
    PyObject *ga = PyArray_SimpleNew(2, da, NPY_FLOAT64), *gb = PyArray_SimpleNew(2, db, NPY_FLOAT64);
    backend = backend_for_memory(backend, pair.sa.memory == WW_DEVICE || pair.sb.memory == WW_DEVICE);
    ww_ctx *ctx = ga && gb ? ctx_acquire(backend, threads) : NULL;
    if (ctx == NULL) {
        Py_XDECREF(ga);
        Py_XDECREF(gb);
        pair_clear(&pair);
        return NULL;
    }
    double value = 0.0;
    ww_status status;
    double *pa = (double *)PyArray_DATA((PyArrayObject *)ga), *pb = (double *)PyArray_DATA((PyArrayObject *)gb);
    Py_BEGIN_ALLOW_THREADS
    status = ww_gradient(ctx, &measure, &pair.sa, &pair.sb, &value, pa, pb);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    if (status != WW_OK) {
        Py_DECREF(ga);
        Py_DECREF(gb);
        if (status == WW_ERR_NONFINITE)
            raise_nonfinite_pair(&pair.sa, &pair.sb);
        else
            raise_status(status);
        pair_clear(&pair);
        return NULL;
    }
    pair_clear(&pair);
    return Py_BuildValue("(dNN)", value, ga, gb);
}

/* An array shaped like a pack's values (host), of its dtype. */
static PyObject *like_pack(const dataset_input *d)
{
    size_t samples = d->ds.offsets ? d->ds.offsets[d->ds.count] : d->ds.count * d->ds.length;
    npy_intp dims[2] = {(npy_intp)samples, (npy_intp)d->ds.dim};
    return PyArray_SimpleNew(2, dims, d->ds.dtype == WW_F32 ? NPY_FLOAT32 : NPY_FLOAT64);
}

/* softdtw_batch(xpack, ypack, spec, backend, threads, grads[, values, grad_x, grad_y]) ->
 * (values, grad_x, grad_y): values (count,) and, with grads true, the gradients as (samples, dim)
 * arrays of the packs' dtype (None otherwise). With the three output arguments (GPU arrays for GPU
 * packs, e.g. torch tensors: C-contiguous, the packs' dtype, large enough; grad_x or grad_y None:
 * that gradient is not computed) the results are written there and those objects returned. */
static PyObject *py_softdtw_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6 && nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.softdtw_batch takes 6 or 9 positional arguments");
        return NULL;
    }
    ww_measure measure;
    ww_backend backend;
    int threads;
    dataset_input x, y;
    if (parse_measure(args[2], &measure) != 0 || parse_backend(args[3], &backend) != 0 ||
        parse_threads(args[4], &threads) != 0 || dataset_from_pack(args[0], "X", &x) != 0 ||
        dataset_from_pack(args[1], "Y", &y) != 0)
        return NULL;
    const int grads = PyObject_IsTrue(args[5]);
    if (grads < 0)
        return NULL;
    if (x.ds.count != y.ds.count) {
        PyErr_Format(PyExc_ValueError, "X and Y must hold as many series (pairs (X[b], Y[b])), got %zu and %zu",
                     x.ds.count, y.ds.count);
        return NULL;
    }
    if (x.ds.dim != y.ds.dim) {
        PyErr_Format(PyExc_ValueError, "X has dim %zu but Y has dim %zu", x.ds.dim, y.ds.dim);
        return NULL;
    }
    backend = backend_for_memory(backend, x.ds.memory == WW_DEVICE || y.ds.memory == WW_DEVICE);
    if (nargs == 9 && args[6] != Py_None) { /* caller's outputs */
        const int is_f32 = x.ds.dtype == WW_F32;
        size_t sx, sy;
        const void *pv = NULL, *px = NULL, *py = NULL;
        ww_memory mem;
        if (dataset_sizes(&x.ds, "X", &sx) != 0 || dataset_sizes(&y.ds, "Y", &sy) != 0 ||
            pack_array(args[6], "values", is_f32, x.ds.count, &pv, &mem) != 0 ||
            (grads && args[7] != Py_None && pack_array(args[7], "grad_x", is_f32, sx * x.ds.dim, &px, &mem) != 0) ||
            (grads && args[8] != Py_None && pack_array(args[8], "grad_y", is_f32, sy * y.ds.dim, &py, &mem) != 0))
            return NULL;
        ww_ctx *ctx = ctx_acquire(backend, threads);
        if (ctx == NULL)
            return NULL;
        ww_status status;
        Py_BEGIN_ALLOW_THREADS
        status = ww_softdtw_batch(ctx, &measure, &x.ds, &y.ds, (void *)pv, (void *)px, (void *)py);
        Py_END_ALLOW_THREADS
        ctx_release(ctx, backend, threads);
        if (status != WW_OK)
            return status == WW_ERR_NONFINITE ? raise_nonfinite("X", &x.ds, "Y", &y.ds) : raise_status(status);
        return Py_BuildValue("(OOO)", args[6], args[7], args[8]);
    }
    npy_intp count = (npy_intp)x.ds.count;
    PyObject *values = PyArray_SimpleNew(1, &count, x.ds.dtype == WW_F32 ? NPY_FLOAT32 : NPY_FLOAT64);
    PyObject *gx = grads ? like_pack(&x) : Py_None, *gy = grads ? like_pack(&y) : Py_None;
    if (!grads) {
        Py_INCREF(Py_None);
        Py_INCREF(Py_None);
    }
    ww_ctx *ctx = values && gx && gy ? ctx_acquire(backend, threads) : NULL;
    if (ctx == NULL) {
        Py_XDECREF(values);
        Py_XDECREF(gx);
        Py_XDECREF(gy);
        return NULL;
    }
    void *pv = PyArray_DATA((PyArrayObject *)values);
    void *px = grads ? PyArray_DATA((PyArrayObject *)gx) : NULL, *py = grads ? PyArray_DATA((PyArrayObject *)gy) : NULL;
    ww_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ww_softdtw_batch(ctx, &measure, &x.ds, &y.ds, pv, px, py);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    if (status != WW_OK) {
        Py_DECREF(values);
        Py_DECREF(gx);
        Py_DECREF(gy);
        if (status == WW_ERR_NONFINITE)
            return raise_nonfinite("X", &x.ds, "Y", &y.ds);
        return raise_status(status);
    }
    return Py_BuildValue("(NNN)", values, gx, gy);
}
