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
    occurrences: int  # over every run
    last_run: int = 0  # in the last run that hit it (what that run's summary said)
    runs: int = 1  # runs that hit it (as many as its most-hit artifact counts)
    status: str = "new"

    @property
    def signatures(self) -> list[str]:
        """Its distinct signatures (one signature may have several artifacts: several inputs)."""
        return sorted({a.signature for a in self.artifacts})


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
    parser.add_argument(
        "--replay",
        action="store_true",
        help="replay each promoted bug's first input: one that passes now is listed as fixed",
    )
    parser.set_defaults(func=run)
    return parser


def _stamp(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def collect(
    root: str | Path, regressions: str | Path | None = None, *, replay: bool = False, project_root: Path | None = None
) -> list[BugEntry]:
    """Every artifact under ``root`` (but those found on mutants) grouped by bug, most recently seen first.

    ``regressions`` (the project's regressions folder) tells promoted bugs; with ``replay``, the
    first artifact of each promoted bug is replayed and a bug whose input passes is ``fixed``.
    """
    from assay.findings.identity import group, identify_metadata
    from assay.findings.status import FIXED, PROMOTED, read_promotions, status_of
    from assay.store.artifacts import iter_artifacts, read_seen

    # Findings on mutants are mutation-testing evidence, not bugs of the real code.
    arts = [a for a in iter_artifacts(root) if not a.metadata.get("mutant_id")]
    entries = []
    promotions = read_promotions(regressions)
    for bug in group(arts, lambda a: identify_metadata(a.metadata)):
        firsts, lasts, counts, runs, seeds = [], [], [], [], set()
        occurrences = 0
        for art in bug.members:
            first = art.metadata.get("first_seen") or _stamp((art.path / "metadata.json").stat().st_mtime)
            seen = read_seen(art.path)
            firsts.append(first)
            lasts.append(seen.get("last_seen") or first)
            total = o if isinstance(o := seen.get("occurrences"), int) else 1
            occurrences += total
            last = seen.get("last_run_occurrences")
            counts.append(last if isinstance(last, int) else total if seen.get("runs", 1) == 1 else 0)
            runs.append(r if isinstance(r := seen.get("runs"), int) else 1)
            seeds.add(art.metadata.get("campaign_seed"))
        last_seen = max(lasts)
        last_run = sum(c for c, when in zip(counts, lasts, strict=True) if when == last_seen)
        # One run found every artifact (and hit none again): the bug is as new as that run.
        seen_before = max(runs) > 1 or len(seeds) > 1
        status = status_of(bug.identity.id, [a.signature for a in bug.members], promotions, seen_before=seen_before)
        if replay and status == PROMOTED and _passes(bug.members[0], project_root):
            status = FIXED
        entries.append(
            BugEntry(
                bug.identity.id,
                bug.identity.harness,
                bug.members,
                min(firsts),
                last_seen,
                occurrences,
                last_run or occurrences,
                max(runs),
                status,
            )
        )
    entries.sort(key=lambda e: (e.last_seen, e.id), reverse=True)
    return entries


def _passes(artifact: Any, project_root: Path | None) -> bool:
    """Whether ``artifact``'s input passes through its target now (it cannot be loaded: False)."""
    from assay.promote.regression import replay

    try:
        isolated = str(artifact.metadata.get("oracle")) in ("crash", "wedge")
        return replay(artifact.target, artifact.input, project=project_root, isolated=isolated) is None
    except Exception:  # noqa: BLE001 - a target that no longer loads says nothing about the bug
        return False


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
    entries = collect(root, project.regressions, replay=args.replay, project_root=project.root)
    if args.json:
        print(json.dumps([_entry_json(e, project.root) for e in entries], indent=2))
        return 0
    if not entries:
        print(f"assay findings: no findings under {root}")
        return 0
    from assay.findings.explain import display_path, headline, where_line
    from assay.findings.identity import identify_metadata

    print(
        f"assay findings: {len(entries)} bug(s), {sum(len(e.signatures) for e in entries)} signature(s), "
        f"{sum(len(e.artifacts) for e in entries)} artifact(s) under {display_path(root)}"
    )
    for e in entries:
        meta = e.artifacts[0].metadata
        targets = sorted({a.target for a in e.artifacts})
        print(f"  {e.id}  ({e.status}) {headline(meta)}")
        where = where_line(identify_metadata(meta), project.root)
        if where:
            print(f"      {where}")
        print(f"      target {', '.join(targets)}; {_counts(e)}")
        print(f"      first {e.first_seen}, last {e.last_seen}")
    # Absolute, so the hint works pasted in any folder (ID is the first column above).
    given = [str(root)] if words else []
    explain = shlex.join(["assay", "findings", "show", "ID", *given, "--project", str(project.root)])
    print(f"explain one: {explain}")
    print("what new, known, promoted and fixed mean: docs/guides/findings.md")
    return 0


def _counts(e: BugEntry) -> str:
    """Seen how often (its last run, as that run said; all runs), under how many signatures and artifacts."""
    n = len(e.signatures)
    text = f"seen {e.last_run}x in its last run"
    if e.runs > 1:
        text += f" ({e.occurrences}x in {e.runs} runs)"
    text += f" under {n} signature{'s' if n != 1 else ''}"
    if len(e.artifacts) != n:
        text += f", {len(e.artifacts)} artifacts (inputs)"
    return text


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

    entry = _find(collect(root, project.regressions, project_root=project.root), wanted)
    if as_json:
        print(json.dumps(_entry_json(entry, project.root), indent=2))
        return 0
    print(
        f"bug {entry.id} ({entry.status}): {_counts(entry)}; "
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
        "status": e.status,
        "harness": e.harness,
        "exception": ident.exception,
        "location": ident.location,
        "first_seen": e.first_seen,
        "last_seen": e.last_seen,
        "occurrences": e.occurrences,
        "last_run_occurrences": e.last_run,
        "runs": e.runs,
        "signatures": e.signatures,
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
