"""What a mutation run tells people: a terminal summary grouped by file and function, and JSON."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from assay.mutant.execute import KILLED_BY_FUZZ, KILLED_BY_TEST, SURVIVED, VERDICTS, MutantResult

SCHEMA_VERSION = 1
#: Verdicts listed one by one in the terminal summary (the rest are only counted).
LISTED = ("survived", "timeout", "error", "invalid", "killed-by-fuzz", "unreached")
#: Most mutants listed per function in the terminal summary.
MAX_LISTED = 12


def counts(results: Iterable[MutantResult]) -> dict[str, int]:
    """Results per verdict, plus ``import_time``: the unreached ones whose code ran only at import."""
    results = list(results)
    c = Counter(r.verdict for r in results)
    return {**{v: c.get(v, 0) for v in VERDICTS}, "import_time": sum(r.import_time for r in results)}


def score(c: dict[str, int]) -> float | None:
    """Killed (by tests or fuzzing) over killed plus survived plus unreached (import-time ones aside)."""
    judged = c[KILLED_BY_TEST] + c[KILLED_BY_FUZZ] + c[SURVIVED] + c["unreached"] - c.get("import_time", 0)
    return None if judged == 0 else (c[KILLED_BY_TEST] + c[KILLED_BY_FUZZ]) / judged


def summary(results: list[MutantResult], elapsed: float, unrun: int = 0) -> str:
    """A terminal summary: per file and function, the verdicts, with every survivor listed."""
    by_func: dict[str, dict[str, list[MutantResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        by_func[r.mutant.relpath][r.mutant.qualname].append(r)
    out: list[str] = []
    for path in sorted(by_func):
        out.append(path)
        for qualname, rs in sorted(by_func[path].items(), key=lambda kv: kv[1][0].mutant.line):
            c: dict[str, int] = Counter(r.verdict for r in rs)
            parts = ", ".join(f"{c[v]} {v}" for v in VERDICTS if c.get(v))
            out.append(f"  {qualname}  ({len(rs)} mutants: {parts})")
            if all(r.verdict == "unreached" for r in rs):
                first, last = min(r.mutant.line for r in rs), max(r.mutant.end_line for r in rs)
                out.append(f"    no test runs lines {first}-{last}: add a test that calls {qualname}")
            listed = sorted((r for r in rs if r.verdict in LISTED), key=lambda r: LISTED.index(r.verdict))
            for r in listed[:MAX_LISTED]:
                out.append(
                    f"    {r.verdict:<14} line {r.mutant.line:<5} {r.mutant.operator:<26} {r.mutant.description}"
                )
                out.append(f"    {'':<14} {r.mutant.id}")
            if len(listed) > MAX_LISTED:
                out.append(
                    f"    ... and {len(listed) - MAX_LISTED} more (see the JSON report or `assay mutant show ID`)"
                )
    c = counts(results)
    total = ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v])
    s = score(c)
    rate = len([r for r in results if not r.cached]) / elapsed if elapsed > 0 else 0.0
    out.append("")
    out.append(f"mutants: {len(results)} ({total}){f', {unrun} not run (budget)' if unrun else ''}")
    if c["import_time"]:
        out.append(
            f"  {c['import_time']} of the unreached run only while their module is imported; they are not judged"
        )
    if s is not None:
        out.append(f"killed: {s:.1%} of the mutants tests could reach or fuzzing could tell apart")
    out.append(f"time: {elapsed:.1f}s, {rate:.1f} mutants/s")
    return "\n".join(out)


def build_report(
    results: list[MutantResult],
    *,
    arguments: dict[str, Any],
    baseline: dict[str, Any],
    timings: dict[str, float],
    history: dict[str, int],
    elapsed: float,
    unrun: int,
    fuzz: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from assay.core.version import __version__

    c = counts(results)
    executed = [r for r in results if not r.cached and r.verdict != "unreached"]
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "mutation",
        "assay_version": __version__,
        "arguments": arguments,
        "baseline": baseline,
        "counts": c,
        "score": score(c),
        "unrun": unrun,
        "elapsed": round(elapsed, 3),
        "timings": {k: round(v, 3) for k, v in timings.items()},
        "mutants_per_second": round(len(results) / elapsed, 2) if elapsed > 0 else None,
        "executed": len(executed),
        "history": history,
        "fuzz": fuzz,
        "mutants": [r.to_json() for r in results],
        "unreached": [r.mutant.id for r in results if r.verdict == "unreached"],
    }


def show(record: dict[str, Any], diff: str) -> str:
    """``assay mutant show ID``: the diff and the verdict's evidence."""
    lines = [
        f"mutant:   {record['id']}",
        f"operator: {record['operator']}",
        f"what:     {record['description']}",
        f"verdict:  {record['verdict']}",
    ]
    if record.get("killed_by"):
        lines.append(f"killed by: {record['killed_by']}{' (gold replay)' if record.get('gold') else ''}")
        if record.get("failure"):
            lines.append(f"failure:  {record['failure']}")
    if record.get("tests_selected"):
        lines.append(f"tests:    {record.get('tests_run', 0)} run of {record['tests_selected']} that reach it")
    if record.get("detail"):
        lines.append(f"detail:   {record['detail']}")
    fuzz = record.get("fuzz")
    if fuzz:
        lines.append(
            f"fuzzing:  {fuzz.get('status')} after {fuzz.get('cases', 0)} cases on {', '.join(fuzz.get('targets') or []) or '-'}"
            f" ({fuzz.get('edges', 0)} edges/lines reached)"
        )
        if fuzz.get("artifact"):
            lines.append(f"artifact: {fuzz['artifact']}")
        if fuzz.get("detail"):
            lines.append(f"          {fuzz['detail']}")
    lines.append("")
    lines.append(diff.rstrip() or "(the function changed since this mutant was recorded; no diff)")
    return "\n".join(lines)
