"""Branch and line feedback on ``sys.monitoring`` (PEP 669).

Design
------
The hot path must cost nothing once coverage has saturated, so every callback
only records and, wherever it can, returns ``DISABLE``: an item already seen then
never fires again in this process.

* ``PY_START`` fires once per code object.  The scope is decided there, once: code
  from the target's ``sources`` gets local ``LINE`` and branch events; every code
  object gets ``DISABLE`` for ``PY_START``, so out-of-scope code costs one callback
  in the whole campaign.
* ``LINE`` records ``(code, line)`` and disables itself.
* Branches on 3.14+: ``BRANCH_LEFT`` and ``BRANCH_RIGHT`` are separate events, so
  each direction records its edge and disables only itself.
* Branches on 3.12/3.13: there is one ``BRANCH`` event per site, and a ``DISABLE``
  returned for it silences *both* directions.  Disabling on the first direction
  would lose the other edge forever, so a site is retired only once both
  destinations have been seen.  A site that keeps going one way would then cost a
  callback on every execution, so after :data:`ONE_WAY_CAP` hits with nothing new
  it is retired anyway, and at case :data:`RESTART_EVERY` and every doubling of it
  the campaign calls ``restart_events()`` so retired one-way sites get another
  chance to show their other direction.  Restarts happen at fixed case indices,
  keeping the schedule deterministic.  (The line of a branch's other direction
  usually fires its own ``LINE`` event, so a retired site rarely hides anything.)

Items are keyed by a stable per-code key (a hash of file, qualified name and first
line), so keys mean the same thing in a restarted worker.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any, Hashable, Iterable

from assay.errors import MonitoringUnavailable
from assay.feedback.scope import Scope

#: Hits of a branch site that keep going the one direction already seen before the
#: site is retired (re-armed at the next restart).
ONE_WAY_CAP = 32
#: First case index at which ``restart_events()`` re-arms retired events; later
#: restarts come at every doubling of it (8192, 16384, 32768, ...), so their cost
#: fades as coverage saturates.
RESTART_EVERY = 8192
#: Tool ids tried in order; 0, 1, 2 and 5 are the debugger, coverage, profiler and
#: optimizer ids PEP 669 reserves by convention, so they are last resorts.
TOOL_ID_PREFERENCE = (3, 4, 2, 5, 0, 1)

_TOOL_NAME = "assay"


def monitoring() -> Any:
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        raise MonitoringUnavailable(
            f"sys.monitoring (PEP 669) is missing in Python {sys.version.split()[0]}; "
            "assay needs CPython 3.12 or newer"
        )
    return mon


def claim_tool_id(name: str) -> int:
    """Take the first free ``sys.monitoring`` tool id of :data:`TOOL_ID_PREFERENCE`."""
    mon = monitoring()
    for tool in TOOL_ID_PREFERENCE:
        if mon.get_tool(tool) is None:
            mon.use_tool_id(tool, name)
            return tool
    raise MonitoringUnavailable("every sys.monitoring tool id is taken; stop another tool and retry")


def release_tool_id(tool: int, codes: Iterable[Any], events: Iterable[int]) -> None:
    """Undo :func:`claim_tool_id`: no events, local or global, no callbacks, the id free."""
    mon = monitoring()
    mon.set_events(tool, 0)
    for code in codes:
        mon.set_local_events(tool, code, 0)
    for event in events:
        mon.register_callback(tool, event, None)
    mon.free_tool_id(tool)


def has_split_branches() -> bool:
    """True where ``BRANCH_LEFT``/``BRANCH_RIGHT`` exist (3.14+)."""
    return hasattr(monitoring().events, "BRANCH_LEFT")


class SysmonFeedback:
    """Line and branch-edge feedback for code in a :class:`Scope`."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.seen: set[Hashable] = set()
        self.new: list[Hashable] = []
        self.paused = False
        self.lines = 0
        self.edges = 0
        self.tool_id: int | None = None
        self._code_keys: dict[int, int] = {}
        self._code_refs: list[Any] = []  # keeps ids in _code_keys from being reused
        self._site_dirs: dict[tuple[int, int], int] = {}
        self._site_hits: dict[tuple[int, int], int] = {}

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        mon = monitoring()
        self.tool_id = claim_tool_id(_TOOL_NAME)
        ev = mon.events
        mon.register_callback(self.tool_id, ev.PY_START, self._on_start)
        mon.register_callback(self.tool_id, ev.LINE, self._on_line)
        if has_split_branches():
            mon.register_callback(self.tool_id, ev.BRANCH_LEFT, self._on_branch_split)
            mon.register_callback(self.tool_id, ev.BRANCH_RIGHT, self._on_branch_split)
            self._local = ev.LINE | ev.BRANCH_LEFT | ev.BRANCH_RIGHT
        else:
            mon.register_callback(self.tool_id, ev.BRANCH, self._on_branch)
            self._local = ev.LINE | ev.BRANCH
        mon.set_events(self.tool_id, ev.PY_START)

    def stop(self) -> None:
        if self.tool_id is None:
            return
        mon = monitoring()
        tool, self.tool_id = self.tool_id, None
        events = [mon.events.PY_START, mon.events.LINE, mon.events.BRANCH]
        if has_split_branches():
            events += [mon.events.BRANCH_LEFT, mon.events.BRANCH_RIGHT]
        release_tool_id(tool, self._code_refs, events)

    # -- engine interface ----------------------------------------------------------
    def take_new(self) -> list[Hashable]:
        new, self.new = self.new, []
        return new

    def pause(self, paused: bool) -> None:
        self.paused = paused

    def mark_seen(self, keys: list[Hashable]) -> None:
        for key in keys:
            if not (isinstance(key, tuple) and key and isinstance(key[0], int)):
                continue  # a semantic feature, not ours
            if key not in self.seen:
                self.seen.add(key)
                self._count(key)
                if len(key) == 3:
                    site = (key[0], key[1])
                    self._site_dirs[site] = self._site_dirs.get(site, 0) + 1

    def maybe_restart(self, case_index: int) -> None:
        if self.tool_id is None or has_split_branches():
            return  # with BRANCH_LEFT/RIGHT nothing is retired early, so nothing to re-arm
        q, r = divmod(case_index, RESTART_EVERY)
        if case_index and r == 0 and q & (q - 1) == 0:
            self._site_hits.clear()
            monitoring().restart_events()

    def counts(self) -> dict[str, int]:
        return {"edges": self.edges, "lines": self.lines}

    # -- callbacks (hot path: record and return) ---------------------------------------
    def _on_start(self, code: Any, offset: int) -> Any:
        mon = sys.monitoring
        if id(code) not in self._code_keys and self.scope.contains(code.co_filename):
            ident = f"{code.co_filename}\0{code.co_qualname}\0{code.co_firstlineno}".encode()
            self._code_keys[id(code)] = int.from_bytes(hashlib.blake2b(ident, digest_size=8).digest(), "big")
            self._code_refs.append(code)
            mon.set_local_events(self.tool_id, code, self._local)
        return mon.DISABLE

    def _on_line(self, code: Any, line: int) -> Any:
        if self.paused:
            return None
        key = (self._code_keys[id(code)], line)
        if key not in self.seen:
            self.seen.add(key)
            self.new.append(key)
            self.lines += 1
        return sys.monitoring.DISABLE

    def _on_branch_split(self, code: Any, src: int, dst: int) -> Any:
        if self.paused:
            return None
        key = (self._code_keys[id(code)], src, dst)
        if key not in self.seen:
            self.seen.add(key)
            self.new.append(key)
            self.edges += 1
        return sys.monitoring.DISABLE

    def _on_branch(self, code: Any, src: int, dst: int) -> Any:
        if self.paused:
            return None
        ck = self._code_keys[id(code)]
        key = (ck, src, dst)
        site = (ck, src)
        if key not in self.seen:
            self.seen.add(key)
            self.new.append(key)
            self.edges += 1
            dirs = self._site_dirs.get(site, 0) + 1
            self._site_dirs[site] = dirs
            self._site_hits[site] = 0
            return sys.monitoring.DISABLE if dirs >= 2 else None
        if self._site_dirs.get(site, 0) >= 2:
            return sys.monitoring.DISABLE
        hits = self._site_hits.get(site, 0) + 1
        self._site_hits[site] = hits
        return sys.monitoring.DISABLE if hits >= ONE_WAY_CAP else None

    def _count(self, key: Hashable) -> None:
        if len(key) == 3:  # type: ignore[arg-type]
            self.edges += 1
        else:
            self.lines += 1
