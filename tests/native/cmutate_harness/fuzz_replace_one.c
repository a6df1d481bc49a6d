/* libFuzzer harness of the C twin's replace_one (see cmutate_fuzz.h and drivers.py). */
#define ENTRY "replace_one"
#include "cmutate_fuzz.h"
