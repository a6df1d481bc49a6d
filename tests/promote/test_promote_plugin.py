"""``pytest --assay-promote``: failing Hypothesis tests and state machines go through the rubric."""

from __future__ import annotations

import json

from promote_helpers import promote_in_pytester

pytest_plugins = ["pytester"]

HEADER = """
from hypothesis import Phase, assume, given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
import pytest

FAST = settings(derandomize=True, database=None, phases=[Phase.generate, Phase.shrink])
"""

WRITE_CONFTEST = (
    "from assay.promote.pytest_promote import PromotePlugin\n"
    "def pytest_configure(config):\n"
    "    config.pluginmanager.register(PromotePlugin(config, write=True), 'assay-promote-write')\n"
)


def _log(pytester) -> list[dict]:
    path = pytester.path / ".assay" / "quarantine.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_write_promotes_once_then_reports_already_known(pytester):
    pytester.makepyprojecttoml("[tool.assay]\n")
    pytester.makeconftest(WRITE_CONFTEST)
    pytester.makepyfile(
        test_wr_props=HEADER
        + """
@FAST
@given(st.integers())
def test_div(n):
    assert 100 // (n % 7) >= 0
"""
    )
    first = pytester.runpytest()
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(
        [
            "*assay promote: 1 promoted, 0 already known, 0 quarantined*",
            "*promoted*panic:builtins.ZeroDivisionError@test_wr_props:test_div*",
        ]
    )
    regressions = pytester.path / "tests" / "fuzz_regressions"
    files = _files(regressions)
    assert len(files) == 2 and files[0] == "buckets.json" and files[1].startswith("test_div_ZeroDivisionError_")
    buckets = json.loads((regressions / "buckets.json").read_text())
    assert buckets == {"panic:builtins.ZeroDivisionError@test_wr_props:test_div": f"tests/fuzz_regressions/{files[1]}"}
    assert "EXAMPLE = example(n=0)" in (regressions / files[1]).read_text()  # the shrunk example, inline

    second = pytester.runpytest("-p", "no:cacheprovider")
    second.stdout.fnmatch_lines(
        ["*assay promote: 0 promoted, 1 already known, 0 quarantined*", f"*known*-> tests/fuzz_regressions/{files[1]}*"]
    )
    assert _files(regressions) == files and not _log(pytester)


def test_what_cannot_be_replayed_is_quarantined_with_the_reason(pytester):
    pytester.makepyprojecttoml("[tool.assay]\n")
    pytester.makepyfile(
        test_cq_props=HEADER
        + """
class Opaque:
    def __init__(self, n):
        self.n = n

@FAST
@given(st.builds(Opaque, st.integers()))
def test_opaque(obj):
    assert obj.n < 5

@pytest.fixture(scope="module")
def shared():
    return [1]

@FAST
@given(st.integers())
def test_with_fixture(shared, n):
    assert n < 5

@FAST
@given(st.integers())
def test_never_satisfiable(n):
    assume(False)

class Machine(RuleBasedStateMachine):
    @rule(obj=st.builds(Opaque, st.integers()))
    def put(self, obj):
        assert obj.n < 5

TestMachine = Machine.TestCase
TestMachine.settings = FAST

def test_plain_failure():
    assert False, "not a Hypothesis test: nothing was shrunk"

@FAST
@given(st.integers())
def test_passes(n):
    pass
"""
    )
    result = promote_in_pytester(pytester)
    result.assert_outcomes(failed=5, passed=1)
    result.stdout.fnmatch_lines(["*assay promote: 0 promoted, 0 already known, 4 quarantined*"])
    assert _files(pytester.path / ".assay" / "staging") == []
    reasons = {entry["test"].split("::", 1)[1]: entry["reason"] for entry in _log(pytester)}
    assert set(reasons) == {"test_opaque", "test_with_fixture", "test_never_satisfiable", "TestMachine::runTest"}
    assert "test_cq_props.Opaque, which has no literal form" in reasons["test_opaque"]
    assert "not repr-able" in reasons["test_opaque"]
    assert "pytest fixtures (shared)" in reasons["test_with_fixture"]
    assert "outside its body" in reasons["test_never_satisfiable"]
    assert "cannot be replayed deterministically" in reasons["TestMachine::runTest"]
    assert "Opaque(" in reasons["TestMachine::runTest"]
    assert all(entry["survived"] == 0 and entry["replays"] == 5 for entry in _log(pytester))


def test_state_outside_the_input_is_quarantined_with_survived_replays(pytester):
    pytester.makepyprojecttoml("[tool.assay]\n")
    pytester.makepyfile(
        test_fl_props=HEADER
        + """
import pathlib
LIMIT = 6
COUNT = pathlib.Path(__file__).with_name("calls.txt")

@settings(FAST, max_examples=1)
@given(st.just(0))
def test_counter(x):
    calls = int(COUNT.read_text()) + 1 if COUNT.exists() else 1
    COUNT.write_text(str(calls))
    if calls <= LIMIT:                       # fails on the first LIMIT calls only
        raise RuntimeError("depends on a counter, not on the input")
"""
    )
    result = promote_in_pytester(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*0 promoted, 0 already known, 1 quarantined*", "*survived * of 5 replays*passed*"])
    (entry,) = _log(pytester)
    calls = int((pytester.path / "calls.txt").read_text())
    # The guard stopped at the first passing replay, which is call LIMIT + 1.
    assert calls == 7
    assert 1 <= entry["survived"] < 5 and entry["observed"][-1] is None
    assert len(entry["observed"]) == entry["survived"] + 1
    assert _files(pytester.path / ".assay" / "staging") == []


def test_several_bugs_in_one_test_are_promoted_separately(pytester):
    pytester.makepyprojecttoml("[tool.assay]\n")
    pytester.makepyfile(
        test_mb_props=HEADER
        + """
def low(n):
    raise KeyError(n)

def high(n):
    raise OverflowError(n)

@FAST
@given(st.integers())
def test_two_bugs(n):
    if n < -5:
        low(n)
    if n > 5:
        high(n)
"""
    )
    result = promote_in_pytester(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*assay promote: 2 promoted (2 staged for review)*"])
    staged = _files(pytester.path / ".assay" / "staging")
    assert staged == [
        f"test_two_bugs_{e}_{{}}.py".format(name.rsplit("_", 1)[1][:-3])
        for e, name in zip(("KeyError", "OverflowError"), staged)
    ]
    texts = "".join((pytester.path / ".assay" / "staging" / name).read_text() for name in staged)
    assert "EXAMPLE = example(n=-6)" in texts and "EXAMPLE = example(n=6)" in texts


def test_methods_of_test_classes_are_promoted_and_their_tests_fail(pytester):
    pytester.makepyprojecttoml("[tool.assay]\n")
    pytester.makepyfile(
        test_cls_props=HEADER
        + """
class TestThing:
    @FAST
    @given(st.lists(st.integers(), min_size=1))
    def test_first_is_small(self, xs):
        assert xs[0] < 3
"""
    )
    result = promote_in_pytester(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 promoted (1 staged for review)*"])
    (staged,) = (pytester.path / ".assay" / "staging").glob("test_TestThing_test_first_is_small_AssertionError_*.py")
    text = staged.read_text()
    assert "TEST = 'test_cls_props.py::TestThing.test_first_is_small'" in text and "EXAMPLE = example(xs=[3])" in text
    replay = pytester.runpytest(str(staged))
    replay.assert_outcomes(failed=1)
    replay.stdout.fnmatch_lines(["*the promoted bug is still present: invariant:assert@test_cls_props:TestThing*"])
