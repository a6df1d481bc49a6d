"""Strict deep equality shared by the round-trip examples (not a target file)."""

from __future__ import annotations

import datetime
import math


def same_value(a: object, b: object, *, ordered_keys: bool) -> bool:
    """Deep equality with types compared and NaN equal to NaN.

    ``ordered_keys`` also compares the order of dict keys (JSON keeps it).  Aware
    datetimes and times must also agree on their UTC offset.  Iterative, because
    accepted documents can be nested deeper than Python's recursion limit allows
    a recursive comparison to go.
    """
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if not ((math.isnan(x) and math.isnan(y)) or x == y):  # type: ignore[arg-type]
                return False
        elif isinstance(x, dict):
            same_keys = list(x) == list(y) if ordered_keys else x.keys() == y.keys()  # type: ignore[union-attr]
            if not same_keys:
                return False
            stack.extend((x[k], y[k]) for k in x)  # type: ignore[index]
        elif isinstance(x, list):
            if len(x) != len(y):  # type: ignore[arg-type]
                return False
            stack.extend(zip(x, y))  # type: ignore[arg-type]
        elif isinstance(x, (datetime.datetime, datetime.time)):
            if not (x == y and x.utcoffset() == y.utcoffset()):  # type: ignore[union-attr]
                return False
        elif x != y:
            return False
    return True
