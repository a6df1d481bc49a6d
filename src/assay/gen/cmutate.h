/*
 * assay.gen._cmutate: declarations shared by its three files.
 *
 *   cmutate_random.c     the pool, Random (FastRandom) and Stream (CaseStream)
 *   cmutate_mutations.c  ByteMutator.mutate and its fifteen mutations
 *   _cmutate.c           LineTally and the module
 */
#ifndef ASSAY_CMUTATE_H
#define ASSAY_CMUTATE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef unsigned __int128 u128;

/* Tunables of seeds.py and mutators.py, compiled in (exported as CONSTANTS: the Python
   side uses this module only while its own values agree). */
#define STREAM_BLOCK 64
#define STREAM_BYTES 48
#define MAX_STACK 5
#define MAX_CHUNK 128
#define CUT_AFTER_PUMP 0.5
#define NEST_SCAN 512
#define NEST_STRUCTURAL 0.75
#define NEST_DEEP 0.25
#define LONG_SHARE (1.0 / 32)
#define MAX_DIGITS 1000

/* The pool: an unbounded non-negative integer, little-endian 64-bit limbs. */
typedef struct {
    uint64_t *d;
    Py_ssize_t n;    /* limbs in use; d[n-1] != 0 unless n == 0 */
    Py_ssize_t cap;
} Big;

typedef struct {
    PyObject_HEAD
    Big pool;
    PyObject *key;     /* bytes */
    long long index;
    long long more;
} RandomObject;

extern PyTypeObject cm_RandomType;
extern PyTypeObject cm_StreamType;

/* hashlib's functions, looked up once; -1 with an exception set on failure. */
int cm_random_init(void);
/* _randbelow(n) for 0 < n < 2**64 and random(); -1 with an exception set on failure. */
int cm_rng_below(RandomObject *r, uint64_t n, uint64_t *r_out);
int cm_rng_random(RandomObject *r, double *out);
/* A settable int attribute's setter body (deleting it is refused). */
int cm_set_long_long(PyObject *v, long long *out);
/* ByteMutator.mutate (METH_FASTCALL). */
PyObject *cm_mutate(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
