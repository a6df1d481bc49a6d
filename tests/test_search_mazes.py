"""Search round two: branch directions, comparison progress, decoded comparisons.

Each maze in examples/planted/search_mazes.py must be solved within a case cap on
fixed seeds, and each mechanism has a non-vacuity check: with it turned off, its
maze is *not* solved within the same cap.
"""

from __future__ import annotations

import pytest

from assay.engine import worker
from assay.feedback import cmplog, decoded, sysmon
from assay.feedback.cmplog import CmpLog
from assay.gen import mutators
from assay.store.artifacts import load_artifact

CAP = 3000

MAZES = [
    "maze_branch_ternary",
    "maze_branch_mixed",
    "maze_branch_joins",
    "maze_protocol_state",
    "maze_decoded_fields",
    "maze_decoded_json",
    "maze_regex_compound",
    "maze_transform_xor",
    "maze_unicode_netloc",
    "maze_memoized",
    "maze_regex_alternative",
]


def _solved_at(result) -> int | None:
    (t,) = result.targets
    hits = [load_artifact(f.artifact).metadata for f in t.findings]
    hits = [m for m in hits if (m.get("exception") or {}).get("type", "").endswith("RuntimeError")]
    return min(m["case_index"] for m in hits) if hits else None


@pytest.mark.campaign
@pytest.mark.parametrize("name", MAZES)
@pytest.mark.parametrize("seed", [1, 2])
def test_maze_solved_within_cap(planted, campaign, name, seed):
    at = _solved_at(campaign([planted.get(name)], cases=CAP, seed=seed, shrink_cases=32))
    assert at is not None, f"{name} not solved within {CAP} cases (seed {seed})"


@pytest.mark.campaign
@pytest.mark.parametrize("split", [True, False])
def test_instruction_split_is_what_solves_the_ternary_maze(planted, campaign, monkeypatch, split):
    # Without the value profile (which sees the expected byte change too), only the
    # branch directions show progress.  The design before the split retired each
    # one-way site after ONE_WAY_CAP hits (the maze's hot loop gets there in the
    # first input) and re-armed it only at case 8192.
    monkeypatch.setattr(CmpLog, "value_profile", False)
    monkeypatch.setattr(sysmon.SysmonFeedback, "split_by_instruction", split)
    monkeypatch.setattr(sysmon.SysmonFeedback, "rearm_on_news", split)
    solved = _solved_at(campaign([planted.get("maze_branch_ternary")], cases=CAP, seed=1)) is not None
    assert solved == split


@pytest.mark.campaign
@pytest.mark.parametrize("split", [True, False])
def test_edge_split_is_what_solves_the_join_maze(planted, campaign, monkeypatch, split):
    # Each wanted direction is an ``or`` exit into a join.  Without the value profile
    # only those directions show progress, and without the edge split each site is
    # retired after JOIN_CAP one-way hits within the first input, with no new line in
    # its code object to re-arm it.
    monkeypatch.setattr(CmpLog, "value_profile", False)
    monkeypatch.setattr(sysmon.SysmonFeedback, "split_edges", split)
    solved = _solved_at(campaign([planted.get("maze_branch_joins")], cases=CAP, seed=1)) is not None
    assert solved == split


@pytest.mark.campaign
def test_with_instruction_split_no_cap_matters(planted, campaign, monkeypatch):
    # The same caps with the split on: the conditional expressions' directions never
    # needed their BRANCH events.
    monkeypatch.setattr(sysmon, "ONE_WAY_CAP", 1)
    monkeypatch.setattr(sysmon, "JOIN_CAP", 1)
    assert _solved_at(campaign([planted.get("maze_branch_ternary")], cases=CAP, seed=1)) is not None


@pytest.mark.campaign
def test_without_value_profile_the_protocol_maze_is_not_solved(planted, campaign, monkeypatch):
    monkeypatch.setattr(CmpLog, "value_profile", False)
    assert _solved_at(campaign([planted.get("maze_protocol_state")], cases=CAP, seed=1)) is None


@pytest.mark.campaign
@pytest.mark.parametrize("seed", [1, 2])
def test_the_value_profile_alone_solves_the_protocol_maze(planted, campaign, monkeypatch, seed):
    # Not the line-count climb (each step runs a few more lines of the target): without it too.
    monkeypatch.setattr(worker, "COST_EVERY", 0)
    assert _solved_at(campaign([planted.get("maze_protocol_state")], cases=CAP, seed=seed)) is not None


@pytest.mark.campaign
def test_without_unicode_chars_the_netloc_maze_is_not_solved(planted, campaign, monkeypatch):
    monkeypatch.setattr(mutators, "MUTATIONS", {k: v for k, v in mutators.MUTATIONS.items() if k != "unicode-char"})
    assert _solved_at(campaign([planted.get("maze_unicode_netloc")], cases=CAP, seed=1)) is None


@pytest.mark.campaign
def test_without_decoded_forms_the_fields_maze_is_not_solved(planted, campaign, monkeypatch):
    monkeypatch.setattr(decoded.DecodedForms, "pairs", lambda self, a, b: [])
    assert _solved_at(campaign([planted.get("maze_decoded_fields")], cases=CAP, seed=1)) is None


@pytest.mark.campaign
def test_without_going_around_memo_caches_the_memoized_maze_is_not_solved(planted, campaign, monkeypatch):
    monkeypatch.setattr(CmpLog, "attach", _without_caches(CmpLog.attach))
    assert _solved_at(campaign([planted.get("maze_memoized")], cases=CAP, seed=1)) is None


@pytest.mark.campaign
def test_without_regex_samples_the_alternative_maze_is_not_solved(planted, campaign, monkeypatch):
    monkeypatch.setattr(cmplog, "_record_regex", lambda *args: None)
    assert _solved_at(campaign([planted.get("maze_regex_alternative")], cases=CAP, seed=1)) is None


def _without_caches(attach):
    def attach_keeping_caches(self):
        attach(self)
        self.caches = []

    return attach_keeping_caches


def test_decoded_forms_of_one_input():
    forms = decoded.DecodedForms(b"ff;0X1A;1.5;aGVsbG8=;User;0007;" + bytes(c ^ 0x20 for c in b"secret"))
    assert (b"ff", b"c0ffee") in forms.pairs(0xFF, 0xC0FFEE)
    assert (b"0X1A", b"0X5EED") in forms.pairs(0x1A, 0x5EED)
    assert (b"0007", b"0042") in forms.pairs(7, 42), "zero-padded to the field's width"
    assert (b"1.5", b"2500.0") in forms.pairs(1.5, 2.5e3)
    assert (b"aGVsbG8=", b"YXNzYXkh") in forms.pairs(b"hello", b"assay!")
    assert (b"User", b"Root") in forms.pairs("user", "root"), "the case of the input's run"
    # What an operand finds in the input is worked out once per input: another other side, or
    # the same text as bytes, still gets its own replacement.
    assert (b"User", b"Admin") in forms.pairs("user", "admin") and (b"User", b"Root") not in forms.pairs(
        "user", "admin"
    )
    assert (b"User", b"Guest") in forms.pairs(b"user", b"guest")
    # A transform: the input holds the compared key xor 0x20.
    assert (b"SECRET", b"OPENUP") in forms.pairs(b"secret", b"openup")
    # JSON: a value that needed no escaping is replaced by one that does, escaped.
    pairs = decoded.DecodedForms(b'{"m": "xy"}').pairs("xy", 'a"b')
    assert (b"xy", b'a\\"b') in pairs
