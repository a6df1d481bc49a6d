"""The child side of differential fuzzing: one input on both sides, and the campaign loop.

Everything here runs in a forked child of the warm parent; the mutant's patch is
applied only here, only around the mutant's run, and reverted before the next
original run.  The parent side (scheduling children, the flake guard, artifacts)
is :mod:`assay.mutant.differential`.

A case is: publish the input in the :class:`~assay.engine.journal.Journal` as the
*original* side, run the original with coverage feedback on, publish it as the
*mutant* side, apply the patch, run the mutant with feedback paused, revert.  Both
runs are bounded by the target's timeout with ``SIGALRM`` (as
:func:`assay.engine.execute.run_input`); a run that ignores it is killed by the
parent, which then reads from the journal which input, and which side, it was.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Callable, Hashable

from assay import observe
from assay.engine import execute, isolate, journal as jr
from assay.engine.generate import InputSource
from assay.engine.seeds import case_rng
from assay.engine.shrink import shrink
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from assay.mutant import outcome as oc
from assay.mutant.apply import Patch
from assay.target import Target
from assay.verdict import Verdict, classify

#: Journal ``sub`` values: which side of a case is running.
ORIGINAL_SIDE, MUTANT_SIDE = 0, 1
#: Seconds between the parent's looks at a child's journal or pipe.
POLL = 0.05
#: Generated cases between offers to re-arm retired branch events (as the engine's worker).
RESTART_CHECK_EVERY = 64


@dataclass
class Plan:
    """What a campaign child needs (inherited through ``fork``)."""

    target: Target
    patch: Patch
    sources: list[str]
    strategy: Any
    dictionary: list[bytes]
    initial: list[bytes]
    cseed: int
    cases: int
    deadline: float | None
    journal: jr.Journal
    capture: str
    control: Connection = field(repr=False, default=None)  # type: ignore[assignment]


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


def both_sides(target: Target, patch: Patch, data: bytes, timeout: float) -> tuple[oc.Identity, oc.Identity]:
    """Original then mutant, in this process (shrinking uses it)."""
    original, _ = run_once(target, data, timeout)
    mutated, _ = run_mutant(target, patch, data, timeout)
    return original, mutated


def campaign_child(plan: Plan, send: Callable[[tuple], None]) -> None:
    """The campaign loop (see :mod:`assay.mutant.differential` for the protocol)."""
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
    def __init__(self, plan: Plan, feedback: SysmonFeedback, send: Callable[[tuple], None]) -> None:
        self.plan = plan
        self.feedback = feedback
        self.send = send
        self.source = InputSource(plan.target.max_len, plan.dictionary, plan.strategy)
        self.seen: set[Hashable] = set()
        self.cases = 0
        self.skipped = 0
        self.chain = hashlib.sha256()

    def run(self) -> None:
        plan = self.plan
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
        self.feedback.pause(True)
        journal.begin(phase, pos, MUTANT_SIDE, data)
        try:
            mutated, verdict = run_mutant(plan.target, plan.patch, data, timeout)
        finally:
            journal.end()
            self.feedback.pause(False)
        self.cases += 1
        if not oc.comparable(mutated):
            self.send(("infra", phase, pos, data, ops, original, mutated, verdict.to_json() if verdict else None))
            return True
        if not oc.same(original, mutated):
            self.send(("diff", phase, pos, data, ops, original, mutated, self.cases))
            return plan.control.recv() != "go"
        return False


def shrink_child(target: Target, patch: Patch, data: bytes, want: tuple, max_cases: int,
                 seconds: float, structural: Callable[[bytes], Any] | None, send: Callable[[tuple], None]) -> None:
    """Shrink ``data`` keeping its :func:`~assay.mutant.outcome.difference_class`; send the result."""
    install_alarm()
    stop_at = time.monotonic() + seconds

    def still_differs(candidate: bytes) -> bool:
        if time.monotonic() > stop_at:
            return False
        original, mutated = both_sides(target, patch, candidate, target.timeout)
        return oc.comparable(original) and oc.comparable(mutated) and oc.difference_class(original, mutated) == want

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
                break
        _, status = os.waitpid(pid, 0)
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
    """SIGKILL ``pid`` and reap it (ignoring a child that is already gone)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass

