"""The campaign report (JSON, versioned) and the human summary."""

from __future__ import annotations

import base64
import datetime as _dt
from typing import Any

from assay.core.version import __version__
from assay.engine.campaign import CampaignResult
from assay.engine.supervisor import Progress, TargetOutcome
from assay.store.artifacts import runtime_identity
from assay.store.atomic import write_json

#: Version of the report layout (docs/report-schema.json); bump on incompatible changes.
#: 2: a top-level ``bugs`` section, ``project_root``, per target a ``timeline`` and each finding's ``bug``.
REPORT_VERSION = 2


def target_report(t: TargetOutcome) -> dict[str, Any]:
    entry = _target_fields(t)
    native = getattr(t, "native_report", None)  # native targets: build manifest, no schedule digest
    if native is not None:
        entry.update(native())
    return entry


def _target_fields(t: TargetOutcome) -> dict[str, Any]:
    return {
        "seed": t.seed,
        "sources": t.sources,
        "strategy": t.strategy,
        "initial_corpus": t.initial_manifest,
        "corpus_additions": t.corpus_additions,
        "schedule_digest": t.schedule_digest,
        "schedule_count": t.schedule_count,
        "cases": t.cases,
        "elapsed": round(t.elapsed, 3),
        "execs_per_sec": round(t.execs_per_sec, 1),
        "coverage": {"edges": t.edges, "lines": t.lines},
        "features": t.features,
        "corpus_size": t.corpus_size,
        "worker_restarts": t.worker_restarts,
        "jobs": t.jobs,
        "analysis": analysis_fields(t),
        "findings": [
            {
                "signature": f.signature,
                "oracle": f.oracle,
                "artifact": f.artifact,
                "new": f.new,
                "occurrences": f.occurrences,
                **_saved_fields(f),
            }
            for f in t.findings
        ],
        "status": t.status,
        "write_errors": write_error_lines(t),
        "write_errors_more": getattr(t, "write_errors_dropped", 0),
        "timeline": [list(p) for p in getattr(t, "timeline", [])],
    }


def _saved_fields(f: Any) -> dict[str, Any]:
    """Whether a finding's artifact was written; if not, why, and its input (the only copy left)."""
    error = getattr(f, "save_error", "")
    data = getattr(f, "unsaved_input", None)
    return {
        "saved": not error,
        "save_error": error or None,
        "input_base64": base64.b64encode(data).decode("ascii") if error and data is not None else None,
    }


def write_error_lines(t: Any) -> list[str]:
    """The failed writes a target lists, with ``... and N more`` for those past the cap."""
    lines = list(getattr(t, "write_errors", []))
    more = getattr(t, "write_errors_dropped", 0)
    if more:
        lines.append(f"... and {more} more")
    return lines


def unsaved_findings(result: CampaignResult) -> list[tuple[str, Any]]:
    """(target, finding) for every finding whose artifact could not be written."""
    return [(t.name, f) for t in result.targets for f in t.findings if getattr(f, "save_error", "")]


def build_report(
    result: CampaignResult | None,
    *,
    arguments: dict[str, Any],
    skipped: dict[str, str] | None = None,
    status: str | None = None,
    error: str | None = None,
    project_root: str | None = None,
) -> dict[str, Any]:
    """The report as plain data (layout: docs/report-schema.json).

    ``project_root`` makes bug locations relative to the project (for SARIF and
    the HTML page); without it they carry absolute files only.
    """
    from assay.findings.bug_entries import bug_section

    outcomes = result.targets if result else []
    targets = {t.name: target_report(t) for t in outcomes}
    bugs, ids = bug_section(outcomes, project_root=project_root, project_arg=arguments.get("project"))
    for name, entry in targets.items():
        for finding in entry["findings"]:
            finding["bug"] = ids.get((name, finding["signature"]))
    if status is None:
        status = "findings" if result and result.findings else "clean"
    return {
        "report_version": REPORT_VERSION,
        "assay_version": __version__,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "arguments": arguments,
        "project_root": project_root,
        "master_seed": result.master_seed if result else None,
        "elapsed": round(result.elapsed, 3) if result else 0.0,
        "targets": targets,
        "bugs": bugs,
        "skipped": skipped or {},
        "status": status,
        "error": error,
        "runtime": runtime_identity(),
    }


def write_report(path: str, report: dict[str, Any]) -> None:
    write_json(path, report)


def progress_line(p: Progress) -> str:
    left = "" if p.time_left is None else f" left {p.time_left:5.1f}s"
    rate = p.cases / p.elapsed if p.elapsed > 0 else 0.0
    return (
        f"{p.target}: {p.cases} cases {rate:,.0f}/s edges {p.edges} lines {p.lines} "
        f"features {p.features} corpus {p.corpus} findings {p.findings}{left}"
    )


def analysis_fields(t: TargetOutcome) -> dict[str, Any]:
    """The cost of the work done for findings (assay.engine.budget), for the JSON report."""
    return {
        "seconds": round(t.analysis_seconds, 3),
        "share": round(t.analysis_share, 4),
        "bound": t.analysis_bound,
        "after_schedule_seconds": round(t.analysis_after, 3),
        "unfinished": t.analysis_unfinished,
    }


def analysis_line(t: TargetOutcome) -> str:
    """One summary line on the work done for findings, or "" when it took no measurable time."""
    a = analysis_fields(t)
    if a["seconds"] < 0.01 and not a["unfinished"]:
        return ""
    bound = f" (bound {a['bound']:.0%} of the fuzzing time)" if a["bound"] is not None else " (unbounded)"
    line = f"    analysing findings took {a['seconds']:.1f}s, {a['share']:.1%} of the run{bound}"
    if a["after_schedule_seconds"] >= 0.01:
        line += f"; {a['after_schedule_seconds']:.1f}s of it after the last case"
    if a["unfinished"]:
        line += f"; {a['unfinished']} slow suspect(s) left unanalysed when the budget ran out"
    return line


def summary(
    result: CampaignResult,
    project_root: str | None = None,
    harnesses: dict[str, str] | None = None,
    seed_line: bool = True,
) -> str:
    """A plain, multi-line summary for the end of a run: per target its numbers, then one block per bug.

    Findings whose exception type and innermost project frame agree are one bug
    (:mod:`assay.findings.identity`); each bug is explained by :func:`assay.findings.explain.finding_lines`
    from its first finding's artifact, with the totals of all its signatures.  ``harnesses``:
    the harness file of each target this run loaded from one (given on its command line), so
    that each reproduce line works as printed.  ``seed_line``: start with the master seed
    (``assay fuzz`` prints that line before the campaign, so a killed run's log keeps it).
    """
    from assay.findings.identity import group
    from assay.findings.status import promotions_of_project, status_in_run

    lines = [f"assay: master seed {result.master_seed} (repeat with --fuzz-seed {result.master_seed})"][:seed_line]
    bugs_total = 0
    promotions = promotions_of_project(project_root)
    written = {f.artifact for t in result.targets for f in t.findings if f.artifact and f.new}
    for t in result.targets:
        bugs = group(t.findings, lambda f: _record_identity(f))
        bugs_total += len(bugs)
        lines.append(
            f"  {t.name}: {t.cases} cases in {t.elapsed:.1f}s ({t.execs_per_sec:,.0f}/s), "
            f"{t.edges} edges, {t.lines} lines, {t.features} features, corpus {t.corpus_size} "
            f"(+{len(t.corpus_additions)}), {len(t.findings)} finding(s) in {len(bugs)} bug(s)"
        )
        cost = analysis_line(t)
        if cost:
            lines.append(cost)
        for bug in bugs:
            status = status_in_run(bug.identity.key, bug.members, promotions, written)
            lines.extend(_bug_lines(bug, project_root, (harnesses or {}).get(t.name), status))
        for err in write_error_lines(t):
            lines.append(f"    could not write {err}")
    total = result.findings
    lines.append(f"{total} finding(s) in {bugs_total} bug(s)" if total else "no findings")
    return "\n".join(lines)


def _record_identity(f: Any):
    from assay.findings.identity import BugIdentity

    # Native and older records carry no bug id: each signature is then a bug of its own.
    return BugIdentity(getattr(f, "bug", "") or f.signature, None, None, bool(getattr(f, "harness", False)))


def _bug_lines(bug: Any, project_root: str | None, harness: str | None = None, status: str = "") -> list[str]:
    from assay.core.errors import AssayError
    from assay.findings.explain import finding_lines
    from assay.store.artifacts import load_artifact

    members = bug.members
    occurrences = sum(f.occurrences for f in members)
    first = next((f for f in members if f.artifact), None)
    explained: list[str] = []
    art = None
    unsaved = next((f for f in members if getattr(f, "unsaved_metadata", None) is not None), None)
    if first is None and unsaved is not None:  # the artifact could not be written: explain from memory
        try:
            explained = finding_lines(
                unsaved.unsaved_metadata,
                unsaved.unsaved_input or b"",
                None,
                project_root=project_root,
                occurrences=occurrences,
                signatures=len(members),
                dated=False,
                scope=" this run",
                harness=harness,
            )
        except (KeyError, TypeError, ValueError):
            explained = []
        if explained:
            explained.append(
                f"NOT SAVED ({unsaved.save_error}): input (base64) "
                f"{base64.b64encode(unsaved.unsaved_input or b'').decode('ascii')}"
            )
    elif first is not None:
        try:
            art = load_artifact(first.artifact)
            explained = finding_lines(
                art.metadata,
                art.input,
                first.artifact,
                project_root=project_root,
                occurrences=occurrences,
                signatures=len(members),
                dated=not first.new,
                scope=" this run",
                harness=harness,
            )
        except (AssayError, OSError, KeyError, TypeError, ValueError):
            explained = []
    if not explained:
        f = members[0]
        explained = [
            f"[{f.oracle}{', harness' if getattr(f, 'harness', False) else ''}] {f.signature}",
            f"seen {occurrences}x this run under {len(members)} signature(s)",
            f"artifact: {f.artifact or '(not written)'}",
        ]
    bug_id = getattr(members[0], "bug", "") or ""
    if not bug_id and first is not None and explained and art is not None:
        from assay.findings.identity import identify_metadata

        bug_id = identify_metadata(art.metadata).id  # findings recorded without one (native targets)
    bug_id = bug_id or "-"
    out = [f"    bug {bug_id} ({status or 'new'}) {explained[0]}"]
    out.extend(f"      {line}" for line in explained[1:])
    return out
