"""The opt-in kernel boundary for writes: a Landlock rule set in each sandboxed child.

With ``ASSAY_LANDLOCK=1`` in the environment, every child that runs a target under
the sandbox (campaign workers, isolated replays) restricts itself, right after it
enters its worker folder, with a Linux Landlock rule set: the kernel then refuses to
open files for writing, truncate, create, remove, rename or link paths anywhere but
the worker folder, the target's ``write:<path>`` allowances and ``/dev/null``.  The
rule set binds every thread of the child and everything it starts, cannot be lifted,
and holds for ``ctypes``, C extensions and raw system calls alike, none of which the
audit hook sees.  Descriptors opened before the restriction (the output capture, the
parent's pipe, the journal's shared memory) keep working.

Landlock needs Linux 5.13 or later with Landlock enabled (most distributions since
2022) and no privileges; it leaves reads, process creation and the network to the
audit hook.  When the switch is on and the kernel has no Landlock, :func:`check`
raises :class:`ConfigError` before any child starts: asked-for protection is never
silently missing.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from collections.abc import Iterable

from assay.core.errors import ConfigError

#: The environment switch.
ENV = "ASSAY_LANDLOCK"

# linux/landlock.h; the system call numbers are the same on every architecture.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER = 1 << 13  # ABI 2: links and renames across folders
_TRUNCATE = 1 << 14  # ABI 3
_FILE_RIGHTS = _WRITE_FILE | _TRUNCATE  # the rights a rule on a file (not a folder) may grant

_abi_cache: list[int] = []


def enabled() -> bool:
    """Whether the environment asks for the kernel boundary."""
    return os.environ.get(ENV, "") not in ("", "0")


def abi() -> int:
    """The kernel's Landlock ABI version; 0 without Landlock (or off Linux)."""
    if not _abi_cache:
        version = 0
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                libc.syscall.restype = ctypes.c_long
                version = max(0, libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION))
            except (OSError, AttributeError):
                version = 0
        _abi_cache.append(version)
    return _abi_cache[0]


def check() -> None:
    """In the parent, before a sandboxed child starts: fail loudly if the switch is on
    and the kernel cannot give what it asks for."""
    if enabled() and abi() < 1:
        raise ConfigError(
            f"{ENV}=1 asks for a Landlock boundary, but this kernel has none "
            "(Linux 5.13+ with Landlock enabled is needed); unset it or run elsewhere"
        )


def restrict(writable: Iterable[str]) -> None:
    """In a forked child: let this process (and all it starts) write only under ``writable``.

    Raises ``OSError`` when the kernel refuses the rule set."""
    version = abi()
    if version < 1:
        raise OSError(f"{ENV}: this kernel has no Landlock")
    handled = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    if version >= 2:
        handled |= _REFER
    if version >= 3:
        handled |= _TRUNCATE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    attr = ctypes.create_string_buffer(struct.pack("=Q", handled))
    ruleset = libc.syscall(_CREATE_RULESET, attr, ctypes.c_size_t(len(attr.raw)), 0)
    if ruleset < 0:
        raise _error("landlock_create_ruleset")
    try:
        for path in (*writable, os.devnull):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # an allowance naming a path that does not exist: nothing to open
            try:
                rights = handled if os.path.isdir(path) else handled & _FILE_RIGHTS
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd))
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0) < 0:
                    raise _error(f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            raise _error("prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) < 0:
            raise _error("landlock_restrict_self")
    finally:
        os.close(ruleset)


def _error(call: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"{call}: {os.strerror(errno)}")
