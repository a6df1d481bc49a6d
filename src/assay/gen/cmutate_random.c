/*
 * The per-case generator of byte mode in C: Random is assay.engine.seeds.FastRandom
 * (a pool of hashed bits, consumed by divmod), Stream is CaseStream (case i's pool is
 * a slice of one shake_128 block per 64 cases).  The same draws from the same pool.
 * Hashing goes through Python's hashlib: once per 64 cases (the stream), or when a case
 * draws more bits than its slice holds.
 */
#include "cmutate.h"

static PyObject *blake2b_fn;   /* hashlib.blake2b */
static PyObject *shake_fn;     /* hashlib.shake_128 */
static PyObject *zero_obj;     /* 0 */
/* blake2b's keyword arguments in _refill: their names and values, built once */
static PyObject *refill_kwnames, *refill_size, *refill_person, *s_digest;

/* Thresholds of seeds.py, as bit positions. */
#define FAST_N_BITS 48        /* _FAST_N = 2**48 */
#define FAST_POOL_BITS 112    /* _FAST_POOL = 2**112 */
#define RANDOM_LOW_BITS 117   /* _RANDOM_LOW = 2**(64 + 53) */

int cm_random_init(void) {
    PyObject *hashlib = PyImport_ImportModule("hashlib");
    if (!hashlib) return -1;
    blake2b_fn = PyObject_GetAttrString(hashlib, "blake2b");
    shake_fn = PyObject_GetAttrString(hashlib, "shake_128");
    Py_DECREF(hashlib);
    zero_obj = PyLong_FromLong(0);
    PyObject *size_name = PyUnicode_InternFromString("digest_size"), *person_name = PyUnicode_InternFromString("person");
    refill_kwnames = (size_name && person_name) ? PyTuple_Pack(2, size_name, person_name) : NULL;
    Py_XDECREF(size_name);
    Py_XDECREF(person_name);
    refill_size = PyLong_FromLong(64);
    refill_person = PyBytes_FromString("assay-more");
    s_digest = PyUnicode_InternFromString("digest");
    if (!blake2b_fn || !shake_fn || !zero_obj || !refill_kwnames || !refill_size || !refill_person || !s_digest) return -1;
    if (PyType_Ready(&cm_RandomType) < 0 || PyType_Ready(&cm_StreamType) < 0) return -1;
    return 0;
}

/* ---------------------------------------------------------------- the pool */

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
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len >= 8) {
        memcpy(&v, p, 8);
        return v;
    }
#endif
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

/* A settable int attribute (deleting it is refused). */
int cm_set_long_long(PyObject *v, long long *out) {
    if (!v) { PyErr_SetString(PyExc_AttributeError, "cannot delete this attribute"); return -1; }
    long long x = PyLong_AsLongLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = x;
    return 0;
}

/* ---------------------------------------------------------------- Random */


/* A generator whose key the GC cleared (a cycle's) draws no more. */
static int rng_cleared(RandomObject *r) {
    if (r->key) return 0;
    PyErr_SetString(PyExc_ValueError, "this Random was cleared by the garbage collector");
    return 1;
}

/* FastRandom._refill: hash further blocks until pool >= need (given as a test). */
static int rng_refill_block(RandomObject *r) {
    if (rng_cleared(r)) return -1;
    r->more += 1;
    unsigned char tail[12];
    for (int i = 0; i < 8; i++) tail[i] = (unsigned char)(((unsigned long long)r->index) >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) tail[8 + i] = (unsigned char)(((unsigned long long)r->more) >> (24 - 8 * i));
    PyObject *msg = PyBytes_FromStringAndSize(NULL, PyBytes_GET_SIZE(r->key) + 12);
    if (!msg) return -1;
    memcpy(PyBytes_AS_STRING(msg), PyBytes_AS_STRING(r->key), PyBytes_GET_SIZE(r->key));
    memcpy(PyBytes_AS_STRING(msg) + PyBytes_GET_SIZE(r->key), tail, 12);
    PyObject *args[] = {msg, refill_size, refill_person};   /* blake2b(msg, digest_size=64, person=b"assay-more") */
    PyObject *h = PyObject_Vectorcall(blake2b_fn, args, 1, refill_kwnames);
    Py_DECREF(msg);
    if (!h) return -1;
    PyObject *digest = PyObject_CallMethodNoArgs(h, s_digest);
    Py_DECREF(h);
    if (!digest) return -1;
    int rc = big_push_block(&r->pool, (const unsigned char *)PyBytes_AS_STRING(digest));
    Py_DECREF(digest);
    return rc;
}

/* _randbelow(n) for 0 < n < 2**64; -1 with an exception set on failure (r_out untouched). */
int cm_rng_below(RandomObject *r, uint64_t n, uint64_t *r_out) {
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
        if (cm_rng_below(r, v, &out) < 0) return NULL;
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

int cm_rng_random(RandomObject *r, double *out) {
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
    uint64_t v;   /* the width and the sum in unsigned arithmetic: stop - start may not fit a long long */
    if (cm_rng_below(r, (uint64_t)stop - (uint64_t)start, &v) < 0) return -1;
    *out = (long long)((uint64_t)start + v);
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
    self->key = Py_NewRef(key);
    self->index = index;
    self->more = 0;
    if (big_from_long(&self->pool, pool) < 0) { Py_DECREF(self); return NULL; }
    return (PyObject *)self;
}

/* GC support: the key is a bytes object, maybe of a subclass with a __dict__ (a cycle through it). */
static int Random_traverse(RandomObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->key);
    return 0;
}

static int Random_clear(RandomObject *self) {
    Py_CLEAR(self->key);
    return 0;
}

static void Random_dealloc(RandomObject *self) {
    PyObject_GC_UnTrack(self);
    PyMem_Free(self->pool.d);
    Random_clear(self);
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
    PyObject *stop = one ? PyNumber_Add(args[1], one) : NULL;
    Py_XDECREF(one);
    if (!stop) return NULL;
    PyObject *pair[2] = {args[0], stop};
    PyObject *out = Random_randrange(self, pair, 2);
    Py_DECREF(stop);
    return out;
}

static PyObject *Random_random(RandomObject *self, PyObject *unused) {
    double v;
    if (cm_rng_random(self, &v) < 0) return NULL;
    return PyFloat_FromDouble(v);
}

static PyObject *Random_choice(RandomObject *self, PyObject *seq) {
    Py_ssize_t n = PySequence_Size(seq);
    if (n < 0) return NULL;
    uint64_t at;
    if (cm_rng_below(self, (uint64_t)n, &at) < 0) return NULL;
    return PySequence_GetItem(seq, (Py_ssize_t)at);
}

static PyObject *Random_shuffle(RandomObject *self, PyObject *x) {
    if (!PyList_Check(x)) { PyErr_SetString(PyExc_TypeError, "shuffle takes a list"); return NULL; }
    for (Py_ssize_t i = PyList_GET_SIZE(x) - 1; i >= 1; i--) {
        uint64_t j;
        if (cm_rng_below(self, (uint64_t)i + 1, &j) < 0) return NULL;
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
    PyObject *n = one ? PyNumber_Lshift(one, k) : NULL;
    Py_XDECREF(one);
    if (!n) return NULL;
    PyObject *out = rng_below_long(self, n);
    Py_DECREF(n);
    return out;
}

static PyObject *Random_randbytes(RandomObject *self, PyObject *n) {
    Py_ssize_t count = PyLong_AsSsize_t(n);
    if (count == -1 && PyErr_Occurred()) return NULL;
    if (count < 0 || count > PY_SSIZE_T_MAX / 8) {
        PyErr_SetString(PyExc_ValueError, "randbytes: a count from 0 to sys.maxsize // 8");
        return NULL;
    }
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
    if (cm_rng_random(self, &v) < 0) return NULL;
    if (lambd == 0.0) { PyErr_SetString(PyExc_ZeroDivisionError, "float division by zero"); return NULL; }
    return PyFloat_FromDouble(-log(1.0 - v) / lambd);
}

static PyObject *Random_get_pool(RandomObject *self, void *c) { return big_to_long(&self->pool); }
static int Random_set_pool(RandomObject *self, PyObject *v, void *c) {
    if (!v) { PyErr_SetString(PyExc_AttributeError, "cannot delete the pool"); return -1; }
    return big_from_long(&self->pool, v);
}
static PyObject *Random_get_index(RandomObject *self, void *c) { return PyLong_FromLongLong(self->index); }
static int Random_set_index(RandomObject *self, PyObject *v, void *c) { return cm_set_long_long(v, &self->index); }
static PyObject *Random_get_more(RandomObject *self, void *c) { return PyLong_FromLongLong(self->more); }
static int Random_set_more(RandomObject *self, PyObject *v, void *c) { return cm_set_long_long(v, &self->more); }
static PyObject *Random_get_key(RandomObject *self, void *c) { return rng_cleared(self) ? NULL : Py_NewRef(self->key); }

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

PyTypeObject cm_RandomType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.Random",
    .tp_doc = "FastRandom in C: the same draws from the same pool.",
    .tp_basicsize = sizeof(RandomObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Random_new,
    .tp_traverse = (traverseproc)Random_traverse,
    .tp_clear = (inquiry)Random_clear,
    .tp_dealloc = (destructor)Random_dealloc,
    .tp_methods = Random_methods,
    .tp_getset = Random_getset,
};

/* ---------------------------------------------------------------- Stream */

static PyObject *Stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *key;
    static char *kwlist[] = {"key", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "S", kwlist, &key)) return NULL;
    StreamObject *self = (StreamObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->key = Py_NewRef(key);
    self->block_no = -1;
    self->block = NULL;
    self->rng = (RandomObject *)PyObject_CallFunction((PyObject *)&cm_RandomType, "OOi", zero_obj, key, 0);
    if (!self->rng) { Py_DECREF(self); return NULL; }
    return (PyObject *)self;
}

static int Stream_traverse(StreamObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->key);
    Py_VISIT(self->block);
    Py_VISIT(self->rng);
    return 0;
}

static int Stream_clear(StreamObject *self) {
    Py_CLEAR(self->key);
    Py_CLEAR(self->block);
    Py_CLEAR(self->rng);
    self->block_no = -1;
    return 0;
}

static void Stream_dealloc(StreamObject *self) {
    PyObject_GC_UnTrack(self);
    Stream_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

RandomObject *cm_stream_case(StreamObject *self, long long index) {
    if (index < 0) { PyErr_SetString(PyExc_ValueError, "case indices are not negative"); return NULL; }
    if (!self->key || !self->rng) {
        PyErr_SetString(PyExc_ValueError, "this Stream was cleared by the garbage collector");
        return NULL;
    }
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
    return rng;
}

/* CaseStream.rng(index): the reused generator, loaded with case index's bits. */
static PyObject *Stream_rng(StreamObject *self, PyObject *arg) {
    long long index = PyLong_AsLongLong(arg);
    if (index == -1 && PyErr_Occurred()) return NULL;
    RandomObject *rng = cm_stream_case(self, index);
    Py_XINCREF(rng);
    return (PyObject *)rng;
}

static PyObject *Stream_get_key(StreamObject *self, void *c) {
    if (!self->key) { PyErr_SetString(PyExc_ValueError, "this Stream was cleared by the garbage collector"); return NULL; }
    return Py_NewRef(self->key);
}

static PyGetSetDef Stream_getset[] = {
    {"key", (getter)Stream_get_key, NULL, "the target seed's bytes", NULL},
    {NULL},
};

static PyMethodDef Stream_methods[] = {
    {"rng", (PyCFunction)Stream_rng, METH_O, "The generator of case i (the same object, reloaded)."},
    {NULL},
};

PyTypeObject cm_StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.Stream",
    .tp_doc = "CaseStream in C: case i's generator from one shake_128 block per 64 cases.",
    .tp_basicsize = sizeof(StreamObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Stream_new,
    .tp_traverse = (traverseproc)Stream_traverse,
    .tp_clear = (inquiry)Stream_clear,
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
};

