/*
 * add_audit_hook(hook, events): the sandbox's audit hook behind a filter in C.
 *
 * A Python audit hook (sys.addaudithook) is called for every audit event of the
 * process, and the worker's own bookkeeping raises many that the sandbox never judges:
 * each swap of a function's __code__ for its comparison twin is an
 * "object.__setattr__" event, two per function of a big library per recorded run.
 * Each call of the Python hook costs about a microsecond even when it returns at once.
 * This C hook compares the event's name with the names the Python hook judges and
 * calls it for those only, as CPython calls a Python hook: tracing and monitoring
 * paused for the call, an exception from it refusing the event.  Like any audit hook
 * it is never removed; the hook and the names live as long as the process.
 */
#include "cmutate.h"

typedef struct {
    PyInterpreterState *interp;   /* the hook's; C hooks are the whole runtime's */
    PyObject *hook;      /* a strong reference, never released */
    char **names;        /* the judged events' names, PyMem_RawMalloc'ed */
    Py_ssize_t n;
    uint64_t mask[16];   /* bit name_bit(name) of every judged name */
} AuditFilter;

/* One of 1,024 bits for an event name (FNV-1a over its bytes, folded). */
static unsigned name_bit(const char *name) {
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 1099511628211ULL;
    return (unsigned)((h ^ (h >> 32)) & 1023);
}

static int filtered_audit(const char *event, PyObject *args, void *data) {
    AuditFilter *filter = (AuditFilter *)data;
    unsigned bit = name_bit(event);
    if (!(filter->mask[bit >> 6] >> (bit & 63) & 1)) return 0;   /* not a judged name */
    Py_ssize_t k = 0;
    while (k < filter->n && strcmp(event, filter->names[k]) != 0) k++;
    if (k == filter->n) return 0;
    PyThreadState *ts = PyThreadState_Get();
    if (PyThreadState_GetInterpreter(ts) != filter->interp) return 0;   /* a subinterpreter's event */
    PyObject *name = PyUnicode_FromString(event);
    if (!name) return -1;
    PyThreadState_EnterTracing(ts);   /* as CPython does around a Python hook without __cantrace__ */
    PyObject *result = PyObject_CallFunctionObjArgs(filter->hook, name, args, NULL);
    PyThreadState_LeaveTracing(ts);
    Py_DECREF(name);
    if (!result) return -1;
    Py_DECREF(result);
    return 0;
}

PyObject *cm_add_audit_hook(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "add_audit_hook(hook, events): a callable and an iterable of event names");
        return NULL;
    }
    PyObject *events = PySequence_Fast(args[1], "add_audit_hook: events must be an iterable of str");
    if (!events) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(events);
    AuditFilter *filter = PyMem_RawCalloc(1, sizeof(AuditFilter));
    char **names = PyMem_RawCalloc(n ? (size_t)n : 1, sizeof(char *));
    if (!filter || !names) {
        PyMem_RawFree(filter);
        PyMem_RawFree(names);
        Py_DECREF(events);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(events, k);
        Py_ssize_t size;
        const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : NULL;
        if (!text) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "add_audit_hook: every event name must be a str");
            goto fail;
        }
        names[k] = PyMem_RawMalloc((size_t)size + 1);
        if (!names[k]) {
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(names[k], text, (size_t)size + 1);
        unsigned bit = name_bit(names[k]);
        filter->mask[bit >> 6] |= 1ULL << (bit & 63);
    }
    Py_DECREF(events);
    filter->interp = PyInterpreterState_Get();
    filter->hook = Py_NewRef(args[0]);
    filter->names = names;
    filter->n = n;
    if (PySys_AddAuditHook(filtered_audit, filter) < 0) {
        /* Not added: nothing refers to the filter; the hook reference stays (harmless). */
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "add_audit_hook: the hook was not added");
        return NULL;
    }
    Py_RETURN_NONE;
fail:
    for (Py_ssize_t k = 0; k < n; k++) PyMem_RawFree(names[k]);
    PyMem_RawFree(names);
    PyMem_RawFree(filter);
    Py_DECREF(events);
    return NULL;
}
