/* Elastic image matching in the binding (issue 11): included by _wavewarp.c, whose helpers it uses
 * (contexts, progress and Ctrl-C polling, status to exception). Images arrive from
 * wavewarp/_image.py as lists of C-contiguous NumPy arrays of uint8, float32 or float64, 2-D
 * (height, width) or 3-D (height, width, channels), or as GPU stacks (CuPy, PyTorch) read in place;
 * this file re-checks what it relies on. */

/* The images of a stack in GPU memory (an object with __cuda_array_interface__, C-contiguous
 * (count, height, width[, channels]) of uint8, float32 or float64: CuPy, PyTorch), as descriptors
 * of its images in place (memory WW_DEVICE); NULL with an exception set. */
static ww_image *images_from_device_stack(PyObject *iface, const char *what, size_t *count)
{
    if (!PyDict_Check(iface)) {
        PyErr_Format(PyExc_ValueError, "%s: __cuda_array_interface__ is not a dict", what);
        return NULL;
    }
    PyObject *typestr = PyDict_GetItemString(iface, "typestr"), *shape = PyDict_GetItemString(iface, "shape");
    PyObject *data = PyDict_GetItemString(iface, "data"), *strides = PyDict_GetItemString(iface, "strides");
    PyObject *mask = PyDict_GetItemString(iface, "mask"), *stream = PyDict_GetItemString(iface, "stream");
    if (typestr == NULL || shape == NULL || data == NULL || !PyUnicode_Check(typestr) || !PyTuple_Check(shape) ||
        !PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1 || (mask != NULL && mask != Py_None)) {
        PyErr_Format(PyExc_ValueError, "%s: malformed or masked __cuda_array_interface__", what);
        return NULL;
    }
    ww_dtype dtype;
    Py_ssize_t esize;
    if (PyUnicode_CompareWithASCIIString(typestr, "|u1") == 0)
        dtype = WW_U8, esize = 1;
    else if (PyUnicode_CompareWithASCIIString(typestr, "<f4") == 0)
        dtype = WW_F32, esize = 4;
    else if (PyUnicode_CompareWithASCIIString(typestr, "<f8") == 0)
        dtype = WW_F64, esize = 8;
    else {
        PyErr_Format(PyExc_ValueError, "%s: GPU images must be uint8, float32 or float64, not typestr %R", what,
                     typestr);
        return NULL;
    }
    const Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    if (nd != 3 && nd != 4) {
        PyErr_Format(PyExc_ValueError, "%s: a GPU stack of images must be 3-D (count, height, width) or 4-D "
                                       "(count, height, width, channels), not %zd-D", what, nd);
        return NULL;
    }
    Py_ssize_t dims[4] = {0, 0, 0, 1};
    for (Py_ssize_t i = 0; i < nd; i++)
        if ((dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i))) < 0) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%s: negative extent in a GPU array's shape", what);
            return NULL;
        }
    if (strides != NULL && strides != Py_None) { /* C-contiguous (extents of 1 may carry any stride) */
        if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != nd) {
            PyErr_Format(PyExc_ValueError, "%s: malformed strides in __cuda_array_interface__", what);
            return NULL;
        }
        Py_ssize_t expected = esize;
        for (Py_ssize_t i = nd - 1; i >= 0; i--) {
            const Py_ssize_t st = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i));
            if (st == -1 && PyErr_Occurred())
                return NULL;
            if (dims[i] > 1 && st != expected) {
                PyErr_Format(PyExc_ValueError, "%s: a GPU stack of images must be C-contiguous", what);
                return NULL;
            }
            expected *= dims[i];
        }
    }
    const uintptr_t base = (uintptr_t)PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred())
        return NULL;
    if (stream != NULL && stream != Py_None) {
        const uintptr_t s = (uintptr_t)PyLong_AsVoidPtr(stream);
        if (PyErr_Occurred() || sync_producer_stream(s) != 0)
            return NULL;
    }
    *count = (size_t)dims[0];
    ww_image *images = (ww_image *)PyMem_Malloc((size_t)(dims[0] > 0 ? dims[0] : 1) * sizeof(ww_image));
    if (images == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    const size_t bytes = (size_t)dims[1] * (size_t)dims[2] * (size_t)dims[3] * (size_t)esize;
    for (Py_ssize_t k = 0; k < dims[0]; k++) {
        images[k] = ww_image_make((const void *)(base + (size_t)k * bytes), (size_t)dims[1], (size_t)dims[2],
                                  (size_t)dims[3], dtype);
        images[k].memory = WW_DEVICE;
    }
    return images;
}

/* The images of a list (kept alive by the list) as descriptors, or of a GPU stack (kept alive by
 * the caller); NULL with an exception set. */
static ww_image *images_from_list(PyObject *list, const char *what, size_t *count)
{
    if (!PyList_Check(list)) {
        PyObject *iface = cuda_interface_of(list);
        if (iface != NULL) {
            ww_image *images = images_from_device_stack(iface, what, count);
            Py_DECREF(iface);
            return images;
        }
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: expected a list of arrays or a GPU stack of images", what);
        return NULL;
    }
    const Py_ssize_t n = PyList_GET_SIZE(list);
    *count = (size_t)n;
    ww_image *images = (ww_image *)PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(ww_image));
    if (images == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *obj = PyList_GET_ITEM(list, k);
        if (!PyArray_Check(obj)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] is not a NumPy array", what, k);
            goto fail;
        }
        PyArrayObject *a = (PyArrayObject *)obj;
        const int nd = PyArray_NDIM(a), type = PyArray_TYPE(a);
        if ((nd != 2 && nd != 3) || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISNOTSWAPPED(a) ||
            (type != NPY_UINT8 && type != NPY_FLOAT32 && type != NPY_FLOAT64)) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] must be a C-contiguous 2-D or 3-D uint8, float32 or float64 array in native byte order",
                         what, k);
            goto fail;
        }
        const npy_intp *dims = PyArray_DIMS(a);
        images[k] = ww_image_make(PyArray_DATA(a), (size_t)dims[0], (size_t)dims[1], nd == 3 ? (size_t)dims[2] : 1,
                                  type == NPY_UINT8 ? WW_U8 : type == NPY_FLOAT32 ? WW_F32 : WW_F64);
    }
    return images;
fail:
    PyMem_Free(images);
    return NULL;
}

/* A NaN or infinite pixel: which image and where, as the series functions say it. */
static PyObject *raise_image_status(ww_status status, const char *what_a, const ww_image *a, size_t na,
                                    const char *what_b, const ww_image *b, size_t nb)
{
    for (int side = 0; status == WW_ERR_NONFINITE && side < 2; side++) {
        const ww_image *set = side ? b : a;
        const size_t n = side ? nb : na;
        for (size_t k = 0; set && k < n; k++)
            if (ww_image_check(&set[k]) == WW_ERR_NONFINITE) {
                PyErr_Format(PyExc_ValueError, "%s[%zu] has a NaN or infinite pixel", side ? what_b : what_a, k);
                return NULL;
            }
    }
    if (status == WW_ERR_NONFINITE) /* not found on the host: a GPU stack's (checked on the GPU) */
        return PyErr_Format(PyExc_ValueError, "an image of %s%s%s in GPU memory has a NaN or infinite pixel", what_a,
                            b ? " or " : "", b ? what_b : "");
    if (status == WW_ERR_MEMORY_KIND)
        return PyErr_Format(PyExc_ValueError, "%s (GPU images need a GPU backend, and the sets of a call must "
                                              "all be on the GPU or all on the host)", ww_strerror(status));
    if (status == WW_ERR_SHAPE)
        return PyErr_Format(PyExc_ValueError, "%s (images must all have the same number of channels)",
                            ww_strerror(status));
    if (status == WW_ERR_EMPTY)
        return PyErr_Format(PyExc_ValueError, "%s (an image has no pixels, or there are no images)",
                            ww_strerror(status));
    return raise_after_poll(status);
}

/* image_pairwise(xlist, ylist or None, squared, threads, progress, backend) -> float64 (nx, ny) */
static PyObject *py_image_pairwise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.image_pairwise takes 6 positional arguments");
        return NULL;
    }
    int threads, squared = PyObject_IsTrue(args[2]);
    ww_backend backend;
    if (squared < 0 || parse_threads(args[3], &threads) != 0 || parse_backend(args[5], &backend) != 0)
        return NULL;
    size_t nx = 0, ny = 0;
    const int self_matrix = args[1] == Py_None;
    ww_image *x = images_from_list(args[0], "X", &nx), *y = NULL;
    if (x == NULL)
        return NULL;
    if (!self_matrix && (y = images_from_list(args[1], "Y", &ny)) == NULL) {
        PyMem_Free(x);
        return NULL;
    }
    PyObject *out = NULL;
    ww_ctx *ctx = NULL;
    npy_intp dims[2] = {(npy_intp)nx, (npy_intp)(self_matrix ? nx : ny)};
    if (dims[0] == 0 || dims[1] == 0) {
        raise_image_status(WW_ERR_EMPTY, "X", NULL, 0, "Y", NULL, 0);
        goto done;
    }
    out = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    if (out == NULL || (ctx = ctx_acquire(backend, threads)) == NULL) {
        Py_CLEAR(out);
        goto done;
    }
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[4], 0);
    ww_image_params p = ww_image_params_default();
    p.squared = squared;
    ww_status status;
    void *dst = PyArray_DATA((PyArrayObject *)out);
    Py_BEGIN_ALLOW_THREADS
    status = ww_image_pairwise(ctx, x, nx, y, ny, &p, dst, &opt);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    if (status != WW_OK) {
        Py_CLEAR(out);
        raise_image_status(status, "X", x, nx, "Y", y, ny);
    }
done:
    PyMem_Free(x);
    PyMem_Free(y);
    return out;
}

/* image_knn(qlist, xlist, k, squared, threads, progress, backend) -> (indices, distances) */
static PyObject *py_image_knn(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.image_knn takes 7 positional arguments");
        return NULL;
    }
    int threads, squared = PyObject_IsTrue(args[3]);
    Py_ssize_t k = PyLong_AsSsize_t(args[2]);
    ww_backend backend;
    if (squared < 0 || (k == -1 && PyErr_Occurred()) || parse_threads(args[4], &threads) != 0 ||
        parse_backend(args[6], &backend) != 0)
        return NULL;
    size_t nq = 0, nx = 0;
    ww_image *q = images_from_list(args[0], "queries", &nq), *x = NULL;
    if (q == NULL)
        return NULL;
    if ((x = images_from_list(args[1], "X", &nx)) == NULL) {
        PyMem_Free(q);
        return NULL;
    }
    PyObject *indices = NULL, *distances = NULL, *result = NULL;
    ww_ctx *ctx = NULL;
    if (nq == 0 || nx == 0) {
        raise_image_status(WW_ERR_EMPTY, "queries", NULL, 0, "X", NULL, 0);
        goto done;
    }
    if (k < 1 || (size_t)k > nx) {
        PyErr_Format(PyExc_ValueError, "k must be between 1 and the number of images (%zu), not %zd", nx, k);
        goto done;
    }
    if (knn_arrays(nq, (size_t)k, &indices, &distances) != 0 || (ctx = ctx_acquire(backend, threads)) == NULL)
        goto done;
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[5], 0);
    ww_image_params p = ww_image_params_default();
    p.squared = squared;
    ww_status status;
    size_t *ip = (size_t *)PyArray_DATA((PyArrayObject *)indices);
    double *dp = (double *)PyArray_DATA((PyArrayObject *)distances);
    Py_BEGIN_ALLOW_THREADS
    status = ww_image_knn(ctx, q, nq, x, nx, &p, (size_t)k, ip, dp, &opt);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    if (status != WW_OK)
        raise_image_status(status, "queries", q, nq, "X", x, nx);
    else
        result = PyTuple_Pack(2, indices, distances);
done:
    Py_XDECREF(indices);
    Py_XDECREF(distances);
    PyMem_Free(q);
    PyMem_Free(x);
    return result;
}

/* image_map(alist, blist, squared, threads) -> (distance, matches (count, 4) intp) */
static PyObject *py_image_map(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.image_map takes 4 positional arguments");
        return NULL;
    }
    int threads, squared = PyObject_IsTrue(args[2]);
    if (squared < 0 || parse_threads(args[3], &threads) != 0)
        return NULL;
    size_t na = 0, nb = 0;
    ww_image *a = images_from_list(args[0], "a", &na), *b = NULL;
    if (a == NULL)
        return NULL;
    if ((b = images_from_list(args[1], "b", &nb)) == NULL || na != 1 || nb != 1) {
        if (b != NULL)
            PyErr_SetString(PyExc_ValueError, "image_map takes one image on each side");
        PyMem_Free(a);
        PyMem_Free(b);
        return NULL;
    }
    PyObject *result = NULL, *matches = NULL;
    ww_ctx *ctx = NULL;
    ww_status status = ww_image_check(a);
    if (status == WW_OK)
        status = ww_image_check(b);
    if (status != WW_OK || a->channels != b->channels) {
        raise_image_status(status != WW_OK ? status : WW_ERR_SHAPE, "a", a, 1, "b", b, 1);
        goto done;
    }
    const size_t cap = ww_image_map_capacity(a, b);
    npy_intp dims[2] = {(npy_intp)cap, 4};
    if ((matches = PyArray_SimpleNew(2, dims, NPY_INTP)) == NULL || (ctx = ctx_acquire(WW_BACKEND_CPU, threads)) == NULL)
        goto done;
    ww_image_params p = ww_image_params_default();
    p.squared = squared;
    double distance = 0;
    size_t count = 0;
    size_t *mp = (size_t *)PyArray_DATA((PyArrayObject *)matches);
    Py_BEGIN_ALLOW_THREADS
    status = ww_image_map(ctx, a, b, &p, &distance, mp, cap, &count);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, WW_BACKEND_CPU, threads);
    if (status != WW_OK) {
        raise_image_status(status, "a", a, 1, "b", b, 1);
        goto done;
    }
    PyObject *used = PySequence_GetSlice(matches, 0, (Py_ssize_t)count);
    PyObject *copy = used ? PyArray_NewCopy((PyArrayObject *)used, NPY_CORDER) : NULL; /* drop the spare rows */
    Py_XDECREF(used);
    if (copy != NULL) {
        result = Py_BuildValue("(dN)", distance, copy);
    }
done:
    Py_XDECREF(matches);
    PyMem_Free(a);
    PyMem_Free(b);
    return result;
}
