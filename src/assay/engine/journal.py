"""The worker's journal: the active input, in memory shared with the parent.

The worker writes the input it is about to run (and where it is in the schedule)
into an anonymous shared mapping before every execution: a memory copy, not a
file write.  When the worker dies, the parent reads the exact input that killed
it from here; while it lives, the parent reads the case start time to enforce
timeouts.

The journal also holds the schedule digest (DESIGN.md: a running SHA-256 over the
scheduled inputs), so that it survives a worker that dies.  Each scheduled case
appends its record, ``len(input).to_bytes(4, "big") + input``, to a pending buffer
of :data:`RING` bytes; a record that does not fit folds the buffer into the chain,
``chain = sha256(chain + pending + (the record, if it is longer than the buffer))``,
and the buffer starts again (with the record, if it fits).  The digest of a
schedule is ``sha256(chain + pending)``, or the chain when nothing is pending
(:func:`digest`).  One SHA-256 over ~64 KiB of records instead of one per case:
on a 5 us target with ~90-byte inputs the per-case hash was a few percent of the case.

Two chain slots and two buffers alternate, and the header names the live pair
(``sel``) and the buffer's length (``used``) in the same write as the case's
position, so what the parent reads after any death is consistent: a fold writes
the other pair and the next :meth:`Journal.begin` publishes it.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
import time

#: Header: state, phase, position, sub, start time, input length, time limit of this
#: run (0: the target's timeout), then the digest's pending length and live pair.
_HEADER = struct.Struct("<BBxxxxxxqqdQdQQ")
#: The header's last two fields, ``used`` and ``sel``, on their own (written as a worker starts).
_DIGEST_POS = struct.Struct("<QQ")
_DIGEST_POS_AT = _HEADER.size - _DIGEST_POS.size
#: Bytes of scheduled records hashed at once (see the module docstring).
RING = 1 << 16
#: The parent's interrupt request: the (position, start time) it means to stop.
_REQUEST = struct.Struct("<qd")
_REQUEST_AT = _HEADER.size
_DATA_AT = _HEADER.size + _REQUEST.size
#: The header's ``sub`` field on its own (read by a target that must tell a scheduled case from a rerun of one).
_SUB = struct.Struct("<q")
_SUB_AT = 16
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


def digest(chain: bytes, pending: bytes) -> bytes:
    """The schedule digest of a chain and its pending records (the module docstring)."""
    return hashlib.sha256(chain + pending).digest() if pending else chain


class Journal:
    """A fixed-size shared record of the worker's current execution."""

    def __init__(self, max_len: int, ring: int | None = None) -> None:
        # Room beyond max_len for derived runs (slow-input pumping grows inputs 4x).
        self.capacity = 4 * max_len + 64
        self.stray_at = _DATA_AT + self.capacity
        #: The two chain slots (32 bytes each), then the two pending buffers.
        self.chain_at = self.stray_at + _STRAY.size + STRAY_KEY + self.capacity
        self.ring_at = self.chain_at + 64
        self.ring = ring = RING if ring is None else ring
        self.mem = mmap.mmap(-1, self.ring_at + 2 * ring)  # MAP_SHARED: survives fork
        #: This process's view of the digest: the live pair and its pending length.
        self.sel = self.used = 0

    def start_chain(self, chain: bytes, pending: bytes) -> None:
        """Make (``chain``, ``pending``) the digest so far, as a worker starts."""
        self.sel, self.used = 0, len(pending)
        self.mem[self._chain(0)] = chain
        self.mem[self._pending(0, self.used)] = pending
        _DIGEST_POS.pack_into(self.mem, _DIGEST_POS_AT, self.used, 0)

    def record(self, data: bytes) -> None:
        """Add a scheduled case's input to the digest; the next :meth:`begin` publishes it."""
        rec = len(data).to_bytes(4, "big") + data
        size, sel, used = len(rec), self.sel, self.used
        if used + size > self.ring:
            h = hashlib.sha256(self.mem[self._chain(sel)])
            h.update(self.mem[self._pending(sel, used)])
            if size > self.ring:
                h.update(rec)
            sel, used = 1 - sel, 0
            self.mem[self._chain(sel)] = h.digest()
            if size > self.ring:
                self.sel, self.used = sel, 0
                return
        at = self.ring_at + sel * self.ring + used
        self.mem[at : at + size] = rec
        self.sel, self.used = sel, used + size

    def chain_state(self) -> tuple[bytes, bytes]:
        """(chain, pending) as the header last published them (the parent's side)."""
        used, sel = _DIGEST_POS.unpack_from(self.mem, _DIGEST_POS_AT)
        return self.mem[self._chain(sel)], self.mem[self._pending(sel, used)]

    def _chain(self, sel: int) -> slice:
        return slice(self.chain_at + 32 * sel, self.chain_at + 32 * sel + 32)

    def _pending(self, sel: int, used: int) -> slice:
        return slice(self.ring_at + sel * self.ring, self.ring_at + sel * self.ring + used)

    def begin(self, phase: int, position: int, sub: int, data: bytes, limit: float = 0.0) -> float:
        """Publish the input about to run; returns its start time (``time.monotonic()``)."""
        n = min(len(data), self.capacity)
        self.mem[_DATA_AT : _DATA_AT + n] = data[:n]
        # Fields first, the RUNNING flag last: a parent that sees RUNNING also sees
        # this case's start time, never the previous one's.
        started = time.monotonic()
        _HEADER.pack_into(self.mem, 0, IDLE, phase, position, sub, started, n, limit, self.used, self.sel)
        self.mem[0] = RUNNING
        return started

    def reset(self) -> None:
        """Zero the header (start time 0.0 means no input was begun)."""
        self.mem[:_DATA_AT] = bytes(_DATA_AT)

    def end(self) -> None:
        self.mem[0] = IDLE

    def read(self) -> tuple[int, int, int, int, float, bytes]:
        """(state, phase, position, sub, started, input)."""
        state, phase, position, sub, started, n, *_ = _HEADER.unpack_from(self.mem, 0)
        data = bytes(self.mem[_DATA_AT : _DATA_AT + min(n, self.capacity)])
        return state, phase, position, sub, started, data

    def state(self) -> tuple[int, int, float, float]:
        """(state, position, started, limit) without copying the input."""
        state, _phase, position, _sub, started, _n, limit, *_ = _HEADER.unpack_from(self.mem, 0)
        return state, position, started, limit

    def sub(self) -> int:
        """The running input's ``sub``: :data:`CASE` for a scheduled case, :data:`DERIVED` for a replay or shrink candidate."""
        return _SUB.unpack_from(self.mem, _SUB_AT)[0]

    def request_interrupt(self, position: int, started: float) -> None:
        """Name the case the parent's next ``SIGUSR1`` is meant for."""
        _REQUEST.pack_into(self.mem, _REQUEST_AT, position, started)

    def interrupt_wanted(self) -> bool:
        """True if the running case is the one the parent asked to interrupt."""
        state, _phase, position, _sub, started, *_ = _HEADER.unpack_from(self.mem, 0)
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
