"""Runs test_scale_dask.py in a child pytest, so the cluster's threads never live in
the suite's own process (later tests fork, and forking a multi-threaded process can
deadlock the child)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "dask.distributed", reason="the dask extra is not installed (pip install 'dask[distributed]>=2024')"
)

HERE = Path(__file__).resolve().parent


def test_dask_executor_tests_pass_in_their_own_process():
    # PYTHONHASHSEED as `assay fuzz` sets it: the process-worker test checks it reaches the workers.
    env = {**os.environ, "ASSAY_DASK_TESTS": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "test_scale_dask.py")],
        cwd=HERE.parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " skipped" not in proc.stdout.splitlines()[-1], proc.stdout[-2000:]
