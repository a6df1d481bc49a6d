"""The children of differential fuzzing: the original's campaign loop and the mutant's twin.

Everything here runs in forked children of the warm parent; the parent side
(scheduling children, the flake guard, artifacts) is
:mod:`assay.mutant.differential`.

A campaign is a *pair* of processes fed the same input stream.  The **original's
process** runs the schedule with coverage feedback on and the code untouched; the
**twin** (:func:`twin_child`) applies the mutant's patch once, at its start, and
runs each input the original's process sends it.  Each side therefore keeps its
own state: a cache (``functools.lru_cache``, a memo dict) the original filled
cannot answer for the mutant, and the mutant's code runs on every input as it
would in a mutated program.  (Swapping the code in and out around each mutant run
in one process would let the original's cached results hide the mutant.)

Both processes publish the input they are running in their own shared-memory
:class:`~assay.engine.journal.Journal` (the twin as side :data:`MUTANT_SIDE`),
and bound each run by the target's timeout with ``SIGALRM`` (as
:func:`assay.engine.execute.run_input`); a run that ignores it is killed by the
parent, which then reads from the journal which input, and which side, it was.
The one-input replays of the flake guard (:func:`replay_child`) apply the patch
in a fresh child of their own.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe
from typing import Any

from assay.core import observe
from assay.core.target import Target
from assay.core.verdict import Verdict, classify
from assay.engine import execute, isolate, journal as jr, procs
from assay.engine.generate import InputSource
from assay.engine.seeds import case_rng
from assay.engine.shrink import shrink
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from assay.mutant import outcome as oc
from assay.mutant.apply import Patch

#: Journal ``sub`` values: which side of a case is running.
ORIGINAL_SIDE, MUTANT_SIDE = 0, 1
#: Seconds between the parent's looks at a child's journal or pipe.
POLL = 0.05
#: Generated cases between offers to re-arm retired branch events (as the engine's worker).
RESTART_CHECK_EVERY = 64


@dataclass
class SurvivorFuzzPlan:
    """What the original's process needs (inherited through ``fork``); ``twin`` is its connection to the mutant's."""

    target: Target
    sources: list[str]
    strategy: Any
    dictionary: list[bytes]
    initial: list[bytes]
    cseed: int
    cases: int
    deadline: float | None
    journal: jr.Journal
    capture: str
    twin: Connection = field(repr=False, default=None)  # type: ignore[arg-type]
    control: Connection = field(repr=False, default=None)  # type: ignore[arg-type]


def _on_alarm(signum, frame):  # noqa: ARG001
    raise execute.WedgeTimeout()


def install_alarm() -> None:
    """Make ``SIGALRM`` raise :class:`~assay.engine.execute.WedgeTimeout` in this process."""
    signal.signal(signal.SIGALRM, _on_alarm)


def run_once(target: Target, data: bytes, timeout: float) -> tuple[oc.Identity, Verdict | None]:
    """Run ``target`` on ``data`` here: its outcome identity and the engine's verdict.

    The outcome (including rendering the returned value, which may call user
    ``__repr__`` code) is computed under the alarm; the alarm must be installed
    (:func:`install_alarm`).
    """
    sink = observe.FeatureSink()
    previous = observe.activate(sink)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            value = target.fn(data)
        except KeyboardInterrupt:
            raise
        except execute.WedgeTimeout:
            raise
        except BaseException as exc:  # every escape from the target is an outcome
            observe.activate(previous)
            return oc.raised(exc, sink.keys), classify(exc, target.expected)
        observe.activate(previous)
        return oc.returned(value, sink.keys), None
    except execute.WedgeTimeout as exc:
        return oc.wedged(timeout), execute.wedge_verdict(exc, target)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        observe.activate(previous)


def run_mutant(target: Target, patch: Patch, data: bytes, timeout: float) -> tuple[oc.Identity, Verdict | None]:
    """:func:`run_once` with ``patch`` applied, reverted before returning."""
    try:
        patch.apply()
        return run_once(target, data, timeout)
    finally:
        patch.revert()


class TwinLost(Exception):
    """The mutant's process went away (or stopped answering) in the middle of an input."""


def twin_child(target: Target, patch: Patch, journal: jr.Journal, conn: Connection) -> None:
    """The mutant's process: the patch applied once, then every input it is sent, in order.

    Each input is published in ``journal`` (side :data:`MUTANT_SIDE`) while it runs,
    so a death or a hang names it.  Ends when the other end of ``conn`` closes.
    """
    install_alarm()
    broken: tuple[oc.Identity, dict] | None = None
    try:
        patch.apply()
    except Exception as exc:  # noqa: BLE001 - e.g. a rebound module-level value that raises
        what = f"applying the mutant raised {type(exc).__qualname__}: {exc}"
        broken = (oc.died(what), Verdict("crash", f"apply:{type(exc).__qualname__}", what).to_json())
    while True:
        try:
            phase, pos, data = conn.recv()
        except EOFError:
            return
        if broken is not None:
            conn.send(broken)
            continue
        journal.begin(phase, pos, MUTANT_SIDE, data)
        identity, verdict = run_once(target, data, target.timeout)
        journal.end()
        conn.send((identity, verdict.to_json() if verdict else None))


def spawn_twin(target: Target, patch: Patch, journal: jr.Journal, capture: str) -> tuple[int, Connection]:
    """Fork the mutant's process (:func:`twin_child`); (its pid, the client end of its connection).

    The caller passes the client end to the one child that talks to the twin and
    then closes its own copy, so the twin sees end-of-file when that child ends.
    """
    client, server = Pipe(duplex=True)

    def child(writer) -> None:
        writer.close()
        client.close()
        isolate.child_setup(capture, target.rss_limit_mb)
        twin_child(target, patch, journal, server)

    pid, reader = isolate.fork_with_pipe(child)
    reader.close()
    server.close()
    return pid, client


class Twin:
    """The original's side of the connection to the mutant's process."""

    def __init__(self, conn: Connection, wait: float | None = None) -> None:
        self.conn = conn
        self.wait = wait  # seconds to wait for an answer; None: until the process ends

    def run(self, phase: int, pos: int, data: bytes) -> tuple[oc.Identity, dict | None]:
        """The mutant's outcome identity (and verdict as JSON) on ``data``."""
        try:
            self.conn.send((phase, pos, data))
            if self.wait is not None and not self.conn.poll(self.wait):
                raise TwinLost("no answer")
            return self.conn.recv()
        except (EOFError, OSError) as exc:
            raise TwinLost(str(exc)) from None


def campaign_child(plan: SurvivorFuzzPlan, send: Callable[[tuple], None]) -> None:
    """The original's campaign loop (see :mod:`assay.mutant.differential` for the protocol)."""
    isolate.child_setup(plan.capture, plan.target.rss_limit_mb)
    install_alarm()
    feedback = SysmonFeedback(Scope(plan.sources))
    feedback.start()
    try:
        loop = _Loop(plan, feedback, send)
        loop.run()
    finally:
        feedback.stop()
    counts = feedback.counts()
    send(("done", loop.cases, counts.get("edges", 0) + counts.get("lines", 0), loop.chain.hexdigest(), loop.skipped))


class _Loop:
    def __init__(self, plan: SurvivorFuzzPlan, feedback: SysmonFeedback, send: Callable[[tuple], None]) -> None:
        self.plan = plan
        self.feedback = feedback
        self.send = send
        self.twin = Twin(plan.twin)
        self.source = InputSource(plan.target.max_len, plan.dictionary, plan.strategy)
        self.seen: set[Hashable] = set()
        self.cases = 0
        self.skipped = 0
        self.chain = hashlib.sha256()

    def run(self) -> None:
        plan = self.plan
        try:
            for pos, data in enumerate(plan.initial):
                if self.case(jr.INITIAL, pos, data, ["initial"]):
                    return
            for i in range(plan.cases):
                if plan.deadline is not None and time.monotonic() >= plan.deadline:
                    return
                if i % RESTART_CHECK_EVERY == 0:
                    self.feedback.maybe_restart(i)  # re-arms retired branch sites at fixed case indices
                data, ops = self.source.next(case_rng(plan.cseed, i))
                if self.case(jr.GENERATED, i, data, ops):
                    return
        except TwinLost:
            return  # the parent learns from the mutant's journal what happened to it

    def case(self, phase: int, pos: int, data: bytes, ops: list[str]) -> bool:
        """One input on both sides; True when the campaign must stop."""
        plan, journal, timeout = self.plan, self.plan.journal, self.plan.target.timeout
        self.chain.update(len(data).to_bytes(4, "big") + data)
        journal.begin(phase, pos, ORIGINAL_SIDE, data)
        original, _ = run_once(plan.target, data, timeout)
        journal.end()
        new = self.feedback.take_new() if self.feedback.new else []
        if not oc.comparable(original):
            self.skipped += 1  # the original itself hangs or runs out of memory here
            return False
        for key in [*original["features"], ("outcome", original["kind"], original["type"])]:
            if key not in self.seen:
                self.seen.add(key)
                new.append(key)
        if new:
            self.source.add(data)
            if phase == jr.GENERATED:
                self.source.reward(ops)
        mutated, verdict = self.twin.run(phase, pos, data)
        self.cases += 1
        if not oc.comparable(mutated):
            self.send(("infra", phase, pos, data, ops, original, mutated, verdict))
            return True
        if not oc.same(original, mutated):
            self.send(("diff", phase, pos, data, ops, original, mutated, self.cases))
            return plan.control.recv() != "go"
        return False


def shrink_child(
    target: Target,
    twin: Twin,
    data: bytes,
    want: tuple,
    max_cases: int,
    seconds: float,
    structural: Callable[[bytes], Any] | None,
    send: Callable[[tuple], None],
) -> None:
    """Shrink ``data`` keeping its :func:`~assay.mutant.outcome.difference_class`; send the result.

    The original runs here, the mutant in its own process behind ``twin``.
    """
    install_alarm()
    stop_at = time.monotonic() + seconds
    lost = False

    def still_differs(candidate: bytes) -> bool:
        nonlocal lost
        if lost or time.monotonic() > stop_at:
            return False
        original, _ = run_once(target, candidate, target.timeout)
        if not oc.comparable(original):
            return False
        try:
            mutated, _ = twin.run(jr.GENERATED, 0, candidate)
        except TwinLost:
            lost = True
            return False
        return oc.comparable(mutated) and oc.difference_class(original, mutated) == want

    result = shrink(data, still_differs, max_cases, structural)
    send(("shrunk", result.data, result.cases))


def replay_child(target: Target, patch: Patch | None, data: bytes, send: Callable[[Any], None]) -> None:
    """One side of one input in a fresh child: send its outcome identity and verdict."""
    install_alarm()
    if patch is None:
        identity, verdict = run_once(target, data, target.timeout)
    else:
        identity, verdict = run_mutant(target, patch, data, target.timeout)
    send((identity, verdict.to_json() if verdict else None))


@dataclass
class OneShot:
    """What a one-shot child left: its message (or ``None``), exit status, output."""

    message: Any
    status: int
    killed: bool
    output: str


def one_shot(body: Callable[[Callable[[Any], None]], None], rss_limit_mb: int, limit: float) -> OneShot:
    """Fork a child running ``body(send)``; wait at most ``limit`` seconds, then kill it by pid."""
    capture = isolate.new_capture()

    def child(writer) -> None:
        isolate.child_setup(capture, rss_limit_mb)
        body(writer.send)

    pid, reader = isolate.fork_with_pipe(child)
    message, killed, status = None, False, 0
    try:
        deadline = time.monotonic() + limit
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                isolate.kill_with_stack(pid)
                killed = True
                break
            if reader.poll(min(left, POLL)):
                try:
                    message = reader.recv()
                except EOFError:
                    pass
                if isinstance(message, isolate.ChildFailure):
                    message = None  # the child's own code raised: judged by its exit status, as a death
                break
        status = procs.reap_group(pid, kill=killed)  # the child's group (what its target started) ends with it
        return OneShot(message, status, killed, isolate.read_tail(capture))
    except BaseException:
        kill_and_reap(pid)
        raise
    finally:
        reader.close()
        try:
            os.unlink(capture)
        except FileNotFoundError:
            pass


def kill_and_reap(pid: int) -> None:
    """SIGKILL ``pid`` and its process group, and reap it (ignoring a child that is already gone)."""
    procs.reap_group(pid)
