"""Runs of an input traced in a forked child: its line count, or its stack at a line.

Counting a run's Python line events and loop turns is a cost measure that no load on
the machine can disturb, and the stack at a line event fixed by that count is a
deterministic picture of where a slow run spends its time (an alarm after half the
median time is not: it lands wherever the scheduler let the run get to).

The count is ``sys.monitoring``'s LINE events plus its backward JUMP events: a loop
on one line (a comprehension, a generator expression, ``while i < n: i += 1``) runs
no new line per turn, so LINE events alone see a quadratic scan written as
``sum(1 for b in data[i:] if ...)`` as linear.  Only the lines of code that is not assay's
own count (:func:`counted_code`): the count is a feature, and must not move when assay's code
around the target does.  The count is never below the run's
``sys.settrace`` line events (which add only the backward jumps that stay on their
line) and never above twice them, so half of it is a line event the run reaches.

Not in the worker's own process: on 3.12 turning line events on and off
re-instruments every code object, which loses the coverage tracer's
per-instruction state (a branch direction seen only by its destination's first
``INSTRUCTION`` event would never be reported).  Line counts, taken every few
dozen to every 1,024th case, go to one long-lived :class:`CountingChild`
(``sys.monitoring`` LINE events), which counts on another core while the worker
goes on (:meth:`CountingChild.submit`, :meth:`CountingChild.collect`).  A stack
picture, rare, goes to a fresh fork each (``sys.settrace``, which has the frame),
which reports through a pipe and leaves with ``os._exit`` as soon as it knows its
answer, without running the rest of the input.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from assay.core import forking
from assay.core.location import is_assay_file
from assay.core.verdict import Frame
from assay.engine import procs, sandbox
from assay.feedback import sysmon
from assay.gen.accelerated import cmutate

#: Most frames a stack picture keeps.
STACK_FRAMES = 16
#: Seconds a traced or counting child gets to exit once it has been told to (EOF on its
#: pipe) before it is SIGKILLed by its pid: no wait on a child is without bound.
EXIT_GRACE = 1.0


class TimedOut(Exception):
    """The traced child was still running at its deadline (it was killed by its pid)."""


def in_child(
    run: Callable[[], Any], make_tracer: Callable[[Callable[[bytes], None]], Any], timeout: float
) -> bytes | None:
    """The report of ``run()`` traced by ``make_tracer(finish)`` in a forked child.

    The tracer calls ``finish(report)`` when it has its answer (the child then
    leaves at once); otherwise the child finishes with ``tracer.report()`` after the
    run.  ``None`` when the child died without a report; :class:`TimedOut` when it
    ran past ``timeout`` seconds.
    """
    # A bare fork and pipe, not isolate.fork_with_pipe: its process group and
    # multiprocessing pipe cost 0.4-0.6 ms more per run (1.0 against 1.6 ms here).
    # The child runs the target under the worker's sandbox, in the worker's group, is
    # killed by its pid when late, and dies with the worker (forking.fork): a hang
    # traced here while the whole run is SIGKILLed must not run on as an orphan.
    read_end, write_end = procs.pipe()  # never fd 1 or 2, which the target may have closed
    pid = forking.fork()
    if pid == 0:  # pragma: no cover - the child only traces, then leaves without cleanup
        try:
            os.close(read_end)
            own_output()
            # A process the target forks must not hold the report's pipe open past this child.
            os.register_at_fork(after_in_child=lambda: close_quietly(write_end))
            report_traced(run, make_tracer, lambda report: write_all(write_end, report))
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise TimedOut()
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        end_child(pid, max(deadline - time.monotonic(), 0.0) + EXIT_GRACE)
    return b"".join(chunks) or None


def own_output() -> None:  # pragma: no cover - runs in a forked child
    """In a counting or tracing child: its output and its crash stack go to ``/dev/null``.

    Both children run the worker's inputs beside the worker, and inherit its stdout,
    stderr and faulthandler descriptor, all the worker's capture file: a segfault
    that both hit printed two stacks into that one file, interleaved, and the
    finding's frames (its signature) depended on how they mixed.  The worker's
    capture holds the worker's output only; these children answer through their
    pipes, and a child that dies counts as such, with no stack needed.
    """
    null = procs.above_stdio(os.open(os.devnull, os.O_WRONLY))
    os.dup2(null, 1)
    os.dup2(null, 2)
    if faulthandler.is_enabled():
        faulthandler.enable(file=null, all_threads=False)
        faulthandler.register(signal.SIGUSR2, file=null, all_threads=False)


def end_child(pid: int, wait: float) -> None:
    """Reap child ``pid``, SIGKILLing it by its pid if it has not exited within ``wait`` seconds."""
    if not procs.wait_exited(pid, wait):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.waitpid(pid, 0)  # exited or SIGKILLed: returns at once
    except ChildProcessError:
        pass


def close_quietly(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def report_traced(
    run: Callable[[], Any], make_tracer: Callable[[Callable[[bytes], None]], Any], send: Callable[[bytes], Any]
) -> None:  # pragma: no cover - runs in a forked child
    """In a forked child: ``run()`` traced by ``make_tracer(finish)``; ``send`` gets its report.

    ``finish(report)`` sends the report and leaves the process at once (the tracer has
    its answer; a hang need not go on); after the run the tracer's ``report()`` is sent.
    """

    def finish(report: bytes) -> None:
        sys.settrace(None)
        send(report)
        os._exit(0)

    tracer = make_tracer(finish)
    sys.settrace(tracer.trace)
    try:
        run()
    finally:
        sys.settrace(None)
    finish(tracer.report())


class StackAtLine:
    """Counts Python line events (``sys.settrace``); at the ``stop``-th it keeps the stack
    (innermost first, not assay's frames) and reports it at once."""

    def __init__(self, stop: int, finish: Callable[[bytes], None] | None = None) -> None:
        self.count = 0
        self.stop = stop
        self.finish = finish
        self.frames: list[Frame] = []

    def trace(self, frame, event, arg):  # noqa: ARG002 - the settrace signature
        if event == "call" and is_assay_code(frame.f_code, frame.f_back):
            return None  # assay's own lines are not the run's, as in the count (see counted_code)
        if event == "line":
            self.count += 1
            if self.count >= self.stop:
                self.frames = frames_from(frame)
                if self.finish is not None:
                    self.finish(self.report())
                sys.settrace(None)
                return None
        return self.trace

    def report(self) -> bytes:
        return json.dumps([asdict(f) for f in self.frames]).encode()


def frames_from(frame: Any) -> list[Frame]:
    """The frames from ``frame`` outwards that are not assay's, up to where assay's own begin."""
    captured: list[Frame] = []
    f = frame
    while f is not None and len(captured) < STACK_FRAMES:
        if is_assay_file(f.f_code.co_filename):
            if captured:
                break
        else:
            code = f.f_code
            captured.append(
                Frame(str(f.f_globals.get("__name__", "?")), code.co_qualname, code.co_filename, f.f_lineno)
            )
        f = f.f_back
    return captured


def stack_at_line(run: Callable[[], Any], at: int, timeout: float) -> list[Frame]:
    """The stack of ``run()`` at its ``at``-th line event (``[]`` if it never got there)."""
    try:
        raw = in_child(run, lambda finish: StackAtLine(at, finish), timeout)
    except TimedOut:
        return []
    try:
        return [Frame(**f) for f in json.loads(raw)] if raw else []
    except (ValueError, TypeError):
        return []


class ServedChild:
    """A child forked from the worker that serves its requests over two pipes until EOF.

    Forked at the first request (:meth:`_start`), it lives in the worker's process
    group and dies with the worker; :meth:`close` ends it by EOF or by its pid.
    Subclasses say what it serves (:meth:`_serve`) and name its sandbox folder.
    """

    #: Prefix of the child's own sandbox folder (its runs overlap the worker's, whose files it must not meet).
    folder_prefix = "child-"

    def __init__(self) -> None:
        self.pid: int | None = None
        self._requests = self._replies = -1
        # A process the worker forks later (the target's own child, which may linger) must
        # not hold the worker's ends of the pipes: the served child would never see EOF.
        os.register_at_fork(after_in_child=self._forget)

    def close(self, kill: bool = False) -> None:
        """End the child: EOF on its requests (it leaves), or SIGKILL by its pid."""
        if self.pid is None:
            return
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        close_quietly(self._requests, self._replies)
        end_child(self.pid, 0.0 if kill else EXIT_GRACE)
        self.pid = None

    def _forget(self) -> None:
        """In a process forked from the worker: close the worker's ends of the pipes."""
        if self.pid is not None:
            close_quietly(self._requests, self._replies)
            self.pid = None

    def _start(self) -> None:
        # Never fds 1 and 2, which a target may have closed: it would close these pipes next.
        requests_read, requests_write = procs.pipe()
        replies_read, replies_write = procs.pipe()
        pid = forking.fork()  # the child dies with the worker
        if pid == 0:  # pragma: no cover - the child serves until EOF, then leaves without cleanup
            try:
                os.close(requests_write)
                os.close(replies_read)
                # Nor the child's: a process the target forks here must not answer or hold them.
                os.register_at_fork(after_in_child=lambda: close_quietly(requests_read, replies_write))
                own_output()
                if sandbox.installed():
                    sandbox.enter(tempfile.mkdtemp(prefix=self.folder_prefix, dir=os.getcwd()))
                self._serve(requests_read, replies_write)
            finally:
                os._exit(0)
        os.close(requests_read)
        os.close(replies_write)
        self.pid, self._requests, self._replies = pid, requests_write, replies_read

    def _serve(self, requests: int, replies: int) -> None:  # pragma: no cover - runs in the child
        raise NotImplementedError


class CountingChild(ServedChild):
    """A forked child that counts the line events and loop turns of runs, one input at a time.

    Forking for every counted case cost 1-3 ms (page tables, then copy-on-write
    faults in both processes): on a cheap target, a third of a campaign's time at
    one count per 1,024 cases.  This child is forked at the first count and serves
    the counts after it: the worker writes an input, the child runs it traced and
    answers with its count.  Its state is the worker's at the fork plus the counted
    runs since, a function of the schedule like the worker's own.  It is replaced
    when it dies (count 0), runs past the timeout (killed by its pid; count
    ``cap``) or reaches ``cap`` (it answers and leaves without finishing the run).
    It lives in the worker's process group and dies with the worker.
    """

    folder_prefix = "count-"

    def __init__(self, run_input: Callable[[bytes], Any], cap: int) -> None:
        super().__init__()
        self.run_input = run_input
        self.cap = cap
        self._deadline: float | None = None  # set while a submitted count is not yet collected

    @property
    def pending(self) -> bool:
        """Whether a count was submitted and not yet collected."""
        return self._deadline is not None

    def count(self, data: bytes, timeout: float) -> int:
        """Line events and loop turns of one run of ``data`` (``cap`` at most, and when it timed out; 0 when the child died)."""
        self.submit(data, timeout)
        return self.collect()

    def submit(self, data: bytes, timeout: float) -> None:
        """Hand ``data`` to the child and return at once; :meth:`collect` waits for its count.

        The child counts on another core while the worker goes on, and ``timeout``
        runs from now.  One count at a time: collect before submitting again.
        """
        if self._deadline is not None:
            raise RuntimeError("CountingChild.submit: the previous count was not collected")
        if self.pid is None:
            self._start()
        try:
            write_all(self._requests, len(data).to_bytes(8, "big") + data)
        except OSError:
            self.close()  # the child is gone: collect() sees no pid and counts 0
        self._deadline = time.monotonic() + timeout

    def collect(self) -> int:
        """The submitted run's line events, as :meth:`count` returns them."""
        deadline, self._deadline = self._deadline, None
        if deadline is None:
            raise RuntimeError("CountingChild.collect: nothing was submitted")
        if self.pid is None:  # the request could not be written
            return 0
        reply = b""
        while len(reply) < 8:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._replies], [], [], left)[0]:
                self.close(kill=True)
                return self.cap
            chunk = os.read(self._replies, 8 - len(reply))
            if not chunk:
                self.close()
                return 0
            reply += chunk
        lines = int.from_bytes(reply, "big")
        if lines >= self.cap:  # the child left at the cap
            self.close()
        return lines

    def close(self, kill: bool = False) -> None:
        """End the child (see :meth:`ServedChild.close`); a count out is dropped."""
        self._deadline = None
        super().close(kill)

    def _serve(self, requests: int, replies: int) -> None:  # pragma: no cover - runs in the child
        def finish() -> None:
            write_all(replies, self.cap.to_bytes(8, "big"))
            os._exit(0)

        # sys.monitoring LINE and JUMP events, not sys.settrace: no frame object per event,
        # and in C (when the twin is built) no Python call either; the same count either way.
        mon = sysmon.monitoring()
        tool = sysmon.claim_tool_id("assay-count")
        tally = (cmutate.LineTally if cmutate is not None else LineTally)(self.cap, finish)
        mon.register_callback(tool, mon.events.LINE, tally.hit)
        mon.register_callback(tool, mon.events.JUMP, tally.jump)
        mon.register_callback(tool, mon.events.PY_START, counted_code(tool))
        mon.set_events(tool, mon.events.PY_START)
        while True:
            data = read_framed(requests)
            if data is None:
                return
            tally.count = 0
            self.run_input(data)
            lines = tally.count
            write_all(replies, lines.to_bytes(8, "big"))


def counted_code(tool: int) -> Callable[[Any, int], Any]:
    """A ``PY_START`` callback that turns on LINE and JUMP events for the code a run starts,
    unless it is assay's own.

    The count is a feature (its cost class), so it must be the target's alone: counting
    the lines of assay's own frames around the target (``execute.run``, the feedback's
    activation) made the campaign depend on how assay's code is written (two lines more in
    ``execute.run`` moved a cost class boundary, and a maze's schedule with it).  The choice
    is made once per code object (``DISABLE`` stops its ``PY_START`` events), so counted
    events need no check of their own.
    """
    mon = sysmon.monitoring()
    counted = mon.events.LINE | mon.events.JUMP

    def started(code: Any, offset: int) -> Any:  # noqa: ARG001 - the PY_START signature
        if not is_assay_code(code, sys._getframe(1).f_back):
            mon.set_local_events(tool, code, counted)
        return mon.DISABLE

    return started


def is_assay_code(code: Any, caller: Any) -> bool:
    """Whether ``code``, first started from frame ``caller``, is assay's own: from assay's
    files, or a method ``dataclasses`` generated (no file of its own) that assay's code
    calls (its results' ``__init__``)."""
    if is_assay_file(code.co_filename):
        return True
    generated = code.co_filename.startswith("<") and code.co_qualname.startswith("__create_fn__.")
    return generated and caller is not None and is_assay_file(caller.f_code.co_filename)


class LineTally:
    """``sys.monitoring`` LINE and JUMP callbacks that count line events and backward
    jumps (a loop's next turn); at ``cap`` it calls ``finish()``.

    The pure-Python twin of ``assay.gen._cmutate.LineTally``: the same count.
    """

    def __init__(self, cap: int, finish: Callable[[], None]) -> None:
        self.count = 0
        self.cap = cap
        self.finish = finish

    def hit(self, code: Any, line: int) -> None:  # noqa: ARG002 - the LINE callback's signature
        self.count += 1
        if self.count >= self.cap:
            self.finish()

    def jump(self, code: Any, offset: int, destination: int) -> None:  # noqa: ARG002 - JUMP's signature
        if destination < offset:
            self.hit(code, 0)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_framed(fd: int) -> bytes | None:
    """One request as :class:`ServedChild` users frame it (8-byte big-endian length, then the bytes), or ``None`` at EOF."""
    header = read_exact(fd, 8)
    return None if header is None else read_exact(fd, int.from_bytes(header, "big"))


def read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``, or ``None`` at EOF."""
    parts: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)
