"""Crash isolation: forked children, their captured output, and how they died.

A child (a campaign worker, or a one-input replay) redirects its stdout and stderr
to a capture file, enables ``faulthandler`` so a fatal signal prints the Python
stack, limits its address space, and can be asked for its stack with ``SIGUSR2``
before it is killed for hanging.  :func:`death_verdict` turns an exit status plus
that output into a finding's verdict.
"""

from __future__ import annotations

import faulthandler
import fcntl
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from assay.core import forking, interrupts
from assay.core.errors import InternalError
from assay.core.location import is_assay_file
from assay.core.target import Target
from assay.core.verdict import ExceptionInfo, Frame, Verdict, frames_key
from assay.engine import execute, landlock, procs, sandbox
from assay.store.atomic import writer_alive

#: Seconds a child gets, after the soft timeout fired, before it is killed.
KILL_GRACE = 1.0
#: Most bytes of a capture file read back for a diagnostic.
TAIL = 256 * 1024
#: Lowest descriptor number of the private diagnostics channel (faulthandler's file):
#: above the handful a target may close (0-2, ``os.closerange(3, 256)``), so a target
#: that closes its stdio cannot silence the stack of a later crash.
DIAG_FD_MIN = 1000
#: Exit status of a child whose own (assay) code failed; it sends a :class:`ChildFailure` first.
INTERNAL_EXIT = 70

_FRAME_LINE = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<name>\S+)')


@dataclass(frozen=True)
class ChildFailure:
    """Sent by a forked child whose assay code raised: the traceback, for the parent to raise.

    ``interrupted`` is true when what escaped was a ``KeyboardInterrupt`` (an
    interrupt the parent forwarded arrived before the child could handle it).
    """

    traceback: str
    interrupted: bool = False


#: Prefixes of the temp files and folders a run makes for its children; the pid of the
#: process that made one follows, so that a later run can tell whose it is.
CAPTURE_PREFIX = "assay-capture-"
WORKDIR_PREFIX = "assay-work-"
_STALE_NAME = re.compile(rf"^(?:{CAPTURE_PREFIX}(?P<cpid>\d+)-.+\.log|{WORKDIR_PREFIX}(?P<wpid>\d+)-.+)$")


def new_capture() -> str:
    """A fresh capture file for one child's output (the caller deletes it)."""
    fd, path = tempfile.mkstemp(prefix=f"{CAPTURE_PREFIX}{os.getpid()}-", suffix=".log")
    os.close(fd)
    return path


#: This interpreter runs with AddressSanitizer's runtime preloaded (the sanitized build of the C
#: twin, tests/native/asan_cmutate.sh): its shadow memory is terabytes of address space, so an
#: RLIMIT_AS memory limit would fail every later allocation; children run without one there.
_UNDER_ASAN = "libclang_rt.asan" in os.environ.get("LD_PRELOAD", "")


def child_setup(capture_path: str, rss_limit_mb: int) -> None:
    """Runs first in a forked child: capture output, faulthandler, memory limit.

    stdin becomes ``/dev/null`` (a child is not in the terminal's foreground group),
    and faulthandler writes to a private high descriptor, not fd 2, so a target
    that closes its stdio still leaves its crash stacks readable.
    """
    fd = os.open(capture_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        diag = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, DIAG_FD_MIN)
    except OSError:
        diag = 2
    os.close(fd)
    # The parent's sys.stdout/stderr may be capture objects (pytest) with no real fd.
    sys.stdout = open(1, "w", closefd=False, errors="replace")
    sys.stderr = open(2, "w", closefd=False, errors="replace")
    faulthandler.enable(file=diag, all_threads=False)
    faulthandler.register(signal.SIGUSR2, file=diag, all_threads=False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent owns Ctrl-C
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent ends children; no KeyboardInterrupt here
    interrupts.ignore_in_child()
    if rss_limit_mb > 0 and not _UNDER_ASAN:
        limit = rss_limit_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass


def new_workdir() -> str:
    """A private temp directory for one child: its cwd, and the one place the sandbox lets it write.

    Raises :class:`ConfigError` first if the Landlock boundary is asked for and missing."""
    landlock.check()
    return tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")


def remove_stale_temps(folder: str | None = None) -> list[str]:
    """Delete the capture files and work folders (in the temp folder) of assay processes
    that are gone, as a SIGKILLed run leaves them; their paths.

    Only names that carry their maker's pid are touched (older names without one are
    left alone), and only when no process has that pid.
    """
    folder = tempfile.gettempdir() if folder is None else folder
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        m = _STALE_NAME.match(entry.name)
        if m is None or writer_alive(int(m.group("cpid") or m.group("wpid"))):
            continue
        try:
            if m.group("wpid") and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            elif m.group("cpid") and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
            else:
                continue
        except FileNotFoundError:
            pass
        except OSError:
            continue  # not ours to delete after all (another user's, say)
        removed.append(entry.path)
    return removed


def remove_workdir(path: str) -> None:
    """Delete a child's temp directory and whatever the target left in it."""
    shutil.rmtree(path, ignore_errors=True)


def read_tail(path: str, start: int = 0) -> str:
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(start, size - TAIL))
            return fh.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def faulthandler_frames(text: str) -> list[Frame]:
    """Frames of the last stack faulthandler printed, innermost first.

    Only the frames below assay's own (the target and what it called) are kept:
    what called assay differs between a campaign, a replay and a test run, and
    must not change the signature.
    """
    block = text.rsplit("most recent call first):", 1)
    if len(block) < 2:
        return []
    frames = []
    for line in block[1].splitlines()[1:]:
        m = _FRAME_LINE.match(line)
        if not m:
            if line.strip() and not line.startswith(" "):
                break
            continue
        file = m.group("file")
        if is_assay_file(file):
            break  # above the target (or not in it at all): what called assay is not the bug
        frames.append(Frame(_module_of(file), m.group("name"), file, int(m.group("line"))))
    return frames


def _module_of(file: str) -> str:
    """The module name ``file`` was imported as (fork children share the parent's modules)."""
    real = os.path.realpath(file)
    for name, module in list(sys.modules.items()):
        mfile = getattr(module, "__file__", None)
        if mfile and os.path.realpath(mfile) == real:
            return name
    return os.path.splitext(os.path.basename(file))[0]


def death_verdict(status: int, output: str, *, killed_for_timeout: bool, timeout: float) -> Verdict:
    """The verdict for a child that died (``status`` from ``os.waitpid``)."""
    frames = faulthandler_frames(output)
    if killed_for_timeout:
        return execute.wedge_verdict_from_frames(list(reversed(frames)), timeout, output[-4000:])
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"SIG{signum}"
        what, detail = f"signal:{name}", f"worker killed by {name}"
    else:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
        what, detail = f"exit:{code}", f"worker exited with status {code} in the middle of an input"
    key = f"{what}@{frames_key(frames)}" if frames else what
    info = ExceptionInfo(type=what, message=detail, frames=tuple(frames), traceback=output[-4000:])
    return Verdict("crash", key, detail, info)


def fork_with_pipe(body) -> tuple[int, Connection[Any, Any]]:
    """Fork a child that runs ``body(writer)`` and always ends in ``os._exit``.

    Returns ``(pid, reader)``.  The child leads its own process group (end it and
    what it started with :func:`procs.reap_group`) and dies with its parent
    (``PR_SET_PDEATHSIG``).  Any process the child forks later closes its copy of
    ``writer`` at once, so only the child itself can write to the pipe.  An
    exception in the child is printed to its stderr, sent as a :class:`ChildFailure`
    and makes it exit with :data:`INTERNAL_EXIT`; the child never returns into the
    parent's code, and neither does a process it forked.
    """
    reader, writer = _pipe()
    pid = forking.fork()  # the child dies with this process
    if pid == 0:
        code = 0
        me = os.getpid()
        try:
            procs.own_group()
            reader.close()
            wfd = writer.fileno()
            os.register_at_fork(after_in_child=lambda: _close_quietly(wfd))
            body(writer)
        except BaseException as exc:  # the parent judges the child by its exit status
            import traceback

            text = traceback.format_exc()
            if os.getpid() == me:
                sys.stderr.write(text)
                try:
                    writer.send(ChildFailure(text, isinstance(exc, KeyboardInterrupt)))
                except BaseException:  # noqa: BLE001 - the pipe may be gone; the exit status says enough
                    pass
            code = INTERNAL_EXIT
        finally:
            if os.getpid() != me:
                os._exit(0)  # a process the body forked, unwinding into here: never run assay's code twice
            try:
                sys.stderr.flush()
            finally:
                os._exit(code)
    writer.close()
    procs.place_in_group(pid)
    return pid, reader


def _pipe() -> tuple[Connection[Any, Any], Connection[Any, Any]]:
    """A one-way ``multiprocessing`` pipe whose ends are never fds 0-2 (:func:`procs.above_stdio`):
    a worker whose target closed its stdout and stderr forks children too."""
    read_end, write_end = procs.pipe()
    return Connection(read_end, writable=False), Connection(write_end, readable=False)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


@dataclass
class IsolatedResult:
    verdict: Verdict | None
    output: str


def run_isolated(target: Target, data: bytes, timeout: float | None = None, room: int | None = None) -> IsolatedResult:
    """Run one input in a forked child: its verdict, even if the child dies or hangs.

    ``room`` is as for :func:`assay.engine.execute.run_input`.

    However this returns or raises (an interrupt included), the child and its
    process group are gone afterwards.
    """
    timeout = target.timeout if timeout is None else timeout

    def body(send: Callable[[Any], None]) -> None:
        verdict = execute.run_input(target, data, timeout=timeout, room=room)
        send(verdict.to_json() if verdict else None)

    result, status, killed, output = _in_target_child(target, body, timeout)
    if isinstance(result, ChildFailure):
        raise InternalError(f"a replay child of target {target.name!r} failed in assay's code:\n{result.traceback}")
    if result is not _NOTHING:
        return IsolatedResult(Verdict.from_json(result) if result else None, output)
    return IsolatedResult(death_verdict(status, output, killed_for_timeout=killed, timeout=timeout), output)


def call_isolated(target: Target, body: Callable[[Callable[[Any], None]], None], timeout: float) -> Any:
    """What ``body(send)`` sends from a child set up as :func:`run_isolated`'s (output
    captured, the sandbox entered, its own process group); ``None`` when it sends
    nothing, fails, dies or overstays ``timeout``.  The child is gone afterwards."""
    result, _status, _killed, _output = _in_target_child(target, body, timeout)
    return None if result is _NOTHING or isinstance(result, ChildFailure) else result


def _in_target_child(
    target: Target,
    body: Callable[[Callable[[Any], None]], None],
    timeout: float,
) -> tuple[Any, int, bool, str]:
    """``body(send)`` in a forked child with ``target``'s output capture, memory limit and
    sandbox: (what it sent or ``_NOTHING``, wait status, killed for the timeout, output).

    However this returns or raises, the child and its process group are gone afterwards.
    """
    capture = new_capture()
    workdir = new_workdir()

    def child(writer) -> None:
        child_setup(capture, target.rss_limit_mb)
        sandbox.enter(workdir, execute.allowance(target.allow))
        body(writer.send)

    pid, reader = fork_with_pipe(child)
    reaped = False
    try:
        result, status, killed = _wait_child(pid, reader, timeout)
        reaped = True
        return result, status, killed, read_tail(capture)
    finally:
        if not reaped:
            procs.reap_group(pid)
        reader.close()
        os.unlink(capture)
        remove_workdir(workdir)


_NOTHING = object()


def _wait_child(pid: int, reader, timeout: float):
    """Wait for a one-shot child's message and its exit (by pid); kill it if it overstays.

    Returns (message or ``_NOTHING``, wait status, killed for the timeout).  The
    child's process group is ended and the child reaped before this returns.
    """
    deadline = time.monotonic() + timeout + KILL_GRACE + 1.0
    result = _NOTHING
    killed = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            kill_with_stack(pid)
            killed = True
            break
        if result is _NOTHING and reader.poll(min(left, 0.05)):
            try:
                result = reader.recv()
            except (EOFError, OSError):
                result = _NOTHING
                procs.wait_exited(pid, min(left, 0.05))  # EOF: the child is exiting; its pid says when
        elif result is not _NOTHING:
            procs.wait_exited(pid, min(left, 0.05))
        if procs.exited(pid):
            if result is _NOTHING and reader.poll(0):
                try:
                    result = reader.recv()
                except (EOFError, OSError):
                    pass
            break
    status = procs.reap_group(pid, kill=killed)
    return result, status, killed


def kill_with_stack(pid: int) -> None:
    """Ask ``pid`` for its Python stack (faulthandler on SIGUSR2), then SIGKILL it."""
    try:
        os.kill(pid, signal.SIGUSR2)
        time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    procs.kill_group(pid)
