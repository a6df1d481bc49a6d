"""The target sandbox: a PEP 578 audit hook that refuses dangerous side effects.

A campaign worker calls :func:`install` once (audit hooks cannot be removed, and
the worker is a throwaway process); :func:`arm` and :func:`disarm` bracket each
call into the target, so assay's own code is never refused.  While armed, the hook
refuses, by raising :class:`SandboxRefusal`:

* ``subprocess``: process creation (``subprocess.Popen``, ``os.system``,
  ``os.exec*``, ``os.posix_spawn*``, ``os.spawn*``, ``os.fork``, ``os.forkpty``);
* ``network``: sockets that connect or bind to anything but loopback (or a Unix path);
* ``write``: opening a file for writing, and deleting, renaming, truncating,
  linking or creating paths, anywhere outside the worker's own temp directory
  (its current directory) and ``os.devnull``.

A target allows a class with ``allow=["subprocess", "network", "write:<path>"]``.
The first refusal of a run is remembered (event, the target's frame) even if the
target catches the exception, and becomes a ``safety`` finding keyed by both.

This is a tripwire, not a security boundary: native code, ``ctypes`` and direct
system calls bypass audit hooks entirely.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from types import FrameType
from typing import Any

from assay.core.allowance import Allowance
from assay.core.location import ASSAY_REAL_DIR

_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
    }
)
#: Path-changing events, with the argument positions that hold paths.
_PATH_EVENTS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.mkdir": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
    "shutil.move": (0, 1),
    "shutil.copyfile": (1,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

_STDLIB = tuple(
    os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)


class SandboxRefusal(BaseException):
    """Raised inside a target by the audit hook (a ``BaseException``, so ``except Exception`` passes it on)."""


@dataclass(frozen=True)
class Refusal:
    """What the sandbox refused: the audit event, its class, the target's frame, a description."""

    event: str
    kind: str
    frame: str
    detail: str


class _State:
    """The sandbox's state in this process.  The worker's C hot loop sets ``allow``,
    ``refusal`` and ``armed`` exactly as :func:`arm` and :func:`disarm` do."""

    __slots__ = ("installed", "armed", "busy", "root", "allow", "refusal")

    def __init__(self) -> None:
        self.installed = False
        self.armed = False
        self.busy = False
        self.root = ""
        self.allow = Allowance()
        self.refusal: Refusal | None = None


_STATE = _State()


def install(root: str) -> None:
    """Add the audit hook to this process (once); ``root`` is the directory writes may go to."""
    _STATE.root = os.path.realpath(root)
    if not _STATE.installed:
        _STATE.installed = True
        sys.addaudithook(_hook)


def enter(workdir: str) -> None:
    """In a forked child: work in ``workdir``, the one place the sandbox lets it write."""
    os.chdir(workdir)
    os.environ["TMPDIR"] = workdir  # tempfile in a target writes where the sandbox allows it
    tempfile.tempdir = workdir
    sys.dont_write_bytecode = True  # importing inside a target must not count as a write
    install(workdir)


def installed() -> bool:
    """Whether this process runs under the sandbox."""
    return _STATE.installed


def state() -> _State:
    """The state :func:`arm` and :func:`disarm` set (for the worker's C hot loop)."""
    return _STATE


def arm(allow: Allowance) -> None:
    """Start refusing (a target call begins); forget any earlier refusal."""
    _STATE.allow = allow
    _STATE.refusal = None
    _STATE.armed = _STATE.installed


def disarm() -> Refusal | None:
    """Stop refusing (the target call ended); the first refusal made while armed."""
    _STATE.armed = False
    refusal, _STATE.refusal = _STATE.refusal, None
    return refusal


def _hook(event: str, args: tuple) -> None:
    if not _STATE.armed or _STATE.busy:
        return
    _STATE.busy = True
    try:
        found = _judge(event, args)
        if found is None:
            return
        kind, detail = found
        refusal = Refusal(event, kind, _target_frame(), detail)
        if _STATE.refusal is None:
            _STATE.refusal = refusal
    finally:
        _STATE.busy = False
    raise SandboxRefusal(
        f"assay's sandbox refused {event} ({detail}); allow it with allow=[{kind if kind != 'write' else 'write:<path>'!r}]"
    )


def _judge(event: str, args: tuple) -> tuple[str, str] | None:
    allow = _STATE.allow
    if event in _PROCESS_EVENTS:
        return None if allow.subprocess else ("subprocess", _describe(args))
    if event in ("socket.connect", "socket.bind"):
        if allow.network:
            return None
        sock, address = args[0], args[1]
        return None if _local(sock, address) else ("network", f"address {address!r}")
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        if isinstance(path, int) or path is None:
            return None
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
        return _path_check(path) if writes else None
    positions = _PATH_EVENTS.get(event)
    if positions is not None:
        for i in positions:
            if i < len(args) and not isinstance(args[i], int) and args[i] is not None:
                found = _path_check(args[i])
                if found is not None:
                    return found
    return None


def _path_check(path: Any) -> tuple[str, str] | None:
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return ("write", f"path {path!r}")
    if real == os.devnull:
        return None
    for base in (_STATE.root, *_STATE.allow.write_paths):
        if base and (real == base or real.startswith(base.rstrip(os.sep) + os.sep)):
            return None
    return ("write", f"path {real}")


def _local(sock: Any, address: Any) -> bool:
    if getattr(sock, "family", None) == getattr(socket, "AF_UNIX", object()):
        return True
    host = address[0] if isinstance(address, tuple) and address else address
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _describe(args: tuple) -> str:
    text = repr(args[:2]) if args else "()"
    return text if len(text) <= 200 else text[:197] + "..."


def _target_frame() -> str:
    """``module:qualname`` of the innermost frame in the target's own code (not assay's, not the stdlib's)."""
    frame: FrameType | None = sys._getframe(2)
    fallback = "?"
    while frame is not None:
        file = os.path.realpath(frame.f_code.co_filename)
        if not file.startswith(ASSAY_REAL_DIR):
            identity = f"{frame.f_globals.get('__name__', '?')}:{frame.f_code.co_qualname}"
            if fallback == "?":
                fallback = identity
            in_stdlib = file.startswith(_STDLIB) and "site-packages" not in file
            if not in_stdlib and not file.startswith("<"):
                return identity
        frame = frame.f_back
    return fallback
