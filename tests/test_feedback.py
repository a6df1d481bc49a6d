"""The sys.monitoring feedback: both branch directions, retirement, coexistence."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import feedback_subject as subject
from assay.feedback import sysmon
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from feedback_subject import branchy, guarded, looped, ternary

SUBJECT = subject.__file__


@pytest.fixture
def feedback():
    fb = SysmonFeedback(Scope([SUBJECT]))
    fb.start()
    yield fb
    fb.stop()


def _edges(keys):
    return [k for k in keys if len(k) == 3]


def test_both_directions_of_a_branch_are_learned(feedback):
    branchy(1)
    first = _edges(feedback.take_new())
    branchy(9)
    second = _edges(feedback.take_new())
    assert len(first) == 1 and len(second) == 1
    assert first[0][:2] == second[0][:2], "same branch site"
    assert first[0][2] != second[0][2], "different destinations"


def test_seen_items_do_not_fire_again(feedback):
    branchy(1)
    branchy(9)
    feedback.take_new()
    for x in (0, 3, 7, 100):
        branchy(x)
    assert feedback.take_new() == []


def test_one_way_site_other_direction_found_after_many_hits(feedback):
    # The i == 7 site goes one way 5 times per call; its other direction must still
    # be learned on a later call although the site was hot before.
    calls = (sysmon.ONE_WAY_CAP - 8) // 5  # looped(10) itself adds 7 one-way hits before i == 7
    assert calls >= 3, "the cap leaves room for several hot calls"
    for _ in range(calls):
        looped(5)
    feedback.take_new()
    looped(10)
    new = feedback.take_new()
    body_line = looped.__code__.co_firstlineno + 4  # total += 100
    (line_key,) = [k for k in new if len(k) == 2 and k[1] == body_line]
    branch = [k for k in _edges(new) if k[0] == line_key[0]]
    assert branch, "the i == 7 branch itself (not only its body line) must be new"


def test_direction_without_a_new_line_is_learned_after_many_one_way_hits(feedback):
    # The conditional expression's two directions share one line: only the edge
    # tells them apart.  Hundreds of one-way hits must not retire it.
    for _ in range(20 * sysmon.ONE_WAY_CAP):
        ternary(1)
    feedback.take_new()
    ternary(7)
    new = feedback.take_new()
    assert not [k for k in new if len(k) == 2], "no new line: both directions are on one line"
    assert len(_edges(new)) == 1, "the other direction is recorded the first time it is taken"


def test_without_the_instruction_split_that_direction_is_lost():
    # Non-vacuity: the design before (one-way sites retired after ONE_WAY_CAP hits).
    class Legacy(SysmonFeedback):
        split_by_instruction = False

    fb = Legacy(Scope([SUBJECT]))
    fb.start()
    try:
        for _ in range(20 * sysmon.ONE_WAY_CAP):
            ternary(1)
        fb.take_new()
        ternary(7)
        assert not _edges(fb.take_new())
    finally:
        fb.stop()


class Unsplit(SysmonFeedback):
    """The design without edge splitting: join directions watched through BRANCH."""

    split_edges = False


def test_join_direction_recorded_the_first_time_after_many_one_way_hits(feedback, monkeypatch):
    monkeypatch.setattr(sysmon, "JOIN_CAP", 3)
    for _ in range(10):
        guarded(1)  # ``x != 7`` one way; its other direction runs into a join
    feedback.take_new()
    guarded(7)
    new = feedback.take_new()
    assert not [k for k in new if len(k) == 2], "no new line: only the edge is new"
    assert _edges(new), "the split direction has an instruction of its own"


def test_unsplit_join_direction_rearmed_when_its_code_shows_news(monkeypatch):
    # Sites the split leaves alone (a fall-through join, a jump too narrow for the
    # distance) keep this: retired after JOIN_CAP, re-armed by news in their code.
    monkeypatch.setattr(sysmon, "JOIN_CAP", 3)
    feedback = Unsplit(Scope([SUBJECT]))
    feedback.start()
    try:
        for _ in range(10):
            guarded(1)
        feedback.take_new()
        guarded(7)
        assert not _edges(feedback.take_new()), "retired after JOIN_CAP one-way hits"
        guarded(99)  # a new line in the same code object re-arms its branch sites
        assert feedback.take_new()
        guarded(7)
        assert _edges(feedback.take_new()), "re-armed: the join direction is recorded"
    finally:
        feedback.stop()


def test_out_of_scope_code_records_nothing():
    import json

    fb = SysmonFeedback(Scope([SUBJECT]))
    fb.start()
    try:
        json.loads('{"a": [1, 2, {"b": null}]}')
        assert fb.take_new() == []
    finally:
        fb.stop()


def test_pause_records_nothing_and_disables_nothing(feedback):
    feedback.pause(True)
    branchy(1)
    assert feedback.take_new() == []
    feedback.pause(False)
    branchy(1)
    assert feedback.take_new(), "events were not disabled while paused"


def test_paused_calls_ask_again_only_for_in_scope_code(monkeypatch):
    """Out-of-scope code and the comparison twins are decided at their first paused
    call; before, each paused call of them (assay's recorders run once per comparison
    in an analysis) cost a callback for the whole campaign."""
    import textwrap
    from collections import Counter

    from assay.feedback.cmplog import CmpLog

    asked: Counter = Counter()
    real = SysmonFeedback._on_start

    def spy(self, code, offset):
        asked[code.co_qualname] += 1
        return real(self, code, offset)

    monkeypatch.setattr(SysmonFeedback, "_on_start", spy)
    fb = SysmonFeedback(Scope([SUBJECT]))
    fb.start()
    try:
        log = CmpLog(Scope([SUBJECT]).contains)
        log.native = False  # the Python recorder: assay_cmp is a Python function called per comparison
        log.attach()
        fb.pause(True)
        for _ in range(5):
            log.record(lambda: subject.chained(3))  # twins of chained and of noted (no comparison)
            textwrap.dedent("  x")  # out of scope
            subject.looped(3)  # in scope, not yet decided: asks again
        fb.pause(False)
        assert asked["assay_cmp"] == 1 and asked["dedent"] == 1
        assert asked["noted"] == 1, "the twin of a function without comparisons is decided too"
        assert asked["looped"] == 5
        subject.looped(3)
        assert [k for k in fb.take_new() if len(k) == 2], "in-scope code first run paused still gets its events"
    finally:
        fb.stop()


def test_tool_id_is_released():
    fb = SysmonFeedback(Scope([SUBJECT]))
    fb.start()
    tool = fb.tool_id
    assert sys.monitoring.get_tool(tool) == "assay"
    fb.stop()
    assert sys.monitoring.get_tool(tool) is None


def test_coexists_with_coverage_py(tmp_path):
    coverage = pytest.importorskip("coverage")
    import os

    os.environ["COVERAGE_CORE"] = "sysmon"
    try:
        cov = coverage.Coverage(data_file=str(tmp_path / ".cov"), branch=False, include=[SUBJECT])
        cov.start()
        fb = SysmonFeedback(Scope([SUBJECT]))
        fb.start()
        try:
            branchy(1)
            branchy(9)
            learned = _edges(fb.take_new())
        finally:
            fb.stop()
            cov.stop()
    finally:
        os.environ.pop("COVERAGE_CORE", None)
    assert len(learned) == 2, "assay still learns both directions with coverage.py running"
    data = cov.get_data()
    lines = data.lines(SUBJECT) or []
    start = branchy.__code__.co_firstlineno
    assert {start + 2, start + 3} <= set(lines), "coverage.py still measured both returns of branchy"


def test_split_records_exactly_the_edges_branch_events_report(monkeypatch):
    # The bytecode layout must agree with CPython: on a real parser, the instruction
    # split (no cap) records the same edges and lines as BRANCH/LINE events that stay
    # armed until both directions are seen.
    import tomllib

    from assay.engine.features import FullFeedback

    monkeypatch.setattr(sysmon, "JOIN_CAP", 1 << 40)
    docs = [
        'a = 1\n[t]\nb = "x\\ty"\n',
        "x = [1, 2.5, true]\n",
        "[[a.b]]\nc = 1979-05-27T07:32:00Z\n",
        'k = """m\nl"""\n',
        "bad = \n",
        "a.b.c = {d = 1, e = 'f'}\n",
        "# c\n\n",
        "x = 0x1F\n",
    ]

    def run(cls):
        fb = cls(Scope([tomllib.__file__.rsplit("/", 1)[0]]))
        fb.start()
        try:
            for doc in docs * 3:
                try:
                    tomllib.loads(doc)
                except tomllib.TOMLDecodeError:
                    pass
            return set(fb.seen)
        finally:
            fb.stop()

    exact, split = run(FullFeedback), run(SysmonFeedback)
    assert len(_edges(exact)) > 50
    assert split == exact


_ID_EVENTS = """
import sys
sys.path.insert(0, sys.argv[1])
import feedback_subject as subject
from assay.feedback import sysmon
from assay.feedback.scope import Scope
if sys.argv[2] == "id":
    sysmon.object_id = id
events = []
sys.addaudithook(lambda event, args: events.append(event) if event == "builtins.id" else None)
class Unsplit(sysmon.SysmonFeedback):
    split_edges = False
fb = Unsplit(Scope([subject.__file__]))
fb.start()
subject.guarded(1)
before = len(events)
for _ in range(20):  # one-way hits of an armed join site: a BRANCH callback each
    subject.guarded(1)
fb.stop()
print(len(events) - before)
"""


@pytest.mark.skipif(sysmon.object_id is id, reason="assay.gen._cmutate is not built")
@pytest.mark.parametrize("lookup", ["object_id", "id"])
def test_branch_callbacks_raise_no_audit_event_per_case(lookup):
    # With an audit hook installed (the worker's sandbox) each id() is an event of
    # about 2,000 instructions; the callbacks' table look-ups must not pay it per call.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    here = os.path.dirname(SUBJECT)
    r = subprocess.run(
        [sys.executable, "-c", _ID_EVENTS, here, lookup], capture_output=True, text=True, env=env, check=False
    )
    assert r.returncode == 0, r.stderr
    events = int(r.stdout.split()[-1])
    if lookup == "id":
        assert events >= 20, "the check sees the events builtin id() raises"
    else:
        assert events == 0
