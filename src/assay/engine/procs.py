"""Process hygiene shared by every child assay forks.

Each child (campaign worker, ``--jobs`` job, one-input replay, mutant run) lives
in its own process group, so that it and everything it started can be killed
with one ``killpg``; on Linux it also asks the kernel (``PR_SET_PDEATHSIG``) to
SIGKILL it when its parent dies, even when the parent is SIGKILLed and has no
chance to clean up.  Death is detected by the child's pid (``waitid``), never by
the end of a pipe that a grandchild may have inherited.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import time

from assay.core import forking

#: Seconds :func:`reap_group` waits for a child to exit before it SIGKILLs the group.
REAP_GRACE = 5.0

#: The C library, loaded once before forking; and the parent-death request every fork makes
#: (both live in :mod:`assay.core.forking`, the one helper every ``os.fork`` goes through).
libc = forking.libc
die_with_parent = forking.die_with_parent


#: Lowest descriptor assay's own pipes use in a process that runs target code.
FIRST_PRIVATE_FD = 3


def above_stdio(fd: int) -> int:
    """``fd``, moved to :data:`FIRST_PRIVATE_FD` or above when it is 0, 1 or 2 (and closed there).

    A target that closes its stdout and stderr frees 1 and 2, and the next pipe
    assay opens in that process would take them; the target's next ``os.close(1)``
    would then close assay's pipe.  The new descriptor is close-on-exec, as
    Python's own are.
    """
    if fd >= FIRST_PRIVATE_FD:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FIRST_PRIVATE_FD)
    os.close(fd)
    return moved


def pipe() -> tuple[int, int]:
    """``os.pipe()`` whose two ends are never stdio's descriptors (:func:`above_stdio`)."""
    read_end, write_end = os.pipe()
    return above_stdio(read_end), above_stdio(write_end)


def own_group() -> None:
    """Make this process the leader of a new process group (children of it stay in it)."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass


def place_in_group(pid: int) -> None:
    """Parent side of :func:`own_group` (whichever runs first wins; both are harmless)."""
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did it, or is gone: both are fine


def kill_group(pid: int, signum: int = signal.SIGKILL) -> None:
    """Signal the process group led by ``pid`` (no error if it is gone)."""
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def exited(pid: int) -> bool:
    """True once child ``pid`` has exited; it stays a zombie (its group id stays reserved)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def wait_exited(pid: int, timeout: float) -> bool:
    """Wait at most ``timeout`` seconds for child ``pid`` to exit (it stays a zombie); True once it has.

    Returns as soon as the child exits: a pidfd becomes readable then.  Where there
    is none (not Linux, or a kernel before 5.3), it polls every millisecond.
    """
    if exited(pid):
        return True
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.001))
            if exited(pid):
                return True
        return exited(pid)
    try:
        select.select([fd], [], [], max(timeout, 0.0))
    finally:
        os.close(fd)
    return exited(pid)


def reap_group(pid: int, *, kill: bool = True) -> int:
    """Wait for child ``pid`` and end its whole process group; returns the wait status.

    The group is killed while the child is still a zombie, so its id cannot have been
    reused by an unrelated process.  With ``kill`` the child itself is SIGKILLed
    first (an abandoned child); otherwise it gets :data:`REAP_GRACE` seconds to exit.
    """
    if kill:
        kill_group(pid)
        _kill(pid)
    elif not wait_exited(pid, REAP_GRACE):
        kill_group(pid)
        _kill(pid)
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        return 0
    kill_group(pid)  # whatever the child started in its group ends with it
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
