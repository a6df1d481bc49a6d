"""Golden emitted tests: compared byte for byte, and run to show they catch their bug.

``ASSAY_REGEN_GOLDEN=1 pytest tests/promote`` rewrites the files in golden/ instead
of comparing (review the diff before committing).  Whatever the mode, every
emitted test is executed by pytest in a child process: it must fail while the bug
is present and pass once the bug is fixed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from promote_helpers import GOLDEN, TempProject, child_pytest_args, promote_in_pytester

from assay.promote import promote_artifacts

pytest_plugins = ["pytester"]

REGEN = os.environ.get("ASSAY_REGEN_GOLDEN") == "1"

BUGGY = """
import os
import time

from assay import invariant


def divide(data):
    return 10 // (len(data) - 2)


@assay.target(expected=(ValueError,))
def golden_panic(data: bytes):
    if data.startswith(b"<"):
        divide(data)


@assay.target
def golden_invariant(data: bytes):
    decoded = data.decode("latin-1")
    invariant(decoded.encode("latin-1") == data[:3], "round-trip", "decode/encode changed the input")


@assay.target(timeout=0.3)
def golden_wedge(data: bytes):
    while data == b"\\xff\\xfe":
        time.sleep(0.01)


@assay.target
def golden_crash(data: bytes):
    if data == b"\\x00CRASH\\n":
        os.abort()
"""

FIXED = """
@assay.target(expected=(ValueError,))
def golden_panic(data: bytes):
    pass


@assay.target
def golden_invariant(data: bytes):
    pass


@assay.target(timeout=0.3)
def golden_wedge(data: bytes):
    pass


@assay.target
def golden_crash(data: bytes):
    pass
"""

FUZZ_CASES = {
    # golden file stem: (target, input, replay in a child?, exception part of the test name)
    "fuzz_panic": ("golden_panic", b"<a", False, "ZeroDivisionError"),
    "fuzz_invariant": ("golden_invariant", b"abcd\n\x00\xff" + b"z" * 100, False, "round_trip"),
    "fuzz_wedge": ("golden_wedge", b"\xff\xfe", True, "wedge"),
    "fuzz_crash": ("golden_crash", b"\x00CRASH\n", True, "signal_SIGABRT"),
}


def _bug(artifact) -> str:
    from assay.findings.identity import identify_metadata

    return identify_metadata(artifact.metadata).id


def check_golden(name: str, emitted: bytes) -> None:
    golden = GOLDEN / f"{name}.py"
    if REGEN:
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(emitted)
        return
    assert golden.exists(), f"{golden} is missing; run with ASSAY_REGEN_GOLDEN=1 to create it"
    assert emitted == golden.read_bytes(), (
        f"emitted test differs from {golden}; if the change is intended, regenerate with ASSAY_REGEN_GOLDEN=1"
    )


def run_pytest(cwd: Path, *paths: Path, hypothesis: bool = True) -> subprocess.CompletedProcess[str]:
    """pytest in a child process (without Hypothesis's plugin when the tests need none: faster)."""
    extra = [] if hypothesis else ["-p", "no:hypothesispytest"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *extra,
            *child_pytest_args(),
            *map(str, paths),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def fuzz_emitted(tmp_path_factory):
    """Artifacts of four oracles in one project, promoted with --write."""
    proj = TempProject(tmp_path_factory.mktemp("golden") / "proj", "golden_targets")
    proj.write_targets(BUGGY)
    arts = {name: proj.artifact(target, data, isolated=iso) for name, (target, data, iso, _) in FUZZ_CASES.items()}
    summary = promote_artifacts(proj.project(), list(arts.values()), write=True)
    assert [o.status for o in summary.outcomes] == ["promoted"] * 4, summary.outcomes
    paths = {name: out.path for name, out in zip(arts, summary.outcomes)}
    return proj, arts, paths


@pytest.mark.parametrize("name", sorted(FUZZ_CASES))
def test_fuzz_golden(fuzz_emitted, name):
    proj, arts, paths = fuzz_emitted
    target, _, _, label = FUZZ_CASES[name]
    assert paths[name].name == f"test_{target}_{label}_{arts[name].metadata.get('bug') or _bug(arts[name])}.py"
    check_golden(name, paths[name].read_bytes())


def test_fuzz_goldens_fail_while_the_bug_is_present_and_pass_once_fixed(fuzz_emitted):
    proj, arts, paths = fuzz_emitted
    regressions = proj.project().regressions
    buggy = run_pytest(proj.root, regressions, hypothesis=False)
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    assert "4 failed" in buggy.stdout, buggy.stdout
    for art in arts.values():
        assert f"the promoted bug is still present: {art.signature}" in buggy.stdout
    assert "ZeroDivisionError" in buggy.stdout  # the traceback is in the failure message
    proj.write_targets(FIXED)
    try:
        fixed = run_pytest(proj.root, regressions, hypothesis=False)
    finally:
        proj.write_targets(BUGGY)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "4 passed" in fixed.stdout


def test_tests_emitted_before_the_packages_moved_still_catch_their_bug(fuzz_emitted):
    """The golden files are byte for byte what the layout before the move (loose modules) emitted.

    Written into a project as they are, they still fail while the bug is present and pass
    once it is fixed: a user's committed regression tests survive the move. (They are
    also compared with today's emitter above; if a change of the emitter ever regenerates
    them, keep the old files for this test.)
    """
    proj, _, paths = fuzz_emitted
    legacy = [paths[name].with_name(f"test_legacy_{name}.py") for name in sorted(FUZZ_CASES)]
    for name, dest in zip(sorted(FUZZ_CASES), legacy):
        dest.write_bytes((GOLDEN / f"{name}.py").read_bytes())
    try:
        buggy = run_pytest(proj.root, *legacy, hypothesis=False)
        assert buggy.returncode == 1 and "4 failed" in buggy.stdout, buggy.stdout + buggy.stderr
        proj.write_targets(FIXED)
        fixed = run_pytest(proj.root, *legacy, hypothesis=False)
        assert fixed.returncode == 0 and "4 passed" in fixed.stdout, fixed.stdout + fixed.stderr
    finally:
        proj.write_targets(BUGGY)
        for dest in legacy:
            dest.unlink(missing_ok=True)


# -- Hypothesis sources ----------------------------------------------------------------------------
PROPS = """
from hypothesis import Phase, given, note, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule


def mean(xs):
    return sum(xs) // len(xs)


FAST = settings(derandomize=True, database=None, phases=[Phase.generate, Phase.shrink])  # no slow explain phase


@FAST
@given(st.lists(st.integers()), st.text())
def test_mean(xs, label):
    note(f"{label}: {xs}")
    mean(xs)


class Account(RuleBasedStateMachine):
    coins = Bundle("coins")

    def __init__(self):
        super().__init__()
        self.balance = 0

    @rule(target=coins, value=st.integers(min_value=0, max_value=100))
    def mint(self, value):
        return value

    @rule(coin=coins)
    def deposit(self, coin):
        self.balance += coin

    @invariant()
    def within_limit(self):
        assert self.balance <= 150, self.balance


TestAccount = Account.TestCase
TestAccount.settings = settings(FAST, max_examples=200)
"""

PROPS_FIXED = PROPS.replace("sum(xs) // len(xs)", "sum(xs) // len(xs) if xs else 0").replace(
    "assert self.balance <= 150", "assert self.balance <= 10**9"
)


def test_hypothesis_goldens(pytester):
    pytester.makepyprojecttoml("[tool.assay]\n")
    props = pytester.makepyfile(golden_props=PROPS)
    result = promote_in_pytester(pytester, str(props))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*assay promote: 2 promoted (2 staged for review)*"])
    staged = sorted((pytester.path / ".assay" / "staging").glob("test_*.py"))
    assert [p.name.rsplit("_", 1)[0] for p in staged] == ["test_Account_AssertionError", "test_mean_ZeroDivisionError"]
    check_golden("hypothesis_stateful", staged[0].read_bytes())
    check_golden("hypothesis_given", staged[1].read_bytes())

    buggy = run_pytest(pytester.path, *staged)
    assert buggy.returncode == 1 and "2 failed" in buggy.stdout, buggy.stdout + buggy.stderr
    assert "invariant:assert@golden_props:Account.within_limit#" in buggy.stdout
    assert "panic:builtins.ZeroDivisionError@golden_props:mean<golden_props:test_mean" in buggy.stdout
    props.write_text(textwrap.dedent(PROPS_FIXED))
    fixed = pytester.runpytest(*child_pytest_args(), *map(str, staged))  # in-process: faster, fresh module
    fixed.assert_outcomes(passed=2)
