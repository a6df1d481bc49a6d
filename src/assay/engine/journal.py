"""The worker's journal: the active input, in memory shared with the parent.

The worker writes the input it is about to run (and where it is in the schedule)
into an anonymous shared mapping before every execution: a memory copy, not a
file write.  When the worker dies, the parent reads the exact input that killed
it from here; while it lives, the parent reads the case start time to enforce
timeouts.
"""

from __future__ import annotations

import mmap
import struct
import time

#: Header: state, phase, position, sub, start time, input length, digest chain,
#: time limit of this run (0: the target's timeout).
_HEADER = struct.Struct("<BBxxxxxxqqdQ32sd")
#: The parent's interrupt request: the (position, start time) it means to stop.
_REQUEST = struct.Struct("<qd")
_REQUEST_AT = _HEADER.size
_DATA_AT = _HEADER.size + _REQUEST.size
#: For the worker's hot loop, which inlines :meth:`Journal.begin` (same layout, same order).
HEADER, DATA_AT = _HEADER, _DATA_AT
#: The stray slot (a process the target forked that came back into assay's loop):
#: state (0 empty, 1 being written, 2 ready), position, key length, input length.
_STRAY = struct.Struct("<BxxxxxxxqII")
#: Longest key kept in the stray slot.
STRAY_KEY = 256

IDLE, RUNNING = 0, 1
#: Phases of the schedule.
INITIAL, GENERATED = 0, 1
#: ``sub``: 0 = the scheduled case itself, 1 = a replay or shrink candidate of it.
CASE, DERIVED = 0, 1


class Journal:
    """A fixed-size shared record of the worker's current execution."""

    def __init__(self, max_len: int) -> None:
        # Room beyond max_len for derived runs (slow-input pumping grows inputs 4x).
        self.capacity = 4 * max_len + 64
        self.stray_at = _DATA_AT + self.capacity
        size = self.stray_at + _STRAY.size + STRAY_KEY + self.capacity
        self.mem = mmap.mmap(-1, size)  # MAP_SHARED: survives fork
        self.chain = bytes(32)

    def begin(self, phase: int, position: int, sub: int, data: bytes, limit: float = 0.0) -> float:
        """Publish the input about to run; returns its start time (``time.monotonic()``)."""
        n = min(len(data), self.capacity)
        self.mem[_DATA_AT : _DATA_AT + n] = data[:n]
        # Fields first, the RUNNING flag last: a parent that sees RUNNING also sees
        # this case's start time, never the previous one's.
        started = time.monotonic()
        _HEADER.pack_into(self.mem, 0, IDLE, phase, position, sub, started, n, self.chain, limit)
        self.mem[0] = RUNNING
        return started

    def reset(self) -> None:
        """Zero the header (start time 0.0 means no input was begun)."""
        self.mem[:_DATA_AT] = bytes(_DATA_AT)

    def end(self) -> None:
        self.mem[0] = IDLE

    def read(self) -> tuple[int, int, int, int, float, bytes, bytes]:
        """(state, phase, position, sub, started, input, chain)."""
        state, phase, position, sub, started, n, chain, _limit = _HEADER.unpack_from(self.mem, 0)
        data = bytes(self.mem[_DATA_AT : _DATA_AT + min(n, self.capacity)])
        return state, phase, position, sub, started, data, chain

    def state(self) -> tuple[int, int, float, float]:
        """(state, position, started, limit) without copying the input."""
        state, _phase, position, _sub, started, _n, _chain, limit = _HEADER.unpack_from(self.mem, 0)
        return state, position, started, limit

    def request_interrupt(self, position: int, started: float) -> None:
        """Name the case the parent's next ``SIGUSR1`` is meant for."""
        _REQUEST.pack_into(self.mem, _REQUEST_AT, position, started)

    def interrupt_wanted(self) -> bool:
        """True if the running case is the one the parent asked to interrupt."""
        state, _phase, position, _sub, started, _n, _chain, _limit = _HEADER.unpack_from(self.mem, 0)
        return state == RUNNING and _REQUEST.unpack_from(self.mem, _REQUEST_AT) == (position, started)

    def add_stray(self, data: bytes, key: str) -> None:
        """Called in a stray process: record it (the first one of a worker lifetime wins)."""
        if self.mem[self.stray_at] != 0:
            return
        self.mem[self.stray_at] = 1
        _state, _phase, position, *_ = _HEADER.unpack_from(self.mem, 0)
        k = key.encode("utf-8", "replace")[:STRAY_KEY]
        n = min(len(data), self.capacity)
        at = self.stray_at + _STRAY.size
        self.mem[at : at + len(k)] = k
        self.mem[at + STRAY_KEY : at + STRAY_KEY + n] = data[:n]
        _STRAY.pack_into(self.mem, self.stray_at, 1, position, len(k), n)
        self.mem[self.stray_at] = 2

    def take_strays(self) -> list[tuple[int, bytes, str]]:
        """Parent side: the recorded stray, as [(position, input, key)], and clear the slot."""
        if self.mem[self.stray_at] != 2:
            return []
        _s, position, klen, n = _STRAY.unpack_from(self.mem, self.stray_at)
        at = self.stray_at + _STRAY.size
        key = bytes(self.mem[at : at + klen]).decode("utf-8", "replace")
        data = bytes(self.mem[at + STRAY_KEY : at + STRAY_KEY + n])
        self.mem[self.stray_at] = 0
        return [(position, data, key)]

    def close(self) -> None:
        self.mem.close()
