"""The processes of differential fuzzing besides the engine's worker: the mutant's twin and the flake guard.

A survivor's campaign runs on the engine's worker (:mod:`assay.engine.worker`),
whose target is the original wrapped by :class:`assay.mutant.comparing.Comparing`:
each case runs on the original there, with all the engine's feedback, and on
the **twin** (:func:`twin_child`), a process that applied the mutant's patch once,
at its start, and runs each input it is sent (while the original runs it: see
:class:`Twin`).  Each side therefore keeps its own
state: a cache (``functools.lru_cache``, a memo dict) the original filled cannot
answer for the mutant, and the mutant's code runs on every input as it would in a
mutated program.  (Swapping the code in and out around each mutant run in one
process would let the original's cached results hide the mutant.)

The twin publishes the input it is running in its own shared-memory
:class:`~assay.engine.journal.Journal` (side :data:`MUTANT_SIDE`) and bounds each
run by the target's timeout with ``SIGALRM``; one that ignores it stops answering,
and the wrapper gives up on it after the target's timeout and a grace.

The **flake guard** (:func:`guard_child`) is a pristine copy of the warm parent,
forked before the campaign: on a difference the wrapper asks it to replay the input
on each side in fresh children of its own (:func:`replay_child`).
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from typing import Any

from assay.core import observe
from assay.core.target import Target
from assay.core.verdict import Verdict, classify
from assay.engine import execute, isolate, journal as jr, procs
from assay.mutant import direct, meet, outcome as oc
from assay.mutant.apply import Patch

#: Journal ``sub`` values: which side of a case is running.
ORIGINAL_SIDE, MUTANT_SIDE = 0, 1
#: Seconds between the parent's looks at a child's journal or pipe.
POLL = 0.05
#: Flake-guard failures of one difference class after which that class is no longer replayed...
FLAKY_PER_CLASS = 2
#: ...and in all, after which no difference of this campaign is replayed any more.
MAX_FLAKY = 16


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
            return oc.raised(exc, sink.keys), classify(exc, target.expected, target.expected_from)
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


def twin_child(
    target: Target,
    patch: Patch,
    journal: jr.Journal,
    conn: Connection,
    line: int | None = None,
    sites: meet.Sites | None = None,
) -> None:
    """The mutant's process: the patch applied once, then every input it is sent, in order.

    Each input is published in ``journal`` (side :data:`MUTANT_SIDE`) while it runs,
    so a death or a hang names it.  With ``line`` (a directed campaign), each answer
    carries the lines of the mutated code the run executed (:mod:`assay.mutant.direct`), and with
    ``sites`` the measured comparisons' distances to their bounds (:mod:`assay.mutant.meet`).
    Requests and answers carry the asker's tag, so an answer nobody read (its asker
    died) is never taken for the next one's.  Ends when the other end of ``conn`` closes.
    """
    install_alarm()
    broken: tuple[oc.Identity, dict] | None = None
    probe: direct.LineProbe | None = None
    operands: meet.OperandProbe | None = None
    try:
        patch.apply()
    except Exception as exc:  # noqa: BLE001 - e.g. a rebound module-level value that raises
        what = f"applying the mutant raised {type(exc).__qualname__}: {exc}"
        broken = (oc.died(what), Verdict("crash", f"apply:{type(exc).__qualname__}", what).to_json())
    if broken is None and line is not None and patch.functions:
        if sites is not None and sites.by_line:
            operands = meet.OperandProbe(sites)
        probe = direct.LineProbe(direct.mutated_codes(patch.functions), operands, sites.lines if sites else frozenset())
        probe.start()
    while True:
        try:
            tag, phase, pos, data = conn.recv()
        except EOFError:
            return
        if data is None:  # a ping (see Twin.ping): every earlier input is answered
            conn.send((tag, None, None, None, None))
            continue
        if broken is not None:
            conn.send((tag, *broken, None, None))
            continue
        if probe is not None:
            probe.begin()
        if operands is not None:
            operands.begin()
        journal.begin(phase, pos, MUTANT_SIDE, data)
        identity, verdict = run_once(target, data, target.timeout)
        journal.end()
        conn.send(
            (
                tag,
                identity,
                verdict.to_json() if verdict else None,
                probe.taken() if probe else None,
                operands.taken() if operands else None,
            )
        )


def spawn_twin(
    target: Target,
    patch: Patch,
    journal: jr.Journal,
    capture: str,
    line: int | None = None,
    others: tuple[Connection, ...] = (),
    sites: meet.Sites | None = None,
) -> tuple[int, Connection]:
    """Fork the mutant's process (:func:`twin_child`); (its pid, the client end of its connection).

    The caller closes its copy of the client end when it is done, so the twin sees
    end-of-file; ``others`` are connections of the caller's that the twin closes.
    """
    client, server = Pipe(duplex=True)

    def child(writer) -> None:
        writer.close()
        client.close()
        for conn in others:
            conn.close()
        isolate.child_setup(capture, target.rss_limit_mb)
        twin_child(target, patch, journal, server, line, sites)

    pid, reader = isolate.fork_with_pipe(child)
    reader.close()
    server.close()
    return pid, client


class Twin:
    """The original's side of the connection to the mutant's process.

    A case is asked first (:meth:`ask`) and answered later (:meth:`answer`), so the
    mutant runs while the caller runs the original: on two cores the pair costs
    about one run, and the caller rarely sleeps waiting for a process to be woken.
    """

    def __init__(self, conn: Connection, wait: float | None = None) -> None:
        self.conn = conn
        self.wait = wait  # seconds to wait for an answer; None: until the process ends
        self.asked = 0
        #: The last answer's distances of the measured comparisons to their bounds (:mod:`assay.mutant.meet`).
        self.gaps: tuple[meet.Observation, ...] | None = None

    def ask(self, phase: int, pos: int, data: bytes | None) -> tuple[int, int]:
        """Send ``data`` to the mutant's process (``None``: a :meth:`ping`); the tag to pass to :meth:`answer`."""
        self.asked += 1
        tag = (os.getpid(), self.asked)
        try:
            self.conn.send((tag, phase, pos, data))
        except OSError as exc:
            raise TwinLost(str(exc)) from None
        return tag

    def answer(self, tag: tuple[int, int]) -> tuple[oc.Identity, dict | None, frozenset[int] | None]:
        """The answer to :meth:`ask` ``tag``: the mutant's outcome identity, its verdict as JSON, the mutated lines it ran.

        Answers to earlier tags nobody read (their asker died, or did not wait) are skipped.
        """
        try:
            while True:
                if self.wait is not None and not self.conn.poll(self.wait):
                    raise TwinLost("no answer")
                answer = self.conn.recv()
                if answer[0] == tag:
                    self.gaps = answer[4]
                    return answer[1], answer[2], answer[3]
        except (EOFError, OSError) as exc:
            raise TwinLost(str(exc)) from None

    def ping(self) -> bool:
        """True once the mutant's process has answered every input asked before; False if it is lost."""
        try:
            self.answer(self.ask(jr.GENERATED, 0, None))
        except TwinLost:
            return False
        return True


def replay_side(target: Target, patch: Patch | None, data: bytes) -> oc.Identity:
    """One side of one input in a fresh child forked from this process (the flake guard's unit)."""
    shot = one_shot(
        lambda send: replay_child(target, patch, data, send),
        target.rss_limit_mb,
        target.timeout + isolate.KILL_GRACE + 1.0,
    )
    if shot.message is not None:
        return shot.message[0]
    if shot.killed:
        return oc.wedged(target.timeout)
    verdict = isolate.death_verdict(shot.status, shot.output, killed_for_timeout=False, timeout=target.timeout)
    return oc.died(verdict.detail)


def guard(target: Target, patch: Patch, data: bytes, replays: int, messages: bool = True):
    """``replays`` runs of both sides, each in a fresh child: the stable (original, mutant) pair, or ``None``.

    Only if every original agrees with every other, every mutant with every other,
    and the two differ is the difference stable.
    """
    first: tuple[oc.Identity, oc.Identity] | None = None
    for _ in range(replays):
        original, mutated = replay_side(target, None, data), replay_side(target, patch, data)
        if not (oc.comparable(original) and oc.comparable(mutated)) or oc.same(original, mutated, messages):
            return None
        if first is None:
            first = (original, mutated)
        elif (oc.compared(original), oc.compared(mutated)) != (oc.compared(first[0]), oc.compared(first[1])):
            return None
    return first


def guard_child(target: Target, patch: Patch, replays: int, messages: bool, conn: Connection) -> None:
    """The flake guard's server: a pristine copy of the warm parent that forks the guard's fresh children.

    It outlives the campaign's workers, so it also keeps the campaign's flake
    bookkeeping (:data:`FLAKY_PER_CLASS`, :data:`MAX_FLAKY`), the first raw
    kill or infrastructure case the workers report, and the first message kill
    (``report`` answers ``flaky, unguarded, first, message``).  Requests come from
    :func:`ask_guard`, and each answer carries its request's tag.
    """
    install_alarm()
    flaky = unguarded = 0
    classes: dict[tuple, int] = {}
    stable: set[tuple] = set()
    first: tuple | None = None
    message: tuple | None = None
    while True:
        try:
            tag, kind, *request = conn.recv()
        except EOFError:
            return
        if kind == "guard":
            data, cls = request
            if cls in stable:
                conn.send((tag, "stable", None))  # this difference replayed stably already: no more forks for it
            elif flaky >= MAX_FLAKY or classes.get(cls, 0) >= FLAKY_PER_CLASS:
                unguarded += 1
                conn.send((tag, "flaky", None))
            else:
                pair = guard(target, patch, data, replays, messages)
                if pair is None:
                    flaky += 1
                    classes[cls] = classes.get(cls, 0) + 1
                    conn.send((tag, "flaky", None))
                else:
                    stable.add(cls)
                    conn.send((tag, "stable", pair))
        elif kind == "first":
            if request[0][0] == "message":
                message = message or request[0]
            elif first is None:
                first = request[0]
            conn.send((tag, True))
        elif kind == "report":
            conn.send((tag, flaky, unguarded, first, message))


_asked = itertools.count()


def ask_guard(conn: Connection, kind: str, *request: Any) -> tuple:
    """Send the flake guard (:func:`guard_child`) a request; its answer, without the tag.

    Requests carry the asker's tag and answers echo it, so an answer its asker never
    read (a soft timeout interrupted the wait, the worker died) is skipped, not taken
    for the next request's.
    """
    tag = (os.getpid(), next(_asked))
    conn.send((tag, kind, *request))
    while True:
        answer = conn.recv()
        if answer[0] == tag:
            return answer[1:]


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
