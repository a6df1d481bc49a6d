"""The C twin's own entry points under libFuzzer, ASan and UBSan: each harness runs clean.

``tests/native/cmutate_harness/`` holds one native target per public entry point of
``assay.gen._cmutate`` (mutate, replace_one, Random, Stream, HotLoop, LineTally,
Recorder, FuzzedDataProvider), each a libFuzzer harness that embeds CPython, links the twin's sources in
and calls the entry point with arguments made from the fuzzer's bytes (``drivers.py``).
Here each runs for a bounded number of inputs through assay's native backend, and
the campaign must end without a finding.  ``tests/native/asan_cmutate.sh`` runs them
longer, after the sanitized build's equivalence tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "native" / "cmutate_harness"
RUNS = 300

pytestmark = pytest.mark.slow


def test_every_entry_point_of_the_c_twin_has_a_harness() -> None:
    import tomllib

    declared = tomllib.loads((HARNESS / "pyproject.toml").read_text())["tool"]["assay"]["native"]
    source = (HARNESS / "drivers.py").read_text()
    entries = {"mutate", "replace_one", "random", "stream", "hotloop", "linetally", "recorder", "fdp"}
    assert set(declared) == {f"cmutate_{entry}" for entry in entries}
    for entry in entries:
        assert f'"{entry}": {entry},' in source
        assert (HARNESS / f"fuzz_{entry}.c").is_file()


def test_each_harness_of_the_c_twin_runs_clean_under_asan_and_ubsan(clang, tmp_path: Path) -> None:
    # A copy of the layout the harnesses' relative paths expect (their builds go under the project).
    shutil.copytree(
        ROOT / "src" / "assay" / "gen", tmp_path / "src" / "assay" / "gen", ignore=shutil.ignore_patterns("*.so")
    )
    project = tmp_path / "tests" / "native" / "cmutate_harness"
    shutil.copytree(HARNESS, project, ignore=shutil.ignore_patterns(".assay"))
    env = dict(os.environ, CMUTATE_HARNESS_DIR=str(project))
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "fuzz", "--project", str(project), "--fuzz-backend", "native"]
        + ["--fuzz-cases", str(RUNS), "--fuzz-seed", "1"]
        + ["--fuzz-corpus", str(tmp_path / "corpus"), "--fuzz-artifacts", str(tmp_path / "artifacts")],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    assert proc.stdout.count(f"{RUNS} cases in") == 8, proc.stdout
