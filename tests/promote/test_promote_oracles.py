"""Every oracle tag goes through the same rubric: the replay only compares signatures."""

from __future__ import annotations

from promote_helpers import isolated_registry, temp_project  # noqa: F401 - fixtures

from assay.promote import promote_artifacts

TARGETS = """
import os

from assay import OracleFailure, invariant

@assay.target(expected=(ValueError,))
def multi(data: bytes):
    tag = data.split(b":")[0].decode()
    if tag == "panic":
        raise TypeError("a crash of the target's logic")
    if tag == "invariant":
        invariant(False, "balanced", "unbalanced brackets")
    if tag in ("error-shape", "differential", "slow", "fail-open", "over-denial"):
        raise OracleFailure(f"{tag}-check", "the relation did not hold", kind="mismatch", oracle=tag)
    if tag == "reject":
        raise ValueError("a correct rejection")

@assay.target
def dies(data: bytes):
    if data == b"segv":
        os.abort()
"""

TAGS = ["panic", "invariant", "error-shape", "differential", "slow", "fail-open", "over-denial"]


def test_every_oracle_tag_is_promoted_and_named(temp_project):
    temp_project.write_targets(TARGETS)
    arts = [temp_project.artifact("multi", f"{tag}:1".encode()) for tag in TAGS]
    arts.append(temp_project.artifact("dies", b"segv", isolated=True))
    summary = promote_artifacts(temp_project.project(), arts, write=True, replays=2)
    assert [o.status for o in summary.outcomes] == ["promoted"] * len(arts)
    assert [o.oracle for o in summary.outcomes] == TAGS + ["crash"]
    names = [o.path.name for o in summary.outcomes]
    labels = [
        "TypeError",
        "balanced",
        "error_shape_check",
        "differential_check",
        "slow",
        "fail_open_check",
        "over_denial_check",
        "signal_SIGABRT",
    ]
    for tag, label, name in zip(TAGS + ["crash"], labels, names):
        assert name.startswith(f"test_{'dies' if tag == 'crash' else 'multi'}_{label}_"), name
    assert len(set(names)) == len(names)
    buckets = (temp_project.project().regressions / "buckets.json").read_text()
    for art in arts:
        assert art.signature in buckets


def test_a_shifted_signature_is_quarantined_not_promoted(temp_project):
    """An artifact whose replay fails, but as another bug, is not the bug it claims to be."""
    temp_project.write_targets(TARGETS)
    art = temp_project.artifact("multi", b"panic:1")
    temp_project.write_targets(TARGETS.replace('raise TypeError("a crash', 'raise KeyError("a crash'))
    import importlib
    import sys

    importlib.reload(sys.modules[temp_project.stem])  # the code changed since the campaign
    summary = promote_artifacts(temp_project.project(), [art], write=True)
    (out,) = summary.outcomes
    assert out.status == "quarantined" and "another signature (panic:builtins.KeyError@" in out.reason
    assert not temp_project.project().regressions.exists()
