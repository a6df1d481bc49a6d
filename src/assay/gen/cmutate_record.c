/*
 * Recorder: the comparison recorder of a recorded run, in C.
 *
 * The twin of assay.feedback.cmplog.assay_cmp (and assay_last) for CmpLog.record:
 * each comparison is counted (past max_compared it raises the `cut` exception), its
 * right operand kept for the next link of a chain, and evaluated as the operator
 * would; then, into whichever of its lists the run keeps (None: not kept),
 *
 *   values   an (in)equality as (vsite, a, b), while shorter than max_values;
 *   guards   an (in)equality at a guard site between two operands of one type, as
 *            (site, a, b), while shorter than max_guards;
 *   records  the operand pairs input-to-state tries, as (a, b), while shorter than
 *            max_records: two operands (or floats) that differ; for an ordering of
 *            two ints, also the values one past the other that flip it; for `in`
 *            (cmplog._record_membership), an operand against a container's first
 *            max_members elements (a set's in_order(b)), or (None, a) for a substring.
 *
 * The same lists in the same order as the Python recorder: a Python call per
 * comparison was most of a recorded run's cost.  tests/test_cmplog.py compares the two.
 */
#include "cmutate.h"

#include <stddef.h>

typedef struct {
    PyObject_HEAD
    PyObject *values;     /* list of (vsite, a, b), or None */
    PyObject *guards;     /* list of (site, a, b), or None */
    PyObject *records;    /* list of (a, b), or None */
    PyObject *in_order;   /* cmplog._in_order: a set's first elements in an order free of PYTHONHASHSEED */
    Py_ssize_t max_values, max_guards, max_records, max_members;
    long long max_compared;
    long long compared;
    PyObject *cut;        /* the exception class raised past max_compared */
    PyObject *last;       /* the right operand of the last comparison */
    vectorcallfunc vectorcall;
} RecorderObject;

/* Rich-comparison codes of assay.feedback.cmplog's op ids 0-5 (==, !=, <, <=, >, >=). */
static const int rich_ops[6] = {Py_EQ, Py_NE, Py_LT, Py_LE, Py_GT, Py_GE};
/* cmplog._CROSS: per ordering op id 2-5, the step for a comparison that failed / held. */
static const int cross_steps[6][2] = {{0, 0}, {0, 0}, {-1, 0}, {0, 1}, {1, 0}, {0, -1}};

/* cmplog._is_operand */
static int is_operand(PyObject *v) {
    return PyBytes_Check(v) || PyByteArray_Check(v) || PyUnicode_Check(v) || (PyLong_Check(v) && !PyBool_Check(v));
}

/* Append the tuple (x, y[, z]) to list while it is shorter than max; -1 on error. */
static int keep(PyObject *list, Py_ssize_t max, PyObject *x, PyObject *y, PyObject *z) {
    if (PyList_GET_SIZE(list) >= max) return 0;
    PyObject *t = z ? PyTuple_Pack(3, x, y, z) : PyTuple_Pack(2, x, y);
    if (!t) return -1;
    int rc = PyList_Append(list, t);
    Py_DECREF(t);
    return rc;
}

/* record(a, b + step) (on_right) or record(a - step, b): a value one past the other, which flips an ordering. */
static int keep_shifted(RecorderObject *self, PyObject *a, PyObject *b, int step, int on_right) {
    PyObject *d = PyLong_FromLong(step);
    if (!d) return -1;
    PyObject *moved = on_right ? PyNumber_Add(b, d) : PyNumber_Subtract(a, d);
    Py_DECREF(d);
    if (!moved) return -1;
    int rc = on_right ? keep(self->records, self->max_records, a, moved, NULL)
                      : keep(self->records, self->max_records, moved, b, NULL);
    Py_DECREF(moved);
    return rc;
}

/* cmplog._record_membership: the records of `a in b`. */
static int keep_members(RecorderObject *self, PyObject *a, PyObject *b) {
    if (is_operand(a) && (PyTuple_Check(b) || PyList_Check(b) || PyAnySet_Check(b) || PyDict_Check(b))) {
        Py_ssize_t n = PyObject_Size(b);
        if (n < 0) return -1;
        if (n > 4096) return 0;
        PyObject *seq = PyAnySet_Check(b) ? PyObject_CallOneArg(self->in_order, b) : Py_NewRef(b);
        PyObject *it = seq ? PyObject_GetIter(seq) : NULL;
        Py_XDECREF(seq);
        if (!it) return -1;
        for (Py_ssize_t i = 0; i < self->max_members; i++) {
            PyObject *elem = PyIter_Next(it);
            if (!elem) break;
            int rc = is_operand(elem) ? keep(self->records, self->max_records, a, elem, NULL) : 0;
            Py_DECREF(elem);
            if (rc < 0) { Py_DECREF(it); return -1; }
        }
        Py_DECREF(it);
        return PyErr_Occurred() ? -1 : 0;
    }
    if ((PyUnicode_Check(a) || PyBytes_Check(a)) && (PyUnicode_Check(b) || PyBytes_Check(b)))
        return keep(self->records, self->max_records, Py_None, a, NULL);   /* wants a somewhere in the input */
    return 0;
}

/* The records of one comparison (assay_cmp's `if _records is not None:` part). */
static int keep_pairs(RecorderObject *self, long op, PyObject *a, PyObject *b, PyObject *result) {
    if (PyList_GET_SIZE(self->records) >= self->max_records) return 0;   /* full: nothing more is kept */
    if (op >= 6) return keep_members(self, a, b);
    if ((is_operand(a) || PyFloat_CheckExact(a)) && (is_operand(b) || PyFloat_CheckExact(b))) {
        PyObject *ne = PyObject_RichCompare(a, b, Py_NE);
        int differ = ne ? PyObject_IsTrue(ne) : -1;
        Py_XDECREF(ne);
        if (differ < 0 || (differ && keep(self->records, self->max_records, a, b, NULL) < 0)) return -1;
    }
    if (op >= 2 && PyLong_CheckExact(a) && PyLong_CheckExact(b)) {
        int held = PyObject_IsTrue(result);
        if (held < 0) return -1;
        int step = cross_steps[op][held];
        if (step && (keep_shifted(self, a, b, step, 1) < 0 || keep_shifted(self, a, b, step, 0) < 0)) return -1;
    }
    return 0;
}

static PyObject *Recorder_call(RecorderObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 5 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "Recorder takes (op, site, vsite, a, b)");
        return NULL;
    }
    if (!self->cut || !self->values || !self->guards || !self->records || !self->in_order) {
        PyErr_SetString(PyExc_ValueError, "this Recorder was cleared by the garbage collector");
        return NULL;
    }
    long op = PyLong_AsLong(args[0]);
    if (op == -1 && PyErr_Occurred()) return NULL;
    if (op < 0 || op > 7) {
        PyErr_SetString(PyExc_ValueError, "unknown comparison op id");
        return NULL;
    }
    if (++self->compared > self->max_compared) {
        PyErr_SetNone(self->cut);
        return NULL;
    }
    PyObject *a = args[3], *b = args[4];
    Py_INCREF(b);
    Py_XSETREF(self->last, b);
    PyObject *result;
    if (op <= 5) {
        result = PyObject_RichCompare(a, b, rich_ops[op]);
    } else {
        int found = PySequence_Contains(b, a);
        if (found < 0) return NULL;
        result = PyBool_FromLong(op == 6 ? found : !found);
    }
    if (!result) return NULL;
    if (op <= 1 && self->values != Py_None && keep(self->values, self->max_values, args[2], a, b) < 0) goto fail;
    if (self->guards != Py_None && PyList_GET_SIZE(self->guards) < self->max_guards && Py_TYPE(a) == Py_TYPE(b)
        && is_operand(a)) {
        long site = PyLong_AsLong(args[1]);
        if (site == -1 && PyErr_Occurred()) goto fail;
        if (site >= 0 && keep(self->guards, self->max_guards, args[1], a, b) < 0) goto fail;
    }
    if (self->records != Py_None && keep_pairs(self, op, a, b, result) < 0) goto fail;
    return result;
fail:
    Py_DECREF(result);
    return NULL;
}

static int list_or_none(PyObject *v, const char *name) {
    if (v == Py_None || PyList_Check(v)) return 0;
    PyErr_Format(PyExc_TypeError, "Recorder: %s is a list or None", name);
    return -1;
}

static PyObject *Recorder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *values, *cut, *guards = Py_None, *records = Py_None, *in_order = Py_None;
    Py_ssize_t max_values, max_guards = 0, max_records = 0, max_members = 0;
    long long max_compared;
    static char *kwlist[] = {"values", "max_values", "max_compared", "cut", "guards", "max_guards", "records",
                             "max_records", "in_order", "max_members", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnLO|$OnOnOn", kwlist, &values, &max_values, &max_compared, &cut,
                                     &guards, &max_guards, &records, &max_records, &in_order, &max_members))
        return NULL;
    if (list_or_none(values, "values") < 0 || list_or_none(guards, "guards") < 0
        || list_or_none(records, "records") < 0)
        return NULL;
    if (records != Py_None && !PyCallable_Check(in_order)) {
        PyErr_SetString(PyExc_TypeError, "Recorder: keeping records needs in_order(a_set)");
        return NULL;
    }
    RecorderObject *self = (RecorderObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->values = Py_NewRef(values);
    self->guards = Py_NewRef(guards);
    self->records = Py_NewRef(records);
    self->in_order = Py_NewRef(in_order);
    self->max_values = max_values;
    self->max_guards = max_guards;
    self->max_records = max_records;
    self->max_members = max_members;
    self->max_compared = max_compared;
    self->compared = 0;
    self->cut = Py_NewRef(cut);
    self->last = Py_NewRef(Py_None);
    self->vectorcall = (vectorcallfunc)Recorder_call;
    return (PyObject *)self;
}

static int Recorder_traverse(RecorderObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->values);
    Py_VISIT(self->guards);
    Py_VISIT(self->records);
    Py_VISIT(self->in_order);
    Py_VISIT(self->cut);
    Py_VISIT(self->last);
    return 0;
}

static int Recorder_clear(RecorderObject *self) {
    Py_CLEAR(self->values);
    Py_CLEAR(self->guards);
    Py_CLEAR(self->records);
    Py_CLEAR(self->in_order);
    Py_CLEAR(self->cut);
    Py_CLEAR(self->last);
    return 0;
}

static void Recorder_dealloc(RecorderObject *self) {
    PyObject_GC_UnTrack(self);
    Recorder_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Recorder_last(RecorderObject *self, PyObject *unused) {
    return Py_NewRef(self->last ? self->last : Py_None);
}

static PyMethodDef Recorder_methods[] = {
    {"last", (PyCFunction)Recorder_last, METH_NOARGS, "The right operand of the comparison just made (assay_last)."},
    {NULL},
};

PyTypeObject cm_RecorderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.Recorder",
    .tp_doc = "Recorder(values, max_values, max_compared, cut, *, guards=None, max_guards=0, records=None,\n"
              "max_records=0, in_order=None, max_members=0): called as assay_cmp(op, site, vsite, a, b) in a recorded run;\n"
              "last() is assay_last.",
    .tp_basicsize = sizeof(RecorderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(RecorderObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = Recorder_new,
    .tp_traverse = (traverseproc)Recorder_traverse,
    .tp_clear = (inquiry)Recorder_clear,
    .tp_dealloc = (destructor)Recorder_dealloc,
    .tp_methods = Recorder_methods,
};
