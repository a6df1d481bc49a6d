"""Meeting a compared size exactly: a header line's size limit, counted over the whole line.

The subject (``subjects/segments.py``) compares ``len(line)`` (a known header name, a
colon and the value) with a bound the instance holds, 4,224 bytes, far beyond the
target's ``max_len``.  The aim grows a word to the bound, but the line is longer than
the word, so without the measured distance the boundary mutant survives; with it, the
grown line is corrected to the bound within the default budget.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from subject_loader import load_subject

from assay.harness.define import make_target
from assay.mutant import meet
from assay.mutant.apply import Patch
from assay.mutant.differential import KILLED_BY_FUZZ, SURVIVED, FuzzOptions, fuzz_survivor
from assay.mutant.model import Mutant, unified_diff

SUBJECT = Path(__file__).resolve().parent / "subjects" / "segments.py"
#: The survivor campaigns' default case budget (assay.mutant.survivors.DEFAULT_CASES).
CASES = 2000
MAX_LEN = 128
COMPARED = "len(line) > self.max_header_size"
BOUND = 4096 + 128


segments = load_subject(SUBJECT)


def _read(data: bytes):
    return segments.SegmentHeaders().read(data)


TARGET = make_target(
    _read,
    name="segments",
    sources=[str(SUBJECT)],
    seeds=[b'Content-Disposition: form-data; name="a"\r\nContent-Type: text/plain\r\n\r\nhello'],
    expected=(segments.SegmentError,),
    max_len=MAX_LEN,
    timeout=0.5,
)


def make_mutant(new: str, operator: str) -> Mutant:
    """The mutant of ``SegmentHeaders.read`` whose test of the line size became ``new`` (discovery's, or like it)."""
    from assay.mutant.discover import mutants_in_file

    boundary = next(
        m
        for m in mutants_in_file(SUBJECT, SUBJECT.parents[3])
        if m.qualname == "SegmentHeaders.read" and m.operator == "compare.boundary" and COMPARED in m.description
    )
    if operator == boundary.operator:
        assert boundary.edit.replacement == new
        return boundary
    return replace(boundary, operator=operator, edit=replace(boundary.edit, replacement=new, operator=operator))


def fuzz(mutant: Mutant, tmp_path: Path, seed: int = 1):
    text = SUBJECT.read_text()
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=seed, cases=CASES)  # defaults otherwise
    return fuzz_survivor(mutant, Patch.build(mutant, text), [TARGET], options, diff=unified_diff(text, mutant))


#: The whole line's size limit: at the boundary, one past it, and widened.
LIMITS = [
    ("len(line) >= self.max_header_size", "compare.boundary"),
    ("len(line) > self.max_header_size + 1", "number.plus-one"),
    ("len(line) > self.max_header_size + 64", "number.widened"),
]


@pytest.mark.parametrize("mutation", LIMITS, ids=[m[1] for m in LIMITS])
def test_a_whole_lines_size_limit_beyond_max_len_is_killed_within_the_default_budget(tmp_path, mutation):
    evidence = fuzz(make_mutant(*mutation), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.kill_kind == "behaviour"
    assert {evidence.original["kind"], evidence.mutated["kind"]} == {"return", "raise"}
    # The killing input holds a header line of exactly the size one side accepts and the other refuses.
    sizes = {len(line) for line in evidence.input.partition(b"\r\n\r\n")[0].split(b"\r\n")}
    assert sizes & {BOUND, BOUND + 1, BOUND + 64}, sorted(sizes)


def test_without_the_measured_distance_the_boundary_mutant_survives(tmp_path, monkeypatch):
    monkeypatch.setattr(meet, "MEET", False)
    evidence = fuzz(make_mutant(*LIMITS[0]), tmp_path)
    assert evidence.status == SURVIVED, evidence.detail
    assert evidence.cases == 1 + CASES


def _fields(data: bytes):
    return segments.read_fields(data)


FIELDS_TARGET = make_target(
    _fields,
    name="fields",
    sources=[str(SUBJECT)],
    seeds=[b"a=1&b=2&c"],
    expected=(segments.SegmentError,),
    max_len=MAX_LEN,
    timeout=0.5,
)


def fields_mutant() -> Mutant:
    """``limit = options.get("limit", 100)`` with ``101``: told apart only by exactly 101 fields."""
    from assay.mutant.discover import mutants_in_file

    (found,) = [
        m
        for m in mutants_in_file(SUBJECT, SUBJECT.parents[3])
        if m.qualname == "read_fields" and m.operator == "constant.adjust" and m.edit.replacement == "101"
    ]
    return found


def fuzz_fields(tmp_path: Path, seed: int = 1):
    text, mutant = SUBJECT.read_text(), fields_mutant()
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=seed, cases=CASES)
    return fuzz_survivor(mutant, Patch.build(mutant, text), [FIELDS_TARGET], options, diff=unified_diff(text, mutant))


def test_a_count_limit_assigned_on_the_mutated_line_is_met_by_more_pieces_of_the_split(tmp_path):
    """The comparison is a later line reading the name the mutated line assigns; ``len(fields)`` counts a split."""
    evidence = fuzz_fields(tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.input.count(b"&") == 100


def test_without_the_measured_distance_the_count_limit_survives(tmp_path, monkeypatch):
    monkeypatch.setattr(meet, "MEET", False)
    evidence = fuzz_fields(tmp_path)
    assert evidence.status == SURVIVED, evidence.detail


def test_the_pieces_of_a_split_grow_by_their_separator_or_lose_their_last_ones():
    data = b"x\na=1&b=2&c"
    pairs = meet.grown_pairs(data, 2, ("a=1", "b=2", "c"), max_len=100)
    assert pairs[0] == (b"a=1&b=2&c", b"a=1&b=2&c&&")
    assert (b"a=1&b=2&c", b"a=1&b=2") in meet.grown_pairs(data, -1, (b"a=1", b"b=2", b"c"), max_len=100)
    assert meet.grown_pairs(data, 2, ("a=1", "zz"), max_len=100) == []  # not a run of pieces in the input


def test_the_mutated_line_and_its_guard_are_measured_at_their_statements_lines():
    text = SUBJECT.read_text()
    sites = meet.sites_of(make_mutant(*LIMITS[0]), text)
    line = next(n for n, source in enumerate(text.splitlines(), 1) if f"if {COMPARED}:" in source)
    assert list(sites.by_line) == [line]
    (link,) = sites.by_line[line]
    assert ast.unparse(link.operand) == "len(line)" and ast.unparse(link.bound) == "self.max_header_size"


#: The user's code the probe ran (it must run none).
RAN: list[str] = []


class _Limits:
    __slots__ = ("slot",)

    def __init__(self) -> None:
        self.slot = 7

    @property
    def computed(self) -> int:
        RAN.append("property")
        return 5


def test_the_probe_measures_without_running_the_users_code():
    """Names, plain attributes, slots and ``len()`` of built-ins are read; a property is never called."""
    source = "len(line) > self.limit\nself.slot + 1 < n\nself.computed > 3\nlen(items) == 2\n"
    sites = meet.Sites()
    for index, statement in enumerate(ast.parse(source).body):
        compare = statement.value
        sites.by_line[index + 1] = [meet._link(index, compare.left, compare.comparators[0])]

    class Holder:
        limit = 10

    holder, limits = Holder(), _Limits()
    probe = meet.OperandProbe(sites)

    probe.begin()
    probe(1, _frame(line=b"abc", self=holder))
    probe(2, _frame(self=limits, n=20))
    probe(3, _frame(self=limits))
    probe(4, _frame(items=_Sized()))  # a user's __len__ is not called
    assert probe.taken() == ((0, 7, b"abc"), (1, -12, None))  # n, not the bound-like side, moves
    assert RAN == []


class _Sized:
    def __len__(self) -> int:
        RAN.append("__len__")
        return 2


def _frame(**names):
    """A frame (of module-level code) whose names are ``names``."""
    space = dict(names, _getframe=sys._getframe)
    exec("frame = _getframe(0)", space)  # noqa: S102 - a frame to measure in, built from a literal
    return space["frame"]


def test_a_measured_part_is_grown_in_place_and_words_otherwise():
    data = b"Content-Type: text/plain\r\n\r\nx"
    pairs = meet.grown_pairs(data, 3, "Content-Type: text/plain", max_len=100)
    assert pairs[0] == (b"Content-Type: text/plain", b"Content-Type: text/plainnnn")
    assert (b"Content-Type: text/plain", b"Content-Type: text/plainnn") in pairs
    overshot = b"Content-Type: text/plainnnnnnnnnnnnnnnn"
    shrunk = meet.grown_pairs(overshot + b"\r\n\r\nx", -2, overshot, max_len=100)
    assert shrunk[0] == (overshot, overshot[:-2])  # the longest word, the grown one, is cut
    unplaced = meet.grown_pairs(data, 2, None, max_len=100)
    assert (b"x", b"xxx") in unplaced and (b"plain", b"plainnn") in unplaced
    assert meet.grown_pairs(data, 500, None, max_len=100) == []  # no room


def test_an_entry_gets_replacements_only_when_nearer_a_bound_than_any_before():
    meeting = meet.Meeting(max_len=1000)
    keys = meeting.note(b"a: bc", ((0, 10, b"a: bc"),))
    assert keys == [("f", "mutant-gap", "'0:+4'")]
    assert meeting.pairs(b"a: bc")[0] == (b"a: bc", b"a: bccccccccccc")
    meeting.note(b"a: bcd", ((0, 12, b"a: bcd"),))
    assert meeting.pairs(b"a: bcd") == []  # farther
    meeting.note(b"a: b", ((0, -1, b"a: b"),))
    assert meet.features(((0, -1, b""),)) == [("f", "mutant-gap", "'0:-1'")]
    assert (b"a: b", b"a: b") not in meeting.pairs(b"a: b")
