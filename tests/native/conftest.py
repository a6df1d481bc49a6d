"""Fixtures of the native backend's tests: a copy of the planted project, built once per session.

Every test here needs clang with libFuzzer, ASan and UBSan; ``.ci/run`` installs it.
Where it cannot be installed the tests are skipped, and the reason says why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

PLANTED_SRC = Path(__file__).resolve().parent / "planted"


def _require_clang() -> None:
    from assay.native.toolchain import available

    why = available()
    if why:
        pytest.skip(f"native backend unavailable here: {why}")


@pytest.fixture(scope="session")
def clang():
    """The toolchain (skips the test when clang with libFuzzer cannot be found)."""
    _require_clang()
    from assay.native.toolchain import find_toolchain

    return find_toolchain()


@pytest.fixture(scope="session")
def planted_root(tmp_path_factory, clang) -> Path:
    """A session-wide copy of tests/native/planted with both targets already built."""
    from assay.core.config import load_project
    from assay.native.build import ensure_build

    root = tmp_path_factory.mktemp("native") / "planted"
    shutil.copytree(PLANTED_SRC, root)
    project = load_project(root)
    for target in project.native.values():
        ensure_build(target, root, tc=clang)
    return root


@pytest.fixture
def planted_project(planted_root):
    from assay.core.config import load_project

    return load_project(planted_root)


@pytest.fixture
def fresh_project(tmp_path, clang):
    """A private copy of the planted project (for tests that edit sources); nothing built yet."""
    from assay.core.config import load_project

    root = tmp_path / "planted"
    shutil.copytree(PLANTED_SRC, root)
    return load_project(root)


@pytest.fixture
def native_run(tmp_path):
    """Run one native target of a project into tmp folders; returns its outcome."""
    from assay.native.campaign import NativeOptions, run_native_target

    def run(project, name, *, cases=None, budget=None, replay_only=False, corpus=None, seed=1, deadline=None):
        options = NativeOptions(
            corpus_root=str(corpus or tmp_path / "corpus"),
            artifact_root=str(tmp_path / "artifacts"),
            project_root=str(project.root),
            max_cases=cases,
            replay_only=replay_only,
            deadline=deadline,
        )
        return run_native_target(project.native[name], options, master_seed=seed, tseed=seed, budget=budget)

    return run
