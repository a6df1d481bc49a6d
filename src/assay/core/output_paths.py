"""Checks on output paths made before any work, so a run never ends unable to save its result."""

from __future__ import annotations

import os
from pathlib import Path

from assay.core.errors import ConfigError


def check_output_file(path: str, flag: str) -> None:
    """Raise :class:`ConfigError` if ``path`` (given with ``flag``) cannot become a file."""
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{flag} {path}: is a folder; name a file (for example {p / 'report.json'})")
    parent = p.parent if str(p.parent) else Path(".")
    existing = parent
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{flag} {path}: {existing} is a file, not a folder")
    if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag} {path}: the folder {existing} is not writable")


def check_output_dir(path: str | os.PathLike[str], flag: str, *, write: bool = True) -> None:
    """Raise :class:`ConfigError` if ``path`` (given with ``flag``) cannot be a folder assay writes into.

    It must be a folder or not exist yet, under folders (not files); with ``write``, the
    folder it is or would be made in must be writable.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{flag} {path}: is a file, not a folder; name a folder (it is created if missing)")
    existing = p
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{flag} {path}: {existing} is a file, not a folder; name a folder under folders")
    if write and existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag} {path}: the folder {existing} is not writable; name a writable folder")
