"""Shared fixtures: the planted-bug targets and campaign helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
PLANTED = ROOT / "examples" / "planted"


@pytest.fixture(scope="session")
def planted():
    """The registry of planted-bug targets in examples/planted."""
    from assay.config import load_project
    from assay.discovery import load_targets

    return load_targets(load_project(PLANTED))


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
    if sys.version_info < (3, 12):
        raise pytest.UsageError("assay's tests need Python 3.12+ (sys.monitoring)")
