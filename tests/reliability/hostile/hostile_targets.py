"""Hostile targets for assay's reliability tests: they fork, spawn, close stdio, lie in __str__."""

from __future__ import annotations

import ctypes
import mmap
import os
import socket
import subprocess
import time

import assay


@assay.target(max_len=64, timeout=5)
def hostile_grow(data: bytes) -> None:
    """Grows the corpus steadily (one feature per two-byte prefix) and never fails."""
    assay.feature("prefix", data[:2])
    assay.feature("len", len(data))


@assay.target(max_len=16, allow=["subprocess"], seeds=[b"p"])
def hostile_popen(data: bytes) -> None:
    """Starts `sleep 300` and never waits for it (allowed; longer than any bounded wait of the tests)."""
    if data[:1] == b"p":
        subprocess.Popen(["sleep", "300"])


@assay.target(max_len=16)
def hostile_popen_refused(data: bytes) -> None:
    """Starts a process without allow=["subprocess"]: a safety finding."""
    subprocess.Popen(["true"])


@assay.target(max_len=16)
def hostile_system_refused(data: bytes) -> None:
    os.system("true")


@assay.target(max_len=16, allow=["subprocess"])
def hostile_fork_background(data: bytes) -> None:
    """Forks a background child that holds every inherited descriptor, then dies with exit 3 on b'x'."""
    if os.fork() == 0:
        time.sleep(20)
        os._exit(0)
    if data[:1] == b"x":
        os._exit(3)


#: Forks made by hostile_fork_returns in all processes (shared memory, inherited by every fork).
_FORKS = mmap.mmap(-1, 8)
#: At most this many: if assay ever lets a returning child run its loop again, the test
#: fails instead of turning into a fork bomb on a shared machine.
MAX_FORKS = 64


@assay.target(max_len=16, allow=["subprocess"])
def hostile_fork_returns(data: bytes) -> None:
    """Forks, and the child returns from the target instead of exiting."""
    count = int.from_bytes(_FORKS[:8], "little")
    if count >= MAX_FORKS:
        return
    _FORKS[:8] = (count + 1).to_bytes(8, "little")
    os.fork()


@assay.target(max_len=16)
def hostile_keyboard_interrupt(data: bytes) -> None:
    if data[:1] == b"k":
        raise KeyboardInterrupt


class LyingError(Exception):
    def __str__(self) -> str:
        raise SystemExit(4)


@assay.target(max_len=16)
def hostile_str_exit(data: bytes) -> None:
    if data[:1] == b"s":
        raise LyingError()


@assay.target(max_len=16)
def hostile_close_stdio_segv(data: bytes) -> None:
    """Closes its stdout and stderr, then segfaults: one deterministic signature."""
    os.close(1)
    os.close(2)
    ctypes.string_at(0)


@assay.target(max_len=16)
def hostile_write_outside(data: bytes) -> None:
    with open(os.path.join(os.environ.get("ASSAY_HOSTILE_OUT", "/tmp"), "assay-hostile-written"), "w") as fh:
        fh.write("x")


@assay.target(max_len=16)
def hostile_write_cwd(data: bytes) -> None:
    with open("scratch.txt", "w") as fh:
        fh.write("fine: the worker's own folder")
    os.remove("scratch.txt")


@assay.target(max_len=16)
def hostile_connect(data: bytes) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(0.2)
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed
    except OSError:
        pass
    finally:
        s.close()


@assay.target(max_len=16)
def hostile_loopback(data: bytes) -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
    finally:
        s.close()


@assay.target(max_len=16)
def hostile_swallow(data: bytes) -> None:
    """Catches the refusal (even as BaseException) and returns normally: still a finding."""
    try:
        os.system("true")
    except BaseException:  # noqa: BLE001
        pass


def _recurse(n: int) -> int:
    return _recurse(n + 1) + 1


@assay.target(max_len=16)
def hostile_recursion(data: bytes) -> None:
    _recurse(0)


def _bug_a(data: bytes) -> None:
    raise ValueError("a")


def _bug_b(data: bytes) -> None:
    raise KeyError("b")


@assay.target(max_len=64)
def hostile_findings(data: bytes) -> None:
    """Grows the corpus and finds two bugs (so shrinking and artifact writes happen during a kill)."""
    assay.feature("prefix", data[:2])
    if len(data) > 4 and data[0] == data[1]:
        (_bug_a if data[2] % 2 else _bug_b)(data)
