/* Two planted bugs: a shallow one that libFuzzer hits within a few hundred cases of every start
 * (so it is found again and again from the corpus), and one behind a two-byte magic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int shallow(const uint8_t *d, size_t n) {
    char *copy = malloc(n);
    memcpy(copy, d, n);
    int last = copy[n]; /* one past the end */
    free(copy);
    return last;
}

__attribute__((noinline)) static int behind_magic(const uint8_t *d) {
    int *slots = malloc(4 * sizeof(int));
    memset(slots, 0, 4 * sizeof(int));
    int v = slots[4 + (d[3] & 1)]; /* just past the block */
    free(slots);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n >= 2 && d[0] == 'A') return shallow(d, n);
    if (n >= 4 && d[0] == 'B' && d[1] == 'U') return behind_magic(d);
    return 0;
}
