"""Shared fixtures: the planted-bug targets and campaign helpers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PLANTED = ROOT / "examples" / "planted"


@pytest.fixture(scope="session")
def planted():
    """The registry of planted-bug targets in examples/planted."""
    from assay.core.config import load_project
    from assay.harness.discovery import load_targets

    return load_targets(load_project(PLANTED))


@pytest.fixture
def dead_pid() -> int:
    """A pid that certainly belongs to no process now (a child we reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def campaign(tmp_path):
    """Run a capped campaign over named planted targets into tmp folders."""
    from assay.engine.campaign import CampaignOptions, run_campaign

    def run(targets, *, cases=2000, seed=1, replay_only=False, corpus=None, artifacts=None, shrink_cases=256):
        options = CampaignOptions(
            corpus_root=str(corpus or tmp_path / "corpus"),
            artifact_root=str(artifacts or tmp_path / "artifacts"),
            max_cases=cases,
            seed=seed,
            replay_only=replay_only,
            shrink_cases=shrink_cases,
        )
        return run_campaign(list(targets), options)

    return run


def pytest_configure(config):
    if sys.version_info < (3, 12):  # noqa: UP036 - a clear message on an older Python, not a collection error
        raise pytest.UsageError("assay's tests need Python 3.12+ (sys.monitoring)")
    # Compiled comparison twins are cached between campaigns (assay.feedback.twincache):
    # in a folder of this run's, not the user's cache; campaigns run as CLI subprocesses
    # inherit it.
    config._assay_cache_dir = tempfile.mkdtemp(prefix="assay-test-cache-")
    os.environ["ASSAY_CACHE_DIR"] = config._assay_cache_dir


def pytest_unconfigure(config):
    folder = getattr(config, "_assay_cache_dir", None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
