"""Targets for the analysis budget's tests (tests/test_analysis_budget.py).

:func:`slow_scan` is quadratic on some inputs of ``S`` only and cheap on every
other input; its inner loop calls one of two helpers in turn, so a single stack
of a slow run lands in either helper or in the loop itself.
"""

from __future__ import annotations


def _even(x: int) -> int:
    return x + 1


def _odd(x: int) -> int:
    return x - 1


def _scan(data: bytes) -> int:
    total = 0
    n = len(data)
    for i in range(n):
        for j in range(i, n):
            total += _even(j) if (i + j) % 2 else _odd(j)
    return total


#: Inputs of ``S`` only whose length is a multiple of this are scanned in quadratic time.
SLOW_UNIT = 25


def slow_scan(data: bytes) -> int:
    """Quadratic in the length of an input of ``S`` only, :data:`SLOW_UNIT` bytes a multiple; cheap otherwise.

    So the slow seed's children are rarely slow (a mutation that keeps every byte
    an ``S`` rarely keeps the length a multiple), while the seed grown or shrunk as
    confirmation does (2x, 4x; halves, quarters, eighths when a count saturates) is.
    """
    if not data or len(data) % SLOW_UNIT or data.strip(b"S"):
        return len(data)
    return _scan(data)
