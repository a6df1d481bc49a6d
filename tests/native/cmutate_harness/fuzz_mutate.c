/* libFuzzer harness of the C twin's mutate (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "mutate"
#include "cmutate_fuzz.h"
