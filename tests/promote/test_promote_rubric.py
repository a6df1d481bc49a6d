"""The rubric, in order: minimize -> dedup -> replay K times -> promote or quarantine."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from promote_helpers import isolated_registry, temp_project  # noqa: F401 - fixtures

from assay.core.config import load_project
from assay.core.errors import ConfigError
from assay.core.verdict import Verdict
from assay.promote import BucketStore, Candidate, Promoter, QuarantineLog, promote_artifacts


class FakeCandidate(Candidate):
    """A candidate whose replays return a scripted list of signatures."""

    source = "fake"

    def __init__(self, signature: str, script: list[str | None], problem: str | None = None, replays=None) -> None:
        self.signature = signature
        self.oracle, _, _ = signature.partition(":")
        self.target = "fake"
        self.origin = "scripted"
        self.script = list(script)
        self.calls = 0
        self.problem = problem
        self.replays = replays
        self.minimized = False

    def minimize(self):
        self.minimized = True
        return self

    def replay(self) -> Verdict | None:
        self.calls += 1
        sig = self.script.pop(0) if self.script else self.signature
        if sig is None:
            return None
        oracle, _, key = sig.partition(":")
        return Verdict(oracle, key)

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        return {test_path: b"# emitted\n", test_path.with_suffix(".input"): b"data"}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.assay]\n")
    return load_project(tmp_path)


def test_deterministic_failure_is_replayed_k_times_then_staged(project):
    cand = FakeCandidate("panic:k", [])
    out = Promoter(project).promote(cand)
    assert cand.minimized and cand.calls == 5  # default K
    assert out.status == "promoted" and not out.written
    assert out.path.parent == project.staging and out.path.read_bytes() == b"# emitted\n"
    assert out.path.with_suffix(".input").read_bytes() == b"data"
    assert not (project.regressions / "buckets.json").exists()  # emit-only records no bucket
    assert not project.regressions.exists()


def test_write_puts_the_test_in_regressions_and_records_the_bucket(project):
    out = Promoter(project, write=True).promote(FakeCandidate("panic:w", []))
    assert out.written and out.path.parent == project.regressions
    assert BucketStore(project.regressions / "buckets.json").load() == {
        "panic:w": f"tests/fuzz_regressions/{out.path.name}"
    }


def test_known_signature_is_never_replayed_or_emitted_again(project):
    BucketStore(project.regressions / "buckets.json").add("panic:old", "tests/fuzz_regressions/test_old.py")
    cand = FakeCandidate("panic:old", [])
    out = Promoter(project, write=True).promote(cand)
    assert out.status == "known" and cand.calls == 0
    assert out.path == Path("tests/fuzz_regressions/test_old.py")
    assert sorted(p.name for p in project.regressions.iterdir()) == ["buckets.json"]


def test_same_signature_twice_in_one_run_is_promoted_once(project):
    promoter = Promoter(project)
    first, second = promoter.promote(FakeCandidate("panic:d", [])), promoter.promote(FakeCandidate("panic:d", []))
    assert (first.status, second.status) == ("promoted", "known")
    assert second.path == first.path
    assert len(list(project.staging.glob("*.py"))) == 1


@pytest.mark.parametrize(
    ("script", "survived", "reason"),
    [
        ([None], 0, "replay 1 of 5 passed"),
        (["panic:x", "panic:x", None], 2, "replay 3 of 5 passed"),
        (["panic:x", "panic:x", "panic:x", "panic:x", "panic:other"], 4, "another signature (panic:other)"),
    ],
)
def test_any_miss_or_signature_shift_quarantines(project, script, survived, reason):
    cand = FakeCandidate("panic:x", script)
    out = Promoter(project, write=True).promote(cand)
    assert out.status == "quarantined" and out.survived == survived and reason in out.reason
    assert cand.calls == survived + 1  # the guard stops at the first miss
    assert not project.regressions.exists() and not project.staging.exists()  # never written as a test
    (entry,) = QuarantineLog(project.quarantine).read()
    assert entry["signature"] == "panic:x" and entry["survived"] == survived and entry["replays"] == 5
    assert entry["observed"] == script[: survived + 1]
    assert reason in entry["reason"]


def test_k_comes_from_the_override_then_the_candidate(project):
    cand = FakeCandidate("panic:r", [], replays=3)
    Promoter(project).promote(cand)
    assert cand.calls == 3
    cand = FakeCandidate("panic:s", [], replays=3)
    Promoter(project, replays=7).promote(cand)
    assert cand.calls == 7
    with pytest.raises(ConfigError):
        Promoter(project, replays=0)


def test_unreplayable_candidate_is_quarantined_without_replaying(project):
    cand = FakeCandidate("panic:u", [], problem="argument 'x' is not repr-able")
    out = Promoter(project).promote(cand)
    assert out.status == "quarantined" and cand.calls == 0
    assert "not repr-able" in QuarantineLog(project.quarantine).read()[0]["reason"]


def test_replay_that_raises_is_quarantined(project):
    class Broken(FakeCandidate):
        def replay(self):
            raise RuntimeError("target vanished")

    out = Promoter(project).promote(Broken("panic:b", []))
    assert out.status == "quarantined" and "target vanished" in out.reason


def test_quarantine_log_appends_lines(project):
    promoter = Promoter(project)
    promoter.promote(FakeCandidate("panic:1", [None]))
    promoter.promote(FakeCandidate("panic:2", [None]))
    lines = project.quarantine.read_text().splitlines()
    assert [json.loads(line)["signature"] for line in lines] == ["panic:1", "panic:2"]


# -- flake tests with real targets -----------------------------------------------------------------
FLAKY = """
import random

calls = {"half": 0, "early": 0, "k": 0}
rng = random.Random(%(seed)d)

@assay.target
def half(data: bytes):
    calls["half"] += 1
    if calls["half"] %% 2 == 1:          # fails on every other run
        raise RuntimeError("odd run")

@assay.target
def early(data: bytes):
    calls["early"] += 1
    if calls["early"] <= 3:              # depends on a counter, not on the input
        raise RuntimeError("warming up")

@assay.target
def dice(data: bytes):
    if rng.random() < 0.5:               # depends on a random draw
        raise RuntimeError("unlucky")

@assay.target
def first_six(data: bytes):
    calls["k"] += 1
    if calls["k"] <= 6:
        raise RuntimeError("six times")

@assay.target
def steady(data: bytes):
    if data == b"boom":
        raise RuntimeError("always")
"""

#: A seed whose first draw fails (< 0.5) and that passes again within five draws.
DICE_SEED = 3


def _dice_survivals(seed: int) -> int:
    rng = random.Random(seed)
    assert rng.random() < 0.5, "the artifact's own run must fail"
    survived = 0
    while rng.random() < 0.5:
        survived += 1
    return survived


def _only_quarantined(temp_project, summary, survived):
    project = temp_project.project()
    (out,) = summary.outcomes
    assert out.status == "quarantined" and out.survived == survived
    assert not project.staging.exists() or not any(project.staging.iterdir())
    assert not project.regressions.exists()
    entry = QuarantineLog(project.quarantine).read()[-1]
    assert entry["survived"] == survived and entry["replays"] == 5
    return entry


def test_target_failing_half_its_runs_is_quarantined_never_emitted(temp_project):
    temp_project.write_targets(FLAKY % {"seed": DICE_SEED})
    art = temp_project.artifact("half", b"x")
    summary = promote_artifacts(temp_project.project(), [art], write=True)
    _only_quarantined(temp_project, summary, survived=0)
    assert summary.exit_code == 0


def test_failure_depending_on_a_counter_logs_how_many_replays_it_survived(temp_project):
    temp_project.write_targets(FLAKY % {"seed": DICE_SEED})
    art = temp_project.artifact("early", b"x")  # call 1 fails; replays 2 and 3 fail; 4 passes
    summary = promote_artifacts(temp_project.project(), [art], write=True)
    entry = _only_quarantined(temp_project, summary, survived=2)
    assert entry["artifact"].startswith(".assay/artifacts/early/")
    assert entry["observed"][-1] is None


def test_failure_depending_on_a_random_draw_is_quarantined(temp_project):
    expected = _dice_survivals(DICE_SEED)
    assert expected < 5
    temp_project.write_targets(FLAKY % {"seed": DICE_SEED})
    art = temp_project.artifact("dice", b"x")
    summary = promote_artifacts(temp_project.project(), [art], write=True)
    _only_quarantined(temp_project, summary, survived=expected)


def test_guard_demands_exactly_k_replays(temp_project):
    temp_project.write_targets(FLAKY % {"seed": DICE_SEED})
    art = temp_project.artifact("first_six", b"x")  # fails on its first six calls
    project = temp_project.project()
    promoted = promote_artifacts(project, [art], replays=5)  # calls 2..6 all fail
    assert promoted.outcomes[0].status == "promoted"
    temp_project.module().calls["k"] = 1
    quarantined = promote_artifacts(project, [art], replays=6)  # call 7 passes
    assert quarantined.outcomes[0].status == "quarantined" and quarantined.outcomes[0].survived == 5


def test_deterministic_failure_is_promoted_once_then_known(temp_project):
    temp_project.write_targets(FLAKY % {"seed": DICE_SEED})
    art = temp_project.artifact("steady", b"boom")
    project = temp_project.project()
    first = promote_artifacts(project, [art], write=True)
    assert [o.status for o in first.outcomes] == ["promoted"] and first.exit_code == 1
    emitted = first.outcomes[0].path
    before = emitted.read_bytes()
    second = promote_artifacts(project, [art], write=True)
    assert [o.status for o in second.outcomes] == ["known"] and second.exit_code == 0
    assert second.outcomes[0].path == Path(emitted.relative_to(project.root))
    assert emitted.read_bytes() == before
    assert sorted(p.name for p in project.regressions.iterdir()) == ["buckets.json", emitted.name]
    assert not project.quarantine.exists()
