"""Signatures separate bugs: distinct bugs never share one, one bug always gets one."""

from __future__ import annotations

from promote_helpers import isolated_registry, temp_project  # noqa: F401 - fixtures

from assay.engine.execute import run_input
from assay.harness.discovery import load_targets
from assay.promote import promote_artifacts

TWO_BUGS = """
from assay import invariant

def divide(data):
    return 100 // (data[1] - data[1])

def lookup(data):
    return {}[data[1:]]

@assay.target(expected=(ValueError,))
def parse(data: bytes):
    if data[:1] == b"D":
        divide(data)          # bug 1: ZeroDivisionError in divide
    if data[:1] == b"K":
        lookup(data)          # bug 2: KeyError in lookup
    if data[:1] == b"Z":
        raise ZeroDivisionError("raised in parse itself")   # bug 3: same type, other place
    if data[:1] == b"I":
        invariant(len(data) < 3, "short", f"length {len(data)}")
    if data[:1] == b"J":
        invariant(False, "other-invariant", "different name")
    if data[:1] == b"V":
        raise ValueError("a correct rejection")
"""


def _signature(temp_project, data: bytes) -> str | None:
    target = load_targets(temp_project.project()).get("parse")
    verdict = run_input(target, data)
    return verdict.signature if verdict else None


def test_distinct_bugs_get_distinct_signatures(temp_project):
    temp_project.write_targets(TWO_BUGS)
    sigs = {
        key: _signature(temp_project, data)
        for key, data in {
            "divide": b"D1",
            "lookup": b"K1",
            "parse-zero": b"Z",
            "short": b"I123",
            "other": b"J",
        }.items()
    }
    assert None not in sigs.values()
    assert len(set(sigs.values())) == len(sigs), sigs
    assert sigs["divide"].startswith("panic:builtins.ZeroDivisionError@")
    assert sigs["parse-zero"].startswith("panic:builtins.ZeroDivisionError@")  # same type, other frames
    assert sigs["short"].startswith("invariant:short")
    assert sigs["other"].startswith("invariant:other-invariant")
    assert _signature(temp_project, b"V") is None  # expected rejection: no finding


def test_one_bug_through_different_inputs_gets_one_signature(temp_project):
    temp_project.write_targets(TWO_BUGS)
    # Different inputs, different messages (KeyError echoes the key), same bug.
    assert len({_signature(temp_project, d) for d in (b"K1", b"Kxyz", b"K\x00\xff" * 50)}) == 1
    assert len({_signature(temp_project, d) for d in (b"D1", b"Dq", b"D" + bytes(range(256)))}) == 1
    # Invariant details differ, the invariant is the same.
    assert len({_signature(temp_project, d) for d in (b"I123", b"I" * 40)}) == 1


def test_promoter_emits_one_test_per_bug(temp_project):
    temp_project.write_targets(TWO_BUGS)
    arts = [temp_project.artifact("parse", d) for d in (b"D1", b"Dxx", b"K1", b"Kzz")]
    summary = promote_artifacts(temp_project.project(), arts, replays=2)
    assert [o.status for o in summary.outcomes] == ["promoted", "known", "promoted", "known"]
    staged = sorted(p.name for p in temp_project.project().staging.glob("test_parse_*.py"))
    assert len(staged) == 2
    assert {o.signature for o in summary.promoted} == {arts[0].signature, arts[2].signature}
