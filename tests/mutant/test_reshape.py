"""Survivor campaigns that reshape the lines of an input reaching the mutated code.

The subject (``subjects/framing.py``) reads a header block and a stream of parts
split by delimiter lines, ``READ_SIZE`` bytes at a time.  Two planted survivors
are told apart only by the shape of the input, not by a value at the compared
place: ``length >= 0`` made ``length > 0`` needs the length header twice, the first
time with 0 (multipart 2.0.1's ``self._segment_limit >= 0``), and a first delimiter
whose line end falls in the next read needs a preamble line of the right length
(multipart's ``offset = max(0, index - 2)``).  With the reshaping of
:mod:`assay.mutant.reshape` each is killed by behaviour within the default 2,000
cases (seeds 1-3: within 109 and 628-801 cases); with it off they survive the same
cap (seeds 1-3).  A folded line before any header (``if not headers`` never firing)
needs no reshaping: the comparison log kills it within 55 cases either way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from subject_loader import load_subject

from assay.feedback.cmplog import replace_one
from assay.harness.define import make_target
from assay.mutant import direct, reshape
from assay.mutant.apply import Patch
from assay.mutant.differential import KILLED_BY_FUZZ, SURVIVED, FuzzOptions, fuzz_survivor
from assay.mutant.discover import mutants_in_file
from assay.mutant.model import Mutant, unified_diff

SUBJECT = Path(__file__).resolve().parent / "subjects" / "framing.py"


framing = load_subject(SUBJECT)
#: The survivor campaigns' default case budget (assay.mutant.survivors.DEFAULT_CASES).
CASES = 2000
SEED = b"xYzZY\nName: a\r\nLength: 1\r\n\r\n--xYzZY\r\nb\r\n--xYzZY--"

TARGET = make_target(
    framing.read_message,
    name="framing",
    sources=[str(SUBJECT)],
    seeds=[SEED],
    expected=(framing.FramingError,),
    max_len=128,
    timeout=0.5,
)


def discovered(qualname: str, operator: str, replacement: str, source: str) -> Mutant:
    """The mutant discovery makes of ``qualname`` on the line holding ``source``."""
    lines = SUBJECT.read_text().splitlines()
    found = [
        m
        for m in mutants_in_file(SUBJECT, SUBJECT.parents[3])
        if m.qualname == qualname
        and m.operator == operator
        and m.edit.replacement == replacement
        and source in lines[m.edit.line - 1]
    ]
    assert len(found) == 1, [(m.operator, m.edit.replacement, m.edit.line) for m in found]
    return found[0]


def fuzz(mutant: Mutant, tmp_path: Path, seed: int = 1):
    text = SUBJECT.read_text()
    # Behaviour only (--compare no-messages): a duplicate length with a broken body differs by message by chance.
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=seed, cases=CASES, messages=False)
    return fuzz_survivor(mutant, Patch.build(mutant, text), [TARGET], options, diff=unified_diff(text, mutant))


#: The length header may come once: only a second one after a first ``Length: 0`` tells ``> 0`` apart.
REPEATED = ("read_headers", "compare.boundary", "length > 0", "if length >= 0:")
#: The first delimiter's line end in the next read keeps the buffer from two bytes past the delimiter.
SHIFTED = ("StreamReader.feed", "arithmetic.swap", "at + 2", "self.buffer = buffer[max(0, at - 2) :]")


@pytest.mark.parametrize("mutation", [REPEATED, SHIFTED], ids=["repeated-line", "shifted-delimiter"])
def test_a_survivor_told_apart_by_the_inputs_shape_is_killed_within_the_default_budget(tmp_path, mutation):
    evidence = fuzz(discovered(*mutation), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.kill_kind == "behaviour"
    assert {evidence.original["kind"], evidence.mutated["kind"]} == {"return", "raise"}


@pytest.mark.parametrize("mutation", [REPEATED, SHIFTED], ids=["repeated-line", "shifted-delimiter"])
def test_without_reshaping_the_shape_survivors_stay_alive(tmp_path, monkeypatch, mutation):
    monkeypatch.setattr(direct, "RESHAPE", False)
    evidence = fuzz(discovered(*mutation), tmp_path)
    assert evidence.status == SURVIVED, evidence.detail
    assert evidence.cases == 1 + CASES


def _applied(data: bytes, values: list[bytes]) -> list[bytes]:
    return [replace_one(data, pattern, replacement, 0) for pattern, replacement in reshape.pairs(data, values, 256)]


def test_a_line_is_repeated_before_itself_with_each_constant_and_after_itself_as_it_is():
    out = _applied(b"GET\r\nLength: 3\r\n\r\nabc", [b"0", b"1"])
    assert b"GET\r\nLength: 0\r\nLength: 3\r\n\r\nabc" in out
    assert b"GET\r\nLength: 1\r\nLength: 3\r\n\r\nabc" in out
    assert b"GET\r\nLength: 3\r\nLength: 3\r\n\r\nabc" in out
    assert b"GET\r\nLength: 3\r\nLength: 0\r\n\r\nabc" not in out


def test_each_line_keeps_its_own_terminator():
    out = _applied(b"text/plain\n--b\r\nx: 1\r\n", [])
    assert b"text/plain\ntext/plain\n--b\r\nx: 1\r\n" in out
    assert b"text/plain\n--b\r\nx: 1\r\nx: 1\r\n" in out


def test_a_delimiters_first_occurrence_gets_a_preamble_line_and_later_ones_a_longer_line_before_them():
    data = b"sep\n--b\r\nhello\r\n--b--"
    out = _applied(data, [])
    for k in range(1, reshape.MAX_SHIFT + 1):
        assert b"sep\n" + b"A" * k + b"\r\n--b\r\nhello\r\n--b--" in out
        assert b"sep\n--b\r\nhello" + b"o" * k + b"\r\n--b--" in out


def test_every_pair_changes_the_input_where_it_says_and_none_outgrows_max_len():
    data = b"sep\n--b\r\nName: a\r\n\r\nbody\r\n--b--"
    for pattern, replacement in reshape.pairs(data, [b"0", b"1"], len(data) + 4):
        out = replace_one(data, pattern, replacement, 0)
        assert out is not None and out != data
        assert len(out) <= len(data) + 4


def test_a_single_line_is_not_reshaped():
    assert reshape.pairs(b"no line breaks here", [b"0"], 64) == []


def test_the_aim_reshapes_the_first_entry_within_a_line_of_the_mutation_and_shifts_the_first_in_its_function():
    aim = direct.Aim([0], 256)
    data = b"sep\n--b\r\nLength: 3\r\n\r\nabc\r\n--b--"
    known = set(aim.replacements(data))
    near = set(reshape.pairs(data, aim.values, 256)) - known
    far = set(reshape.pairs(data, aim.values, 256, repeat=False)) - known
    assert far and far < near

    def reach(distance: int) -> set[tuple[bytes, bytes]]:
        return set(aim(data, [("f", "mutant-reach", str(distance))])[1])

    first = reach(9)  # the first entry in the mutated function: a preamble before the delimiter
    assert far <= first and not (near - far) & first
    assert not near & reach(5)  # nearer, still lines away
    assert near <= reach(1)
    assert reach(1) == set()  # no nearer than before: nothing
    assert not near & set(direct.Aim([0], 256, reshape=False)(data, [("f", "mutant-reach", "0")])[1])


def test_without_repeats_only_a_delimiters_first_occurrence_moves():
    data = b"sep\n--b\r\nhello\r\n--b--"
    out = {replace_one(data, p, r, 0) for p, r in reshape.pairs(data, [b"0"], 256, repeat=False)}
    assert out == {b"sep\n" + b"A" * k + b"\r\n--b\r\nhello\r\n--b--" for k in range(1, reshape.MAX_SHIFT + 1)}


def test_a_place_with_no_short_anchor_is_left_out_and_a_long_run_costs_no_quadratic_search():
    data = b"a\n" + b"A" * 100_000 + b"\n--b\r\nx\r\n--b--"
    out = reshape.pairs(data, [b"0"], 2 * len(data))
    assert out and all(len(pattern) <= reshape.MAX_ANCHOR for pattern, _ in out)
    for pattern, replacement in out:
        changed = replace_one(data, pattern, replacement, 0)
        assert changed is not None and len(changed) > len(data)
