"""Choosing which mutants run: ``--sample N``, ``--changed REV``, ``--operators``."""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from assay.core.errors import ConfigError
from assay.mutant.model import Mutant

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def by_operators(mutants: list[Mutant], families: Iterable[str], known: Iterable[str]) -> list[Mutant]:
    """Mutants of the named families (a name may also be a family prefix, ``guard``)."""
    families = list(families)
    if not families:
        return mutants
    known = set(known)
    for f in families:
        if f not in known and not any(k.startswith(f + ".") for k in known):
            raise ConfigError(f"--operators {f}: no such operator family; known: {', '.join(sorted(known))}")
    return [m for m in mutants if any(m.operator == f or m.operator.startswith(f + ".") for f in families)]


def sample(mutants: list[Mutant], n: int) -> list[Mutant]:
    """``n`` mutants chosen by a stable hash of their ids (so a sample covers the whole code)."""
    ranked = sorted(mutants, key=lambda m: hashlib.sha256(m.id.encode()).digest())
    chosen = {m.id for m in ranked[:n]}
    return [m for m in mutants if m.id in chosen]


def git(root: Path, *args: str) -> str:
    """Run git in ``root``; a failure is a :class:`ConfigError` quoting git."""
    try:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise ConfigError("--changed needs git, which is not installed") from None
    except subprocess.TimeoutExpired:
        raise ConfigError(f"git {' '.join(args)} did not answer within 60 s") from None
    if proc.returncode != 0:
        raise ConfigError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.stdout.strip() or 'failed'}")
    return proc.stdout


def commit_of(root: Path, rev: str) -> str:
    """The commit ``rev`` names; exit 2 when git does not know it."""
    try:
        return git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except ConfigError:
        raise ConfigError(
            f"--changed {rev}: git does not know this revision (or {root} is not a git checkout)"
        ) from None


def changed_lines(root: Path, rev: str) -> dict[str, set[int]]:
    """Lines (of the working tree) added or changed since git revision ``rev``, per real path."""
    commit_of(root, rev)
    top = Path(git(root, "rev-parse", "--show-toplevel").strip())
    out: dict[str, set[int]] = {}
    current: str | None = None
    for line in git(root, "diff", "--unified=0", "--no-color", "--no-ext-diff", rev, "--", ".").splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            current = None if name == "/dev/null" else str((top / name[2:]).resolve())
            continue
        m = _HUNK.match(line)
        if m and current is not None:
            start, count = int(m.group(1)), int(m.group(2) or "1")
            out.setdefault(current, set()).update(range(start, start + count))
    for name in git(root, "ls-files", "--others", "--exclude-standard").splitlines():  # new files count as changed
        path = (root / name).resolve()
        try:
            out[str(path)] = set(range(1, len(path.read_text("utf-8").splitlines()) + 1))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def on_changed_lines(mutants: list[Mutant], changed: dict[str, set[int]]) -> list[Mutant]:
    return [m for m in mutants if changed.get(m.path, set()) & set(range(m.line, m.end_line + 1))]
