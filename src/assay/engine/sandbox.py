"""The target sandbox: a PEP 578 audit hook that refuses dangerous side effects.

A campaign worker calls :func:`install` once (audit hooks cannot be removed, and
the worker is a throwaway process); :func:`arm` and :func:`disarm` bracket each
call into the target, so assay's own code is never refused.  While armed, the hook
refuses, by raising :class:`SandboxRefusal`:

* ``subprocess``: process creation (``subprocess.Popen``, ``os.system``,
  ``os.exec*``, ``os.posix_spawn*``, ``os.spawn*``, ``os.fork``, ``os.forkpty``);
  and ``_posixsubprocess.fork_exec`` (which CPython does not audit: :func:`enter`
  wraps it so that it fires an event of that name);
* ``network``: sockets that connect, bind or send (``sendto``, ``sendmsg``) to
  anything but loopback (or a Unix path);
* ``write``: opening a file for writing, and deleting, renaming, truncating,
  linking or creating paths, anywhere outside the worker's own temp directory
  (its current directory) and ``os.devnull``.  A path relative to a ``dir_fd`` is
  resolved through ``/proc/self/fd``; ``os.open`` does not report its ``dir_fd``, so
  a relative ``os.open`` write is refused unless its call site visibly passes none;
  a hard link's source counts as a written path (a link to an outside file is a way
  to write it).

A target allows a class with ``allow=["subprocess", "network", "write:<path>"]``.
The first refusal of a run is remembered (event, the target's frame) even if the
target catches the exception, and becomes a ``safety`` finding keyed by both.

The hook is process-wide: between armed windows only the thread that runs assay's
own code (the one that called :func:`install`) is let through; a thread the target
started is judged as if armed, with the last target's allowance, and its refusal
is reported by the next :func:`disarm`.

This is a tripwire, not a security boundary: native code, ``ctypes`` and direct
system calls bypass audit hooks entirely.  :mod:`assay.engine.landlock` is the
opt-in kernel boundary for writes.
"""

from __future__ import annotations

import _posixsubprocess
import ipaddress
import opcode
import os
import socket
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from threading import get_ident
from types import FrameType
from typing import Any

from assay.core.allowance import Allowance
from assay.core.location import ASSAY_REAL_DIR
from assay.engine import landlock
from assay.gen.accelerated import cmutate

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
        "_posixsubprocess.fork_exec",
    }
)
#: Events that carry a socket and an address the socket reaches (``None``: a connected socket).
_ADDRESS_EVENTS = frozenset({"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"})
#: Path-changing events: (argument position of a path, position of its ``dir_fd`` or None).
_PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),),
    "os.rmdir": ((0, 1),),
    "os.rename": ((0, 2), (1, 3)),
    "os.truncate": ((0, None),),
    "os.mkdir": ((0, 2),),
    "os.symlink": ((1, 2),),
    "os.link": ((0, 2), (1, 3)),  # the source too: a hard link to an outside file writes it
    "os.chmod": ((0, 2),),
    "os.chown": ((0, 3),),
    "os.utime": ((0, 3),),
    "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),),
    "shutil.rmtree": ((0, 1),),
    "shutil.move": ((0, None), (1, None)),
    "shutil.copyfile": ((1, None),),
    "os.mkfifo": ((0, 2),),  # CPython 3.12 audits neither of these two; listed for later versions
    "os.mknod": ((0, 3),),
}
#: Every event :func:`_judge` may refuse; the hook is called for these only (see :func:`install`).
JUDGED_EVENTS = frozenset({*_PROCESS_EVENTS, *_ADDRESS_EVENTS, "open", *_PATH_EVENTS})
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

    __slots__ = ("installed", "armed", "owner", "root", "allow", "refusal")

    def __init__(self) -> None:
        self.installed = False
        self.armed = False
        self.owner = 0  # the thread that runs assay's own code (and the target's calls)
        self.root = ""
        self.allow = Allowance()
        self.refusal: Refusal | None = None


_STATE = _State()
#: Threads inside the hook now (its own calls may fire audit events: not judged again).
_BUSY: set[int] = set()


def install(root: str) -> None:
    """Add the audit hook to this process (once); ``root`` is the directory writes may go to.

    The calling thread becomes the one whose events pass between armed windows."""
    _STATE.root = os.path.realpath(root)
    _STATE.owner = get_ident()
    if not _STATE.installed:
        _STATE.installed = True
        _audit_fork_exec()
        # A Python audit hook is called for every event of the process, about a microsecond
        # each even when it returns at once; the worker's own bookkeeping raises thousands
        # (each comparison-twin swap is an object.__setattr__).  The C filter calls it for
        # the judged events only; without the extension every event reaches it.
        add = getattr(cmutate, "add_audit_hook", None)  # an older build lacks it
        if add is not None:
            add(_hook, sorted(JUDGED_EVENTS))
        else:
            sys.addaudithook(_hook)


def _audit_fork_exec() -> None:
    """Make ``_posixsubprocess.fork_exec`` (unaudited in CPython) fire an audit event."""
    original = _posixsubprocess.fork_exec
    if getattr(original, "__wrapped__", None) is not None:
        return

    def fork_exec(*args: Any) -> int:
        sys.audit("_posixsubprocess.fork_exec", *args[:2])
        return original(*args)

    fork_exec.__wrapped__ = original  # type: ignore[attr-defined]
    _posixsubprocess.fork_exec = fork_exec
    if getattr(subprocess, "_fork_exec", None) is original:
        subprocess._fork_exec = fork_exec  # type: ignore[attr-defined]


def enter(workdir: str, allow: Allowance | None = None) -> None:
    """In a forked child: work in ``workdir``, the one place the sandbox lets it write.

    Given the target's ``allow`` and with ``ASSAY_LANDLOCK=1``, the kernel is also told
    to refuse this process every write outside ``workdir`` and ``allow``'s paths
    (:mod:`assay.engine.landlock`); a child of such a child inherits the rule set."""
    os.chdir(workdir)
    os.environ["TMPDIR"] = workdir  # tempfile in a target writes where the sandbox allows it
    tempfile.tempdir = workdir
    sys.dont_write_bytecode = True  # importing inside a target must not count as a write
    install(workdir)
    if allow is not None and landlock.enabled():
        landlock.restrict((_STATE.root, *allow.write_paths))


def installed() -> bool:
    """Whether this process runs under the sandbox."""
    return _STATE.installed


def state() -> _State:
    """The state :func:`arm` and :func:`disarm` set (for the worker's C hot loop)."""
    return _STATE


def arm(allow: Allowance) -> None:
    """Start refusing (a target call begins).  A refusal made since the last
    :func:`disarm` (a thread the target started) is kept for the next one."""
    _STATE.allow = allow
    _STATE.armed = _STATE.installed


def disarm() -> Refusal | None:
    """Stop refusing (the target call ended); the first refusal made while armed."""
    _STATE.armed = False
    refusal, _STATE.refusal = _STATE.refusal, None
    return refusal


def _hook(event: str, args: tuple) -> None:
    me = get_ident()
    if (not _STATE.armed and me == _STATE.owner) or me in _BUSY:
        return
    _BUSY.add(me)
    try:
        found = _judge(event, args)
        if found is None:
            return
        kind, detail = found
        refusal = Refusal(event, kind, _target_frame(), detail)
        if _STATE.refusal is None:
            _STATE.refusal = refusal
    finally:
        _BUSY.discard(me)
    raise SandboxRefusal(
        f"assay's sandbox refused {event} ({detail}); allow it with allow=[{kind if kind != 'write' else 'write:<path>'!r}]"
    )


def _judge(event: str, args: tuple) -> tuple[str, str] | None:
    allow = _STATE.allow
    if event in _PROCESS_EVENTS:
        return None if allow.subprocess else ("subprocess", _describe(args))
    if event in _ADDRESS_EVENTS:
        if allow.network:
            return None
        sock, address = args[0], args[1]
        if address is None and event == "socket.sendmsg":
            return None  # a connected socket: its connect was judged
        return None if _local(sock, address) else ("network", f"address {address!r}")
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        if isinstance(path, int) or path is None:
            return None
        writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool((flags or 0) & _WRITE_FLAGS)
        if not writes:
            return None
        if mode is None and not os.path.isabs(os.fsdecode(path)) and _may_pass_dir_fd(sys._getframe(2)):
            return ("write", f"os.open of {path!r} relative to a dir_fd (its audit event does not say which)")
        return _path_check(path)
    positions = _PATH_EVENTS.get(event)
    if positions is not None:
        for i, fd_at in positions:
            if i < len(args) and not isinstance(args[i], int) and args[i] is not None:
                dir_fd = args[fd_at] if fd_at is not None and fd_at < len(args) else None
                found = _path_check(args[i], dir_fd if isinstance(dir_fd, int) else -1)
                if found is not None:
                    return found
    return None


_KW_NAMES = opcode.opmap.get("KW_NAMES", -1)  # 3.12: the keyword names of the next CALL
_LOAD_CONST = opcode.opmap["LOAD_CONST"]
_CALL = opcode.opmap["CALL"]
_CALL_KW = opcode.opmap.get("CALL_KW", -1)  # 3.13 on: CALL_KW after a LOAD_CONST of the names
_EXTENDED_ARG = opcode.opmap["EXTENDED_ARG"]


def _may_pass_dir_fd(frame: FrameType | None) -> bool:
    """Whether the call ``frame`` is making (a call of ``os.open``) may pass ``dir_fd``:
    False only when its bytecode shows a plain call whose keywords do not name it."""
    if frame is None:
        return True
    code, at = frame.f_code.co_code, frame.f_lasti
    if at < 0 or at >= len(code):
        return True
    op = code[at]
    if op == _CALL and (at < 2 or code[at - 2] != _KW_NAMES):
        return False  # no keywords at all (positional arguments cannot reach dir_fd)
    if op not in (_CALL, _CALL_KW) or at < 2 or code[at - 2] not in (_KW_NAMES, _LOAD_CONST):
        return True  # CALL_FUNCTION_EX (``**kwargs``) or anything unforeseen
    arg, back = code[at - 1], at - 2
    shift = 8
    while back >= 2 and code[back - 2] == _EXTENDED_ARG:
        back -= 2
        arg |= code[back + 1] << shift
        shift += 8
    names = frame.f_code.co_consts[arg] if arg < len(frame.f_code.co_consts) else None
    return not isinstance(names, tuple) or "dir_fd" in names


def _path_check(path: Any, dir_fd: int = -1) -> tuple[str, str] | None:
    try:
        name = os.fsdecode(path)
        if dir_fd >= 0 and not os.path.isabs(name):
            name = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
        real = os.path.realpath(name)
    except (TypeError, ValueError, OSError):
        return ("write", f"path {path!r} (dir_fd {dir_fd})" if dir_fd >= 0 else f"path {path!r}")
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
