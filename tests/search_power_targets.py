"""Targets for tests/test_search_power.py: bugs that need long or deeply nested
inputs, an unrelated hang, and a shallow crash in front of a deeper one.

The quadratic, hang and two-bug targets are planted (small functions written to
have exactly one property each); the recursion target is the real ``tomllib``.
"""

from __future__ import annotations

import re
import tomllib

#: Run length past which :func:`quadratic_runs` goes quadratic.
RUN_LIMIT = 4096


def quadratic_runs(data: bytes) -> int:
    """A tokenizer's look-ahead over runs of ``<`` (bounded: linear), then, for a run
    past 4 KB, a re-scan from each of its positions, O(run²), as a naive tokenizer
    does with an unterminated tag.  Blind mutation rarely builds such a run;
    climbing on cost (the look-ahead's line count grows with the runs) does.
    """
    if not data.startswith(b"<"):
        return 0
    n = len(data)
    i = 0
    while i < n:
        if data[i] == 0x3C:
            j = i + 1
            while j < n and j - i < 16 and data[j] == 0x3C:
                j += 1
        i += 1
    longest = max(map(len, re.findall(rb"<+", data)))
    total = 0
    if longest > RUN_LIMIT:
        for _k in range(longest):
            for _ in range(longest):
                total += 1
    return total


def hang_then_deep(data: bytes) -> None:
    """An unrelated infinite loop on an easy input, and a deeper planted crash."""
    if data.startswith(b"{") and len(data) > 3:
        while True:  # not the bug anyone is after; it must not end the search
            pass
    if data[:4] == b"DEEP":
        if data[4:8] == b"BUG!":
            raise RuntimeError("the deeper bug")


def shallow_then_deep(data: bytes) -> None:
    """A shallow crash a third of all inputs hit, and a deeper one in the same function."""
    if len(data) > 1 and data[-1] % 3 == 0:
        raise IndexError("shallow and frequent")
    if data[:4] == b"KEY=":
        if data[4:8] == b"4242":
            raise ZeroDivisionError("the deeper bug")


def toml_nesting(data: bytes) -> object:
    """The real tomllib: deep nesting ends in RecursionError, a panic."""
    return tomllib.loads(data.decode("utf-8", "surrogateescape"))
