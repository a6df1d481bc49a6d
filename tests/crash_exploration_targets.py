"""Planted targets for crash exploration: a second bug behind the first one's trigger."""

from __future__ import annotations

import os

#: Length of a record: shorter inputs are ignored.
RECORD = 8


def bug_behind_bug(data: bytes) -> None:
    """Byte 4 == ``A`` in an 8-byte ``REC:`` record is the first bug; the second needs ``AXYZ`` there.

    Every input that reaches the second bug's comparison triggers the first unless it
    passes that comparison: the second is one replacement away from a crashing input,
    and many away from any input that does not crash.
    """
    if len(data) < RECORD or data[:4] != b"REC:":
        return
    if data[4:5] == b"A":
        if data[5:8] == b"XYZ":
            raise ZeroDivisionError("the second bug, behind the first")
        raise KeyError("the first bug, on most inputs that get here")


def _header(data: bytes) -> None:
    if data[4:5] == b"A" and data[5:6] != b"X":
        raise KeyError("the first bug: a record of kind A needs its X")


def _body(data: bytes) -> None:
    if data[4:5] == b"A" and data[5:6] == b"X" and data[6:8] == b"YZ":
        raise ZeroDivisionError("the second bug, in the function after the first")


def bug_after_bug(data: bytes) -> None:
    """The first bug in one function, the second in the next one the same inputs reach.

    Only an input that passes the first's trigger region (``A`` then ``X``) reaches the
    second's last comparison; an input one mutation away from it fires the first.
    """
    if len(data) < RECORD or data[:4] != b"REC:":
        return
    _header(data)
    _body(data)


def bug_behind_bug_and_exit(data: bytes) -> None:
    """:func:`bug_behind_bug`, and an input that ends the process (its worker restarts)."""
    if data[:5] == b"REC:B":
        os._exit(3)
    bug_behind_bug(data)
