/* libFuzzer harness of the C twin's recorder (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "recorder"
#include "cmutate_fuzz.h"
