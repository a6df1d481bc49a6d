"""Branch and line feedback on ``sys.monitoring`` (PEP 669).

Design
------
The hot path must cost nothing once coverage has saturated, so every callback
only records and, wherever it can, returns ``DISABLE``: an item already seen then
never fires again in this process.

* ``PY_START`` fires once per code object.  The scope is decided there, once: code
  from the target's ``sources`` gets local ``LINE`` and branch events; every code
  object gets ``DISABLE`` for ``PY_START``, so out-of-scope code costs one callback
  in the whole campaign.  A paused call (an analysis) decides out-of-scope code
  and the comparison twins the same way; in-scope code waits for an unpaused one.
* ``LINE`` records ``(code, line)`` and disables itself (on 3.12/3.13 the first
  ``INSTRUCTION`` event of a line does this instead, see below).
* Branches on 3.14+: ``BRANCH_LEFT`` and ``BRANCH_RIGHT`` are separate events, so
  each direction records its edge and disables only itself.
* Branches on 3.12/3.13: there is one ``BRANCH`` event per site, and a ``DISABLE``
  returned for it silences *both* directions.  So the edges are split by how they
  can be observed (:mod:`assay.feedback.branches`, worked out once per code
  object from its bytecode):

  - a direction whose destination instruction has no other predecessor is
    recorded by that instruction's ``INSTRUCTION`` event, which fires the first
    time the instruction runs (which is the first time the edge is taken) and
    then disables itself;
  - a direction into a *join* (the end of an ``if`` without ``else``, the exit of
    an ``and``/``or`` or a loop; also a one-instruction destination such as a
    ``return x``, see :mod:`assay.feedback.branches`) is first given an
    instruction of its own: the live functions run *split* code
    (:mod:`assay.feedback.edgesplit`), in which the direction goes through a
    trampoline or inserted ``NOP`` instructions: a direction of the first kind.
    What the split leaves (code it cannot reach, such as a lambda kept only in a
    container, or imported after the feedback started) is
    recorded by ``BRANCH``, and the site stays armed until every
    such direction has been seen.

  Lines then come from the same ``INSTRUCTION`` events (each instruction records
  its line the first time it runs) instead of ``LINE``: on 3.12 an instruction
  skips its ``INSTRUCTION`` event whenever a ``LINE`` event fires there.  Every
  in-scope instruction costs one callback, once, in the whole campaign.

  A site whose unseen directions are all observable by instruction is disabled
  at its first hit: its other direction is recorded the first time it is taken,
  at any case index, at no saturated cost.  A site still waiting for a join
  direction the split left costs a callback per execution, so after
  :data:`JOIN_CAP` one-way hits it is retired, and re-armed (``BRANCH`` only,
  that code object only) as soon as its code object records anything new: a new
  line or edge there is the sign that inputs now reach new states of that
  function.  (An earlier design
  retired *every* one-way site after 32 hits and re-armed everything only at case
  8192, 16384, ...; a conditional expression's direction, which shows no new
  line, then stayed unseen for thousands of cases.  ``split_by_instruction =
  False`` still runs that design.)

  3.13 has the same single ``BRANCH`` event, so the same split applies.  There an
  exhausted ``FOR_ITER`` goes on past ``END_FOR`` and the ``POP_TOP`` after it
  (3.12: past ``END_FOR``), and ``BRANCH`` reports that offset (checked on 3.13.0).
  Whether ``LINE`` still hides ``INSTRUCTION`` events there is unverified (the
  split avoids ``LINE`` either way).

Items are keyed by a stable per-code key (a hash of file, qualified name and first
line), so keys mean the same thing in a restarted worker.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Collection, Hashable, Iterable
from typing import Any

from assay.core.errors import MonitoringUnavailable
from assay.feedback import edgesplit
from assay.feedback.branches import cached_layout
from assay.feedback.protocol import TWIN_MARK
from assay.feedback.scope import Scope
from assay.gen.accelerated import object_id  # id() without its audit event: the callbacks use it on every event

#: One-way hits of a branch site whose unseen direction runs into a join (so only
#: ``BRANCH`` could report it) before the site is retired; it is re-armed as soon
#: as its code object shows anything new.
JOIN_CAP = 64
#: Without the instruction split: the first case index at which retired events are
#: re-armed (``restart_events()``), and then every doubling of it.
RESTART_EVERY = 8192
#: With ``split_by_instruction`` off (the design before the instruction split),
#: one-way hits of any branch site before it is retired.
ONE_WAY_CAP = 32
#: Tool ids tried in order; 0, 1, 2 and 5 are the debugger, coverage, profiler and
#: optimizer ids PEP 669 reserves by convention, so they are last resorts.
TOOL_ID_PREFERENCE = (3, 4, 2, 5, 0, 1)

_TOOL_NAME = "assay"
_NO_JOINS: dict = {}


def monitoring() -> Any:
    mon = getattr(sys, "monitoring", None)
    if mon is None:
        raise MonitoringUnavailable(
            f"sys.monitoring (PEP 669) is missing in Python {sys.version.split()[0]}; assay needs CPython 3.12 or newer"
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


def code_key(code: Any) -> int:
    """The stable key of a code object in every line and edge key (the same in every process)."""
    ident = f"{code.co_filename}\0{code.co_qualname}\0{code.co_firstlineno}".encode()
    return int.from_bytes(hashlib.blake2b(ident, digest_size=8).digest(), "big")


def has_split_branches() -> bool:
    """True where ``BRANCH_LEFT``/``BRANCH_RIGHT`` exist (3.14+)."""
    return hasattr(monitoring().events, "BRANCH_LEFT")


class SysmonFeedback:
    """Line and branch-edge feedback for code in a :class:`Scope`."""

    #: 3.12/3.13: record branch directions into a single-predecessor instruction
    #: through ``INSTRUCTION`` events (see the module docstring).  A subclass that
    #: re-arms everything per input sets this off to spare the per-instruction burst.
    split_by_instruction = True
    #: Re-arm a code object's retired branch sites when it records something new.
    rearm_on_news = True
    #: 3.12/3.13: run split code (:mod:`assay.feedback.edgesplit`), so that a branch
    #: direction into a join has an instruction of its own.  Every process measuring
    #: the same campaign's keys must agree on this.
    split_edges = True

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
        #: id(code) -> {instruction offset: the line and edge keys its first run records}
        self._ins_keys: dict[int, dict[int, tuple[tuple[int, ...], ...]]] = {}
        #: id(code) -> {join offset: (its predecessors, the sites branching into it)}
        self._join_at: dict[int, dict[int, tuple[tuple[int, ...], frozenset[int]]]] = {}
        #: id(code) -> offsets that have run (unpaused)
        self._ran: dict[int, set[int]] = {}
        #: id(code) -> {src: edge keys only BRANCH can report}
        self._joins: dict[int, dict[int, tuple[tuple[int, int, int], ...]]] = {}
        #: code key -> (code, its retired sites); re-armed when that code shows news
        self._retired: dict[int, tuple[Any, list[tuple[int, int]]]] = {}
        self._rearm: set[int] = set()
        self._by_instruction = False
        self._split: edgesplit.SplitCode | None = None

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        mon = monitoring()
        self._by_instruction = self.split_by_instruction and not has_split_branches()
        self.tool_id = claim_tool_id(_TOOL_NAME)
        if self.split_edges and not has_split_branches() and edgesplit.enabled():
            self._split = edgesplit.SplitCode(self.scope.eager().contains)
            self._split.install()
        ev = mon.events
        mon.register_callback(self.tool_id, ev.PY_START, self._on_start)
        mon.register_callback(self.tool_id, ev.LINE, self._on_line)
        if has_split_branches():
            mon.register_callback(self.tool_id, ev.BRANCH_LEFT, self._on_branch_split)
            mon.register_callback(self.tool_id, ev.BRANCH_RIGHT, self._on_branch_split)
            self._local = ev.LINE | ev.BRANCH_LEFT | ev.BRANCH_RIGHT
        elif self._by_instruction:
            mon.register_callback(self.tool_id, ev.BRANCH, self._on_branch)
            mon.register_callback(self.tool_id, ev.INSTRUCTION, self._on_instruction)
            self._local = ev.INSTRUCTION | ev.BRANCH
        else:
            mon.register_callback(self.tool_id, ev.BRANCH, self._on_branch)
            self._local = ev.LINE | ev.BRANCH
        mon.set_events(self.tool_id, ev.PY_START)

    def stop(self) -> None:
        if self.tool_id is None:
            return
        if self._split is not None:
            self._split.remove()
        self.detach()

    def detach(self) -> None:
        """Stop recording and release the tool id, but leave the split code live.

        For a child forked from a recording process that records with a feedback of its
        own (:mod:`assay.engine.trim`): its keys must be those of the same split code.
        """
        if self.tool_id is None:
            return
        mon = monitoring()
        tool, self.tool_id, self._split = self.tool_id, None, None
        events = [mon.events.PY_START, mon.events.LINE, mon.events.BRANCH, mon.events.INSTRUCTION]
        if has_split_branches():
            events += [mon.events.BRANCH_LEFT, mon.events.BRANCH_RIGHT]
        release_tool_id(tool, self._code_refs, events)

    # -- engine interface ----------------------------------------------------------
    def take_new(self) -> list[Hashable]:
        new, self.new = self.new, []
        if self._rearm:
            self._rearm_branches()
        return new

    def _rearm_branches(self) -> None:
        """Re-arm ``BRANCH`` in each code object with news that has retired sites."""
        mon = sys.monitoring
        branch = mon.events.BRANCH
        for ck in self._rearm:
            code, sites = self._retired.pop(ck)
            for site in sites:
                self._site_hits.pop(site, None)
            if self.tool_id is not None:
                mon.set_local_events(self.tool_id, code, self._local & ~branch)
                mon.set_local_events(self.tool_id, code, self._local)
        self._rearm.clear()

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
        """Re-arm retired events on a schedule (only without the instruction split).

        With the split nothing waits for a schedule: retired join sites are re-armed
        by news in their own code object.
        """
        if self.tool_id is None or self._by_instruction or has_split_branches():
            return
        q, r = divmod(case_index, RESTART_EVERY)
        if case_index and r == 0 and q & (q - 1) == 0:
            self._site_hits.clear()
            monitoring().restart_events()

    def counts(self) -> dict[str, int]:
        return {"edges": self.edges, "lines": self.lines}

    @property
    def started(self) -> Collection[int]:
        """The ``id()`` of every in-scope code object that has started in an unpaused call
        (each kept alive, so no id is reused); it only grows."""
        return self._code_keys.keys()

    # -- callbacks (hot path: record and return) ---------------------------------------
    def _on_start(self, code: Any, offset: int) -> Any:
        mon = sys.monitoring
        if self.paused:
            # In-scope code is decided at an unpaused call, so code that only ever
            # runs paused never gets local events (they would fire on every line it
            # runs).  Everything else is decided now, as an unpaused call would: out
            # of scope (assay's own recorders, called once per comparison in an
            # analysis) and the comparison twins; asking again costs a callback per
            # call of it for the whole campaign.
            if TWIN_MARK in code.co_names or not self.scope.contains(code.co_filename):
                return mon.DISABLE
            return None
        if object_id(code) not in self._code_keys and self.scope.contains(code.co_filename):
            ck = code_key(code)
            self._code_keys[object_id(code)] = ck
            self._code_refs.append(code)
            if self._by_instruction:
                self._layout(code, ck)
            mon.set_local_events(self.tool_id, code, self._local)  # type: ignore[arg-type]  # set while installed
        return mon.DISABLE

    def _layout(self, code: Any, ck: int) -> None:
        """What each instruction's first execution records: its line, and maybe an edge.

        Lines come from ``INSTRUCTION`` events too, not ``LINE``: on 3.12 an
        instruction that starts a line skips its ``INSTRUCTION`` event while the
        ``LINE`` event there is armed, which would hide edges into line starts.
        """
        layout = cached_layout(code)
        keys: dict[int, tuple[tuple[int, ...], ...]] = {}
        for start, end, line in code.co_lines():
            if line is not None:
                for off in range(start, end, 2):
                    keys[off] = ((ck, line),)
        for off, (src, dst) in layout.watch.items():
            keys[off] = (*keys.get(off, ()), (ck, src, dst))
        cid = object_id(code)
        self._ins_keys[cid] = keys
        self._join_at[cid] = layout.join_preds
        self._ran[cid] = set()
        self._joins[cid] = {src: tuple((ck, src, dst) for dst in dsts) for src, dsts in layout.joins.items()}

    def _on_line(self, code: Any, line: int) -> Any:
        if self.paused:
            return None
        key = (self._code_keys[object_id(code)], line)
        if key not in self.seen:
            self._new_line(key)
        return sys.monitoring.DISABLE

    def _new_line(self, key: tuple[int, int]) -> None:
        self.seen.add(key)
        self.new.append(key)
        self.lines += 1
        if key[0] in self._retired:
            self._rearm.add(key[0])

    def _on_branch_split(self, code: Any, src: int, dst: int) -> Any:
        if self.paused:
            return None
        key = (self._code_keys[object_id(code)], src, dst)
        if key not in self.seen:
            self.seen.add(key)
            self.new.append(key)
            self.edges += 1
        return sys.monitoring.DISABLE

    def _on_instruction(self, code: Any, offset: int) -> Any:
        if self.paused:
            return None
        cid = object_id(code)
        keys = self._ins_keys[cid].get(offset)
        if keys is not None:
            seen = self.seen
            for key in keys:
                if key not in seen:
                    if len(key) == 3:
                        self._new_edge(key)
                    else:
                        self._new_line(key)  # type: ignore[arg-type]  # a line key: two ints
        ran = self._ran[cid]
        ran.add(offset)
        join = self._join_at[cid].get(offset)
        if join is not None:
            # A join's first run: if only one predecessor has ever run, that edge it was.
            came = [p for p in join[0] if p in ran]
            if len(came) == 1 and came[0] in join[1]:
                key = (self._code_keys[cid], came[0], offset)
                if key not in self.seen:
                    self._new_edge(key)
        return sys.monitoring.DISABLE

    def _on_branch(self, code: Any, src: int, dst: int) -> Any:
        if self.paused:
            return None
        cid = object_id(code)
        ck = self._code_keys[cid]
        key = (ck, src, dst)
        if key not in self.seen:
            self._new_edge(key)
        joins = self._joins.get(cid, _NO_JOINS).get(src)
        site = (ck, src)
        if joins is None:  # a site the layout does not know: wait for both directions
            if self._site_dirs.get(site, 0) >= 2:
                return sys.monitoring.DISABLE
        else:
            seen = self.seen
            for join in joins:
                if join not in seen:
                    break
            else:
                return sys.monitoring.DISABLE
        hits = self._site_hits.get(site, 0) + 1
        self._site_hits[site] = hits
        if hits < (JOIN_CAP if self._by_instruction else ONE_WAY_CAP):
            return None
        if self.rearm_on_news:
            self._retired.setdefault(ck, (code, []))[1].append(site)
        return sys.monitoring.DISABLE

    def _new_edge(self, key: tuple[int, int, int]) -> None:
        self.seen.add(key)
        self.new.append(key)
        self.edges += 1
        site = (key[0], key[1])
        self._site_dirs[site] = self._site_dirs.get(site, 0) + 1
        if key[0] in self._retired:
            self._rearm.add(key[0])

    def _count(self, key: Hashable) -> None:
        if len(key) == 3:  # type: ignore[arg-type]
            self.edges += 1
        else:
            self.lines += 1
