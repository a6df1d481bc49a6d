"""Atomic file writes: temp file in the same folder, fsync, rename, fsync folder.

A process killed at any point leaves either the old file, the new file, or a
temporary file named ``.tmp-<writer pid>-*``; never a half file under a real name.
:func:`remove_stale` deletes the temporary files whose writer is gone.

Permissions follow the umask, as for any tool: files ``0666 & ~umask``, folders
``0777 & ~umask``; only ``private=True`` files (captured target output, which
may hold secrets the target printed) are ``0600``.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Prefix of every temporary name assay writes (followed by the writer's pid and a dash).
TMP_PREFIX = ".tmp-"
_TMP_NAME = re.compile(r"^\.tmp-(\d+)-")


def tmp_prefix() -> str:
    """The temporary-name prefix of this process: ``.tmp-<pid>-``."""
    return f"{TMP_PREFIX}{os.getpid()}-"


def umask() -> int:
    """The process umask (read without changing it for longer than a moment)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def writer_pid(name: str) -> int | None:
    """The pid in an assay temporary name, or ``None`` if ``name`` is not one."""
    m = _TMP_NAME.match(name)
    return int(m.group(1)) if m else None


def writer_alive(pid: int) -> bool:
    """Whether process ``pid`` still exists (it may be writing its temporary file now)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(folder: str | os.PathLike[str]) -> list[str]:
    """Delete the temporary files and folders in ``folder`` whose writer is gone; their paths.

    A temporary name without a pid (not written by this version), and one that cannot
    be deleted (a read-only folder), is left alone for the caller to report.
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        pid = writer_pid(entry.name)
        if pid is None or writer_alive(pid):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                _unlink(entry.path)
        except FileNotFoundError:
            pass
        except OSError:
            continue  # a read-only folder, say: it stays, and the caller reports it
        removed.append(entry.path)
    return removed


def fsync_dir(path: str | os.PathLike[str]) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _tmp_name(folder: Path) -> str:
    """A fresh temporary path in ``folder``, named before anything is created under it.

    ``tempfile.mkstemp`` creates the file and only then returns its name: an interrupt
    (SIGTERM turned into ``KeyboardInterrupt``) landing in between left a file no
    ``except`` clause knew of (seen in CI).  Named first, the file is created inside
    the ``try`` that removes it.
    """
    return str(folder / f"{tmp_prefix()}{secrets.token_hex(6)}")


def write_bytes(path: str | os.PathLike[str], data: bytes, *, private: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (mode ``0666 & ~umask``; ``0600`` if ``private``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp_name(path.parent)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.fchmod(fd, 0o600 if private else 0o666 & ~umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    fsync_dir(path.parent)


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as sorted, indented JSON atomically (stable diffs)."""
    write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))


def publish_dir(final: str | os.PathLike[str], files: dict[str, bytes], private: frozenset[str] = frozenset()) -> bool:
    """Create directory ``final`` holding ``files``, all at once.

    The files are written into a temporary sibling directory which is renamed into
    place.  Returns False (and changes nothing) if ``final`` already exists.  Files
    named in ``private`` are ``0600``; the rest follow the umask.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        return False
    tmp = Path(_tmp_name(final.parent))
    try:
        os.mkdir(tmp, 0o700)
        mask = umask()
        os.chmod(tmp, 0o777 & ~mask)
        for name, data in files.items():
            mode = 0o600 if name in private else 0o666 & ~mask
            fd = os.open(tmp / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        fsync_dir(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if final.exists():  # another writer published the same finding first
                shutil.rmtree(tmp, ignore_errors=True)
                return False
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(final.parent)
    return True


@contextmanager
def locked(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the lock file ``path`` (created if missing) across processes.

    For a read-modify-write of a file beside it that other runs may update at the
    same time: the lock is released when the block ends or the holder dies.  The lock
    file itself stays (empty); removing it would let a waiter lock an unlinked file.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666 & ~umask())
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
