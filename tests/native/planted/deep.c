/* One planted heap overflow behind a three-byte magic: found by fuzzing, not by the seeds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int parse_body(const uint8_t *d, size_t n) {
    char *copy = malloc(n);
    memcpy(copy, d, n);
    int last = copy[n]; /* one past the end */
    free(copy);
    return last;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n >= 3 && d[0] == 'F' && d[1] == 'U' && d[2] == 'Z')
        return parse_body(d, n);
    return 0;
}
