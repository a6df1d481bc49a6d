"""The worker's hot loop in C (``_cmutate.HotLoop``) runs the schedule the Python loop runs.

``Worker._block`` is the reference; the C twin must generate the same inputs, chain
the same digest, and hand back to Python exactly the cases the Python loop would
judge on its general path.  Each campaign here runs twice, with the C loop and with
the Python loop (``Worker._hot_loop`` answering None), and must agree on every input
(the schedule digest), corpus entry and finding, while the C loop did most cases.
"""

from __future__ import annotations

import collections
import json
import tomllib
from pathlib import Path

import pytest

from assay.engine import worker
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.gen.accelerated import cmutate
from assay.harness.define import make_target
from hot_loop_targets import make_writer, shallow

needs_c = pytest.mark.skipif(cmutate is None, reason="assay.gen._cmutate is not built (no C compiler)")


class _Counting:
    """Wraps the HotLoop to count what it hands back (written to a file: the worker is a forked child)."""

    def __init__(self, hot, path: Path) -> None:
        self.hot, self.path, self.seen = hot, path, collections.Counter()

    def run(self, i: int, stop: int, executed: int, *wake_at):
        out = self.hot.run(i, stop, executed, *wake_at)
        self.seen[str(out[0])] += 1
        self.seen["ran"] += out[2]
        # ran through a clock boundary where nothing was due (Worker._quiet_end)
        self.seen["crossed"] += out[1] // worker.CLOCK_EVERY - i // worker.CLOCK_EVERY > 1
        # children made ahead, dropped when a case before them went to Python, and the
        # staged replacements they had taken, put back
        self.seen["dropped"], self.seen["restaged"] = self.hot.dropped, self.hot.restaged
        self.path.write_text(json.dumps(self.seen))
        return out


def _run(target, root: Path, *, c: bool, monkeypatch: pytest.MonkeyPatch, cases: int, seed: int = 1):
    root.mkdir(parents=True, exist_ok=True)
    stats = root / "hot.json"
    original = worker.Worker._hot_loop
    with monkeypatch.context() as m:
        if c:

            def counted(self, stream):
                hot = original(self, stream)
                assert hot is not None, "the C hot loop should run this campaign"
                return _Counting(hot, stats)

            m.setattr(worker.Worker, "_hot_loop", counted)
        else:
            m.setattr(worker.Worker, "_hot_loop", lambda self, stream: None)
        options = CampaignOptions(
            corpus_root=str(root / "c"), artifact_root=str(root / "a"), max_cases=cases, seed=seed
        )
        (out,) = run_campaign([target], options).targets
    seen = json.loads(stats.read_text()) if c else {}
    return out, seen


def _toml(data: bytes):
    return tomllib.loads(data.decode("utf-8", "surrogateescape"))


def _targets(planted, tmp_path: Path):
    writer = make_target(make_writer(tmp_path / "written"), name="writer", seeds=[b"hello"], max_len=64)
    toml = make_target(
        _toml,
        name="toml",
        expected=(tomllib.TOMLDecodeError,),
        sources=("tomllib",),
        seeds=[b'a = "x"\n[t]\nb = [1, 2]\n'],
        max_len=512,
        # Past its timeout the parent interrupts the run under way, which changes what the campaign
        # records: the two campaigns compared here would differ by the wall clock (at 0.05 s they
        # differ on every run, and agree with the interrupt switched off).  Its slowest runs take
        # under 0.1 s, under ASan too; a stalled, loaded machine must not reach the limit.
        timeout=60.0,
    )
    return {
        "maze_checksum": planted.get("maze_checksum"),  # guards: repaired children
        "maze_keyword_str": planted.get("maze_keyword_str"),  # comparison replacements, the stage
        "planted_feature_only": planted.get("planted_feature_only"),  # features: cases handed back
        "toml": toml,  # expected rejections on most inputs
        "writer": writer,  # sandbox refusals
    }


@needs_c
@pytest.mark.parametrize("name", ["maze_checksum", "maze_keyword_str", "planted_feature_only", "toml", "writer"])
def test_the_c_hot_loop_runs_the_schedule_of_the_python_loop(planted, tmp_path, monkeypatch, name):
    target = _targets(planted, tmp_path)[name]
    cases = 3000
    python, _ = _run(target, tmp_path / "python", c=False, monkeypatch=monkeypatch, cases=cases)
    fast, seen = _run(target, tmp_path / "c", c=True, monkeypatch=monkeypatch, cases=cases)
    assert fast.schedule_digest == python.schedule_digest
    assert fast.cases == python.cases
    assert sorted(fast.corpus_additions) == sorted(python.corpus_additions)
    assert [f.signature for f in fast.findings] == [f.signature for f in python.findings]
    # The C loop did the work: most cases ran there, not handed back.
    handed_back = sum(seen.get(k, 0) for k in ("1", "2", "3"))
    assert seen["ran"] > cases // 2, seen
    assert handed_back < cases // 4, seen
    # The C loop makes a stretch's children before it runs them; a case handed back drops
    # the rest, and the schedule above is the Python loop's only if what they changed is undone.
    assert seen["dropped"] > 0, seen
    if name == "toml":  # the input-to-state stage has replacements waiting on most cases
        assert seen["restaged"] > 0, seen
    if name == "maze_checksum":
        assert seen.get("2", 0) > 0, "children of the guarded entry were handed back for repair"
    if name == "writer":
        assert [f.oracle for f in fast.findings] == ["safety"]
        assert not (tmp_path / "written").exists()


@needs_c
def test_the_c_loop_runs_through_the_quiet_clock_boundaries_with_the_same_schedule(planted, tmp_path, monkeypatch):
    """Once counted cases are rare, the C loop runs on past clock boundaries where
    nothing is due (Worker._quiet_end) instead of handing each one to Python: the
    schedule stays the Python loop's, length raises and the restarts at cases 8192 and
    16384 included.  (A target whose coverage saturates at once: counting backs off.)"""
    target = make_target(shallow, name="shallow", seeds=[b"hello"], max_len=4096)
    cases = 20_000
    python, _ = _run(target, tmp_path / "python", c=False, monkeypatch=monkeypatch, cases=cases)
    fast, seen = _run(target, tmp_path / "c", c=True, monkeypatch=monkeypatch, cases=cases)
    assert fast.schedule_digest == python.schedule_digest
    assert sorted(fast.corpus_additions) == sorted(python.corpus_additions)
    assert seen["crossed"] > 10, seen


@needs_c
def test_expected_rejections_stay_in_the_c_loop(tmp_path, monkeypatch, planted):
    """A parser that rejects most inputs with its documented exception: once that outcome
    is seen, rejections take the fast path (the schedule is the same, see above)."""
    target = _targets(planted, tmp_path)["toml"]
    _, seen = _run(target, tmp_path, c=True, monkeypatch=monkeypatch, cases=3000)
    assert seen.get("3", 0) < seen["ran"] // 4, seen


@needs_c
@pytest.mark.parametrize("module, name, value", [("generate", "CMP_SHARE", 0.31), ("valueprofile", "BUDGET", 0.02)])
def test_a_changed_tunable_turns_the_c_hot_loop_off(planted, tmp_path, monkeypatch, module, name, value):
    """The C loop has the generator's and value profile's tunables compiled in: a test (or a
    user) that changes one gets the Python loop, which reads the new value."""
    from assay.engine import generate
    from assay.feedback import valueprofile

    monkeypatch.setattr({"generate": generate, "valueprofile": valueprofile}[module], name, value)
    marker = tmp_path / "hot.txt"
    original = worker.Worker._hot_loop

    def recorded(self, stream):
        hot = original(self, stream)
        marker.write_text(repr(hot is None))
        return hot

    monkeypatch.setattr(worker.Worker, "_hot_loop", recorded)
    options = CampaignOptions(corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=200, seed=1)
    run_campaign([planted.get("maze_keyword_str")], options)
    assert marker.read_text() == "True"


def test_the_c_loop_runs_only_through_boundaries_where_nothing_is_due():
    """Worker._quiet_end: the clock boundaries it lets the C loop run through (after the
    case it starts at, before the one it returns) neither raise the length limit nor
    restart the feedback's events, there are none while a count or an analysis is out, and the run
    is at most QUIET_MAX cases long."""
    import copy
    import random
    from types import SimpleNamespace

    from assay.engine.generate import LengthControl
    from assay.feedback.scope import Scope
    from assay.feedback.sysmon import RESTART_EVERY, SysmonFeedback

    clock = worker.CLOCK_EVERY
    feedback = SysmonFeedback(Scope([]))  # never started: _quiet_end asks only what it is
    rng = random.Random(7)
    extended = 0
    for _ in range(3000):
        i = rng.randrange(0, 5 * RESTART_EVERY)  # any case: a restarted worker resumes mid-interval
        limit = rng.choice([32, 33, 100, 1000, 4096])
        lengths = LengthControl(4096, limit, max(0, i - rng.randrange(0, 1200)))  # news or a raise lately
        pending = rng.random() < 0.1
        analysing = rng.random() < 0.1  # a slow suspect's analysis, advanced at every boundary
        fake = SimpleNamespace(
            counting=SimpleNamespace(pending=pending),
            feedback=feedback,
            lengths=lengths,
            _analysis=("steps", 0.0) if analysing else None,
        )
        end = i - i % clock + clock
        stop = worker.Worker._quiet_end(fake, i, end)
        assert stop >= end and stop % clock == 0 and stop <= max(end, i + worker.QUIET_MAX)
        if pending or analysing:
            assert stop == end
        for boundary in range(end, stop, clock):
            assert boundary % RESTART_EVERY, (i, stop)
            assert not copy.copy(lengths).check(boundary), (i, stop, limit, lengths.mark)
        extended += stop > end
    assert extended > 1000, "most intervals run on past their first boundary"
    other = SimpleNamespace(counting=SimpleNamespace(pending=False), feedback=object(), lengths=None, _analysis=None)
    assert worker.Worker._quiet_end(other, 100, 128) == 128, "a feedback of another kind: every boundary"
