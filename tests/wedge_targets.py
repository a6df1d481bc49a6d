"""Hangs whose stack at a timeout is chance: each loop calls helpers in turn.

Where a timeout catches such a loop (in ``_step_up``, in ``_step_down``, or in the
loop's own line) depends on the moment; the frames every moment shares are the
loop's (tests/test_wedges.py).
"""

from __future__ import annotations


def _step_up(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _step_down(n: int) -> int:
    total = 0
    for i in range(n):
        total -= i
    return total


def wandering_hang(data: bytes) -> None:
    """Loops forever on inputs starting with ``W``, its time split between two helpers."""
    if data[:1] == b"W":
        while True:
            _step_up(40)
            _step_down(40)


def wandering_hang_swallow(data: bytes) -> None:
    """:func:`wandering_hang` that swallows the soft timeout: only the parent's kill ends it."""
    if data[:1] == b"S":
        while True:
            try:
                while True:
                    _step_up(40)
                    _step_down(40)
            except BaseException:  # noqa: BLE001 - the point of this target
                pass


def _spin(data: bytes) -> None:
    while True:
        _step_up(len(data) + 20)


def hang_in_helper(data: bytes) -> None:
    """The loop is in a helper: its frame is held too."""
    if data[:1] == b"H":
        _spin(data)


def finishes(data: bytes) -> int:
    """Not a hang: far fewer line events than the first sample."""
    return _step_up(1000)


def panics_unless_short(data: bytes) -> None:
    """A ``ValueError`` on inputs starting with ``P`` of at least 4 bytes; shorter ones hang
    (:func:`wandering_hang`): shrinking the panic's input runs into the soft timeout."""
    if data[:1] == b"P":
        if len(data) < 4:
            wandering_hang(b"W")
        raise ValueError("long enough")
