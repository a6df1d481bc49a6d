"""Crash exploration: a known bug does not hide the next one on its path.

Campaigns are capped by cases; the non-vacuity test switches the mechanism off
(``worker.CRASH_PARENTS = 0``, a module constant the forked worker inherits).
"""

from __future__ import annotations

import pytest

import crash_exploration_targets as cet
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target

CASES = 10000


def _kinds(tmp_path, seed: int) -> set[str]:
    options = CampaignOptions(
        corpus_root=str(tmp_path / f"corpus{seed}"),
        artifact_root=str(tmp_path / f"artifacts{seed}"),
        max_cases=CASES,
        seed=seed,
        shrink_cases=64,
    )
    target = make_target(cet.bug_behind_bug, seeds=[b"hello"], max_len=64)
    (outcome,) = run_campaign([target], options).targets
    return {f.signature.split("@")[0] for f in outcome.findings}


FIRST, SECOND = "panic:builtins.KeyError", "panic:builtins.ZeroDivisionError"


@pytest.mark.campaign
def test_a_second_bug_behind_the_first_is_found_as_its_own_group(tmp_path):
    found = [_kinds(tmp_path, seed) for seed in (1, 2, 3)]
    assert all(FIRST in kinds for kinds in found)
    assert sum(kinds == {FIRST, SECOND} for kinds in found) >= 2, found


@pytest.mark.campaign
def test_without_crash_parents_the_second_bug_stays_hidden(tmp_path, monkeypatch):
    from assay.engine import worker

    monkeypatch.setattr(worker, "CRASH_PARENTS", 0)
    found = [_kinds(tmp_path, seed) for seed in (1, 2, 3)]
    assert all(kinds == {FIRST} for kinds in found), found
