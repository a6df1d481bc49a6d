"""Work done for findings stays within its share of the campaign (assay.engine.budget),
and one slow input is one bug (assay.engine.slow.dominant_frames).

The campaigns are capped by cases; time is measured by the engine's own counters
(seconds of loop and of analysis, carried in the outcome), never against the
machine's speed.
"""

from __future__ import annotations

import pytest

import budget_targets as bt
from assay.core.verdict import Frame, frames_key
from assay.engine import execute, slow, traced
from assay.engine.budget import ANALYSIS_SHARE, AnalysisBudget
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target
from assay.reports.campaign import analysis_fields, analysis_line

#: The seed is slow from the first case: 60 ms a run on a quiet machine, far past
#: the target's ``slow=`` threshold (2 ms), so confirmation shrinks it to a quarter and a
#: half (all within the 2 s timeout); its line count saturates, so each of the stacks
#: that key it is a long traced run: seconds of analysis in all.
SLOW_SEED = b"S" * 1000
CASES = 1000
#: Seconds one analysis run may overshoot the bound by (see the test).
OVERSHOOT = 0.5


def _campaign(tmp_path, share):
    target = make_target(bt.slow_scan, seeds=[SLOW_SEED, b"a"], max_len=1000, timeout=2.0, slow=0.002)
    options = CampaignOptions(
        corpus_root=str(tmp_path / "corpus"),
        artifact_root=str(tmp_path / "artifacts"),
        max_cases=CASES,
        seed=3,
        shrink_cases=64,
        analysis_share=share,
    )
    (outcome,) = run_campaign([target], options).targets
    return outcome


@pytest.mark.campaign
@pytest.mark.parametrize("bounded", [True, False], ids=["bounded", "unbounded"])
def test_a_slow_input_early_leaves_the_loop_its_rate_and_is_one_bug(tmp_path, bounded):
    outcome = _campaign(tmp_path, ANALYSIS_SHARE if bounded else None)
    assert outcome.cases == CASES + 2
    slow_findings = [f for f in outcome.findings if f.oracle == "slow"]
    assert len(slow_findings) == 1, [f.signature for f in outcome.findings]
    assert len(outcome.findings) == 1
    assert "_scan" in slow_findings[0].signature
    during = outcome.analysis_seconds - outcome.analysis_after  # analysis while cases remained
    assert outcome.loop_seconds > 0 and outcome.analysis_seconds > 0.3  # the analysis is real work
    # The loop keeps at least 90% of its time (so of its rate) while it fuzzes: analysis
    # took at most ANALYSIS_SHARE of the loop's time, overshot by at most one run whose
    # cost was under-predicted (a few hundred ms on a loaded machine: OVERSHOOT).
    within = during <= ANALYSIS_SHARE * outcome.loop_seconds + OVERSHOOT
    if bounded:
        assert within, (during, outcome.loop_seconds)
        assert outcome.analysis_after > 0  # what the loop could not afford was finished after the last case
    else:
        # Non-vacuity: without the bound the whole analysis runs while the loop waits.
        assert not within, (during, outcome.loop_seconds)
        assert outcome.analysis_after < 0.05
    report = analysis_fields(outcome)
    assert report["seconds"] == round(outcome.analysis_seconds, 3)
    assert report["bound"] == (ANALYSIS_SHARE if bounded else None)
    assert "analysing findings took" in analysis_line(outcome)


def test_the_budget_affords_a_share_of_the_loop_time_and_counts_nested_work_once(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr("assay.engine.budget.time.monotonic", lambda: clock[0])
    budget = AnalysisBudget(0.1, spent=1.0, loop=20.0)  # an earlier worker's totals: 2.0 s earned, 1.0 spent
    assert budget.allowance() == pytest.approx(1.0)
    clock[0] += 10.0  # fuzzing
    assert budget.allowance() == pytest.approx(2.0)
    with budget.spending():
        clock[0] += 1.0
        with budget.spending():
            clock[0] += 1.5
        assert budget.spent == pytest.approx(3.5)  # the work under way counts before it ends
    assert budget.spent == pytest.approx(3.5)
    assert budget.loop == pytest.approx(30.0)  # analysis time is not loop time
    assert budget.allowance() == pytest.approx(-0.5) and not budget.affords(0.0)
    assert AnalysisBudget(None).affords(1e9)


def test_confirm_steps_predict_each_run_before_making_it():
    runs = []
    steps = slow.confirm_steps(lambda d: runs.append(len(d)), b"ab" * 10, threshold=1.0, first=0.5)
    assert next(steps) == pytest.approx(0.5) and runs == []  # a prediction first, no run yet
    with pytest.raises(StopIteration) as stop:
        while True:
            steps.send(None)
    assert stop.value.value is None  # fast runs: not slow
    assert runs == [20] * slow.REPLAYS


def _stacks(data: bytes, points) -> list[list[Frame]]:
    lines = traced.CountingChild(lambda d: execute.run(make_target(bt.slow_scan), d), 1 << 22)
    try:
        count = lines.count(data, 10.0)
    finally:
        lines.close()
    target = make_target(bt.slow_scan)
    return [traced.stack_at_line(lambda: execute.run(target, data), int(count * p), 10.0) for p in points]


def test_one_slow_loop_is_one_key_whichever_helper_its_stacks_land_in():
    keys_of_one_stack, keys_of_dominant = set(), set()
    for n in (200, 300, 400, 500):
        stacks = _stacks(b"S" * n, slow.KEY_POINTS)
        assert all(stacks)
        keys_of_one_stack.update(frames_key(s) for s in stacks)
        keys_of_dominant.add(frames_key(slow.dominant_frames(stacks)))
    # Non-vacuity: a stack alone lands in either helper or in the loop (several keys).
    assert len(keys_of_one_stack) > 1, keys_of_one_stack
    (key,) = keys_of_dominant
    assert key.startswith("budget_targets:_scan<"), key


def test_dominant_frames_prefers_the_frame_most_stacks_hold():
    def f(name):
        return Frame(module="m", qualname=name, file="m.py", line=1)

    loop, outer = f("loop"), f("outer")
    stacks = [[f("left"), loop, outer], [loop, outer], [f("right"), loop, outer]]
    assert slow.dominant_frames(stacks) == [loop, outer]
    assert slow.dominant_frames([[], []]) == []
