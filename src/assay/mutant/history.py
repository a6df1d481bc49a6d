"""Mutation history: what each mutant's verdict was, and which tests killed it.

One JSON file under ``.assay/`` (written atomically, like the corpus), keyed by
mutant id.  Gold replay reads it: a killed mutant whose function is unchanged
runs the tests that killed it first.  A verdict other than killed is reused as it
is only when the whole project is unchanged (the same bytes in every mutated file
and every test file) and the mutant's test selection is the same.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay.store.atomic import write_json

SCHEMA_VERSION = 2
#: Folders left out of the tree digest (environments, caches, assay's own output).
TREE_SKIP = {
    ".git",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    ".assay",
    "build",
    "dist",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "mutants",
}
#: Files besides ``*.py`` whose bytes can change what the tests do.
TREE_CONFIG = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini", "requirements.txt")
#: Verdicts that are reused unchanged when nothing in the project changed.
REUSABLE = ("survived", "unreached", "timeout", "error", "killed-by-fuzz")


def project_digest(paths: Iterable[str | os.PathLike[str]]) -> str:
    """SHA-256 over the names and bytes of ``paths`` (the mutated files and the test files)."""
    h = hashlib.sha256()
    for p in sorted({os.path.realpath(p) for p in paths}):
        h.update(p.encode() + b"\0")
        try:
            h.update(Path(p).read_bytes())
        except OSError:
            h.update(b"<missing>")
        h.update(b"\0")
    return h.hexdigest()


def tree_digest(root: str | os.PathLike[str], arguments: dict[str, Any]) -> str:
    """SHA-256 over everything a mutation run's verdicts depend on.

    Every ``*.py`` and configuration file under ``root`` (so a new test file
    counts), the Python version, every installed distribution's name and version,
    and the ``arguments`` that choose the mutants, the tests and the fuzzing.
    """
    import sys

    h = hashlib.sha256()
    h.update(json.dumps(arguments, sort_keys=True, default=str).encode())
    h.update(sys.version.encode())
    h.update("\n".join(_installed()).encode())
    base = Path(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in TREE_SKIP and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(".py") or name in TREE_CONFIG:
                path = Path(dirpath) / name
                h.update(str(path.relative_to(base)).encode() + b"\0")
                try:
                    h.update(hashlib.sha256(path.read_bytes()).digest())
                except OSError:
                    h.update(b"<unreadable>")
    return h.hexdigest()


def _installed() -> list[str]:
    """Installed distributions, as their metadata folders' names (which carry name and
    version) on every ``sys.path`` folder: listing folders is far cheaper than reading
    each distribution's metadata."""
    import sys

    names: list[str] = []
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as it:
                names.extend(f"{entry}/{e.name}" for e in it if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
    return sorted(names)


def selection_digest(tests: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(tests)).encode()).hexdigest()[:16]


class History:
    """Per-mutant records: verdict, killers, function digest, selection digest."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.project = ""
        self.tree = ""
        self.last_run: list[str] = []
        self.records: dict[str, dict[str, Any]] = {}

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> History:
        history = cls(path)
        try:
            data = json.loads(history.path.read_text("utf-8"))
        except FileNotFoundError:
            return history
        except (OSError, ValueError):
            return history  # unreadable history is no history: it only ever saves time
        if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION:
            history.project = str(data.get("project", ""))
            history.tree = str(data.get("tree", ""))
            last = data.get("last_run")
            history.last_run = [i for i in last if isinstance(i, str)] if isinstance(last, list) else []
            records = data.get("mutants")
            if isinstance(records, dict):
                history.records = {k: v for k, v in records.items() if isinstance(v, dict)}
        return history

    def killers(self, mutant_id: str, digest: str) -> list[str]:
        """Tests that killed this mutant last time, if its function is unchanged."""
        record = self.records.get(mutant_id)
        if not record or record.get("digest") != digest:
            return []
        return [t for t in record.get("killers", []) if isinstance(t, str)]

    def reusable(self, mutant_id: str, digest: str, project: str, selection: str) -> dict[str, Any] | None:
        """The last result, when nothing that could change it has changed."""
        record = self.records.get(mutant_id)
        if (
            record
            and self.project == project
            and record.get("digest") == digest
            and record.get("selection") == selection
            and record.get("verdict") in REUSABLE
            and isinstance(record.get("result"), dict)
        ):
            return record["result"]
        return None

    def record(
        self, mutant_id: str, digest: str, selection: str, verdict: str, killers: list[str], result: dict[str, Any]
    ) -> None:
        self.records[mutant_id] = {
            "digest": digest,
            "selection": selection,
            "verdict": verdict,
            "killers": killers,
            "result": result,
        }

    def unchanged_run(self, tree: str) -> list[dict[str, Any]] | None:
        """Every result of the last run, when its tree digest is ``tree`` (else None)."""
        if not self.tree or self.tree != tree or not self.last_run:
            return None
        results = [self.records.get(i, {}).get("result") for i in self.last_run]
        if not all(isinstance(r, dict) and "mutant" in r for r in results):
            return None
        return results  # type: ignore[return-value]

    def save(self, project: str, tree: str = "", last_run: list[str] | None = None) -> None:
        self.project = project
        self.tree = tree
        self.last_run = list(last_run or [])
        write_json(
            self.path,
            {
                "schema_version": SCHEMA_VERSION,
                "project": project,
                "tree": tree,
                "last_run": self.last_run,
                "mutants": self.records,
            },
        )


def save_last_run(path: str | os.PathLike[str], records: list[dict[str, Any]]) -> None:
    """Every mutant of the last run (report entries with ``mutant`` and ``diff``), for ``assay mutant show``.

    Written after every run, ``--no-history`` or not: it is what was just printed,
    not a memory used to skip work.
    """
    write_json(Path(path), {"schema_version": SCHEMA_VERSION, "mutants": {r["id"]: r for r in records}})


def load_last_run(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The last run's entries by mutant id (empty when there is no readable file)."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    records = data.get("mutants") if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION else None
    return {k: v for k, v in records.items() if isinstance(v, dict)} if isinstance(records, dict) else {}
