"""A finding, explained in a few lines: what failed, on what, where, how often, how to rerun it.

One function, :func:`finding_lines`, produces the lines; the end-of-run summary,
``assay findings show`` and ``assay replay`` all print them.  It reads only an
artifact's ``metadata.json`` and input (plus counts the caller knows), so it works
the same for a finding of this run and one from last month.
"""

from __future__ import annotations

import linecache
import os
import shlex
from pathlib import Path
from typing import Any

from assay.core.config import project_holding
from assay.findings.identity import BugIdentity, identify_metadata
from assay.store.metadata import showable_harness

#: Bytes of the input shown in the one-line preview.
PREVIEW_BYTES = 48
#: Characters of the exception message shown (its first line only).
MESSAGE_CHARS = 120


def short_type(name: str | None) -> str:
    """``builtins.ValueError`` -> ``ValueError``; other modules keep their prefix."""
    if not name:
        return ""
    return name[len("builtins.") :] if name.startswith("builtins.") else name


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def input_preview(data: bytes, limit: int = PREVIEW_BYTES) -> str:
    """``b'...' (N bytes)``: the repr of the first ``limit`` bytes and the full length."""
    shown = repr(data[:limit]) + ("..." if len(data) > limit else "")
    return f"{shown} ({len(data)} byte{'' if len(data) == 1 else 's'})"


def display_path(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """``path`` relative to ``base`` (default: the current folder) when inside it, else absolute."""
    p = Path(path).absolute()
    try:
        return p.relative_to(Path(base or os.getcwd()).absolute()).as_posix() or "."
    except ValueError:
        return str(p)


def reproduce_command(
    artifact: str | os.PathLike[str],
    project_root: str | os.PathLike[str] | None = None,
    harness: str | os.PathLike[str] | None = None,
) -> str:
    """``assay replay ARTIFACT`` (plus ``--harness FILE`` for a target defined in a harness file,
    and ``--project DIR`` when the artifact lies outside the project), ready to paste in any
    folder: every path is absolute, and replay finds the project that holds the artifact."""
    words = ["assay", "replay", str(Path(artifact).absolute())]
    if harness is not None:
        words += ["--harness", str(Path(harness).absolute())]
    words += project_words(artifact, project_root)
    return " ".join(shlex.quote(w) for w in words)


def project_words(artifact: str | os.PathLike[str], project_root: str | os.PathLike[str] | None) -> list[str]:
    """``["--project", ROOT]`` when ``assay replay`` would not find ``project_root`` from the
    artifact's own folder (see :func:`assay.core.config.project_holding`), else nothing."""
    if project_root is None:
        return []
    root = Path(project_root).resolve()
    return [] if project_holding(artifact) == root else ["--project", str(root)]


def headline(meta: dict[str, Any], ident: BugIdentity | None = None) -> str:
    """``[oracle] ExceptionType: message`` (``[oracle, harness]`` for a harness finding)."""
    ident = ident or identify_metadata(meta)
    verdict = meta.get("verdict") or {}
    exc = meta.get("exception") or verdict.get("exception") or {}
    tag = str(meta.get("oracle") or verdict.get("oracle") or "?")
    if ident.harness:
        tag += ", harness"
    what = short_type(exc.get("type")) if exc else ""
    if what.startswith("assay."):  # assay's own oracle failure: its message already names the oracle
        what = ""
    message = one_line(exc.get("message", "") if exc else "") or one_line(verdict.get("detail", ""))
    if not message and exc.get("frames"):  # a bare assert: its statement says what was expected
        top = exc["frames"][0]
        message = one_line(linecache.getline(str(top.get("file", "")), int(top.get("line") or 0)))
    if tag.startswith("native-") and verdict.get("key"):
        # A sanitizer's first line is addresses and a pid; its key names the bug and where it was.
        what, message = "", str(verdict["key"])
    text = f"{what}: {message}" if what and message else (what or message or str(meta.get("signature", "?")))
    return f"[{tag}] {text}"


def example_call(meta: dict[str, Any]) -> str | None:
    """``test(a=..., b=...)``: the falsifying example of a Hypothesis target, if recorded."""
    example = ((meta.get("verdict") or {}).get("data") or {}).get("example")
    if not isinstance(example, dict) or not isinstance(example.get("arguments"), dict):
        return None
    args = ", ".join(f"{name}={src}" for name, src in example["arguments"].items())
    return f"{example.get('test', 'test')}({args})"


#: How the where-line of a finding that raised nothing begins, by oracle (others: ``raised at``).
_WHERE = {
    "wedge": "hung at",  # a hang: where the timeout or the kill found it
    "slow": "slow at",  # a slow input: the loop that spends its time
    "crash": "died at",  # the worker died there (a signal, an exit)
}


def where_line(ident: BugIdentity, project_root: str | os.PathLike[str] | None) -> str | None:
    """``raised at FILE:LINE in FUNCTION`` (worded by the kind of finding), or None without a frame."""
    if ident.frame is None:
        return None
    label = " (the harness: fix the fuzz target, not the library)" if ident.harness else ""
    where = f"{display_path(ident.frame.file, project_root)}:{ident.frame.line} in {ident.frame.qualname}"
    return f"{_WHERE.get(ident.oracle, 'raised at')} {where}{label}"


def seen_line(
    meta: dict[str, Any],
    *,
    occurrences: int | None = None,
    signatures: int | None = None,
    last_seen: str | None = None,
    dated: bool = True,
    scope: str = "",
) -> str:
    parts = []
    if occurrences is not None:
        parts.append(f"seen {occurrences}x{scope}")
    if signatures is not None:
        parts.append(f"under {signatures} signature{'' if signatures == 1 else 's'}")
    first = []
    if meta.get("first_seen_case") is not None:
        first.append(f"case {meta['first_seen_case']}")
    if meta.get("first_seen_seconds") is not None:
        first.append(f"{meta['first_seen_seconds']:.2f}s into the run")
    if meta.get("first_seen") and dated:
        first.append(str(meta["first_seen"]))
    text = " ".join(parts)
    if first:
        text += ("; " if text else "") + "first hit at " + ", ".join(first)
    if last_seen:
        text += f"; last seen {last_seen}"
    return text


def finding_lines(
    meta: dict[str, Any],
    data: bytes,
    artifact: str | os.PathLike[str] | None,
    *,
    project_root: str | os.PathLike[str] | None = None,
    occurrences: int | None = None,
    signatures: int | None = None,
    last_seen: str | None = None,
    dated: bool = True,
    scope: str = "",
    harness: str | os.PathLike[str] | None = None,
) -> list[str]:
    """The explanation of one finding (or of a bug, given its totals), one fact a line.

    The first line is the :func:`headline`; the others say where it was raised,
    the input (or the Hypothesis example), how often it was seen and when first,
    and the command that reproduces it (``harness``: the file that defines a harness-file target,
    when the caller knows it; otherwise a line names the file the metadata records, for the user
    to check).  ``dated=False`` leaves out the date of
    the first hit (a finding of the run being summarized); ``scope`` follows the
    count (``" this run"``).
    """
    ident = identify_metadata(meta)
    lines = [headline(meta, ident)]
    where = where_line(ident, project_root)
    if where:
        lines.append(where)
    example = example_call(meta)
    if example:
        lines.append(f"example: {example}")
        lines.append(
            f"input: {len(data)} byte{'' if len(data) == 1 else 's'} of Hypothesis choices (the example above is what they encode)"
        )
    else:
        lines.append(f"input: {input_preview(data)}")
    seen = seen_line(
        meta, occurrences=occurrences, signatures=signatures, last_seen=last_seen, dated=dated, scope=scope
    )
    if seen:
        lines.append(seen)
    if artifact:
        lines.append(f"reproduce: {reproduce_command(artifact, project_root, harness)}")
        recorded = showable_harness(meta.get("harness")) if harness is None else None
        if recorded:
            shown = shlex.quote(display_path(recorded))
            lines.append(
                f"harness: the artifact names {shown}; if its target is not in [tool.assay], "
                f"add --harness {shown} (check that file before you run it)"
            )
    else:
        lines.append("reproduce: (the artifact could not be written)")
    return lines
