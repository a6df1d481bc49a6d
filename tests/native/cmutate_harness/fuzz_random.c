/* libFuzzer harness of the C twin's random (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "random"
#include "cmutate_fuzz.h"
