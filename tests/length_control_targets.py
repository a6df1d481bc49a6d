"""A target for the campaign test of tests/test_length_control.py (planted): its coverage
needs no more than two bytes, whatever the input's length.  It appends the length of every
input it runs to the file descriptor in ``LOG`` (opened by the test before the campaign forks its
worker: the sandbox would refuse opening a file from the target).
"""

from __future__ import annotations

import os

LOG: list[int] = []


def _log(data: bytes) -> None:
    if LOG:
        os.write(LOG[0], len(data).to_bytes(4, "little"))


def short_switch(data: bytes) -> int:
    """Everything it does depends on the first two bytes: length never pays."""
    _log(data)
    if not data:
        return 0
    head = data[0]
    if head < 64:
        return 1 if len(data) > 1 and data[1] & 1 else 2
    if head < 128:
        return 3 if len(data) > 1 and data[1] & 2 else 4
    return 5
