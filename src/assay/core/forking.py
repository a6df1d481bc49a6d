"""The one way assay forks: every child dies with the process that forked it.

Every ``os.fork`` in assay goes through :func:`fork`, which asks Linux
(``prctl(PR_SET_PDEATHSIG)``) to SIGKILL the child when its parent dies, even when
the parent is SIGKILLed and has no chance to clean up, and makes the child leave
at once when its parent died before the request took effect.  A child forked by a
child (the tracing run of a hang, the counting child, a job's worker) is covered
too: the chain ends link by link from whichever process was killed.  It sits in
the lowest layer so that every layer that forks (the engine, mutation testing,
native runs as ``preexec_fn``) uses the same helper.
"""

from __future__ import annotations

import ctypes
import os
import signal
from typing import Any

#: ``prctl`` option that sets the signal sent to a process when its parent dies.
PR_SET_PDEATHSIG = 1

_LIBC: list[Any] = []


def libc() -> Any:
    """The C library (``None`` where it cannot be loaded); loaded once, before forking."""
    if not _LIBC:
        try:
            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        except OSError:
            _LIBC.append(None)
    return _LIBC[0]


def die_with_parent(parent: int | None = None) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``).

    With ``parent`` (the pid that forked us), a parent that died before the request
    took effect is noticed and this process exits at once.  Safe between ``fork``
    and ``exec`` (a ``preexec_fn``) once :func:`libc` has been loaded in the parent.
    """
    lib = libc()
    if lib is not None and hasattr(lib, "prctl"):
        lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(0)


def fork() -> int:
    """``os.fork()``, and in the child :func:`die_with_parent` before anything else runs.

    Returns what ``os.fork`` returns: 0 in the child, the child's pid in the parent.
    """
    libc()  # loaded before the fork, so that the child only calls it
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        die_with_parent(parent)
    return pid
