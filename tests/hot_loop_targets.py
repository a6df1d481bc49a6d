"""A target for tests/test_hot_loop.py, in a file of its own: a target's default sources
are its file, and the test's wrapper around the hot loop must not be in scope."""

from __future__ import annotations

from pathlib import Path


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
