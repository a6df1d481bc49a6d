"""Fixtures of the promoter's tests (helpers live in promote_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from promote_helpers import TempProject, unique_stem

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def isolated_registry():
    """Each test registers its targets in an empty process-wide registry.

    ``@assay.target`` refuses a second target of the same name from another file;
    tests here reuse names (``parse``) in their own temporary projects.
    """
    from assay.target import REGISTRY

    saved = dict(REGISTRY._targets)
    REGISTRY.clear()
    yield
    REGISTRY.clear()
    REGISTRY._targets.update(saved)


@pytest.fixture
def temp_project(tmp_path: Path) -> TempProject:
    """A fresh project whose target file has a name no other test uses."""
    return TempProject(tmp_path / "proj", unique_stem(tmp_path))
