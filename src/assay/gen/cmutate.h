/*
 * assay.gen._cmutate: declarations shared by its files.
 *
 *   cmutate_random.c     the pool, Random (FastRandom) and Stream (CaseStream)
 *   cmutate_mutations.c  ByteMutator.mutate and its sixteen mutations
 *   cmutate_source.c     InputSource.next's byte-mode path, for the hot loop
 *   cmutate_loop.c       HotLoop: the worker's byte-mode hot loop (Worker._block)
 *   cmutate_record.c     Recorder: a recorded run's comparison recorder (cmplog.assay_cmp)
 *   cmutate_fdp.c        FuzzedDataProvider: atheris' data provider (harness.fdp's twin)
 *   cmutate_audit.c      add_audit_hook: the sandbox's audit hook behind a filter of event names
 *   cmutate_swap.c       swap_codes: a recorded run's code swaps (cmplog.CmpLog.record)
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
#define LONG_PARENT 2
#define MAX_DIGITS 1000
/* ...and of generate.py (InputSource.next and _pick, which the hot loop runs). */
#define RECENT_SHARE 0.5
#define RECENT_WINDOW 4
#define PRODUCTIVE_SHARE 0.25
#define CMP_SHARE 0.3
#define STAGE_EVERY 2
#define REPAIR_SHARE 0.5
#define REPAIR_BUDGET 0.1
#define MAX_SKIP 0.98
#define REPICKS 4
/* ...and of valueprofile.py (exported as BUDGET and MAX_FEATURES). */
#define VP_BUDGET 0.01
#define VP_MAX_FEATURES 512

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

typedef struct {
    PyObject_HEAD
    PyObject *key;        /* bytes: tseed, 8 bytes big-endian */
    long long block_no;
    PyObject *block;      /* bytes of STREAM_BLOCK * STREAM_BYTES, or NULL */
    RandomObject *rng;
} StreamObject;

/* A growable byte buffer (PyMem). */
typedef struct {
    unsigned char *p;
    Py_ssize_t n, cap;
} Buf;

/* mutate()'s fixed arguments (borrowed references). */
typedef struct {
    Py_ssize_t max_len, n_picks, win_cut;
    PyObject *dictionary, *wins, *inserting, *names;
} cm_MutateArgs;

/* InputSource's byte-mode state for one HotLoop.run (cmutate_source.c): its lists
   (borrowed from Python, new references), its counters (written back on leave). */
typedef struct {
    PyObject *corpus, *cmp_pairs, *children, *trouble, *productive, *quiet, *guards, *staged;
    long long cases, repairs;
    Py_ssize_t len_limit;   /* -1: None */
    Py_ssize_t last_parent;
    PyObject *last_pair;    /* None or (index, pair) */
    PyObject *repair_guards;
    int generated;          /* next() ran at least once: the counters are to be written back */
    cm_MutateArgs ma;
    PyObject *replace_one;  /* borrowed */
    Buf *buf;               /* the loop's scratch buffer */
    /* How the last child was made, named only for a case that goes to Python: by
       op (an interned name) when not NULL, else by the mutations applied. */
    PyObject *op;
    int applied[MAX_STACK];
    int n_applied;
    /* The staged replacements next() took off the deque, in order (a list, or NULL: not
       kept): what the hot loop puts back when it drops children it made ahead. */
    PyObject *popped;
} cm_Source;

extern PyTypeObject cm_RandomType;
extern PyTypeObject cm_StreamType;
extern PyTypeObject cm_HotLoopType;
extern PyTypeObject cm_RecorderType;
extern PyTypeObject cm_FdpType;

/* hashlib's functions, looked up once; -1 with an exception set on failure. */
int cm_random_init(void);
/* The hot loop's interned names and type; -1 with an exception set on failure. */
int cm_loop_init(void);
/* _randbelow(n) for 0 < n < 2**64 and random(); -1 with an exception set on failure. */
int cm_rng_below(RandomObject *r, uint64_t n, uint64_t *r_out);
int cm_rng_random(RandomObject *r, double *out);
/* A settable int attribute's setter body (deleting it is refused). */
int cm_set_long_long(PyObject *v, long long *out);
/* CaseStream.rng(index): the stream's reused generator, loaded (borrowed; NULL with an exception set). */
RandomObject *cm_stream_case(StreamObject *stream, long long index);
/* ByteMutator.mutate (METH_FASTCALL), and its parts for the hot loop (see cmutate_mutations.c). */
PyObject *cm_mutate(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
int cm_mutate_args(PyObject *const *args, cm_MutateArgs *a);
/* mutators.UNICODE_CHARS (cmutate_mutations.c) */
extern const char *const cm_unicode_chars[];
extern const Py_ssize_t cm_n_unicode_chars;
int cm_mutate_into(const cm_MutateArgs *a, RandomObject *rng, const unsigned char *data, Py_ssize_t data_len,
                   PyObject *other, Py_ssize_t limit, Buf *buf, int *applied, int *n_applied);
PyObject *cm_applied_names(const cm_MutateArgs *a, const int *applied, int n_applied);
/* InputSource in C (cmutate_source.c): enter reads the source, next is InputSource.next(rng)
   past its checks (1 when the child is marked for repair), leave writes the counters back;
   cm_source_ops is the list of names InputSource.next returns with the child. */
int cm_source_init(void);
int cm_source_enter(cm_Source *st, PyObject *source, PyObject *mutate_args, PyObject *replace_one, Buf *buf);
PyObject *cm_replace_one(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

int cm_source_next(cm_Source *st, RandomObject *rng, PyObject **data);
/* The source's parallel lists have the corpus's length: 0, or -1 with ValueError. */
int cm_source_check(const cm_Source *st);
PyObject *cm_source_ops(const cm_Source *st);
/* Undo next()'s count of a child of parent (a child made and dropped); -1 with an exception. */
int cm_source_uncount(cm_Source *st, Py_ssize_t parent);
/* Put the staged replacements popped since len(popped) was from back on the deque, last
   first, and forget them: how many went back, or -1 with an exception. */
Py_ssize_t cm_source_restage(cm_Source *st, Py_ssize_t from);
int cm_source_leave(cm_Source *st, PyObject *source);
long long cm_attr_ll(PyObject *o, PyObject *name);
/* The monotonic clock as time.monotonic() reads it. */
double cm_monotonic(void);

/* cmutate_audit.c */
PyObject *cm_add_audit_hook(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* cmutate_swap.c */
PyObject *cm_swap_codes(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
