"""Planted targets for crash exploration: a second bug behind the first one's trigger."""

from __future__ import annotations


def bug_behind_bug(data: bytes) -> None:
    """Byte 4 == ``A`` after a ``REC:`` header is the first bug; the second needs ``AXYZ`` there.

    Every input that reaches the second bug's comparison triggers the first unless it
    passes that comparison: the second is one replacement away from a crashing input,
    and many away from any input that does not crash.
    """
    if data[:4] != b"REC:":
        return
    if data[4:5] == b"A":
        if data[5:8] == b"XYZ":
            raise ZeroDivisionError("the second bug, behind the first")
        raise KeyError("the first bug, on most inputs that get here")
