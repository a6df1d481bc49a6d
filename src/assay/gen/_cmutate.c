/*
 * assay.gen._cmutate: the byte-mode input generator in C.
 *
 * An optional accelerator with no behaviour of its own.  It computes exactly what
 * the pure-Python reference computes, draw for draw and byte for byte:
 *
 *   Random  = assay.engine.seeds.FastRandom   (a pool of hashed bits, consumed by divmod)
 *   Stream  = assay.engine.seeds.CaseStream   (case i's pool is a slice of one shake_128 block)
 *   mutate  = assay.gen.mutators.ByteMutator.mutate and the fifteen mutations it stacks
 *
 * so a campaign's schedule, corpus and findings do not depend on whether this module
 * was built.  tests/test_cmutate.py compares the two on many thousands of cases.
 * Hashing goes through Python's hashlib: it runs once per 64 cases (the stream) or
 * when a case draws more bits than its slice holds (rare).
 *
 * The pool is an unbounded non-negative integer: little-endian 32-bit limbs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef unsigned __int128 u128;

static PyObject *blake2b_fn;   /* hashlib.blake2b */
static PyObject *zero_obj;     /* 0 */
static PyObject *shake_fn;     /* hashlib.shake_128 */

/* Thresholds of seeds.py, as bit positions. */
#define FAST_N_BITS 48        /* _FAST_N = 2**48 */
#define FAST_POOL_BITS 112    /* _FAST_POOL = 2**112 */
#define RANDOM_LOW_BITS 117   /* _RANDOM_LOW = 2**(64 + 53) */
#define STREAM_BLOCK 64
#define STREAM_BYTES 48

/* ---------------------------------------------------------------- the pool */

typedef struct {
    uint64_t *d;
    Py_ssize_t n;    /* limbs in use; d[n-1] != 0 unless n == 0 */
    Py_ssize_t cap;
} Big;

static int big_reserve(Big *b, Py_ssize_t n) {
    if (n <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 8;
    while (cap < n) cap *= 2;
    uint64_t *d = PyMem_Realloc(b->d, (size_t)cap * sizeof(uint64_t));
    if (!d) { PyErr_NoMemory(); return -1; }
    b->d = d;
    b->cap = cap;
    return 0;
}

static void big_trim(Big *b) {
    while (b->n > 0 && b->d[b->n - 1] == 0) b->n--;
}

static Py_ssize_t big_bits(const Big *b) {
    if (b->n == 0) return 0;
    return (b->n - 1) * 64 + (64 - __builtin_clzll(b->d[b->n - 1]));
}

/* pool >= 2**k */
static int big_at_least_pow2(const Big *b, int k) { return big_bits(b) > k; }

/* pool < n << 64, i.e. (pool >> 64) < n */
static int big_below_shifted(const Big *b, uint64_t n) {
    if (b->n > 2) return 0;
    return (b->n == 2 ? b->d[1] : 0) < n;
}

/* (hi:lo) / n, with the quotient known to fit 64 bits (hi < n): one divq on x86-64,
   where a u128 division would call a library routine. */
static inline uint64_t div_wide(uint64_t hi, uint64_t lo, uint64_t n, uint64_t *rem) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t q, r;
    __asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(n));
    *rem = r;
    return q;
#else
    u128 cur = ((u128)hi << 64) | lo;
    *rem = (uint64_t)(cur % n);
    return (uint64_t)(cur / n);
#endif
}

/* pool >>= k for 0 < k < 64 */
static void big_shift_right(Big *b, int k) {
    Py_ssize_t n = b->n;
    for (Py_ssize_t i = 0; i < n; i++)
        b->d[i] = (b->d[i] >> k) | (i + 1 < n ? b->d[i + 1] << (64 - k) : 0);
    big_trim(b);
}

/* pool, r = divmod(pool, n) for 0 < n < 2**64 */
static uint64_t big_divmod(Big *b, uint64_t n) {
    if (b->n == 0) return 0;
    if ((n & (n - 1)) == 0) {  /* a power of two: a mask and a shift */
        uint64_t r = b->d[0] & (n - 1);
        if (n > 1) big_shift_right(b, __builtin_ctzll(n));
        return r;
    }
    uint64_t rem = 0;
    for (Py_ssize_t i = b->n - 1; i >= 0; i--)
        b->d[i] = div_wide(rem, b->d[i], n, &rem);  /* rem < n: the quotient fits */
    big_trim(b);
    return rem;
}

/* the low 53 bits, then pool >>= 53 */
static uint64_t big_take53(Big *b) {
    if (b->n == 0) return 0;
    uint64_t low = b->d[0] & ((((uint64_t)1) << 53) - 1);
    big_shift_right(b, 53);
    return low;
}

static uint64_t load_le64(const unsigned char *p, Py_ssize_t len) {
    uint64_t v = 0;
    for (Py_ssize_t k = 0; k < 8 && k < len; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* pool = (pool << 512) | int.from_bytes(block, "little") */
static int big_push_block(Big *b, const unsigned char *block) {
    if (big_reserve(b, b->n + 8) < 0) return -1;
    memmove(b->d + 8, b->d, (size_t)b->n * sizeof(uint64_t));
    for (int i = 0; i < 8; i++) b->d[i] = load_le64(block + 8 * i, 8);
    b->n += 8;
    big_trim(b);
    return 0;
}

/* pool = int.from_bytes(bytes, "little") */
static int big_load(Big *b, const unsigned char *p, Py_ssize_t len) {
    Py_ssize_t limbs = (len + 7) / 8;
    if (big_reserve(b, limbs) < 0) return -1;
    for (Py_ssize_t i = 0; i < limbs; i++) b->d[i] = load_le64(p + 8 * i, len - 8 * i);
    b->n = limbs;
    big_trim(b);
    return 0;
}

static PyObject *big_to_long(const Big *b) {
    PyObject *raw = PyBytes_FromStringAndSize(NULL, b->n * 8);
    if (!raw) return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(raw);
    for (Py_ssize_t i = 0; i < b->n; i++)
        for (int k = 0; k < 8; k++) p[8 * i + k] = (unsigned char)(b->d[i] >> (8 * k));
    PyObject *v = PyObject_CallMethod((PyObject *)&PyLong_Type, "from_bytes", "Os", raw, "little");
    Py_DECREF(raw);
    return v;
}

static int big_from_long(Big *b, PyObject *v) {
    if (!PyLong_Check(v)) { PyErr_SetString(PyExc_TypeError, "the pool is an int"); return -1; }
    int negative = PyObject_RichCompareBool(v, zero_obj, Py_LT);
    if (negative < 0) return -1;
    if (negative) { PyErr_SetString(PyExc_ValueError, "the pool is not negative"); return -1; }
    PyObject *bits = PyObject_CallMethod(v, "bit_length", NULL);
    if (!bits) return -1;
    Py_ssize_t nbits = PyLong_AsSsize_t(bits);
    Py_DECREF(bits);
    if (nbits < 0) return -1;
    PyObject *raw = PyObject_CallMethod(v, "to_bytes", "ns", (nbits + 7) / 8, "little");
    if (!raw) return -1;
    int rc = big_load(b, (const unsigned char *)PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw));
    Py_DECREF(raw);
    return rc;
}

/* ---------------------------------------------------------------- Random */

typedef struct {
    PyObject_HEAD
    Big pool;
    PyObject *key;     /* bytes */
    long long index;
    long long more;
} RandomObject;

static PyTypeObject RandomType;

/* FastRandom._refill: hash further blocks until pool >= need (given as a test). */
static int rng_refill_block(RandomObject *r) {
    r->more += 1;
    unsigned char tail[12];
    for (int i = 0; i < 8; i++) tail[i] = (unsigned char)(((unsigned long long)r->index) >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) tail[8 + i] = (unsigned char)(((unsigned long long)r->more) >> (24 - 8 * i));
    PyObject *msg = PyBytes_FromStringAndSize(NULL, PyBytes_GET_SIZE(r->key) + 12);
    if (!msg) return -1;
    memcpy(PyBytes_AS_STRING(msg), PyBytes_AS_STRING(r->key), PyBytes_GET_SIZE(r->key));
    memcpy(PyBytes_AS_STRING(msg) + PyBytes_GET_SIZE(r->key), tail, 12);
    PyObject *kw = Py_BuildValue("{s:i,s:y}", "digest_size", 64, "person", "assay-more");
    PyObject *args = PyTuple_Pack(1, msg);
    PyObject *h = (kw && args) ? PyObject_Call(blake2b_fn, args, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(args);
    Py_DECREF(msg);
    if (!h) return -1;
    PyObject *digest = PyObject_CallMethod(h, "digest", NULL);
    Py_DECREF(h);
    if (!digest) return -1;
    int rc = big_push_block(&r->pool, (const unsigned char *)PyBytes_AS_STRING(digest));
    Py_DECREF(digest);
    return rc;
}

/* _randbelow(n) for 0 < n < 2**64; -1 with an exception set on failure (r_out untouched). */
static int rng_below(RandomObject *r, uint64_t n, uint64_t *r_out) {
    if (n == 0) { PyErr_SetString(PyExc_ZeroDivisionError, "integer modulo by zero"); return -1; }
    if (n >= ((uint64_t)1 << FAST_N_BITS) || !big_at_least_pow2(&r->pool, FAST_POOL_BITS)) {
        while (big_below_shifted(&r->pool, n))
            if (rng_refill_block(r) < 0) return -1;
    }
    *r_out = big_divmod(&r->pool, n);
    return 0;
}

/* _randbelow(n) for any positive Python int n (the general path, through Python ints). */
static PyObject *rng_below_long(RandomObject *r, PyObject *n) {
    int small = 0;
    unsigned long long v = PyLong_AsUnsignedLongLong(n);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
        PyErr_Clear();   /* negative or too wide: the general path */
    } else {
        small = 1;
    }
    if (small && v > 0) {
        uint64_t out;
        if (rng_below(r, v, &out) < 0) return NULL;
        return PyLong_FromUnsignedLongLong(out);
    }
    /* need = n << 64; while pool < need: refill; pool, r = divmod(pool, n) */
    PyObject *sixty_four = PyLong_FromLong(64);
    PyObject *need = sixty_four ? PyNumber_Lshift(n, sixty_four) : NULL;
    Py_XDECREF(sixty_four);
    if (!need) return NULL;
    for (;;) {
        PyObject *pool = big_to_long(&r->pool);
        if (!pool) { Py_DECREF(need); return NULL; }
        int below = PyObject_RichCompareBool(pool, need, Py_LT);
        if (below <= 0) {
            Py_DECREF(need);
            if (below < 0) { Py_DECREF(pool); return NULL; }
            PyObject *qr = PyNumber_Divmod(pool, n);
            Py_DECREF(pool);
            if (!qr) return NULL;
            if (big_from_long(&r->pool, PyTuple_GET_ITEM(qr, 0)) < 0) { Py_DECREF(qr); return NULL; }
            PyObject *rest = PyTuple_GET_ITEM(qr, 1);
            Py_INCREF(rest);
            Py_DECREF(qr);
            return rest;
        }
        Py_DECREF(pool);
        if (rng_refill_block(r) < 0) { Py_DECREF(need); return NULL; }
    }
}

static int rng_random(RandomObject *r, double *out) {
    while (!big_at_least_pow2(&r->pool, RANDOM_LOW_BITS))
        if (rng_refill_block(r) < 0) return -1;
    *out = (double)big_take53(&r->pool) * 1.1102230246251565e-16;
    return 0;
}

/* randrange(start, stop) for machine-size ints: start + _randbelow(stop - start). */
static int rng_range(RandomObject *r, long long start, long long stop, long long *out) {
    if (stop <= start) {
        PyErr_Format(PyExc_ValueError, "empty range for randrange(%lld, %lld)", start, stop);
        return -1;
    }
    uint64_t v;
    if (rng_below(r, (uint64_t)(stop - start), &v) < 0) return -1;
    *out = start + (long long)v;
    return 0;
}

static PyObject *Random_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *pool, *key;
    long long index;
    static char *kwlist[] = {"pool", "key", "index", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OSL", kwlist, &pool, &key, &index)) return NULL;
    RandomObject *self = (RandomObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->pool.d = NULL;
    self->pool.n = self->pool.cap = 0;
    Py_INCREF(key);
    self->key = key;
    self->index = index;
    self->more = 0;
    if (big_from_long(&self->pool, pool) < 0) { Py_DECREF(self); return NULL; }
    return (PyObject *)self;
}

static void Random_dealloc(RandomObject *self) {
    PyMem_Free(self->pool.d);
    Py_XDECREF(self->key);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Random_randbelow(RandomObject *self, PyObject *n) {
    if (!PyLong_Check(n)) { PyErr_SetString(PyExc_TypeError, "n must be an int"); return NULL; }
    return rng_below_long(self, n);
}

static PyObject *Random_randrange(RandomObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) { PyErr_SetString(PyExc_TypeError, "randrange(start, stop=None)"); return NULL; }
    PyObject *start = args[0], *stop = nargs == 2 ? args[1] : Py_None;
    if (stop == Py_None) {
        int overflow = 0;
        long long s = PyLong_Check(start) ? PyLong_AsLongLongAndOverflow(start, &overflow) : 0;
        if (!PyLong_Check(start)) { PyErr_SetString(PyExc_TypeError, "randrange takes ints"); return NULL; }
        if (!overflow) {
            long long out;
            if (rng_range(self, 0, s, &out) < 0) return NULL;
            return PyLong_FromLongLong(out);
        }
        if (overflow < 0) { PyErr_SetString(PyExc_ValueError, "empty range for randrange"); return NULL; }
        return rng_below_long(self, start);
    }
    if (!PyLong_Check(start) || !PyLong_Check(stop)) { PyErr_SetString(PyExc_TypeError, "randrange takes ints"); return NULL; }
    PyObject *width = PyNumber_Subtract(stop, start);
    if (!width) return NULL;
    int positive = PyObject_RichCompareBool(width, zero_obj, Py_GT);
    if (positive < 0) { Py_DECREF(width); return NULL; }
    if (!positive) {
        Py_DECREF(width);
        PyErr_Format(PyExc_ValueError, "empty range for randrange(%R, %R)", start, stop);
        return NULL;
    }
    PyObject *v = rng_below_long(self, width);
    Py_DECREF(width);
    if (!v) return NULL;
    PyObject *out = PyNumber_Add(start, v);
    Py_DECREF(v);
    return out;
}

static PyObject *Random_randint(RandomObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "randint(a, b)"); return NULL; }
    PyObject *one = PyLong_FromLong(1);
    PyObject *stop = PyNumber_Add(args[1], one);
    Py_DECREF(one);
    if (!stop) return NULL;
    PyObject *pair[2] = {args[0], stop};
    PyObject *out = Random_randrange(self, pair, 2);
    Py_DECREF(stop);
    return out;
}

static PyObject *Random_random(RandomObject *self, PyObject *unused) {
    double v;
    if (rng_random(self, &v) < 0) return NULL;
    return PyFloat_FromDouble(v);
}

static PyObject *Random_choice(RandomObject *self, PyObject *seq) {
    Py_ssize_t n = PySequence_Size(seq);
    if (n < 0) return NULL;
    uint64_t at;
    if (rng_below(self, (uint64_t)n, &at) < 0) return NULL;
    return PySequence_GetItem(seq, (Py_ssize_t)at);
}

static PyObject *Random_shuffle(RandomObject *self, PyObject *x) {
    if (!PyList_Check(x)) { PyErr_SetString(PyExc_TypeError, "shuffle takes a list"); return NULL; }
    for (Py_ssize_t i = PyList_GET_SIZE(x) - 1; i >= 1; i--) {
        uint64_t j;
        if (rng_below(self, (uint64_t)i + 1, &j) < 0) return NULL;
        PyObject *a = PyList_GET_ITEM(x, i), *b = PyList_GET_ITEM(x, (Py_ssize_t)j);
        PyList_SET_ITEM(x, i, b);
        PyList_SET_ITEM(x, (Py_ssize_t)j, a);
    }
    Py_RETURN_NONE;
}

static PyObject *Random_getrandbits(RandomObject *self, PyObject *k) {
    long bits = PyLong_AsLong(k);
    if (bits == -1 && PyErr_Occurred()) return NULL;
    if (bits < 0) { PyErr_SetString(PyExc_ValueError, "negative shift count"); return NULL; }
    if (bits == 0) return PyLong_FromLong(0);
    PyObject *one = PyLong_FromLong(1);
    PyObject *n = PyNumber_Lshift(one, k);
    Py_DECREF(one);
    if (!n) return NULL;
    PyObject *out = rng_below_long(self, n);
    Py_DECREF(n);
    return out;
}

static PyObject *Random_randbytes(RandomObject *self, PyObject *n) {
    Py_ssize_t count = PyLong_AsSsize_t(n);
    if (count == -1 && PyErr_Occurred()) return NULL;
    PyObject *bits = PyLong_FromSsize_t(count * 8);
    if (!bits) return NULL;
    PyObject *v = Random_getrandbits(self, bits);
    Py_DECREF(bits);
    if (!v) return NULL;
    PyObject *out = PyObject_CallMethod(v, "to_bytes", "ns", count, "little");
    Py_DECREF(v);
    return out;
}

static PyObject *Random_expovariate(RandomObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double lambd = 1.0, v;
    if (nargs > 1) { PyErr_SetString(PyExc_TypeError, "expovariate(lambd=1.0)"); return NULL; }
    if (nargs == 1) { lambd = PyFloat_AsDouble(args[0]); if (lambd == -1.0 && PyErr_Occurred()) return NULL; }
    if (rng_random(self, &v) < 0) return NULL;
    if (lambd == 0.0) { PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero"); return NULL; }
    return PyFloat_FromDouble(-log(1.0 - v) / lambd);
}

static PyObject *Random_get_pool(RandomObject *self, void *c) { return big_to_long(&self->pool); }
static int Random_set_pool(RandomObject *self, PyObject *v, void *c) {
    if (!v) { PyErr_SetString(PyExc_AttributeError, "cannot delete the pool"); return -1; }
    return big_from_long(&self->pool, v);
}
static PyObject *Random_get_index(RandomObject *self, void *c) { return PyLong_FromLongLong(self->index); }
static int Random_set_index(RandomObject *self, PyObject *v, void *c) {
    long long x = v ? PyLong_AsLongLong(v) : -1;
    if (x == -1 && (!v || PyErr_Occurred())) { if (!v) PyErr_SetString(PyExc_AttributeError, "cannot delete"); return -1; }
    self->index = x;
    return 0;
}
static PyObject *Random_get_more(RandomObject *self, void *c) { return PyLong_FromLongLong(self->more); }
static int Random_set_more(RandomObject *self, PyObject *v, void *c) {
    long long x = v ? PyLong_AsLongLong(v) : -1;
    if (x == -1 && (!v || PyErr_Occurred())) { if (!v) PyErr_SetString(PyExc_AttributeError, "cannot delete"); return -1; }
    self->more = x;
    return 0;
}
static PyObject *Random_get_key(RandomObject *self, void *c) { Py_INCREF(self->key); return self->key; }

static PyGetSetDef Random_getset[] = {
    {"_pool", (getter)Random_get_pool, (setter)Random_set_pool, "the pool of unused bits", NULL},
    {"_index", (getter)Random_get_index, (setter)Random_set_index, "the case index", NULL},
    {"_more", (getter)Random_get_more, (setter)Random_set_more, "blocks hashed beyond the case's slice", NULL},
    {"_key", (getter)Random_get_key, NULL, "the target seed's bytes", NULL},
    {NULL},
};

static PyMethodDef Random_methods[] = {
    {"_randbelow", (PyCFunction)Random_randbelow, METH_O, NULL},
    {"randrange", (PyCFunction)(void (*)(void))Random_randrange, METH_FASTCALL, NULL},
    {"randint", (PyCFunction)(void (*)(void))Random_randint, METH_FASTCALL, NULL},
    {"random", (PyCFunction)Random_random, METH_NOARGS, NULL},
    {"choice", (PyCFunction)Random_choice, METH_O, NULL},
    {"shuffle", (PyCFunction)Random_shuffle, METH_O, NULL},
    {"getrandbits", (PyCFunction)Random_getrandbits, METH_O, NULL},
    {"randbytes", (PyCFunction)Random_randbytes, METH_O, NULL},
    {"expovariate", (PyCFunction)(void (*)(void))Random_expovariate, METH_FASTCALL, NULL},
    {NULL},
};

static PyTypeObject RandomType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.Random",
    .tp_doc = "FastRandom in C: the same draws from the same pool.",
    .tp_basicsize = sizeof(RandomObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Random_new,
    .tp_dealloc = (destructor)Random_dealloc,
    .tp_methods = Random_methods,
    .tp_getset = Random_getset,
};

/* ---------------------------------------------------------------- Stream */

typedef struct {
    PyObject_HEAD
    PyObject *key;        /* bytes: tseed, 8 bytes big-endian */
    long long block_no;
    PyObject *block;      /* bytes of STREAM_BLOCK * STREAM_BYTES, or NULL */
    RandomObject *rng;
} StreamObject;

static PyObject *Stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *key;
    static char *kwlist[] = {"key", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "S", kwlist, &key)) return NULL;
    StreamObject *self = (StreamObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    Py_INCREF(key);
    self->key = key;
    self->block_no = -1;
    self->block = NULL;
    PyObject *zero = PyLong_FromLong(0);
    self->rng = (RandomObject *)PyObject_CallFunction((PyObject *)&RandomType, "OOi", zero, key, 0);
    Py_DECREF(zero);
    if (!self->rng) { Py_DECREF(self); return NULL; }
    return (PyObject *)self;
}

static void Stream_dealloc(StreamObject *self) {
    Py_XDECREF(self->key);
    Py_XDECREF(self->block);
    Py_XDECREF(self->rng);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* CaseStream.rng(index): the reused generator, loaded with case index's bits. */
static PyObject *Stream_rng(StreamObject *self, PyObject *arg) {
    long long index = PyLong_AsLongLong(arg);
    if (index == -1 && PyErr_Occurred()) return NULL;
    if (index < 0) { PyErr_SetString(PyExc_ValueError, "case indices are not negative"); return NULL; }
    long long block_no = index / STREAM_BLOCK, at = index % STREAM_BLOCK;
    if (block_no != self->block_no) {
        Py_ssize_t klen = PyBytes_GET_SIZE(self->key);
        PyObject *msg = PyBytes_FromStringAndSize(NULL, 12 + klen + 8);
        if (!msg) return NULL;
        char *p = PyBytes_AS_STRING(msg);
        memcpy(p, "assay-stream", 12);
        memcpy(p + 12, PyBytes_AS_STRING(self->key), klen);
        for (int i = 0; i < 8; i++) p[12 + klen + i] = (char)(((unsigned long long)block_no) >> (56 - 8 * i));
        PyObject *h = PyObject_CallOneArg(shake_fn, msg);
        Py_DECREF(msg);
        if (!h) return NULL;
        PyObject *block = PyObject_CallMethod(h, "digest", "i", STREAM_BLOCK * STREAM_BYTES);
        Py_DECREF(h);
        if (!block) return NULL;
        Py_XSETREF(self->block, block);
        self->block_no = block_no;
    }
    RandomObject *rng = self->rng;
    if (big_load(&rng->pool, (const unsigned char *)PyBytes_AS_STRING(self->block) + at * STREAM_BYTES, STREAM_BYTES) < 0)
        return NULL;
    rng->index = index;
    rng->more = 0;
    Py_INCREF(rng);
    return (PyObject *)rng;
}

static PyObject *Stream_get_key(StreamObject *self, void *c) { Py_INCREF(self->key); return self->key; }

static PyGetSetDef Stream_getset[] = {
    {"key", (getter)Stream_get_key, NULL, "the target seed's bytes", NULL},
    {NULL},
};

static PyMethodDef Stream_methods[] = {
    {"rng", (PyCFunction)Stream_rng, METH_O, "The generator of case i (the same object, reloaded)."},
    {NULL},
};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.Stream",
    .tp_doc = "CaseStream in C: case i's generator from one shake_128 block per 64 cases.",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Stream_new,
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
};

/* ---------------------------------------------------------------- LineTally */

/* A sys.monitoring LINE callback that counts (traced.CountingChild): the Python
   tally's twin, a C call per line event instead of a Python frame. */
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

static void Tally_dealloc(TallyObject *self) {
    Py_XDECREF(self->finish);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Tally_hit(TallyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (++self->count >= self->cap) return PyObject_CallNoArgs(self->finish);
    Py_RETURN_NONE;
}

static PyObject *Tally_get_count(TallyObject *self, void *c) { return PyLong_FromLongLong(self->count); }
static int Tally_set_count(TallyObject *self, PyObject *v, void *c) {
    long long x = v ? PyLong_AsLongLong(v) : -1;
    if (x == -1 && (!v || PyErr_Occurred())) { if (!v) PyErr_SetString(PyExc_AttributeError, "cannot delete"); return -1; }
    self->count = x;
    return 0;
}

static PyGetSetDef Tally_getset[] = {
    {"count", (getter)Tally_get_count, (setter)Tally_set_count, "line events counted", NULL},
    {NULL},
};

static PyMethodDef Tally_methods[] = {
    {"hit", (PyCFunction)(void (*)(void))Tally_hit, METH_FASTCALL, "The LINE callback: count one event."},
    {NULL},
};

static PyTypeObject TallyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.LineTally",
    .tp_doc = "LineTally(cap, finish): hit() counts a line event; at cap it calls finish().",
    .tp_basicsize = sizeof(TallyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Tally_new,
    .tp_dealloc = (destructor)Tally_dealloc,
    .tp_methods = Tally_methods,
    .tp_getset = Tally_getset,
};

/* ---------------------------------------------------------------- the buffer */

typedef struct {
    unsigned char *p;
    Py_ssize_t n, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t n) {
    if (n <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 64;
    while (cap < n) cap *= 2;
    unsigned char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (!p) { PyErr_NoMemory(); return -1; }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* b[at:end] = src (src may point into b: it is copied first when it does) */
static int buf_assign(Buf *b, Py_ssize_t at, Py_ssize_t end, const unsigned char *src, Py_ssize_t len) {
    if (end > b->n) end = b->n;
    if (end < at) end = at;
    unsigned char *tmp = NULL;
    if (len && src >= b->p && src < b->p + b->cap) {
        tmp = PyMem_Malloc((size_t)len);
        if (!tmp) { PyErr_NoMemory(); return -1; }
        memcpy(tmp, src, (size_t)len);
        src = tmp;
    }
    Py_ssize_t grown = b->n - (end - at) + len;
    if (buf_reserve(b, grown) < 0) { PyMem_Free(tmp); return -1; }
    memmove(b->p + at + len, b->p + end, (size_t)(b->n - end));
    if (len) memcpy(b->p + at, src, (size_t)len);
    b->n = grown;
    PyMem_Free(tmp);
    return 0;
}

/* ---------------------------------------------------------------- the mutations */

typedef struct {
    RandomObject *rng;
    Buf *b;
    PyObject *other;        /* list of bytes, bytes, or None */
    PyObject *dictionary;   /* list of bytes */
    Py_ssize_t cap, max_len;
} Ctx;

/* Each returns 1 applied, 0 did not apply, -1 error. */
#define DRAW(n, out) do { uint64_t _v; if (rng_below(c->rng, (uint64_t)(n), &_v) < 0) return -1; (out) = (Py_ssize_t)_v; } while (0)
#define DRAW64(n, out) do { if (rng_below(c->rng, (uint64_t)(n), &(out)) < 0) return -1; } while (0)
#define RANDINT(a, b_, out) do { Py_ssize_t _w; DRAW((b_) - (a) + 1, _w); (out) = (a) + _w; } while (0)
#define UNIFORM(out) do { if (rng_random(c->rng, &(out)) < 0) return -1; } while (0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define MAX_CHUNK 128
#define CUT_AFTER_PUMP 0.5
#define NEST_SCAN 512
#define NEST_STRUCTURAL 0.75
#define NEST_DEEP 0.25

static int m_erase(Ctx *c) {
    Buf *b = c->b;
    if (b->n < 1) return 0;
    uint64_t x;
    DRAW64((uint64_t)10 << 32, x);
    int longer = x % 10 < 3;
    x /= 10;
    Py_ssize_t n = 1 + (Py_ssize_t)(x % (uint64_t)MIN(b->n, longer ? MAX_CHUNK : 8));
    Py_ssize_t at = (Py_ssize_t)((x >> 8) % (uint64_t)(b->n - n + 1));
    return buf_assign(b, at, at + n, NULL, 0) < 0 ? -1 : 1;
}

static int m_insert_byte(Ctx *c) {
    Buf *b = c->b;
    uint64_t x;
    DRAW64((uint64_t)(b->n + 1) << 8, x);
    unsigned char byte = (unsigned char)(x % 256);
    return buf_assign(b, (Py_ssize_t)(x / 256), (Py_ssize_t)(x / 256), &byte, 1) < 0 ? -1 : 1;
}

static int m_insert_repeated(Ctx *c) {
    Buf *b = c->b;
    uint64_t x;
    DRAW64((uint64_t)1 << 48, x);
    Py_ssize_t n = 3 + (Py_ssize_t)(x % (MAX_CHUNK - 2));
    x /= MAX_CHUNK - 2;
    Py_ssize_t at = (Py_ssize_t)(x % (uint64_t)(b->n + 1));
    x /= (uint64_t)(b->n + 1);
    int kind = (int)(x % 5);
    const unsigned char bytes[5] = {0, 0xFF, (unsigned char)((x >> 3) & 0xFF), 0x20, 0x41};
    unsigned char run[MAX_CHUNK];
    memset(run, bytes[kind], (size_t)n);
    return buf_assign(b, at, at, run, n) < 0 ? -1 : 1;
}

static int m_change_byte(Ctx *c) {
    Buf *b = c->b;
    if (!b->n) return 0;
    uint64_t x;
    DRAW64((uint64_t)b->n << 8, x);
    b->p[x / 256] = (unsigned char)(x % 256);
    return 1;
}

static int m_flip_bit(Ctx *c) {
    Buf *b = c->b;
    if (!b->n) return 0;
    uint64_t x;
    DRAW64((uint64_t)b->n << 3, x);
    b->p[x / 8] ^= (unsigned char)(1 << (x % 8));
    return 1;
}

static int m_shuffle(Ctx *c) {
    Buf *b = c->b;
    if (b->n < 2) return 0;
    Py_ssize_t n, at;
    RANDINT(2, MIN(b->n, 8), n);
    DRAW(b->n - n + 1, at);
    unsigned char part[8];
    memcpy(part, b->p + at, (size_t)n);
    for (Py_ssize_t i = n - 1; i >= 1; i--) {
        Py_ssize_t j;
        DRAW(i + 1, j);
        unsigned char t = part[i]; part[i] = part[j]; part[j] = t;
    }
    memcpy(b->p + at, part, (size_t)n);
    return 1;
}

static const uint64_t INTERESTING_8[] = {0, 1, 0x7F, 0x80, 0xFF, 0x10, 0x20, 0x40, 0x64};
static const uint64_t INTERESTING_16[] = {0, 0x80, 0xFF, 0x100, 0x200, 0x3E8, 0x400, 0x7FFF, 0x8000, 0xFFFF};
static const uint64_t INTERESTING_32[] = {0, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFA0000FA};

static void put_int(unsigned char *p, uint64_t value, int width, int little) {
    for (int i = 0; i < width; i++) {
        unsigned char byte = (unsigned char)(value >> (8 * i));
        p[little ? i : width - 1 - i] = byte;
    }
}

static uint64_t get_int(const unsigned char *p, int width, int little) {
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v |= (uint64_t)p[little ? i : width - 1 - i] << (8 * i);
    return v;
}

static int m_interesting(Ctx *c) {
    Buf *b = c->b;
    uint64_t x;
    DRAW64((uint64_t)1 << 48, x);
    static const int widths[3] = {1, 2, 4};
    int width = widths[x % 3];
    if (b->n < width) return 0;
    x /= 3;
    const uint64_t *table = width == 1 ? INTERESTING_8 : width == 2 ? INTERESTING_16 : INTERESTING_32;
    uint64_t size = width == 1 ? 9 : width == 2 ? 10 : 8;
    uint64_t value = table[x % size];
    x /= size;
    uint64_t mask = width == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * width)) - 1);
    if (x & 1) value = (0 - value) & mask;
    int little = (x & 2) != 0;
    Py_ssize_t at = (Py_ssize_t)((x >> 2) % (uint64_t)(b->n - width + 1));
    put_int(b->p + at, value, width, little);
    return 1;
}

static int m_add_to_int(Ctx *c) {
    Buf *b = c->b;
    uint64_t x;
    DRAW64((uint64_t)1 << 48, x);
    static const int widths[4] = {1, 2, 4, 8};
    int width = widths[x & 3];
    if (b->n < width) return 0;
    int little = (x & 4) != 0;
    x >>= 3;
    int64_t delta = (int64_t)(x % 71) - 35;
    Py_ssize_t at = (Py_ssize_t)((x / 71) % (uint64_t)(b->n - width + 1));
    uint64_t mask = width == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * width)) - 1);
    uint64_t value = (get_int(b->p + at, width, little) + (uint64_t)delta) & mask;
    put_int(b->p + at, value, width, little);
    return 1;
}

static int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }

/* mutators.MAX_DIGITS: a longer run of digits is read as several numbers. */
#define MAX_DIGITS 1000

/* The end of the -?[0-9]{1,MAX_DIGITS} match at i, or -1. */
static Py_ssize_t digits_at(const Buf *b, Py_ssize_t i) {
    if (b->p[i] == '-' && i + 1 < b->n && is_digit(b->p[i + 1])) i++;
    if (!is_digit(b->p[i])) return -1;
    Py_ssize_t start = i;
    while (i < b->n && is_digit(b->p[i]) && i - start < MAX_DIGITS) i++;
    return i;
}

/* _ascii_int: spans of -?[0-9]+ as re.finditer finds them; the arithmetic on Python ints. */
static int m_ascii_int(Ctx *c) {
    Buf *b = c->b;
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < b->n;) {
        Py_ssize_t e = digits_at(b, i);
        if (e < 0) { i++; continue; }
        count++;
        i = e;
    }
    if (!count) return 0;
    Py_ssize_t pick, start = 0, end = 0;
    DRAW(count, pick);
    for (Py_ssize_t i = 0, k = 0; i < b->n;) {
        Py_ssize_t e = digits_at(b, i);
        if (e < 0) { i++; continue; }
        if (k++ == pick) { start = i; end = e; break; }
        i = e;
    }
    char *text = PyMem_Malloc((size_t)(end - start + 1));
    if (!text) { PyErr_NoMemory(); return -1; }
    memcpy(text, b->p + start, (size_t)(end - start));
    text[end - start] = 0;
    PyObject *value = PyLong_FromString(text, NULL, 10);
    PyMem_Free(text);
    if (!value) return -1;
    Py_ssize_t choice;
    uint64_t w;
    if (rng_below(c->rng, 6, &w) < 0) { Py_DECREF(value); return -1; }
    choice = (Py_ssize_t)w;
    PyObject *next = NULL, *k = NULL;
    switch (choice) {
    case 0: k = PyLong_FromLong(1); next = k ? PyNumber_Add(value, k) : NULL; break;
    case 1: k = PyLong_FromLong(1); next = k ? PyNumber_Subtract(value, k) : NULL; break;
    case 2: k = PyLong_FromLong(2); next = k ? PyNumber_Multiply(value, k) : NULL; break;
    case 3: k = PyLong_FromLong(2); next = k ? PyNumber_FloorDivide(value, k) : NULL; break;
    case 4: {
        static const char *table[10] = {"0", "-1", "255", "256", "65535", "65536", "2147483647", "2147483648",
                                        "4294967296", "9223372036854775808"};
        if (rng_below(c->rng, 10, &w) < 0) break;
        next = PyLong_FromString(table[w], NULL, 10);
        break;
    }
    default:
        if (rng_below(c->rng, 1000, &w) < 0) break;
        next = PyLong_FromUnsignedLongLong(w);
    }
    Py_XDECREF(k);
    Py_DECREF(value);
    if (!next) return -1;
    PyObject *text_obj = PyObject_Str(next);
    Py_DECREF(next);
    if (!text_obj) return -1;
    Py_ssize_t len;
    const char *digits = PyUnicode_AsUTF8AndSize(text_obj, &len);
    int rc = digits ? buf_assign(b, start, end, (const unsigned char *)digits, len) : -1;
    Py_DECREF(text_obj);
    return rc < 0 ? -1 : 1;
}

static int repeat_into(Buf *b, Py_ssize_t at, Py_ssize_t end, const unsigned char *chunk, Py_ssize_t n,
                       Py_ssize_t times, const unsigned char *tail_left, Py_ssize_t nl,
                       const unsigned char *core, Py_ssize_t nc) {
    /* b[at:end] = chunk * times                          (tail_left == NULL)
       b[at:end] = tail_left * times + core + chunk * times (nesting: left, core, right = chunk) */
    Py_ssize_t total = tail_left ? nl * times + nc + n * times : n * times;
    unsigned char *out = PyMem_Malloc((size_t)(total ? total : 1));
    if (!out) { PyErr_NoMemory(); return -1; }
    Py_ssize_t w = 0;
    if (tail_left) {
        for (Py_ssize_t t = 0; t < times; t++) { memcpy(out + w, tail_left, (size_t)nl); w += nl; }
        memcpy(out + w, core, (size_t)nc); w += nc;
    }
    for (Py_ssize_t t = 0; t < times; t++) { memcpy(out + w, chunk, (size_t)n); w += n; }
    int rc = buf_assign(b, at, end, out, total);
    PyMem_Free(out);
    return rc;
}

static int m_repeat_chunk(Ctx *c) {
    Buf *b = c->b;
    if (!b->n) return 0;
    Py_ssize_t n, at, times;
    double u;
    RANDINT(1, MIN(b->n, 8), n);
    DRAW(b->n - n + 1, at);
    RANDINT(2, MAX(2, MIN(256, c->cap / n)), times);
    UNIFORM(u);
    Py_ssize_t end = u < CUT_AFTER_PUMP ? b->n : at + n;
    unsigned char chunk[8];
    memcpy(chunk, b->p + at, (size_t)n);
    return repeat_into(b, at, end, chunk, n, times, NULL, 0, NULL, 0) < 0 ? -1 : 1;
}

static unsigned char closer_of(unsigned char ch) {
    switch (ch) {
    case '(': return ')';
    case '[': return ']';
    case '{': return '}';
    case '<': return '>';
    }
    return 0;
}

static Py_ssize_t find_byte(const Buf *b, unsigned char ch, Py_ssize_t from, Py_ssize_t to) {
    if (to > b->n) to = b->n;
    for (Py_ssize_t i = from; i < to; i++)
        if (b->p[i] == ch) return i;
    return -1;
}

static Py_ssize_t count_byte(const Buf *b, unsigned char ch, Py_ssize_t from, Py_ssize_t to) {
    if (to > b->n) to = b->n;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = from; i < to; i++) k += b->p[i] == ch;
    return k;
}

static Py_ssize_t bit_length(Py_ssize_t v) {
    Py_ssize_t bits = 0;
    while (v) { bits++; v >>= 1; }
    return bits;
}

static int m_nest(Ctx *c) {
    Buf *b = c->b;
    Py_ssize_t n = b->n;
    if (n < 2) return 0;
    Py_ssize_t a = -1, cend = -1;
    double u;
    UNIFORM(u);
    if (u < NEST_STRUCTURAL) {
        Py_ssize_t pos, endpos;
        DRAW(n, pos);
        DRAW(n, endpos);
        endpos += NEST_SCAN;
        if (endpos > n) endpos = n;
        Py_ssize_t i = -1;
        for (Py_ssize_t k = pos; k < endpos; k++)
            if (closer_of(b->p[k])) { i = k; break; }
        if (i >= 0) {
            unsigned char opener = b->p[i], closer = closer_of(opener);
            Py_ssize_t k = find_byte(b, closer, i + 1, i + NEST_SCAN);
            while (k != -1 && count_byte(b, opener, i, k) != count_byte(b, closer, i, k + 1))
                k = find_byte(b, closer, k + 1, i + NEST_SCAN);
            if (k != -1) { a = i; cend = k + 1; }
        }
    }
    if (a < 0) {
        DRAW(n - 1, a);
        RANDINT(a + 2, MIN(n, a + 16), cend);
    }
    Py_ssize_t p, q;
    RANDINT(a + 1, cend - 1, p);
    RANDINT(p, cend - 1, q);
    UNIFORM(u);
    if (u < NEST_DEEP) c->cap = c->max_len;
    Py_ssize_t nl = p - a, nc = q - p, nr = cend - q;
    Py_ssize_t num = c->cap - n + (cend - a) - nc, den = nl + nr;
    if (num < 2 * den) return 0;   /* room = num // den < 2 */
    Py_ssize_t room = num / den;
    Py_ssize_t shift, times;
    RANDINT(1, bit_length(room) - 1, shift);
    Py_ssize_t most = (Py_ssize_t)1 << shift;
    RANDINT(MAX(2, most / 2), MIN(room, most), times);
    unsigned char *copy = PyMem_Malloc((size_t)(cend - a));
    if (!copy) { PyErr_NoMemory(); return -1; }
    memcpy(copy, b->p + a, (size_t)(cend - a));
    int rc = repeat_into(b, a, cend, copy + nl + nc, nr, times, copy, nl, copy + nl, nc);
    PyMem_Free(copy);
    return rc < 0 ? -1 : 1;
}

static int m_copy_part(Ctx *c) {
    Buf *b = c->b;
    if (b->n < 2) return 0;
    Py_ssize_t n, src, at;
    double u;
    RANDINT(1, MIN(b->n, MAX_CHUNK), n);
    DRAW(b->n - n + 1, src);
    unsigned char chunk[MAX_CHUNK];
    memcpy(chunk, b->p + src, (size_t)n);
    DRAW(b->n + 1, at);
    UNIFORM(u);
    int rc = u < 0.5 ? buf_assign(b, at, at, chunk, n) : buf_assign(b, at, at + n, chunk, n);
    return rc < 0 ? -1 : 1;
}

static int m_crossover(Ctx *c) {
    Buf *b = c->b;
    PyObject *other = c->other;
    if (PyList_CheckExact(other)) {
        Py_ssize_t size = PyList_GET_SIZE(other);
        if (!size) return 0;
        Py_ssize_t k;
        DRAW(size, k);
        other = PyList_GET_ITEM(other, k);
    }
    if (other == Py_None || !PyBytes_Check(other) || PyBytes_GET_SIZE(other) == 0) {
        if (other != Py_None && !PyBytes_Check(other)) {
            PyErr_SetString(PyExc_TypeError, "crossover partners are bytes");
            return -1;
        }
        return 0;
    }
    const unsigned char *o = (const unsigned char *)PyBytes_AS_STRING(other);
    Py_ssize_t len = PyBytes_GET_SIZE(other);
    Py_ssize_t n, src, mode, at;
    RANDINT(1, MIN(len, MAX_CHUNK * 4), n);
    DRAW(len - n + 1, src);
    DRAW(3, mode);
    if (mode == 0) {
        Py_ssize_t cut, from;
        DRAW(b->n + 1, cut);
        DRAW(len, from);
        b->n = cut;
        return buf_assign(b, cut, cut, o + from, len - from) < 0 ? -1 : 1;
    }
    DRAW(b->n + 1, at);
    int rc = mode == 1 ? buf_assign(b, at, at, o + src, n) : buf_assign(b, at, at + n, o + src, n);
    return rc < 0 ? -1 : 1;
}

static int m_dict(Ctx *c, int overwrite) {
    Buf *b = c->b;
    Py_ssize_t size = PyList_GET_SIZE(c->dictionary);
    if (!size) return 0;
    Py_ssize_t k, at;
    DRAW(size, k);
    PyObject *token = PyList_GET_ITEM(c->dictionary, k);
    if (!PyBytes_Check(token)) { PyErr_SetString(PyExc_TypeError, "dictionary tokens are bytes"); return -1; }
    DRAW(b->n + 1, at);
    Py_ssize_t len = PyBytes_GET_SIZE(token);
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(token);
    int rc = overwrite ? buf_assign(b, at, at + len, t, len) : buf_assign(b, at, at, t, len);
    return rc < 0 ? -1 : 1;
}

static int m_dict_insert(Ctx *c) { return m_dict(c, 0); }
static int m_dict_overwrite(Ctx *c) { return m_dict(c, 1); }

/* In the order of mutators.MUTATIONS. */
typedef int (*mutation)(Ctx *);
static const mutation MUTATIONS[] = {
    m_erase, m_insert_byte, m_insert_repeated, m_change_byte, m_flip_bit, m_shuffle, m_interesting,
    m_add_to_int, m_ascii_int, m_copy_part, m_repeat_chunk, m_nest, m_crossover, m_dict_insert, m_dict_overwrite,
};
#define N_MUTATIONS ((Py_ssize_t)(sizeof(MUTATIONS) / sizeof(MUTATIONS[0])))

#define MAX_STACK 5
#define LONG_SHARE (1.0 / 32)

/* mutate(max_len, dictionary, wins, inserting, names, n_picks, win_cut, rng, data, other, limit)
   -> (bytes, list of names): ByteMutator.mutate (the fixed arguments first, for functools.partial). */
static PyObject *cmutate(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) { PyErr_SetString(PyExc_TypeError, "mutate takes 11 arguments"); return NULL; }
    if (Py_TYPE(args[7]) != &RandomType) { PyErr_SetString(PyExc_TypeError, "rng must be a _cmutate.Random"); return NULL; }
    RandomObject *rng = (RandomObject *)args[7];
    PyObject *data = args[8], *other = args[9], *limit_obj = args[10];
    PyObject *dictionary = args[1], *wins = args[2], *inserting = args[3], *names = args[4];
    if (!PyBytes_Check(data) || !PyList_Check(dictionary) || !PyList_Check(wins) || !PyList_Check(inserting)
        || !PyTuple_Check(names) || PyTuple_GET_SIZE(names) != N_MUTATIONS) {
        PyErr_SetString(PyExc_TypeError, "mutate: bad argument types");
        return NULL;
    }
    Py_ssize_t max_len = PyLong_AsSsize_t(args[0]);
    Py_ssize_t n_picks = PyLong_AsSsize_t(args[5]);
    Py_ssize_t win_cut = PyLong_AsSsize_t(args[6]);
    if (PyErr_Occurred()) return NULL;
    Py_ssize_t data_len = PyBytes_GET_SIZE(data);

    Buf buf = {NULL, 0, 0};
    PyObject *applied = PyList_New(0);
    if (!applied) return NULL;
    if (buf_reserve(&buf, data_len + 1) < 0) goto fail;
    memcpy(buf.p, PyBytes_AS_STRING(data), (size_t)data_len);
    buf.n = data_len;

    double r;
    if (rng_random(rng, &r) < 0) goto fail;
    Py_ssize_t depth = 1 + (r < 0.36788) + (r < 0.13534) + (r < 0.04979) + (r < 0.01832);
    if (depth > MAX_STACK) depth = MAX_STACK;
    Ctx c = {rng, &buf, other, dictionary, max_len, max_len};
    if (limit_obj == Py_None || fmod(r * 1024, 1.0) < LONG_SHARE) {
        c.cap = max_len;
    } else {
        Py_ssize_t limit = PyLong_AsSsize_t(limit_obj);
        if (limit == -1 && PyErr_Occurred()) goto fail;
        c.cap = MAX(limit, data_len);
    }
    Py_ssize_t attempts = depth * 8, done = 0;
    while (attempts) {
        attempts--;
        Py_ssize_t i;
        uint64_t x;
        if (!buf.n) {
            Py_ssize_t size = PyList_GET_SIZE(inserting);
            if (rng_below(rng, (uint64_t)size, &x) < 0) goto fail;
            i = PyLong_AsSsize_t(PyList_GET_ITEM(inserting, (Py_ssize_t)x));
        } else {
            if (rng_below(rng, (uint64_t)n_picks << 20, &x) < 0) goto fail;
            uint64_t high = x / (uint64_t)n_picks, k = x % (uint64_t)n_picks;
            Py_ssize_t n_wins = PyList_GET_SIZE(wins);
            if (n_wins && k < (uint64_t)win_cut)
                i = PyLong_AsSsize_t(PyList_GET_ITEM(wins, (Py_ssize_t)(high % (uint64_t)n_wins)));
            else
                i = (Py_ssize_t)(k % (uint64_t)N_MUTATIONS);
        }
        if (i < 0 || i >= N_MUTATIONS) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "mutation index out of range");
            goto fail;
        }
        int rc = MUTATIONS[i](&c);
        if (rc < 0) goto fail;
        if (rc) {
            if (PyList_Append(applied, PyTuple_GET_ITEM(names, i)) < 0) goto fail;
            if (++done == depth) break;
        }
    }
    if (buf.n > c.cap) buf.n = c.cap;
    PyObject *out = PyBytes_FromStringAndSize((const char *)buf.p, buf.n);
    PyMem_Free(buf.p);
    if (!out) { Py_DECREF(applied); return NULL; }
    PyObject *pair = PyTuple_Pack(2, out, applied);
    Py_DECREF(out);
    Py_DECREF(applied);
    return pair;
fail:
    PyMem_Free(buf.p);
    Py_DECREF(applied);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"mutate", (PyCFunction)(void (*)(void))cmutate, METH_FASTCALL,
     "mutate(max_len, dictionary, wins, inserting, names, n_picks, win_cut, rng, data, other, limit)"},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "assay.gen._cmutate",
    "The byte-mode input generator in C: the same draws and bytes as the Python reference.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__cmutate(void) {
    if (PyType_Ready(&RandomType) < 0 || PyType_Ready(&StreamType) < 0 || PyType_Ready(&TallyType) < 0) return NULL;
    PyObject *hashlib = PyImport_ImportModule("hashlib");
    if (!hashlib) return NULL;
    blake2b_fn = PyObject_GetAttrString(hashlib, "blake2b");
    shake_fn = PyObject_GetAttrString(hashlib, "shake_128");
    Py_DECREF(hashlib);
    zero_obj = PyLong_FromLong(0);
    if (!blake2b_fn || !shake_fn || !zero_obj) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&RandomType);
    Py_INCREF(&StreamType);
    PyObject *names = Py_BuildValue("(sssssssssssssss)", "erase", "insert-byte", "insert-repeated", "change-byte",
                                    "flip-bit", "shuffle", "interesting-int", "add-to-int", "ascii-int", "copy-part",
                                    "repeat-chunk", "nest", "crossover", "dict-insert", "dict-overwrite");
    if (!names || PyModule_AddObject(m, "NAMES", names) < 0) { Py_XDECREF(names); Py_DECREF(m); return NULL; }
    /* The tunables compiled in: the Python side uses this module only while its own agree. */
    PyObject *constants = Py_BuildValue("{s:i,s:i,s:d,s:i,s:d,s:d,s:d,s:i,s:i,s:i}",
                                        "MAX_STACK", MAX_STACK, "MAX_CHUNK", MAX_CHUNK, "CUT_AFTER_PUMP", CUT_AFTER_PUMP,
                                        "NEST_SCAN", NEST_SCAN, "NEST_STRUCTURAL", NEST_STRUCTURAL, "NEST_DEEP", NEST_DEEP,
                                        "LONG_SHARE", LONG_SHARE, "MAX_DIGITS", MAX_DIGITS,
                                        "STREAM_BLOCK", STREAM_BLOCK, "STREAM_BYTES", STREAM_BYTES);
    if (!constants || PyModule_AddObject(m, "CONSTANTS", constants) < 0) { Py_XDECREF(constants); Py_DECREF(m); return NULL; }
    Py_INCREF(&TallyType);
    if (PyModule_AddObject(m, "LineTally", (PyObject *)&TallyType) < 0) { Py_DECREF(m); return NULL; }
    if (PyModule_AddObject(m, "Random", (PyObject *)&RandomType) < 0
        || PyModule_AddObject(m, "Stream", (PyObject *)&StreamType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
