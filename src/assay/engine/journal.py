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

#: Header: state, phase, position, sub, start time, input length, digest chain.
_HEADER = struct.Struct("<BBxxxxxxqqdQ32s")

IDLE, RUNNING = 0, 1
#: Phases of the schedule.
INITIAL, GENERATED = 0, 1
#: ``sub``: 0 = the scheduled case itself, 1 = a replay or shrink candidate of it.
CASE, DERIVED = 0, 1


class Journal:
    """A fixed-size shared record of the worker's current execution."""

    def __init__(self, max_len: int) -> None:
        self.capacity = max_len
        self.mem = mmap.mmap(-1, _HEADER.size + max_len)  # MAP_SHARED: survives fork
        self.chain = bytes(32)

    def begin(self, phase: int, position: int, sub: int, data: bytes) -> None:
        n = len(data)
        self.mem[_HEADER.size : _HEADER.size + n] = data
        _HEADER.pack_into(self.mem, 0, RUNNING, phase, position, sub, time.monotonic(), n, self.chain)

    def reset(self) -> None:
        """Zero the header (start time 0.0 means no input was begun)."""
        self.mem[: _HEADER.size] = bytes(_HEADER.size)

    def end(self) -> None:
        self.mem[0] = IDLE

    def read(self) -> tuple[int, int, int, int, float, bytes, bytes]:
        """(state, phase, position, sub, started, input, chain)."""
        state, phase, position, sub, started, n, chain = _HEADER.unpack_from(self.mem, 0)
        data = bytes(self.mem[_HEADER.size : _HEADER.size + min(n, self.capacity)])
        return state, phase, position, sub, started, data, chain

    def state(self) -> tuple[int, int, float]:
        """(state, position, started) without copying the input."""
        state, _phase, position, _sub, started, _n, _chain = _HEADER.unpack_from(self.mem, 0)
        return state, position, started

    def close(self) -> None:
        self.mem.close()
