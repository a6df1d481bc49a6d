"""Search power for bugs that need long or deep inputs, past hangs and shallow crashes.

Every campaign here is capped by cases; the non-vacuity tests switch one mechanism
off (a module constant the forked worker inherits) and show the bug is then missed.
"""

from __future__ import annotations

import tomllib

import pytest

import search_power_targets as spt
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target
from assay.store.artifacts import load_artifact


def _run(tmp_path, target, cases, seed):
    options = CampaignOptions(
        corpus_root=str(tmp_path / "corpus"),
        artifact_root=str(tmp_path / "artifacts"),
        max_cases=cases,
        seed=seed,
        shrink_cases=64,
    )
    (outcome,) = run_campaign([target], options).targets
    return outcome


def _quadratic():
    # No slow=: a campaign hunts cost on its own (every target has a timeout).
    return make_target(spt.quadratic_runs, seeds=[b"<a"], max_len=8192, timeout=0.25)


def _in_quadratic(findings):
    return [f for f in findings if f.oracle in ("slow", "wedge") and "quadratic_runs" in f.signature]


@pytest.mark.campaign
def test_quadratic_bug_needing_a_4kb_run_is_found_without_slow(tmp_path):
    outcome = _run(tmp_path, _quadratic(), cases=4000, seed=1)
    found = _in_quadratic(outcome.findings)
    assert found
    assert len(load_artifact(found[0].artifact).input) > spt.RUN_LIMIT


@pytest.mark.campaign
def test_quadratic_bug_is_lost_if_no_input_may_pass_the_length_limit(tmp_path, monkeypatch):
    # Non-vacuity: length control alone (start short, lengthen on stalls) keeps every
    # input far below 4 KB in this many cases; the long children (a share of all
    # cases, every cost-counted one, a share of the nestings) are what reach the bug.
    from assay.engine import worker
    from assay.gen import mutators

    monkeypatch.setattr(mutators, "LONG_SHARE", 0.0)
    monkeypatch.setattr(mutators, "NEST_DEEP", 0.0)
    monkeypatch.setattr(worker, "COST_EVERY", 0)
    outcome = _run(tmp_path, _quadratic(), cases=4000, seed=1)
    assert not _in_quadratic(outcome.findings)


def _toml():
    return make_target(
        spt.toml_nesting, seeds=[b"a = [1]\n", b"[t]\nx = {y = 1}\n"], expected=(tomllib.TOMLDecodeError,), max_len=4096
    )


def _recursion(findings):
    return [f for f in findings if f.signature.startswith("panic:builtins.RecursionError@cycle:tomllib")]


@pytest.mark.campaign
def test_recursion_limit_of_a_real_parser_reached_by_nesting(tmp_path):
    outcome = _run(tmp_path, _toml(), cases=3000, seed=5)
    found = _recursion(outcome.findings)
    assert found
    assert load_artifact(found[0].artifact).input.count(b"[") > 300


@pytest.mark.campaign
def test_recursion_limit_not_reached_without_the_nest_mutation(tmp_path, monkeypatch):
    from assay.gen import mutators

    monkeypatch.setattr(mutators, "MUTATIONS", {k: v for k, v in mutators.MUTATIONS.items() if k != "nest"})
    outcome = _run(tmp_path, _toml(), cases=3000, seed=5)
    assert not _recursion(outcome.findings)


@pytest.mark.campaign
def test_an_unrelated_hang_is_recorded_and_the_search_goes_on(tmp_path):
    target = make_target(spt.hang_then_deep, seeds=[b"hello"], max_len=64, timeout=0.2)
    outcome = _run(tmp_path, target, cases=5000, seed=1)
    by_oracle = {f.oracle: f for f in outcome.findings}
    assert set(by_oracle) == {"wedge", "panic"}
    assert "RuntimeError" in by_oracle["panic"].signature
    wedge = load_artifact(by_oracle["wedge"].artifact)
    assert wedge.input.startswith(b"{")
    # Parents whose children hang are passed over: a handful of timeouts, not hundreds.
    assert by_oracle["wedge"].occurrences < 40


@pytest.mark.campaign
def test_a_shallow_frequent_crash_does_not_hide_a_deeper_one(tmp_path):
    target = make_target(spt.shallow_then_deep, seeds=[b"hello"], max_len=64)
    outcome = _run(tmp_path, target, cases=5000, seed=1)
    kinds = {f.signature.split("@")[0]: f for f in outcome.findings}
    assert set(kinds) == {"panic:builtins.IndexError", "panic:builtins.ZeroDivisionError"}
    assert kinds["panic:builtins.IndexError"].occurrences > 100  # it really is frequent
