/* libFuzzer harness of the C twin's linetally (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "linetally"
#include "cmutate_fuzz.h"
