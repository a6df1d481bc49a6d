/* libFuzzer harness of the C twin's FuzzedDataProvider (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "fdp"
#include "cmutate_fuzz.h"
