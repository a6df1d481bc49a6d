/*
 * HotLoop: the worker's byte-mode hot loop in C.
 *
 * Worker._block runs the generated cases of one clock interval: InputSource.next's
 * byte-mode path (pick a parent, maybe a comparison replacement, mutate), the digest
 * chain, the journal, the sandbox, the call, and the check that nothing happened.
 * This is that loop, computing exactly what the Python one computes: the same draws,
 * the same inputs, the same chain.  It hands a case back to Python (run() returns)
 * whenever the Python loop would leave its fast path:
 *
 *   PYTHON  the case's input comes from a path this loop does not run (random
 *           bytes while the corpus is empty): Python runs the whole case;
 *   REPAIR  the input was generated and marked for repair (its guards);
 *   RAN     the input ran and showed something, or may have (an exception that is
 *           not an expected rejection already seen, a refusal, news, a new outcome,
 *           a time outlier): Python judges it.
 *
 * The input source's counters (cases, repairs, last_parent, last_pair, repair_guards)
 * and the journal's chain are written back before every return.  tests/test_cmutate.py
 * runs whole campaigns both ways and compares their schedule digests.
 */
#include "cmutate.h"
#include <openssl/evp.h>
#include <time.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the journal header is written in the host's byte order, which must be little-endian"
#endif

enum { ST_DONE = 0, ST_PYTHON = 1, ST_REPAIR = 2, ST_RAN = 3 };

/* journal._HEADER = "<BBxxxxxxqqdQ32sd" */
#define H_POSITION 8
#define H_SUB 16
#define H_STARTED 24
#define H_LENGTH 32
#define H_CHAIN 40
#define H_LIMIT 72
#define H_SIZE 80
#define J_IDLE 0
#define J_RUNNING 1
#define J_GENERATED 1
#define J_CASE 0

static PyObject *s_new, *s_keys, *s_corpus, *s_cmp_pairs, *s_children, *s_trouble, *s_productive, *s_quiet,
    *s_guards, *s_staged, *s_cases, *s_repairs, *s_len_limit, *s_last_parent, *s_last_pair, *s_repair_guards,
    *s_chain, *s_armed, *s_refusal, *s_allow, *s_cmp_replace, *s_cmp_stage, *s_popleft, *s_runs, *s_features, *zero;

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
    long owner;
    EVP_MD_CTX *sha;
    EVP_MD *sha256;            /* fetched once: an implicit fetch per case takes a lock */
    Buf buf;
} HotLoopObject;

/* The per-run state: the input source's fields, read on entry and written back on return. */
typedef struct {
    PyObject *corpus, *cmp_pairs, *children, *trouble, *productive, *quiet, *guards, *staged;
    long long cases, repairs;
    Py_ssize_t len_limit;   /* -1: None */
    Py_ssize_t last_parent;
    PyObject *last_pair;    /* new reference: None or (index, pair) */
    PyObject *repair_guards;
    int generated;
    cm_MutateArgs ma;
    unsigned char chain[32];
    Py_buffer view;
} RunState;

static long long attr_ll(PyObject *o, PyObject *name) {
    PyObject *v = PyObject_GetAttr(o, name);
    if (!v) return -1;
    long long out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return out;
}

static int set_attr_ll(PyObject *o, PyObject *name, long long value) {
    PyObject *v = PyLong_FromLongLong(value);
    if (!v) return -1;
    int rc = PyObject_SetAttr(o, name, v);
    Py_DECREF(v);
    return rc;
}

static int enter(HotLoopObject *self, RunState *st) {
    PyObject *src = self->source;
    memset(st, 0, sizeof(*st));
    st->last_pair = Py_NewRef(Py_None);
    st->repair_guards = Py_NewRef(Py_None);
    PyObject **lists[] = {&st->corpus, &st->cmp_pairs, &st->children, &st->trouble, &st->productive, &st->guards};
    PyObject *names[] = {s_corpus, s_cmp_pairs, s_children, s_trouble, s_productive, s_guards};
    for (int k = 0; k < 6; k++) {
        *lists[k] = PyObject_GetAttr(src, names[k]);
        if (!*lists[k]) return -1;
        if (!PyList_CheckExact(*lists[k])) { PyErr_SetString(PyExc_TypeError, "HotLoop: the source's lists are lists"); return -1; }
    }
    st->quiet = PyObject_GetAttr(src, s_quiet);
    st->staged = st->quiet ? PyObject_GetAttr(src, s_staged) : NULL;
    if (!st->staged) return -1;
    if (!PyAnySet_CheckExact(st->quiet)) { PyErr_SetString(PyExc_TypeError, "HotLoop: source.quiet is a set"); return -1; }
    st->cases = attr_ll(src, s_cases);
    st->repairs = attr_ll(src, s_repairs);
    if (PyErr_Occurred()) return -1;
    PyObject *limit = PyObject_GetAttr(src, s_len_limit);
    if (!limit) return -1;
    st->len_limit = limit == Py_None ? -1 : PyLong_AsSsize_t(limit);
    Py_DECREF(limit);
    if (st->len_limit == -1 && PyErr_Occurred()) return -1;
    if (st->len_limit < -1) st->len_limit = 0;   /* max(limit, len(data)) is len(data) for any negative limit */
    if (cm_mutate_args(&PyTuple_GET_ITEM(self->mutate_args, 0), &st->ma) < 0) return -1;
    PyObject *chain = PyObject_GetAttr(self->journal, s_chain);
    if (!chain) return -1;
    if (!PyBytes_Check(chain) || PyBytes_GET_SIZE(chain) != 32) {
        Py_DECREF(chain);
        PyErr_SetString(PyExc_ValueError, "HotLoop: journal.chain is 32 bytes");
        return -1;
    }
    memcpy(st->chain, PyBytes_AS_STRING(chain), 32);
    Py_DECREF(chain);
    if (PyObject_GetBuffer(self->mem, &st->view, PyBUF_WRITABLE) < 0) return -1;
    if (st->view.len < self->data_at + self->capacity) {
        PyBuffer_Release(&st->view);
        st->view.buf = NULL;
        PyErr_SetString(PyExc_ValueError, "HotLoop: the journal is smaller than its capacity");
        return -1;
    }
    return 0;
}

/* Write the source's counters and the chain back; release everything.  Keeps a pending exception. */
static int leave(HotLoopObject *self, RunState *st) {
    PyObject *exc = PyErr_GetRaisedException();
    int rc = 0;
    if (st->generated) {
        PyObject *src = self->source;
        PyObject *parent = PyLong_FromSsize_t(st->last_parent);
        if (!parent || set_attr_ll(src, s_cases, st->cases) < 0 || set_attr_ll(src, s_repairs, st->repairs) < 0
            || PyObject_SetAttr(src, s_last_parent, parent) < 0 || PyObject_SetAttr(src, s_last_pair, st->last_pair) < 0
            || PyObject_SetAttr(src, s_repair_guards, st->repair_guards) < 0)
            rc = -1;
        Py_XDECREF(parent);
        PyObject *chain = PyBytes_FromStringAndSize((const char *)st->chain, 32);
        if (!chain || PyObject_SetAttr(self->journal, s_chain, chain) < 0) rc = -1;
        Py_XDECREF(chain);
    }
    if (st->view.buf) PyBuffer_Release(&st->view);
    Py_XDECREF(st->corpus);
    Py_XDECREF(st->cmp_pairs);
    Py_XDECREF(st->children);
    Py_XDECREF(st->trouble);
    Py_XDECREF(st->productive);
    Py_XDECREF(st->quiet);
    Py_XDECREF(st->guards);
    Py_XDECREF(st->staged);
    Py_XDECREF(st->last_pair);
    Py_XDECREF(st->repair_guards);
    if (exc) {
        if (rc < 0) PyErr_Clear();
        PyErr_SetRaisedException(exc);
        return -1;
    }
    return rc;
}

static int in_quiet(RunState *st, Py_ssize_t index) {
    if (!PySet_GET_SIZE(st->quiet)) return 0;
    PyObject *k = PyLong_FromSsize_t(index);
    if (!k) return -1;
    int rc = PySet_Contains(st->quiet, k);
    Py_DECREF(k);
    return rc;
}

static int list_ll(PyObject *list, Py_ssize_t index, long long *out) {
    *out = PyLong_AsLongLong(PyList_GET_ITEM(list, index));
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* InputSource._pick(rng, n, weigh=True, quiet_ok=False) */
static int pick(RunState *st, RandomObject *rng, Py_ssize_t n, Py_ssize_t *out) {
    uint64_t x;
    if (cm_rng_below(rng, (uint64_t)1 << 48, &x) < 0) return -1;
    double roll = (double)(x & 0xFFFF) * (1.0 / 65536);
    x >>= 16;
    Py_ssize_t index, n_productive = PyList_GET_SIZE(st->productive);
    if (n > RECENT_WINDOW && roll < RECENT_SHARE) {
        index = n - 1 - (Py_ssize_t)(x % RECENT_WINDOW);
        int q = in_quiet(st, index);
        if (q < 0) return -1;
        if (q) index = (Py_ssize_t)((x >> 2) % (uint64_t)n);
    } else if (n_productive && roll < RECENT_SHARE + PRODUCTIVE_SHARE) {
        index = PyLong_AsSsize_t(PyList_GET_ITEM(st->productive, (Py_ssize_t)(x % (uint64_t)n_productive)));
        if (index == -1 && PyErr_Occurred()) return -1;
    } else {
        index = (Py_ssize_t)(x % (uint64_t)n);
    }
    int q = in_quiet(st, index);
    if (q < 0) return -1;
    if (q) index = (Py_ssize_t)((x >> 3) % (uint64_t)n);
    if (index < 0 || index >= n) { PyErr_SetString(PyExc_IndexError, "HotLoop: a parent index out of range"); return -1; }
    long long trouble, children;
    if (list_ll(st->trouble, index, &trouble) < 0) return -1;
    if (trouble) {
        for (int k = 0; k < REPICKS; k++) {
            if (list_ll(st->trouble, index, &trouble) < 0 || list_ll(st->children, index, &children) < 0) return -1;
            if (!trouble) break;
            double u, skip = (double)trouble / (double)(children + 1);
            if (cm_rng_random(rng, &u) < 0) return -1;
            if (u >= (skip < MAX_SKIP ? skip : MAX_SKIP)) break;
            uint64_t v;
            if (cm_rng_below(rng, (uint64_t)n, &v) < 0) return -1;
            index = (Py_ssize_t)v;
        }
    }
    if (list_ll(st->children, index, &children) < 0) return -1;
    PyObject *more = PyLong_FromLongLong(children + 1);
    if (!more || PyList_SetItem(st->children, index, more) < 0) return -1;
    *out = index;
    return 0;
}

/* InputSource._maybe_repair: 1 when the child is marked for repair. */
static int maybe_repair(RunState *st, RandomObject *rng, Py_ssize_t index) {
    PyObject *guards = PyList_GET_ITEM(st->guards, index);
    int has = PyObject_IsTrue(guards);
    if (has <= 0) return has;
    if (!((double)st->repairs < REPAIR_BUDGET * (double)st->cases)) return 0;
    double u;
    if (cm_rng_random(rng, &u) < 0) return -1;
    if (!(u < REPAIR_SHARE)) return 0;
    st->repairs += 1;
    Py_SETREF(st->repair_guards, Py_NewRef(guards));
    return 1;
}

/* InputSource._staged: the next replacement of the input-to-state stage that still applies.
   1 with *data and *ops (new), 0 when none does, -1 on error. */
static int staged_next(HotLoopObject *self, RunState *st, PyObject **data, PyObject **ops) {
    for (;;) {
        Py_ssize_t left = PyObject_Length(st->staged);
        if (left <= 0) return (int)left;
        PyObject *item = PyObject_CallMethodNoArgs(st->staged, s_popleft);
        if (!item) return -1;
        Py_ssize_t index;
        PyObject *pair, *pairs, *parent;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2
            || ((index = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0))) == -1 && PyErr_Occurred())
            || index < 0 || index >= PyList_GET_SIZE(st->corpus) || index >= PyList_GET_SIZE(st->cmp_pairs)) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "HotLoop: staged items are (index, pair)");
            Py_DECREF(item);
            return -1;
        }
        pair = PyTuple_GET_ITEM(item, 1);
        pairs = PyList_GET_ITEM(st->cmp_pairs, index);
        int live = PySequence_Contains(pairs, pair);   /* dropped since: it led into a known failure */
        if (live <= 0) {
            Py_DECREF(item);
            if (live < 0) return -1;
            continue;
        }
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(item);
            PyErr_SetString(PyExc_TypeError, "HotLoop: replacements are pairs");
            return -1;
        }
        parent = PyList_GET_ITEM(st->corpus, index);
        PyObject *args[] = {parent, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), zero};
        PyObject *out = PyObject_Vectorcall(self->replace_one, args, 4, NULL);
        if (!out) { Py_DECREF(item); return -1; }
        if (out == Py_None) { Py_DECREF(out); Py_DECREF(item); continue; }
        if (!PyBytes_Check(out)) {
            Py_DECREF(out);
            Py_DECREF(item);
            PyErr_SetString(PyExc_TypeError, "replace_one gives bytes");
            return -1;
        }
        st->last_parent = index;
        long long children;
        PyObject *more = NULL;
        if (list_ll(st->children, index, &children) < 0 || !(more = PyLong_FromLongLong(children + 1))
            || PyList_SetItem(st->children, index, more) < 0) {
            Py_DECREF(out);
            Py_DECREF(item);
            return -1;
        }
        PyObject *last = Py_BuildValue("(nO)", index, pair);
        Py_DECREF(item);
        if (!last) { Py_DECREF(out); return -1; }
        Py_SETREF(st->last_pair, last);
        if (PyBytes_GET_SIZE(out) > self->max_len)
            Py_SETREF(out, PyBytes_FromStringAndSize(PyBytes_AS_STRING(out), self->max_len));
        *ops = out ? Py_BuildValue("[O]", s_cmp_stage) : NULL;
        if (!*ops) { Py_XDECREF(out); return -1; }
        *data = out;
        return 1;
    }
}

/* InputSource.next(rng) in byte mode, past its checks: *data (new) and *ops (new), 1 when marked for repair. */
static int generate(HotLoopObject *self, RunState *st, RandomObject *rng, PyObject **data, PyObject **ops) {
    if (st->cases % STAGE_EVERY == 0) {
        int staged = staged_next(self, st, data, ops);
        if (staged) return staged < 0 ? -1 : 0;
    }
    Py_ssize_t n = PyList_GET_SIZE(st->corpus), index;
    if (pick(st, rng, n, &index) < 0) return -1;
    st->last_parent = index;
    PyObject *parent = PyList_GET_ITEM(st->corpus, index);
    PyObject *pairs = PyList_GET_ITEM(st->cmp_pairs, index);
    if (!PyBytes_Check(parent) || !PyList_Check(pairs)) { PyErr_SetString(PyExc_TypeError, "HotLoop: bad corpus"); return -1; }
    Py_ssize_t n_pairs = PyList_GET_SIZE(pairs);
    if (n_pairs) {
        double u;
        if (cm_rng_random(rng, &u) < 0) return -1;
        if (u < CMP_SHARE) {
            uint64_t k, at;
            if (cm_rng_below(rng, (uint64_t)n_pairs, &k) < 0) return -1;
            PyObject *pair = Py_NewRef(PyList_GET_ITEM(pairs, (Py_ssize_t)k));
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || cm_rng_below(rng, 64, &at) < 0) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "HotLoop: replacements are pairs");
                Py_DECREF(pair);
                return -1;
            }
            PyObject *where = PyLong_FromUnsignedLongLong(at);
            PyObject *args[] = {parent, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), where};
            PyObject *out = where ? PyObject_Vectorcall(self->replace_one, args, 4, NULL) : NULL;
            Py_XDECREF(where);
            if (!out) { Py_DECREF(pair); return -1; }
            if (out != Py_None) {
                PyObject *last = Py_BuildValue("(nN)", index, pair);
                if (!last) { Py_DECREF(out); return -1; }
                Py_SETREF(st->last_pair, last);
                if (!PyBytes_Check(out)) { Py_DECREF(out); PyErr_SetString(PyExc_TypeError, "replace_one gives bytes"); return -1; }
                if (PyBytes_GET_SIZE(out) > self->max_len)
                    Py_SETREF(out, PyBytes_FromStringAndSize(PyBytes_AS_STRING(out), self->max_len));
                *ops = out ? Py_BuildValue("[O]", s_cmp_replace) : NULL;
                if (!*ops) { Py_XDECREF(out); return -1; }
                *data = out;
                return maybe_repair(st, rng, index);
            }
            Py_DECREF(out);
            Py_DECREF(pair);
        }
    }
    Py_ssize_t len = PyBytes_GET_SIZE(parent);
    if (st->len_limit >= 0 && len > st->len_limit) {
        int q = in_quiet(st, index);
        if (q < 0) return -1;
        if (q) len = st->len_limit;   /* a costly entry's children stay short */
    }
    int applied[MAX_STACK], n_applied;
    if (cm_mutate_into(&st->ma, rng, (const unsigned char *)PyBytes_AS_STRING(parent), len, st->corpus, st->len_limit,
                       &self->buf, applied, &n_applied) < 0)
        return -1;
    *data = PyBytes_FromStringAndSize((const char *)self->buf.p, self->buf.n);
    if (!*data) return -1;
    *ops = cm_applied_names(&st->ma, applied, n_applied);
    if (!*ops) { Py_CLEAR(*data); return -1; }
    if (PyList_GET_SIZE(PyList_GET_ITEM(st->guards, index))) return maybe_repair(st, rng, index);
    return 0;
}

static int chain_step(HotLoopObject *self, unsigned char *chain, const char *data, Py_ssize_t n) {
    unsigned char size[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8), (unsigned char)n};
    if (EVP_DigestInit_ex(self->sha, self->sha256, NULL) != 1 || EVP_DigestUpdate(self->sha, chain, 32) != 1
        || EVP_DigestUpdate(self->sha, size, 4) != 1 || EVP_DigestUpdate(self->sha, data, (size_t)n) != 1
        || EVP_DigestFinal_ex(self->sha, chain, NULL) != 1) {
        PyErr_SetString(PyExc_RuntimeError, "HotLoop: SHA-256 failed");
        return -1;
    }
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
    memcpy(mem + H_CHAIN, st->chain, 32);
    memcpy(mem + H_LIMIT, &limit, 8);
    mem[0] = J_RUNNING;
    return started;
}

/* The target's call with the sandbox armed: *value, *error (new or NULL), *refusal (new).
   sandbox.arm's other two fields need no setting per case: run() sets ``allow`` (the
   same object every arm of this target sets), and ``refusal`` is None whenever the
   sandbox is disarmed (only an armed hook sets it; every disarm clears it). */
static int call(HotLoopObject *self, PyObject *data, PyObject **value, PyObject **error, PyObject **refusal) {
    *value = *error = NULL;
    *refusal = Py_NewRef(Py_None);
    if (self->sandbox != Py_None && PyObject_SetAttr(self->sandbox, s_armed, Py_True) < 0) return -1;
    *value = PyObject_CallOneArg(self->fn, data);
    if (!*value) *error = PyErr_GetRaisedException();
    if (self->sandbox != Py_None) {
        PyObject *got;
        if (PyObject_SetAttr(self->sandbox, s_armed, Py_False) < 0
            || !(got = PyObject_GetAttr(self->sandbox, s_refusal))) return -1;
        Py_SETREF(*refusal, got);
        if (PyObject_SetAttr(self->sandbox, s_refusal, Py_None) < 0) return -1;
    }
    if ((long)getpid() != self->owner) {   /* a process the target forked came back here */
        PyObject *args[] = {self->target, data};
        PyObject *r = PyObject_Vectorcall(self->strays_returned, args, 2, NULL);
        if (!r) Py_XSETREF(*error, PyErr_GetRaisedException());   /* raised in `finally`: it replaces */
        Py_XDECREF(r);
    }
    return 0;
}

static int list_size(PyObject *owner, PyObject *name, Py_ssize_t *out) {
    PyObject *v = PyObject_GetAttr(owner, name);
    if (!v) return -1;
    *out = PyObject_Length(v);
    Py_DECREF(v);
    return *out < 0 ? -1 : 0;
}

/* Did the case show nothing (the Python loop's `continue`)?  1 yes, 0 no, -1 error. */
/* Features all seen before show nothing (Worker._block): 1 when so (the list is emptied), 0 when not. */
static int keys_seen(HotLoopObject *self) {
    PyObject *keys = PyObject_GetAttr(self->sink, s_keys);
    if (!keys) return -1;
    if (!PyList_Check(keys)) { Py_DECREF(keys); PyErr_SetString(PyExc_TypeError, "HotLoop: sink.keys is a list"); return -1; }
    Py_ssize_t n = PyList_GET_SIZE(keys);
    for (Py_ssize_t k = 0; k < n; k++) {
        int in = PySet_Contains(self->seen, PyList_GET_ITEM(keys, k));
        if (in <= 0) { Py_DECREF(keys); return in; }
    }
    int rc = n ? PyList_SetSlice(keys, 0, n, NULL) : 0;
    Py_DECREF(keys);
    return rc < 0 ? -1 : 1;
}

/* ValueProfile.refuses(cases) */
static int values_refuse(HotLoopObject *self, long long cases) {
    long long runs = attr_ll(self->values, s_runs), features = attr_ll(self->values, s_features);
    if (PyErr_Occurred()) return -1;
    return (double)runs >= VP_BUDGET * (double)cases + 1 || features >= VP_MAX_FEATURES;
}

static int uneventful(HotLoopObject *self, RunState *st, PyObject *value, PyObject *error, double started,
                      long long executed) {
    Py_ssize_t news;
    if (list_size(self->feedback, s_new, &news) < 0) return -1;
    if (news) return 0;
    int seen = keys_seen(self);
    if (seen <= 0) return seen;
    if (self->values != Py_None && st->last_pair != Py_None) {
        int judged = PySet_Contains(self->tried, st->last_pair);
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

/* run(i, stop, executed) -> (status, i, ran, data, ops, value, error, refusal, started);
   ``executed``: the worker's case count so far (value profile's budget is a share of it). */
static PyObject *HotLoop_run(HotLoopObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "run(i, stop, executed)"); return NULL; }
    long long i = PyLong_AsLongLong(args[0]), stop = PyLong_AsLongLong(args[1]), executed = PyLong_AsLongLong(args[2]);
    long long ran = 0;
    if (PyErr_Occurred()) return NULL;
    RunState st;
    if (enter(self, &st) < 0) { leave(self, &st); return NULL; }
    if (self->sandbox != Py_None && PyObject_SetAttr(self->sandbox, s_allow, self->allow) < 0) {
        leave(self, &st);
        return NULL;
    }
    int status = ST_DONE;
    PyObject *data = NULL, *ops = NULL, *value = NULL, *error = NULL, *refusal = NULL;
    double started = 0.0;
    for (; i < stop; i++) {
        if (!PyList_GET_SIZE(st.corpus)) { status = ST_PYTHON; break; }
        RandomObject *rng = cm_stream_case(self->stream, i);
        if (!rng) goto fail;
        st.generated = 1;
        Py_SETREF(st.last_pair, Py_NewRef(Py_None));
        Py_SETREF(st.repair_guards, Py_NewRef(Py_None));
        st.cases += 1;
        int repair = generate(self, &st, rng, &data, &ops);
        if (repair < 0) goto fail;
        if (repair) { status = ST_REPAIR; break; }
        Py_ssize_t n = PyBytes_GET_SIZE(data);
        if (chain_step(self, st.chain, PyBytes_AS_STRING(data), n) < 0) goto fail;
        started = journal_begin(self, &st, i, PyBytes_AS_STRING(data), n);
        if (call(self, data, &value, &error, &refusal) < 0) goto fail;
        ((unsigned char *)st.view.buf)[0] = J_IDLE;
        ran++;
        if (refusal == Py_None) {
            int quiet = uneventful(self, &st, value, error, started, executed + ran);
            if (quiet < 0) goto fail;
            if (quiet) {
                Py_CLEAR(data);
                Py_CLEAR(ops);
                Py_CLEAR(value);
                Py_CLEAR(error);
                Py_CLEAR(refusal);
                continue;
            }
        }
        status = ST_RAN;
        break;
    }
    if (leave(self, &st) < 0) goto cleanup;
    PyObject *out = result(status, i, ran, data, ops, value, error, refusal, started);
    Py_XDECREF(data);
    Py_XDECREF(ops);
    Py_XDECREF(value);
    Py_XDECREF(error);
    Py_XDECREF(refusal);
    return out;
fail:
    leave(self, &st);
cleanup:
    Py_XDECREF(data);
    Py_XDECREF(ops);
    Py_XDECREF(value);
    Py_XDECREF(error);
    Py_XDECREF(refusal);
    return NULL;
}

static PyObject *HotLoop_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"fn", "target", "source", "stream", "mutate_args", "replace_one", "feedback", "sink",
                             "boring", "rejects", "seen", "values", "journal", "sandbox", "allow", "strays_returned", "outlier",
                             "data_at", NULL};
    PyObject *fn, *target, *source, *stream, *mutate_args, *replace_one, *feedback, *sink, *boring, *rejects, *seen,
        *values, *journal, *sandbox, *allow, *strays_returned, *outlier;
    Py_ssize_t data_at;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "$OOOOOOOOOOOOOOOOOn", kwlist, &fn, &target, &source, &stream,
                                     &mutate_args, &replace_one, &feedback, &sink, &boring, &rejects, &seen, &values,
                                     &journal, &sandbox, &allow, &strays_returned, &outlier, &data_at))
        return NULL;
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
    PyObject *capacity = mem ? PyObject_GetAttrString(journal, "capacity") : NULL;
    Py_ssize_t cap = capacity ? PyLong_AsSsize_t(capacity) : -1;
    Py_XDECREF(capacity);
    double limit = outlier == Py_None ? -1.0 : PyFloat_AsDouble(outlier);
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
    self->data_at = data_at;
    self->owner = (long)getpid();
    self->sha = EVP_MD_CTX_new();
    self->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!self->sha || !self->sha256) { Py_DECREF(self); return PyErr_NoMemory(); }
    return (PyObject *)self;
}

static void HotLoop_dealloc(HotLoopObject *self) {
    Py_XDECREF(self->fn);
    Py_XDECREF(self->target);
    Py_XDECREF(self->source);
    Py_XDECREF((PyObject *)self->stream);
    Py_XDECREF(self->mutate_args);
    Py_XDECREF(self->replace_one);
    Py_XDECREF(self->feedback);
    Py_XDECREF(self->sink);
    Py_XDECREF(self->boring);
    Py_XDECREF(self->rejects);
    Py_XDECREF(self->seen);
    Py_XDECREF(self->values);
    Py_XDECREF(self->tried);
    Py_XDECREF(self->journal);
    Py_XDECREF(self->mem);
    Py_XDECREF(self->sandbox);
    Py_XDECREF(self->allow);
    Py_XDECREF(self->strays_returned);
    if (self->sha) EVP_MD_CTX_free(self->sha);
    if (self->sha256) EVP_MD_free(self->sha256);
    PyMem_Free(self->buf.p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef HotLoop_methods[] = {
    {"run", (PyCFunction)(void (*)(void))HotLoop_run, METH_FASTCALL,
     "run(i, stop, executed) -> (status, i, ran, data, ops, value, error, refusal, started): cases i.. until stop or one "
     "Python must handle (status 1: generate and run it; 2: repair it; 3: judge it)."},
    {NULL},
};

PyTypeObject cm_HotLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.HotLoop",
    .tp_doc = "The worker's byte-mode hot loop (Worker._block with InputSource.next): the same cases, in C.",
    .tp_basicsize = sizeof(HotLoopObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = HotLoop_new,
    .tp_dealloc = (destructor)HotLoop_dealloc,
    .tp_methods = HotLoop_methods,
};

int cm_loop_init(void) {
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_new, "new"}, {&s_keys, "keys"}, {&s_corpus, "corpus"}, {&s_cmp_pairs, "cmp_pairs"},
        {&s_children, "children"}, {&s_trouble, "trouble"}, {&s_productive, "productive"}, {&s_quiet, "quiet"},
        {&s_guards, "guards"}, {&s_staged, "staged"}, {&s_cases, "cases"}, {&s_repairs, "repairs"},
        {&s_len_limit, "len_limit"}, {&s_last_parent, "last_parent"}, {&s_last_pair, "last_pair"},
        {&s_repair_guards, "repair_guards"}, {&s_chain, "chain"}, {&s_armed, "armed"}, {&s_refusal, "refusal"},
        {&s_allow, "allow"}, {&s_cmp_replace, "cmp-replace"}, {&s_cmp_stage, "cmp-stage"}, {&s_popleft, "popleft"},
        {&s_runs, "runs"}, {&s_features, "features"},
    };
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (!(*names[k].slot = PyUnicode_InternFromString(names[k].name))) return -1;
    if (!(zero = PyLong_FromLong(0))) return -1;
    return PyType_Ready(&cm_HotLoopType);
}
