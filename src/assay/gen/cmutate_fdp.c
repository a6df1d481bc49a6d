/*
 * FuzzedDataProvider: atheris' data provider in C.
 *
 * The twin of assay.harness.fdp.PythonFuzzedDataProvider, which follows atheris 3.1.0
 * (src/native/fuzzed_data_provider.cc) value for value: the same bytes consumed in the
 * same order, the same results, and the same exception types for the same bad
 * arguments (pybind11's conversions: a count is a size_t, an integer range takes ints,
 * a float range takes anything float() of a number gives).  tests/test_fdp_c.py compares
 * it with atheris' provider and with the Python one.
 *
 * Memory safety: the input is a bytes object the provider holds; every read is at
 * [pos, end) with pos <= end <= len, and every size is clamped to end - pos first.
 * Counts are uint64_t as atheris' size_t: count * width wraps exactly as atheris'
 * does (then it is clamped like any other size).
 */
#include "cmutate.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct {
    PyObject_HEAD
    PyObject *data;            /* bytes */
    const unsigned char *p;    /* its buffer */
    Py_ssize_t pos;            /* the front cursor */
    Py_ssize_t end;            /* the back cursor (ConsumeIntInRange eats from here) */
} FdpObject;

#define REMAINING(s) ((s)->end - (s)->pos)
/* atheris' Advance(n): past the end means at the end. */
#define ADVANCE(s, n) ((s)->pos = ((uint64_t)(n) > (uint64_t)REMAINING(s)) ? (s)->end : (s)->pos + (Py_ssize_t)(n))

static const double DOUBLE_MAX = 1.7976931348623157e308;

static void bad_args(const char *name) {
    PyErr_Format(PyExc_TypeError, "%s(): incompatible function arguments (atheris' types and counts)", name);
}

/* pybind11's size_t conversion: no float; an int (bool included) or anything int() of a
   number gives, in 0 .. 2**64 - 1.  0 or -1 with TypeError. */
static int as_size(PyObject *o, uint64_t *out, const char *name) {
    if (PyFloat_Check(o)) goto fail;
    PyObject *n;
    if (PyLong_Check(o)) {
        n = Py_NewRef(o);
    } else if (PyNumber_Check(o)) {
        n = PyNumber_Long(o);
        if (!n) goto fail;
    } else {
        goto fail;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(n);
    Py_DECREF(n);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) goto fail;
    *out = (uint64_t)v;
    return 0;
fail:
    PyErr_Clear();
    bad_args(name);
    return -1;
}

/* pybind11's double conversion: what PyFloat_AsDouble gives (a float, __float__, __index__). */
static int as_double(PyObject *o, double *out, const char *name) {
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        bad_args(name);
        return -1;
    }
    *out = d;
    return 0;
}

static int check_nargs(Py_ssize_t nargs, Py_ssize_t want, const char *name) {
    if (nargs == want) return 0;
    bad_args(name);
    return -1;
}

/* pybind11's py::list(count): a count past Py_ssize_t or one that cannot be allocated is
   atheris' RuntimeError. */
static PyObject *new_list(uint64_t count) {
    PyObject *list = count > (uint64_t)PY_SSIZE_T_MAX ? NULL : PyList_New((Py_ssize_t)count);
    if (!list) {
        PyErr_Clear();
        PyErr_SetString(PyExc_RuntimeError, "Could not allocate list object!");
    }
    return list;
}

/* ------------------------------------------------------------------ construction */

/* Empty until __init__ runs (so a subclass may call it with its own arguments). */
static PyObject *Fdp_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    FdpObject *self = (FdpObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->data = PyBytes_FromStringAndSize(NULL, 0);
    if (!self->data) {
        Py_DECREF(self);
        return NULL;
    }
    self->p = (const unsigned char *)PyBytes_AS_STRING(self->data);
    return (PyObject *)self;
}

static int Fdp_init(FdpObject *self, PyObject *args, PyObject *kwds) {
    PyObject *data;
    if ((kwds && PyDict_GET_SIZE(kwds)) || PyTuple_GET_SIZE(args) != 1
        || !PyBytes_Check(data = PyTuple_GET_ITEM(args, 0))) {
        PyErr_SetString(PyExc_TypeError, "__init__(): incompatible constructor arguments: FuzzedDataProvider(bytes)");
        return -1;
    }
    Py_SETREF(self->data, Py_NewRef(data));
    self->p = (const unsigned char *)PyBytes_AS_STRING(data);
    self->pos = 0;
    self->end = PyBytes_GET_SIZE(data);
    return 0;
}

static void Fdp_dealloc(FdpObject *self) {
    Py_CLEAR(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ------------------------------------------------------------------ raw access */

static PyObject *Fdp_remaining_bytes(FdpObject *self, PyObject *unused) {
    return PyLong_FromSsize_t(REMAINING(self));
}

static PyObject *Fdp_buffer(FdpObject *self, PyObject *unused) {
    if (self->pos == 0 && self->end == PyBytes_GET_SIZE(self->data) && PyBytes_CheckExact(self->data))
        return Py_NewRef(self->data);
    return PyBytes_FromStringAndSize((const char *)self->p + self->pos, REMAINING(self));
}

static PyObject *consume_bytes(FdpObject *self, uint64_t count) {
    Py_ssize_t k = count < (uint64_t)REMAINING(self) ? (Py_ssize_t)count : REMAINING(self);
    PyObject *out = PyBytes_FromStringAndSize((const char *)self->p + self->pos, k);
    if (out) self->pos += k;
    return out;
}

static PyObject *Fdp_ConsumeBytes(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t count;
    if (check_nargs(nargs, 1, "ConsumeBytes") < 0 || as_size(args[0], &count, "ConsumeBytes") < 0) return NULL;
    return consume_bytes(self, count);
}

/* ------------------------------------------------------------------ text */

/* A str of n units of width 2 or 4 bytes from q (little-endian), atheris' way, written in
   place into a str of that width; `any` (the OR of all units) says whether a narrower str
   is the canonical one (then the units are copied into it: rare for a fuzzer's bytes). */
static PyObject *decode_units(const unsigned char *q, Py_ssize_t n, int width, int filter_surrogates) {
    if (n == 0) return PyUnicode_New(0, 0);
    uint32_t any = 0;
    PyObject *s = PyUnicode_New(n, width == 2 ? 0xFFFF : 0x10FFFF);
    if (!s) return NULL;
    if (width == 2) {
        Py_UCS2 *u = PyUnicode_2BYTE_DATA(s);
#if PY_LITTLE_ENDIAN
        memcpy(u, q, (size_t)n * 2);
#else
        for (Py_ssize_t i = 0; i < n; i++) u[i] = (Py_UCS2)(q[2 * i] | (q[2 * i + 1] << 8));
#endif
        /* Four units a word (SWAR): a unit in the surrogate block D800-DFFF loses its top
           five bits (c - 0xD800); `any` ORs them all. */
        unsigned char *b = (unsigned char *)u;
        uint64_t ors = 0;
        Py_ssize_t i = 0;
#if defined(__SSE2__)
        { /* eight units a step, the same masks */
            const __m128i top5 = _mm_set1_epi16((short)0xF800), block = _mm_set1_epi16((short)0xD800);
            __m128i acc = _mm_setzero_si128();
            for (; i + 8 <= n; i += 8) {
                __m128i x = _mm_loadu_si128((const __m128i *)(b + 2 * i));
                if (filter_surrogates) {
                    __m128i in_block = _mm_cmpeq_epi16(_mm_and_si128(x, top5), block);
                    x = _mm_andnot_si128(_mm_and_si128(in_block, top5), x);
                    _mm_storeu_si128((__m128i *)(b + 2 * i), x);
                }
                acc = _mm_or_si128(acc, x);
            }
            uint64_t halves[2];
            _mm_storeu_si128((__m128i *)halves, acc);
            ors = halves[0] | halves[1];
        }
#endif
        for (; i + 4 <= n; i += 4) {
            uint64_t w;
            memcpy(&w, b + 2 * i, 8);
            if (filter_surrogates) {
                uint64_t top = ((w & 0xF800F800F800F800ULL) ^ 0xD800D800D800D800ULL) >> 11; /* 0 in a surrogate */
                uint64_t kept = ((top + 0x001F001F001F001FULL) >> 5) & 0x0001000100010001ULL;
                w &= ~((kept ^ 0x0001000100010001ULL) * 0xF800);
                memcpy(b + 2 * i, &w, 8);
            }
            ors |= w;
        }
        any = (uint32_t)((ors | (ors >> 16) | (ors >> 32) | (ors >> 48)) & 0xFFFF);
        for (; i < n; i++) {
            Py_UCS2 c = u[i];
            if (filter_surrogates && (c & 0xF800) == 0xD800) c &= 0x07FF;
            u[i] = c;
            any |= c;
        }
        if (any > 0xFF) return s;
    } else {
        Py_UCS4 *u = PyUnicode_4BYTE_DATA(s);
#if PY_LITTLE_ENDIAN
        memcpy(u, q, (size_t)n * 4);
#else
        for (Py_ssize_t i = 0; i < n; i++) {
            const unsigned char *b = q + 4 * i;
            u[i] = (Py_UCS4)b[0] | ((Py_UCS4)b[1] << 8) | ((Py_UCS4)b[2] << 16) | ((Py_UCS4)b[3] << 24);
        }
#endif
        /* Two units a word (SWAR), as the scalar tail does one. */
        unsigned char *b = (unsigned char *)u;
        uint64_t ors = 0;
        Py_ssize_t i = 0;
#if defined(__SSE2__)
        { /* four units a step, the same masks */
            const __m128i bits21 = _mm_set1_epi32(0x1FFFFF), bit20 = _mm_set1_epi32(0x100000);
            const __m128i nibble = _mm_set1_epi32(0x0F0000), top = _mm_set1_epi32(0x1FF800);
            const __m128i block = _mm_set1_epi32(0xD800);
            __m128i acc = _mm_setzero_si128();
            for (; i + 4 <= n; i += 4) {
                __m128i x = _mm_and_si128(_mm_loadu_si128((const __m128i *)(b + 4 * i)), bits21);
                __m128i high = _mm_cmpeq_epi32(_mm_and_si128(x, bit20), bit20);
                x = _mm_andnot_si128(_mm_and_si128(high, nibble), x);
                if (filter_surrogates) {
                    __m128i in_block = _mm_cmpeq_epi32(_mm_and_si128(x, top), block);
                    x = _mm_andnot_si128(_mm_and_si128(in_block, top), x);
                }
                _mm_storeu_si128((__m128i *)(b + 4 * i), x);
                acc = _mm_or_si128(acc, x);
            }
            uint64_t halves[2];
            _mm_storeu_si128((__m128i *)halves, acc);
            ors = halves[0] | halves[1];
        }
#endif
        for (; i + 2 <= n; i += 2) {
            uint64_t w;
            memcpy(&w, b + 4 * i, 8);
            w &= 0x001FFFFF001FFFFFULL;
            w &= ~(((w >> 20) & 0x0000000100000001ULL) * 0x0F0000);
            if (filter_surrogates) {
                uint64_t x = (w & 0x001FF800001FF800ULL) ^ 0x0000D8000000D800ULL; /* 0 in a surrogate */
                uint64_t kept = ((x + 0x7FFFFFFF7FFFFFFFULL) >> 31) & 0x0000000100000001ULL;
                w &= ~((kept ^ 0x0000000100000001ULL) * 0x1FF800);
            }
            memcpy(b + 4 * i, &w, 8);
            ors |= w;
        }
        any = (uint32_t)((ors | (ors >> 32)) & 0xFFFFFFFFU);
        for (; i < n; i++) {
            Py_UCS4 c = u[i] & 0x1FFFFFU;
            c &= ~(((c >> 20) & 1U) * 0x0F0000U); /* bit 0x100000 set: at most 0x10FFFF */
            if (filter_surrogates && (c & 0x1FF800U) == 0xD800U) c &= 0x07FFU; /* c - 0xD800 */
            u[i] = c;
            any |= c;
        }
        if (any > 0xFFFF) return s;
    }
    /* Every unit fits a narrower str: that is the canonical one. */
    PyObject *narrow = PyUnicode_FromKindAndData(width == 2 ? PyUnicode_2BYTE_KIND : PyUnicode_4BYTE_KIND,
                                                 PyUnicode_DATA(s), n);
    Py_DECREF(s);
    return narrow;
}

static PyObject *consume_unicode(FdpObject *self, uint64_t count, int filter_surrogates) {
    if (count == 0 || REMAINING(self) == 0) return PyUnicode_New(0, 0);
    if (REMAINING(self) == 1) {
        self->pos++;
        return PyUnicode_New(0, 0);
    }
    unsigned char spec = self->p[self->pos++];
    uint64_t rem = (uint64_t)REMAINING(self);
    const unsigned char *q = self->p + self->pos;
    if (spec & 1) { /* half the time pure ASCII, which bytes alone would rarely be */
        Py_ssize_t k = (Py_ssize_t)(count < rem ? count : rem);
        PyObject *s = PyUnicode_New(k, 127);
        if (!s) return NULL;
        Py_UCS1 *w = PyUnicode_1BYTE_DATA(s);
        Py_ssize_t i = 0;
        for (; i + 8 <= k; i += 8) { /* eight bytes at a time */
            uint64_t word;
            memcpy(&word, q + i, 8);
            word &= 0x7F7F7F7F7F7F7F7FULL;
            memcpy(w + i, &word, 8);
        }
        for (; i < k; i++) w[i] = q[i] & 0x7F;
        self->pos += k;
        return s;
    }
    int width = spec & 2 ? 2 : 4;
    uint64_t want = count * (uint64_t)width; /* wraps past 2**64 as atheris' size_t does */
    Py_ssize_t k = (Py_ssize_t)(want < rem ? want : rem);
    PyObject *s = decode_units(q, k / width, width, filter_surrogates);
    if (s) self->pos += k;
    return s;
}

static PyObject *Fdp_ConsumeUnicode(FdpObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    /* atheris names this one argument (count=), and only this one. */
    uint64_t count;
    PyObject *arg = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs == 1 && nkw == 0) {
        arg = args[0];
    } else if (nargs == 0 && nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "count") == 0) {
        arg = args[0];
    }
    if (!arg) {
        bad_args("ConsumeUnicode");
        return NULL;
    }
    if (as_size(arg, &count, "ConsumeUnicode") < 0) return NULL;
    return consume_unicode(self, count, 0);
}

static PyObject *Fdp_ConsumeUnicodeNoSurrogates(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t count;
    if (check_nargs(nargs, 1, "ConsumeUnicodeNoSurrogates") < 0
        || as_size(args[0], &count, "ConsumeUnicodeNoSurrogates") < 0)
        return NULL;
    return consume_unicode(self, count, 1);
}

static PyObject *Fdp_ConsumeString(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t count;
    if (check_nargs(nargs, 1, "ConsumeString") < 0 || as_size(args[0], &count, "ConsumeString") < 0) return NULL;
    return consume_unicode(self, count, 0);
}

/* libFuzzer's ConsumeRandomLengthString's bytes (atheris lacks it): a backslash followed by
   any other byte ends the value, two backslashes are one. */
static PyObject *random_length_bytes(FdpObject *self, PyObject *const *args, Py_ssize_t nargs, const char *name) {
    uint64_t max_length = UINT64_MAX;
    if (nargs > 1) {
        bad_args(name);
        return NULL;
    }
    if (nargs == 1 && as_size(args[0], &max_length, name) < 0) return NULL;
    Py_ssize_t most = REMAINING(self);
    if ((uint64_t)most > max_length) most = (Py_ssize_t)max_length;
    PyObject *out = PyBytes_FromStringAndSize(NULL, most);
    if (!out) return NULL;
    unsigned char *w = (unsigned char *)PyBytes_AS_STRING(out);
    Py_ssize_t n = 0;
    while (n < most && self->pos < self->end) {
        unsigned char b = self->p[self->pos++];
        if (b == 0x5C && self->pos < self->end) {
            b = self->p[self->pos++];
            if (b != 0x5C) break;
        }
        w[n++] = b;
    }
    if (n != most && _PyBytes_Resize(&out, n) < 0) return NULL;
    return out;
}

static PyObject *Fdp_ConsumeRandomLengthBytes(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return random_length_bytes(self, args, nargs, "ConsumeRandomLengthBytes");
}

static PyObject *Fdp_ConsumeRandomLengthString(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *raw = random_length_bytes(self, args, nargs, "ConsumeRandomLengthString");
    if (!raw) return NULL;
    PyObject *s = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), "surrogateescape");
    Py_DECREF(raw);
    return s;
}

/* ------------------------------------------------------------------ integers */

static PyObject *consume_int(FdpObject *self, uint64_t bytes, int is_signed) {
    Py_ssize_t k = bytes < (uint64_t)REMAINING(self) ? (Py_ssize_t)bytes : REMAINING(self);
    const unsigned char *q = self->p + self->pos;
    PyObject *out;
    if (k <= 8) {
        uint64_t u = 0;
        for (Py_ssize_t i = 0; i < k; i++) u |= (uint64_t)q[i] << (8 * i);
        if (!is_signed) {
            out = PyLong_FromUnsignedLongLong(u);
        } else if (k == 0) {
            out = PyLong_FromLong(0);
        } else {
            int shift = 64 - 8 * (int)k; /* sign-extend the top byte read */
            out = PyLong_FromLongLong((long long)(int64_t)(u << shift) >> shift);
        }
    } else {
        out = _PyLong_FromByteArray(q, (size_t)k, 1, is_signed);
    }
    if (out) self->pos += k;
    return out;
}

static PyObject *Fdp_ConsumeInt(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t bytes;
    if (check_nargs(nargs, 1, "ConsumeInt") < 0 || as_size(args[0], &bytes, "ConsumeInt") < 0) return NULL;
    return consume_int(self, bytes, 1);
}

static PyObject *Fdp_ConsumeUInt(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t bytes;
    if (check_nargs(nargs, 1, "ConsumeUInt") < 0 || as_size(args[0], &bytes, "ConsumeUInt") < 0) return NULL;
    return consume_int(self, bytes, 0);
}

/* atheris' ConsumeSmallIntInRange: up to bits/8 bytes from the back, big-endian. */
static uint64_t small_int_in_range(FdpObject *self, int bits, uint64_t range) {
    uint64_t result = 0;
    int offset = 0;
    while (offset < bits && (range >> offset) > 0 && self->end > self->pos) {
        self->end--;
        result = (result << 8) | self->p[self->end];
        offset += 8;
    }
    if (range != UINT64_MAX) result %= range + 1;
    return result;
}

static PyObject *range_error(void) {
    PyErr_SetString(PyExc_RuntimeError, "ConsumeIntInRange: min must be <= max");
    return NULL;
}

/* ConsumeIntInRange for any two ints (min and max are ints: checked). */
static PyObject *int_in_range_big(FdpObject *self, PyObject *min, PyObject *max) {
    PyObject *delta = PyNumber_Subtract(max, min), *out = NULL, *off = NULL;
    if (!delta) return NULL;
    if (!PyLong_Check(delta)) {
        PyErr_SetString(PyExc_TypeError, "ConsumeIntInRange: max - min is not an int");
        goto done;
    }
    if (_PyLong_Sign(delta) < 0) {
        range_error();
        goto done;
    }
    int64_t bits = (int64_t)_PyLong_NumBits(delta);
    if (bits < 0) goto done;
    if (bits <= 64) {
        uint64_t native = PyLong_AsUnsignedLongLong(delta);
        if (native == (uint64_t)-1 && PyErr_Occurred()) goto done;
        off = PyLong_FromUnsignedLongLong(small_int_in_range(self, (int)bits, native));
    } else {
        PyObject *raw = consume_int(self, (uint64_t)bits / 8, 1);
        PyObject *one = raw ? PyLong_FromLong(1) : NULL;
        PyObject *modulus = one ? PyNumber_Add(delta, one) : NULL;
        off = modulus ? PyNumber_Remainder(raw, modulus) : NULL;
        Py_XDECREF(raw);
        Py_XDECREF(one);
        Py_XDECREF(modulus);
    }
    if (off) out = PyNumber_Add(min, off);
done:
    Py_XDECREF(off);
    Py_DECREF(delta);
    return out;
}

static PyObject *int_in_range(FdpObject *self, PyObject *min, PyObject *max) {
    if (PyLong_CheckExact(min) && PyLong_CheckExact(max)) {
        int o1, o2;
        long long a = PyLong_AsLongLongAndOverflow(min, &o1);
        long long b = PyLong_AsLongLongAndOverflow(max, &o2);
        if (!o1 && !o2) { /* both fit 64 bits: so do delta and the result */
            if (b < a) return range_error();
            uint64_t delta = (uint64_t)b - (uint64_t)a;
            int bits = delta ? 64 - __builtin_clzll(delta) : 0;
            uint64_t off = small_int_in_range(self, bits, delta);
            return PyLong_FromLongLong((long long)((uint64_t)a + off)); /* in [a, b] */
        }
    }
    return int_in_range_big(self, min, max);
}

static PyObject *Fdp_ConsumeIntInRange(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyLong_Check(args[0]) || !PyLong_Check(args[1])) {
        bad_args("ConsumeIntInRange");
        return NULL;
    }
    return int_in_range(self, args[0], args[1]);
}

static PyObject *Fdp_ConsumeIntList(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t count, bytes;
    if (check_nargs(nargs, 2, "ConsumeIntList") < 0 || as_size(args[0], &count, "ConsumeIntList") < 0
        || as_size(args[1], &bytes, "ConsumeIntList") < 0)
        return NULL;
    PyObject *list = new_list(count);
    for (Py_ssize_t i = 0; list && i < (Py_ssize_t)count; i++) {
        PyObject *v = consume_int(self, bytes, 1);
        if (!v) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, v);
    }
    return list;
}

static PyObject *Fdp_ConsumeIntListInRange(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t count;
    if (nargs != 3 || !PyLong_Check(args[1]) || !PyLong_Check(args[2])) {
        bad_args("ConsumeIntListInRange");
        return NULL;
    }
    if (as_size(args[0], &count, "ConsumeIntListInRange") < 0) return NULL;
    PyObject *list = new_list(count);
    for (Py_ssize_t i = 0; list && i < (Py_ssize_t)count; i++) {
        PyObject *v = int_in_range(self, args[1], args[2]);
        if (!v) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* ------------------------------------------------------------------ floats and booleans */

static int consume_bool(FdpObject *self) {
    if (self->pos >= self->end) return 0;
    return self->p[self->pos++] & 1;
}

static double consume_probability(FdpObject *self) {
    Py_ssize_t k = REMAINING(self) < 8 ? REMAINING(self) : 8;
    uint64_t u = 0;
    for (Py_ssize_t i = 0; i < k; i++) u |= (uint64_t)self->p[self->pos + i] << (8 * i);
    self->pos += k;
    return (double)u / (double)UINT64_MAX;
}

/* -1 with RuntimeError when min > max. */
static int float_in_range(FdpObject *self, double min, double max, double *out) {
    if (min > max) {
        PyErr_SetString(PyExc_RuntimeError, "ConsumeFloatInRange: min must be <= max");
        return -1;
    }
    double range, result = min;
    if (min < 0 && max > 0 && min + DOUBLE_MAX < max) { /* the plain difference would overflow */
        range = (max / 2) - (min / 2);
        if (consume_bool(self)) result += range;
    } else {
        range = max - min;
    }
    *out = result + range * consume_probability(self);
    return 0;
}

static double consume_regular_float(FdpObject *self) {
    double out = 0.0;
    (void)float_in_range(self, -DOUBLE_MAX, DOUBLE_MAX, &out); /* cannot fail */
    return out;
}

static double consume_float(FdpObject *self) {
    if (self->pos >= self->end) return 0.0;
    unsigned char kind = self->p[self->pos++];
    if (kind <= 10) {
        ADVANCE(self, 9); /* as many bytes as a regular float takes */
        switch (kind) {
        case 0: return 0.0;
        case 1: return -0.0;
        case 2: return Py_HUGE_VAL;
        case 3: return -Py_HUGE_VAL;
        case 4: return Py_NAN;
        case 5: return 5e-324;
        case 6: return -5e-324;
        case 7: return 2.2250738585072014e-308;
        case 8: return -2.2250738585072014e-308;
        case 9: return DOUBLE_MAX;
        default: return -DOUBLE_MAX;
        }
    }
    return consume_regular_float(self);
}

static PyObject *Fdp_ConsumeBool(FdpObject *self, PyObject *unused) {
    return PyBool_FromLong(consume_bool(self));
}

static PyObject *Fdp_ConsumeProbability(FdpObject *self, PyObject *unused) {
    return PyFloat_FromDouble(consume_probability(self));
}

static PyObject *Fdp_ConsumeFloat(FdpObject *self, PyObject *unused) {
    return PyFloat_FromDouble(consume_float(self));
}

static PyObject *Fdp_ConsumeRegularFloat(FdpObject *self, PyObject *unused) {
    return PyFloat_FromDouble(consume_regular_float(self));
}

static PyObject *Fdp_ConsumeFloatInRange(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    double min, max, out;
    if (check_nargs(nargs, 2, "ConsumeFloatInRange") < 0 || as_double(args[0], &min, "ConsumeFloatInRange") < 0
        || as_double(args[1], &max, "ConsumeFloatInRange") < 0 || float_in_range(self, min, max, &out) < 0)
        return NULL;
    return PyFloat_FromDouble(out);
}

/* A list of count floats drawn by kind: 0 ConsumeFloat, 1 ConsumeRegularFloat,
   2 ConsumeProbability, 3 ConsumeFloatInRange(min, max). */
static PyObject *float_list(FdpObject *self, uint64_t count, int kind, double min, double max) {
    PyObject *list = new_list(count);
    for (Py_ssize_t i = 0; list && i < (Py_ssize_t)count; i++) {
        double v = 0.0;
        if (kind == 0) v = consume_float(self);
        else if (kind == 1) v = consume_regular_float(self);
        else if (kind == 2) v = consume_probability(self);
        else if (float_in_range(self, min, max, &v) < 0) {
            Py_CLEAR(list);
            break;
        }
        PyObject *f = PyFloat_FromDouble(v);
        if (!f) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, f);
    }
    return list;
}

#define FLOAT_LIST(NAME, KIND)                                                                   \
    static PyObject *Fdp_##NAME(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {      \
        uint64_t count;                                                                          \
        if (check_nargs(nargs, 1, #NAME) < 0 || as_size(args[0], &count, #NAME) < 0) return NULL; \
        return float_list(self, count, KIND, 0.0, 0.0);                                          \
    }
FLOAT_LIST(ConsumeFloatList, 0)
FLOAT_LIST(ConsumeRegularFloatList, 1)
FLOAT_LIST(ConsumeProbabilityList, 2)

static PyObject *Fdp_ConsumeFloatListInRange(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t count;
    double min, max;
    if (check_nargs(nargs, 3, "ConsumeFloatListInRange") < 0 || as_size(args[0], &count, "ConsumeFloatListInRange") < 0
        || as_double(args[1], &min, "ConsumeFloatListInRange") < 0
        || as_double(args[2], &max, "ConsumeFloatListInRange") < 0)
        return NULL;
    return float_list(self, count, 3, min, max);
}

/* ------------------------------------------------------------------ choices */

static PyObject *Fdp_PickValueInList(FdpObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1 || !PyList_Check(args[0])) {
        bad_args("PickValueInList");
        return NULL;
    }
    PyObject *list = args[0];
    uint64_t n = (uint64_t)PyList_GET_SIZE(list);
    int bits = n <= 0xFF ? 8 : n <= 0xFFFF ? 16 : n <= 0xFFFFFFFFULL ? 32 : 64;
    uint64_t i = small_int_in_range(self, bits, n - 1); /* an empty list: n - 1 wraps, as in atheris */
    if (i >= (uint64_t)PyList_GET_SIZE(list)) {
        PyErr_SetString(PyExc_IndexError, "list index out of range");
        return NULL;
    }
    return Py_NewRef(PyList_GET_ITEM(list, (Py_ssize_t)i));
}

/* ------------------------------------------------------------------ the type */

#define FAST(NAME, DOC) {#NAME, (PyCFunction)(void (*)(void))Fdp_##NAME, METH_FASTCALL, DOC}
#define NOARGS(NAME, DOC) {#NAME, (PyCFunction)Fdp_##NAME, METH_NOARGS, DOC}

static PyMethodDef Fdp_methods[] = {
    NOARGS(remaining_bytes, "remaining_bytes() -> int: bytes not consumed yet"),
    NOARGS(buffer, "buffer() -> bytes: the bytes not consumed yet"),
    FAST(ConsumeBytes, "ConsumeBytes(count) -> bytes"),
    {"ConsumeUnicode", (PyCFunction)(void (*)(void))Fdp_ConsumeUnicode, METH_FASTCALL | METH_KEYWORDS,
     "ConsumeUnicode(count) -> str: ASCII, UTF-16 or UTF-32 units as the first byte says"},
    FAST(ConsumeUnicodeNoSurrogates, "ConsumeUnicodeNoSurrogates(count) -> str: ConsumeUnicode without surrogates"),
    FAST(ConsumeString, "ConsumeString(count) -> str: ConsumeUnicode"),
    FAST(ConsumeRandomLengthBytes, "ConsumeRandomLengthBytes(max_length=ALL_REMAINING) -> bytes (libFuzzer's)"),
    FAST(ConsumeRandomLengthString, "ConsumeRandomLengthString(max_length=ALL_REMAINING) -> str (libFuzzer's)"),
    FAST(ConsumeInt, "ConsumeInt(byte_count) -> int: signed, little-endian"),
    FAST(ConsumeUInt, "ConsumeUInt(byte_count) -> int: unsigned, little-endian"),
    FAST(ConsumeIntInRange, "ConsumeIntInRange(min, max) -> int: from the end of the input"),
    FAST(ConsumeIntList, "ConsumeIntList(count, byte_count) -> list[int]"),
    FAST(ConsumeIntListInRange, "ConsumeIntListInRange(count, min, max) -> list[int]"),
    NOARGS(ConsumeBool, "ConsumeBool() -> bool"),
    NOARGS(ConsumeProbability, "ConsumeProbability() -> float in [0, 1]"),
    NOARGS(ConsumeFloat, "ConsumeFloat() -> float, special values included"),
    NOARGS(ConsumeRegularFloat, "ConsumeRegularFloat() -> a finite float"),
    FAST(ConsumeFloatInRange, "ConsumeFloatInRange(min, max) -> float"),
    FAST(ConsumeFloatList, "ConsumeFloatList(count) -> list[float]"),
    FAST(ConsumeRegularFloatList, "ConsumeRegularFloatList(count) -> list[float]"),
    FAST(ConsumeProbabilityList, "ConsumeProbabilityList(count) -> list[float]"),
    FAST(ConsumeFloatListInRange, "ConsumeFloatListInRange(count, min, max) -> list[float]"),
    FAST(PickValueInList, "PickValueInList(values: list) -> one of values"),
    {NULL},
};

PyTypeObject cm_FdpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "assay.gen._cmutate.FuzzedDataProvider",
    .tp_doc = "FuzzedDataProvider(data: bytes): atheris' data provider, value for value.",
    .tp_basicsize = sizeof(FdpObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = Fdp_new,
    .tp_init = (initproc)Fdp_init,
    .tp_dealloc = (destructor)Fdp_dealloc,
    .tp_methods = Fdp_methods,
};
