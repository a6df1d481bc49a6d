/*
 * ValueRecorder: the comparison recorder of a value-profile run, in C.
 *
 * The twin of assay.feedback.cmplog.assay_cmp (and assay_last) for a recorded run
 * that keeps only the value profile's observations (CmpLog.record(keep="values")):
 * each comparison is counted (past max_compared it raises the `cut` exception),
 * its right operand kept for the next link of a chain, evaluated as the operator
 * would, and an (in)equality appended as (vsite, a, b) to `values` while that list
 * is shorter than max_values.  A Python call per comparison was most of such a run's
 * cost; tests/test_cmplog.py compares the two recorders.
 */
#include "cmutate.h"

#include <stddef.h>

typedef struct {
    PyObject_HEAD
    PyObject *values;     /* list of (vsite, a, b) */
    Py_ssize_t max_values;
    long long max_compared;
    long long compared;
    PyObject *cut;        /* the exception class raised past max_compared */
    PyObject *last;       /* the right operand of the last comparison */
    vectorcallfunc vectorcall;
} RecorderObject;

/* Rich-comparison codes of assay.feedback.cmplog's op ids 0-5 (==, !=, <, <=, >, >=). */
static const int rich_ops[6] = {Py_EQ, Py_NE, Py_LT, Py_LE, Py_GT, Py_GE};

static PyObject *Recorder_call(RecorderObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 5 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "ValueRecorder takes (op, site, vsite, a, b)");
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
    if (op <= 1 && PyList_GET_SIZE(self->values) < self->max_values) {
        PyObject *record = PyTuple_Pack(3, args[2], a, b);
        if (!record || PyList_Append(self->values, record) < 0) {
            Py_XDECREF(record);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(record);
    }
    return result;
}

static PyObject *Recorder_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *values, *cut;
    Py_ssize_t max_values;
    long long max_compared;
    static char *kwlist[] = {"values", "max_values", "max_compared", "cut", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!nLO", kwlist, &PyList_Type, &values, &max_values,
                                     &max_compared, &cut))
        return NULL;
    RecorderObject *self = (RecorderObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_INCREF(values);
    self->values = values;
    self->max_values = max_values;
    self->max_compared = max_compared;
    self->compared = 0;
    Py_INCREF(cut);
    self->cut = cut;
    self->last = Py_NewRef(Py_None);
    self->vectorcall = (vectorcallfunc)Recorder_call;
    return (PyObject *)self;
}

static int Recorder_traverse(RecorderObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->values);
    Py_VISIT(self->cut);
    Py_VISIT(self->last);
    return 0;
}

static int Recorder_clear(RecorderObject *self) {
    Py_CLEAR(self->values);
    Py_CLEAR(self->cut);
    Py_CLEAR(self->last);
    return 0;
}

static void Recorder_dealloc(RecorderObject *self) {
    PyObject_GC_UnTrack(self);
    Recorder_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Recorder_last(RecorderObject *self, PyObject *unused) { return Py_NewRef(self->last); }

static PyMethodDef Recorder_methods[] = {
    {"last", (PyCFunction)Recorder_last, METH_NOARGS, "The right operand of the comparison just made (assay_last)."},
    {NULL},
};

PyTypeObject cm_ValueRecorderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.ValueRecorder",
    .tp_doc = "ValueRecorder(values, max_values, max_compared, cut): called as assay_cmp(op, site, vsite, a, b)\n"
              "in a value-profile run; last() is assay_last.",
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
