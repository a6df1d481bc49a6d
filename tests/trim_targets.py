"""Targets for tests/test_trim.py (planted): every feature is reached by an input of a byte or
two, whatever else the input holds, so an entry kept for one is long only by descent."""

from __future__ import annotations


def marks(data: bytes) -> int:
    """Each mark is reached by any input that holds its byte, however long it is."""
    n = 0
    if b"~" in data:
        n += 1
    if b"^" in data:
        n += 2
    if b"|" in data:
        n += 4
    if data[:1] == b"{":
        n += 8
    return n


def field_past_the_end(data: bytes) -> None:
    """A field read past a trimmed entry's end: the entry that reaches it keeps ``OK`` and no more."""
    if data[:2] == b"OK":
        if data[2:6] == b"BUG!":
            raise RuntimeError("the field after the trimmed entry's end")
