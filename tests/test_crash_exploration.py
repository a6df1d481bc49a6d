"""Crash exploration: a known bug does not hide the next one on its path.

Campaigns are capped by cases; the non-vacuity test switches the mechanism off
(``worker.CRASH_PARENTS = 0``, a module constant the forked worker inherits).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import crash_exploration_targets as cet
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.engine.generate import InputSource
from assay.harness.define import make_target

CASES = 2000


#: Two shapes: both bugs in one function; the second in the function after the first's.
TARGETS = [cet.bug_behind_bug, cet.bug_after_bug]


def _kinds(tmp_path, seed: int, fn=cet.bug_behind_bug, cases: int = CASES) -> set[str]:
    return {f.signature.split("@")[0] for f in _outcome(tmp_path, seed, fn, cases).findings}


def _campaign(tmp_path, seed: int, fn=cet.bug_behind_bug) -> tuple[set[str], Path]:
    outcome = _outcome(tmp_path, seed, fn)
    return {f.signature.split("@")[0] for f in outcome.findings}, tmp_path / f"corpus{seed}"


def _outcome(tmp_path, seed: int, fn, cases: int = CASES):
    options = CampaignOptions(
        corpus_root=str(tmp_path / f"corpus{seed}"),
        artifact_root=str(tmp_path / f"artifacts{seed}"),
        max_cases=cases,
        seed=seed,
        shrink_cases=64,
    )
    target = make_target(fn, seeds=[b"hello"], max_len=64)
    (outcome,) = run_campaign([target], options).targets
    assert len({f.bug for f in outcome.findings}) == len(outcome.findings)  # each bug its own group
    return outcome


FIRST, SECOND = "panic:builtins.KeyError", "panic:builtins.ZeroDivisionError"


@pytest.mark.campaign
@pytest.mark.parametrize("fn", TARGETS, ids=lambda fn: fn.__name__)
def test_a_second_bug_behind_the_first_is_found_as_its_own_group(tmp_path, fn):
    found = [_kinds(tmp_path / str(seed), seed, fn) for seed in (1, 2, 3)]
    assert all(FIRST in kinds for kinds in found)
    assert sum(kinds == {FIRST, SECOND} for kinds in found) >= 2, found


@pytest.mark.campaign
@pytest.mark.parametrize("fn", TARGETS, ids=lambda fn: fn.__name__)
def test_without_crash_parents_the_second_bug_stays_hidden(tmp_path, monkeypatch, fn):
    from assay.engine import worker

    monkeypatch.setattr(worker, "CRASH_PARENTS", 0)
    found = [_kinds(tmp_path / str(seed), seed, fn, 10 * CASES) for seed in (1, 2, 3)]
    assert all(kinds == {FIRST} for kinds in found), found


@pytest.mark.campaign
def test_with_worker_restarts_the_second_bug_is_found_and_the_schedule_stays_a_function_of_the_seed(tmp_path):
    # An input that ends the process restarts the worker (several times per campaign):
    # the parent hands the crash parents to each new worker, which goes on the same way.
    outcomes = [_outcome(tmp_path / str(seed), seed, cet.bug_behind_bug_and_exit, CASES) for seed in (1, 2, 3)]
    kinds = [{f.signature.split("@")[0] for f in o.findings} for o in outcomes]
    assert all("crash:exit:3" in k for k in kinds)
    assert sum({FIRST, SECOND} <= k for k in kinds) >= 2, kinds
    again = _outcome(tmp_path / "again", 1, cet.bug_behind_bug_and_exit, CASES)
    assert again.schedule_digest == outcomes[0].schedule_digest


@pytest.mark.campaign
def test_crash_parents_are_never_written_to_the_corpus_folder(tmp_path):
    kinds, corpus = _campaign(tmp_path, 1)
    assert kinds == {FIRST, SECOND}
    stored = [p.read_bytes() for p in corpus.rglob("*.input")]
    assert stored  # the non-failing entries are there
    for data in stored:
        cet.bug_behind_bug(data)  # a later campaign replays these: none may fail


def _troubled(crashing: bool, wedge: bool = False) -> int:
    """Trouble of an entry after 50 of its children re-found a known failure (or hung)."""
    source = InputSource(64, [])
    source.add(b"REC:A", crashing=crashing)
    rng = random.Random(0)
    for _ in range(50):
        source.next(rng)
        source.failed(known=not wedge, wedge=wedge)
    return source.trouble[0]


def test_children_re_finding_their_crash_parents_bug_do_not_count_against_it():
    assert _troubled(crashing=True) == 0
    assert _troubled(crashing=False) > 0  # an ordinary parent is passed over for it
    assert _troubled(crashing=True, wedge=True) > 0  # a hang still costs a whole timeout
