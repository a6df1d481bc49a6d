"""A wedge's key: the frames its loop holds, whichever moment the timeout caught it at.

The targets (tests/wedge_targets.py) loop through helpers, so the stack at a timeout
is chance; the key must not be.
"""

from __future__ import annotations

import json

import pytest

import wedge_targets as wt
from assay.engine import execute, wedges
from assay.engine.isolate import run_isolated
from assay.findings.bug_entries import bug_section
from assay.harness.define import make_target
from assay.store.artifacts import load_artifact
from assay.store.corpus import Corpus

MOD = "wedge_targets"


def _held(fn, data: bytes):
    return wedges.held_frames(lambda: fn(data), timeout=60.0)


def test_the_held_frames_are_the_loops_and_its_callers():
    # The lambda here is not assay's code, so it is held too (outermost).
    assert _held(wt.wandering_hang, b"W") == ["test_wedges:_held.<locals>.<lambda>", f"{MOD}:wandering_hang"]
    assert _held(wt.hang_in_helper, b"Hxy")[1:] == [f"{MOD}:hang_in_helper", f"{MOD}:_spin"]
    assert _held(wt.finishes, b"") is None, "a run that ends before the window closes holds nothing"


@pytest.mark.parametrize("data", [b"H", b"Hx", b"H" + b"y" * 29])
def test_the_held_frames_do_not_depend_on_where_in_the_loop_the_window_starts(data):
    # Different inputs start the window at different places of _spin's body (the
    # helper it calls takes len(data) + 20 steps): the loop's frames are the same.
    assert _held(wt.hang_in_helper, data)[1:] == [f"{MOD}:hang_in_helper", f"{MOD}:_spin"]


def test_a_stack_at_one_moment_is_chance():
    """Non-vacuity: the stack at a single line event of these loops differs by the moment,
    so a key from it (what a timeout gives) would split one hang into several bugs."""
    stacks = set()
    for after in (wedges.AFTER, wedges.AFTER + 7, wedges.AFTER + 51, wedges.AFTER + 97):
        raw = _stack_at(wt.wandering_hang, b"W", after)
        stacks.add(tuple(raw))
    assert len(stacks) > 1, stacks
    assert {s[-1] for s in stacks} >= {f"{MOD}:_step_up", f"{MOD}:_step_down"}


def _stack_at(fn, data: bytes, at: int) -> list[str]:
    from assay.engine.traced import in_child

    class StackAt(wedges.HeldFrames):
        def report(self) -> bytes:  # the whole stack at ``after``, before any return cut it
            return json.dumps([wedges._identity(f) for f in self.stack]).encode()

    raw = in_child(lambda: fn(data), lambda finish: StackAt(at, 1, finish), 60.0)
    return json.loads(raw)


def _campaign_on(target, triggers, campaign, tmp_path):
    store = Corpus(tmp_path / "corpus", target.name, target.max_len)
    for data in triggers:
        store.add(data)
    return campaign([target], cases=40, seed=2).targets[0]


@pytest.mark.parametrize(
    "fn, trigger",
    [(wt.wandering_hang, b"W"), (wt.wandering_hang_swallow, b"S")],
    ids=["soft timeout (worker)", "hard kill (parent)"],
)
def test_one_hang_reached_by_several_inputs_is_one_deterministic_bug(fn, trigger, campaign, tmp_path):
    target = make_target(fn, seeds=[b"hello"], max_len=64, timeout=0.5)
    t = _campaign_on(target, [trigger + b"a", trigger + b"bc", trigger + b"def"], campaign, tmp_path)
    wedged = [f for f in t.findings if f.oracle == "wedge"]
    assert len(wedged) == 1, f"one hang, one bug: {[f.signature for f in wedged]}"
    (finding,) = wedged
    assert finding.signature == f"wedge:timeout@{MOD}:{fn.__name__}"
    assert finding.occurrences >= 3
    meta = load_artifact(finding.artifact).metadata
    assert meta["determinism"]["same_signature"] is True, meta["determinism"]
    assert meta["verdict"]["data"]["held_frames"] == [f"{MOD}:{fn.__name__}"]
    bugs = [b for b in bug_section([t], project_root=None, project_arg=None)[0] if b["oracle"] == "wedge"]
    assert [b["key"] for b in bugs] == [finding.signature], "soft or killed, one hang is one bug of its key"
    again = run_isolated(target, load_artifact(finding.artifact).input).verdict
    assert again is not None and again.oracle == "wedge"
    # The promoter's replays match it too, wherever their timeouts catch the loop.
    from assay.core.verdict import Verdict
    from assay.promote.from_fuzz import ArtifactCandidate

    candidate = ArtifactCandidate(load_artifact(finding.artifact), target, tmp_path)
    assert candidate.same_failure(again) and not candidate.same_failure(Verdict("panic", "x"))


def _killed(*names: str, held: list[str] | None):
    """The wedge of a worker killed with ``names`` on its stack (outermost first), re-keyed by ``held``."""
    import signal

    from assay.engine.isolate import death_verdict

    lines = [f'  File "{wt.__file__}", line {10 + i} in {name}' for i, name in enumerate(reversed(names))]
    text = "Thread 0x1 (most recent call first):\n" + "\n".join(lines) + "\n"
    verdict = death_verdict(signal.SIGKILL, text, killed_for_timeout=True, timeout=0.5)
    assert verdict.oracle == "wedge", verdict
    return wedges.rekeyed(verdict, held)


def test_a_killed_hang_is_one_bug_wherever_the_kill_found_it_and_two_hangs_are_two():
    """A wedge the parent kills is one bug by the frames its loop holds, as a soft one is: not
    by a frame of the stack the kill happened to find, which merged two hangs of one target
    into one bug and told a killed hang from the same hang stopped by the soft timeout."""
    from assay.core.verdict import ExceptionInfo, Frame, Verdict
    from assay.findings.identity import identify

    sources = [wt.__file__]
    loop = [f"{MOD}:wandering_hang"]
    up = identify(_killed("wandering_hang", "_step_up", held=loop), sources)
    down = identify(_killed("wandering_hang", "_step_down", held=loop), sources)
    assert up.id == down.id, (up.key, down.key)
    other = identify(_killed("wandering_hang", "_step_up", held=[*loop, f"{MOD}:_step_up"]), sources)
    assert other.id != up.id, "two loops of one target are two hangs"
    caught = Frame(MOD, "_step_down", wt.__file__, 20)
    soft = Verdict(
        "wedge",
        wedges.wedge_key(loop),
        "input ran longer than 0.5s",
        ExceptionInfo("assay.engine.execute.WedgeTimeout", "", (caught,)),
    )
    assert identify(soft, sources).id == up.id, "the soft timeout's bug and the kill's are one"
    assert up.frame is not None and up.frame.qualname == "_step_up", "located at the innermost frame, as a soft one"


def test_an_oracles_own_wedge_keeps_its_key():
    """An HTTP step timeout is a ``wedge`` keyed by its step: neither traced nor re-keyed,
    and a replay reproduces it only under the same key."""
    from assay.core.verdict import Verdict, is_timeout_wedge

    step = Verdict("wedge", "GET /items/step-timeout")
    caught = Verdict("wedge", f"timeout@{MOD}:wandering_hang<{MOD}:_step_up")
    assert not is_timeout_wedge(step) and is_timeout_wedge(caught)
    assert not wedges.reproduces(Verdict("wedge", "POST /items/step-timeout"), step)
    assert wedges.reproduces(step, step)
    assert wedges.reproduces(Verdict("wedge", f"timeout@{MOD}:wandering_hang"), caught)
    assert not wedges.reproduces(step, caught) and not wedges.reproduces(None, caught)


def test_a_promoted_hang_caught_elsewhere_in_its_loop_has_not_changed():
    from assay.core.verdict import Verdict
    from assay.promote.replay import failure_message

    promoted_as = f"wedge:timeout@{MOD}:wandering_hang"
    elsewhere = Verdict("wedge", f"timeout@{MOD}:wandering_hang<{MOD}:_step_down")
    assert "has changed" not in failure_message(elsewhere, promoted_as)
    assert "has changed" in failure_message(Verdict("panic", "builtins.ValueError@x"), promoted_as)


@pytest.mark.parametrize(
    "fn, trigger",
    [(wt.wandering_hang, b"W"), (wt.wandering_hang_swallow, b"S")],
    ids=["soft timeout (worker)", "hard kill (parent)"],
)
def test_a_hangs_bug_names_no_exception_type(fn, trigger, campaign, tmp_path):
    """A hang, not an exception of the target's: the report's bug names no exception type (the
    soft timeout's WedgeTimeout is assay's, raised wherever the loop was; a kill raises nothing),
    as docs/report-schema.json says, so no reader takes it for an exception the target raised."""
    target = make_target(fn, seeds=[b"hello"], max_len=64, timeout=0.5)
    t = _campaign_on(target, [trigger + b"a"], campaign, tmp_path)
    entries = bug_section([t], project_root=None, project_arg=None)[0]
    # (On a loaded machine a soft wedge's traced re-keying can time out: two entries, both wedges.)
    assert entries and all((e["oracle"], e["exception"]) == ("wedge", None) for e in entries), entries


def test_a_hang_replayed_or_met_while_shrinking_is_a_wedge_never_a_panic(campaign, tmp_path):
    """The soft timeout's WedgeTimeout is judged a wedge wherever a target meets it: in a
    replay, and in a shrink candidate of another bug (which it then is not)."""
    hang = make_target(wt.wandering_hang, max_len=64, timeout=0.5)
    verdict = execute.run_input(hang, b"W", timeout=0.5)
    assert verdict is not None and verdict.oracle == "wedge" and verdict.signature.startswith("wedge:timeout@")
    assert verdict.exception is not None and verdict.exception.type == "assay.engine.execute.WedgeTimeout"
    target = make_target(wt.panics_unless_short, seeds=[b"hello"], max_len=64, timeout=0.5)
    t = _campaign_on(target, [b"P" + b"x" * 20], campaign, tmp_path)
    panics = [f for f in t.findings if f.oracle == "panic"]
    assert [f.signature for f in panics] == [f"panic:builtins.ValueError@{MOD}:panics_unless_short"]
    assert len(load_artifact(panics[0].artifact).input) >= 4, "a candidate that hung did not count as the panic"
    assert all(f.oracle in ("panic", "wedge") and "WedgeTimeout" not in f.signature for f in t.findings)
