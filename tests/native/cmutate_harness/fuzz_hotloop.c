/* libFuzzer harness of the C twin's hotloop (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "hotloop"
#include "cmutate_fuzz.h"
