/*
 * HotLoop: the worker's byte-mode hot loop in C.
 *
 * Worker._block runs the generated cases of one clock interval: InputSource.next's
 * byte-mode path (pick a parent, maybe a comparison replacement, mutate), the schedule
 * digest's record, the journal, the sandbox, the call, and the check that nothing happened.
 * This is that loop, computing exactly what the Python one computes: the same draws,
 * the same inputs, the same digest, though it makes the inputs of a stretch of cases
 * before it runs them (see make_ahead).  It hands a case back to Python (run() returns)
 * whenever the Python loop would leave its fast path:
 *
 *   PYTHON  the case's input comes from a path this loop does not run (random
 *           bytes while the corpus is empty): Python runs the whole case;
 *   REPAIR  the input was generated and marked for repair (its guards);
 *   RAN     the input ran and showed something, or may have (an exception that is
 *           not an expected rejection already seen, a refusal, news, a new outcome,
 *           a time outlier): Python judges it;
 *   SIGNAL  a signal handler raised at a clock boundary (before case i): Python raises it.
 *
 * The input source's counters (cases, repairs, last_parent, last_pair, repair_guards)
 * and the journal's digest position (sel, used) are written back before every return.
 * tests/test_cmutate.py runs whole campaigns both ways and compares their schedule digests.
 */
/* The low-level SHA-256 calls are deprecated in OpenSSL 3 in favour of EVP, whose
   per-digest set-up costs 50 ns more. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "cmutate.h"
#include <openssl/sha.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the journal header is written in the host's byte order, which must be little-endian"
#endif

enum { ST_DONE = 0, ST_PYTHON = 1, ST_REPAIR = 2, ST_RAN = 3, ST_SIGNAL = 4 };

/* journal._HEADER = "<BBxxxxxxqqdQdQQ" */
#define H_POSITION 8
#define H_SUB 16
#define H_STARTED 24
#define H_LENGTH 32
#define H_LIMIT 40
#define H_USED 48
#define H_SEL 56
#define H_SIZE 64
#define J_IDLE 0
#define J_RUNNING 1
#define J_GENERATED 1
#define J_CASE 0

static PyObject *s_new, *s_keys, *s_sel, *s_used, *s_armed, *s_refusal, *s_allow, *s_runs, *s_features;

/* Forks of this process so far, counted in each child (pthread_atfork): a case whose
   count differs from its loop's ran in a process the target forked.  getpid() would
   say the same at the price of a system call per case (glibc no longer caches it). */
static volatile unsigned long forks_seen;

static void count_fork(void) { forks_seen++; }

double cm_monotonic(void) {
    /* time.monotonic(): CLOCK_MONOTONIC in nanoseconds, then to seconds as _PyTime_AsSecondsDouble does */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (ns % 1000000000LL == 0) return (double)(ns / 1000000000LL);
    return (double)ns / 1e9;
}

typedef struct {
    PyObject_HEAD
    PyObject *fn, *target, *source, *feedback, *sink, *journal, *mem;
    StreamObject *stream;
    PyObject *mutate_args;     /* ByteMutator.mutate_c.args: (max_len, dictionary, wins, inserting, names, n_picks, win_cut) */
    PyObject *replace_one;     /* cmplog.replace_one */
    PyObject *strays_returned; /* strays.returned */
    PyObject *boring;          /* set: return-value classes whose outcome is seen */
    PyObject *rejects;         /* set: expected exception types whose outcome is seen */
    PyObject *seen;            /* set: the worker's features and outcomes seen */
    PyObject *values;          /* the ValueProfile, or None */
    PyObject *tried;           /* values.tried (replacements it judged), or None */
    PyObject *sandbox;         /* sandbox state object, or None (no sandbox) */
    PyObject *allow;
    double outlier;            /* < 0: none */
    Py_ssize_t max_len, capacity, data_at;
    Py_ssize_t chain_at, ring_at, ring;   /* the journal's digest: two chain slots, two pending buffers */
    long long clock_every;     /* the worker's clock boundaries: where run() may look at the clock */
    unsigned long owner;       /* forks_seen where the loop was made */
    Py_ssize_t armed_at, refusal_at;   /* the sandbox state's slots (byte offsets), when there is one */
    PyTypeObject *sandbox_type;        /* the type those offsets were checked against (a new reference) */
    int cleared;                       /* the garbage collector cleared this loop: run() refuses */
    Buf buf;
    long long dropped, restaged;   /* children made ahead and dropped; staged replacements put back */
    int span;                  /* how many children the next stretch makes at most (see make_ahead) */
} HotLoopObject;

/* The state of one run(): the input source's (cmutate_source.c), the digest's live pair and
   pending length (Journal.sel, Journal.used), the journal's memory. */
typedef struct {
    cm_Source src;
    Py_ssize_t sel, used;
    Py_buffer view;
    /* feedback.new and sink.keys: only Python code between two run() calls rebinds them
       (Worker._eventful, feedback.take_new); the target's calls append to them. */
    PyObject *news, *keys;
} RunState;

static int enter(HotLoopObject *self, RunState *st) {
    memset(st, 0, sizeof(*st));
    if (self->cleared) {
        PyErr_SetString(PyExc_ValueError, "this HotLoop was cleared by the garbage collector");
        return -1;
    }
    if (cm_source_enter(&st->src, self->source, self->mutate_args, self->replace_one, &self->buf) < 0) return -1;
    if (!(st->src.popped = PyList_New(0))) return -1;
    st->sel = (Py_ssize_t)cm_attr_ll(self->journal, s_sel);
    st->used = (Py_ssize_t)cm_attr_ll(self->journal, s_used);
    if (PyErr_Occurred()) return -1;
    if ((st->sel != 0 && st->sel != 1) || st->used < 0 || st->used > self->ring) {
        PyErr_SetString(PyExc_ValueError, "HotLoop: the journal's digest position is out of range");
        return -1;
    }
    if (!(st->news = PyObject_GetAttr(self->feedback, s_new)) || !(st->keys = PyObject_GetAttr(self->sink, s_keys)))
        return -1;
    if (!PyList_CheckExact(st->news) || !PyList_CheckExact(st->keys)) {
        PyErr_SetString(PyExc_TypeError, "HotLoop: feedback.new and sink.keys are lists");
        return -1;
    }
    if (PyObject_GetBuffer(self->mem, &st->view, PyBUF_WRITABLE) < 0) return -1;
    /* Every region the loop writes lies inside the journal's memory: the header, the data
       (capacity bytes at data_at), the two chain slots (64 bytes at chain_at) and the two
       pending buffers (2 * ring bytes at ring_at).  The offsets are not negative (HotLoop_new);
       the bounds are compared by subtraction, which cannot overflow. */
    Py_ssize_t len = st->view.len;
    if (len < H_SIZE || self->data_at > len - self->capacity || self->chain_at > len - 64
        || self->ring_at > len || self->ring > (len - self->ring_at) / 2) {
        PyBuffer_Release(&st->view);
        st->view.buf = NULL;
        PyErr_Format(PyExc_ValueError,
                     "HotLoop: the journal's regions lie outside its memory (%zd bytes: data %zd+%zd, chain %zd+64, "
                     "ring %zd+2*%zd)",
                     len, self->data_at, self->capacity, self->chain_at, self->ring_at, self->ring);
        return -1;
    }
    return 0;
}

/* Write the source's counters and the digest position back; release everything.  Keeps a pending exception. */
static int leave(HotLoopObject *self, RunState *st) {
    PyObject *exc = PyErr_GetRaisedException();
    int rc = cm_source_leave(&st->src, self->source);
    if (st->src.generated) {
        PyObject *sel = PyLong_FromSsize_t(st->sel), *used = PyLong_FromSsize_t(st->used);
        if (!sel || !used || PyObject_SetAttr(self->journal, s_sel, sel) < 0 || PyObject_SetAttr(self->journal, s_used, used) < 0)
            rc = -1;
        Py_XDECREF(sel);
        Py_XDECREF(used);
    }
    if (st->view.buf) PyBuffer_Release(&st->view);
    Py_CLEAR(st->news);
    Py_CLEAR(st->keys);
    if (exc) {
        if (rc < 0) PyErr_Clear();
        PyErr_SetRaisedException(exc);
        return -1;
    }
    return rc;
}

/* Journal.record(data): the case's record into the pending buffer, folding it into the
   other chain slot first when the record does not fit (see assay.engine.journal). */
static int record(HotLoopObject *self, RunState *st, const char *data, Py_ssize_t n) {
    unsigned char *mem = st->view.buf;
    unsigned char size[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n};
    Py_ssize_t rec = 4 + n;
    if (st->used + rec > self->ring) {
        SHA256_CTX sha;
        int lone = rec > self->ring, ok = SHA256_Init(&sha) == 1
            && SHA256_Update(&sha, mem + self->chain_at + 32 * st->sel, 32) == 1
            && SHA256_Update(&sha, mem + self->ring_at + st->sel * self->ring, (size_t)st->used) == 1
            && (!lone || (SHA256_Update(&sha, size, 4) == 1 && SHA256_Update(&sha, data, (size_t)n) == 1));
        st->sel = 1 - st->sel;
        st->used = 0;
        if (!ok || SHA256_Final(mem + self->chain_at + 32 * st->sel, &sha) != 1) {
            PyErr_SetString(PyExc_RuntimeError, "HotLoop: SHA-256 failed");
            return -1;
        }
        if (lone) return 0;
    }
    unsigned char *at = mem + self->ring_at + st->sel * self->ring + st->used;
    memcpy(at, size, 4);
    memcpy(at + 4, data, (size_t)n);
    st->used += rec;
    return 0;
}

/* Journal.begin(GENERATED, i, CASE, data), as the Python loop inlines it; returns the start time. */
static double journal_begin(HotLoopObject *self, RunState *st, long long i, const char *data, Py_ssize_t n) {
    unsigned char *mem = st->view.buf;
    Py_ssize_t nj = n < self->capacity ? n : self->capacity;
    memcpy(mem + self->data_at, data, (size_t)nj);
    double started = cm_monotonic(), limit = 0.0;
    long long sub = J_CASE;
    unsigned long long length = (unsigned long long)nj;
    mem[0] = J_IDLE;
    mem[1] = J_GENERATED;
    memset(mem + 2, 0, 6);
    memcpy(mem + H_POSITION, &i, 8);
    memcpy(mem + H_SUB, &sub, 8);
    memcpy(mem + H_STARTED, &started, 8);
    memcpy(mem + H_LENGTH, &length, 8);
    unsigned long long used = (unsigned long long)st->used, sel = (unsigned long long)st->sel;
    memcpy(mem + H_LIMIT, &limit, 8);
    memcpy(mem + H_USED, &used, 8);
    memcpy(mem + H_SEL, &sel, 8);
    mem[0] = J_RUNNING;
    return started;
}

/* The target's call with the sandbox armed: *value, *error (new or NULL), *refusal (new).
   sandbox.arm's other two fields need no setting per case: run() sets ``allow`` (the
   same object every arm of this target sets), and ``refusal`` is None whenever the
   sandbox is disarmed (only an armed hook sets it; every disarm clears it). */
static inline PyObject **slot(PyObject *o, Py_ssize_t at) { return (PyObject **)((char *)o + at); }

static int call(HotLoopObject *self, PyObject *data, PyObject **value, PyObject **error, PyObject **refusal) {
    *value = *error = NULL;
    PyObject *sandbox = self->sandbox;
    if (sandbox != Py_None && Py_TYPE(sandbox) != self->sandbox_type) {   /* the offsets are its type's */
        PyErr_SetString(PyExc_TypeError, "HotLoop: the sandbox state's type changed since the loop was made");
        return -1;
    }
    if (sandbox != Py_None) Py_XSETREF(*slot(sandbox, self->armed_at), Py_NewRef(Py_True));
    *value = PyObject_CallOneArg(self->fn, data);
    if (!*value) *error = PyErr_GetRaisedException();
    if (sandbox != Py_None) {
        Py_XSETREF(*slot(sandbox, self->armed_at), Py_NewRef(Py_False));
        /* the refusal's reference moves to the caller; an unset slot reads as None */
        PyObject *got = *slot(sandbox, self->refusal_at);
        *slot(sandbox, self->refusal_at) = Py_NewRef(Py_None);
        *refusal = got ? got : Py_NewRef(Py_None);
    } else {
        *refusal = Py_NewRef(Py_None);
    }
    if (sandbox != Py_None && Py_TYPE(sandbox) != self->sandbox_type) {   /* the target reassigned __class__ */
        Py_CLEAR(*value);
        Py_CLEAR(*error);
        Py_CLEAR(*refusal);
        PyErr_SetString(PyExc_TypeError, "HotLoop: the sandbox state's type changed while the target ran");
        return -1;
    }
    if (forks_seen != self->owner) {   /* a process the target forked came back here */
        PyObject *args[] = {self->target, data};
        PyObject *r = PyObject_Vectorcall(self->strays_returned, args, 2, NULL);
        if (!r) Py_XSETREF(*error, PyErr_GetRaisedException());   /* raised in `finally`: it replaces */
        Py_XDECREF(r);
    }
    return 0;
}

/* Features all seen before show nothing (Worker._block): 1 when so (the list is emptied), 0 when not. */
static int keys_seen(HotLoopObject *self, PyObject *keys) {
    /* a key's __hash__ or __eq__ may be Python code: the length is read again each turn, the key held */
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(keys); k++) {
        PyObject *key = Py_NewRef(PyList_GET_ITEM(keys, k));
        int in = PySet_Contains(self->seen, key);
        Py_DECREF(key);
        if (in <= 0) return in;
    }
    Py_ssize_t n = PyList_GET_SIZE(keys);
    return n && PyList_SetSlice(keys, 0, n, NULL) < 0 ? -1 : 1;
}

/* ValueProfile.refuses(cases) */
static int values_refuse(HotLoopObject *self, long long cases) {
    long long runs = cm_attr_ll(self->values, s_runs), features = cm_attr_ll(self->values, s_features);
    if (PyErr_Occurred()) return -1;
    return (double)runs >= VP_BUDGET * (double)cases + 1 || features >= VP_MAX_FEATURES;
}

/* Did the case show nothing (the Python loop's `continue`)?  1 yes, 0 no, -1 error. */
static int uneventful(HotLoopObject *self, RunState *st, PyObject *value, PyObject *error, double started,
                      long long executed) {
    if (PyList_GET_SIZE(st->news)) return 0;
    int seen = keys_seen(self, st->keys);
    if (seen <= 0) return seen;
    if (self->values != Py_None && st->src.last_pair != Py_None) {
        int judged = PySet_Contains(self->tried, st->src.last_pair);
        if (judged < 0) return -1;
        if (!judged && (judged = values_refuse(self, executed)) <= 0) return judged;
    }
    int boring;
    if (error) {
        boring = PySet_Contains(self->rejects, (PyObject *)Py_TYPE(error));
    } else {
        PyObject *kind = (value == Py_None || value == Py_True || value == Py_False) ? value : (PyObject *)Py_TYPE(value);
        boring = PySet_Contains(self->boring, kind);
    }
    if (boring <= 0) return boring;
    return self->outlier < 0 || cm_monotonic() - started < self->outlier;
}

static PyObject *result(int status, long long i, long long ran, PyObject *data, PyObject *ops, PyObject *value,
                        PyObject *error, PyObject *refusal, double started) {
    PyObject *none = Py_None;
    return Py_BuildValue("(iLLOOOOOd)", status, i, ran, data ? data : none, ops ? ops : none, value ? value : none,
                         error ? error : none, refusal ? refusal : none, started);
}

/* Children made ahead.  The loop makes the children of a stretch of cases (to the next
   clock boundary, the stop, or a child marked for repair) before it runs the first of
   them, then runs them one after another, with no generation between two calls: a
   json.loads call took 0.6-1.4 us longer with a child made between two calls than in a
   loop of calls alone (bench/interleave.py; the processor's caches and branch
   predictors, presumably).  Making a child reads only what an uneventful case leaves as
   it was, so the children are the ones the loop would have made one at a time.  When a
   case goes to Python, the children made after it are dropped and what making them
   changed in the source is put back: each pick's child count, the counters, and the
   staged replacements they took off the deque.  Where cases go to Python often (a
   campaign's first cases, a target that raises on most inputs) most children made ahead
   would be dropped, so a stretch is at most ``span`` children: it doubles after a stretch
   that ran to its end and halves at each drop. */
#define AHEAD_MAX 64

typedef struct {
    PyObject *data;            /* the child; NULL when making it raised (error) */
    PyObject *error;           /* what making it raised, or NULL */
    PyObject *op;              /* borrowed (interned), as cm_Source.op */
    PyObject *last_pair, *repair_guards;   /* new references, or NULL once taken */
    Py_ssize_t last_parent;    /* the parent whose child count making it incremented; -1: none */
    int applied[MAX_STACK], n_applied, repair;
    long long cases, repairs;  /* the source's counters before it was made */
    Py_ssize_t popped;         /* len(src.popped) before it was made */
} Child;

typedef struct {
    Child c[AHEAD_MAX];
    int n, k;                  /* made, taken */
} Ahead;

/* Make the children of cases i to end (at most self->span; up to the first marked for
   repair, or the first whose making raised, which is kept with its exception unless it is
   the first child: that one raises now, as the one-at-a-time loop would). */
static int make_ahead(HotLoopObject *self, RunState *st, Ahead *a, long long i, long long end) {
    if (a->n && a->k == a->n && self->span < AHEAD_MAX) self->span *= 2;   /* the last stretch ran to its end */
    a->n = a->k = 0;
    if (PyList_GET_SIZE(st->src.popped) && PyList_SetSlice(st->src.popped, 0, PyList_GET_SIZE(st->src.popped), NULL) < 0)
        return -1;
    for (long long j = i; j < end && a->n < self->span; j++) {
        Child *c = &a->c[a->n++];
        c->data = c->error = c->last_pair = c->repair_guards = NULL;
        c->cases = st->src.cases;
        c->repairs = st->src.repairs;
        c->popped = PyList_GET_SIZE(st->src.popped);
        Py_ssize_t parent = st->src.last_parent;
        st->src.last_parent = -1;   /* set once a pick (or the stage) has counted a child of it */
        RandomObject *rng = cm_stream_case(self->stream, j);
        int repair = rng ? cm_source_next(&st->src, rng, &c->data) : -1;
        c->op = st->src.op;
        c->last_parent = st->src.last_parent;
        if (c->last_parent < 0) st->src.last_parent = parent;
        if (repair < 0) {
            Py_CLEAR(c->data);
            if (a->n == 1) { a->n = 0; return -1; }
            c->error = PyErr_GetRaisedException();
            return 0;
        }
        c->repair = repair;
        c->last_pair = Py_NewRef(st->src.last_pair);
        c->repair_guards = Py_NewRef(st->src.repair_guards);
        memcpy(c->applied, st->src.applied, sizeof(c->applied));
        c->n_applied = st->src.n_applied;
        if (repair) break;
    }
    return 0;
}

/* The next child (new reference), with what the source says of it; NULL with its exception. */
static PyObject *take_child(RunState *st, Child *c) {
    st->src.op = c->op;
    if (c->last_parent >= 0) st->src.last_parent = c->last_parent;
    if (c->error) {
        PyErr_SetRaisedException(c->error);
        c->error = NULL;
        return NULL;
    }
    Py_SETREF(st->src.last_pair, c->last_pair);
    Py_SETREF(st->src.repair_guards, c->repair_guards);
    c->last_pair = c->repair_guards = NULL;
    memcpy(st->src.applied, c->applied, sizeof(c->applied));
    st->src.n_applied = c->n_applied;
    PyObject *data = c->data;
    c->data = NULL;
    return data;
}

/* Drop the children not taken and put back what making them changed.  Keeps a pending exception. */
static int drop_ahead(HotLoopObject *self, RunState *st, Ahead *a) {
    if (a->k >= a->n) return 0;
    if (self->span > 1) self->span /= 2;
    PyObject *exc = PyErr_GetRaisedException();
    int rc = 0;
    for (int m = a->n - 1; m >= a->k; m--) {
        Child *c = &a->c[m];
        if (c->last_parent >= 0 && rc == 0) rc = cm_source_uncount(&st->src, c->last_parent);
        Py_CLEAR(c->data);
        Py_CLEAR(c->error);
        Py_CLEAR(c->last_pair);
        Py_CLEAR(c->repair_guards);
        self->dropped++;
    }
    Child *first = &a->c[a->k];
    Py_ssize_t back = rc == 0 ? cm_source_restage(&st->src, first->popped) : -1;
    if (back < 0) rc = -1;
    else self->restaged += back;
    st->src.cases = first->cases;
    st->src.repairs = first->repairs;
    a->n = a->k = 0;
    if (exc) {
        if (rc < 0) PyErr_Clear();
        PyErr_SetRaisedException(exc);
        return -1;
    }
    return rc;
}

/* run(i, stop, executed, wake_at=None) -> (status, i, ran, data, ops, value, error, refusal, started);
   ``executed``: the worker's case count so far (value profile's budget is a share of it);
   ``wake_at``: a monotonic time; at a clock boundary from then on, run() returns (done) there. */
static PyObject *HotLoop_run(HotLoopObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 && nargs != 4) { PyErr_SetString(PyExc_TypeError, "run(i, stop, executed, wake_at=None)"); return NULL; }
    long long i = PyLong_AsLongLong(args[0]), stop = PyLong_AsLongLong(args[1]), executed = PyLong_AsLongLong(args[2]);
    long long ran = 0;
    int clock = nargs == 4 && args[3] != Py_None;
    double wake_at = clock ? PyFloat_AsDouble(args[3]) : 0.0;
    if (PyErr_Occurred()) return NULL;
    if (i < 0 || executed < 0 || executed > LLONG_MAX / 2 || stop > LLONG_MAX / 2) {
        PyErr_SetString(PyExc_ValueError, "run: 0 <= i, 0 <= executed, and stop and executed below 2**62");
        return NULL;
    }
    RunState st;
    Ahead ahead;
    ahead.n = ahead.k = 0;
    if (enter(self, &st) < 0) { leave(self, &st); return NULL; }
    if (self->sandbox != Py_None && PyObject_SetAttr(self->sandbox, s_allow, self->allow) < 0) {
        leave(self, &st);
        return NULL;
    }
    int status = ST_DONE;
    PyObject *data = NULL, *ops = NULL, *value = NULL, *error = NULL, *refusal = NULL;
    double started = 0.0;
    for (; i < stop; i++) {
        if (clock && i % self->clock_every == 0) {
            /* Python's signal handlers run here too (a target without Python code gives them no
               other chance); what one raises goes back as the error, after the cases counted */
            if (PyErr_CheckSignals() < 0) { error = PyErr_GetRaisedException(); status = ST_SIGNAL; break; }
            if (cm_monotonic() >= wake_at) break;   /* done: the boundary is Python's */
        }
        if (ahead.k == ahead.n) {   /* the next stretch's children; it ends before a clock boundary */
            if (!PyList_GET_SIZE(st.src.corpus)) { status = ST_PYTHON; break; }
            long long boundary;
            if (__builtin_mul_overflow(i / self->clock_every + 1, self->clock_every, &boundary)) boundary = LLONG_MAX;
            if (make_ahead(self, &st, &ahead, i, boundary < stop ? boundary : stop) < 0) goto fail;
        }
        Child *child = &ahead.c[ahead.k++];
        if (!(data = take_child(&st, child))) goto fail;
        if (child->repair) { status = ST_REPAIR; goto named; }
        Py_ssize_t n = PyBytes_GET_SIZE(data);
        if (record(self, &st, PyBytes_AS_STRING(data), n) < 0) goto fail;
        started = journal_begin(self, &st, i, PyBytes_AS_STRING(data), n);
        if (call(self, data, &value, &error, &refusal) < 0) {
            ((unsigned char *)st.view.buf)[0] = J_IDLE;
            goto fail;
        }
        ((unsigned char *)st.view.buf)[0] = J_IDLE;
        ran++;
        if (refusal == Py_None) {
            int quiet = uneventful(self, &st, value, error, started, executed + ran);
            if (quiet < 0) goto fail;
            if (quiet) {
                Py_CLEAR(data);
                Py_CLEAR(value);
                Py_CLEAR(error);
                Py_CLEAR(refusal);
                continue;
            }
        }
        status = ST_RAN;
        goto named;
    }
    goto done;
named:   /* the case goes to Python, with the names of its mutations */
    if (!(ops = cm_source_ops(&st.src))) goto fail;
done:
    if (drop_ahead(self, &st, &ahead) < 0) goto fail;
    if (leave(self, &st) < 0) goto cleanup;
    PyObject *out = result(status, i, ran, data, ops, value, error, refusal, started);
    Py_XDECREF(data);
    Py_XDECREF(ops);
    Py_XDECREF(value);
    Py_XDECREF(error);
    Py_XDECREF(refusal);
    return out;
fail:
    drop_ahead(self, &st, &ahead);
    leave(self, &st);
cleanup:
    Py_XDECREF(data);
    Py_XDECREF(ops);
    Py_XDECREF(value);
    Py_XDECREF(error);
    Py_XDECREF(refusal);
    return NULL;
}

/* The byte offset of slot ``name`` (an object slot of __slots__) in instances of type(o). */
static int slot_offset(PyObject *o, PyObject *name, Py_ssize_t *out) {
    PyObject *descr = PyObject_GetAttr((PyObject *)Py_TYPE(o), name);   /* on the class: the descriptor itself */
    if (!descr) return -1;
    /* The descriptor must be one of type(o)'s own slots (or a base's): a member descriptor of
       another class, set as a class attribute, would name an offset inside that class's
       instances.  The slot must lie inside the instance and hold an object pointer. */
    PyTypeObject *type = Py_TYPE(o);
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type);
    if (ok) {
        PyMemberDescrObject *member = (PyMemberDescrObject *)descr;
        Py_ssize_t at = member->d_member->offset;
        ok = member->d_member->type == Py_T_OBJECT_EX && !(member->d_member->flags & Py_READONLY)
             && !(member->d_member->flags & Py_RELATIVE_OFFSET)
             && PyType_IsSubtype(type, member->d_common.d_type)
             && at >= (Py_ssize_t)sizeof(PyObject) && at % (Py_ssize_t)sizeof(PyObject *) == 0
             && at <= member->d_common.d_type->tp_basicsize - (Py_ssize_t)sizeof(PyObject *)
             && at <= type->tp_basicsize - (Py_ssize_t)sizeof(PyObject *) && type->tp_itemsize == 0;
        if (ok) *out = at;
    }
    Py_DECREF(descr);
    if (!ok) PyErr_Format(PyExc_TypeError, "HotLoop: the sandbox state's %R is a writable __slots__ entry of its type", name);
    return ok ? 0 : -1;
}

static PyObject *HotLoop_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"fn", "target", "source", "stream", "mutate_args", "replace_one", "feedback", "sink",
                             "boring", "rejects", "seen", "values", "journal", "sandbox", "allow", "strays_returned", "outlier",
                             "data_at", "clock_every", NULL};
    PyObject *fn, *target, *source, *stream, *mutate_args, *replace_one, *feedback, *sink, *boring, *rejects, *seen,
        *values, *journal, *sandbox, *allow, *strays_returned, *outlier;
    Py_ssize_t data_at;
    long long clock_every;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "$OOOOOOOOOOOOOOOOOnL", kwlist, &fn, &target, &source, &stream,
                                     &mutate_args, &replace_one, &feedback, &sink, &boring, &rejects, &seen, &values,
                                     &journal, &sandbox, &allow, &strays_returned, &outlier, &data_at, &clock_every))
        return NULL;
    if (clock_every <= 0) {
        PyErr_SetString(PyExc_ValueError, "HotLoop: clock_every is positive");
        return NULL;
    }
    if (data_at < H_SIZE) {
        PyErr_SetString(PyExc_ValueError, "HotLoop: data_at lies inside the journal's header");
        return NULL;
    }
    if (Py_TYPE(stream) != &cm_StreamType || !PyTuple_Check(mutate_args) || PyTuple_GET_SIZE(mutate_args) != 7
        || !PyAnySet_Check(boring) || !PyAnySet_Check(rejects) || !PyAnySet_Check(seen)) {
        PyErr_SetString(PyExc_TypeError, "HotLoop: bad argument types");
        return NULL;
    }
    PyObject *tried = values == Py_None ? Py_NewRef(Py_None) : PyObject_GetAttrString(values, "tried");
    if (!tried) return NULL;
    if (tried != Py_None && !PyAnySet_Check(tried)) {
        Py_DECREF(tried);
        PyErr_SetString(PyExc_TypeError, "HotLoop: values.tried is a set");
        return NULL;
    }
    cm_MutateArgs ma;
    if (cm_mutate_args(&PyTuple_GET_ITEM(mutate_args, 0), &ma) < 0) return NULL;
    PyObject *mem = PyObject_GetAttrString(journal, "mem");
    /* the journal's sizes and offsets (Journal.capacity, .chain_at, .ring_at, .ring) */
    Py_ssize_t sizes[4] = {-1, -1, -1, -1};
    const char *size_names[4] = {"capacity", "chain_at", "ring_at", "ring"};
    for (int k = 0; mem && k < 4 && !PyErr_Occurred(); k++) {
        PyObject *v = PyObject_GetAttrString(journal, size_names[k]);
        sizes[k] = v ? PyLong_AsSsize_t(v) : -1;
        Py_XDECREF(v);
    }
    Py_ssize_t cap = sizes[0];
    double limit = outlier == Py_None ? -1.0 : PyFloat_AsDouble(outlier);
    if (mem && !PyErr_Occurred() && (sizes[0] < 0 || sizes[1] < 0 || sizes[2] < 0 || sizes[3] < 0))
        PyErr_SetString(PyExc_ValueError, "HotLoop: the journal's capacity, chain_at, ring_at and ring are not negative");
    if (!mem || PyErr_Occurred()) { Py_XDECREF(mem); Py_DECREF(tried); return NULL; }
    HotLoopObject *self = (HotLoopObject *)type->tp_alloc(type, 0);
    if (!self) { Py_DECREF(mem); Py_DECREF(tried); return NULL; }
    self->fn = Py_NewRef(fn);
    self->target = Py_NewRef(target);
    self->source = Py_NewRef(source);
    self->stream = (StreamObject *)Py_NewRef(stream);
    self->mutate_args = Py_NewRef(mutate_args);
    self->replace_one = Py_NewRef(replace_one);
    self->feedback = Py_NewRef(feedback);
    self->sink = Py_NewRef(sink);
    self->boring = Py_NewRef(boring);
    self->rejects = Py_NewRef(rejects);
    self->seen = Py_NewRef(seen);
    self->values = Py_NewRef(values);
    self->tried = tried;
    self->journal = Py_NewRef(journal);
    self->mem = mem;
    self->sandbox = Py_NewRef(sandbox);
    self->allow = Py_NewRef(allow);
    self->strays_returned = Py_NewRef(strays_returned);
    self->outlier = limit;
    self->max_len = ma.max_len;
    self->capacity = cap;
    self->chain_at = sizes[1];
    self->ring_at = sizes[2];
    self->ring = sizes[3];
    self->data_at = data_at;
    self->clock_every = clock_every;
    self->owner = forks_seen;
    self->span = 1;
    if (sandbox != Py_None) {
        self->sandbox_type = (PyTypeObject *)Py_NewRef(Py_TYPE(sandbox));
        if (slot_offset(sandbox, s_armed, &self->armed_at) < 0 || slot_offset(sandbox, s_refusal, &self->refusal_at) < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

/* GC support: the loop holds the target, the source, the feedback and the sink, which may
   hold it back (a worker that keeps its loop). */
static int HotLoop_traverse(HotLoopObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->fn);
    Py_VISIT(self->target);
    Py_VISIT(self->source);
    Py_VISIT((PyObject *)self->stream);
    Py_VISIT(self->mutate_args);
    Py_VISIT(self->replace_one);
    Py_VISIT(self->feedback);
    Py_VISIT(self->sink);
    Py_VISIT(self->boring);
    Py_VISIT(self->rejects);
    Py_VISIT(self->seen);
    Py_VISIT(self->values);
    Py_VISIT(self->tried);
    Py_VISIT(self->journal);
    Py_VISIT(self->mem);
    Py_VISIT(self->sandbox);
    Py_VISIT(self->allow);
    Py_VISIT(self->strays_returned);
    Py_VISIT((PyObject *)self->sandbox_type);
    return 0;
}

static int HotLoop_clear(HotLoopObject *self) {
    self->cleared = 1;   /* first: a finalizer that runs while the fields go may call run() */
    Py_CLEAR(self->fn);
    Py_CLEAR(self->target);
    Py_CLEAR(self->source);
    Py_CLEAR(self->stream);
    Py_CLEAR(self->mutate_args);
    Py_CLEAR(self->replace_one);
    Py_CLEAR(self->feedback);
    Py_CLEAR(self->sink);
    Py_CLEAR(self->boring);
    Py_CLEAR(self->rejects);
    Py_CLEAR(self->seen);
    Py_CLEAR(self->values);
    Py_CLEAR(self->tried);
    Py_CLEAR(self->journal);
    Py_CLEAR(self->mem);
    Py_CLEAR(self->sandbox);
    Py_CLEAR(self->allow);
    Py_CLEAR(self->strays_returned);
    Py_CLEAR(self->sandbox_type);
    return 0;
}

static void HotLoop_dealloc(HotLoopObject *self) {
    PyObject_GC_UnTrack(self);
    HotLoop_clear(self);
    PyMem_Free(self->buf.p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef HotLoop_methods[] = {
    {"run", (PyCFunction)(void (*)(void))HotLoop_run, METH_FASTCALL,
     "run(i, stop, executed, wake_at=None) -> (status, i, ran, data, ops, value, error, refusal, started): cases i.. "
     "until stop, a clock boundary at or after the monotonic time wake_at, or one "
     "Python must handle (status 1: generate and run it; 2: repair it; 3: judge it; 4: raise the error, from a signal "
     "handler)."},
    {NULL},
};

static PyMemberDef HotLoop_members[] = {
    {"dropped", Py_T_LONGLONG, offsetof(HotLoopObject, dropped), Py_READONLY,
     "children made ahead and dropped because a case before them went to Python"},
    {"restaged", Py_T_LONGLONG, offsetof(HotLoopObject, restaged), Py_READONLY,
     "staged replacements that dropped children had taken, put back on the deque"},
    {NULL},
};

PyTypeObject cm_HotLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.HotLoop",
    .tp_doc = "The worker's byte-mode hot loop (Worker._block with InputSource.next): the same cases, in C.",
    .tp_basicsize = sizeof(HotLoopObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = HotLoop_new,
    .tp_traverse = (traverseproc)HotLoop_traverse,
    .tp_clear = (inquiry)HotLoop_clear,
    .tp_dealloc = (destructor)HotLoop_dealloc,
    .tp_methods = HotLoop_methods,
    .tp_members = HotLoop_members,
};

int cm_loop_init(void) {
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_new, "new"}, {&s_keys, "keys"}, {&s_sel, "sel"}, {&s_used, "used"}, {&s_armed, "armed"}, {&s_refusal, "refusal"},
        {&s_allow, "allow"}, {&s_runs, "runs"}, {&s_features, "features"},
    };
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (!(*names[k].slot = PyUnicode_InternFromString(names[k].name))) return -1;
    if (cm_source_init() < 0) return -1;
    if (pthread_atfork(NULL, NULL, count_fork) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "HotLoop: pthread_atfork failed");
        return -1;
    }
    return PyType_Ready(&cm_HotLoopType);
}
