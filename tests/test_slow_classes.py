"""One confirmation per cost class, spent only by a suspect that is slow (assay.engine.worker).

A case that looks slow (by its time, with or without ``slow=``) is re-checked; a suspect the
re-check refutes (a loaded moment was timed, not the input) must leave its cost class open,
or a genuine quadratic of that class is not checked until the climb reaches the next class.

Time here is a fake clock (the module ``time`` of :mod:`assay.engine.slow` replaced) that the
target advances by a microsecond per loop turn it makes: the quadratic is real code, its
timings are exact, and a loaded moment is two turns of the clock the noise input adds.
"""

from __future__ import annotations

import pytest

from assay.engine import execute, journal as jr, slow
from assay.engine.worker import Worker, WorkerPlan, _bucket
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from assay.harness.define import make_target


class Clock:
    """A fake ``time`` module: seconds are the loop turns the target made, a microsecond each."""

    def __init__(self) -> None:
        self.now = 0.0
        self.loaded = 0  # runs of NOISE still timed in a loaded moment

    def perf_counter(self) -> float:
        return self.now


CLOCK = Clock()
#: A fast input, slow only while the machine is loaded.
NOISE = b"noise"
#: The quadratic's suspect: 20,100 turns, as long as a loaded moment.
QUADRATIC = b"[" * 200
#: The time a case of either took when it was suspected (20 ms: cost class 14).
ELAPSED = 0.0201
#: Turns a loaded moment adds to a run of NOISE.
LOADED_TURNS = 20_100


def work(data: bytes) -> int:
    """Quadratic: every byte rescans the rest of the input."""
    turns = 0
    for i in range(len(data)):
        for _ in data[i:]:
            turns += 1
    if data == NOISE and CLOCK.loaded:
        CLOCK.loaded -= 1
        turns += LOADED_TURNS
    CLOCK.now += turns * 1e-6
    return turns


def _plan(target) -> WorkerPlan:
    return WorkerPlan(
        target=target,
        tseed=1,
        initial=[],
        initial_pos=0,
        generated_pos=0,
        max_cases=0,
        deadline=None,
        replay_only=False,
        corpus=[],
        seen=[],
        known_signatures=set(),
        chain=bytes(32),
        shrink_cases=8,
        slow=target.slow,
    )


def _suspect(worker: Worker, pos: int, data: bytes) -> bool:
    """Run ``data`` as a case that took ELAPSED; whether it became a suspect (then analyse it through)."""
    result = execute.run(worker.target, data)
    worker._after(jr.GENERATED, pos, data, [], result, ELAPSED, [])
    suspected = worker._analysis is not None
    worker._advance_analysis((jr.GENERATED, pos), finishing=True)
    return suspected


@pytest.mark.parametrize("threshold", [None, 0.01], ids=["implicit", "slow="])
def test_a_suspect_refuted_as_noise_leaves_its_cost_class_open(threshold, monkeypatch):
    monkeypatch.setattr(slow, "time", CLOCK)
    # With slow= a case's two replays are timed before it is a suspect: the loaded moment lasts them.
    monkeypatch.setattr(CLOCK, "loaded", 2 if threshold else 0)
    target = make_target(work, name="work", slow=threshold, timeout=0.1, max_len=256)
    sent: list = []
    feedback = SysmonFeedback(Scope(target.source_paths()))
    feedback.start()
    try:
        worker = Worker(_plan(target), feedback, jr.Journal(target.max_len), sent.append)
        try:
            assert _suspect(worker, 0, NOISE), "the loaded moment makes a suspect"
            assert not [m for m in sent if m[0] == "finding"]
            assert _suspect(worker, 1, QUADRATIC), "the refuted suspect left the class open"
            (finding,) = [m for m in sent if m[0] == "finding"]
            assert finding[1] == "slow:superlinear@test_slow_classes:work"
            # A suspect found slow spends its class: the next of the class is not checked.
            assert worker.confirmed_bucket == _bucket(ELAPSED)
            assert not _suspect(worker, 2, b"]" * 200)
        finally:
            worker.counting.close()
    finally:
        feedback.stop()
