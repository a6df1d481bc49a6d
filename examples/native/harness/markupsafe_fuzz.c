/* libFuzzer harness for markupsafe's _speedups.c (from the markupsafe sdist), driven
 * through embedded CPython: the input, decoded as UTF-8 (invalid bytes replaced), goes
 * through _escape_inner, and the result is checked against the pure-Python rules.
 * Run with PYTHONMALLOC=malloc (assay sets it for embed_python targets) so ASan sees
 * every object allocation. */
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

PyMODINIT_FUNC PyInit__speedups(void);

static PyObject *escape_inner;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    PyImport_AppendInittab("_speedups", PyInit__speedups);
    Py_InitializeEx(0);
    PyObject *module = PyImport_ImportModule("_speedups");
    if (!module) { PyErr_Print(); abort(); }
    escape_inner = PyObject_GetAttrString(module, "_escape_inner");
    if (!escape_inner) { PyErr_Print(); abort(); }
    return 0;
}

static Py_ssize_t expected_length(PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s), total = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(s, i);
        if (c == '"' || c == '\'' || c == '&') total += 4;
        else if (c == '<' || c == '>') total += 3;
    }
    return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    PyObject *text = PyUnicode_DecodeUTF8((const char *)data, (Py_ssize_t)size, "replace");
    if (!text) { PyErr_Clear(); return 0; }
    PyObject *escaped = PyObject_CallOneArg(escape_inner, text);
    if (!escaped) { PyErr_Print(); abort(); } /* _escape_inner never raises on a str */
    if (PyUnicode_GET_LENGTH(escaped) != expected_length(text)) abort(); /* escaping lost or added text */
    Py_DECREF(escaped);
    Py_DECREF(text);
    return 0;
}
