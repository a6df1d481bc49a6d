"""The parent's side of ``--jobs``: wait for every job's result, pass interrupts on, leave no job behind.

Jobs lead their own process groups (see :mod:`assay.engine.procs`), so a Ctrl-C
at the terminal reaches only the parent; the parent forwards SIGINT and SIGTERM
(both ``KeyboardInterrupt`` here) to every job as SIGTERM, and each job stops like
a single campaign would: its findings and corpus kept, its outcome marked
interrupted.  A second interrupt kills the jobs.  A job's death is noticed by its
pid, not by the end of its pipe.
"""

from __future__ import annotations

import signal
from typing import Any

from assay.core import interrupts
from assay.engine import isolate, procs

#: Seconds between looks at a job that has not sent its result yet.
POLL = 0.05


def collect(channels: list[tuple[int, Any]]) -> tuple[list[Any], list[str]]:
    """Each job's result (in order) and the descriptions of jobs that failed.

    ``channels`` are ``(pid, reader)`` pairs from :func:`isolate.fork_with_pipe`.
    A job that the forwarded interrupt stopped before it could start contributes
    nothing; if that is every job, ``KeyboardInterrupt`` is raised.
    Every job is reaped (and its process group ended) before this returns or raises.
    """
    results: list[Any] = []
    errors: list[str] = []
    pending = list(channels)
    interrupted = False
    try:
        while pending:
            pid, reader = pending[0]
            try:
                got = _wait_one(pid, reader, not interrupted)
            except KeyboardInterrupt:
                if interrupted:
                    raise  # a second interrupt: the finally below kills every job
                interrupted = True
                for p, _ in pending:
                    _signal(p, signal.SIGTERM)
                continue
            pending.pop(0)
            reader.close()
            procs.reap_group(pid, kill=False)
            if isinstance(got, isolate.ChildFailure) and got.interrupted and interrupted:
                continue  # the forwarded interrupt reached the job before it could start: nothing to keep
            if isinstance(got, isolate.ChildFailure):
                errors.append(f"job process {pid} failed:\n{got.traceback}")
            elif got is None:
                errors.append(f"job process {pid} died without a result (see its traceback above)")
            else:
                results.append(got)
    finally:
        for pid, reader in pending:
            reader.close()
            procs.reap_group(pid)
    if interrupted and not results and not errors:
        raise KeyboardInterrupt  # every job was stopped before it had anything to report
    return results, errors


def _wait_one(pid: int, reader: Any, watch_interrupts: bool) -> Any:
    """The job's one message, or ``None`` once it has exited without sending one.

    With ``watch_interrupts``, an interrupt whose ``KeyboardInterrupt`` was swallowed
    (see :mod:`assay.core.interrupts`) is raised here.
    """
    while True:
        if watch_interrupts:
            interrupts.raise_if_requested()
        if reader.poll(POLL):
            try:
                return reader.recv()
            except (EOFError, OSError):
                pass
        if procs.exited(pid):
            if reader.poll(0):
                try:
                    return reader.recv()
                except (EOFError, OSError):
                    return None
            return None


def _signal(pid: int, signum: int) -> None:
    try:
        import os

        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def abandon(channels: list[tuple[int, Any]]) -> None:
    """Kill and reap jobs already started (starting the others failed or was interrupted)."""
    for pid, reader in channels:
        reader.close()
        procs.reap_group(pid)
