"""``--shard auto/N``: the index comes from a Kubernetes Indexed Job or a Slurm array."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from assay.core.errors import ConfigError
from assay.scale.shard_select import resolve_shard
from conftest import PLANTED


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"JOB_COMPLETION_INDEX": "0"}, 1),
        ({"JOB_COMPLETION_INDEX": "3"}, 4),
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0"}, 1),
        ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, 4),
        ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1"}, 1),
        ({"SLURM_ARRAY_TASK_ID": "2"}, 3),  # no MIN: 0-based
        ({"SLURM_ARRAY_TASK_ID": "30", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "10"}, 3),
        ({"JOB_COMPLETION_INDEX": "1", "SLURM_ARRAY_TASK_ID": "0"}, 2),  # Kubernetes wins
    ],
)
def test_auto_index(env, expected):
    assert resolve_shard((None, 4), env) == (expected, 4)
    assert resolve_shard((2, 4), env) == (2, 4)  # an explicit K ignores the environment


@pytest.mark.parametrize(
    "env, needle",
    [
        ({}, "neither JOB_COMPLETION_INDEX"),
        ({"JOB_COMPLETION_INDEX": "4"}, "outside 1..4"),
        ({"JOB_COMPLETION_INDEX": "x"}, "not a whole number"),
        ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "5"}, "has 5 tasks"),
        ({"SLURM_ARRAY_TASK_ID": "15", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "10"}, "grid"),
    ],
)
def test_auto_errors(env, needle):
    with pytest.raises(ConfigError, match=needle):
        resolve_shard((None, 4), env)


def _fuzz(tmp_path, shard, env):
    run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    run.mkdir()
    report = run / "report.json"
    clean = {k: v for k, v in os.environ.items() if k not in ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID")}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(PLANTED),
            "--fuzz-target",
            "planted_nested_compares",
            "--fuzz-target",
            "planted_feature_only",
            "--fuzz-cases",
            "20",
            "--fuzz-seed",
            "1",
            "--fuzz-corpus",
            str(run / "c"),
            "--fuzz-artifacts",
            str(run / "a"),
            "--shard",
            shard,
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=300,
    )
    return r, report


def test_cli_auto_matches_explicit_and_refuses_without_index(tmp_path):
    r, report = _fuzz(tmp_path, "auto/2", {"JOB_COMPLETION_INDEX": "1"})
    assert r.returncode == 0, r.stderr
    data = json.loads(report.read_text())
    r2, report2 = _fuzz(tmp_path, "2/2", {})
    explicit = json.loads(report2.read_text())
    assert r2.returncode == 0 and len(data["targets"]) == 1
    strip = lambda t: {k: v for k, v in t.items() if k not in ("elapsed", "execs_per_sec", "timeline")}  # noqa: E731 - times vary
    assert {n: strip(t) for n, t in data["targets"].items()} == {n: strip(t) for n, t in explicit["targets"].items()}
    assert data["skipped"] == explicit["skipped"]
    assert data["arguments"]["shard"] == [2, 2] and "not in shard 2/2" in next(iter(data["skipped"].values()))
    r, _ = _fuzz(tmp_path, "auto/2", {})
    assert r.returncode == 2 and "neither JOB_COMPLETION_INDEX" in r.stderr
    r, _ = _fuzz(tmp_path, "nope/2", {})
    assert r.returncode == 2 and "auto/N" in r.stderr
