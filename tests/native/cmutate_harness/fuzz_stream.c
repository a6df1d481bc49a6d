/* libFuzzer harness of the C twin's stream (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "stream"
#include "cmutate_fuzz.h"
