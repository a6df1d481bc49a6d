"""``assay findings [ROOT]`` and ``assay findings show ID``: the findings on disk, grouped by bug.

A bug is what :mod:`assay.findings.identity` says: findings whose exception type and
innermost project frame agree, however many signatures reached it.  The list
shows per bug its id, tag and exception, where it was raised, how many findings
(signatures) and occurrences, and when it was first and last seen: first from
the earliest ``first_seen`` in the findings' metadata (or, for artifacts written
before it was recorded, the metadata file's modification time), last from their
``seen.json`` sidecars (see :mod:`assay.store.artifacts`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError


@dataclass
class BugEntry:
    """One bug of an artifact root and the findings (artifacts) that make it up."""

    id: str
    harness: bool
    artifacts: list[Any]
    first_seen: str
    last_seen: str
    occurrences: int


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``findings`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "findings",
        help="list the findings of an artifact root grouped by bug; 'show ID' explains one",
        usage="assay findings [ROOT] [--json] [--project DIR] | assay findings show ID [ROOT] [--project DIR]",
        description="ROOT defaults to the project's artifact root ([tool.assay] artifacts). ID is a bug id "
        "(or a unique prefix of one) from the list.",
    )
    parser.add_argument("words", nargs="*", metavar="[show ID] [ROOT]", help=argparse.SUPPRESS)
    parser.add_argument(
        "--project", metavar="DIR", help="project folder holding pyproject.toml (default: current folder)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)
    return parser


def _stamp(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(root: str | Path) -> list[BugEntry]:
    """Every artifact under ``root`` (but those found on mutants) grouped by bug, most recently seen first."""
    from assay.findings.identity import group, identify_metadata
    from assay.store.artifacts import iter_artifacts, read_seen

    # Findings on mutants are mutation-testing evidence, not bugs of the real code.
    arts = [a for a in iter_artifacts(root) if not a.metadata.get("mutant_id")]
    entries = []
    for bug in group(arts, lambda a: identify_metadata(a.metadata)):
        firsts, lasts, occurrences = [], [], 0
        for art in bug.members:
            first = art.metadata.get("first_seen") or _stamp((art.path / "metadata.json").stat().st_mtime)
            seen = read_seen(art.path)
            firsts.append(first)
            lasts.append(seen.get("last_seen") or first)
            occurrences += o if isinstance(o := seen.get("occurrences"), int) else 1
        entries.append(
            BugEntry(bug.identity.id, bug.identity.harness, bug.members, min(firsts), max(lasts), occurrences)
        )
    entries.sort(key=lambda e: (e.last_seen, e.id), reverse=True)
    return entries


def _root(project: Any, given: str | None) -> Path:
    root = Path(given).resolve() if given else Path(project.artifacts)
    if given and not root.is_dir():
        raise ConfigError(f"{given} is not a folder; pass an artifact root (default: {project.artifacts})")
    return root


def run(args: argparse.Namespace) -> int:
    """List (or, with ``show ID``, explain) the bugs; 0 (a listing is not a run that failed)."""
    from assay.core.config import load_project

    words = list(args.words)
    project = load_project(args.project)
    if words and words[0] == "show":
        if len(words) not in (2, 3):
            raise ConfigError("usage: assay findings show ID [ROOT]")
        return show(project, words[1], _root(project, words[2] if len(words) == 3 else None), as_json=args.json)
    if len(words) > 1:
        raise ConfigError(
            f"assay findings takes at most one artifact root, not {' '.join(words)}; "
            "to explain one bug: assay findings show ID"
        )
    root = _root(project, words[0] if words else None)
    entries = collect(root)
    if args.json:
        print(json.dumps([_entry_json(e, project.root) for e in entries], indent=2))
        return 0
    if not entries:
        print(f"assay findings: no findings under {root}")
        return 0
    from assay.findings.explain import display_path, headline, where_line
    from assay.findings.identity import identify_metadata

    print(
        f"assay findings: {len(entries)} bug(s), {sum(len(e.artifacts) for e in entries)} finding(s) under "
        f"{display_path(root)}"
    )
    for e in entries:
        meta = e.artifacts[0].metadata
        targets = sorted({a.target for a in e.artifacts})
        print(f"  {e.id}  {headline(meta)}")
        where = where_line(identify_metadata(meta), project.root)
        if where:
            print(f"      {where}")
        print(
            f"      target {', '.join(targets)}; {len(e.artifacts)} signature(s), seen {e.occurrences}x; "
            f"first {e.first_seen}, last {e.last_seen}"
        )
    # Absolute, so the hint works pasted in any folder (ID is the first column above).
    given = [str(root)] if words else []
    print(f"explain one: {shlex.join(['assay', 'findings', 'show', 'ID', *given, '--project', str(project.root)])}")
    return 0


def _find(entries: list[BugEntry], wanted: str) -> BugEntry:
    matches = [e for e in entries if e.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(e.id for e in entries[:10]) or "none"
        raise ConfigError(f"no bug {wanted!r} here (bugs: {known}); list them with assay findings")
    raise ConfigError(f"{wanted!r} names {len(matches)} bugs ({', '.join(e.id for e in matches)}); give more of the id")


def show(project: Any, wanted: str, root: Path, *, as_json: bool = False) -> int:
    """Explain every finding of bug ``wanted``; 0, or a ConfigError when there is no such bug."""
    from assay.findings.explain import finding_lines
    from assay.store.artifacts import read_seen

    entry = _find(collect(root), wanted)
    if as_json:
        print(json.dumps(_entry_json(entry, project.root), indent=2))
        return 0
    print(
        f"bug {entry.id}: {len(entry.artifacts)} finding(s), seen {entry.occurrences}x, "
        f"first {entry.first_seen}, last {entry.last_seen}{', harness' if entry.harness else ''}"
    )
    for art in entry.artifacts:
        seen = read_seen(art.path)
        lines = finding_lines(
            art.metadata,
            art.input,
            art.path,
            project_root=project.root,
            occurrences=seen.get("occurrences"),
            last_seen=seen.get("last_seen"),
        )
        print(f"  {lines[0]}")
        print(f"      signature: {art.signature}")
        for line in lines[1:]:
            print(f"      {line}")
        trace = ((art.metadata.get("exception") or {}).get("traceback") or "").rstrip()
        if trace:
            print("      " + trace.replace("\n", "\n      "))
    return 0


def _entry_json(e: BugEntry, project_root: Path) -> dict[str, Any]:
    from assay.findings.explain import reproduce_command
    from assay.findings.identity import identify_metadata

    ident = identify_metadata(e.artifacts[0].metadata)
    return {
        "id": e.id,
        "harness": e.harness,
        "exception": ident.exception,
        "location": ident.location,
        "first_seen": e.first_seen,
        "last_seen": e.last_seen,
        "occurrences": e.occurrences,
        "findings": [
            {
                "target": a.target,
                "signature": a.signature,
                "artifact": str(a.path),
                "reproduce": reproduce_command(a.path, project_root),
            }
            for a in e.artifacts
        ],
    }
