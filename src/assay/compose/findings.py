"""What ``assay compose`` says about its findings: one group per bug, not per signature.

One bug in a classifier shows under many signatures (each spelling of an operator,
each denied command word).  :func:`group_findings` folds them by tag, operator
family (``binary:subst`` covers ``subst``, ``subst-tight`` and ``subst-unquoted``)
and denied leaf (or protected path); each group keeps its shortest example.
Commands are printed exactly, quoted once for a POSIX shell (:func:`quote_command`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assay.compose.oracle import PROTECTED_WRITE
from assay.compose.quoting import quote_command
from assay.core.errors import ArtifactError

#: Order of tags in the console and the report.
TAG_ORDER = ("fail-open", PROTECTED_WRITE, "over-denial")
#: Which metamorphic family (``--families``) each finding family comes from.
SWITCHABLE = {"wrapper": "wrapper", "redirect": "redirect", "embed": "embed"}


def explain_findings(result: Any) -> list[dict[str, Any]]:
    """Each finding of a campaign result with its minimized command and group, read back from its artifact."""
    from assay.store.artifacts import load_artifact

    out = []
    for t in result.targets:
        for f in t.findings:
            entry: dict[str, Any] = {
                "target": t.name,
                "signature": f.signature,
                "oracle": f.oracle,
                "artifact": f.artifact,
                "occurrences": f.occurrences,
            }
            try:
                data = load_artifact(f.artifact).metadata.get("verdict", {}).get("data") or {}
            except ArtifactError:
                data = {}
            for key in ("command", "witness", "culprit", "property", "shape", "group"):
                if key in data:
                    entry[key] = data[key]
            out.append(entry)
    return out


def refused_everything(result: Any) -> tuple[str, str] | None:
    """(target, side-effect class) when the sandbox refused every case of a target, else ``None``.

    A classifier that needs something the sandbox forbids (a bridge process, a socket)
    fails on every case with one ``safety`` finding; that is a setup error, not a bug.
    """
    from assay.store.artifacts import load_artifact

    for t in result.targets:
        if not t.findings or t.cases == 0 or any(f.oracle != "safety" for f in t.findings):
            continue
        if sum(f.occurrences for f in t.findings) < t.cases:
            continue
        kind = "subprocess"
        try:
            data = load_artifact(t.findings[0].artifact).metadata.get("verdict", {}).get("data") or {}
            kind = str(data.get("class") or kind)
        except ArtifactError:
            pass
        return t.name, kind
    return None


def group_key(finding: dict[str, Any]) -> tuple[str, str, str]:
    """(tag, family, denied leaf or protected path) of one explained finding."""
    group = finding.get("group") or {}
    family = group.get("family") or finding.get("shape") or finding["signature"]
    return finding["oracle"], family, group.get("leaf", "")


def _example(finding: dict[str, Any]) -> str | None:
    return finding.get("witness") or finding.get("command")


def _tag_rank(tag: str) -> int:
    return TAG_ORDER.index(tag) if tag in TAG_ORDER else len(TAG_ORDER)


def group_findings(findings: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One group per (tag, family, denied leaf), with its shortest example (ties: the lowest text)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault(group_key(f), []).append(f)
    out = []
    for (tag, family, leaf), members in sorted(groups.items(), key=lambda kv: (_tag_rank(kv[0][0]), kv[0])):
        with_example = [f for f in members if _example(f) is not None]
        best = min(with_example, key=lambda f: (len(_example(f)), _example(f))) if with_example else members[0]  # type: ignore[arg-type]  # with an example
        out.append(
            {
                "tag": tag,
                "family": family,
                "leaf": leaf,
                "signatures": sorted(f["signature"] for f in members),
                "findings": len(members),
                "occurrences": sum(f.get("occurrences", 1) for f in members),
                "example": _example(best),
                "example_signature": best["signature"],
                "example_artifact": best["artifact"],
            }
        )
    return out


def _what(group: dict[str, Any]) -> str:
    if not group["leaf"]:
        return group["family"]
    noun = "protected path" if group["tag"] == PROTECTED_WRITE else "denied part"
    return f"{group['family']}, {noun} {quote_command(group['leaf'])}"


def summary_lines(groups: list[dict[str, Any]], families: Iterable[str]) -> list[str]:
    """The console lines for grouped findings, and how to turn a family off."""
    total = sum(g["findings"] for g in groups)
    if not groups:
        return ["no findings"]
    out = [f"{total} finding(s) in {len(groups)} group(s) (by tag, operator family and denied part or path):"]
    per_family: dict[str, int] = {}
    for g in groups:
        per_family[g["family"]] = per_family.get(g["family"], 0) + 1
    out.append("  families: " + ", ".join(f"{fam} ({n})" for fam, n in per_family.items()))
    for g in groups:
        n = len(g["signatures"])
        out.append(f"  [{g['tag']}] {_what(g)}: {n} signature{'s' if n != 1 else ''}, seen {g['occurrences']}x")
        if g["example"] is not None:
            out.append(f"      example:  {quote_command(g['example'])}")
        out.append(f"      artifact: {g['example_artifact']}")
    if any(g["tag"] == "safety" for g in groups):
        out.append(
            "  safety findings are side effects assay's sandbox refused the classifier: if it needs one "
            "(a bridge process, a socket), pass --allow subprocess|network|write:PATH"
        )
    enabled = list(families)
    seen = sorted(
        {g["family"].removeprefix("level-").split(":")[0] for g in groups} & set(SWITCHABLE), key=list(SWITCHABLE).index
    )
    for fam in seen:
        rest = ",".join(f for f in enabled if f != fam) or "none"
        tag = PROTECTED_WRITE if fam == "redirect" else "fail-open"
        out.append(f"  {fam} findings ([{tag}]) come from the {fam} family: --families {rest} turns it off")
    return out
