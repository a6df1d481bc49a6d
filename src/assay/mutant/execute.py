"""Running mutants: one warm parent, one forked child per mutant, ``--jobs`` at a time.

The parent has imported the code and collected the suite once.  Each child puts
itself in its own process group (and asks the kernel to kill it with its parent),
swaps the mutant's code in (:class:`~assay.mutant.apply.Patch`), and runs the
mutant's selected tests in order, stopping at the first failure.  The parent
waits on the children's pipes with a per-mutant deadline; a child past it is a
``timeout`` (its whole process group is killed), one that dies without a word
(``os._exit``, a signal, a C stack overflow) is an ``error``.  Neither counts as
killed by a test.

A verdict must not depend on the order the tests ran in (fastest-first order
comes from noisy timings, recent-killer order from which child finished first):
a mutant with one test that hangs and another that fails is killed either way.
So each child marks in a shared slot which test it is on, and when it ends in a
timeout or an error with selected tests still unrun, a fresh child runs the
rest (at most :data:`MAX_RESUMES` times per mutant).  A test that fails in any of
them kills; otherwise the verdict is ``timeout`` if any child timed out, else
``error``.
"""

from __future__ import annotations

import gc
import mmap
import os
import signal
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from multiprocessing.connection import wait
from typing import Any

from assay.engine.isolate import child_setup, fork_with_pipe, new_capture, read_tail
from assay.engine.procs import kill_group as _kill_group, libc as _libc
from assay.mutant.apply import FunctionIndex, MutantError, Patch
from assay.mutant.model import Mutant

#: A mutant's child may use this many times the baseline time of its selected tests
#: in CPU time...
TIMEOUT_FACTOR = 5.0
#: ...plus this many CPU seconds (fork, compile, fixtures).  CPU time, read from
#: /proc, is what a loop burns and what a loaded machine does not inflate, so a
#: looping mutant is stopped in a fraction of a second even with a small floor.
CPU_FLOOR = 0.3
#: Wall-clock limit for a mutant that blocks instead of looping (sleep, a lock, a
#: read): twice the CPU factor of the baseline time, plus this many seconds.
WALL_FLOOR = 3.0
#: Seconds between looks at the running children's CPU time.
CPU_POLL = 0.05
#: Address-space limit of a mutant's child, in MiB (a mutant that allocates without end is an error).
CHILD_RSS_LIMIT_MB = 4096
#: Most characters of a failure line or diagnostic kept in a result.
MAX_TEXT = 2000
#: Fresh children a mutant may get for the tests after one that hung or crashed its
#: child.  Each costs at most one more time limit, and only for such mutants; with
#: N, the verdict is order-independent whenever at most N + 1 selected tests hang or
#: crash.
MAX_RESUMES = 2

KILLED_BY_TEST = "killed"
SURVIVED = "survived"
UNREACHED = "unreached"
TIMEOUT = "timeout"
ERROR = "error"
INVALID = "invalid"
KILLED_BY_FUZZ = "killed-by-fuzz"
#: Left out of the score with a stated reason (``detail``): its module cannot be re-executed unchanged
#: without changing what the tests see, so a mutant applied that way cannot be judged.
EXCLUDED = "excluded"
#: ``killed_by`` of a module-level mutant whose mutated assignment raises (the module would not import).
IMPORT_KILL = "<import>"
#: Every verdict, in the order reports list them.
VERDICTS = (KILLED_BY_TEST, KILLED_BY_FUZZ, SURVIVED, UNREACHED, TIMEOUT, ERROR, INVALID, EXCLUDED)


@dataclass
class MutantRunPlan:
    """What one mutant's child runs: its tests in order, within its time limits."""

    mutant: Mutant
    tests: list[str]
    baseline: float  # seconds the selected tests took in the baseline
    gold: list[str] = field(default_factory=list)  # tests that killed it last time (run first)
    #: The abnormal ends of earlier children of this mutant (a resumed plan runs the rest of the tests).
    ended: list[MutantResult] = field(default_factory=list)
    #: Re-execute the mutant's module *unchanged* and run the tests (the control of re-execution).
    control: bool = False

    @property
    def cpu_limit(self) -> float:
        return CPU_FLOOR + TIMEOUT_FACTOR * self.baseline

    @property
    def wall_limit(self) -> float:
        return WALL_FLOOR + 2 * TIMEOUT_FACTOR * self.baseline


@dataclass
class MutantResult:
    """The verdict on one mutant, with its evidence."""

    mutant: Mutant
    verdict: str
    killed_by: str | None = None
    failure: str = ""
    tests_selected: int = 0
    tests_run: int = 0
    elapsed: float = 0.0
    gold: bool = False
    cached: bool = False
    detail: str = ""
    fuzz: dict[str, Any] | None = None
    #: Unreached because its code ran only at import (history records from before such mutants
    #: were judged by re-executing their module).
    import_time: bool = False

    def to_json(self) -> dict[str, Any]:
        m = self.mutant
        return {
            "id": m.id,
            "path": m.relpath,
            "line": m.line,
            "end_line": m.end_line,
            "qualname": m.qualname,
            "operator": m.operator,
            "description": m.description,
            "verdict": self.verdict,
            "killed_by": self.killed_by,
            "failure": self.failure,
            "tests_selected": self.tests_selected,
            "tests_run": self.tests_run,
            "elapsed": round(self.elapsed, 4),
            "gold": self.gold,
            "cached": self.cached,
            "import_time": self.import_time,
            "reexec": self.mutant.reexec or not self.mutant.unit,
            "detail": self.detail,
            "fuzz": self.fuzz,
        }


def run_mutants(
    plans: list[MutantRunPlan],
    texts: dict[str, str],
    index: FunctionIndex,
    run_test: Callable[[str, str | None], str | None],
    jobs: int = 1,
    before_apply: Callable[[], None] | None = None,
    order: Callable[[MutantRunPlan], None] | None = None,
) -> Iterator[MutantResult]:
    """Run every plan in a forked child, at most ``jobs`` at once; yield results as they finish.

    ``run_test(nodeid, next_nodeid)`` runs one collected test in the child and
    returns its failure line, or ``None`` when it passed.  ``order(plan)`` may
    reorder a plan's tests just before it starts, using the results so far.
    """
    _libc()  # loaded once here, so that children only call it
    # Objects that exist now are never collected by a child's garbage collector, so
    # the children do not touch (and copy) the parent's whole heap.
    gc.freeze()
    queue = list(reversed(plans))
    running: dict[Any, _Running] = {}
    try:
        while queue or running:
            while queue and len(running) < jobs:
                plan = queue.pop()
                if order is not None and not plan.ended:
                    order(plan)
                capture = new_capture()
                slot = mmap.mmap(-1, _SLOT.size)  # shared with the child: the test it is on
                pid, reader = fork_with_pipe(
                    lambda w, p=plan, c=capture, s=slot: _child(w, p, texts, index, run_test, c, before_apply, s)
                )
                try:
                    os.setpgid(pid, pid)
                except OSError:
                    pass  # the child already did it, or is gone: both are fine
                running[reader] = _Running(pid, plan, capture, time.monotonic(), slot)
            ended: list[tuple[_Running, MutantResult]] = []
            for reader in wait(list(running), timeout=CPU_POLL):  # type: ignore[assignment]  # the readers given
                job = running.pop(reader)
                try:
                    message = reader.recv()
                except (EOFError, OSError):
                    message = None
                reader.close()
                status = _reap(job.pid)
                ended.append((job, _result(job.plan, message, status, job.capture, time.monotonic() - job.start)))
            now = time.monotonic()
            for reader, job in list(running.items()):
                over = job.over_limit(now)
                if over:
                    del running[reader]
                    job.end(reader)
                    ended.append(
                        (
                            job,
                            MutantResult(
                                job.plan.mutant,
                                TIMEOUT,
                                tests_selected=len(job.plan.tests),
                                elapsed=now - job.start,
                                detail=over,
                            ),
                        )
                    )
            for job, result in ended:
                rest: list[str] = []
                if result.verdict in (TIMEOUT, ERROR):
                    on = job.test_on()
                    if on >= 0:
                        result.tests_run = on + 1
                        result.detail = f"in {job.plan.tests[on]}: {result.detail}"
                        rest = job.plan.tests[on + 1 :]
                job.slot.close()
                if rest and len(job.plan.ended) < MAX_RESUMES:
                    queue.append(
                        replace(
                            job.plan,
                            tests=rest,
                            gold=[t for t in job.plan.gold if t in rest],
                            ended=[*job.plan.ended, result],
                        )
                    )
                else:
                    yield _merge(job.plan, result)
    finally:
        gc.unfreeze()
        for reader, job in running.items():
            job.end(reader)
            job.slot.close()


def _merge(plan: MutantRunPlan, last: MutantResult) -> MutantResult:
    """One verdict from a mutant's children: killed if any test failed, else timeout, else error."""
    if not plan.ended:
        return last
    every = [*plan.ended, last]
    if last.verdict == KILLED_BY_TEST:
        final = last
    else:
        final = next((r for r in every if r.verdict == TIMEOUT), None) or next(r for r in every if r.verdict == ERROR)
    final.tests_selected = plan.ended[0].tests_selected
    final.elapsed = sum(r.elapsed for r in every)
    final.tests_run = sum(r.tests_run for r in every)
    notes = [final.detail] if final.detail else []
    for r in every:
        if r is not final:
            first = r.detail.splitlines()[0] if r.detail else ""
            notes.append(
                f"another child of this mutant: {r.verdict} {first}"
                if r.verdict != SURVIVED
                else "the tests after it passed, in a fresh child"
            )
    final.detail = "\n".join(notes)
    return final


#: The shared slot: 1 + the index of the test a child is running (0: none yet).
_SLOT = struct.Struct("i")


@dataclass
class _Running:
    pid: int
    plan: MutantRunPlan
    capture: str
    start: float
    slot: mmap.mmap

    def test_on(self) -> int:
        """The index in the plan of the test the child was running when it ended (-1: none)."""
        return _SLOT.unpack_from(self.slot)[0] - 1

    def over_limit(self, now: float) -> str:
        """Why this child is past its limits ('' while it is not)."""
        if now - self.start > self.plan.wall_limit:
            return f"the selected tests ran past {self.plan.wall_limit:.1f}s of wall-clock time"
        cpu = _cpu_seconds(self.pid)
        if cpu > self.plan.cpu_limit:
            return f"the selected tests used more than {self.plan.cpu_limit:.2f}s of CPU (baseline {self.plan.baseline:.3f}s)"
        return ""

    def end(self, reader) -> None:
        _kill_group(self.pid)
        reader.close()
        os.waitpid(self.pid, 0)
        _unlink(self.capture)


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of ``pid`` (Linux /proc); 0.0 where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def _child(
    writer,
    plan: MutantRunPlan,
    texts: dict[str, str],
    index: FunctionIndex,
    run_test: Callable[[str, str | None], str | None],
    capture: str,
    before_apply: Callable[[], None] | None,
    slot: mmap.mmap,
) -> None:
    os.setpgid(0, 0)  # fork_with_pipe already made it die with this process
    child_setup(capture, CHILD_RSS_LIMIT_MB)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    mutant = plan.mutant
    try:
        patch = Patch.build(mutant, texts[mutant.path], index, identity=plan.control)
    except MutantError as exc:
        writer.send((INVALID, None, str(exc), 0))
        return
    if before_apply is not None:
        before_apply()
    try:
        patch.apply()
    except Exception as exc:  # a module-level mutant whose assignment raises: the module would not import
        writer.send((KILLED_BY_TEST, IMPORT_KILL, f"{type(exc).__name__}: {exc}"[:MAX_TEXT], 0))
        return
    for k, nodeid in enumerate(plan.tests):
        nextid = plan.tests[k + 1] if k + 1 < len(plan.tests) else None
        _SLOT.pack_into(slot, 0, k + 1)
        failure = run_test(nodeid, nextid)
        if failure is not None:
            writer.send((KILLED_BY_TEST, nodeid, failure[:MAX_TEXT], k + 1))
            return
    writer.send((SURVIVED, None, "", len(plan.tests)))


def _result(plan: MutantRunPlan, message: Any, status: int, capture: str, elapsed: float) -> MutantResult:
    try:
        if message is None:
            output = read_tail(capture)
            if os.WIFSIGNALED(status):
                what = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
            else:
                what = f"exited with status {os.WEXITSTATUS(status)}"
            return MutantResult(
                plan.mutant,
                ERROR,
                tests_selected=len(plan.tests),
                elapsed=elapsed,
                detail=f"the mutant's child {what} before its tests finished\n{output[-MAX_TEXT:]}".rstrip(),
            )
        verdict, test, text, ran = message
        if verdict == KILLED_BY_TEST:
            return MutantResult(
                plan.mutant,
                KILLED_BY_TEST,
                killed_by=test,
                failure=text,
                tests_selected=len(plan.tests),
                tests_run=ran,
                elapsed=elapsed,
                gold=test in plan.gold,
            )
        if verdict == INVALID:
            return MutantResult(plan.mutant, INVALID, detail=text, elapsed=elapsed)
        # With no test to run, a child only showed that the mutant applies (its module imports).
        verdict = SURVIVED if plan.tests or plan.control else UNREACHED
        return MutantResult(plan.mutant, verdict, tests_selected=len(plan.tests), tests_run=ran, elapsed=elapsed)
    finally:
        _unlink(capture)


def _reap(pid: int) -> int:
    """Wait for a child that has sent its result; kill it if it does not exit promptly."""
    deadline = time.monotonic() + 5.0
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            _kill_group(pid)  # anything the tests started in the child's group ends with it
            return status
        if time.monotonic() > deadline:
            _kill_group(pid)
            return os.waitpid(pid, 0)[1]
        time.sleep(0.0005)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
