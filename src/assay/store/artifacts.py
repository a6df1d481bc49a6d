"""Findings on disk: ``<root>/<target>/<sha256>/input | metadata.json | diagnostic.log | seen.json``.

The directory is named by the SHA-256 of the (minimized) input and published with
one rename, so a killed run leaves no half-written artifact.  ``metadata.json`` is
written once, by the run that first hit the finding (``first_seen``, and the
``first_seen_seconds`` and ``first_seen_case`` of that run); ``seen.json`` is
rewritten atomically at the end of every run that hits it again (``last_seen``,
``runs``, ``occurrences`` summed over runs), under a lock on ``seen.json.lock``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from assay.core.errors import ArtifactError
from assay.core.verdict import Verdict
from assay.core.version import __version__
from assay.store.atomic import TMP_PREFIX, locked, publish_dir, write_json
from assay.store.corpus import digest
from assay.store.metadata import check_metadata

#: Version of the ``metadata.json`` layout; bump on incompatible changes.
SCHEMA_VERSION = 1
#: Name of the sidecar that says when a finding was last seen (see the module docstring).
SEEN_FILE = "seen.json"
#: The lock file held while ``seen.json`` is read, summed and rewritten (:func:`record_seen`).
SEEN_LOCK = "seen.json.lock"
#: Most bytes of captured worker output kept in ``diagnostic.log``.
MAX_DIAGNOSTIC = 256 * 1024


@dataclass
class Finding:
    """A failure the engine found, ready to be written as an artifact."""

    target: str
    verdict: Verdict
    input: bytes
    original: bytes
    determinism: dict[str, Any]
    mutation_operators: list[str] = field(default_factory=list)
    case_index: int | None = None
    diagnostic: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        return self.verdict.signature


def runtime_identity() -> dict[str, Any]:
    return {
        "assay_version": __version__,
        "python": {
            "version": platform.python_version(),
            "implementation": sys.implementation.name,
            "abi": sysconfig.get_config_var("SOABI") or "",
            "abiflags": getattr(sys, "abiflags", ""),
        },
        "platform": platform.platform(),
    }


def build_metadata(
    finding: Finding, *, campaign_seed: int | None, target_seed: int | None, sources: list[str]
) -> dict[str, Any]:
    """The ``metadata.json`` content for ``finding``."""
    v = finding.verdict
    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "campaign_seed": campaign_seed,
        "target_seed": target_seed,
        "target": finding.target,
        "input_sha256": digest(finding.input),
        "original_sha256": digest(finding.original),
        "original_size": len(finding.original),
        "minimized_size": len(finding.input),
        "oracle": v.oracle,
        "signature": v.signature,
        "verdict": v.to_json(),
        "exception": v.exception.to_json() if v.exception else None,
        "determinism": finding.determinism,
        "sources": sources,
        "mutation_operators": finding.mutation_operators,
        "case_index": finding.case_index,
    }
    meta.update(runtime_identity())
    meta.update(finding.extra)
    return meta


def artifact_dir(root: str | os.PathLike[str], finding: Finding) -> Path:
    base = Path(root)
    mutant = finding.extra.get("mutant_id")
    if mutant:
        base = base / "mutants" / digest(str(mutant).encode())
    return base / finding.target / digest(finding.input)


def write_artifact(root: str | os.PathLike[str], finding: Finding, metadata: dict[str, Any]) -> tuple[Path, bool]:
    """Publish ``finding`` under ``root``; returns (directory, newly written?)."""
    final = artifact_dir(root, finding)
    files = {
        "input": finding.input,
        "metadata.json": (json.dumps(metadata, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode(),
    }
    if finding.diagnostic:
        files["diagnostic.log"] = finding.diagnostic[-MAX_DIAGNOSTIC:].encode("utf-8", "replace")
    return final, publish_dir(final, files, private=frozenset({"diagnostic.log"}))


@dataclass(frozen=True)
class Artifact:
    """A finding read back from disk."""

    path: Path
    input: bytes
    metadata: dict[str, Any]

    @property
    def target(self) -> str:
        return cast(str, self.metadata["target"])

    @property
    def signature(self) -> str:
        return cast(str, self.metadata["signature"])

    @property
    def verdict(self) -> Verdict:
        return Verdict.from_json(self.metadata["verdict"])


def load_artifact(path: str | os.PathLike[str]) -> Artifact:
    """Read the artifact in directory ``path`` (or the directory of an ``input`` file)."""
    p = Path(path)
    if p.is_file():
        p = p.parent
    try:
        data = (p / "input").read_bytes()
        meta = json.loads((p / "metadata.json").read_text("utf-8"))
    except FileNotFoundError as exc:
        raise ArtifactError(f"{p} is not an assay artifact (missing {Path(exc.filename).name})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArtifactError(
            f"{p / 'metadata.json'} is not valid JSON ({exc}); restore or delete the artifact"
        ) from None
    except RecursionError:
        raise ArtifactError(
            f"{p / 'metadata.json'} nests too deeply to be metadata; restore or delete the artifact"
        ) from None
    except OSError as exc:
        raise ArtifactError(f"{p} cannot be read ({exc.strerror or exc}); fix its permissions or delete it") from None
    check_metadata(meta, p / "metadata.json")  # untrusted data: every field assay reads has its type
    if digest(data) != meta["input_sha256"]:
        raise ArtifactError(f"{p / 'input'} does not match input_sha256 in its metadata; the artifact was modified")
    return Artifact(p, data, meta)


def read_seen(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``seen.json`` of the artifact in ``path``; ``{}`` when absent or unreadable."""
    try:
        data = json.loads((Path(path) / SEEN_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_seen(path: str | os.PathLike[str], occurrences: int) -> None:
    """Note one more run that hit the artifact in ``path`` ``occurrences`` times.

    The read, the sums and the atomic rewrite happen under a lock on ``seen.json.lock``
    beside it, so two runs finishing at once both count (neither update is lost).
    """
    with locked(Path(path) / SEEN_LOCK):
        seen = read_seen(path)
        runs = r if isinstance(r := seen.get("runs"), int) else 0
        total = t if isinstance(t := seen.get("occurrences"), int) else 0
        write_json(
            Path(path) / SEEN_FILE,
            {
                "last_seen": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "runs": runs + 1,
                "occurrences": total + occurrences,
                "last_run_occurrences": occurrences,  # what that run's summary said
            },
        )


def iter_artifacts(root: str | os.PathLike[str], target: str | None = None) -> Iterator[Artifact]:
    """Every artifact under ``root`` (optionally one target's), in a stable order."""
    root = Path(root)
    if not root.is_dir():
        return
    for meta in sorted(root.rglob("metadata.json")):
        if any(part.startswith(TMP_PREFIX) for part in meta.parts):
            continue
        art = load_artifact(meta.parent)
        if target is None or art.target == target:
            yield art
