/* A libFuzzer harness of one entry point of the C twin (assay.gen._cmutate), through embedded
 * CPython: the twin's sources are linked in as the builtin module _cmutate, and each input goes
 * to drivers.run(ENTRY, data) (drivers.py, next to this file), which turns the bytes into the
 * arguments of one call.  A Python exception is an answer; a crash, an ASan or UBSan report is
 * a finding.  Each fuzz_<entry>.c defines ENTRY and includes this file.  Run with
 * PYTHONMALLOC=malloc (assay sets it for embed_python targets) so ASan sees every object. */
#include <Python.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

PyMODINIT_FUNC PyInit__cmutate(void);

static PyObject *run_fn, *entry_name;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    PyImport_AppendInittab("_cmutate", PyInit__cmutate);
    Py_InitializeEx(0);
    /* drivers.py: CMUTATE_HARNESS_DIR, else the folder of this file as the compiler saw it */
    char here[4096];
    const char *dir = getenv("CMUTATE_HARNESS_DIR");
    if (!dir) {
        strncpy(here, __FILE__, sizeof(here) - 1);
        here[sizeof(here) - 1] = 0;
        dir = dirname(here);
    }
    PyObject *path = PySys_GetObject("path"), *folder = PyUnicode_FromString(dir);
    if (!path || !folder || PyList_Insert(path, 0, folder) < 0) { PyErr_Print(); abort(); }
    Py_DECREF(folder);
    PyObject *drivers = PyImport_ImportModule("drivers");
    if (!drivers) { PyErr_Print(); abort(); }
    run_fn = PyObject_GetAttrString(drivers, "run");
    entry_name = PyUnicode_FromString(ENTRY);
    if (!run_fn || !entry_name) { PyErr_Print(); abort(); }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)size);
    if (!bytes) { PyErr_Print(); abort(); }
    PyObject *out = PyObject_CallFunctionObjArgs(run_fn, entry_name, bytes, NULL);
    Py_DECREF(bytes);
    if (!out) { PyErr_Print(); abort(); }   /* drivers.run lets no ordinary exception out */
    Py_DECREF(out);
    return 0;
}
