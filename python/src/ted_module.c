/* Tree edit distance (issue 13) in the extension module: included by _wavewarp.c (before its method
 * table, whose helpers it uses: contexts, progress and Ctrl-C polling, status -> exception), and
 * listed there through WW_TED_METHODS. Trees arrive packed: every tree's preorder parents and
 * label ids (int32, labels already mapped to ids by wavewarp/_ted.py across the whole call) one
 * after the other, with int64 offsets. */

/* A C-contiguous array of the given type from obj (a new reference), or NULL with an exception. */
static PyArrayObject *ted_array(PyObject *obj, int type, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, type, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (a == NULL)
        PyErr_Format(PyExc_TypeError, "%s must be a one-dimensional integer array", what);
    return a;
}

static int ted_costs(PyObject *const *args, ww_ted_params *p)
{
    p->delete_cost = PyFloat_AsDouble(args[0]);
    p->insert_cost = PyFloat_AsDouble(args[1]);
    p->relabel_cost = PyFloat_AsDouble(args[2]);
    return PyErr_Occurred() ? -1 : 0;
}

/* ted(parents_a, labels_a, parents_b, labels_b, delete, insert, relabel, backend, threads, mapping)
 * -> distance, or (distance, edits as an (k, 2) int32 array, -1 for none) with mapping */
static PyObject *py_ted(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.ted takes 10 positional arguments");
        return NULL;
    }
    ww_ted_params p;
    ww_backend backend;
    int threads;
    const int want_mapping = PyObject_IsTrue(args[9]);
    if (ted_costs(args + 4, &p) != 0 || parse_backend(args[7], &backend) != 0 || parse_threads(args[8], &threads) != 0 ||
        want_mapping < 0)
        return NULL;
    PyArrayObject *arr[4] = {NULL, NULL, NULL, NULL};
    const char *what[4] = {"parents of a", "labels of a", "parents of b", "labels of b"};
    for (int k = 0; k < 4; k++)
        if ((arr[k] = ted_array(args[k], NPY_INT32, what[k])) == NULL) {
            for (int j = 0; j < k; j++)
                Py_DECREF(arr[j]);
            return NULL;
        }
    PyObject *result = NULL;
    if (PyArray_SIZE(arr[0]) != PyArray_SIZE(arr[1]) || PyArray_SIZE(arr[2]) != PyArray_SIZE(arr[3])) {
        PyErr_SetString(PyExc_ValueError, "a tree needs as many labels as parents");
        goto done;
    }
    {
        const ww_tree a = {(size_t)PyArray_SIZE(arr[0]), (const int32_t *)PyArray_DATA(arr[0]),
                           (const int32_t *)PyArray_DATA(arr[1])};
        const ww_tree b = {(size_t)PyArray_SIZE(arr[2]), (const int32_t *)PyArray_DATA(arr[2]),
                           (const int32_t *)PyArray_DATA(arr[3])};
        ww_ctx *ctx = ctx_acquire(backend, threads);
        if (ctx == NULL)
            goto done;
        double d = 0;
        ww_status st;
        if (!want_mapping && backend != WW_BACKEND_CUDA) {
            /* a 1 x 1 block of the matrix call: the same engine over the same threads, with
             * Ctrl-C polled inside the pair (ww_ted has no callback) */
            poll_state poll;
            ww_pairwise_options opt = poll_options(&poll, Py_None, 0);
            Py_BEGIN_ALLOW_THREADS
            st = ww_ted_pairwise(ctx, &a, 1, &b, 1, &p, &d, &opt);
            Py_END_ALLOW_THREADS
            ctx_release(ctx, backend, threads);
            result = st == WW_OK ? PyFloat_FromDouble(d) : raise_after_poll(st);
            goto done;
        }
        if (!want_mapping) {
            Py_BEGIN_ALLOW_THREADS
            st = ww_ted(ctx, &a, &b, &p, &d);
            Py_END_ALLOW_THREADS
            ctx_release(ctx, backend, threads);
            result = st == WW_OK ? PyFloat_FromDouble(d) : raise_status(st);
            goto done;
        }
        /* the mapping is computed on the CPU, whatever the backend */
        ww_ted_edit *edits = (ww_ted_edit *)PyMem_RawMalloc((a.count + b.count + 1) * sizeof(ww_ted_edit));
        if (edits == NULL) {
            ctx_release(ctx, backend, threads);
            result = PyErr_NoMemory();
            goto done;
        }
        size_t count = 0;
        Py_BEGIN_ALLOW_THREADS
        st = ww_ted_mapping(ctx, &a, &b, &p, edits, &count, &d);
        Py_END_ALLOW_THREADS
        ctx_release(ctx, backend, threads);
        if (st != WW_OK) {
            PyMem_RawFree(edits);
            result = raise_status(st);
            goto done;
        }
        npy_intp dims[2] = {(npy_intp)count, 2};
        PyObject *pairs = PyArray_SimpleNew(2, dims, NPY_INT32);
        if (pairs != NULL) {
            int32_t *dst = (int32_t *)PyArray_DATA((PyArrayObject *)pairs);
            for (size_t k = 0; k < count; k++) {
                dst[2 * k] = edits[k].a;
                dst[2 * k + 1] = edits[k].b;
            }
            result = Py_BuildValue("(dN)", d, pairs);
        }
        PyMem_RawFree(edits);
    }
done:
    for (int k = 0; k < 4; k++)
        Py_DECREF(arr[k]);
    return result;
}

/* ted_pairwise(parents, labels, offsets, nx, self_matrix, delete, insert, relabel, backend, threads,
 * progress) -> (nx, nx or count - nx) float64 array: trees [0, nx) against [nx, count), or against
 * themselves when self_matrix */
static PyObject *py_ted_pairwise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.ted_pairwise takes 11 positional arguments");
        return NULL;
    }
    ww_ted_params p;
    ww_backend backend;
    int threads;
    const Py_ssize_t nx = PyLong_AsSsize_t(args[3]);
    const int self_matrix = PyObject_IsTrue(args[4]);
    if ((nx < 0 && PyErr_Occurred()) || self_matrix < 0 || ted_costs(args + 5, &p) != 0 ||
        parse_backend(args[8], &backend) != 0 || parse_threads(args[9], &threads) != 0)
        return NULL;
    PyArrayObject *parents = ted_array(args[0], NPY_INT32, "parents");
    PyArrayObject *labels = parents ? ted_array(args[1], NPY_INT32, "labels") : NULL;
    PyArrayObject *offsets = labels ? ted_array(args[2], NPY_INT64, "offsets") : NULL;
    PyObject *result = NULL;
    ww_tree *trees = NULL;
    if (offsets == NULL)
        goto done;
    const Py_ssize_t count = PyArray_SIZE(offsets) - 1;
    const int64_t *off = (const int64_t *)PyArray_DATA(offsets);
    const Py_ssize_t ny = self_matrix ? nx : count - nx;
    if (count < 0 || nx < 0 || nx > count || (self_matrix && nx != count) || PyArray_SIZE(parents) != PyArray_SIZE(labels) ||
        off[0] != 0 || off[count] != PyArray_SIZE(parents)) {
        PyErr_SetString(PyExc_ValueError, "inconsistent packed trees");
        goto done;
    }
    if (nx == 0 || ny == 0) {
        result = raise_status(WW_ERR_EMPTY);
        goto done;
    }
    trees = (ww_tree *)PyMem_RawMalloc((size_t)count * sizeof(ww_tree));
    if (trees == NULL) {
        result = PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        if (off[k + 1] < off[k]) {
            PyErr_SetString(PyExc_ValueError, "inconsistent packed trees");
            goto done;
        }
        trees[k].count = (size_t)(off[k + 1] - off[k]);
        trees[k].parent = (const int32_t *)PyArray_DATA(parents) + off[k];
        trees[k].labels = (const int32_t *)PyArray_DATA(labels) + off[k];
    }
    npy_intp dims[2] = {(npy_intp)nx, (npy_intp)ny};
    PyObject *out = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    if (out == NULL)
        goto done;
    ww_ctx *ctx = ctx_acquire(backend, threads);
    if (ctx == NULL) {
        Py_DECREF(out);
        goto done;
    }
    poll_state poll;
    ww_pairwise_options opt = poll_options(&poll, args[10], 0);
    double *dst = (double *)PyArray_DATA((PyArrayObject *)out);
    ww_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ww_ted_pairwise(ctx, trees, (size_t)nx, self_matrix ? NULL : trees + nx, (size_t)ny, &p, dst, &opt);
    Py_END_ALLOW_THREADS
    ctx_release(ctx, backend, threads);
    if (st != WW_OK) {
        Py_DECREF(out);
        result = raise_after_poll(st);
        goto done;
    }
    result = out;
done:
    PyMem_RawFree(trees);
    Py_XDECREF(parents);
    Py_XDECREF(labels);
    Py_XDECREF(offsets);
    return result;
}

/* (parents, label strings) of a parsed tree, from a fresh dictionary. */
static PyObject *parsed_tree(ww_labels *d, ww_tree *t)
{
    PyObject *parents = PyList_New((Py_ssize_t)t->count), *labels = PyList_New((Py_ssize_t)t->count);
    if (parents == NULL || labels == NULL)
        goto fail;
    for (size_t k = 0; k < t->count; k++) {
        PyObject *p = PyLong_FromLong(t->parent[k]);
        PyObject *l = PyUnicode_DecodeUTF8(ww_labels_name(d, t->labels[k]),
                                           (Py_ssize_t)strlen(ww_labels_name(d, t->labels[k])), "surrogateescape");
        if (p == NULL || l == NULL) {
            Py_XDECREF(p);
            Py_XDECREF(l);
            goto fail;
        }
        PyList_SET_ITEM(parents, (Py_ssize_t)k, p);
        PyList_SET_ITEM(labels, (Py_ssize_t)k, l);
    }
    return Py_BuildValue("(NN)", parents, labels);
fail:
    Py_XDECREF(parents);
    Py_XDECREF(labels);
    return NULL;
}

static PyObject *tree_parse_error(ww_status st, const char *what)
{
    if (st == WW_ERR_TREE) {
        PyErr_Format(PyExc_ValueError, "malformed %s: %s", what, ww_strerror(st));
        return NULL;
    }
    return raise_status(st);
}

/* tree_parse_bracket(text) -> (parents, labels) */
static PyObject *py_tree_parse_bracket(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_ssize_t len;
    const char *text = PyUnicode_AsUTF8AndSize(arg, &len);
    if (text == NULL)
        return NULL;
    ww_labels *d;
    if (ww_labels_create(&d) != WW_OK)
        return PyErr_NoMemory();
    ww_tree t = {0, NULL, NULL};
    ww_status st = ww_tree_parse_bracket(d, text, (size_t)len, &t);
    PyObject *r = st == WW_OK ? parsed_tree(d, &t) : tree_parse_error(st, "bracket tree");
    ww_tree_free(&t);
    ww_labels_destroy(d);
    return r;
}

/* tree_parse_xted(labels_line, adjacency_line) -> (parents, labels) */
static PyObject *py_tree_parse_xted(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_wavewarp.tree_parse_xted takes 2 positional arguments");
        return NULL;
    }
    Py_ssize_t ll, al;
    const char *labels = PyUnicode_AsUTF8AndSize(args[0], &ll);
    const char *adjacency = labels ? PyUnicode_AsUTF8AndSize(args[1], &al) : NULL;
    if (adjacency == NULL)
        return NULL;
    ww_labels *d;
    if (ww_labels_create(&d) != WW_OK)
        return PyErr_NoMemory();
    ww_tree t = {0, NULL, NULL};
    ww_status st = ww_tree_parse_xted(d, labels, (size_t)ll, adjacency, (size_t)al, &t);
    PyObject *r = st == WW_OK ? parsed_tree(d, &t) : tree_parse_error(st, "X-TED tree (labels and adjacency lines)");
    ww_tree_free(&t);
    ww_labels_destroy(d);
    return r;
}

#define WW_TED_METHODS                                                                                         \
    {"ted", (PyCFunction)(void (*)(void))py_ted, METH_FASTCALL,                                               \
     "ted(pa, la, pb, lb, delete, insert, relabel, backend, threads, mapping): see wavewarp.ted"},           \
        {"ted_pairwise", (PyCFunction)(void (*)(void))py_ted_pairwise, METH_FASTCALL,                          \
         "ted_pairwise(parents, labels, offsets, nx, self, delete, insert, relabel, backend, threads, "        \
         "progress): see wavewarp.ted_pairwise"},                                                              \
        {"tree_parse_bracket", py_tree_parse_bracket, METH_O,                                                  \
         "tree_parse_bracket(text) -> (parents, labels): the library's bracket parser"},                      \
        {"tree_parse_xted", (PyCFunction)(void (*)(void))py_tree_parse_xted, METH_FASTCALL,                   \
         "tree_parse_xted(labels_line, adjacency_line) -> (parents, labels): X-TED's files, one tree"},
