"""Non-vacuity through the real engine: planted bugs are found, a correct classifier is clean.

Every campaign has a case cap and a fixed seed (never a time budget).  Seeds are
off (``seeds=False``), so the engine has to find each violation by mutating bytes.
"""

from __future__ import annotations

from compose_helpers import LEAVES, deny_and, first_segment, reference, substitution_blind

from assay.compose import composition_target
from assay.compose.tree import count_leaves, decode
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.store.artifacts import load_artifact

#: Cases per campaign: the cap the issue asks for.
CASES = 3000
#: Shrink budget per finding (buggy classifiers give dozens of findings).
SHRINK = 200


def campaign(tmp_path, fn, name: str, **options):
    target = composition_target(fn, LEAVES, name=name, seeds=False, **options)
    result = run_campaign(
        [target.assay_target],
        CampaignOptions(
            corpus_root=str(tmp_path / "corpus"),
            artifact_root=str(tmp_path / "artifacts"),
            max_cases=CASES,
            seed=1234,
            shrink_cases=SHRINK,
        ),
    )
    return target, result.targets[0]


def findings(outcome) -> list:
    """The composition oracle's findings (an engine-level ``wedge`` on a loaded machine is not ours)."""
    return [f for f in outcome.findings if f.oracle in ("fail-open", "over-denial")]


def signatures(outcome) -> set[str]:
    return {f.signature for f in findings(outcome)}


def test_judging_only_the_first_segment_trips_f(tmp_path) -> None:
    target, outcome = campaign(tmp_path, first_segment, "compose_first", families=())
    sigs = signatures(outcome)
    assert any(s.startswith("fail-open:") for s in sigs), sigs
    assert {f.oracle for f in findings(outcome)} == {"fail-open"}
    # each artifact is shrunk to the fewest leaves that still violate: two
    for f in findings(outcome):
        art = load_artifact(f.artifact)
        case = decode(art.input, len(target.composition.pool), target.composition.table, ())
        assert count_leaves(case) == 2, (f.signature, art.metadata["verdict"]["data"]["command"])
        data = art.metadata["verdict"]["data"]
        assert data["property"] == "F" and data["culprit"]["text"] in data["command"]


def test_denying_every_and_trips_r(tmp_path) -> None:
    _, outcome = campaign(tmp_path, deny_and, "compose_deny_and")
    sigs = signatures(outcome)
    assert "over-denial:and" in sigs, sigs
    assert all(s.startswith("over-denial:and") for s in sigs), sigs
    art = load_artifact(next(f.artifact for f in findings(outcome) if f.signature == "over-denial:and"))
    assert art.metadata["verdict"]["data"]["witness"].count("&&") == 1


def test_forgetting_substitutions_trips_the_substitution_checks(tmp_path) -> None:
    _, outcome = campaign(tmp_path, substitution_blind, "compose_subst")
    sigs = signatures(outcome)
    assert any(
        s.startswith(
            (
                "fail-open:subst",
                "fail-open:embed-arg-subst",
                "fail-open:embed-prefix-subst",
                "fail-open:embed-arg-option",
            )
        )
        for s in sigs
    ), sigs
    assert all(s.startswith("fail-open:") for s in sigs), sigs


def test_a_correct_classifier_has_no_finding_in_the_same_budget(tmp_path) -> None:
    _, outcome = campaign(tmp_path, reference, "compose_ref")
    assert signatures(outcome) == set()
    assert outcome.cases == CASES


def test_same_seed_same_schedule_and_findings(tmp_path) -> None:
    def once(sub: str):
        target = composition_target(first_segment, LEAVES, name="compose_det", seeds=False)
        return run_campaign(
            [target.assay_target],
            CampaignOptions(
                corpus_root=str(tmp_path / sub / "c"),
                artifact_root=str(tmp_path / sub / "a"),
                max_cases=600,
                seed=99,
                shrink_cases=SHRINK,
            ),
        ).targets[0]

    a, b = once("one"), once("two")
    assert a.schedule_digest == b.schedule_digest and a.cases == b.cases == 600
    assert signatures(a) == signatures(b)
    inputs_a = sorted(load_artifact(f.artifact).input for f in findings(a))
    inputs_b = sorted(load_artifact(f.artifact).input for f in findings(b))
    assert inputs_a == inputs_b
