"""Survivor campaigns aimed at the mutation: protocol-depth bounds and sizes beyond ``max_len``.

The subject (``subjects/protocol.py``) is a request parser whose planted survivors sit
behind a valid request line and header block (a priority bound) or compare a body
size four times the target's ``max_len``.  Before survivor fuzzing ran on the engine,
aimed at the mutated line, none of them was killed within 2,000 cases (seeds 1-3);
the non-vacuity test switches the aim off and they survive again.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from subject_loader import load_subject

from assay.harness.define import make_target
from assay.mutant import direct
from assay.mutant.apply import Patch
from assay.mutant.differential import KILLED_BY_FUZZ, SURVIVED, FuzzOptions, fuzz_survivor
from assay.mutant.model import EXPRESSION, Edit, Mutant, function_digest, unified_diff

SUBJECT = Path(__file__).resolve().parent / "subjects" / "protocol.py"
#: The survivor campaigns' default case budget (assay.mutant.survivors.DEFAULT_CASES).
CASES = 2000
MAX_LEN = 64


protocol = load_subject(SUBJECT)


def _request(data: bytes):
    return protocol.parse_request(data)


TARGET = make_target(
    _request,
    name="protocol",
    sources=[str(SUBJECT)],
    seeds=[b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"],
    expected=(protocol.ProtocolError,),
    max_len=MAX_LEN,
    timeout=0.5,
)


def make_mutant(func: str, old: str, new: str, operator: str) -> Mutant:
    text = SUBJECT.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == func)
    lines = text.splitlines(keepends=True)
    line = next(n for n in range(node.lineno, node.end_lineno + 1) if old in lines[n - 1])
    start = len(lines[line - 1][: lines[line - 1].find(old)].encode())
    edit = Edit(operator, line, start, line, start + len(old.encode()), new, f"{old} -> {new}", EXPRESSION)
    return Mutant(
        path=str(SUBJECT),
        relpath="tests/mutant/subjects/protocol.py",
        qualname=func,
        operator=operator,
        index=0,
        digest=function_digest("".join(lines[node.lineno - 1 : node.end_lineno])),
        edit=edit,
        unit=func,
        unit_line=node.lineno,
        unit_end_line=node.end_lineno,
    )


def fuzz(mutant: Mutant, tmp_path: Path, seed: int = 1):
    text = SUBJECT.read_text()
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=seed, cases=CASES)  # defaults otherwise
    return fuzz_survivor(mutant, Patch.build(mutant, text), [TARGET], options, diff=unified_diff(text, mutant))


#: A bound reached only after a valid request line and header block.
DEEP = ("priority_of", "level > 41", "level >= 41", "compare.boundary")
#: A body-size limit four times the target's max_len: boundary, +1, widened.
SIZES = [
    ("parse_request", "len(body) > 256", "len(body) >= 256", "compare.boundary"),
    ("parse_request", "len(body) > 256", "len(body) > 257", "number.plus-one"),
    ("parse_request", "len(body) > 256", "len(body) > 1024", "number.widened"),
]


def test_a_bound_behind_a_valid_prefix_is_killed_within_the_default_budget(tmp_path):
    evidence = fuzz(make_mutant(*DEEP), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.cases <= 1 + CASES
    # The killing input holds the compared constant at the compared place, after the prefix.
    assert evidence.input.startswith(b"GET / HTTP/1.1\r\n") and b"41" in evidence.input
    assert evidence.kill_kind == "behaviour"


@pytest.mark.parametrize("mutation", SIZES, ids=[m[3] for m in SIZES])
def test_a_size_limit_beyond_max_len_is_killed_within_the_default_budget(tmp_path, mutation):
    evidence = fuzz(make_mutant(*mutation), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    # The campaign raised its max_len: the killing input is longer than the target's.
    assert len(evidence.input) > MAX_LEN
    assert {evidence.original["kind"], evidence.mutated["kind"]} == {"return", "raise"}


@pytest.mark.parametrize("mutation", [DEEP, SIZES[0]], ids=["deep-bound", "size-boundary"])
def test_without_the_aim_the_deep_survivors_stay_alive(tmp_path, monkeypatch, mutation):
    monkeypatch.setattr(direct, "DIRECTED", False)
    evidence = fuzz(make_mutant(*mutation), tmp_path)
    assert evidence.status == SURVIVED, evidence.detail
    assert evidence.cases == 1 + CASES


#: The raise under the body-size limit, removed: only a body past the limit (beyond max_len) tells it apart.
REMOVED_RAISE = ("parse_request", 'raise ProtocolError("body too large")', "None", "guard.remove-raise")


def test_a_removed_raise_under_a_size_limit_beyond_max_len_is_killed(tmp_path):
    """The guard's test holds the size; the raise's own line has none (multipart's "Boundary too long")."""
    mutant = make_mutant(*REMOVED_RAISE)
    assert direct.mutated_line_constants(mutant, SUBJECT.read_text()) == ["body too large", 256]
    evidence = fuzz(mutant, tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert len(evidence.input) > MAX_LEN


def test_without_the_guards_constants_the_removed_raise_survives(tmp_path, monkeypatch):
    monkeypatch.setattr(direct, "_guard_tests", lambda text, line: [])
    evidence = fuzz(make_mutant(*REMOVED_RAISE), tmp_path)
    assert evidence.status == SURVIVED, evidence.detail


def test_the_mutated_lines_constants_include_names_bound_to_values():
    mutant = make_mutant("parse_request", "len(body) > 256", "len(body) > 257", "number.plus-one")
    assert direct.mutated_line_constants(mutant, SUBJECT.read_text()) == [256, 257]
    named = make_mutant("priority_of", "level > 41", "level > LIMIT", "name")
    assert direct.mutated_line_constants(named, SUBJECT.read_text(), {"LIMIT": 99, "level": "x"}) == [41, 99]


def test_max_len_is_raised_only_for_sizes_beyond_it():
    assert direct.reach_len(64, [41, "x"]) == 64
    assert direct.reach_len(64, [256, 257]) == 257 + direct.REACH_SLACK
    assert direct.reach_len(64, [direct.MAX_REACH_LEN * 2]) == 64  # absurd sizes are not chased
    assert direct.reach_len(512, [1024]) == 1024 + 512  # room for an input as long as the target takes


def test_a_long_entry_can_grow_an_early_word_to_a_size_beyond_max_len():
    """multipart 2.0.1: ``strict and len(self.boundary) > 1024`` with a 512-byte target and 240-byte seeds.

    The boundary is an early word of a long upload; with room for only 64 bytes past the
    size, the aim never offered the 1,025-byte boundary and the raise's mutants survived.
    """
    entry = b"multipart/form-data; boundary=xYzZY\n--xYzZY\r\n" + b"y" * 400 + b"\r\n--xYzZY--"
    aim = direct.Aim([1024], max_len=direct.reach_len(512, [1024]))
    assert (b"xYzZY", b"x" * 1025) in aim.replacements(entry)


def test_the_aim_favours_only_entries_nearer_than_any_before():
    aim = direct.Aim([41], max_len=64)
    far = [("f", "mutant-reach", "'function'"), ("f", "mutant-reach", "5")]
    shares, pairs = aim(b"GET / HTTP/1.1\r\nPriority: a\r\n\r\n", far)
    assert shares == direct.FAVOUR_SHARES
    assert (b"a", b"41") in pairs and (b"a", b"42") in pairs
    assert aim(b"other", [("f", "mutant-reach", "7")]) == (0, [])  # farther: nothing
    assert aim(b"other", [("f", "size", "'big'")]) == (0, [])  # not a reach at all
    assert aim(b"x y", [("f", "mutant-reach", "0")])[0] == direct.FAVOUR_SHARES


def test_reach_features_grade_the_distance_to_the_mutated_line():
    assert direct.reach_features(None, 10) == []
    assert direct.reach_features(frozenset(), 10) == []
    keys = direct.reach_features(frozenset({4, 7}), 10)
    assert ("f", "mutant-reach", "3") in keys
    assert ("f", "mutant-reach", "0") in direct.reach_features(frozenset({10}), 10)


def _read_headers(data: bytes):
    return protocol.HeaderReader().read(data)


HEADER_TARGET = make_target(
    _read_headers,
    name="headers",
    sources=[str(SUBJECT)],
    seeds=[b"Host: a\r\nAccept: b"],
    expected=(protocol.ProtocolError,),
    max_len=MAX_LEN,
    timeout=0.5,
)


def discovered(qualname: str, operator: str, text: str) -> Mutant:
    """The mutant discovery makes of ``qualname`` whose edit is ``text`` (as a user's run would have it)."""
    from assay.mutant.discover import mutants_in_file

    found = [
        m
        for m in mutants_in_file(SUBJECT, SUBJECT.parents[3])
        if m.qualname == qualname and m.operator == operator and m.edit.replacement == text
    ]
    assert len(found) == 1, [(m.operator, m.edit.replacement) for m in found]
    return found[0]


#: A line-size limit the instance holds (``self.max_line``, a constructor default of 4,224 bytes), at its boundary.
ATTRIBUTE_BOUND = ("HeaderReader.read", "compare.boundary", "len(line) >= self.max_line")


def fuzz_headers(mutant: Mutant, tmp_path: Path, seed: int = 1):
    text = SUBJECT.read_text()
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=seed, cases=CASES)
    return fuzz_survivor(mutant, Patch.build(mutant, text), [HEADER_TARGET], options, diff=unified_diff(text, mutant))


def test_a_bound_held_by_the_instance_is_read_from_the_constructors_default(tmp_path):
    """multipart 2.0.1: ``len(line) > self.max_header_size``, ``max_header_size=4096 + 128`` in ``__init__``."""
    mutant = discovered(*ATTRIBUTE_BOUND)
    assert direct.mutated_line_constants(mutant, SUBJECT.read_text()) == [4224]
    evidence = fuzz_headers(mutant, tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert len(evidence.input) > 4096


def test_without_the_instances_values_the_attribute_bound_survives(tmp_path, monkeypatch):
    monkeypatch.setattr(direct, "_instance_values", lambda text, line, names: {})
    evidence = fuzz_headers(discovered(*ATTRIBUTE_BOUND), tmp_path)
    assert evidence.status == SURVIVED, evidence.detail


def test_instance_values_fold_constant_defaults_and_leave_out_clashes():
    text = (
        "class P:\n"
        "    LIMIT = 1 << 10\n"
        "    def __init__(self, size=2**6, *, name=b'x', other=None):\n"
        "        self.size = size\n"
        "        self.name = name\n"
        "        self.big = MAX * 2\n"
        "        self.clash = 1\n"
        "        self.other = other\n"
        "    def reset(self):\n"
        "        self.clash = 2\n"
        "        self.huge = 10 ** 10 ** 6\n"
    )
    values = direct._instance_values(text, 10, {"MAX": 7})
    assert values == {"LIMIT": 1024, "size": 64, "name": b"x", "big": 14}
