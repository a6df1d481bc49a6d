/* Small planted bugs, one per failure class, chosen by the first input byte.
 * Used by tests/native: each class must come out of assay with its exact signature. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planted.h"

void *planted_sink;

__attribute__((noinline)) static int heap_overflow(const uint8_t *d) {
    int *a = malloc(PLANTED_SLOTS * sizeof(int));
    memset(a, 0, PLANTED_SLOTS * sizeof(int));
    int v = a[PLANTED_SLOTS + (d[1] & 1)]; /* reads just past the block */
    free(a);
    return v;
}

__attribute__((noinline)) static int use_after_free(const uint8_t *d) {
    char *p = malloc(8);
    p[0] = (char)d[1];
    free(p);
    return p[d[1] & 3];
}

__attribute__((noinline)) static int signed_overflow(const uint8_t *d) {
    int x = INT_MAX - 1;
    x += d[1] + 2;
    return x;
}

struct record { int length; };

__attribute__((noinline)) static struct record *lookup(const uint8_t *d) {
    return d[1] == 0x7f ? (struct record *)planted_sink : NULL;
}

__attribute__((noinline)) static int null_deref(const uint8_t *d) {
    return lookup(d)->length;
}

__attribute__((noinline)) static int wild_read(const uint8_t *d) {
    volatile int *p = (volatile int *)(uintptr_t)(0x1000u + d[1]);
    return *p;
}

__attribute__((noinline)) static void spin(const uint8_t *d) {
    volatile unsigned long i = d[1];
    for (;;) i++;
}

__attribute__((noinline)) static void hog(void) {
    planted_sink = malloc((size_t)PLANTED_HOG_MB << 20);
    memset(planted_sink, 1, (size_t)PLANTED_HOG_MB << 20);
}

__attribute__((noinline)) static void leak(const uint8_t *d) {
    char *p = malloc(33);
    p[0] = (char)d[1];
    planted_sink = NULL;
    if (p[0] == 0x7f) free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n < 2) return 0;
    switch (d[0]) {
    case 'H': return heap_overflow(d);
    case 'U': return use_after_free(d);
    case 'S': return signed_overflow(d);
    case 'N': return null_deref(d);
    case 'W': return wild_read(d);
    case 'T': spin(d); break;
    case 'M': hog(); break;
    case 'L': leak(d); break;
    }
    return 0;
}
