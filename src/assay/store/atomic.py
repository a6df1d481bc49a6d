"""Atomic file writes: temp file in the same folder, fsync, rename, fsync folder.

A process killed at any point leaves either the old file, the new file, or a
temporary file named ``.tmp-*`` that the corpus check reports; never a half file
under a real name.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

TMP_PREFIX = ".tmp-"


def fsync_dir(path: str | os.PathLike[str]) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
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


def publish_dir(final: str | os.PathLike[str], files: dict[str, bytes]) -> bool:
    """Create directory ``final`` holding ``files``, all at once.

    The files are written into a temporary sibling directory which is renamed into
    place.  Returns False (and changes nothing) if ``final`` already exists.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        return False
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=final.parent))
    try:
        for name, data in files.items():
            with open(tmp / name, "wb") as fh:
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


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
