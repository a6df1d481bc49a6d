"""Crash isolation: forked children, their captured output, and how they died.

A child (a campaign worker, or a one-input replay) redirects its stdout and stderr
to a capture file, enables ``faulthandler`` so a fatal signal prints the Python
stack, limits its address space, and can be asked for its stack with ``SIGUSR2``
before it is killed for hanging.  :func:`death_verdict` turns an exit status plus
that output into a finding's verdict.
"""

from __future__ import annotations

import faulthandler
import os
import re
import resource
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Pipe

from assay.engine import execute
from assay.target import Target
from assay.verdict import ExceptionInfo, Frame, Verdict, frames_key

#: Seconds a child gets, after the soft timeout fired, before it is killed.
KILL_GRACE = 1.0
#: Most bytes of a capture file read back for a diagnostic.
TAIL = 256 * 1024

_ASSAY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_FRAME_LINE = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<name>\S+)')


def new_capture() -> str:
    fd, path = tempfile.mkstemp(prefix="assay-capture-", suffix=".log")
    os.close(fd)
    return path


def child_setup(capture_path: str, rss_limit_mb: int) -> None:
    """Runs first in a forked child: capture output, faulthandler, memory limit."""
    fd = os.open(capture_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    # The parent's sys.stdout/stderr may be capture objects (pytest) with no real fd.
    sys.stdout = open(1, "w", closefd=False, errors="replace")
    sys.stderr = open(2, "w", closefd=False, errors="replace")
    faulthandler.enable(file=2, all_threads=False)
    faulthandler.register(signal.SIGUSR2, file=2, all_threads=False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent owns Ctrl-C
    if rss_limit_mb > 0:
        limit = rss_limit_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):
            pass


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
        if os.path.abspath(file).startswith(_ASSAY_DIR):
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


def fork_with_pipe(body) -> tuple[int, object]:
    """Fork a child that runs ``body(writer)`` and always ends in ``os._exit``.

    Returns ``(pid, reader)``.  An exception in the child is printed to its stderr
    (flushed: ``os._exit`` skips that) and makes it exit with status 70; the child
    never returns into the parent's code.
    """
    reader, writer = Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            reader.close()
            body(writer)
        except BaseException:  # the parent judges the child by its exit status
            import traceback

            traceback.print_exc()
            code = 70
        finally:
            try:
                sys.stderr.flush()
            finally:
                os._exit(code)
    writer.close()
    return pid, reader


@dataclass
class IsolatedResult:
    verdict: Verdict | None
    output: str


def run_isolated(target: Target, data: bytes, timeout: float | None = None) -> IsolatedResult:
    """Run one input in a forked child: its verdict, even if the child dies or hangs."""
    timeout = target.timeout if timeout is None else timeout
    capture = new_capture()

    def child(writer) -> None:
        child_setup(capture, target.rss_limit_mb)
        verdict = execute.run_input(target, data, timeout=timeout)
        writer.send(verdict.to_json() if verdict else None)

    pid, reader = fork_with_pipe(child)
    try:
        result, status, killed = _wait_child(pid, reader, timeout)
        output = read_tail(capture)
        if result is not _NOTHING:
            return IsolatedResult(Verdict.from_json(result) if result else None, output)
        return IsolatedResult(death_verdict(status, output, killed_for_timeout=killed, timeout=timeout), output)
    finally:
        reader.close()
        os.unlink(capture)


_NOTHING = object()


def _wait_child(pid: int, reader, timeout: float):
    """Wait for a one-shot child's message; kill it if it overstays."""
    deadline = time.monotonic() + timeout + KILL_GRACE + 1.0
    result = _NOTHING
    killed = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            kill_with_stack(pid)
            killed = True
            break
        if reader.poll(min(left, 0.05)):
            try:
                result = reader.recv()
            except EOFError:
                pass
            break
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if reader.poll(0):
                try:
                    result = reader.recv()
                except EOFError:
                    pass
            return result, status, False
    _, status = os.waitpid(pid, 0)
    return result, status, killed


def kill_with_stack(pid: int) -> None:
    """Ask ``pid`` for its Python stack (faulthandler on SIGUSR2), then SIGKILL it."""
    try:
        os.kill(pid, signal.SIGUSR2)
        time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
