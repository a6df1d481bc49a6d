"""What a mutation run tells people: a terminal summary grouped by file and function, and JSON."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from assay.mutant import outcome as oc
from assay.mutant.execute import (
    EXCLUDED,
    IMPORT_KILL,
    KILLED_BY_FUZZ,
    KILLED_BY_TEST,
    SURVIVED,
    UNREACHED,
    VERDICTS,
    MutantResult,
)
from assay.mutant.model import unified_diff

SCHEMA_VERSION = 1
#: Verdicts listed one by one in the terminal summary (the rest are only counted).
LISTED = ("survived", "timeout", "error", "invalid", "excluded", "killed-by-fuzz", "unreached")
#: Most mutants listed per function in the terminal summary.
MAX_LISTED = 12
#: A fuzzing kill by an error message alone: the two runs raise the same type with different messages.
MESSAGE_ONLY = "message"
#: A fuzzing kill by behaviour: a different return value, exception type, state or features.
BEHAVIOUR = "behaviour"


def fuzz_kill_kind(fuzz: dict[str, Any] | None) -> str | None:
    """:data:`BEHAVIOUR` or :data:`MESSAGE_ONLY` for a fuzzing kill's evidence (None: not a kill).

    Uses the evidence's own ``kill_kind`` field when fuzzing recorded one, else compares
    the two recorded outcomes (evidence written before fuzzing recorded it).
    """
    if not fuzz or fuzz.get("status") != KILLED_BY_FUZZ:
        return None
    kind = fuzz.get("kill_kind")
    if kind in (BEHAVIOUR, MESSAGE_ONLY):
        return str(kind)
    original, mutated = fuzz.get("original"), fuzz.get("mutated")
    if isinstance(original, dict) and isinstance(mutated, dict):
        try:
            if oc.difference(original, mutated) == "exception-shape":
                return MESSAGE_ONLY
        except KeyError:  # an outcome recorded by an older version, without every field
            pass
    return BEHAVIOUR


def counts(results: Iterable[MutantResult]) -> dict[str, int]:
    """Results per verdict, and what the score line counts.

    ``judged``: killed (by tests or fuzzing), survived or unreached, the score's
    denominator (timeouts, errors, invalid and excluded mutants are not judged);
    ``reached``: the judged ones some test (or their module's import) ran;
    ``killed_at_import``: killed because their module no longer imports;
    ``reexec``: applied by re-executing their module; ``fuzz_behaviour`` /
    ``fuzz_message``: fuzzing kills by behaviour and by an error message alone.
    """
    results = list(results)
    c = Counter(r.verdict for r in results)
    out = {v: c.get(v, 0) for v in VERDICTS}
    import_time = sum(r.import_time for r in results)  # unjudged records from older versions
    kinds = Counter(fuzz_kill_kind(r.fuzz) for r in results if r.verdict == KILLED_BY_FUZZ)
    judged = out[KILLED_BY_TEST] + out[KILLED_BY_FUZZ] + out[SURVIVED] + out[UNREACHED] - import_time
    fuzz_unreached = sum(1 for r in results if r.verdict == KILLED_BY_FUZZ and not r.tests_selected)
    return {
        **out,
        "import_time": import_time,
        "judged": judged,
        "reached": judged - (out[UNREACHED] - import_time) - fuzz_unreached,
        "killed_at_import": sum(1 for r in results if r.verdict == KILLED_BY_TEST and r.killed_by == IMPORT_KILL),
        "reexec": sum(1 for r in results if r.verdict != EXCLUDED and (r.mutant.reexec or not r.mutant.unit)),
        "fuzz_behaviour": kinds.get(BEHAVIOUR, 0),
        "fuzz_message": kinds.get(MESSAGE_ONLY, 0),
    }


def score(c: dict[str, int]) -> float | None:
    """Killed (by tests or fuzzing) over the judged mutants: killed, survived or unreached."""
    judged = c[KILLED_BY_TEST] + c[KILLED_BY_FUZZ] + c[SURVIVED] + c[UNREACHED] - c.get("import_time", 0)
    return None if judged == 0 else (c[KILLED_BY_TEST] + c[KILLED_BY_FUZZ]) / judged


def test_kill_rate(c: dict[str, int]) -> float | None:
    """Killed by tests over the judged mutants a test reached."""
    reached = c.get("reached", 0)
    return None if reached == 0 else c[KILLED_BY_TEST] / reached


def score_lines(c: dict[str, int]) -> list[str]:
    """The score, and what it counts, in words that match the numbers."""
    s = score(c)
    if s is None:
        return ["score: no mutant was judged (none killed, survived or unreached)"]
    killed = c[KILLED_BY_TEST] + c[KILLED_BY_FUZZ]
    at_import = c.get("killed_at_import", 0)
    by_tests = f"by tests: {c[KILLED_BY_TEST]}" + (
        f" ({at_import} of them at import: the module no longer imports)" if at_import else ""
    )
    by_fuzz = f"by fuzzing: {c[KILLED_BY_FUZZ]}" + (
        f" ({c['fuzz_behaviour']} by behaviour, {c['fuzz_message']} by an error message only)"
        if c[KILLED_BY_FUZZ]
        else ""
    )
    lines = [
        f"score: {s:.1%} = {killed} killed of {c['judged']} judged mutants (killed, survived or unreached); "
        f"{by_tests}; {by_fuzz}"
    ]
    rate = test_kill_rate(c)
    if rate is not None:
        by_import = " (or their module's import)" if c.get("reexec") else ""
        lines.append(
            f"tests: {c['reached']} of the {c['judged']} judged mutants are reached by a test{by_import}; "
            f"the tests kill {rate:.1%} of those ({c[KILLED_BY_TEST]} of {c['reached']})"
        )
    left = [f"{c[v]} {v}" for v in ("timeout", "error", "invalid", EXCLUDED) if c[v]]
    if c.get("import_time"):
        left.append(f"{c['import_time']} unreached import-time (recorded by an older version)")
    if left:
        lines.append(f"not judged: {', '.join(left)}")
    return lines


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
                if r.verdict == EXCLUDED:
                    out.append(f"    {'':<14} {r.detail}")
            if len(listed) > MAX_LISTED:
                out.append(
                    f"    ... and {len(listed) - MAX_LISTED} more (see the JSON report or `assay mutant show ID`)"
                )
    c = counts(results)
    total = ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v])
    rate = len([r for r in results if not r.cached]) / elapsed if elapsed > 0 else 0.0
    out.append("")
    out.append(f"mutants: {len(results)} ({total}){f', {unrun} not run (budget)' if unrun else ''}")
    if c["reexec"] or c[EXCLUDED]:
        out.append(
            f"  import-time: {c['reexec']} module-level or import-time mutants ran with their module re-executed "
            f"({c['killed_at_import']} killed because the module no longer imports); {c[EXCLUDED]} excluded "
            "(their module changes what the tests see when re-executed unchanged; see each one's detail)"
        )
    out.extend(score_lines(c))
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
    texts: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON report; with ``texts`` (file path to its text), each mutant carries its ``diff``."""
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
        "score_reached_by_tests": test_kill_rate(c),
        "mutants": [mutant_record(r, texts) for r in results],
        "unreached": [r.mutant.id for r in results if r.verdict == "unreached"],
    }


def mutant_record(result: MutantResult, texts: dict[str, str] | None = None) -> dict[str, Any]:
    """One mutant's entry in the JSON report: its result, and its diff when its file's text is known."""
    data = result.to_json()
    text = (texts or {}).get(result.mutant.path)
    data["diff"] = unified_diff(text, result.mutant) if text is not None else None
    return data


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
