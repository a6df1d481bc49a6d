/*
 * InputSource.next's byte-mode path in C, for the hot loop (cmutate_loop.c): pick a parent
 * (InputSource._pick), the input-to-state stage (_staged), a comparison replacement or
 * ByteMutator.mutate, and the repair mark (_maybe_repair).  The same draws in the same
 * order as assay.engine.generate, with its tunables compiled in (cmutate.h).  The source's
 * lists are shared with Python; its counters are read on entry and written back on leave.
 */
#include "cmutate.h"

static PyObject *s_corpus, *s_cmp_pairs, *s_children, *s_trouble, *s_productive, *s_quiet, *s_guards, *s_staged,
    *s_cases, *s_repairs, *s_len_limit, *s_last_parent, *s_last_pair, *s_repair_guards, *s_cmp_replace, *s_cmp_stage,
    *s_popleft, *s_appendleft, *zero;

int cm_source_init(void) {
    struct { PyObject **slot; const char *name; } names[] = {
        {&s_corpus, "corpus"}, {&s_cmp_pairs, "cmp_pairs"}, {&s_children, "children"}, {&s_trouble, "trouble"},
        {&s_productive, "productive"}, {&s_quiet, "quiet"}, {&s_guards, "guards"}, {&s_staged, "staged"},
        {&s_cases, "cases"}, {&s_repairs, "repairs"}, {&s_len_limit, "len_limit"}, {&s_last_parent, "last_parent"},
        {&s_last_pair, "last_pair"}, {&s_repair_guards, "repair_guards"}, {&s_cmp_replace, "cmp-replace"},
        {&s_cmp_stage, "cmp-stage"}, {&s_popleft, "popleft"}, {&s_appendleft, "appendleft"},
    };
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
        if (!(*names[k].slot = PyUnicode_InternFromString(names[k].name))) return -1;
    return (zero = PyLong_FromLong(0)) ? 0 : -1;
}

long long cm_attr_ll(PyObject *o, PyObject *name) {
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

int cm_source_enter(cm_Source *st, PyObject *src, PyObject *mutate_args, PyObject *replace_one, Buf *buf) {
    memset(st, 0, sizeof(*st));
    st->replace_one = replace_one;
    st->buf = buf;
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
    st->cases = cm_attr_ll(src, s_cases);
    st->repairs = cm_attr_ll(src, s_repairs);
    if (PyErr_Occurred()) return -1;
    PyObject *limit = PyObject_GetAttr(src, s_len_limit);
    if (!limit) return -1;
    st->len_limit = limit == Py_None ? -1 : PyLong_AsSsize_t(limit);
    Py_DECREF(limit);
    if (st->len_limit == -1 && PyErr_Occurred()) return -1;
    if (st->len_limit < -1) { PyErr_SetString(PyExc_ValueError, "HotLoop: a negative length limit"); return -1; }
    if (cm_source_check(st) < 0) return -1;
    return cm_mutate_args(&PyTuple_GET_ITEM(mutate_args, 0), &st->ma);
}

/* The source's parallel lists (one item per corpus entry) have one length: checked on entry and
   before each child, since Python code (the target, replace_one, a deque) runs in between. */
int cm_source_check(const cm_Source *st) {
    Py_ssize_t n = PyList_GET_SIZE(st->corpus);
    if (PyList_GET_SIZE(st->cmp_pairs) != n || PyList_GET_SIZE(st->children) != n || PyList_GET_SIZE(st->trouble) != n
        || PyList_GET_SIZE(st->guards) != n) {
        PyErr_Format(PyExc_ValueError,
                     "HotLoop: the source's parallel lists differ in length (corpus %zd, cmp_pairs %zd, children %zd, "
                     "trouble %zd, guards %zd)",
                     n, PyList_GET_SIZE(st->cmp_pairs), PyList_GET_SIZE(st->children), PyList_GET_SIZE(st->trouble),
                     PyList_GET_SIZE(st->guards));
        return -1;
    }
    return 0;
}

/* list[index] (a new reference), or NULL with IndexError when index is outside the list: every
   read of the source's lists goes through here, whatever Python code did to them meanwhile. */
static PyObject *item_at(PyObject *list, Py_ssize_t index, const char *what) {
    if (index < 0 || index >= PyList_GET_SIZE(list)) {
        PyErr_Format(PyExc_IndexError, "HotLoop: index %zd outside source.%s (length %zd)", index, what,
                     PyList_GET_SIZE(list));
        return NULL;
    }
    return Py_NewRef(PyList_GET_ITEM(list, index));
}

int cm_source_leave(cm_Source *st, PyObject *src) {
    int rc = 0;
    if (st->generated) {
        PyObject *parent = PyLong_FromSsize_t(st->last_parent);
        if (!parent || set_attr_ll(src, s_cases, st->cases) < 0 || set_attr_ll(src, s_repairs, st->repairs) < 0
            || PyObject_SetAttr(src, s_last_parent, parent) < 0 || PyObject_SetAttr(src, s_last_pair, st->last_pair) < 0
            || PyObject_SetAttr(src, s_repair_guards, st->repair_guards) < 0)
            rc = -1;
        Py_XDECREF(parent);
    }
    Py_CLEAR(st->corpus);
    Py_CLEAR(st->cmp_pairs);
    Py_CLEAR(st->children);
    Py_CLEAR(st->trouble);
    Py_CLEAR(st->productive);
    Py_CLEAR(st->quiet);
    Py_CLEAR(st->guards);
    Py_CLEAR(st->staged);
    Py_CLEAR(st->last_pair);
    Py_CLEAR(st->repair_guards);
    Py_CLEAR(st->popped);
    return rc;
}

static int in_quiet(cm_Source *st, Py_ssize_t index) {
    if (!PySet_GET_SIZE(st->quiet)) return 0;
    PyObject *k = PyLong_FromSsize_t(index);
    if (!k) return -1;
    int rc = PySet_Contains(st->quiet, k);
    Py_DECREF(k);
    return rc;
}

static int list_ll(PyObject *list, Py_ssize_t index, long long *out, const char *what) {
    PyObject *v = item_at(list, index, what);
    if (!v) return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* children[index] += delta: how many children entry index has had. */
static int add_children(cm_Source *st, Py_ssize_t index, long long delta) {
    long long children, sum;
    if (list_ll(st->children, index, &children, "children") < 0) return -1;
    if (__builtin_add_overflow(children, delta, &sum)) {
        PyErr_SetString(PyExc_OverflowError, "HotLoop: a child count out of range");
        return -1;
    }
    PyObject *count = PyLong_FromLongLong(sum);
    return count ? PyList_SetItem(st->children, index, count) : -1;   /* SetItem checks the index again */
}

int cm_source_uncount(cm_Source *st, Py_ssize_t parent) {
    return add_children(st, parent, -1);
}

Py_ssize_t cm_source_restage(cm_Source *st, Py_ssize_t from) {
    PyObject *popped = st->popped;
    Py_ssize_t back = 0;
    for (Py_ssize_t q = PyList_GET_SIZE(popped) - 1; q >= from; q--, back++) {
        PyObject *r = PyObject_CallMethodOneArg(st->staged, s_appendleft, PyList_GET_ITEM(popped, q));
        if (!r) return -1;
        Py_DECREF(r);
    }
    return PyList_SetSlice(popped, from, PyList_GET_SIZE(popped), NULL) < 0 ? -1 : back;
}

/* InputSource._pick(rng, n, weigh=True, quiet_ok=False) */
static int pick(cm_Source *st, RandomObject *rng, Py_ssize_t n, Py_ssize_t *out) {
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
        PyObject *entry = item_at(st->productive, (Py_ssize_t)(x % (uint64_t)n_productive), "productive");
        if (!entry) return -1;
        index = PyLong_AsSsize_t(entry);
        Py_DECREF(entry);
        if (index == -1 && PyErr_Occurred()) return -1;
    } else {
        index = (Py_ssize_t)(x % (uint64_t)n);
    }
    int q = in_quiet(st, index);
    if (q < 0) return -1;
    if (q) index = (Py_ssize_t)((x >> 3) % (uint64_t)n);
    if (index < 0 || index >= n) { PyErr_SetString(PyExc_IndexError, "HotLoop: a parent index out of range"); return -1; }
    long long trouble, children;
    if (list_ll(st->trouble, index, &trouble, "trouble") < 0) return -1;
    if (trouble) {
        for (int k = 0; k < REPICKS; k++) {
            if (list_ll(st->trouble, index, &trouble, "trouble") < 0
                || list_ll(st->children, index, &children, "children") < 0)
                return -1;
            if (!trouble) break;
            double u, skip = (double)trouble / (children == LLONG_MAX ? 0x1p63 : (double)(children + 1));
            if (cm_rng_random(rng, &u) < 0) return -1;
            if (u >= (skip < MAX_SKIP ? skip : MAX_SKIP)) break;
            uint64_t v;
            if (cm_rng_below(rng, (uint64_t)n, &v) < 0) return -1;
            index = (Py_ssize_t)v;
        }
    }
    if (add_children(st, index, 1) < 0) return -1;
    *out = index;
    return 0;
}

/* InputSource._maybe_repair: 1 when the child is marked for repair. */
static int maybe_repair(cm_Source *st, RandomObject *rng, Py_ssize_t index) {
    PyObject *guards = item_at(st->guards, index, "guards");
    if (!guards) return -1;
    int has = PyObject_IsTrue(guards);
    if (has <= 0) { Py_DECREF(guards); return has; }
    if (!((double)st->repairs < REPAIR_BUDGET * (double)st->cases)) { Py_DECREF(guards); return 0; }
    double u;
    if (cm_rng_random(rng, &u) < 0) { Py_DECREF(guards); return -1; }
    if (!(u < REPAIR_SHARE)) { Py_DECREF(guards); return 0; }
    st->repairs += 1;
    Py_SETREF(st->repair_guards, guards);
    return 1;
}

/* InputSource._staged: the next replacement of the input-to-state stage that still applies.
   1 with *data (new), 0 when none does, -1 on error. */
static int staged_next(cm_Source *st, PyObject **data) {
    for (;;) {
        Py_ssize_t left = PyObject_Length(st->staged);
        if (left <= 0) return (int)left;
        PyObject *item = PyObject_CallMethodNoArgs(st->staged, s_popleft);
        if (!item) return -1;
        if (st->popped && PyList_Append(st->popped, item) < 0) { Py_DECREF(item); return -1; }
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
        if (!(pairs = item_at(st->cmp_pairs, index, "cmp_pairs"))) { Py_DECREF(item); return -1; }
        int live = PySequence_Contains(pairs, pair);   /* dropped since: it led into a known failure */
        Py_DECREF(pairs);
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
        if (!(parent = item_at(st->corpus, index, "corpus"))) { Py_DECREF(item); return -1; }
        PyObject *args[] = {parent, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), zero};
        PyObject *out = PyObject_Vectorcall(st->replace_one, args, 4, NULL);
        Py_DECREF(parent);
        if (!out) { Py_DECREF(item); return -1; }
        if (out == Py_None) { Py_DECREF(out); Py_DECREF(item); continue; }
        if (!PyBytes_Check(out)) {
            Py_DECREF(out);
            Py_DECREF(item);
            PyErr_SetString(PyExc_TypeError, "replace_one gives bytes");
            return -1;
        }
        st->last_parent = index;
        if (add_children(st, index, 1) < 0) {
            Py_DECREF(out);
            Py_DECREF(item);
            return -1;
        }
        PyObject *last = Py_BuildValue("(nO)", index, pair);
        Py_DECREF(item);
        if (!last) { Py_DECREF(out); return -1; }
        Py_SETREF(st->last_pair, last);
        if (PyBytes_GET_SIZE(out) > st->ma.max_len)
            Py_SETREF(out, PyBytes_FromStringAndSize(PyBytes_AS_STRING(out), st->ma.max_len));
        if (!out) return -1;
        st->op = s_cmp_stage;
        *data = out;
        return 1;
    }
}

static int next_of(cm_Source *st, RandomObject *rng, Py_ssize_t index, PyObject *parent, PyObject *pairs,
                   PyObject **data);

int cm_source_next(cm_Source *st, RandomObject *rng, PyObject **data) {
    st->generated = 1;
    st->op = NULL;
    Py_SETREF(st->last_pair, Py_NewRef(Py_None));
    Py_SETREF(st->repair_guards, Py_NewRef(Py_None));
    st->cases += 1;
    if (st->cases % STAGE_EVERY == 0) {
        int staged = staged_next(st, data);
        if (staged) return staged < 0 ? -1 : 0;
    }
    if (cm_source_check(st) < 0) return -1;
    Py_ssize_t n = PyList_GET_SIZE(st->corpus), index;
    if (!n) { PyErr_SetString(PyExc_IndexError, "HotLoop: the corpus is empty"); return -1; }
    if (pick(st, rng, n, &index) < 0) return -1;
    st->last_parent = index;
    /* the parent and its pairs are held while Python code (replace_one) runs */
    PyObject *parent = item_at(st->corpus, index, "corpus");
    PyObject *pairs = parent ? item_at(st->cmp_pairs, index, "cmp_pairs") : NULL;
    int rc = pairs ? next_of(st, rng, index, parent, pairs, data) : -1;
    Py_XDECREF(parent);
    Py_XDECREF(pairs);
    return rc;
}

/* cm_source_next past the pick: a child of parent (corpus[index]), whose pairs are pairs. */
static int next_of(cm_Source *st, RandomObject *rng, Py_ssize_t index, PyObject *parent, PyObject *pairs,
                   PyObject **data) {
    if (!PyBytes_Check(parent) || !PyList_Check(pairs)) { PyErr_SetString(PyExc_TypeError, "HotLoop: bad corpus"); return -1; }
    Py_ssize_t n_pairs = PyList_GET_SIZE(pairs);
    if (n_pairs) {
        double u;
        if (cm_rng_random(rng, &u) < 0) return -1;
        if (u < CMP_SHARE) {
            uint64_t k, at;
            if (cm_rng_below(rng, (uint64_t)n_pairs, &k) < 0) return -1;
            if ((Py_ssize_t)k >= PyList_GET_SIZE(pairs)) {
                PyErr_SetString(PyExc_IndexError, "HotLoop: a comparison pair index out of range");
                return -1;
            }
            PyObject *pair = Py_NewRef(PyList_GET_ITEM(pairs, (Py_ssize_t)k));
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || cm_rng_below(rng, 64, &at) < 0) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "HotLoop: replacements are pairs");
                Py_DECREF(pair);
                return -1;
            }
            PyObject *where = PyLong_FromUnsignedLongLong(at);
            PyObject *args[] = {parent, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), where};
            PyObject *out = where ? PyObject_Vectorcall(st->replace_one, args, 4, NULL) : NULL;
            Py_XDECREF(where);
            if (!out) { Py_DECREF(pair); return -1; }
            if (out != Py_None) {
                PyObject *last = Py_BuildValue("(nN)", index, pair);
                if (!last) { Py_DECREF(out); return -1; }
                Py_SETREF(st->last_pair, last);
                if (!PyBytes_Check(out)) { Py_DECREF(out); PyErr_SetString(PyExc_TypeError, "replace_one gives bytes"); return -1; }
                if (PyBytes_GET_SIZE(out) > st->ma.max_len)
                    Py_SETREF(out, PyBytes_FromStringAndSize(PyBytes_AS_STRING(out), st->ma.max_len));
                if (!out) return -1;
                st->op = s_cmp_replace;
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
    if (cm_mutate_into(&st->ma, rng, (const unsigned char *)PyBytes_AS_STRING(parent), len, st->corpus, st->len_limit,
                       st->buf, st->applied, &st->n_applied) < 0)
        return -1;
    *data = PyBytes_FromStringAndSize((const char *)st->buf->p, st->buf->n);
    if (!*data) return -1;
    PyObject *guards = item_at(st->guards, index, "guards");
    if (!guards) { Py_CLEAR(*data); return -1; }
    int has = PyList_CheckExact(guards) ? PyList_GET_SIZE(guards) != 0 : PyObject_IsTrue(guards);
    Py_DECREF(guards);
    int repair = has > 0 ? maybe_repair(st, rng, index) : has;
    if (repair < 0) Py_CLEAR(*data);
    return repair;
}

PyObject *cm_source_ops(const cm_Source *st) {
    return st->op ? Py_BuildValue("[O]", st->op) : cm_applied_names(&st->ma, st->applied, st->n_applied);
}

/* cmplog.replace_one's twin: data with the pick-th occurrence (modulo their count, the
   first 64 counted, overlapping) of pattern replaced; None when there is none. */
PyObject *cm_replace_one(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4 || !PyBytes_Check(args[0]) || !PyBytes_Check(args[1]) || !PyBytes_Check(args[2])
        || !PyLong_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "replace_one(data: bytes, pattern: bytes, replacement: bytes, pick: int)");
        return NULL;
    }
    const char *d = PyBytes_AS_STRING(args[0]), *p = PyBytes_AS_STRING(args[1]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), m = PyBytes_GET_SIZE(args[1]), r = PyBytes_GET_SIZE(args[2]);
    Py_ssize_t spots[64], count = 0, start = 0;
    while (count < 64 && start + m <= n) {   /* bytes.find(pattern, start), start + 1 after each hit */
        const char *hit = m ? memmem(d + start, (size_t)(n - start), p, (size_t)m) : d + start;
        if (!hit) break;
        spots[count++] = hit - d;
        start = hit - d + 1;
    }
    if (!count) Py_RETURN_NONE;
    int overflow;
    long long pick = PyLong_AsLongLongAndOverflow(args[3], &overflow);
    Py_ssize_t k;
    if (pick == -1 && PyErr_Occurred()) return NULL;
    if (overflow) {   /* Python's modulo of a huge pick */
        PyObject *c = PyLong_FromSsize_t(count), *rem = c ? PyNumber_Remainder(args[3], c) : NULL;
        Py_XDECREF(c);
        if (!rem) return NULL;
        k = PyLong_AsSsize_t(rem);
        Py_DECREF(rem);
    } else {
        k = (Py_ssize_t)(pick % count);
        if (k < 0) k += count;
    }
    Py_ssize_t at = spots[k];
    PyObject *out = PyBytes_FromStringAndSize(NULL, n - m + r);
    if (!out) return NULL;
    char *o = PyBytes_AS_STRING(out);
    memcpy(o, d, (size_t)at);
    memcpy(o + at, PyBytes_AS_STRING(args[2]), (size_t)r);
    memcpy(o + at + r, d + at + m, (size_t)(n - at - m));
    return out;
}
