"""One supervised libFuzzer process.

libFuzzer runs bare, in its own session (process group), writing to a log file; the
supervisor only waits for it, so supervision costs no executions.  Past the
supervising deadline the whole group is killed with ``SIGKILL`` and the run is an
infrastructure failure.  A Ctrl-C (or SIGTERM turned into one) is passed on as
``SIGINT`` to the group, which lets libFuzzer print its final stats, and the group is
killed if it does not stop within :data:`INTERRUPT_GRACE` seconds.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from assay.core import forking

#: Seconds past a run's own time limit before the supervisor kills its process group.
DEADLINE_GRACE = 60.0
#: Supervising deadline (seconds) of a run bounded only by a case cap.
CASES_DEADLINE = 3600.0
#: Seconds libFuzzer gets to stop after SIGINT before its group is killed.
INTERRUPT_GRACE = 5.0
#: Sanitizer options that make reports complete and signatures stable.
ASAN_OPTIONS = "dedup_token_length=3:symbolize=1:handle_abort=1:allocator_may_return_null=0"
UBSAN_OPTIONS = "print_stacktrace=1:report_error_type=1:halt_on_error=1:symbolize=1"

#: Seconds between progress reports of a running libFuzzer.
PROGRESS_EVERY = 1.0
#: Bytes at the end of the log searched for libFuzzer's status line.
PROGRESS_TAIL = 4096

_STAT = re.compile(r"^stat::(?P<name>\w+):\s*(?P<value>\d+)", re.M)
_PROGRESS = re.compile(r"^#(?P<units>\d+)\s+\w+.*?cov: (?P<cov>\d+) ft: (?P<ft>\d+)", re.M)
_WRITTEN = re.compile(r"Test unit written to (?P<path>.+)$", re.M)


def sanitizer_env(
    *, embed_python: bool, symbolizer: str | None, detect_leaks: bool | None = None, symbolize: bool = True
) -> dict[str, str]:
    """The environment of a harness run: ours over the caller's sanitizer options.

    Leak detection is off for harnesses that embed CPython (the interpreter keeps
    memory until exit by design), on otherwise.  ``symbolize=False`` (campaign runs,
    whose failures are replayed symbolized) leaves stacks as module offsets.
    """
    env = dict(os.environ)
    leaks = (not embed_python) if detect_leaks is None else detect_leaks
    asan = ASAN_OPTIONS + f":detect_leaks={int(leaks)}"
    env["ASAN_OPTIONS"] = asan + (":" + os.environ["ASAN_OPTIONS"] if os.environ.get("ASAN_OPTIONS") else "")
    env["UBSAN_OPTIONS"] = UBSAN_OPTIONS
    if not symbolize:  # last, so that it wins over symbolize=1 above and the caller's options
        env["ASAN_OPTIONS"] += ":symbolize=0"
        env["UBSAN_OPTIONS"] += ":symbolize=0"
    if symbolizer:
        env["ASAN_SYMBOLIZER_PATH"] = symbolizer
    if embed_python:
        env["PYTHONMALLOC"] = "malloc"  # so ASan sees every object allocation
    return env


@dataclass
class RunResult:
    """What one libFuzzer process did."""

    argv: list[str]
    returncode: int | None
    elapsed: float
    log: str
    killed: bool = False
    interrupted: bool = False
    stats: dict[str, int] = field(default_factory=dict)
    written: Path | None = None

    @property
    def units(self) -> int:
        return self.stats.get("number_of_executed_units", 0)

    @property
    def coverage(self) -> tuple[int, int]:
        """(``cov``, ``ft``) of libFuzzer's last status line."""
        found = _PROGRESS.findall(self.log)
        return (int(found[-1][1]), int(found[-1][2])) if found else (0, 0)


def parse_stats(log: str) -> dict[str, int]:
    """``stat::name: value`` lines of ``-print_final_stats=1``."""
    return {m.group("name"): int(m.group("value")) for m in _STAT.finditer(log)}


def status_line(log_path: str | os.PathLike[str]) -> str | None:
    """libFuzzer's latest ``#N ... cov: ... exec/s: ...`` line in a log being written."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - PROGRESS_TAIL))
            tail = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = [line for line in tail.splitlines() if line.startswith("#") and "cov:" in line]
    return lines[-1].strip() if lines else None


def run_fuzzer(
    binary: str | os.PathLike[str],
    args: list[str],
    *,
    env: dict[str, str],
    log_path: str | os.PathLike[str],
    deadline: float,
    cwd: str | os.PathLike[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> RunResult:
    """Run ``binary args`` in a new session until it exits or ``deadline`` seconds pass.

    ``progress``, when given, gets libFuzzer's latest status line about every
    :data:`PROGRESS_EVERY` seconds (read from the log file; libFuzzer is not slowed).
    """
    argv = [str(binary), *args]
    forking.libc()  # loaded here: the preexec_fn, run between fork and exec, only calls it
    started = time.monotonic()
    killed = interrupted = False
    with open(log_path, "w+b") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=forking.die_with_parent if sys.platform == "linux" else None,
        )
        try:
            rc: int | None = None
            while rc is None:
                left = deadline - (time.monotonic() - started)
                try:
                    rc = proc.wait(timeout=max(0.0, min(left, PROGRESS_EVERY) if progress else left))
                except subprocess.TimeoutExpired:
                    if time.monotonic() - started < deadline:
                        line = status_line(log_path)
                        if line and progress:
                            progress(line)
                        continue
                    killed = True
                    _kill(proc)
                    rc = proc.returncode
        except KeyboardInterrupt:
            interrupted = True
            _interrupt(proc)
            rc = proc.returncode
        finally:
            if proc.returncode is None:
                _kill(proc)
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    written = _WRITTEN.findall(text)
    result = RunResult(
        argv,
        rc,
        time.monotonic() - started,
        text,
        killed,
        interrupted,
        parse_stats(text),
        Path(written[-1].strip()) if written else None,
    )
    if interrupted:
        raise NativeInterrupted(result)
    return result


class NativeInterrupted(KeyboardInterrupt):
    """Ctrl-C during a libFuzzer run; carries the partial :class:`RunResult`."""

    def __init__(self, result: RunResult) -> None:
        super().__init__()
        self.result = result


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _interrupt(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=INTERRUPT_GRACE)
    except subprocess.TimeoutExpired:
        pass
    _kill(proc)
