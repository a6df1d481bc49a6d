"""Slow findings are super-linear, with the growth exponent measured, grown past the hang limit
(issue 40 item 5): assay.engine.slow.cross_steps, and the line-count suspects of
assay.engine.worker (SUSPECT_LINE_BITS).

The targets are planted (tests/slow_growth_targets.py) and run with the defaults a
user gets (no ``slow=``, the default timeout and max_len); campaigns are capped by
cases.  Each mechanism is switched off (a module constant the forked worker inherits)
to show the finding then goes.
"""

from __future__ import annotations

import pytest

import slow_growth_targets as sgt
from assay.core.target import DEFAULT_TIMEOUT
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target
from assay.store.artifacts import load_artifact

CASES = 6000
#: The seed of the linear scan's pair of tests: one whose campaign reaches a long enough input to
#: suspect (on seed 1 the schedule never grows one past SUSPECT_LINE_BITS within CASES, which
#: would leave the "not a finding" test proving nothing).
LINEAR_SEED = 2


def _run(tmp_path, fn, seed=1, cases=CASES):
    target = make_target(fn, seeds=[b"charset=utf-8; q=1"])
    options = CampaignOptions(
        corpus_root=str(tmp_path / "corpus"),
        artifact_root=str(tmp_path / "artifacts"),
        max_cases=cases,
        seed=seed,
        shrink_cases=64,
    )
    (outcome,) = run_campaign([target], options).targets
    return outcome


def _slow(outcome, name):
    return [f for f in outcome.findings if f.oracle == "slow" and name in f.signature]


@pytest.mark.campaign
def test_a_quadratic_parameter_list_is_found_with_defaults_its_exponent_two_and_grown_past_the_hang_limit(tmp_path):
    outcome = _run(tmp_path, sgt.parameter_list)
    (found,) = _slow(outcome, "parameter_list")
    artifact = load_artifact(found.artifact)
    data = artifact.verdict.data
    assert 1.6 <= data["exponent"] <= 2.5, data
    assert "growth exponent" in artifact.verdict.detail
    # Grown until one run crossed the timeout: the artifact is that input, a hang to replay.
    assert data["crossed"]["seconds"] >= DEFAULT_TIMEOUT
    assert len(artifact.input) == data["crossed"]["size"] > 4096


@pytest.mark.campaign
def test_the_quadratic_parameter_list_is_missed_without_line_count_suspects(tmp_path, monkeypatch):
    # Non-vacuity: within max_len its slowest input runs in tens of milliseconds, below
    # the wall-time check (an eighth of the timeout, 250 ms); only its line count shows
    # it.  That check is switched off too: on a machine loaded enough to slow a run
    # fivefold, a 4 KB input may pass it.
    from assay.engine import worker

    monkeypatch.setattr(worker, "SUSPECT_LINE_BITS", 0)
    monkeypatch.setattr(worker, "IMPLICIT_SLOW_SHARE", 1e9)
    outcome = _run(tmp_path, sgt.parameter_list)
    assert not _slow(outcome, "parameter_list")


@pytest.mark.campaign
def test_a_linear_but_costly_scan_is_not_a_finding(tmp_path):
    outcome = _run(tmp_path, sgt.separator_scan, seed=LINEAR_SEED)
    assert not _slow(outcome, "separator_scan"), [f.signature for f in outcome.findings]


@pytest.mark.campaign
def test_the_linear_scan_is_reported_if_any_growth_counted_as_super_linear(tmp_path, monkeypatch):
    # Non-vacuity: the same campaign suspects the long input (its line count is past
    # SUSPECT_LINE_BITS) and only the growth check keeps it out.
    from assay.engine import slow

    monkeypatch.setattr(slow, "SUPERLINEAR", 1.5)
    outcome = _run(tmp_path, sgt.separator_scan, seed=LINEAR_SEED)
    (found,) = _slow(outcome, "separator_scan")
    assert 0.7 <= load_artifact(found.artifact).verdict.data["exponent"] <= 1.3
