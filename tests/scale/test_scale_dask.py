"""``--executor dask``: one task per (target, shard), results as data, idempotent writes.

The cluster here is a real ``distributed.LocalCluster`` with ``processes=False`` (one
worker, two threads, in the test process) to keep start-up under a second; the
shards still fork their own crash-isolated campaign workers.  The CLI's default
(one worker process per core) is what ``bench/scale.py`` measures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import PLANTED

pytest.importorskip(
    "dask.distributed", reason="the dask extra is not installed (pip install 'dask[distributed]>=2024')"
)

#: Set by tests/scale/test_scale_dask_isolated.py, which runs this module in a child
#: pytest: an in-process cluster leaves threads behind (distributed's profiler and
#: offload pool), and every later test that forks would then fork a multi-threaded
#: process.
ISOLATED = os.environ.get("ASSAY_DASK_TESTS") == "1"
pytestmark = pytest.mark.skipif(not ISOLATED, reason="runs in its own process (test_scale_dask_isolated.py)")

from assay.core.config import load_project  # noqa: E402
from assay.core.errors import ConfigError  # noqa: E402
from assay.engine.campaign import CampaignOptions, prepare, run_campaign  # noqa: E402
from assay.harness.discovery import load_targets  # noqa: E402
from assay.scale.dask_executor import dask_client, import_distributed, run_campaign_dask, run_specs  # noqa: E402
from assay.scale.shard import apply_result, plan_shards, run_shard  # noqa: E402

TARGETS = ("planted_nested_compares", "planted_feature_only")
CASES, SEED = 300, 11


@pytest.fixture(scope="module")
def client():
    with dask_client(None, processes=False, n_workers=1, threads_per_worker=2, protocol="tcp://") as c:
        yield c


def _targets(names=TARGETS):
    registry = load_targets(load_project(PLANTED))
    return [registry.get(n) for n in names]


def _options(tmp_path, **kw):
    return CampaignOptions(
        corpus_root=str(tmp_path / "corpus"),
        artifact_root=str(tmp_path / "artifacts"),
        max_cases=CASES,
        seed=SEED,
        project_root=str(PLANTED),
        **kw,
    )


def _snapshot(root):
    from assay.store.corpus import Corpus

    Corpus(root / "corpus", "planted_feature_only", 64).add(b"((x))")  # the corpus every run starts from
    return root


def test_dask_run_and_the_same_shards_one_by_one_give_the_same_schedule_digests(tmp_path, client):
    targets = _targets()
    options = _options(_snapshot(tmp_path))
    prepare(targets, options)
    specs = plan_shards(str(PLANTED), targets, options, SEED, 3)
    assert len(specs) == 6 and [s.max_cases for s in specs[:3]] == [100, 100, 100]
    one_by_one = {(s.target, s.index): run_shard(s).outcome["schedule_digest"] for s in specs}
    on_dask: dict = {}
    run_specs(client, specs, lambda r: on_dask.__setitem__((r.target, r.index), r.outcome["schedule_digest"]))
    assert on_dask == one_by_one and len(set(one_by_one.values())) == 6

    # The executor's report lists those digests per shard, in shard order, and a
    # one-shard Dask run is exactly the local campaign.
    result, _ = run_campaign_dask(targets, _options(_snapshot(tmp_path / "d3")), shards=3, client=client)
    assert result.master_seed == SEED
    for t in result.targets:
        assert t.schedule_digest.split(",") == [one_by_one[(t.name, k)] for k in range(3)]
    local = run_campaign(targets, _options(_snapshot(tmp_path / "local")))
    single, _ = run_campaign_dask(targets, _options(_snapshot(tmp_path / "d1")), shards=1, client=client)
    assert [t.schedule_digest for t in single.targets] == [t.schedule_digest for t in local.targets]
    assert [t.corpus_additions for t in single.targets] == [t.corpus_additions for t in local.targets]


def test_a_retried_task_writes_nothing_twice(tmp_path):
    [target] = _targets(("planted_two_bugs",))
    options = _options(tmp_path, shrink_cases=64)
    options.max_cases = 1500
    prepare([target], options)
    [spec] = plan_shards(str(PLANTED), [target], options, SEED, 1)
    first, second = run_shard(spec), run_shard(spec)  # the task ran twice (a lost worker, a retry)
    assert first.outcome["schedule_digest"] == second.outcome["schedule_digest"]
    assert first.findings and set(first.findings) == set(second.findings)
    assert first.additions == second.additions
    outcome, applied = apply_result(first, options.corpus_root, options.artifact_root, target.max_len)
    assert applied.artifacts_written == len(first.findings) and all(f.new for f in outcome.findings)
    files = sorted(p for p in (tmp_path / "artifacts").rglob("*"))
    stamps = {p: os.stat(p).st_mtime_ns for p in files} | {
        p: os.stat(p).st_mtime_ns for p in (tmp_path / "corpus").rglob("*")
    }
    again, applied2 = apply_result(second, options.corpus_root, options.artifact_root, target.max_len)
    assert (applied2.corpus_written, applied2.artifacts_written) == (0, 0)
    assert not any(f.new for f in again.findings)
    assert sorted(p for p in (tmp_path / "artifacts").rglob("*")) == files
    assert {p: os.stat(p).st_mtime_ns for p in stamps} == stamps
    assert not list(tmp_path.rglob(".tmp-*"))
    assert {f.artifact for f in again.findings} == {f.artifact for f in outcome.findings}


def test_a_finding_that_cannot_be_copied_back_keeps_its_input(tmp_path):
    """The client's copy of a shard's artifacts fails (a full disk; here the root lies under a file):
    the findings stay in the outcome with their input and metadata, as the supervisor keeps them."""
    from assay.core import notices

    [target] = _targets(("planted_two_bugs",))
    options = _options(tmp_path, shrink_cases=64)
    options.max_cases = 1500
    prepare([target], options)
    [spec] = plan_shards(str(PLANTED), [target], options, SEED, 1)
    result = run_shard(spec)
    assert result.findings
    (tmp_path / "file").write_bytes(b"not a folder")
    heard: list[str] = []
    notices.set_sink(heard.append)
    try:
        outcome, applied = apply_result(result, options.corpus_root, tmp_path / "file" / "below", target.max_len)
    finally:
        notices.set_sink(None)
    assert applied.artifacts_written == 0 and len(heard) == len(result.findings), heard
    for f in outcome.findings:
        assert f.artifact == "" and f.save_error and f.unsaved_input
        assert f.unsaved_metadata is not None and f.unsaved_metadata["signature"] == f.signature


def test_cli_on_an_existing_scheduler_matches_local_shards(tmp_path, client):
    report = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(PLANTED),
            *sum((["--fuzz-target", n] for n in TARGETS), []),
            "--fuzz-cases",
            str(CASES),
            "--fuzz-seed",
            str(SEED),
            "--fuzz-corpus",
            str(tmp_path / "corpus"),
            "--fuzz-artifacts",
            str(tmp_path / "artifacts"),
            "--executor",
            "dask",
            "--scheduler",
            client.scheduler.address,
            "--jobs",
            "2",
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "dask: 4 task(s)" in r.stdout and (r.returncode == 1) == ("no findings" not in r.stdout)
    assert "dask: 4/4 " in r.stderr  # progress, one line per finished task
    data = json.loads(report.read_text())
    targets = _targets()
    specs = plan_shards(str(PLANTED), targets, _options(tmp_path / "fresh"), SEED, 2)
    for name, t in data["targets"].items():
        expected = [run_shard(s).outcome["schedule_digest"] for s in specs if s.target == name]
        assert t["schedule_digest"].split(",") == expected and t["jobs"] == 2
        for d in t["corpus_additions"]:
            assert (tmp_path / "corpus" / name / f"{d}.input").is_file()


def test_missing_dask_and_stray_scheduler_are_exit_2(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ConfigError, match=r"pip install 'dask\[distributed\]>=2024'"):
        import_distributed()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(PLANTED),
            "--fuzz-target",
            TARGETS[0],
            "--fuzz-cases",
            "5",
            "--scheduler",
            "tcp://127.0.0.1:1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "--scheduler needs --executor dask" in r.stderr


def test_a_worker_with_another_hash_seed_runs_the_shard_under_the_clients(tmp_path, monkeypatch):
    import assay.scale.shard as shard

    targets = _targets(("planted_nested_compares",))
    monkeypatch.setattr(shard, "HASH_SEED", "0")  # as `assay fuzz` runs
    [spec] = plan_shards(str(PLANTED), targets, _options(tmp_path), SEED, 1)
    assert spec.hash_seed == "0" and spec.hash_probe == hash(shard.HASH_PROBE)
    # A worker whose strings hash otherwise (Dask's nanny starts its workers under 6640):
    monkeypatch.setattr(shard, "HASH_PROBE", shard.HASH_PROBE + " elsewhere")

    def not_here(spec):  # pragma: no cover - the shard must run in a fresh interpreter
        raise AssertionError("ran under the worker's hash seed")

    monkeypatch.setattr(shard, "run_shard_here", not_here)
    result = shard.run_shard(spec)
    local = run_campaign(targets, _options(tmp_path / "local"))
    assert result.outcome["schedule_digest"] == local.targets[0].schedule_digest


def test_process_workers_of_our_local_cluster_hash_as_the_client():
    import functools

    import assay.scale.shard as shard

    assert shard.HASH_SEED == os.environ["PYTHONHASHSEED"] == "0"  # set by test_scale_dask_isolated.py
    with dask_client(None, processes=True, n_workers=1, threads_per_worker=1) as c:
        seed = c.submit(functools.partial(os.getenv, "PYTHONHASHSEED"), pure=False).result()
        probe = c.submit(functools.partial(hash, shard.HASH_PROBE), pure=False).result()
    # Dask's nanny would have started the worker under 6640 (and written that into this
    # process's environment): every shard would then have needed a fresh interpreter.
    assert (seed, probe) == ("0", hash(shard.HASH_PROBE))
    assert os.environ["PYTHONHASHSEED"] == "0"
