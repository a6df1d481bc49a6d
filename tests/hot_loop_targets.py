"""Targets for tests/test_hot_loop.py and tests/test_schedule_digest.py, in a file of their
own: a target's default sources are its file, and the tests' wrappers must not be in scope."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from assay.engine import journal as jr, strays


def make_writer(path: Path):
    def writer(data: bytes) -> None:
        if data[:1] == b"w":  # a side effect the sandbox refuses (outside the worker's folder)
            path.write_bytes(data)

    return writer


def shallow(data: bytes) -> int:
    """Coverage that saturates at once: the campaign's counting backs off, its length limit rises."""
    if data[:1] == b"{":
        return 1
    return 0


#: What :func:`make_recorder` writes per scheduled case: phase, position, input length.
RECORD = struct.Struct("<BqI")


def make_recorder(path: Path, max_len: int):
    """Appends every scheduled case's (phase, position, input) to ``path``, and dies
    (``os._exit``) on inputs that start with ``!``: tests/test_schedule_digest.py
    recomputes the campaign's digest from the file.

    A scheduled case is one the worker's journal shows as the case running now, with
    this very input (not a shrink or replay, not the counting child's earlier input).
    The file is opened here, before the worker forks: its sandbox refuses to open files.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def recorder(data: bytes) -> int:
        journal = strays._state["journal"]  # armed in each worker (and its forks) only
        if journal is not None:
            _state, phase, position, sub, _started, running = journal.read()
            if sub == jr.CASE and running == data[: journal.capacity]:
                os.write(fd, RECORD.pack(phase, position, len(data)) + data)
        if data[:1] == b"!":
            os._exit(3)
        return len(data) > max_len // 2

    return recorder
