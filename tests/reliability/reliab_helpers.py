"""Helpers of the reliability tests: the hostile project, processes by session, bounded waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HOSTILE = Path(__file__).resolve().parent / "hostile"

#: Seconds a test waits for processes to disappear (bounded wait, not a timing assertion).
GONE_WAIT = 20.0


def hostile_registry():
    from assay.core.config import load_project
    from assay.harness.discovery import load_targets

    return load_targets(load_project(HOSTILE))


def start_assay(*args: str, **kw) -> subprocess.Popen:
    """``assay ...`` in a new session (its sid is its pid), so every descendant can be found by sid."""
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,
    )


def run_assay(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    proc = start_assay(*args)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        kill_session(proc.pid)
        proc.wait()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def session_members(sid: int) -> list[int]:
    """Pids of live (not zombie) processes in session ``sid``, from /proc."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            found.append(int(name))
    return found


def wait_gone(sid: int, wait: float = GONE_WAIT) -> list[int]:
    """Wait (bounded) until session ``sid`` is empty; the pids still there at the end."""
    deadline = time.monotonic() + wait
    while True:
        left = session_members(sid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def kill_session(sid: int) -> None:
    """Clean-up after a failed test: SIGKILL every process of the session, by pid."""
    for pid in session_members(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_for(predicate, wait: float = 120.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
