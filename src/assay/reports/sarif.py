"""SARIF 2.1.0 from a report: one result per bug, located in the project's own code.

GitHub code scanning (and any SARIF viewer) shows a result at its
``physicalLocation``: the innermost traceback frame inside the project folder,
as a path relative to ``%SRCROOT%``: the git repository holding the project
(code scanning resolves paths from the repository root), else the project root.  A bug raised in an
installed library is shown where the project's code called into it, and the
library frame is named in the message.  A bug without a traceback (a wedge, a
crash) points at its harness file, else at ``pyproject.toml``.  Rules are the
oracles; ``partialFingerprints`` carry the bug key, so an alert survives edits
that move lines.  Checked in the tests against the official OASIS schema.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from assay.store.atomic import write_bytes

SARIF_VERSION = "2.1.0"
#: The ``$schema`` of the files written (the OASIS errata01 schema the tests validate against).
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
#: What each finding tag means (rules' descriptions); an unlisted tag gets a generic one.
ORACLES = {
    "panic": "The target raised an exception it does not document (not in its `expected`).",
    "invariant": "An assertion or an invariant the target checks (assay.InvariantViolation) failed.",
    "wedge": "An input ran past the target's timeout (a hang or a quadratic blow-up).",
    "slow": "An input took far longer than the target's typical case.",
    "crash": "The worker died mid-input (a signal, os._exit, the out-of-memory killer).",
    "safety": "The target tried a side effect the sandbox refuses (a subprocess, a write outside its folder).",
    "error-shape": "An error response or exception did not have the documented shape.",
    "differential": "Two implementations that should agree returned different results.",
    "http-5xx": "An HTTP handler answered with a server error.",
    "path-escape": "A path built from the input escaped its base folder.",
    "fail-open": "A classifier allowed a composition of commands it denies one by one.",
    "over-denial": "A classifier denied a command it allows elsewhere.",
}


def _rule(oracle: str) -> dict[str, Any]:
    text = ORACLES.get(oracle, f"The {oracle} oracle fired.")
    return {
        "id": oracle,
        "name": "".join(part.capitalize() for part in oracle.replace("_", "-").split("-")),
        "shortDescription": {"text": f"assay {oracle} finding"},
        "fullDescription": {"text": text},
        "help": {"text": f"{text} Each result names the command that replays the input."},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["fuzzing", oracle]},
    }


def source_root(project_root: str) -> tuple[str, str]:
    """(the folder %SRCROOT% names, the project's path inside it: '' or 'sub/dir/').

    The nearest folder at or above the project holding ``.git`` (a folder, or a
    file in a worktree), else the project folder itself.
    """
    project = Path(project_root).resolve()
    for folder in (project, *project.parents):
        if (folder / ".git").exists():
            inside = project.relative_to(folder).as_posix()
            return str(folder), "" if inside == "." else inside + "/"
    return str(project), ""


def _physical(path: str, line: int, prefix: str = "") -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": quote(prefix + path), "uriBaseId": SRCROOT},
            "region": {"startLine": max(1, int(line))},
        }
    }


def _location(bug: dict[str, Any], prefix: str) -> tuple[dict[str, Any], str]:
    """The result's location and a phrase saying how it relates to where the bug was raised."""
    here = bug.get("project_location")
    raised = bug.get("location")
    if here:
        loc = _physical(here["path"], here["line"], prefix)
        loc["logicalLocations"] = [{"fullyQualifiedName": here["function"], "kind": "function"}]
        if raised and (raised.get("path"), raised["line"]) != (here["path"], here["line"]):
            return loc, f" Raised in {raised['function']} ({raised['file']}:{raised['line']}), called from here."
        return loc, ""
    if bug.get("harness_file"):
        return _physical(
            bug["harness_file"], 1, prefix
        ), " No traceback frame lies in the project; shown at its harness."
    return _physical(
        "pyproject.toml", 1, prefix
    ), " No traceback frame lies in the project; shown at its pyproject.toml."


def _message(bug: dict[str, Any]) -> str:
    head = f"{bug['exception']}: {bug['message']}" if bug.get("exception") else (bug.get("message") or bug["key"])
    targets = ", ".join(bug["targets"])
    status = f"{bug['status']}; " if bug.get("status") else ""
    text = f"[{bug['oracle']}] {head.rstrip(': ')} ({status}fuzz target {targets}; seen {bug['occurrences']}x"
    text += f" this run under {len(bug['signatures'])} signature(s))."
    if bug.get("harness"):
        text += " Raised in the harness file itself: the fuzz target's mistake, not the code under test."
    return text


def sarif_log(report: dict[str, Any]) -> dict[str, Any]:
    """The SARIF log for ``report`` (a :func:`assay.reports.campaign.build_report` result)."""
    bugs = report.get("bugs", [])
    oracles = sorted({b["oracle"] for b in bugs})
    root, prefix = source_root(report["project_root"]) if report.get("project_root") else (None, "")
    results = []
    for bug in bugs:
        location, how = _location(bug, prefix)
        text = _message(bug) + how
        if bug.get("replay"):
            text += f" Replay: {bug['replay']}"
        results.append(
            {
                "ruleId": bug["oracle"],
                "ruleIndex": oracles.index(bug["oracle"]),
                "level": "warning" if bug.get("harness") else "error",
                "message": {"text": text},
                "locations": [location],
                "partialFingerprints": {"assayBugKey/v1": hashlib.sha256(bug["key"].encode()).hexdigest()},
                "properties": {
                    "bugId": bug["id"],
                    "status": bug.get("status"),
                    "key": bug["key"],
                    "targets": bug["targets"],
                    "signatures": bug["signatures"],
                    "occurrences": bug["occurrences"],
                    "harness": bool(bug.get("harness")),
                    "artifacts": bug["artifacts"],
                    "replay": bug.get("replay"),
                },
            }
        )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "assay",
                "version": str(report.get("assay_version", "")),
                "semanticVersion": str(report.get("assay_version", "")),
                "rules": [_rule(o) for o in oracles],
            }
        },
        "invocations": [
            {
                "executionSuccessful": report.get("status") not in ("error", "interrupted"),
                "properties": {"masterSeed": report.get("master_seed"), "status": report.get("status")},
            }
        ],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    if root is not None:
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def write_sarif(path: str, report: dict[str, Any]) -> None:
    """Write :func:`sarif_log` to ``path`` atomically."""
    write_bytes(path, (json.dumps(sarif_log(report), indent=2, ensure_ascii=False) + "\n").encode())
