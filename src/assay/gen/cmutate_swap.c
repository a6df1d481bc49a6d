/*
 * swap_codes(functions, codes): set each function's __code__, as ``fn.__code__ = code`` does.
 *
 * A recorded run (assay.feedback.cmplog.CmpLog.record) swaps the comparison twins into
 * every function that may run and swaps the live code back after: two assignments a
 * function, hundreds of functions for a big library.  In Python each assignment is an
 * audit event ("object.__setattr__"), which costs about 0.3 us once any audit hook is
 * installed (the sandbox installs one) even when no hook judges it, plus a loop turn.
 * Here on CPython 3.12 the assignment does what func_set_code does minus the audit
 * event and the function watchers (CPython 3.12 registers none of its own): the same
 * checks, the new code, and func_version reset so that no specialised call keeps
 * running the old code.  On other versions (where the version bookkeeping differs)
 * it assigns through setattr, audited as in Python.
 */
#include "cmutate.h"

static int set_code(PyObject *fn, PyObject *code) {
    if (!PyFunction_Check(fn) || !PyCode_Check(code)) {
        PyErr_SetString(PyExc_TypeError, "swap_codes: functions and code objects expected");
        return -1;
    }
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
    PyFunctionObject *op = (PyFunctionObject *)fn;
    Py_ssize_t nfree = PyCode_GetNumFree((PyCodeObject *)code);
    Py_ssize_t nclosure = op->func_closure == NULL ? 0 : PyTuple_GET_SIZE(op->func_closure);
    if (nclosure != nfree) {
        PyErr_Format(PyExc_ValueError, "%U() requires a code object with %zd free vars, not %zd", op->func_name,
                     nclosure, nfree);
        return -1;
    }
    op->func_version = 0;
    Py_XSETREF(op->func_code, Py_NewRef(code));
    return 0;
#else
    return PyObject_SetAttrString(fn, "__code__", code);
#endif
}

PyObject *cm_swap_codes(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[0]) || !PyList_Check(args[1])
        || PyList_GET_SIZE(args[0]) != PyList_GET_SIZE(args[1])) {
        PyErr_SetString(PyExc_TypeError, "swap_codes(functions, codes): two lists of the same length");
        return NULL;
    }
    PyObject *functions = args[0], *codes = args[1];
    Py_ssize_t n = PyList_GET_SIZE(functions);
    PyObject *previous = PyList_New(n);
    if (!previous) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *fn = PyList_GET_ITEM(functions, k);
        if (!PyFunction_Check(fn)) {
            PyErr_SetString(PyExc_TypeError, "swap_codes: functions and code objects expected");
            goto undo;
        }
        PyObject *old = Py_NewRef(PyFunction_GET_CODE(fn));
        if (set_code(fn, PyList_GET_ITEM(codes, k)) < 0) {
            Py_DECREF(old);
            goto undo;
        }
        PyList_SET_ITEM(previous, k, old);
        continue;
    undo:
        /* Put back what was swapped so far: all or nothing. */
        for (Py_ssize_t j = k - 1; j >= 0; j--) {
            PyObject *exc = PyErr_GetRaisedException();
            if (set_code(PyList_GET_ITEM(functions, j), PyList_GET_ITEM(previous, j)) < 0) PyErr_Clear();
            PyErr_SetRaisedException(exc);
        }
        Py_DECREF(previous);   /* the unset items are NULL: list_dealloc skips them */
        return NULL;
    }
    return previous;
}
