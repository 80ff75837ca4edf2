/*
 * gpuhist_core.c - gpuhist._core, the CPython + NumPy C binding of the gpuhist library.
 *
 * What it does: wraps a gpuhist context (Context) and hands NumPy arrays, or raw device
 * pointers described by the Python layer (CUDA array interface, DLPack), to the library's public
 * C API (include/gpuhist.h) - gpuhist_histogram, gpuhist_minmax, the stream API,
 * gpuhist_compute_edges and the exact-parts weight states (gpuhist_weight_state_*, which
 * gpuhist.dask uses to merge the weight sums of chunks without rounding them). It bins nothing itself: NumPy's rules (bin edges, dtypes, errors) live
 * in the Python layer (python/gpuhist/), which calls this module with an explicit bin spec.
 *
 * How host arrays reach the library, without a Python-level copy:
 *  - native byte order and C-contiguous: the data pointer itself;
 *  - native byte order and expressible as rows of contiguous samples with one row stride (a 2-D
 *    slice, a[::2, :], a transposed array when unweighted, negative strides when unweighted):
 *    the library's region of interest (rows, row_length, row_stride), when rows are at least
 *    ROI_MIN_ROW samples long;
 *  - anything else (byte-swapped, strided 1-D, broadcast, weights to convert): NumPy's buffered
 *    iterator (NpyIter) gathers, byte-swaps and casts BUFFER_SAMPLES samples at a time into a
 *    bounded buffer, and each buffer is fed to a gpuhist stream (gpuhist_stream_feed[_weighted]),
 *    whose result equals one call on the whole array, bit for bit.
 * 64-bit integers binned as NumPy bins them (histogram's as_double=(lo, hi)): NumPy keeps the
 * samples in [lo, hi] (its comparison with the outer edges) and bins each kept sample rounded to
 * float64, where the library compares the integer itself; so such samples are converted here,
 * AS_DOUBLE_SAMPLES at a time, to their nearest double (-inf below lo, +inf above hi: outliers)
 * and fed to a float64 stream.
 * The GIL is released while the library counts (and while NpyIter fills buffers, which numeric
 * casts allow).
 *
 * Limits: one channel (the Python API is NumPy's, 1 histogram per call); bins < 2^32; counts
 * buffers are int64/uint64 arrays the caller allocates (Python layer); weights reach the library
 * as f32 (when float32) or f64 (every other real dtype, cast by NpyIter). Device pointers are
 * passed as integers: this module cannot check them; the library reports what it can.
 * Errors: INVALID_ARGUMENT and UNKNOWN_STRATEGY raise ValueError, OUT_OF_MEMORY MemoryError,
 * everything else gpuhist._core.GpuhistError (a RuntimeError), each with the library's message
 * (gpuhist_last_error) and a `status` attribute naming the status code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <gpuhist.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o)
{
    Py_INCREF(o);
    return o;
}
#endif

/* Samples per buffer of the gathering path: 256 Ki (1-2 MiB of data and weights). */
#define BUFFER_SAMPLES ((npy_intp)1 << 18)
#define AS_DOUBLE_SAMPLES ((npy_intp)1 << 16)
/* Shortest row the region-of-interest path takes; shorter rows go through the buffers (the
 * library walks a ROI row by row, so very short rows cost more than gathering them). */
#define ROI_MIN_ROW 64

static PyObject *GpuhistError;

/* ---- errors -------------------------------------------------------------------------------- */

static const char *status_name(gpuhist_status st)
{
    switch (st) {
    case GPUHIST_OK: return "OK";
    case GPUHIST_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case GPUHIST_ERROR_UNSUPPORTED: return "UNSUPPORTED";
    case GPUHIST_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case GPUHIST_ERROR_NO_DEVICE: return "NO_DEVICE";
    case GPUHIST_ERROR_BACKEND: return "BACKEND";
    case GPUHIST_ERROR_UNKNOWN_STRATEGY: return "UNKNOWN_STRATEGY";
    case GPUHIST_ERROR_BUILD: return "BUILD";
    case GPUHIST_ERROR_BUSY: return "BUSY";
    }
    return "UNKNOWN";
}

/* Raise the Python exception for a library status, with the library's message. */
static PyObject *raise_status(gpuhist_status st, const char *message)
{
    PyObject *type;
    switch (st) {
    case GPUHIST_ERROR_INVALID_ARGUMENT:
    case GPUHIST_ERROR_UNKNOWN_STRATEGY:
        type = PyExc_ValueError;
        break;
    case GPUHIST_ERROR_OUT_OF_MEMORY:
        type = PyExc_MemoryError;
        break;
    default:
        type = GpuhistError;
        break;
    }
    if (!message || !message[0])
        message = gpuhist_status_string(st);
    PyObject *exc = PyObject_CallFunction(type, "s", message);
    if (!exc)
        return NULL;
    PyObject *name = PyUnicode_FromString(status_name(st));
    if (name) {
        PyObject_SetAttrString(exc, "status", name); /* best effort */
        Py_DECREF(name);
    }
    PyErr_Clear();
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    return NULL;
}

/* ---- dtypes -------------------------------------------------------------------------------- */

/* The gpuhist dtype of a NumPy dtype (bool reads as u8: its bytes are 0 and 1); -1 if none. */
static int gpuhist_dtype_of(PyArray_Descr *d)
{
    switch (d->type_num) {
    case NPY_BOOL: return GPUHIST_U8;
    case NPY_UBYTE: return GPUHIST_U8;
    case NPY_BYTE: return GPUHIST_I8;
    case NPY_USHORT: return NPY_SIZEOF_SHORT == 2 ? GPUHIST_U16 : -1;
    case NPY_SHORT: return NPY_SIZEOF_SHORT == 2 ? GPUHIST_I16 : -1;
    case NPY_UINT: return NPY_SIZEOF_INT == 4 ? GPUHIST_U32 : -1;
    case NPY_INT: return NPY_SIZEOF_INT == 4 ? GPUHIST_I32 : -1;
    case NPY_ULONG: return NPY_SIZEOF_LONG == 8 ? GPUHIST_U64 : GPUHIST_U32;
    case NPY_LONG: return NPY_SIZEOF_LONG == 8 ? GPUHIST_I64 : GPUHIST_I32;
    case NPY_ULONGLONG: return NPY_SIZEOF_LONGLONG == 8 ? GPUHIST_U64 : -1;
    case NPY_LONGLONG: return NPY_SIZEOF_LONGLONG == 8 ? GPUHIST_I64 : -1;
    case NPY_FLOAT: return GPUHIST_F32;
    case NPY_DOUBLE: return GPUHIST_F64;
    default: return -1;
    }
}

/* The NumPy type number holding gpuhist dtype dt natively. */
static int numpy_type_of(gpuhist_dtype dt)
{
    switch (dt) {
    case GPUHIST_U8: return NPY_UINT8;
    case GPUHIST_I8: return NPY_INT8;
    case GPUHIST_U16: return NPY_UINT16;
    case GPUHIST_I16: return NPY_INT16;
    case GPUHIST_U32: return NPY_UINT32;
    case GPUHIST_I32: return NPY_INT32;
    case GPUHIST_U64: return NPY_UINT64;
    case GPUHIST_I64: return NPY_INT64;
    case GPUHIST_F32: return NPY_FLOAT32;
    case GPUHIST_F64: return NPY_FLOAT64;
    default: return -1;
    }
}

static int parse_dtype_name(PyObject *obj, gpuhist_dtype *out)
{
    const char *name = PyUnicode_AsUTF8(obj);
    if (!name)
        return 0;
    if (!gpuhist_dtype_parse(name, out)) {
        PyErr_Format(PyExc_TypeError, "gpuhist: unknown sample type '%s'", name);
        return 0;
    }
    return 1;
}

/* ---- layouts ------------------------------------------------------------------------------- */

/* Samples as the library takes them: contiguous `count` samples (rows == 0) or a ROI. */
typedef struct layout {
    const char *data;
    uint64_t count;
    uint64_t rows, row_length;
    size_t row_stride;
} layout;

/*
 * Express an N-d array (base, shape, byte strides) as contiguous samples or as rows of
 * contiguous samples with one positive row stride. reorder: the order of the samples does not
 * matter (unweighted), so negative strides may be flipped and axes permuted. @return 1 and
 * fills *out, or 0 when the array needs the gathering path.
 */
static int plain_layout(const char *base, int ndim, const npy_intp *shape, const npy_intp *strides,
                        npy_intp itemsize, int reorder, layout *out)
{
    npy_intp n[NPY_MAXDIMS], s[NPY_MAXDIMS];
    int k = 0;
    uint64_t total = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            out->data = base;
            out->count = 0;
            out->rows = out->row_length = 0;
            out->row_stride = 0;
            return 1;
        }
        total *= (uint64_t)shape[i];
        if (shape[i] == 1)
            continue;
        n[k] = shape[i];
        s[k] = strides[i];
        k++;
    }
    if (reorder) {
        for (int i = 0; i < k; i++) {
            if (s[i] < 0) {
                base += (n[i] - 1) * s[i];
                s[i] = -s[i];
            }
        }
        /* largest stride first (insertion sort; k <= NPY_MAXDIMS) */
        for (int i = 1; i < k; i++) {
            npy_intp nn = n[i], ss = s[i];
            int j = i - 1;
            while (j >= 0 && s[j] < ss) {
                n[j + 1] = n[j];
                s[j + 1] = s[j];
                j--;
            }
            n[j + 1] = nn;
            s[j + 1] = ss;
        }
    }
    out->data = base;
    out->rows = out->row_length = 0;
    out->row_stride = 0;
    if (k == 0) {
        out->count = total;
        return 1;
    }
    /* innermost run of contiguous samples */
    if (s[k - 1] != itemsize)
        return 0;
    int j = k - 1;
    npy_intp run = n[j];
    while (j > 0 && s[j - 1] == s[j] * n[j]) {
        j--;
        run *= n[j];
    }
    if (j == 0) {
        out->count = total;
        return 1;
    }
    /* dims 0 .. j-1 must collapse into rows with one positive stride */
    int r = j - 1;
    npy_intp stride = s[r];
    if (stride <= 0 || stride < run * itemsize || run < ROI_MIN_ROW)
        return 0;
    npy_intp rows = n[r];
    while (r > 0 && s[r - 1] == s[r] * n[r]) {
        r--;
        rows *= n[r];
    }
    if (r != 0)
        return 0;
    out->count = 0;
    out->rows = (uint64_t)rows;
    out->row_length = (uint64_t)run;
    out->row_stride = (size_t)stride;
    return 1;
}

static void apply_layout(gpuhist_samples *s, const layout *l)
{
    s->data = l->data;
    if (l->rows) {
        s->rows = l->rows;
        s->row_length = l->row_length;
        s->row_stride = l->row_stride;
        s->count = 0;
    } else {
        s->count = l->count;
    }
}

/* ---- the bin spec -------------------------------------------------------------------------- */

/* Build a spec from the Python layer's fields. kind: 0 EVEN, 1 EDGES, 2 INTEGER, 3 EVEN with
 * float32_linspace (NumPy 2's float32 edges of f32 samples; plain EVEN for other types). For EDGES,
 * *edges_keep receives a float64 C-contiguous array of bins + 1 edges, to release after the
 * call. @return 1, or 0 with an exception set. */
static int build_spec(int kind, unsigned long long bins, double lower, double upper,
                      PyObject *edges_obj, long long integer_lower, int last_inclusive, int clamp,
                      gpuhist_bin_spec *spec, PyArrayObject **edges_keep)
{
    *edges_keep = NULL;
    if (bins > UINT32_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "bins: %llu bins, the library counts at most 4294967295 per histogram",
                     bins);
        return 0;
    }
    switch (kind) {
    case 0:
    case 3:
        *spec = gpuhist_bins_even((uint32_t)bins, lower, upper);
        spec->float32_linspace = kind == 3;
        break;
    case 1: {
        if (!edges_obj || edges_obj == Py_None) {
            PyErr_SetString(PyExc_ValueError, "edges: missing");
            return 0;
        }
        PyArrayObject *e = (PyArrayObject *)PyArray_FROM_OTF(edges_obj, NPY_FLOAT64,
                                                             NPY_ARRAY_IN_ARRAY);
        if (!e)
            return 0;
        if (PyArray_NDIM(e) != 1 || (unsigned long long)PyArray_SIZE(e) != bins + 1) {
            Py_DECREF(e);
            PyErr_Format(PyExc_ValueError, "edges: %llu bins need %llu edges", bins, bins + 1);
            return 0;
        }
        *spec = gpuhist_bins_edges((uint32_t)bins, (const double *)PyArray_DATA(e));
        *edges_keep = e;
        break;
    }
    case 2:
        *spec = gpuhist_bins_integer((uint32_t)bins, (int64_t)integer_lower);
        break;
    default:
        PyErr_Format(PyExc_ValueError, "gpuhist: bin kind %d is not 0, 1, 2 or 3", kind);
        return 0;
    }
    spec->last_edge_inclusive = last_inclusive != 0;
    spec->outliers = clamp ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
    return 1;
}

/* A writable, native, C-contiguous array of exactly `n` items of `itemsize` bytes and the right
 * kind ('i' integer, 'f' float). @return its data, or NULL with an exception set. */
static void *output_buffer(PyObject *obj, const char *what, npy_intp n, char kind)
{
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "gpuhist: %s must be a NumPy array", what);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int type = PyArray_TYPE(a);
    int ok_kind = kind == 'i' ? (PyTypeNum_ISINTEGER(type) && PyArray_ITEMSIZE(a) == 8)
                              : type == NPY_FLOAT64;
    if (!ok_kind || !PyArray_ISCARRAY(a) || !PyArray_ISNOTSWAPPED(a) || PyArray_SIZE(a) != n) {
        PyErr_Format(PyExc_ValueError,
                     "gpuhist: %s must be a writable C-contiguous native %s array of %zd items",
                     what, kind == 'i' ? "int64/uint64" : "float64", (Py_ssize_t)n);
        return NULL;
    }
    return PyArray_DATA(a);
}

static PyObject *result_tuple(const gpuhist_result *r)
{
    /* lower / upper only mean something for EVEN bins */
    return Py_BuildValue("(KKKKssdddi)", (unsigned long long)r->underflow[0],
                         (unsigned long long)r->overflow[0], (unsigned long long)r->nan[0],
                         (unsigned long long)r->total[0], r->strategy ? r->strategy : "",
                         gpuhist_backend_name(r->backend), r->seconds, r->lower, r->upper,
                         r->last_edge_inclusive);
}

/* ---- Context ------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    gpuhist_ctx *ctx;
} ContextObject;

static int Context_init(ContextObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"backend", "device", "devices", NULL};
    const char *backend_name = "auto";
    int device = -1;
    PyObject *devices_obj = Py_None; /* None, "all", or a sequence of device numbers */
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|siO", kwlist, &backend_name, &device,
                                     &devices_obj))
        return -1;
    int devices[64], ndevices = -1; /* -1: one device; 0: every device */
    if (PyUnicode_Check(devices_obj)) {
        if (PyUnicode_CompareWithASCIIString(devices_obj, "all") != 0) {
            PyErr_SetString(PyExc_ValueError, "devices: 'all' or a sequence of device numbers");
            return -1;
        }
        ndevices = 0;
    } else if (devices_obj != Py_None) {
        PyObject *seq = PySequence_Fast(devices_obj, "devices: 'all' or a sequence of device "
                                                     "numbers");
        if (!seq)
            return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n < 1 || n > 64) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "devices: %zd device numbers (1 to 64)", n);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; ++i) {
            long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
            if ((v == -1 && PyErr_Occurred()) || v < 0 || v > 4096) {
                Py_DECREF(seq);
                PyErr_Clear();
                PyErr_SetString(PyExc_ValueError, "devices: each must be a device number >= 0");
                return -1;
            }
            devices[i] = (int)v;
        }
        ndevices = (int)n;
        Py_DECREF(seq);
    }
    gpuhist_backend backend;
    if (!gpuhist_backend_parse(backend_name, &backend)) {
        PyErr_Format(PyExc_ValueError,
                     "backend: '%s' is not one of 'auto', 'cpu', 'cuda', 'opencl'", backend_name);
        return -1;
    }
    if (self->ctx) {
        gpuhist_destroy(self->ctx);
        self->ctx = NULL;
    }
    gpuhist_status st;
    gpuhist_ctx *ctx = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (ndevices >= 0)
        st = gpuhist_create_multi(&ctx, backend, ndevices ? devices : NULL, ndevices);
    else
        st = device < 0 ? gpuhist_create(&ctx, backend) : gpuhist_create_on(&ctx, backend, device);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK) {
        raise_status(st, gpuhist_last_error(NULL));
        return -1;
    }
    self->ctx = ctx;
    return 0;
}

static void Context_dealloc(ContextObject *self)
{
    gpuhist_destroy(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_ctx(ContextObject *self)
{
    if (!self->ctx) {
        PyErr_SetString(PyExc_RuntimeError, "gpuhist: the context was not created");
        return 0;
    }
    return 1;
}

static PyObject *Context_backend(ContextObject *self, void *closure)
{
    (void)closure;
    if (!check_ctx(self))
        return NULL;
    return PyUnicode_FromString(gpuhist_backend_name(gpuhist_context_backend(self->ctx)));
}

static PyObject *Context_device_name(ContextObject *self, void *closure)
{
    (void)closure;
    if (!check_ctx(self))
        return NULL;
    return PyUnicode_FromString(gpuhist_device_name(self->ctx));
}

static PyObject *Context_note(ContextObject *self, void *closure)
{
    (void)closure;
    if (!check_ctx(self))
        return NULL;
    return PyUnicode_FromString(gpuhist_backend_note(self->ctx));
}

static PyObject *Context_set_strategy(ContextObject *self, PyObject *arg)
{
    if (!check_ctx(self))
        return NULL;
    const char *name = NULL;
    if (arg != Py_None) {
        name = PyUnicode_AsUTF8(arg);
        if (!name)
            return NULL;
    }
    gpuhist_status st = gpuhist_set_strategy(self->ctx, name);
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    Py_RETURN_NONE;
}

static PyObject *Context_set_threads(ContextObject *self, PyObject *arg)
{
    if (!check_ctx(self))
        return NULL;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    gpuhist_status st = gpuhist_set_threads(self->ctx, (int)n);
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    Py_RETURN_NONE;
}

static PyObject *Context_set_stream(ContextObject *self, PyObject *arg)
{
    if (!check_ctx(self))
        return NULL;
    void *stream = NULL;
    if (arg != Py_None) {
        stream = PyLong_AsVoidPtr(arg);
        if (!stream && PyErr_Occurred())
            return NULL;
    }
    gpuhist_status st = gpuhist_set_stream(self->ctx, stream);
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    Py_RETURN_NONE;
}

static PyObject *Context_set_async(ContextObject *self, PyObject *arg)
{
    if (!check_ctx(self))
        return NULL;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    gpuhist_status st = gpuhist_set_async(self->ctx, on);
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    Py_RETURN_NONE;
}

/* A host array's gpuhist dtype, or -1 with TypeError set. */
static int host_dtype(PyArrayObject *a)
{
    int dt = gpuhist_dtype_of(PyArray_DESCR(a));
    if (dt < 0) {
        PyObject *repr = PyObject_Str((PyObject *)PyArray_DESCR(a));
        PyErr_Format(PyExc_TypeError,
                     "gpuhist: samples of dtype %S are not supported (u8..i64, f32, f64, bool)",
                     repr ? repr : Py_None);
        Py_XDECREF(repr);
    }
    return dt;
}

/* Gathering path: NpyIter over a (and w) into bounded native buffers. */
typedef struct gather {
    NpyIter *iter;
    NpyIter_IterNextFunc *next;
    char **ptrs;
    npy_intp *size;
    int needs_api;
    npy_intp total;
} gather;

static int gather_open(gather *g, PyArrayObject *a, gpuhist_dtype dt, PyArrayObject *w,
                       gpuhist_dtype wdt)
{
    PyArrayObject *ops[2] = {a, w};
    npy_uint32 op_flags[2];
    PyArray_Descr *op_dtypes[2];
    int nop = w ? 2 : 1;
    op_dtypes[0] = PyArray_DescrFromType(numpy_type_of(dt));
    op_dtypes[1] = w ? PyArray_DescrFromType(numpy_type_of(wdt)) : NULL;
    for (int i = 0; i < nop; i++)
        op_flags[i] = NPY_ITER_READONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED | NPY_ITER_CONTIG;
    g->iter = NpyIter_AdvancedNew(nop, ops,
                                  NPY_ITER_EXTERNAL_LOOP | NPY_ITER_BUFFERED |
                                      NPY_ITER_GROWINNER | NPY_ITER_ZEROSIZE_OK,
                                  NPY_KEEPORDER, NPY_SAFE_CASTING, op_flags, op_dtypes, -1, NULL,
                                  NULL, BUFFER_SAMPLES);
    Py_DECREF(op_dtypes[0]);
    Py_XDECREF(op_dtypes[1]);
    if (!g->iter)
        return 0;
    g->total = NpyIter_GetIterSize(g->iter);
    g->next = NpyIter_GetIterNext(g->iter, NULL);
    if (!g->next) {
        NpyIter_Deallocate(g->iter);
        return 0;
    }
    g->ptrs = NpyIter_GetDataPtrArray(g->iter);
    g->size = NpyIter_GetInnerLoopSizePtr(g->iter);
    g->needs_api = NpyIter_IterationNeedsAPI(g->iter);
    return 1;
}

/* NumPy's treatment of 64-bit integer samples (as_double=(lo, hi)): keep [lo, hi], bin the
 * kept samples rounded to the nearest double. */
typedef struct keep_bounds {
    int on;
    int is_signed;
    long long lo, hi;
    unsigned long long ulo, uhi;
} keep_bounds;

static int parse_keep_bounds(PyObject *obj, gpuhist_dtype dt, keep_bounds *k)
{
    memset(k, 0, sizeof *k);
    if (obj == Py_None)
        return 1;
    if (dt != GPUHIST_I64 && dt != GPUHIST_U64) {
        PyErr_SetString(PyExc_ValueError, "gpuhist: as_double needs int64 or uint64 samples");
        return 0;
    }
    PyObject *lo, *hi;
    if (!PyArg_ParseTuple(obj, "OO", &lo, &hi))
        return 0;
    k->on = 1;
    k->is_signed = dt == GPUHIST_I64;
    if (k->is_signed) {
        k->lo = PyLong_AsLongLong(lo);
        k->hi = PyLong_AsLongLong(hi);
    } else {
        k->ulo = PyLong_AsUnsignedLongLong(lo);
        k->uhi = PyLong_AsUnsignedLongLong(hi);
    }
    return !PyErr_Occurred();
}

/* n native aligned samples at src -> their nearest doubles (the C conversion, as NumPy's
 * astype), -inf below the kept interval and +inf above it. */
static void convert_kept(const keep_bounds *k, const char *src, npy_intp n, double *out)
{
    if (k->is_signed) {
        const long long *x = (const long long *)(const void *)src;
        for (npy_intp i = 0; i < n; ++i)
            out[i] = x[i] < k->lo ? -INFINITY : x[i] > k->hi ? INFINITY : (double)x[i];
    } else {
        const unsigned long long *x = (const unsigned long long *)(const void *)src;
        for (npy_intp i = 0; i < n; ++i)
            out[i] = x[i] < k->ulo ? -INFINITY : x[i] > k->uhi ? INFINITY : (double)x[i];
    }
}

/* minmax(a) -> (min, max, found): the finite min and max as gpuhist_minmax finds them. */
static PyObject *Context_minmax(ContextObject *self, PyObject *args)
{
    PyObject *obj;
    if (!check_ctx(self) || !PyArg_ParseTuple(args, "O", &obj))
        return NULL;
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "gpuhist: minmax needs a NumPy array");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int dt = host_dtype(a);
    if (dt < 0)
        return NULL;
    double mn = 0, mx = 0;
    int found = 0;
    gpuhist_status st = GPUHIST_OK;
    layout l;
    if (PyArray_ISNOTSWAPPED(a) &&
        plain_layout(PyArray_BYTES(a), PyArray_NDIM(a), PyArray_DIMS(a), PyArray_STRIDES(a),
                     PyArray_ITEMSIZE(a), 1, &l)) {
        gpuhist_samples s = gpuhist_samples_1d(NULL, (gpuhist_dtype)dt, 0);
        s.location = GPUHIST_MEMORY_HOST;
        apply_layout(&s, &l);
        Py_BEGIN_ALLOW_THREADS
        st = gpuhist_minmax(self->ctx, &s, &mn, &mx, &found);
        Py_END_ALLOW_THREADS
    } else {
        gather g;
        if (!gather_open(&g, a, (gpuhist_dtype)dt, NULL, GPUHIST_F64))
            return NULL;
        if (g.total > 0) {
            NPY_BEGIN_THREADS_DEF;
            if (!g.needs_api)
                NPY_BEGIN_THREADS;
            do {
                double cmn, cmx;
                int cf = 0;
                gpuhist_samples s = gpuhist_samples_1d(g.ptrs[0], (gpuhist_dtype)dt,
                                                       (uint64_t)*g.size);
                s.location = GPUHIST_MEMORY_HOST;
                st = gpuhist_minmax(self->ctx, &s, &cmn, &cmx, &cf);
                if (st != GPUHIST_OK)
                    break;
                if (cf) {
                    if (!found || cmn < mn)
                        mn = cmn;
                    if (!found || cmx > mx)
                        mx = cmx;
                    found = 1;
                }
            } while (g.next(g.iter));
            NPY_END_THREADS;
        }
        NpyIter_Deallocate(g.iter);
        if (PyErr_Occurred())
            return NULL;
    }
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    return Py_BuildValue("(ddO)", mn, mx, found ? Py_True : Py_False);
}

/*
 * histogram(a, kind, bins, lower, upper, edges, integer_lower, last_inclusive, clamp, counts,
 *           weights=None, sums=None, sums_squared=None, edges_out=None, weight_state=None)
 *   -> (underflow, overflow, nan, total, strategy, backend, seconds, lower, upper,
 *       last_inclusive)
 * a: a NumPy array of any shape (bool, u8..i64, f32, f64, any byte order and strides); weights:
 * None or an array of a's shape (any real dtype); counts: int64/uint64 of `bins` items; sums,
 * sums_squared: float64 of `bins` (sums required with weights); edges_out: float64 of bins + 1;
 * weight_state (with weights): int64 of weight_state_words(bins, weights' library dtype,
 * sums_squared given), receiving the call's exact unrounded sums (result.weight_state).
 * as_double (int64/uint64 samples): (lo, hi) Python ints: samples outside [lo, hi] are
 * outliers, the others are binned as their nearest double (NumPy's rule; see the top).
 * accumulate: add into counts and weight_state (required with weights) instead of overwriting
 * them (result.accumulate); sums then hold the accumulated sums, the tallies are this call's.
 * Ranges must be explicit (no auto range): the Python layer resolves NumPy's rules first.
 */
static PyObject *Context_histogram(ContextObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"a", "kind", "bins", "lower", "upper", "edges", "integer_lower",
                             "last_inclusive", "clamp", "counts", "weights", "sums",
                             "sums_squared", "edges_out", "weight_state", "as_double",
                             "accumulate", NULL};
    PyObject *obj, *edges_obj = Py_None, *counts_obj, *weights_obj = Py_None, *sums_obj = Py_None;
    PyObject *sq_obj = Py_None, *edges_out_obj = Py_None, *state_obj = Py_None;
    PyObject *as_double_obj = Py_None;
    int kind, last_inclusive = 0, clamp = 0, accumulate = 0;
    unsigned long long bins;
    double lower = 0, upper = 0;
    long long integer_lower = 0;
    if (!check_ctx(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "OiKddOLppO|OOOOOOp", kwlist, &obj, &kind,
                                     &bins, &lower, &upper, &edges_obj, &integer_lower,
                                     &last_inclusive, &clamp, &counts_obj, &weights_obj,
                                     &sums_obj, &sq_obj, &edges_out_obj, &state_obj,
                                     &as_double_obj, &accumulate))
        return NULL;
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "gpuhist: histogram needs a NumPy array");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int dt = host_dtype(a);
    if (dt < 0)
        return NULL;
    keep_bounds keep;
    if (!parse_keep_bounds(as_double_obj, (gpuhist_dtype)dt, &keep))
        return NULL;
    gpuhist_bin_spec spec;
    PyArrayObject *edges_keep = NULL;
    if (!build_spec(kind, bins, lower, upper, edges_obj, integer_lower, last_inclusive, clamp,
                    &spec, &edges_keep))
        return NULL;
    PyObject *ret = NULL;
    gpuhist_result r = gpuhist_result_host(NULL);
    r.accumulate = accumulate;
    r.counts = output_buffer(counts_obj, "counts", (npy_intp)bins, 'i');
    if (!r.counts)
        goto done;
    if (edges_out_obj != Py_None &&
        !(r.edges = output_buffer(edges_out_obj, "edges_out", (npy_intp)bins + 1, 'f')))
        goto done;

    PyArrayObject *w = NULL;
    gpuhist_dtype wdt = GPUHIST_F64;
    if (weights_obj != Py_None) {
        if (!PyArray_Check(weights_obj)) {
            PyErr_SetString(PyExc_TypeError, "gpuhist: weights must be a NumPy array");
            goto done;
        }
        w = (PyArrayObject *)weights_obj;
        if (!PyArray_SAMESHAPE(a, w)) {
            PyErr_SetString(PyExc_ValueError, "weights should have the same shape as a.");
            goto done;
        }
        if (PyArray_TYPE(w) == NPY_FLOAT32)
            wdt = GPUHIST_F32;
        else if (!PyArray_CanCastSafely(PyArray_TYPE(w), NPY_FLOAT64)) {
            PyObject *repr = PyObject_Str((PyObject *)PyArray_DESCR(w));
            PyErr_Format(PyExc_TypeError,
                         "gpuhist: weights of dtype %S are not supported (real numbers only)",
                         repr ? repr : Py_None);
            Py_XDECREF(repr);
            goto done;
        }
        if (!(r.sums = output_buffer(sums_obj, "sums", (npy_intp)bins, 'f')))
            goto done;
        if (sq_obj != Py_None &&
            !(r.sums_squared = output_buffer(sq_obj, "sums_squared", (npy_intp)bins, 'f')))
            goto done;
        if (state_obj != Py_None) {
            size_t words = gpuhist_weight_state_words((uint32_t)bins, 1, wdt, sq_obj != Py_None);
            if (!(r.weight_state = output_buffer(state_obj, "weight_state", (npy_intp)words, 'i')))
                goto done;
        }
    } else if (state_obj != Py_None) {
        PyErr_SetString(PyExc_ValueError, "gpuhist: weight_state needs weights");
        goto done;
    }

    gpuhist_status st = GPUHIST_OK;
    const char *stream_error = NULL;
    layout l;
    int direct = !keep.on && PyArray_ISNOTSWAPPED(a) &&
                 plain_layout(PyArray_BYTES(a), PyArray_NDIM(a), PyArray_DIMS(a),
                              PyArray_STRIDES(a), PyArray_ITEMSIZE(a), w == NULL, &l);
    if (direct && w) {
        /* the weights must lie in the samples' pixel order: C order, contiguous, native */
        /* (plain_layout without reordering kept a's C order, so C-contiguous weights match) */
        direct = PyArray_ISCARRAY_RO(w) && PyArray_ISNOTSWAPPED(w) &&
                 (PyArray_TYPE(w) == NPY_FLOAT32 || PyArray_TYPE(w) == NPY_FLOAT64);
    }
    if (direct) {
        gpuhist_samples s = gpuhist_samples_1d(NULL, (gpuhist_dtype)dt, 0);
        s.location = GPUHIST_MEMORY_HOST;
        apply_layout(&s, &l);
        if (w) {
            s.weights = PyArray_DATA(w);
            s.weight_dtype = wdt;
        }
        Py_BEGIN_ALLOW_THREADS
        st = gpuhist_histogram(self->ctx, &s, &spec, &r);
        Py_END_ALLOW_THREADS
        if (st != GPUHIST_OK) {
            raise_status(st, gpuhist_last_error(self->ctx));
            goto done;
        }
    } else {
        gather g;
        if (!gather_open(&g, a, (gpuhist_dtype)dt, w, wdt))
            goto done;
        double *converted = NULL;
        if (keep.on && !(converted = PyMem_RawMalloc(AS_DOUBLE_SAMPLES * sizeof(double)))) {
            NpyIter_Deallocate(g.iter);
            PyErr_NoMemory();
            goto done;
        }
        gpuhist_samples lay =
            gpuhist_samples_1d(NULL, keep.on ? GPUHIST_F64 : (gpuhist_dtype)dt, 0);
        lay.location = GPUHIST_MEMORY_HOST;
        if (w) {
            lay.weights = (const void *)&lay; /* any non-NULL value: a weighted stream */
            lay.weight_dtype = wdt;
            lay.stream_no_squares = r.sums_squared == NULL; /* known now */
        }
        size_t wsize = wdt == GPUHIST_F32 ? 4 : 8;
        gpuhist_stream *stream = NULL;
        NPY_BEGIN_THREADS_DEF;
        if (!g.needs_api)
            NPY_BEGIN_THREADS;
        st = gpuhist_stream_begin(self->ctx, &lay, &spec, GPUHIST_MEMORY_HOST, &stream);
        if (st == GPUHIST_OK && g.total > 0) {
            do {
                if (!keep.on) {
                    st = w ? gpuhist_stream_feed_weighted(stream, g.ptrs[0], g.ptrs[1],
                                                          (uint64_t)*g.size)
                           : gpuhist_stream_feed(stream, g.ptrs[0], (uint64_t)*g.size);
                    continue;
                }
                /* the inner loop can be the whole array (GROWINNER without buffering) */
                for (npy_intp at = 0; st == GPUHIST_OK && at < *g.size; at += AS_DOUBLE_SAMPLES) {
                    npy_intp n = *g.size - at < AS_DOUBLE_SAMPLES ? *g.size - at
                                                                  : AS_DOUBLE_SAMPLES;
                    convert_kept(&keep, g.ptrs[0] + at * 8, n, converted);
                    st = w ? gpuhist_stream_feed_weighted(stream, converted,
                                                          g.ptrs[1] + (size_t)at * wsize,
                                                          (uint64_t)n)
                           : gpuhist_stream_feed(stream, converted, (uint64_t)n);
                }
            } while (st == GPUHIST_OK && g.next(g.iter));
        }
        char message[512];
        if (stream) {
            if (st != GPUHIST_OK) {
                snprintf(message, sizeof message, "%s", gpuhist_stream_error(stream));
                gpuhist_stream_abort(stream);
                stream_error = message;
            } else {
                st = gpuhist_stream_finish(stream, &r);
                if (st != GPUHIST_OK)
                    stream_error = gpuhist_last_error(self->ctx);
            }
        } else if (st != GPUHIST_OK) {
            stream_error = gpuhist_last_error(self->ctx);
        }
        NPY_END_THREADS;
        NpyIter_Deallocate(g.iter);
        PyMem_RawFree(converted);
        if (PyErr_Occurred())
            goto done;
        if (st != GPUHIST_OK) {
            raise_status(st, stream_error);
            goto done;
        }
        /* a stream's seconds run from begin to finish: the whole gathering pass */
    }
    ret = result_tuple(&r);
done:
    Py_XDECREF(edges_keep);
    return ret;
}

/* The library's spec of each of `dims` axes from the Python layer's tuples (kind, bins, lower,
 * upper, edges or None, integer_lower, last_inclusive) and the product of their bins (at most
 * 2^31). keep[] holds the edge arrays the specs point into (the caller releases them). */
static int nd_specs(PyObject *specs, npy_intp dims, gpuhist_bin_spec *axes, PyArrayObject **keep,
                    npy_intp *total)
{
    *total = 1;
    for (npy_intp d = 0; d < dims; ++d) {
        int kind, last_inclusive;
        unsigned long long bins;
        double lower, upper;
        long long integer_lower;
        PyObject *edges_obj;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(specs, d), "iKddOLp", &kind, &bins, &lower,
                              &upper, &edges_obj, &integer_lower, &last_inclusive) ||
            !build_spec(kind, bins, lower, upper, edges_obj, integer_lower, last_inclusive, 0,
                        &axes[d], &keep[d]))
            return 0;
        if (bins > ((unsigned long long)1 << 31) / (unsigned long long)*total) {
            PyErr_SetString(PyExc_ValueError, "gpuhist: the product of the bins is more than "
                                              "2^31 (the most joint bins of a histogram)");
            return 0;
        }
        *total *= (npy_intp)(bins ? bins : 1);
    }
    return 1;
}

/* gpuhist_histogramdd with the GIL released: (out, nan, total, strategy, backend, seconds), or
 * NULL with the library's error raised. */
static PyObject *nd_call(ContextObject *self, const gpuhist_points *p,
                         const gpuhist_bin_spec *axes, gpuhist_nd_result *r)
{
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_histogramdd(self->ctx, p, axes, r);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK) {
        raise_status(st, gpuhist_last_error(self->ctx));
        return NULL;
    }
    return Py_BuildValue("(KKKssd)", (unsigned long long)r->out, (unsigned long long)r->nan,
                         (unsigned long long)r->total, r->strategy ? r->strategy : "",
                         gpuhist_backend_name(r->backend), r->seconds);
}

/*
 * histogramdd(sample, specs, counts, weights=None, sums=None, weight_state=None,
 *             sums_squared=None, accumulate=False)
 *   -> (out, nan, total, strategy, backend, seconds)
 * sample: a 2-D NumPy array (points, dims), native byte order, of a library dtype, C-contiguous
 * (interleaved points) or Fortran-contiguous (one column per axis); specs: one tuple per axis
 * (kind, bins, lower, upper, edges or None, integer_lower, last_inclusive); counts: int64 of the
 * product of the bins; weights: None or a contiguous native float32/float64 array of `points`;
 * sums: float64 of the product (with weights); weight_state (with weights): int64 of
 * weight_state_words(product, weights' library dtype, False), receiving the exact unrounded
 * sums (gpuhist_nd_result.weight_state), which gpuhist.dask merges across chunks; with
 * sums_squared (float64 of the product) the state holds the squares too (its words then
 * weight_state_words(product, dtype, True)). accumulate: add into counts and weight_state
 * (required with weights) instead of overwriting them (gpuhist_nd_result.accumulate); the
 * tallies returned are this call's. The Python layer resolves NumPy's rules first.
 */
static PyObject *Context_histogramdd(ContextObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"sample", "specs", "counts", "weights", "sums", "weight_state",
                             "sums_squared", "accumulate", NULL};
    PyObject *obj, *specs_obj, *counts_obj, *weights_obj = Py_None, *sums_obj = Py_None;
    PyObject *state_obj = Py_None, *sq_obj = Py_None;
    int accumulate = 0;
    if (!check_ctx(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "OOO|OOOOp", kwlist, &obj, &specs_obj,
                                     &counts_obj, &weights_obj, &sums_obj, &state_obj, &sq_obj,
                                     &accumulate))
        return NULL;
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 2) {
        PyErr_SetString(PyExc_TypeError, "gpuhist: histogramdd needs a 2-D NumPy array");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int dt = host_dtype(a);
    if (dt < 0)
        return NULL;
    int c_order = PyArray_IS_C_CONTIGUOUS(a), f_order = PyArray_IS_F_CONTIGUOUS(a);
    if (!PyArray_ISNOTSWAPPED(a) || !(c_order || f_order)) {
        PyErr_SetString(PyExc_ValueError,
                        "gpuhist: histogramdd needs a native C- or Fortran-contiguous sample");
        return NULL;
    }
    npy_intp n = PyArray_DIM(a, 0), dims = PyArray_DIM(a, 1);
    PyObject *specs = PySequence_Fast(specs_obj, "gpuhist: specs must be a sequence");
    if (!specs)
        return NULL;
    if (dims < 1 || dims > GPUHIST_MAX_DIMS || PySequence_Fast_GET_SIZE(specs) != dims) {
        Py_DECREF(specs);
        PyErr_Format(PyExc_ValueError, "gpuhist: %zd dimensions with %zd bin specs (1 to %d)",
                     (Py_ssize_t)dims, PySequence_Fast_GET_SIZE(specs), GPUHIST_MAX_DIMS);
        return NULL;
    }
    PyObject *ret = NULL;
    gpuhist_bin_spec axes[GPUHIST_MAX_DIMS];
    PyArrayObject *keep[GPUHIST_MAX_DIMS] = {0};
    npy_intp total = 1;
    if (!nd_specs(specs, dims, axes, keep, &total))
        goto done;
    gpuhist_points p;
    memset(&p, 0, sizeof p);
    p.dims = (uint32_t)dims;
    p.dtype = (gpuhist_dtype)dt;
    p.count = (uint64_t)n;
    p.location = GPUHIST_MEMORY_HOST;
    if (c_order) {
        p.data = PyArray_DATA(a);
    } else {
        for (npy_intp d = 0; d < dims; ++d)
            p.columns[d] = PyArray_BYTES(a) + d * PyArray_STRIDE(a, 1);
    }
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.accumulate = accumulate;
    if (!(r.counts = output_buffer(counts_obj, "counts", total, 'i')))
        goto done;
    if (weights_obj != Py_None) {
        PyArrayObject *w = (PyArrayObject *)weights_obj;
        if (!PyArray_Check(weights_obj) || !PyArray_ISCARRAY_RO(w) || !PyArray_ISNOTSWAPPED(w) ||
            PyArray_SIZE(w) != n ||
            (PyArray_TYPE(w) != NPY_FLOAT32 && PyArray_TYPE(w) != NPY_FLOAT64)) {
            PyErr_SetString(PyExc_ValueError, "gpuhist: weights must be a contiguous native "
                                              "float32/float64 array of one weight per point");
            goto done;
        }
        p.weights = PyArray_DATA(w);
        p.weight_dtype = PyArray_TYPE(w) == NPY_FLOAT32 ? GPUHIST_F32 : GPUHIST_F64;
        if (!(r.sums = output_buffer(sums_obj, "sums", total, 'f')))
            goto done;
        if (sq_obj != Py_None && !(r.sums_squared = output_buffer(sq_obj, "sums_squared", total,
                                                                  'f')))
            goto done;
        if (state_obj != Py_None) {
            size_t words = gpuhist_weight_state_words((uint32_t)total, 1, p.weight_dtype,
                                                      sq_obj != Py_None);
            if (!(r.weight_state = output_buffer(state_obj, "weight_state", (npy_intp)words, 'i')))
                goto done;
        }
    } else if (state_obj != Py_None || sq_obj != Py_None) {
        PyErr_SetString(PyExc_ValueError, "gpuhist: weight_state and sums_squared need weights");
        goto done;
    }
    ret = nd_call(self, &p, axes, &r);
done:
    for (int d = 0; d < GPUHIST_MAX_DIMS; ++d)
        Py_XDECREF(keep[d]);
    Py_DECREF(specs);
    return ret;
}

/*
 * histogramdd_raw(columns, dtype, count, specs, counts_ptr, counts_device, stats_ptr=None,
 *                 accumulate=False) -> (out, nan, total, strategy, backend, seconds)
 * Points in device memory (a CUDA context of one device), unweighted: `columns` one raw pointer
 * per axis to `count` contiguous values of dtype (a name), or one int: the pointer of an
 * interleaved (count, dims) C-contiguous array, dims given by specs. Counts to a raw pointer
 * (device memory when counts_device, else host), stats_ptr: 4 device uint64 (nan, out, 0,
 * total; gpuhist_nd_result.device_stats). accumulate: add into them (result.accumulate); with
 * the context asynchronous and device counts the call only enqueues its work and the tallies
 * returned are 0.
 */
static PyObject *Context_histogramdd_raw(ContextObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"columns", "dtype", "count", "specs", "counts_ptr",
                             "counts_device", "stats_ptr", "accumulate", NULL};
    PyObject *cols_obj, *dtype_obj, *specs_obj, *counts_ptr_obj, *stats_ptr_obj = Py_None;
    unsigned long long count;
    int counts_device, accumulate = 0;
    if (!check_ctx(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "OOKOOp|Op", kwlist, &cols_obj, &dtype_obj,
                                     &count, &specs_obj, &counts_ptr_obj, &counts_device,
                                     &stats_ptr_obj, &accumulate))
        return NULL;
    gpuhist_dtype dt;
    if (!parse_dtype_name(dtype_obj, &dt))
        return NULL;
    PyObject *specs = PySequence_Fast(specs_obj, "gpuhist: specs must be a sequence");
    if (!specs)
        return NULL;
    const npy_intp dims = PySequence_Fast_GET_SIZE(specs);
    PyObject *ret = NULL;
    gpuhist_bin_spec axes[GPUHIST_MAX_DIMS];
    PyArrayObject *keep[GPUHIST_MAX_DIMS] = {0};
    npy_intp total = 1;
    gpuhist_points p;
    memset(&p, 0, sizeof p);
    if (dims < 1 || dims > GPUHIST_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "gpuhist: %zd bin specs (1 to %d dimensions)",
                     (Py_ssize_t)dims, GPUHIST_MAX_DIMS);
        goto done;
    }
    if (!nd_specs(specs, dims, axes, keep, &total))
        goto done;
    p.dims = (uint32_t)dims;
    p.dtype = dt;
    p.count = count;
    p.location = GPUHIST_MEMORY_DEVICE;
    if (PyLong_Check(cols_obj)) {
        if (!(p.data = PyLong_AsVoidPtr(cols_obj)) && PyErr_Occurred())
            goto done;
    } else {
        if (!PySequence_Check(cols_obj) || PySequence_Size(cols_obj) != dims) {
            PyErr_SetString(PyExc_ValueError,
                            "gpuhist: columns must be one pointer per axis, or one pointer");
            goto done;
        }
        for (npy_intp d = 0; d < dims; ++d) {
            PyObject *c = PySequence_GetItem(cols_obj, d);
            if (!c)
                goto done;
            p.columns[d] = PyLong_AsVoidPtr(c);
            Py_DECREF(c);
            if (!p.columns[d] && PyErr_Occurred())
                goto done;
        }
    }
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.accumulate = accumulate;
    r.counts_location = counts_device ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    if (!(r.counts = PyLong_AsVoidPtr(counts_ptr_obj)) && PyErr_Occurred())
        goto done;
    if (stats_ptr_obj != Py_None &&
        !(r.device_stats = PyLong_AsVoidPtr(stats_ptr_obj)) && PyErr_Occurred())
        goto done;
    ret = nd_call(self, &p, axes, &r);
done:
    for (int d = 0; d < GPUHIST_MAX_DIMS; ++d)
        Py_XDECREF(keep[d]);
    Py_DECREF(specs);
    return ret;
}

/* A device (or host) buffer described by the Python layer: pointer, dtype name, shape, byte
 * strides (None: C-contiguous). */
static int raw_layout(PyObject *ptr_obj, PyObject *shape_obj, PyObject *strides_obj,
                      size_t itemsize, int reorder, layout *out)
{
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    const char *ptr = PyLong_AsVoidPtr(ptr_obj);
    if (!ptr && PyErr_Occurred())
        return 0;
    Py_ssize_t nd = PySequence_Size(shape_obj);
    if (nd < 0 || nd > NPY_MAXDIMS) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "gpuhist: too many dimensions");
        return 0;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *v = PySequence_GetItem(shape_obj, i);
        if (!v)
            return 0;
        shape[i] = (npy_intp)PyLong_AsSsize_t(v);
        Py_DECREF(v);
        if (shape[i] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "gpuhist: negative dimension");
            return 0;
        }
    }
    if (strides_obj == Py_None) {
        npy_intp s = (npy_intp)itemsize;
        for (Py_ssize_t i = nd - 1; i >= 0; i--) {
            strides[i] = s;
            s *= shape[i];
        }
    } else {
        if (PySequence_Size(strides_obj) != nd) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "gpuhist: strides and shape differ in length");
            return 0;
        }
        for (Py_ssize_t i = 0; i < nd; i++) {
            PyObject *v = PySequence_GetItem(strides_obj, i);
            if (!v)
                return 0;
            strides[i] = (npy_intp)PyLong_AsSsize_t(v);
            Py_DECREF(v);
            if (PyErr_Occurred())
                return 0;
        }
    }
    if (!plain_layout(ptr, (int)nd, shape, strides, (npy_intp)itemsize, reorder, out)) {
        PyErr_SetString(PyExc_ValueError,
                        "gpuhist: this device array's strides are not contiguous rows; make it "
                        "contiguous first (cupy.ascontiguousarray / tensor.contiguous())");
        return 0;
    }
    return 1;
}

/* The spec of a bin-count rule (gpuhist_bins_rule_numpy) as (bins, lower, upper). */
static PyObject *rule_result(ContextObject *self, gpuhist_status st, const gpuhist_bin_spec *spec)
{
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    return Py_BuildValue("(kdd)", (unsigned long)spec->bins, spec->lower, spec->upper);
}

static int parse_range(PyObject *range_obj, double range[2])
{
    if (range_obj == Py_None)
        return 1;
    return PyArg_ParseTuple(range_obj, "dd", &range[0], &range[1]);
}

/*
 * bins_rule(a, rule, range=None, max_bins=0, numpy_major=0) -> (bins, lower, upper): the even
 * bins of NumPy's bin-count rule `rule` for a NumPy array, by the rules of that NumPy major
 * version (gpuhist_bins_rule_numpy: 1 or 2; 0, NumPy 2's). A rule depends only on the values, so any layout the
 * library reads in place (order ignored) is passed as is; anything else (byte-swapped, strided
 * 1-D, broadcast) is first copied to a native contiguous array (a rule reads its data several
 * times, some copy it anyway).
 */
static PyObject *Context_bins_rule(ContextObject *self, PyObject *args)
{
    PyObject *obj, *range_obj = Py_None;
    const char *rule;
    unsigned long max_bins = 0;
    int numpy_major = 0;
    double range[2] = {0, 0};
    if (!check_ctx(self) ||
        !PyArg_ParseTuple(args, "Os|Oki", &obj, &rule, &range_obj, &max_bins, &numpy_major) ||
        !parse_range(range_obj, range))
        return NULL;
    if (!PyArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "gpuhist: bins_rule needs a NumPy array");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)obj;
    int dt = host_dtype(a);
    if (dt < 0)
        return NULL;
    PyArrayObject *copy = NULL;
    layout l;
    if (!PyArray_ISNOTSWAPPED(a) ||
        !plain_layout(PyArray_BYTES(a), PyArray_NDIM(a), PyArray_DIMS(a), PyArray_STRIDES(a),
                      PyArray_ITEMSIZE(a), 1, &l)) {
        copy = (PyArrayObject *)PyArray_FromAny(obj, PyArray_DescrFromType(numpy_type_of(dt)),
                                                0, 0, NPY_ARRAY_CARRAY_RO, NULL);
        if (!copy)
            return NULL;
        l.data = PyArray_BYTES(copy);
        l.count = (uint64_t)PyArray_SIZE(copy);
        l.rows = l.row_length = 0;
        l.row_stride = 0;
    }
    gpuhist_samples s = gpuhist_samples_1d(NULL, (gpuhist_dtype)dt, 0);
    s.location = GPUHIST_MEMORY_HOST;
    apply_layout(&s, &l);
    gpuhist_bin_spec spec;
    memset(&spec, 0, sizeof spec);
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_bins_rule_numpy(self->ctx, &s, rule, range_obj == Py_None ? NULL : range, &spec,
                                 (uint32_t)max_bins, numpy_major);
    Py_END_ALLOW_THREADS
    Py_XDECREF(copy);
    return rule_result(self, st, &spec);
}

/* bins_rule_raw(ptr, dtype, shape, strides, device, rule, range=None, max_bins=0,
 *               numpy_major=0) */
static PyObject *Context_bins_rule_raw(ContextObject *self, PyObject *args)
{
    PyObject *ptr_obj, *dtype_obj, *shape_obj, *strides_obj, *range_obj = Py_None;
    int device;
    const char *rule;
    unsigned long max_bins = 0;
    int numpy_major = 0;
    double range[2] = {0, 0};
    if (!check_ctx(self) ||
        !PyArg_ParseTuple(args, "OOOOps|Oki", &ptr_obj, &dtype_obj, &shape_obj, &strides_obj,
                          &device, &rule, &range_obj, &max_bins, &numpy_major) ||
        !parse_range(range_obj, range))
        return NULL;
    gpuhist_dtype dt;
    if (!parse_dtype_name(dtype_obj, &dt))
        return NULL;
    layout l;
    if (!raw_layout(ptr_obj, shape_obj, strides_obj, gpuhist_dtype_size(dt), 1, &l))
        return NULL;
    gpuhist_samples s = gpuhist_samples_1d(NULL, dt, 0);
    apply_layout(&s, &l);
    s.location = device ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    gpuhist_bin_spec spec;
    memset(&spec, 0, sizeof spec);
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_bins_rule_numpy(self->ctx, &s, rule, range_obj == Py_None ? NULL : range, &spec,
                                 (uint32_t)max_bins, numpy_major);
    Py_END_ALLOW_THREADS
    return rule_result(self, st, &spec);
}

/*
 * histogram_raw(ptr, dtype, shape, strides, device, kind, bins, lower, upper, edges,
 *               integer_lower, last_inclusive, clamp, counts_ptr, counts_device,
 *               stats_ptr=0, edges_out=None, weights_ptr=None, weight_dtype=None,
 *               sums=None, sums_squared=None, weight_state=None)
 * Samples at a raw pointer (device memory when `device`), counts to a raw pointer (device
 * memory when counts_device), optional device_stats (4 uint64 on the device). Weighted when
 * weights_ptr is given: one weight of weight_dtype ('f32'/'f64') per sample in the samples'
 * C order, in the samples' memory; sums (and sums_squared) float64 host arrays of `bins`
 * (the library decides whether the backend sums weights: UNSUPPORTED otherwise);
 * weight_state (host int64 of weight_state_words(bins, weight_dtype, sums_squared given)): the
 * call's exact unrounded sums, as Context.histogram's.
 * accumulate: add into the counts, device_stats and weight state (result.accumulate); with
 * counts_device the state is state_ptr, a device buffer of weight_state_words int64 (required
 * with weights); with the context asynchronous the call then only enqueues its work.
 */
static PyObject *Context_histogram_raw(ContextObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"ptr", "dtype", "shape", "strides", "device", "kind", "bins",
                             "lower", "upper", "edges", "integer_lower", "last_inclusive",
                             "clamp", "counts_ptr", "counts_device", "stats_ptr", "edges_out",
                             "weights_ptr", "weight_dtype", "sums", "sums_squared", "weight_state",
                             "accumulate", "state_ptr", NULL};
    PyObject *ptr_obj, *dtype_obj, *shape_obj, *strides_obj, *edges_obj, *counts_ptr_obj;
    PyObject *stats_ptr_obj = Py_None, *edges_out_obj = Py_None, *wptr_obj = Py_None;
    PyObject *wdt_obj = Py_None, *sums_obj = Py_None, *sq_obj = Py_None, *state_obj = Py_None;
    PyObject *state_ptr_obj = Py_None;
    int device, kind, last_inclusive, clamp, counts_device, accumulate = 0;
    unsigned long long bins;
    double lower, upper;
    long long integer_lower;
    if (!check_ctx(self) ||
        !PyArg_ParseTupleAndKeywords(args, kwds, "OOOOpiKddOLppOp|OOOOOOOpO", kwlist, &ptr_obj,
                                     &dtype_obj, &shape_obj, &strides_obj, &device, &kind, &bins,
                                     &lower, &upper, &edges_obj, &integer_lower, &last_inclusive,
                                     &clamp, &counts_ptr_obj, &counts_device, &stats_ptr_obj,
                                     &edges_out_obj, &wptr_obj, &wdt_obj, &sums_obj, &sq_obj,
                                     &state_obj, &accumulate, &state_ptr_obj))
        return NULL;
    gpuhist_dtype dt, wdt = GPUHIST_F64;
    if (!parse_dtype_name(dtype_obj, &dt))
        return NULL;
    const int weighted = wptr_obj != Py_None;
    if (weighted && (!parse_dtype_name(wdt_obj, &wdt) ||
                     (wdt != GPUHIST_F32 && wdt != GPUHIST_F64))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "gpuhist: weight_dtype must be 'f32' or 'f64'");
        return NULL;
    }
    layout l;
    /* weights lie in the samples' C order: no reordering of the layout then */
    if (!raw_layout(ptr_obj, shape_obj, strides_obj, gpuhist_dtype_size(dt), !weighted, &l))
        return NULL;
    gpuhist_bin_spec spec;
    PyArrayObject *edges_keep = NULL;
    if (!build_spec(kind, bins, lower, upper, edges_obj, integer_lower, last_inclusive, clamp,
                    &spec, &edges_keep))
        return NULL;
    PyObject *ret = NULL;
    gpuhist_samples s = gpuhist_samples_1d(NULL, dt, 0);
    apply_layout(&s, &l);
    s.location = device ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    gpuhist_result r = gpuhist_result_host(NULL);
    r.accumulate = accumulate;
    r.counts = PyLong_AsVoidPtr(counts_ptr_obj);
    if (!r.counts && PyErr_Occurred())
        goto done;
    r.counts_location = counts_device ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    if (stats_ptr_obj != Py_None) {
        r.device_stats = PyLong_AsVoidPtr(stats_ptr_obj);
        if (!r.device_stats && PyErr_Occurred())
            goto done;
    }
    if (edges_out_obj != Py_None &&
        !(r.edges = output_buffer(edges_out_obj, "edges_out", (npy_intp)bins + 1, 'f')))
        goto done;
    if (weighted) {
        s.weights = PyLong_AsVoidPtr(wptr_obj);
        if (!s.weights && PyErr_Occurred())
            goto done;
        s.weight_dtype = wdt;
        if (!(r.sums = output_buffer(sums_obj, "sums", (npy_intp)bins, 'f')))
            goto done;
        if (sq_obj != Py_None &&
            !(r.sums_squared = output_buffer(sq_obj, "sums_squared", (npy_intp)bins, 'f')))
            goto done;
        if (state_obj != Py_None && state_ptr_obj != Py_None) {
            PyErr_SetString(PyExc_ValueError, "gpuhist: weight_state or state_ptr, not both");
            goto done;
        }
        if (state_ptr_obj != Py_None) { /* the caller sized it: weight_state_words */
            r.weight_state = PyLong_AsVoidPtr(state_ptr_obj);
            if (!r.weight_state && PyErr_Occurred())
                goto done;
        } else if (state_obj != Py_None) {
            size_t words = gpuhist_weight_state_words((uint32_t)bins, 1, wdt, sq_obj != Py_None);
            if (!(r.weight_state = output_buffer(state_obj, "weight_state", (npy_intp)words, 'i')))
                goto done;
        }
    } else if (state_obj != Py_None || sums_obj != Py_None || state_ptr_obj != Py_None) {
        PyErr_SetString(PyExc_ValueError, "gpuhist: sums and weight_state need weights");
        goto done;
    }
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_histogram(self->ctx, &s, &spec, &r);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK) {
        raise_status(st, gpuhist_last_error(self->ctx));
        goto done;
    }
    ret = result_tuple(&r);
done:
    Py_XDECREF(edges_keep);
    return ret;
}

/* minmax_raw(ptr, dtype, shape, strides, device) -> (min, max, found) */
static PyObject *Context_minmax_raw(ContextObject *self, PyObject *args)
{
    PyObject *ptr_obj, *dtype_obj, *shape_obj, *strides_obj;
    int device;
    if (!check_ctx(self) ||
        !PyArg_ParseTuple(args, "OOOOp", &ptr_obj, &dtype_obj, &shape_obj, &strides_obj, &device))
        return NULL;
    gpuhist_dtype dt;
    if (!parse_dtype_name(dtype_obj, &dt))
        return NULL;
    layout l;
    if (!raw_layout(ptr_obj, shape_obj, strides_obj, gpuhist_dtype_size(dt), 1, &l))
        return NULL;
    gpuhist_samples s = gpuhist_samples_1d(NULL, dt, 0);
    apply_layout(&s, &l);
    s.location = device ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    double mn = 0, mx = 0;
    int found = 0;
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_minmax(self->ctx, &s, &mn, &mx, &found);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK)
        return raise_status(st, gpuhist_last_error(self->ctx));
    return Py_BuildValue("(ddO)", mn, mx, found ? Py_True : Py_False);
}

static PyMethodDef Context_methods[] = {
    {"set_strategy", (PyCFunction)Context_set_strategy, METH_O,
     "set_strategy(name or None): force a strategy of this backend (None: automatic)."},
    {"set_threads", (PyCFunction)Context_set_threads, METH_O,
     "set_threads(n): CPU threads (0 = all cores)."},
    {"set_stream", (PyCFunction)Context_set_stream, METH_O,
     "set_stream(ptr or None): the cudaStream_t all device work is ordered on."},
    {"set_async", (PyCFunction)Context_set_async, METH_O,
     "set_async(bool): return before device work finishes (device samples and counts)."},
    {"minmax", (PyCFunction)Context_minmax, METH_VARARGS,
     "minmax(a) -> (min, max, found): the finite min and max of a NumPy array."},
    {"histogram", (PyCFunction)(void (*)(void))Context_histogram, METH_VARARGS | METH_KEYWORDS,
     "histogram(a, kind, bins, lower, upper, edges, integer_lower, last_inclusive, clamp, "
     "counts, weights=None, sums=None, sums_squared=None, edges_out=None, weight_state=None, "
     "as_double=None, accumulate=False) -> tallies tuple."},
    {"histogramdd", (PyCFunction)(void (*)(void))Context_histogramdd,
     METH_VARARGS | METH_KEYWORDS,
     "histogramdd(sample, specs, counts, weights=None, sums=None, weight_state=None, "
     "sums_squared=None, accumulate=False) -> tallies (N-D)."},
    {"histogramdd_raw", (PyCFunction)(void (*)(void))Context_histogramdd_raw,
     METH_VARARGS | METH_KEYWORDS,
     "histogramdd_raw(columns, dtype, count, specs, counts_ptr, counts_device, stats_ptr=None, "
     "accumulate=False) -> tallies (N-D points in device memory)."},
    {"histogram_raw", (PyCFunction)(void (*)(void))Context_histogram_raw,
     METH_VARARGS | METH_KEYWORDS,
     "histogram_raw(ptr, dtype, shape, strides, device, kind, bins, lower, upper, edges, "
     "integer_lower, last_inclusive, clamp, counts_ptr, counts_device, stats_ptr=None, "
     "edges_out=None, weights_ptr=None, weight_dtype=None, sums=None, sums_squared=None, "
     "weight_state=None, accumulate=False, state_ptr=None) -> tallies tuple (raw pointers: "
     "device arrays)."},
    {"minmax_raw", (PyCFunction)Context_minmax_raw, METH_VARARGS,
     "minmax_raw(ptr, dtype, shape, strides, device) -> (min, max, found)."},
    {"bins_rule", (PyCFunction)Context_bins_rule, METH_VARARGS,
     "bins_rule(a, rule, range=None, max_bins=0, numpy_major=0) -> (bins, lower, upper): "
     "NumPy's bin-count rule (gpuhist_bins_rule_numpy: NumPy 1.x's or 2's; 0: 2's)."},
    {"bins_rule_raw", (PyCFunction)Context_bins_rule_raw, METH_VARARGS,
     "bins_rule_raw(ptr, dtype, shape, strides, device, rule, range=None, max_bins=0, "
     "numpy_major=0) -> (bins, lower, upper)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Context_getset[] = {
    {"backend", (getter)Context_backend, NULL, "the backend this context runs on", NULL},
    {"device_name", (getter)Context_device_name, NULL, "the device's name", NULL},
    {"note", (getter)Context_note, NULL, "why 'auto' chose this backend", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ContextType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpuhist._core.Context",
    .tp_basicsize = sizeof(ContextObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Context(backend='auto', device=-1): a gpuhist context (one thread at a time).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Context_init,
    .tp_dealloc = (destructor)Context_dealloc,
    .tp_methods = Context_methods,
    .tp_getset = Context_getset,
};

/* ---- module functions ---------------------------------------------------------------------- */

/* compute_edges(kind, bins, lower, upper, integer_lower, dtype) -> float64 array of bins + 1 */
static PyObject *mod_compute_edges(PyObject *mod, PyObject *args)
{
    (void)mod;
    int kind;
    unsigned long long bins;
    double lower, upper;
    long long integer_lower;
    PyObject *dtype_obj;
    if (!PyArg_ParseTuple(args, "iKddLO", &kind, &bins, &lower, &upper, &integer_lower,
                          &dtype_obj))
        return NULL;
    gpuhist_dtype dt;
    if (!parse_dtype_name(dtype_obj, &dt))
        return NULL;
    if (kind == 1) {
        PyErr_SetString(PyExc_ValueError, "compute_edges: explicit edges are already edges");
        return NULL;
    }
    gpuhist_bin_spec spec;
    PyArrayObject *keep = NULL;
    if (!build_spec(kind, bins, lower, upper, Py_None, integer_lower, 0, 0, &spec, &keep))
        return NULL;
    npy_intp n = (npy_intp)bins + 1;
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_FLOAT64);
    if (!out)
        return NULL;
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_compute_edges(&spec, dt, (double *)PyArray_DATA(out));
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK) {
        Py_DECREF(out);
        /* compute_edges has no context to carry a message */
        return raise_status(st, "bins: these bins are invalid for the range (too many bins for "
                                "the range, or bins < 1)");
    }
    return (PyObject *)out;
}

static PyObject *mod_strategies(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    size_t n = gpuhist_strategy_count();
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        PyObject *t = Py_BuildValue("(sssss)", d.name, gpuhist_backend_name(d.backend),
                                    d.seed ? d.seed : "", d.supports ? d.supports : "",
                                    d.summary ? d.summary : "");
        if (!t || PyList_Append(list, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(t);
    }
    return list;
}

static PyObject *mod_backend_compiled(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    gpuhist_backend b;
    if (!gpuhist_backend_parse(name, &b)) {
        PyErr_Format(PyExc_ValueError, "backend: '%s' is not one of 'auto', 'cpu', 'cuda', "
                                       "'opencl'", name);
        return NULL;
    }
    return PyBool_FromLong(gpuhist_backend_compiled(b));
}

static PyObject *mod_list_devices(PyObject *mod, PyObject *arg)
{
    (void)mod;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    gpuhist_backend b;
    if (!gpuhist_backend_parse(name, &b)) {
        PyErr_Format(PyExc_ValueError, "backend: '%s' is unknown", name);
        return NULL;
    }
    char buf[8192];
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_list_devices(b, buf, sizeof buf);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK)
        return PyUnicode_FromString("");
    return PyUnicode_FromString(buf);
}

static PyObject *mod_host_memory_available(PyObject *mod, PyObject *noargs)
{
    (void)mod;
    (void)noargs;
    return PyLong_FromUnsignedLongLong(gpuhist_host_memory_available());
}

static PyObject *mod_layout(PyObject *mod, PyObject *args)
{
    /* layout(shape, strides, itemsize, reorder) -> (offset, count, rows, row_length,
     * row_stride) or None: how the library would see an array (tests and device arrays). */
    (void)mod;
    PyObject *shape_obj, *strides_obj;
    Py_ssize_t itemsize;
    int reorder;
    if (!PyArg_ParseTuple(args, "OOnp", &shape_obj, &strides_obj, &itemsize, &reorder))
        return NULL;
    PyObject *base = PyLong_FromSsize_t(1 << 30); /* a pretend base address */
    layout l;
    int ok = raw_layout(base, shape_obj, strides_obj, (size_t)itemsize, reorder, &l);
    Py_DECREF(base);
    if (!ok) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        return NULL;
    }
    return Py_BuildValue("(nKKKn)", (Py_ssize_t)(l.data - (const char *)((size_t)1 << 30)),
                         (unsigned long long)l.count, (unsigned long long)l.rows,
                         (unsigned long long)l.row_length, (Py_ssize_t)l.row_stride);
}

/* ---- DLPack (the legacy, unversioned capsule) ---------------------------------------------- */

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL = C-contiguous */
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

static void dlpack_keeper_free(PyObject *cap)
{
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "gpuhist.dlpack_keeper");
    if (t && t->deleter)
        t->deleter(t);
}

/* dlpack_view(capsule) -> (ptr, dtype, shape, byte_strides or None, device_type, device_id,
 * keeper): consumes a "dltensor" capsule (renamed "used_dltensor"); the tensor is released
 * when `keeper` is. */
static PyObject *mod_dlpack_view(PyObject *mod, PyObject *cap)
{
    (void)mod;
    DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
    if (!t)
        return NULL;
    DLTensor *d = &t->dl_tensor;
    const char *name = NULL;
    if (d->dtype.lanes == 1) {
        if (d->dtype.code == 0) /* kDLInt */
            name = d->dtype.bits == 8 ? "i8" : d->dtype.bits == 16 ? "i16"
                 : d->dtype.bits == 32 ? "i32" : d->dtype.bits == 64 ? "i64" : NULL;
        else if (d->dtype.code == 1) /* kDLUInt */
            name = d->dtype.bits == 8 ? "u8" : d->dtype.bits == 16 ? "u16"
                 : d->dtype.bits == 32 ? "u32" : d->dtype.bits == 64 ? "u64" : NULL;
        else if (d->dtype.code == 2) /* kDLFloat */
            name = d->dtype.bits == 32 ? "f32" : d->dtype.bits == 64 ? "f64" : NULL;
        else if (d->dtype.code == 6 && d->dtype.bits == 8) /* kDLBool */
            name = "u8";
    }
    if (!name) {
        PyErr_Format(PyExc_TypeError,
                     "gpuhist: DLPack dtype (code %d, %d bits, %d lanes) is not supported",
                     d->dtype.code, d->dtype.bits, d->dtype.lanes);
        return NULL;
    }
    if (PyCapsule_SetName(cap, "used_dltensor") < 0)
        return NULL;
    PyObject *keeper = PyCapsule_New(t, "gpuhist.dlpack_keeper", dlpack_keeper_free);
    if (!keeper) {
        if (t->deleter)
            t->deleter(t);
        return NULL;
    }
    size_t itemsize = d->dtype.bits / 8;
    PyObject *shape = PyTuple_New(d->ndim);
    PyObject *strides = d->strides ? PyTuple_New(d->ndim) : Py_NewRef(Py_None);
    if (!shape || !strides)
        goto fail;
    for (int i = 0; i < d->ndim; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(d->shape[i]));
        if (d->strides)
            PyTuple_SET_ITEM(strides, i,
                             PyLong_FromLongLong(d->strides[i] * (long long)itemsize));
    }
    PyObject *ptr = PyLong_FromVoidPtr((char *)d->data + d->byte_offset);
    if (!ptr)
        goto fail;
    return Py_BuildValue("(NsNNiiN)", ptr, name, shape, strides, (int)d->device.device_type,
                         (int)d->device.device_id, keeper);
fail:
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_DECREF(keeper);
    return NULL;
}

/* ---- exact parts: weight states (gpuhist.h, "Exact parts") ------------------------------- */

/* The shape of a state from (bins, weight dtype name, squares); 0 with an exception set. */
static int state_shape(unsigned long long bins, PyObject *wdt_obj, int squares,
                       gpuhist_dtype *wdt, size_t *words)
{
    if (!parse_dtype_name(wdt_obj, wdt))
        return 0;
    *words = bins <= UINT32_MAX ? gpuhist_weight_state_words((uint32_t)bins, 1, *wdt, squares) : 0;
    if (*words == 0) {
        PyErr_Format(PyExc_ValueError,
                     "gpuhist: no weight state of %llu bins with weights of '%U' (1 bin or "
                     "more, float32 or float64 weights)", bins, wdt_obj);
        return 0;
    }
    return 1;
}

/* weight_state_words(bins, weight_dtype, squares) -> int64 words of one channel's state. */
static PyObject *mod_weight_state_words(PyObject *mod, PyObject *args)
{
    unsigned long long bins;
    PyObject *wdt_obj;
    int squares;
    gpuhist_dtype wdt;
    size_t words;
    (void)mod;
    if (!PyArg_ParseTuple(args, "KUp", &bins, &wdt_obj, &squares) ||
        !state_shape(bins, wdt_obj, squares, &wdt, &words))
        return NULL;
    return PyLong_FromSize_t(words);
}

/* weight_state_add(into, from, bins, weight_dtype, squares): into += from, exactly. */
static PyObject *mod_weight_state_add(PyObject *mod, PyObject *args)
{
    PyObject *into_obj, *from_obj, *wdt_obj;
    unsigned long long bins;
    int squares;
    gpuhist_dtype wdt;
    size_t words;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOKUp", &into_obj, &from_obj, &bins, &wdt_obj, &squares) ||
        !state_shape(bins, wdt_obj, squares, &wdt, &words))
        return NULL;
    int64_t *into = output_buffer(into_obj, "into", (npy_intp)words, 'i');
    if (!into)
        return NULL;
    if (!PyArray_Check(from_obj) || PyArray_TYPE((PyArrayObject *)from_obj) != NPY_INT64 ||
        !PyArray_ISCARRAY_RO((PyArrayObject *)from_obj) ||
        !PyArray_ISNOTSWAPPED((PyArrayObject *)from_obj) ||
        PyArray_SIZE((PyArrayObject *)from_obj) != (npy_intp)words) {
        PyErr_Format(PyExc_ValueError,
                     "gpuhist: from must be a C-contiguous native int64 array of %zd items",
                     (Py_ssize_t)words);
        return NULL;
    }
    const int64_t *from = PyArray_DATA((PyArrayObject *)from_obj);
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_weight_state_add(into, from, (uint32_t)bins, 1, wdt, squares);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK)
        return raise_status(st, "gpuhist_weight_state_add: bad state shape");
    Py_RETURN_NONE;
}

/* weight_state_sums(state, bins, weight_dtype, squares, clamp, sums, sums_squared=None): the
 * sums (and sums of squares) of a state, each rounded once, with the outlier policy. */
static PyObject *mod_weight_state_sums(PyObject *mod, PyObject *args)
{
    PyObject *state_obj, *wdt_obj, *sums_obj, *sq_obj = Py_None;
    unsigned long long bins;
    int squares, clamp;
    gpuhist_dtype wdt;
    size_t words;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OKUppO|O", &state_obj, &bins, &wdt_obj, &squares, &clamp,
                          &sums_obj, &sq_obj) ||
        !state_shape(bins, wdt_obj, squares, &wdt, &words))
        return NULL;
    if (!PyArray_Check(state_obj) || PyArray_TYPE((PyArrayObject *)state_obj) != NPY_INT64 ||
        !PyArray_ISCARRAY_RO((PyArrayObject *)state_obj) ||
        !PyArray_ISNOTSWAPPED((PyArrayObject *)state_obj) ||
        PyArray_SIZE((PyArrayObject *)state_obj) != (npy_intp)words) {
        PyErr_Format(PyExc_ValueError,
                     "gpuhist: state must be a C-contiguous native int64 array of %zd items",
                     (Py_ssize_t)words);
        return NULL;
    }
    double *sums = output_buffer(sums_obj, "sums", (npy_intp)bins, 'f');
    if (!sums)
        return NULL;
    double *sq = NULL;
    if (sq_obj != Py_None) {
        if (!squares) {
            PyErr_SetString(PyExc_ValueError, "gpuhist: sums_squared of a state without squares");
            return NULL;
        }
        if (!(sq = output_buffer(sq_obj, "sums_squared", (npy_intp)bins, 'f')))
            return NULL;
    }
    const int64_t *state = PyArray_DATA((PyArrayObject *)state_obj);
    gpuhist_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gpuhist_weight_state_sums(state, (uint32_t)bins, 1, wdt, squares,
                                   clamp ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP, sums,
                                   sq);
    Py_END_ALLOW_THREADS
    if (st != GPUHIST_OK)
        return raise_status(st, "gpuhist_weight_state_sums: bad state shape");
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"weight_state_words", mod_weight_state_words, METH_VARARGS,
     "weight_state_words(bins, weight_dtype, squares) -> int64 words of a 1-channel state."},
    {"weight_state_add", mod_weight_state_add, METH_VARARGS,
     "weight_state_add(into, from, bins, weight_dtype, squares): into += from, exactly."},
    {"weight_state_sums", mod_weight_state_sums, METH_VARARGS,
     "weight_state_sums(state, bins, weight_dtype, squares, clamp, sums, sums_squared=None): "
     "the sums of a state, each rounded once."},
    {"compute_edges", mod_compute_edges, METH_VARARGS,
     "compute_edges(kind, bins, lower, upper, integer_lower, dtype) -> the library's edges."},
    {"strategies", mod_strategies, METH_NOARGS,
     "strategies() -> [(name, backend, seed, supports, summary), ...]"},
    {"backend_compiled", mod_backend_compiled, METH_O,
     "backend_compiled(name) -> whether the backend is built into this library."},
    {"list_devices", mod_list_devices, METH_O, "list_devices(backend) -> text, one per line."},
    {"host_memory_available", mod_host_memory_available, METH_NOARGS,
     "host_memory_available() -> bytes of host memory available now (0: unknown)."},
    {"layout", mod_layout, METH_VARARGS,
     "layout(shape, strides, itemsize, reorder) -> how the library would see the array."},
    {"dlpack_view", mod_dlpack_view, METH_O,
     "dlpack_view(capsule) -> (ptr, dtype, shape, strides, device_type, device_id, keeper)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_core",
    "gpuhist._core: the C binding of the gpuhist library (use the gpuhist package instead).", -1,
    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&ContextType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    GpuhistError = PyErr_NewExceptionWithDoc(
        "gpuhist.GpuhistError",
        "A gpuhist library error other than a bad argument or a lack of memory (no device, "
        "unsupported request, backend failure, busy context); `status` names the code.",
        PyExc_RuntimeError, NULL);
    if (!GpuhistError || PyModule_AddObject(m, "GpuhistError", Py_NewRef(GpuhistError)) < 0 ||
        PyModule_AddObject(m, "Context", Py_NewRef((PyObject *)&ContextType)) < 0 ||
        PyModule_AddStringConstant(m, "library_version", gpuhist_version()) < 0 ||
        PyModule_AddStringConstant(m, "header_version", GPUHIST_VERSION_STRING) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
