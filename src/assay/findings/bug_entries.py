"""The report's ``bugs`` section: a run's findings grouped into bugs (:mod:`assay.findings.identity`).

Each finding's artifact is read back for what makes its bug (exception type and
innermost project frame) and for what a person needs to act on it: the message,
the traceback, where in the project's own code it was raised, and the command
that replays it.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay.core.errors import AssayError
from assay.core.verdict import Frame
from assay.findings.explain import project_words
from assay.findings.identity import BugIdentity, group, identify_metadata
from assay.findings.status import NEW, promotions_of_project, status_in_run
from assay.store.artifacts import load_artifact

#: Longest exception message kept in a bug entry (one line).
MAX_MESSAGE = 300
#: Longest traceback kept in a bug entry (its innermost end).
MAX_TRACEBACK = 8000
_LIBRARY_PARTS = frozenset({"site-packages", "dist-packages"})
_TRACEBACK_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$', re.M)


def relative_path(path: str, root: str | None) -> str | None:
    """``path`` relative to ``root`` in POSIX form, or None when it lies outside (or there is no root)."""
    if not root or not path or path.startswith("<"):
        return None
    real, base = os.path.realpath(path), os.path.realpath(root)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        return None
    rel = Path(os.path.relpath(real, base))
    if _LIBRARY_PARTS.intersection(rel.parts):
        return None  # a virtual environment inside the project is not the project's code
    return rel.as_posix()


def _frame_json(frame: Frame, root: str | None) -> dict[str, Any]:
    return {"file": frame.file, "path": relative_path(frame.file, root), "line": frame.line, "function": frame.identity}


def project_location(frames: Iterable[Frame], root: str | None, traceback: str = "") -> dict[str, Any] | None:
    """The innermost frame inside the project folder (where a code-scanning alert can point).

    The recorded frames are the innermost few; when none of them is the project's,
    the full traceback text is searched too (the harness frame is often outermost).
    """
    for frame in frames:  # innermost first
        rel = relative_path(frame.file, root)
        if rel is not None:
            return {"path": rel, "line": frame.line, "function": frame.identity}
    for m in reversed(list(_TRACEBACK_LINE.finditer(traceback))):  # the text lists the outermost first
        rel = relative_path(m["file"], root)
        if rel is not None:
            return {"path": rel, "line": int(m["line"]), "function": m["function"].strip()}
    return None


def replay_command(target: str, artifact: str, project_root: str | None, isolated: bool) -> str:
    """The shell command that reruns one finding's input, from any folder (absolute paths;
    ``--project`` when the artifact lies outside the project)."""
    argv = ["assay", "replay", *project_words(artifact, project_root)]
    if isolated:
        argv.append("--isolated")
    return shlex.join(argv + [target, str(Path(artifact).absolute())])


def _load(artifact: str) -> tuple[dict[str, Any] | None, int | None]:
    if not artifact:
        return None, None
    try:
        art = load_artifact(artifact)
    except AssayError:
        return None, None
    return art.metadata, len(art.input)


def _identity(signature: str, meta: dict[str, Any] | None) -> BugIdentity:
    if meta is not None:
        try:
            return identify_metadata(meta)
        except (KeyError, TypeError, ValueError):
            pass  # metadata of an older layout: the signature alone names the bug
    return BugIdentity(signature, None, None, False)


def bug_section(
    outcomes: Iterable[Any], *, project_root: str | None, project_arg: str | None
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], str]]:
    """One entry per bug over every target's findings, in the order the findings were listed,
    and each (target, signature) -> the id of its bug.

    The same signature can be two bugs in two targets (its innermost project frame
    may be each target's own harness), so findings are mapped per target.
    """
    members = []
    for outcome in outcomes:
        for f in outcome.findings:
            meta, size = _load(f.artifact)
            if meta is None and getattr(f, "unsaved_metadata", None) is not None:
                meta, size = f.unsaved_metadata, len(f.unsaved_input or b"")  # not written: what it would hold
            members.append((outcome.name, f, meta, size))
    bugs = group(members, lambda m: _identity(m[1].signature, m[2]))
    ids = {(m[0], m[1].signature): b.identity.id for b in bugs for m in b.members}
    promotions = promotions_of_project(project_root)
    written = {m[1].artifact for m in members if m[1].artifact and m[1].new}
    entries = []
    for b in bugs:
        entry = _entry(b.identity, b.members, project_root, project_arg)
        entry["status"] = status_in_run(b.identity.id, [m[1] for m in b.members], promotions, written)
        entry["new"] = entry["status"] == NEW
        entries.append(entry)
    return entries, ids


def _entry(ident: BugIdentity, members: list[Any], root: str | None, project_arg: str | None) -> dict[str, Any]:
    target, first, meta, size = members[0]
    exc = (meta or {}).get("exception") or {}
    frames = [Frame(**fr) for fr in exc.get("frames") or ()]
    message = (exc.get("message") or "").strip().splitlines()
    verdict = (meta or {}).get("verdict") or {}
    artifacts = [m[1].artifact for m in members if m[1].artifact]
    return {
        "id": ident.id,
        "key": ident.key,
        "oracle": first.oracle,
        "exception": ident.exception,
        "message": (message[0][:MAX_MESSAGE] if message else (verdict.get("detail") or "")[:MAX_MESSAGE]),
        "harness": ident.harness,
        "location": _frame_json(ident.frame, root) if ident.frame else None,
        "project_location": project_location(frames, root, exc.get("traceback") or ""),
        "harness_file": relative_path((meta or {}).get("harness") or "", root),
        "targets": sorted({m[0] for m in members}),
        "signatures": [m[1].signature for m in members],
        "occurrences": sum(m[1].occurrences for m in members),
        "new": False,  # set with "status" by bug_section: the bug's, never one artifact's
        "artifacts": artifacts,
        "replay": (
            replay_command(target, first.artifact, root or project_arg, bool((meta or {}).get("infrastructure")))
            if first.artifact
            else None
        ),
        "input_size": size,
        "traceback": (exc.get("traceback") or "")[-MAX_TRACEBACK:],
        "saved": not any(getattr(m[1], "save_error", "") for m in members),
        "input_base64": _unsaved_input(members),
    }


def _unsaved_input(members: list[Any]) -> str | None:
    """The input of the first finding whose artifact could not be written (base64), or None."""
    for m in members:
        data = getattr(m[1], "unsaved_input", None)
        if getattr(m[1], "save_error", "") and data is not None:
            return base64.b64encode(data).decode("ascii")
    return None
