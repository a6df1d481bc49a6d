/* A harness that embeds CPython: a one-byte over-read of a bytes object.
 * ASan sees it only when objects come from malloc (PYTHONMALLOC=malloc), not from pymalloc's arenas. */
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    Py_InitializeEx(0);
    return 0;
}

__attribute__((noinline)) static int peek_past(PyObject *b) {
    /* ob_sval holds size + 1 bytes (the trailing NUL); index size + 1 is past the object */
    return ((volatile const char *)PyBytes_AS_STRING(b))[PyBytes_GET_SIZE(b) + 1];
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    PyObject *b = PyBytes_FromStringAndSize((const char *)d, (Py_ssize_t)n);
    if (!b) { PyErr_Clear(); return 0; }
    int r = (n >= 2 && d[0] == 'B') ? peek_past(b) : 0;
    Py_DECREF(b);
    return r;
}
