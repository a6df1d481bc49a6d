/*
 * assay.gen._cmutate: the byte-mode input generator in C.
 *
 * An optional accelerator with no behaviour of its own.  It computes exactly what
 * the pure-Python reference computes, draw for draw and byte for byte:
 *
 *   Random  = assay.engine.seeds.FastRandom   (cmutate_random.c)
 *   Stream  = assay.engine.seeds.CaseStream   (cmutate_random.c)
 *   mutate  = assay.gen.mutators.ByteMutator.mutate and its sixteen mutations (cmutate_mutations.c)
 *   HotLoop = assay.engine.worker.Worker._block's byte-mode loop, with InputSource.next (cmutate_loop.c)
 *   FuzzedDataProvider = assay.harness.fdp.PythonFuzzedDataProvider, itself atheris' (cmutate_fdp.c)
 *   add_audit_hook = sys.addaudithook for the sandbox's hook, with the events it judges (cmutate_audit.c)
 *   swap_codes = ``fn.__code__ = code`` for a recorded run's twins, without an audit event each (cmutate_swap.c)
 *
 * so a campaign's schedule, corpus and findings do not depend on whether this module
 * was built.  tests/test_cmutate.py compares the two on many thousands of cases.  It
 * also holds the counting child's LINE and JUMP callbacks (assay.engine.traced.LineTally's twin)
 * and the value-profile run's comparison recorder (cmutate_record.c).
 */
#include "cmutate.h"

/* ---------------------------------------------------------------- LineTally */

/* sys.monitoring LINE and JUMP callbacks that count line events and backward jumps
   (traced.CountingChild): the Python tally's twin, a C call per event instead of a
   Python frame. */
typedef struct {
    PyObject_HEAD
    long long count;
    long long cap;
    PyObject *finish;   /* called once the count reaches cap */
} TallyObject;

static PyObject *Tally_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    long long cap;
    PyObject *finish;
    static char *kwlist[] = {"cap", "finish", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "LO", kwlist, &cap, &finish)) return NULL;
    TallyObject *self = (TallyObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->count = 0;
    self->cap = cap;
    Py_INCREF(finish);
    self->finish = finish;
    return (PyObject *)self;
}

/* GC support: finish is any callable (a bound method of an object that holds this tally: a cycle). */
static int Tally_traverse(TallyObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->finish);
    return 0;
}

static int Tally_clear(TallyObject *self) {
    Py_CLEAR(self->finish);
    return 0;
}

static void Tally_dealloc(TallyObject *self) {
    PyObject_GC_UnTrack(self);
    Tally_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Tally_hit(TallyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (self->count < LLONG_MAX) self->count++;   /* saturates: count is settable from Python */
    if (self->count >= self->cap) {
        if (!self->finish) {
            PyErr_SetString(PyExc_ValueError, "this LineTally was cleared by the garbage collector");
            return NULL;
        }
        return PyObject_CallNoArgs(self->finish);
    }
    Py_RETURN_NONE;
}

/* JUMP(code, instruction_offset, destination_offset): a backward jump is a loop's next turn. */
static PyObject *Tally_jump(TallyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "LineTally.jump(code, offset, destination)");
        return NULL;
    }
    int backward = PyObject_RichCompareBool(args[2], args[1], Py_LT);
    if (backward < 0) return NULL;
    if (backward) return Tally_hit(self, args, nargs);
    Py_RETURN_NONE;
}

static PyObject *Tally_get_count(TallyObject *self, void *c) { return PyLong_FromLongLong(self->count); }
static int Tally_set_count(TallyObject *self, PyObject *v, void *c) { return cm_set_long_long(v, &self->count); }

static PyGetSetDef Tally_getset[] = {
    {"count", (getter)Tally_get_count, (setter)Tally_set_count, "line events and backward jumps counted", NULL},
    {NULL},
};

static PyMethodDef Tally_methods[] = {
    {"hit", (PyCFunction)(void (*)(void))Tally_hit, METH_FASTCALL, "The LINE callback: count one event."},
    {"jump", (PyCFunction)(void (*)(void))Tally_jump, METH_FASTCALL,
     "The JUMP callback: count the jump if it is backward (a loop's next turn)."},
    {NULL},
};

static PyTypeObject TallyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.LineTally",
    .tp_doc = "LineTally(cap, finish): hit() counts a line event, jump() a backward jump; at cap it calls finish().",
    .tp_basicsize = sizeof(TallyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Tally_new,
    .tp_traverse = (traverseproc)Tally_traverse,
    .tp_clear = (inquiry)Tally_clear,
    .tp_dealloc = (destructor)Tally_dealloc,
    .tp_methods = Tally_methods,
    .tp_getset = Tally_getset,
};

/* object_id(o): id(o) without its audit event.  With an audit hook installed (the
   sandbox's) every id() call is a "builtins.id" event: the tuple of its arguments and a
   call of each hook, about 2,000 instructions, where the id itself is one conversion.
   The coverage callbacks look their tables up by the code object's id on every
   branch event they see. */
static PyObject *object_id(PyObject *module, PyObject *o) { return PyLong_FromVoidPtr(o); }

static PyMethodDef module_methods[] = {
    {"object_id", (PyCFunction)object_id, METH_O, "object_id(o): id(o), without the builtins.id audit event"},
    {"mutate", (PyCFunction)(void (*)(void))cm_mutate, METH_FASTCALL,
     "mutate(max_len, dictionary, wins, inserting, names, n_picks, win_cut, rng, data, other, limit)"},
    {"replace_one", (PyCFunction)(void (*)(void))cm_replace_one, METH_FASTCALL,
     "replace_one(data, pattern, replacement, pick): assay.feedback.cmplog.replace_one's twin"},
    {"add_audit_hook", (PyCFunction)(void (*)(void))cm_add_audit_hook, METH_FASTCALL,
     "add_audit_hook(hook, events): an audit hook that calls hook(event, args) for the named events only"},
    {"swap_codes", (PyCFunction)(void (*)(void))cm_swap_codes, METH_FASTCALL,
     "swap_codes(functions, codes): set each function's __code__; returns the codes they had"},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "assay.gen._cmutate",
    "The byte-mode input generator in C: the same draws and bytes as the Python reference.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__cmutate(void) {
    if (cm_random_init() < 0 || cm_loop_init() < 0 || PyType_Ready(&TallyType) < 0
        || PyType_Ready(&cm_RecorderType) < 0 || PyType_Ready(&cm_FdpType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&cm_RandomType);
    Py_INCREF(&cm_StreamType);
    PyObject *names = Py_BuildValue("(ssssssssssssssss)", "erase", "insert-byte", "insert-repeated", "change-byte",
                                    "flip-bit", "shuffle", "interesting-int", "add-to-int", "ascii-int", "copy-part",
                                    "repeat-chunk", "nest", "crossover", "dict-insert", "dict-overwrite", "unicode-char");
    if (!names || PyModule_AddObject(m, "NAMES", names) < 0) { Py_XDECREF(names); Py_DECREF(m); return NULL; }
    PyObject *chars = PyTuple_New(cm_n_unicode_chars);
    for (Py_ssize_t k = 0; chars && k < cm_n_unicode_chars; k++) {
        PyObject *ch = PyBytes_FromString(cm_unicode_chars[k]);
        if (!ch) Py_CLEAR(chars);
        else PyTuple_SET_ITEM(chars, k, ch);
    }
    if (!chars || PyModule_AddObject(m, "UNICODE_CHARS", chars) < 0) { Py_XDECREF(chars); Py_DECREF(m); return NULL; }
    /* The tunables compiled in: the Python side uses this module only while its own agree. */
    PyObject *constants = Py_BuildValue(
        "{s:i,s:i,s:d,s:i,s:d,s:d,s:d,s:i,s:i,s:i,s:i,s:d,s:i,s:d,s:d,s:i,s:d,s:d,s:d,s:i,s:d,s:i}",
        "MAX_STACK", MAX_STACK, "MAX_CHUNK", MAX_CHUNK, "CUT_AFTER_PUMP", CUT_AFTER_PUMP, "NEST_SCAN", NEST_SCAN,
        "NEST_STRUCTURAL", NEST_STRUCTURAL, "NEST_DEEP", NEST_DEEP, "LONG_SHARE", LONG_SHARE,
        "LONG_PARENT", LONG_PARENT, "MAX_DIGITS", MAX_DIGITS,
        "STREAM_BLOCK", STREAM_BLOCK, "STREAM_BYTES", STREAM_BYTES, "RECENT_SHARE", RECENT_SHARE,
        "RECENT_WINDOW", RECENT_WINDOW, "PRODUCTIVE_SHARE", PRODUCTIVE_SHARE, "CMP_SHARE", CMP_SHARE,
        "STAGE_EVERY", STAGE_EVERY, "REPAIR_SHARE", REPAIR_SHARE, "REPAIR_BUDGET", REPAIR_BUDGET,
        "MAX_SKIP", MAX_SKIP, "REPICKS", REPICKS, "BUDGET", VP_BUDGET, "MAX_FEATURES", VP_MAX_FEATURES);
    if (!constants || PyModule_AddObject(m, "CONSTANTS", constants) < 0) { Py_XDECREF(constants); Py_DECREF(m); return NULL; }
    Py_INCREF(&cm_HotLoopType);
    if (PyModule_AddObject(m, "HotLoop", (PyObject *)&cm_HotLoopType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&TallyType);
    if (PyModule_AddObject(m, "LineTally", (PyObject *)&TallyType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&cm_RecorderType);
    if (PyModule_AddObject(m, "Recorder", (PyObject *)&cm_RecorderType) < 0) { Py_DECREF(m); return NULL; }
    Py_INCREF(&cm_FdpType);
    if (PyModule_AddObject(m, "FuzzedDataProvider", (PyObject *)&cm_FdpType) < 0) { Py_DECREF(m); return NULL; }
    if (PyModule_AddObject(m, "Random", (PyObject *)&cm_RandomType) < 0
        || PyModule_AddObject(m, "Stream", (PyObject *)&cm_StreamType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
