"""``assay init --ci github``: the workflows parse, hold the jobs and limits, and their
commands work: the very ``run:`` scripts of the nightly shards, the merge and the
pull-request replay are executed here, with small case caps."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PLANTED

yaml = pytest.importorskip("yaml", reason="PyYAML is in the dev extra")

RUN_ID = "4242"
TARGETS = ("planted_feature_only", "planted_nested_compares")
BIN = str(Path(sys.executable).parent)
NATIVE_PLANTED = Path(__file__).resolve().parents[1] / "native" / "planted"


def _init(root: Path, *extra: str) -> dict[str, dict]:
    r = subprocess.run(
        [sys.executable, "-m", "assay", "init", "--ci", "github", "--project", str(root), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    flows = root / ".github" / "workflows"
    return {name: yaml.safe_load((flows / name).read_text()) for name in ("assay-pr.yml", "assay-nightly.yml")}


def _on(doc: dict) -> dict:
    return doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as true


def _step(job: dict, step_id: str) -> dict:
    return next(s for s in job["steps"] if s.get("id") == step_id)


def _uses(job: dict, action: str) -> list[dict]:
    return [s for s in job["steps"] if s.get("uses", "").startswith(action)]


def test_workflows_parse_with_the_jobs_and_limits(tmp_path):
    docs = _init(tmp_path)
    pr, nightly = docs["assay-pr.yml"], docs["assay-nightly.yml"]
    for doc in (pr, nightly):
        assert doc["permissions"] == {"contents": "read"}
    assert list(_on(pr)) == ["pull_request"]
    assert pr["concurrency"]["cancel-in-progress"] is True and "pull_request.number" in pr["concurrency"]["group"]
    [job] = pr["jobs"].values()
    text = json.dumps(pr)
    assert "actions/cache/save" not in text and "native" not in text and "sanitizer" not in text.lower()
    assert _uses(job, "actions/cache/restore") and "--fuzz-replay-only" in _step(job, "replay")["run"]
    assert "--fuzz-backend python" in _step(job, "replay")["run"]
    assert 'assay mutant --changed "origin/${{ github.base_ref }}" --sample' in _step(job, "mutants")["run"]
    assert job["steps"][0]["with"]["fetch-depth"] == 0

    assert set(_on(nightly)) == {"schedule", "workflow_dispatch"} and _on(nightly)["schedule"][0]["cron"]
    assert nightly["concurrency"] == {"group": "assay-nightly", "cancel-in-progress": False}
    source = nightly["env"].pop(
        "ASSAY_SOURCE"
    )  # where the Install steps get assay (tests/onboard/test_onboard_ci_install.py)
    assert source and pr["env"]["ASSAY_SOURCE"] == source
    assert nightly["env"] == {"ASSAY_CASES": "50000", "ASSAY_BUDGET": "240"}
    fuzz, merge = nightly["jobs"]["fuzz"], nightly["jobs"]["merge"]
    assert fuzz["strategy"]["max-parallel"] == 2 and fuzz["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert (
        fuzz["strategy"]["fail-fast"] is False and "needs.plan.outputs.targets" in fuzz["strategy"]["matrix"]["target"]
    )
    shard = _step(fuzz, "shard")["run"]
    assert '--fuzz-cases "$ASSAY_CASES" --fuzz-budget "$ASSAY_BUDGET"' in shard and "--fuzz-seed" in shard
    assert '--fuzz-backend "${{ matrix.target.backend }}"' in shard
    # Native targets need clang with libFuzzer: in their shards, and in the merge (-merge=1).
    assert _step(fuzz, "clang")["if"] == "matrix.target.backend == 'native'"
    assert _step(merge, "clang")["if"] == "needs.plan.outputs.native == 'true'"
    assert nightly["jobs"]["plan"]["outputs"]["native"] == "${{ steps.plan.outputs.native }}"
    steps = [s.get("id") for s in merge["steps"]]
    assert steps.index("clang") < steps.index("merge")
    uploads = {s["with"]["name"]: s for s in _uses(fuzz, "actions/upload-artifact")}
    corpus = uploads["fuzz-corpus-${{ steps.names.outputs.slug }}-${{ matrix.shard }}-${{ github.run_id }}"]
    results = uploads["fuzz-results-${{ steps.names.outputs.slug }}-${{ matrix.shard }}-${{ github.run_id }}"]
    # Artifact names may not hold ':', which targets named file:function (atheris harnesses) have.
    out = tmp_path / "names_output"
    r = _bash(
        _expand(_step(fuzz, "names")["run"], {"matrix.target.name": "fuzz_x:TestOneInput"}),
        out.parent,
        {**os.environ, "GITHUB_OUTPUT": str(out)},
    )
    assert r.returncode == 0 and out.read_text() == "slug=fuzz_x-TestOneInput\n"
    assert corpus["with"]["retention-days"] == 14 and results["with"]["retention-days"] == 90
    assert corpus["if"] == results["if"] == "always()"
    assert merge["if"] == "always()" and "fuzz" in merge["needs"]
    assert "assay merge-corpus" in _step(merge, "merge")["run"]
    [merged] = [
        s for s in _uses(merge, "actions/upload-artifact") if s["with"]["name"].startswith("fuzz-corpus-merged-")
    ]
    assert (
        merged["with"]["name"] == "fuzz-corpus-merged-${{ github.run_id }}" and merged["with"]["retention-days"] == 90
    )
    [save] = _uses(merge, "actions/cache/save")
    [restore] = _uses(fuzz, "actions/cache/restore")
    assert save["with"]["path"] == merged["with"]["path"] == restore["with"]["path"]
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"].strip())
    # The settings are the user's to change; an existing file needs --force.
    again = subprocess.run(
        [sys.executable, "-m", "assay", "init", "--ci", "github", "--project", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 2 and "--force" in again.stderr
    small = _init(tmp_path, "--force", "--shards", "2", "--cases", "10")["assay-nightly.yml"]
    assert small["jobs"]["fuzz"]["strategy"]["matrix"]["shard"] == [1, 2] and small["env"]["ASSAY_CASES"] == "10"


def _expand(script: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*(.+?)\s*\}\}", lambda m: values[m.group(1)], script)


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # How GitHub runs a `run:` step: bash --noprofile --norc -eo pipefail {0}
    path = cwd / ".step.sh"
    path.write_text(script)
    try:
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        path.unlink()


def test_the_workflow_commands_run_locally_shards_merge_replay(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(PLANTED / "planted.py", project / "planted.py")
    (project / "pyproject.toml").write_text('[tool.assay]\ntargets = ["planted.py"]\n')
    docs = _init(project)
    nightly, pr = docs["assay-nightly.yml"], docs["assay-pr.yml"]
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "ASSAY_CASES": "150", "ASSAY_BUDGET": "60"}

    # plan: the targets, as the matrix gets them.
    out = tmp_path / "github_output"
    r = _bash(_expand(_step(nightly["jobs"]["plan"], "plan")["run"], {}), project, {**env, "GITHUB_OUTPUT": str(out)})
    assert r.returncode == 0, r.stderr
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    listed = {t["name"]: t["backend"] for t in json.loads(outputs["targets"])}
    assert set(TARGETS) <= set(listed) and set(listed.values()) == {"python"} and outputs["native"] == "false"

    # fuzz: 4 seeded shards per target, each on a fresh checkout; "upload" = copy the corpus folder.
    merge_dir = tmp_path / "merge-runner"
    shutil.copytree(project, merge_dir)
    shard_script = _step(nightly["jobs"]["fuzz"], "shard")["run"]
    digests = {}
    for target in TARGETS:
        for shard in nightly["jobs"]["fuzz"]["strategy"]["matrix"]["shard"]:
            runner = tmp_path / f"runner-{target}-{shard}"
            shutil.copytree(project, runner)
            values = {
                "matrix.target.name": target,
                "matrix.target.backend": "python",
                "matrix.shard": str(shard),
                "github.run_id": RUN_ID,
            }
            r = _bash(_expand(shard_script, values), runner, env)
            assert r.returncode in (0, 1), r.stdout + r.stderr  # 1: the shard found bugs
            report = json.loads((runner / "shard" / "results" / "report.json").read_text())
            assert report["master_seed"] == int(f"{RUN_ID}{shard}")
            digests[(target, shard)] = report["targets"][target]["schedule_digest"]
            shutil.copytree(
                runner / "shard" / "corpus", merge_dir / "shards" / f"fuzz-corpus-{target}-{shard}-{RUN_ID}"
            )
    assert len(set(digests.values())) == len(digests)  # independently seeded

    # merge: the merged corpus lands where the cache is saved from.
    merge = nightly["jobs"]["merge"]
    r = _bash(_expand(_step(merge, "merge")["run"], {"github.run_id": RUN_ID}), merge_dir, env)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((merge_dir / "merge-results" / "merge.json").read_text())
    cache = (
        merge_dir / [s for s in merge["steps"] if s.get("uses", "").startswith("actions/cache/save")][0]["with"]["path"]
    )
    for target in TARGETS:
        t = report["targets"][target]
        assert t["features"] == t["features_preserved"] and t["entries_out"] <= t["entries_in"]
        assert sorted(p.name[:-6] for p in (cache / target).iterdir()) == sorted(t["kept"])

    # pull request: replay every target on the merged corpus (restored into place).
    pr_runner = tmp_path / "pr-runner"
    shutil.copytree(project, pr_runner)
    shutil.copytree(cache, pr_runner / ".assay" / "corpus")
    [job] = pr["jobs"].values()
    r = _bash(_expand(_step(job, "replay")["run"], {}), pr_runner, env)
    replay = json.loads((pr_runner / "replay-results" / "report.json").read_text())
    assert set(listed) == set(replay["targets"])
    failing = {n for n, t in replay["targets"].items() if t["findings"]}
    assert failing <= {"planted_flaky"}, r.stdout + r.stderr  # it fails half its runs, whatever the input
    assert r.returncode == (1 if failing else 0), r.stdout + r.stderr
    for target in TARGETS:
        assert replay["targets"][target]["initial_corpus"] == sorted(report["targets"][target]["kept"])
        assert replay["targets"][target]["corpus_additions"] == []


def test_native_targets_shard_with_clang_and_merge_with_libfuzzer(tmp_path):
    pytest.importorskip("assay.native", reason="the native backend is not part of this build")
    from assay.native.toolchain import available

    why = available()
    if why:
        pytest.skip(f"native backend unavailable here: {why}")
    project = tmp_path / "project"
    shutil.copytree(NATIVE_PLANTED, project)
    shutil.copy(PLANTED / "planted.py", project / "planted.py")
    text = (project / "pyproject.toml").read_text().replace("targets = []", 'targets = ["planted.py"]')
    (project / "pyproject.toml").write_text(text)
    nightly = _init(project)["assay-nightly.yml"]
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"], "ASSAY_CASES": "200", "ASSAY_BUDGET": "60"}

    out = tmp_path / "github_output"
    r = _bash(_expand(_step(nightly["jobs"]["plan"], "plan")["run"], {}), project, {**env, "GITHUB_OUTPUT": str(out)})
    assert r.returncode == 0, r.stderr
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    listed = {t["name"]: t["backend"] for t in json.loads(outputs["targets"])}
    assert listed["deep"] == "native" and listed["planted_feature_only"] == "python" and outputs["native"] == "true"

    # clang is on this machine (available() said so): the step finds it and installs nothing.
    r = _bash(_step(nightly["jobs"]["fuzz"], "clang")["run"], project, env)
    assert r.returncode == 0 and "clang with libFuzzer:" in r.stdout, r.stdout + r.stderr

    merge_dir = tmp_path / "merge-runner"
    shutil.copytree(project, merge_dir)
    shard_script = _step(nightly["jobs"]["fuzz"], "shard")["run"]
    for shard in nightly["jobs"]["fuzz"]["strategy"]["matrix"]["shard"]:
        runner = tmp_path / f"runner-deep-{shard}"
        shutil.copytree(project, runner)
        values = {
            "matrix.target.name": "deep",
            "matrix.target.backend": "native",
            "matrix.shard": str(shard),
            "github.run_id": RUN_ID,
        }
        r = _bash(_expand(shard_script, values), runner, env)
        assert r.returncode in (0, 1), r.stdout + r.stderr
        report = json.loads((runner / "shard" / "results" / "report.json").read_text())
        assert report["master_seed"] == int(f"{RUN_ID}{shard}") and list(report["targets"]) == ["deep"]
        shutil.copytree(runner / "shard" / "corpus", merge_dir / "shards" / f"fuzz-corpus-deep-{shard}-{RUN_ID}")

    merge = nightly["jobs"]["merge"]
    r = _bash(_expand(_step(merge, "merge")["run"], {"github.run_id": RUN_ID}), merge_dir, env)
    assert r.returncode == 0, r.stdout + r.stderr
    t = json.loads((merge_dir / "merge-results" / "merge.json").read_text())["targets"]["deep"]
    assert t["note"] == "native target: minimized by libFuzzer -merge=1"
    assert 1 <= t["entries_out"] <= t["entries_in"]
    assert sorted(p.name[:-6] for p in (merge_dir / ".assay" / "corpus" / "deep").iterdir()) == sorted(t["kept"])
