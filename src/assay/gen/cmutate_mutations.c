/*
 * ByteMutator.mutate in C: the sixteen mutations of assay.gen.mutators, drawing from a
 * cm_RandomType generator exactly as the Python reference draws, writing the same bytes.
 */
#include "cmutate.h"

/* ---------------------------------------------------------------- the buffer */

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

/* b[at:end] becomes a gap of len bytes (their contents undefined); 0, or -1 with an exception set. */
static int buf_gap(Buf *b, Py_ssize_t at, Py_ssize_t end, Py_ssize_t len) {
    if (end > b->n) end = b->n;
    if (end < at) end = at;
    Py_ssize_t grown = b->n - (end - at) + len;
    if (buf_reserve(b, grown) < 0) return -1;
    memmove(b->p + at + len, b->p + end, (size_t)(b->n - end));
    b->n = grown;
    return 0;
}

/* b[at:end] = src (src may point into b: it is copied first when it does) */
static int buf_assign(Buf *b, Py_ssize_t at, Py_ssize_t end, const unsigned char *src, Py_ssize_t len) {
    unsigned char *tmp = NULL;
    if (len && src >= b->p && src < b->p + b->cap) {
        tmp = PyMem_Malloc((size_t)len);
        if (!tmp) { PyErr_NoMemory(); return -1; }
        memcpy(tmp, src, (size_t)len);
        src = tmp;
    }
    int rc = buf_gap(b, at, end, len);
    if (rc == 0 && len) memcpy(b->p + at, src, (size_t)len);
    PyMem_Free(tmp);
    return rc;
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
#define DRAW(n, out) do { uint64_t _v; if (cm_rng_below(c->rng, (uint64_t)(n), &_v) < 0) return -1; (out) = (Py_ssize_t)_v; } while (0)
#define DRAW64(n, out) do { if (cm_rng_below(c->rng, (uint64_t)(n), &(out)) < 0) return -1; } while (0)
#define RANDINT(a, b_, out) do { Py_ssize_t _w; DRAW((b_) - (a) + 1, _w); (out) = (a) + _w; } while (0)
#define UNIFORM(out) do { if (cm_rng_random(c->rng, &(out)) < 0) return -1; } while (0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))


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
    if (cm_rng_below(c->rng, 6, &w) < 0) { Py_DECREF(value); return -1; }
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
        if (cm_rng_below(c->rng, 10, &w) < 0) break;
        next = PyLong_FromString(table[w], NULL, 10);
        break;
    }
    default:
        if (cm_rng_below(c->rng, 1000, &w) < 0) break;
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

/* out[0:n * times] = src[0:n] * times, by doubling what is written (src outside out) */
static void fill_repeated(unsigned char *out, const unsigned char *src, Py_ssize_t n, Py_ssize_t times) {
    Py_ssize_t total = n * times, w = n;
    if (!total) return;
    memcpy(out, src, (size_t)n);
    while (w < total) {
        Py_ssize_t step = w < total - w ? w : total - w;
        memcpy(out + w, out, (size_t)step);
        w += step;
    }
}

static int repeat_into(Buf *b, Py_ssize_t at, Py_ssize_t end, const unsigned char *chunk, Py_ssize_t n,
                       Py_ssize_t times, const unsigned char *tail_left, Py_ssize_t nl,
                       const unsigned char *core, Py_ssize_t nc) {
    /* b[at:end] = chunk * times                          (tail_left == NULL)
       b[at:end] = tail_left * times + core + chunk * times (nesting: left, core, right = chunk)
       The pieces are the callers' copies, never b's own bytes. */
    Py_ssize_t left = tail_left ? nl * times + nc : 0;
    if (buf_gap(b, at, end, left + n * times) < 0) return -1;
    if (tail_left) {
        fill_repeated(b->p + at, tail_left, nl, times);
        if (nc) memcpy(b->p + at + nl * times, core, (size_t)nc);
    }
    fill_repeated(b->p + at + left, chunk, n, times);
    return 0;
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

static int crossover_with(Ctx *c, Buf *b, PyObject *other);

static int m_crossover(Ctx *c) {
    Buf *b = c->b;
    PyObject *other = c->other;
    if (PyList_CheckExact(other)) {
        Py_ssize_t size = PyList_GET_SIZE(other);
        if (!size) return 0;
        Py_ssize_t k;
        DRAW(size, k);
        if (k >= PyList_GET_SIZE(other)) { PyErr_SetString(PyExc_IndexError, "crossover: the corpus shrank"); return -1; }
        other = PyList_GET_ITEM(other, k);
    }
    if (other == Py_None || !PyBytes_Check(other) || PyBytes_GET_SIZE(other) == 0) {
        if (other != Py_None && !PyBytes_Check(other)) {
            PyErr_SetString(PyExc_TypeError, "crossover partners are bytes");
            return -1;
        }
        return 0;
    }
    Py_INCREF(other);   /* held while the draws run */
    int rc = crossover_with(c, b, other);
    Py_DECREF(other);
    return rc;
}

static int crossover_with(Ctx *c, Buf *b, PyObject *other) {
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
    if (k >= PyList_GET_SIZE(c->dictionary)) { PyErr_SetString(PyExc_IndexError, "the dictionary shrank"); return -1; }
    PyObject *token = PyList_GET_ITEM(c->dictionary, k);
    if (!PyBytes_Check(token)) { PyErr_SetString(PyExc_TypeError, "dictionary tokens are bytes"); return -1; }
    Py_INCREF(token);   /* held while the draw runs */
    uint64_t w;
    if (cm_rng_below(c->rng, (uint64_t)(b->n + 1), &w) < 0) { Py_DECREF(token); return -1; }
    at = (Py_ssize_t)w;
    Py_ssize_t len = PyBytes_GET_SIZE(token);
    const unsigned char *t = (const unsigned char *)PyBytes_AS_STRING(token);
    int rc = overwrite ? buf_assign(b, at, at + len, t, len) : buf_assign(b, at, at, t, len);
    Py_DECREF(token);
    return rc < 0 ? -1 : 1;
}

static int m_dict_insert(Ctx *c) { return m_dict(c, 0); }
static int m_dict_overwrite(Ctx *c) { return m_dict(c, 1); }

/* mutators.UNICODE_CHARS, UTF-8 (module attribute UNICODE_CHARS; the Python side checks they agree) */
const char *const cm_unicode_chars[] = {"\xc2\xa0", "\xe2\x84\x80", "\xef\xbc\x8f", "\xef\xbc\x83", "\xef\xbc\x9f", "\xef\xbc\xa0", "\xef\xbc\x9a", "\xc4\xb0", "\xc4\xb1", "\xe2\x84\xaa", "\xc5\xbf", "\xc3\x9f", "\xef\xac\x81", "\xd9\xa3", "\xef\xbc\x91", "\xc2\xb2", "\xe2\x80\xa8", "\xc2\x85", "\xe2\x80\x8b", "\xef\xbb\xbf", "\xcc\x81", "\xf0\x9f\x98\x80", "\xe3\x80\x80", "\xe3\x80\x82", "\xef\xbc\x8e", "\xe2\x80\xa4"};
const Py_ssize_t cm_n_unicode_chars = (Py_ssize_t)(sizeof(cm_unicode_chars) / sizeof(cm_unicode_chars[0]));

static int m_unicode_char(Ctx *c) {
    Buf *b = c->b;
    uint64_t x;
    DRAW64((uint64_t)1 << 48, x);
    const char *ch = cm_unicode_chars[x % (uint64_t)cm_n_unicode_chars];
    Py_ssize_t len = (Py_ssize_t)strlen(ch);
    x /= (uint64_t)cm_n_unicode_chars;
    Py_ssize_t at;
    if ((x & 1) && b->n) {
        at = (Py_ssize_t)((x >> 1) % (uint64_t)b->n);
        return buf_assign(b, at, at + 1, (const unsigned char *)ch, len) < 0 ? -1 : 1;
    }
    at = (Py_ssize_t)((x >> 1) % (uint64_t)(b->n + 1));
    return buf_assign(b, at, at, (const unsigned char *)ch, len) < 0 ? -1 : 1;
}

/* In the order of mutators.MUTATIONS. */
typedef int (*mutation)(Ctx *);
static const mutation MUTATIONS[] = {
    m_erase, m_insert_byte, m_insert_repeated, m_change_byte, m_flip_bit, m_shuffle, m_interesting,
    m_add_to_int, m_ascii_int, m_copy_part, m_repeat_chunk, m_nest, m_crossover, m_dict_insert, m_dict_overwrite,
    m_unicode_char,
};
#define N_MUTATIONS ((Py_ssize_t)(sizeof(MUTATIONS) / sizeof(MUTATIONS[0])))


/* ByteMutator.mutate's body: ``data`` mutated into ``buf`` (its bytes replaced); the indices of
   the mutations applied go to ``applied`` (at most MAX_STACK), their number to ``n_applied``.
   ``limit`` < 0 stands for None.  0, or -1 with an exception set. */
int cm_mutate_into(const cm_MutateArgs *a, RandomObject *rng, const unsigned char *data, Py_ssize_t data_len,
                   PyObject *other, Py_ssize_t limit, Buf *buf, int *applied, int *n_applied) {
    *n_applied = 0;
    if (buf_reserve(buf, data_len + 1) < 0) return -1;
    memcpy(buf->p, data, (size_t)data_len);
    buf->n = data_len;

    double r;
    if (cm_rng_random(rng, &r) < 0) return -1;
    Py_ssize_t depth = 1 + (r < 0.36788) + (r < 0.13534) + (r < 0.04979) + (r < 0.01832);
    if (depth > MAX_STACK) depth = MAX_STACK;
    Ctx c = {rng, buf, other, a->dictionary, a->max_len, a->max_len};
    /* fmod(r * 1024, 1.0), exactly: 0 <= r * 1024 < 1024, whose fraction is exact; libm's fmod costs more */
    double scaled = r * 1024;
    if (limit < 0 || scaled - (double)(long long)scaled < LONG_SHARE)
        c.cap = a->max_len;
    else {
        if (buf->n > LONG_PARENT * limit) buf->n = limit;   /* a long parent: mutate the part the child keeps */
        c.cap = MAX(limit, buf->n);
    }
    Py_ssize_t attempts = depth * 8, done = 0;
    while (attempts) {
        attempts--;
        Py_ssize_t i;
        uint64_t x;
        if (!buf->n) {
            Py_ssize_t size = PyList_GET_SIZE(a->inserting);
            if (cm_rng_below(rng, (uint64_t)size, &x) < 0) return -1;
            if ((Py_ssize_t)x >= PyList_GET_SIZE(a->inserting)) {
                PyErr_SetString(PyExc_IndexError, "mutate: the inserting list shrank");
                return -1;
            }
            i = PyLong_AsSsize_t(PyList_GET_ITEM(a->inserting, (Py_ssize_t)x));
        } else {
            if (cm_rng_below(rng, (uint64_t)a->n_picks << 20, &x) < 0) return -1;
            uint64_t high = x / (uint64_t)a->n_picks, k = x % (uint64_t)a->n_picks;
            Py_ssize_t n_wins = PyList_GET_SIZE(a->wins);
            if (n_wins && a->win_cut > 0 && k < (uint64_t)a->win_cut)
                i = PyLong_AsSsize_t(PyList_GET_ITEM(a->wins, (Py_ssize_t)(high % (uint64_t)n_wins)));
            else
                i = (Py_ssize_t)(k % (uint64_t)N_MUTATIONS);
        }
        if (i < 0 || i >= N_MUTATIONS) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "mutation index out of range");
            return -1;
        }
        int rc = MUTATIONS[i](&c);
        if (rc < 0) return -1;
        if (rc) {
            applied[done] = (int)i;
            *n_applied = (int)++done;
            if (done == depth) break;
        }
    }
    if (buf->n > c.cap) buf->n = c.cap;
    return 0;
}

/* The fixed arguments of mutate() (max_len, dictionary, wins, inserting, names, n_picks, win_cut),
   checked; 0, or -1 with an exception set.  The references are borrowed. */
int cm_mutate_args(PyObject *const *args, cm_MutateArgs *a) {
    a->dictionary = args[1];
    a->wins = args[2];
    a->inserting = args[3];
    a->names = args[4];
    if (!PyList_Check(a->dictionary) || !PyList_Check(a->wins) || !PyList_Check(a->inserting)
        || !PyTuple_Check(a->names) || PyTuple_GET_SIZE(a->names) != N_MUTATIONS) {
        PyErr_SetString(PyExc_TypeError, "mutate: bad argument types");
        return -1;
    }
    a->max_len = PyLong_AsSsize_t(args[0]);
    a->n_picks = PyLong_AsSsize_t(args[5]);
    a->win_cut = PyLong_AsSsize_t(args[6]);
    if (PyErr_Occurred()) return -1;
    /* n_picks << 20 is drawn from: it must fit 64 bits; a negative max_len would be a negative length */
    if (a->max_len < 0 || a->n_picks <= 0 || a->n_picks > ((Py_ssize_t)1 << 40)) {
        PyErr_SetString(PyExc_ValueError, "mutate: max_len >= 0 and 0 < n_picks <= 2**40");
        return -1;
    }
    return 0;
}

/* The names of the mutations applied, as ByteMutator.mutate returns them. */
PyObject *cm_applied_names(const cm_MutateArgs *a, const int *applied, int n_applied) {
    PyObject *names = PyList_New(n_applied);
    if (!names) return NULL;
    for (int k = 0; k < n_applied; k++) {
        PyObject *name = PyTuple_GET_ITEM(a->names, applied[k]);
        Py_INCREF(name);
        PyList_SET_ITEM(names, k, name);
    }
    return names;
}

/* mutate(max_len, dictionary, wins, inserting, names, n_picks, win_cut, rng, data, other, limit)
   -> (bytes, list of names): ByteMutator.mutate (the fixed arguments first, for functools.partial). */
PyObject *cm_mutate(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) { PyErr_SetString(PyExc_TypeError, "mutate takes 11 arguments"); return NULL; }
    if (Py_TYPE(args[7]) != &cm_RandomType) { PyErr_SetString(PyExc_TypeError, "rng must be a _cmutate.Random"); return NULL; }
    cm_MutateArgs a;
    if (cm_mutate_args(args, &a) < 0) return NULL;
    PyObject *data = args[8], *other = args[9], *limit_obj = args[10];
    if (!PyBytes_Check(data)) { PyErr_SetString(PyExc_TypeError, "mutate: bad argument types"); return NULL; }
    Py_ssize_t limit = -1;
    if (limit_obj != Py_None) {
        limit = PyLong_AsSsize_t(limit_obj);
        if (limit == -1 && PyErr_Occurred()) return NULL;
        if (limit < 0) limit = 0;
    }
    Buf buf = {NULL, 0, 0};
    int applied[MAX_STACK], n_applied;
    if (cm_mutate_into(&a, (RandomObject *)args[7], (const unsigned char *)PyBytes_AS_STRING(data),
                       PyBytes_GET_SIZE(data), other, limit, &buf, applied, &n_applied) < 0) {
        PyMem_Free(buf.p);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize((const char *)buf.p, buf.n);
    PyMem_Free(buf.p);
    PyObject *names = out ? cm_applied_names(&a, applied, n_applied) : NULL;
    if (!names) { Py_XDECREF(out); return NULL; }
    PyObject *pair = PyTuple_Pack(2, out, names);
    Py_DECREF(out);
    Py_DECREF(names);
    return pair;
}
