"""Targets for tests/test_slow_growth.py (planted): a quadratic construct that stays far
below any timeout within the default ``max_len`` yet hangs on a longer input, and a
linear one that is merely costly on a long input.
"""

from __future__ import annotations

#: Characters the linear tokenizer compares each byte with, one by one (every printable one).
SEPARATORS = bytes(range(32, 127))


def parameter_list(data: bytes) -> int:
    """A header's ``name=value`` parameters, separated by ``;``.  Each name is checked
    against every name before it (a naive duplicate check, no index): O(parameters²)
    Python loop turns.  4 KB of parameters run in tens of milliseconds, 50 KB in seconds.
    """
    names: list[bytes] = []
    duplicates = 0
    for part in data.split(b";"):
        name = part.partition(b"=")[0].strip()
        if not name:
            continue
        for other in names:
            if other == name:
                duplicates += 1
        names.append(name)
    return duplicates


def separator_scan(data: bytes) -> int:
    """A tokenizer that compares each byte with every separator in turn, in Python: costly
    per byte (hundreds of thousands of line events at 4 KB) but linear in the input."""
    found = 0
    for byte in data:
        for sep in SEPARATORS:
            if byte == sep:
                found += 1
    return found
