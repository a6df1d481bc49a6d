"""Checks on the paths a command names, made before any work: a run never ends unable to save
its result, nor starts on a file it cannot read."""

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


def check_campaign_folders(
    corpus: str | None,
    artifacts: str | None,
    project_corpus: str | os.PathLike[str],
    project_artifacts: str | os.PathLike[str],
    *,
    replay_only: bool = False,
) -> None:
    """Refuse a campaign's corpus or artifact root that is a file (or not writable) before any work.

    ``corpus`` and ``artifacts`` are the ``--fuzz-corpus`` / ``--fuzz-artifacts`` flags (``None``:
    the project's settings); a replay-only run writes no corpus, so that one needs no write access.
    """
    check_output_dir(
        corpus or project_corpus, "--fuzz-corpus" if corpus else "[tool.assay] corpus", write=not replay_only
    )
    check_output_dir(artifacts or project_artifacts, "--fuzz-artifacts" if artifacts else "[tool.assay] artifacts")


def check_input_file(path: str | os.PathLike[str], flag: str) -> None:
    """Raise :class:`ConfigError` unless ``path`` (given with ``flag``) is a readable file."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{flag} {path}: does not exist; name an existing file")
    if not p.is_file():
        raise ConfigError(f"{flag} {path}: is not a file; name a file")
    if not os.access(p, os.R_OK):
        raise ConfigError(f"{flag} {path}: is not readable; check its permissions")
