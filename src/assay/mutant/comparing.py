"""The target a survivor's campaign runs on the engine: the original here, the mutant in its twin, compared per case.

The engine's worker calls :class:`Comparing` as it calls any target, in its C hot
loop as on its general path, with all its feedback on the original's code.  Each
call sends the input to the mutant's process
(:func:`assay.mutant.diffrun.twin_child`), runs the original in the worker meanwhile,
then takes the mutant's answer and compares the two outcome identities
(:mod:`assay.mutant.outcome`).  When they are the same, the call returns (or
raises) what the original did, so the engine sees the original alone.  When they
differ, the flake guard replays the input on both sides in fresh children
(:func:`assay.mutant.diffrun.guard_child`); a stable difference raises an
``OracleFailure`` tagged :data:`KILL_ORACLE`, which the engine judges, replays,
shrinks (keeping its difference class, which is in the key) and reports, and the
campaign stops there (``stop_on``).  A stable difference in an exception's message
alone (a *message kill*, weaker evidence) raises one tagged :data:`MESSAGE_ORACLE`,
which the engine replays, shrinks and reports the same way, but the schedule goes
on looking for a behaviour kill: later message differences are not guarded again
and go on as the original's, so their inputs can join the corpus.  Replays and
shrink candidates (the engine's journal says which calls are reruns) keep only the
class of a kill already reported.  A mutant that hangs, dies or runs out of a
resource raises one tagged :data:`INFRA_ORACLE`: an infrastructure finding, never
a kill.  A difference that does not replay stably is state, not behaviour: the call
goes on as the original did.

Only the worker talks to the twin: a process the worker forks (the line-counting
child, a traced re-run of a hang) runs the original alone (see :func:`_depth`).
"""

from __future__ import annotations

import hashlib
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from assay.core import observe
from assay.core.observe import OracleFailure
from assay.engine import execute, journal as jr
from assay.feedback.protocol import RecordingCut
from assay.mutant import diffrun, direct, meet, outcome as oc

#: Oracle tag of a stable difference (a kill).
KILL_ORACLE = "differential"
#: Oracle tag of a stable difference in an exception's message alone (a message kill): the campaign goes on.
MESSAGE_ORACLE = "differential-message"
#: Oracle tag of a mutant that misbehaved (hung, died, ran out of a resource).
INFRA_ORACLE = "mutant-infrastructure"
#: Hex digits of a difference class folded into a kill's engine key (a shrink keeps the class).
CLASS_CHARS = 8

_forks = 0


def _count_fork() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_count_fork)


def _depth() -> int:
    """How many forks away from the first process this one is."""
    return _forks


def _on_alarm(signum, frame):  # noqa: ARG001
    raise execute.WedgeTimeout()


class Comparing:
    """The callable a survivor's wrapped target runs (see the module docstring)."""

    def __init__(
        self,
        fn: Any,
        timeout: float,
        twin: Connection,
        guard: Connection,
        line: int | None,
        messages: bool,
        meeting: meet.Meeting | None = None,
    ) -> None:
        self.fn = fn
        self.timeout = timeout
        self.twin = diffrun.Twin(twin, wait=timeout + 2.0)
        self.guard = guard
        self.line = line  # the mutated line, when the campaign is directed
        self.messages = messages
        self.meeting = meeting  # the measured comparisons' distances to their bounds, when directed
        self.depth = _depth() + 1  # the worker's: forked once from this process
        self.lost: str | None = None  # why the twin stopped answering
        #: The difference class of the kill reported, once there is one: the engine's replays and shrink follow
        #: (the schedule stops), and they need that class alone, with no more guarding (forks, time).
        self.killed: tuple | None = None
        #: The difference class of the message kill reported, once there is one: the engine replays and shrinks
        #: it, and the schedule goes on (it is not in ``stop_on``) until a behaviour kill or the case cap.
        self.message: tuple | None = None
        #: True while the engine reruns an input (a replay or shrink candidate of a kill, an analysis run)
        #: rather than running a case of its schedule; ``None``: every call is a scheduled case.
        self.rerun: Callable[[], bool] | None = None

    def __call__(self, data: bytes) -> Any:
        if _depth() != self.depth:
            return self.fn(data)
        if self.lost is not None:  # nothing to compare with: a key of its own, so no shrink keeps it
            raise OracleFailure("mutant", self.lost, kind="after-loss", oracle=INFRA_ORACLE)
        # The mutant runs the input while the original runs it here (see diffrun.Twin).
        asked: tuple[int, int] | diffrun.TwinLost
        try:
            asked = self.twin.ask(jr.GENERATED, 0, data)
        except diffrun.TwinLost as exc:
            asked = exc  # judged after the original ran, as a loss in the middle of the input
        sink = observe.FeatureSink()
        previous = observe.activate(sink)
        value: Any = None
        error: BaseException | None = None
        old = signal.signal(signal.SIGALRM, _on_alarm)
        try:
            signal.setitimer(signal.ITIMER_REAL, self.timeout)
            try:
                value = self.fn(data)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except KeyboardInterrupt:
            raise  # the answer, if it comes, is skipped by its tag
        except (execute.WedgeTimeout, RecordingCut):
            self._drain(asked)
            raise  # not an outcome to compare: the engine judges it
        except BaseException as exc:  # noqa: BLE001 - every escape from the target is an outcome
            error = exc
        finally:
            signal.signal(signal.SIGALRM, old)
            observe.activate(previous)
            if previous is not None:
                previous.keys.extend(sink.keys)
        original = oc.returned(value, sink.keys) if error is None else oc.raised(error, sink.keys)
        if oc.comparable(original):
            self._compare(data, original, previous, asked)
        else:
            self._drain(asked)
        if error is not None:
            raise error
        return value

    def _drain(self, asked: tuple[int, int] | diffrun.TwinLost) -> None:
        """Take the mutant's answer to an input whose original outcome is not compared, so the twin is free again.

        A twin that does not answer there (it hangs past its own alarm, or died) is
        lost, but not blamed: the original failed on that input too.  Later calls have
        nothing to compare with, and the campaign ends (see ``__call__``).
        """
        try:
            if isinstance(asked, diffrun.TwinLost):
                raise asked
            self.twin.answer(asked)
        except diffrun.TwinLost as exc:
            self.lost = "wedge" if str(exc) == "no answer" else "died"

    def _compare(
        self,
        data: bytes,
        original: oc.Identity,
        sink: observe.FeatureSink | None,
        asked: tuple[int, int] | diffrun.TwinLost,
    ) -> None:
        try:
            if isinstance(asked, diffrun.TwinLost):
                raise asked
            mutated, verdict, lines = self.twin.answer(asked)
        except diffrun.TwinLost as exc:
            self.lost = "wedge" if str(exc) == "no answer" else "died"
            mutated = oc.wedged(self.timeout) if self.lost == "wedge" else oc.died("the mutant's process ended")
            self._report(("infra", data, original, mutated, None))
            raise OracleFailure("mutant", self.lost, kind=self.lost, oracle=INFRA_ORACLE) from None
        if self.line is not None and sink is not None:
            sink.keys.extend(direct.reach_features(lines, self.line))
            if self.meeting is not None:
                sink.keys.extend(self.meeting.note(data, self.twin.gaps))
        if not oc.comparable(mutated):
            self._report(("infra", data, original, mutated, verdict))
            raise OracleFailure("mutant", mutated.get("kind", "?"), kind=str(mutated.get("kind")), oracle=INFRA_ORACLE)
        if oc.same(original, mutated, self.messages):
            return
        cls = oc.difference_class(original, mutated)
        message = oc.message_only(original, mutated)
        if self.rerun is not None and self.rerun():
            if cls != self.killed and cls != self.message:
                return  # a replay or shrink candidate keeps only the class of the kill it is rerun for
        elif self.killed is not None:
            if cls != self.killed:
                return  # the schedule ends at a behaviour kill (stop_on): nothing else is looked for
        elif message and self.message is not None:
            return  # one message kill is enough: the case goes on as the original's, a behaviour kill is looked for
        else:
            answer, _pair = diffrun.ask_guard(self.guard, "guard", data, cls)
            if answer != "stable":
                return  # state, not behaviour: the case goes on as the original's
            if message:
                self.message = cls
            else:
                self.killed = cls
            self._report(("message" if message else "kill", data, original, mutated, None))
        what = oc.difference(original, mutated)
        digest = hashlib.sha256(repr(cls).encode()).hexdigest()[:CLASS_CHARS]
        raise OracleFailure(
            what,
            oc.describe(original, mutated),
            kind=digest,
            oracle=MESSAGE_ORACLE if message else KILL_ORACLE,
            data={"original_outcome": original, "mutant_outcome": mutated},
        )

    def _report(self, record: tuple) -> None:
        """Tell the guard (which outlives this worker) about a kill or an infrastructure case; it keeps the first."""
        diffrun.ask_guard(self.guard, "first", record)
