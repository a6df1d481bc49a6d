"""Campaigns on planted bugs: search, determinism, crash isolation, replay-only."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from assay.engine.isolate import run_isolated
from assay.store.artifacts import iter_artifacts, load_artifact


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_finds_nested_byte_compares(planted, campaign):
    result = campaign([planted.get("planted_nested_compares")], cases=20_000, seed=3)
    (t,) = result.targets
    assert [f.oracle for f in t.findings] == ["panic"]
    art = load_artifact(t.findings[0].artifact)
    assert art.input.startswith(b"FUZZBUG!")
    assert art.metadata["minimized_size"] == 8
    assert art.metadata["case_index"] < 10_000, "comparison feedback solves eight compares fast"


def test_harvested_constants_without_comparison_feedback(planted, tmp_path):
    # With comparison feedback off, the magic still comes from the literal harvested
    # from the source into the dictionary: slower (seed 1: case ~640), but found.
    from assay.engine.campaign import CampaignOptions, run_campaign

    options = CampaignOptions(
        corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=20_000, seed=1, cmplog=False
    )
    (t,) = run_campaign([planted.get("maze_magic_slice")], options).targets
    assert [f.oracle for f in t.findings] == ["panic"]
    assert load_artifact(t.findings[0].artifact).metadata["case_index"] > 50


@pytest.mark.parametrize(
    "name",
    [
        "maze_magic_slice",
        "maze_magic_startswith",
        "maze_keyword_str",
        "maze_int_field",
        "maze_computed_magic",
        "maze_checksum",
    ],
)
def test_comparison_mazes(planted, campaign, name):
    result = campaign([planted.get(name)], cases=2000, seed=1)
    assert [f.oracle for f in result.targets[0].findings] == ["panic"], name


def test_checksum_maze_needs_the_repair_step(planted, campaign, monkeypatch):
    # Non-vacuity for the guard repair: without it, input-to-state fixes the checksum
    # once, but every later change of the payload breaks it again.
    from assay.engine import generate

    monkeypatch.setattr(generate, "REPAIR_SHARE", 0.0)  # the forked worker inherits it
    result = campaign([planted.get("maze_checksum")], cases=2000, seed=1)
    assert result.targets[0].findings == []


@pytest.mark.campaign
def test_feature_feedback_reaches_a_bug_branches_cannot_see(planted, campaign):
    result = campaign([planted.get("planted_feature_only")], cases=60_000, seed=1)
    (t,) = result.targets
    assert t.findings, "feature feedback must climb to depth 12"
    assert t.features > 5


def test_same_seed_same_schedule_different_seed_different(planted, campaign, tmp_path):
    target = planted.get("planted_nested_compares")
    runs = []
    for n, seed in enumerate((11, 11, 12)):
        result = campaign([target], cases=3000, seed=seed, corpus=tmp_path / f"c{n}", artifacts=tmp_path / f"a{n}")
        runs.append(result.targets[0])
    a, b, c = runs
    assert a.schedule_digest == b.schedule_digest
    assert a.corpus_additions == b.corpus_additions and a.corpus_additions
    assert a.schedule_count == b.schedule_count == 3000 + len(target.seeds)
    assert a.schedule_digest != c.schedule_digest


def test_corpus_snapshot_is_part_of_the_schedule(planted, campaign, tmp_path):
    target = planted.get("planted_nested_compares")
    first = campaign([target], cases=2000, seed=5, corpus=tmp_path / "c").targets[0]
    again = campaign([target], cases=2000, seed=5, corpus=tmp_path / "c").targets[0]
    assert sorted(first.corpus_additions) == again.initial_manifest
    assert again.schedule_digest != first.schedule_digest


def test_replay_only_runs_seeds_and_corpus_and_writes_nothing(planted, campaign, tmp_path):
    target = planted.get("planted_nested_compares")
    campaign([target], cases=2000, seed=5, corpus=tmp_path / "c")
    before = _snapshot(tmp_path / "c")
    assert before
    result = campaign([target], cases=2000, seed=5, corpus=tmp_path / "c", replay_only=True)
    t = result.targets[0]
    assert t.schedule_count == len(before) + len(target.seeds)
    assert _snapshot(tmp_path / "c") == before


@pytest.mark.parametrize(
    "name, trigger, oracle",
    [
        ("planted_segfault", b"X", "crash"),
        ("planted_exit", b"E", "crash"),
        ("planted_hang", b"H", "wedge"),
        ("planted_hang_swallow", b"S", "wedge"),
        ("planted_memory", b"M", "panic"),
    ],
)
def test_isolation_keeps_the_exact_input_and_continues(planted, campaign, tmp_path, name, trigger, oracle):
    target = planted.get(name)
    # The trigger is in the corpus, so the failure happens at a known point.
    corpus = tmp_path / "corpus" / name
    corpus.mkdir(parents=True)
    from assay.store.corpus import Corpus

    Corpus(tmp_path / "corpus", name, target.max_len).add(trigger + b"yz")
    Corpus(tmp_path / "corpus", name, target.max_len).add(trigger + b"abc")
    result = campaign([target], cases=60, seed=2)
    t = result.targets[0]
    assert t.schedule_count == 60 + len(target.seeds) + 2, "the run went on to the end"
    failing = [f for f in t.findings if f.oracle == oracle]
    assert len(failing) == 1, f"one finding per distinct failure, got {t.findings}"
    assert failing[0].occurrences >= 2
    art = load_artifact(failing[0].artifact)
    assert art.input.startswith(trigger)
    if oracle == "crash":
        assert art.metadata["determinism"]["same_signature"] is True
        if name == "planted_segfault":  # os._exit writes nothing, so no log there
            log = (Path(failing[0].artifact) / "diagnostic.log").read_text()
            assert "Segmentation fault" in log and "planted_segfault" in log
        again = run_isolated(target, art.input).verdict
        assert again is not None and again.signature == art.signature
    if name == "planted_segfault":
        assert "SIGSEGV" in art.signature


def test_one_artifact_per_signature_and_distinct_bugs_apart(planted, campaign, tmp_path):
    target = planted.get("planted_two_bugs")
    from assay.store.corpus import Corpus

    store = Corpus(tmp_path / "corpus", target.name, target.max_len)
    for prefix in (b"A1", b"A2", b"B1", b"B2"):
        store.add(prefix)
    result = campaign([target], cases=200, seed=1)
    sigs = sorted(f.signature for f in result.targets[0].findings)
    assert len(sigs) == 2 and len(set(sigs)) == 2
    assert len(list(iter_artifacts(tmp_path / "artifacts"))) == 2


def test_invariant_finding_is_named_and_shrunk(planted, campaign, tmp_path):
    target = planted.get("planted_invariant")
    from assay.store.corpus import Corpus

    Corpus(tmp_path / "corpus", target.name, target.max_len).add(b"Ixy")
    result = campaign([target], cases=50, seed=1)
    (finding,) = [f for f in result.targets[0].findings if f.oracle == "invariant"]
    assert finding.signature.startswith("invariant:parity")
    meta = load_artifact(finding.artifact).metadata
    assert meta["determinism"] == {"replays": 2, "reproduced": 2, "same_signature": True}
    assert meta["minimized_size"] <= meta["original_size"]


def test_clean_target_has_no_findings(planted, campaign):
    result = campaign([planted.get("planted_clean")], cases=3000, seed=1)
    assert result.findings == 0


def test_artifact_metadata_fields(planted, campaign, tmp_path):
    target = planted.get("planted_two_bugs")
    from assay.store.corpus import Corpus

    Corpus(tmp_path / "corpus", target.name, target.max_len).add(b"A" + b"x" * 20)
    result = campaign([target], cases=10, seed=99)
    art = load_artifact(result.targets[0].findings[0].artifact)
    m = art.metadata
    for key in (
        "schema_version",
        "campaign_seed",
        "target_seed",
        "target",
        "input_sha256",
        "original_size",
        "minimized_size",
        "oracle",
        "exception",
        "signature",
        "determinism",
        "sources",
        "mutation_operators",
        "assay_version",
        "python",
        "platform",
    ):
        assert key in m, key
    assert m["campaign_seed"] == 99
    assert m["original_size"] == 21 and m["minimized_size"] == 1
    assert m["exception"]["type"] == "builtins.IndexError"
    assert m["python"]["abi"]
    assert not any(name.startswith(".tmp-") for name in os.listdir(tmp_path / "artifacts" / target.name))


def test_hypothesis_given_test_is_a_target(planted, campaign, tmp_path):
    target = planted.get("maze_given_roundtrip")
    assert target.defined_in.endswith("mazes.py")
    # Seed 4 reaches n == 7 with text at case 541 (measured here; seeds 1-5 need 541 to 7,925
    # cases since kept entries are trimmed, assay.engine.trim: a trimmed entry with n == 7 ends
    # before any text; before, 16 to 9,141 and one more than 10,000).
    result = campaign([target], cases=3000, seed=4)
    (finding,) = result.targets[0].findings
    assert finding.oracle == "invariant" and "maze_given_roundtrip" in finding.signature
    art = load_artifact(finding.artifact)
    assert "round trip lost the text" in art.metadata["exception"]["message"]
    assert not (tmp_path / ".hypothesis").exists()


@pytest.mark.campaign
@pytest.mark.slow
def test_slow_hunting_confirms_a_quadratic(planted, campaign):
    # Cost feedback climbs to a big input; timing-based, so the cap has room (seed 1
    # finds it at case 63 under PYTHONHASHSEED 1-5, quiet or beside a busy loop, here).
    # Confirmation falls back to counts of line events and loop turns, which see the
    # generator expression's scan, and the key comes from the stack at a line event
    # fixed by that count, so a loaded machine changes neither.
    # 3,000 cases, not 1,000: only one child in 32 may now grow past the length limit, so the
    # climb is slower (1 run in 7 missed at 1,000 under load; still 1 in 11 once a suspect
    # refuted as noise no longer spent its cost class's one confirmation).
    result = campaign([planted.get("slow_quadratic")], cases=3000, seed=1)
    (finding,) = result.targets[0].findings
    assert finding.oracle == "slow"
    evidence = load_artifact(finding.artifact).metadata["verdict"]["data"]
    # Confirmed by timings, or (on a loaded machine, where timings are noise) by line counts.
    costs = evidence.get("lines") or evidence["times"]
    assert costs[2] / costs[1] > 2.8 and costs[1] / costs[0] > 2.8
    assert "slow_quadratic" in finding.signature


def test_slow_but_linear_is_never_a_finding(planted, campaign):
    result = campaign([planted.get("slow_linear")], cases=1500, seed=1)
    assert result.findings == 0


def test_slow_unit_confirm_and_refuse():
    from assay.engine import slow

    def quadratic(d: bytes) -> None:
        for i in range(len(d)):
            d.count(b"a", 0, i)  # work, O(n^2) overall

    evidence = slow.confirm(quadratic, b"a" * 3000, 0.001)
    assert evidence is not None and min(evidence.growth) >= slow.SUPERLINEAR
    assert slow.confirm(lambda d: sum(d), b"a" * 200_000, 0.0001) is None


def test_slow_confirmation_by_line_counts_when_timings_are_flat():
    import time

    from assay.engine import slow

    def flat(d: bytes) -> None:  # timings that say nothing, as on a saturated machine
        time.sleep(0.003)

    evidence = slow.confirm(flat, b"ab" * 100, 0.001, count=lambda d: len(d) ** 2)
    assert evidence is not None and evidence.lines and min(evidence.line_growth) >= slow.SUPERLINEAR
    assert "line events" in slow.slow_verdict([], evidence, 0.001).detail
    assert slow.confirm(flat, b"ab" * 100, 0.001, count=lambda d: 40 * len(d)) is None  # linear
    assert slow.confirm(flat, b"ab" * 100, 0.001, count=lambda d: None) is None  # saturated count
    assert slow.confirm(flat, b"ab" * 10, 0.001, count=lambda d: len(d) ** 2) is None  # too few to compare
    assert slow.repeated_part(b"xxABABABABy") == (2, 2, 4)


def test_a_quadratic_generator_expression_is_confirmed_by_counts_when_timings_are_flat(planted):
    """The planted quadratic's work is a generator expression on one line.

    On a loaded machine its timings can say nothing (here: flat), and the counts
    must decide.  At the sizes timed, the biggest count saturates at the worker's
    cap, so the counted inputs are grown by halved factors.  (Counting LINE events
    alone, the scan looked linear and the finding depended on the machine's load.)
    """
    import time

    from assay.engine import execute, slow, traced, worker

    target = planted.get("slow_quadratic")
    data = b"xx" + b"[" * 1500 + b"]" * 300 + b"[" * 900 + b"]" * 214

    def flat(d: bytes) -> None:
        time.sleep(0.003)

    child = traced.CountingChild(lambda d: execute.run(target, d), worker.LINE_CAP)

    def count(d: bytes) -> int | None:
        n = child.count(d, target.timeout)
        return n if 0 < n < worker.LINE_CAP else None

    try:
        assert count(data) is None, "the input is big enough to saturate the count"
        evidence = slow.confirm(flat, data, 0.001, count)
    finally:
        child.close(kill=True)
    assert evidence is not None and evidence.lines and min(evidence.line_growth) >= slow.SUPERLINEAR
    assert max(evidence.counted_sizes) < max(evidence.sizes)
    assert "at [" in slow.slow_verdict([], evidence, 0.001).detail


def test_slow_stack_sample_survives_a_run_shorter_than_expected():
    # On a loaded machine the timings that place the sample can be inflated; a run
    # that ends before the alarm must be sampled again, not keyed by an empty stack.
    import time

    from assay.engine import slow

    def busy_for_30ms(d: bytes) -> None:
        end = time.perf_counter() + 0.03
        while time.perf_counter() < end:
            pass

    frames = slow.sample_stack(busy_for_30ms, b"", after=2.0)
    assert frames and frames[0].qualname.endswith("busy_for_30ms")


def test_jobs_share_one_corpus_and_merge(planted, tmp_path):
    from assay.engine.campaign import CampaignOptions, run_campaign

    options = CampaignOptions(
        corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=4001, seed=1, jobs=2
    )
    (t,) = run_campaign([planted.get("planted_feature_only")], options).targets
    assert t.jobs == 2 and len(t.schedule_digest.split(",")) == 2
    assert t.cases == 4001 + 2 * len(planted.get("planted_feature_only").seeds)
    assert [f.oracle for f in t.findings] == ["panic"]
    on_disk = {p.name[:-6] for p in (tmp_path / "c" / "planted_feature_only").glob("*.input")}
    assert set(t.corpus_additions) == on_disk


def test_worker_imports_entries_other_jobs_wrote(planted, tmp_path):
    from assay.engine import journal as jr
    from assay.engine.worker import Worker, WorkerPlan
    from assay.feedback.scope import Scope
    from assay.feedback.sysmon import SysmonFeedback
    from assay.store.corpus import Corpus

    target = planted.get("planted_feature_only")
    shared = Corpus(tmp_path, target.name, target.max_len)
    shared.add(b"(((")
    plan = WorkerPlan(
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
        reload_dir=str(shared.dir),
    )
    sent = []
    feedback = SysmonFeedback(Scope(target.source_paths()))
    feedback.start()
    try:
        worker = Worker(plan, feedback, jr.Journal(target.max_len), sent.append)
        worker._reload(0)
        worker._reload(0)  # a second look imports nothing new
    finally:
        feedback.stop()
    assert worker.source.corpus == [b"((("]
    assert [m[0] for m in sent] == ["corpus"] and sent[0][3] is True, "imported, not re-written"


HASH_SEED_PROBE = """
import sys, tempfile, tomllib
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target

def toml(data):
    return tomllib.loads(data.decode("utf-8", "surrogateescape"))

target = make_target(toml, name="toml", expected=(tomllib.TOMLDecodeError,), sources=("tomllib",),
                     seeds=[b'a = "x"\\n[t]\\nb = [1, 2]\\n'], max_len=512)
d = tempfile.mkdtemp()
(out,) = run_campaign([target], CampaignOptions(corpus_root=d + "/c", artifact_root=d + "/a", max_cases=1500,
                                                  seed=1)).targets
print(out.schedule_digest)
"""


def test_a_campaign_through_the_api_does_not_depend_on_the_hash_seed(tmp_path):
    # tomllib checks characters against frozensets of strings, whose order follows the
    # hash seed; comparison feedback turns their first elements into replacements.
    import subprocess

    digests = set()
    for hash_seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", HASH_SEED_PROBE],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        digests.add(proc.stdout.strip())
    assert len(digests) == 1, digests
