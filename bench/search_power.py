#!/usr/bin/env python
"""Item 5 of issue 13 (long inputs, hangs, shallow crashes, nesting): see the last
section of bench/time_to_bug.py.  ``python bench/search_power.py [--cap N] [--seeds K]``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import time_to_bug

if __name__ == "__main__":
    sys.exit(time_to_bug.search_power_main())
