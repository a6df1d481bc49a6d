"""What the score line counts, from real results (no pytest run needed to judge the arithmetic)."""

from __future__ import annotations

import re
from pathlib import Path

from assay.mutant.discover import mutants_in_file
from assay.mutant.execute import (
    EXCLUDED,
    IMPORT_KILL,
    KILLED_BY_FUZZ,
    KILLED_BY_TEST,
    SURVIVED,
    TIMEOUT,
    UNREACHED,
    MutantResult,
)
from assay.mutant.report import counts, score, score_lines, summary

CODE = """\
def f(a, b):
    if a > 1:
        return a + b
    return a * b - 3
"""


def _results(tmp_path: Path) -> list[MutantResult]:
    path = tmp_path / "code.py"
    path.write_text(CODE)
    ms = mutants_in_file(path, tmp_path)
    assert len(ms) >= 11
    raise_ = {"kind": "raise", "type": "builtins.ValueError", "shape": "a", "message": "a", "features": []}
    other = {**raise_, "shape": "b", "message": "b"}
    value = {"kind": "return", "type": "builtins.int", "digest": "1", "repr": "1", "features": []}
    verdicts = [
        MutantResult(ms[0], KILLED_BY_TEST, killed_by="t::a", tests_selected=2),
        MutantResult(ms[1], KILLED_BY_TEST, killed_by=IMPORT_KILL, tests_selected=1),
        MutantResult(ms[2], SURVIVED, tests_selected=1),
        MutantResult(ms[4], UNREACHED),
        MutantResult(ms[5], UNREACHED),
        MutantResult(ms[6], UNREACHED),
        MutantResult(
            ms[7],
            KILLED_BY_FUZZ,
            tests_selected=1,
            fuzz={"status": KILLED_BY_FUZZ, "original": raise_, "mutated": other},
        ),
        MutantResult(
            ms[8],
            KILLED_BY_FUZZ,
            fuzz={"status": KILLED_BY_FUZZ, "original": value, "mutated": {**value, "digest": "2"}},
        ),
        MutantResult(  # what fuzzing recorded wins over a guess from the outcomes
            ms[3],
            KILLED_BY_FUZZ,
            tests_selected=1,
            fuzz={"status": KILLED_BY_FUZZ, "original": raise_, "mutated": other, "kill_kind": "behaviour"},
        ),
        MutantResult(ms[9], TIMEOUT, tests_selected=1),
        MutantResult(ms[10], EXCLUDED, detail="why"),
    ]
    return verdicts


def test_the_score_line_counts_what_it_says(tmp_path):
    """Judged: killed, survived or unreached (9 here); reached: the judged ones a test ran
    (5: the unreached three and the fuzzing kill of an unreached mutant are not); the
    tests' share is over the reached.  The old line divided the tests' kills by every
    judged mutant while calling them "the mutants tests could reach"."""
    c = counts(_results(tmp_path))
    assert (c["judged"], c["reached"], c["killed_at_import"]) == (9, 5, 1)
    assert (c["fuzz_behaviour"], c["fuzz_message"]) == (2, 1)
    assert score(c) == 5 / 9
    lines = "\n".join(score_lines(c))
    assert "score: 55.6% = 5 killed of 9 judged mutants" in lines
    assert "by tests: 2 (1 of them at import" in lines
    assert "by fuzzing: 3 (2 by behaviour, 1 by an error message only)" in lines
    assert "tests: 5 of the 9 judged mutants are reached" in lines
    assert "the tests kill 40.0% of those (2 of 5)" in lines
    assert "not judged: 1 timeout, 1 excluded" in lines
    # Every percentage printed is one of the two ratios, never killed over all mutants.
    printed = {float(p) for p in re.findall(r"([\d.]+)%", lines)}
    assert printed == {55.6, 40.0}


def test_the_summary_names_why_a_mutant_is_excluded(tmp_path):
    text = summary(_results(tmp_path), 1.0)
    assert "excluded" in text and "    " + " " * 15 + "why" in text
