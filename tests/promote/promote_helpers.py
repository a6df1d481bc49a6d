"""Helpers for the promoter's tests: temporary projects, their targets and artifacts.

There is no conftest.py here: a second ``conftest`` module would shadow the top-level
one for ``from conftest import ...``.  Test modules import the fixtures below.
"""

from __future__ import annotations

import inspect
import re
import sys
import textwrap
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


def main_plugin_promotes() -> bool:
    """True once ``assay.pytest_plugin`` registers PromotePlugin for ``--assay-promote``."""
    try:
        import assay.pytest_plugin as plugin
    except ImportError:
        return False
    return "--assay-promote" in inspect.getsource(plugin)


def child_pytest_args() -> list[str]:
    """Arguments for a child pytest: without the main plugin when it cannot load."""
    try:
        import assay.pytest_plugin  # noqa: F401
    except ImportError:
        return ["-p", "no:assay"]
    return []


class TempProject:
    """A project in a temporary folder: pyproject.toml plus one target file."""

    def __init__(self, root: Path, stem: str) -> None:
        self.root = root
        self.stem = stem
        (root / "fuzz").mkdir(parents=True, exist_ok=True)
        (root / "pyproject.toml").write_text('[tool.assay]\ntargets = ["fuzz"]\n')

    @property
    def targets_file(self) -> Path:
        return self.root / "fuzz" / f"{self.stem}.py"

    def write_targets(self, source: str) -> None:
        self.targets_file.write_text("import assay\n" + textwrap.dedent(source))

    def project(self):
        from assay.core.config import load_project

        return load_project(self.root)

    def artifact(self, name: str, data: bytes, *, isolated: bool = False, seed: int = 1234):
        """Run ``data`` through target ``name`` and write the finding as the engine would."""
        from assay.engine.execute import run_input
        from assay.engine.isolate import run_isolated
        from assay.harness.discovery import load_targets
        from assay.store.artifacts import Finding, build_metadata, load_artifact, write_artifact

        project = self.project()
        target = load_targets(project).get(name)
        verdict = run_isolated(target, data).verdict if isolated else run_input(target, data, timeout=target.timeout)
        assert verdict is not None, f"{name} did not fail on {data!r}"
        finding = Finding(
            target=name,
            verdict=verdict,
            input=data,
            original=data,
            determinism={"replays": 0, "reproduced": 0, "same_signature": None},
        )
        meta = build_metadata(finding, campaign_seed=seed, target_seed=seed + 1, sources=[str(self.targets_file)])
        path, _ = write_artifact(project.artifacts, finding, meta)
        return load_artifact(path)

    def module(self):
        """The imported target module (to reset the state a flaky target keeps)."""
        return sys.modules[self.stem]


def unique_stem(tmp_path: Path, prefix: str = "pt") -> str:
    return f"{prefix}_{re.sub(r'[^0-9A-Za-z_]', '_', tmp_path.name)}"


def promote_in_pytester(pytester, *args: str):
    """Run pytester's folder in-process with promotion on (through the main plugin when it can)."""
    if main_plugin_promotes():
        return pytester.runpytest("--assay-promote", *args)
    pytester.makeconftest(
        "from assay.promote.pytest_promote import PromotePlugin\n"
        "def pytest_configure(config):\n"
        "    config.pluginmanager.register(PromotePlugin(config), 'assay-promote')\n"
    )
    return pytester.runpytest(*child_pytest_args(), *args)


@pytest.fixture(autouse=True)
def isolated_registry():
    """Each test registers its targets in an empty process-wide registry.

    ``@assay.target`` refuses a second target of the same name from another file;
    tests here reuse names (``parse``) in their own temporary projects.
    """
    from assay.core.target import REGISTRY

    saved = dict(REGISTRY._targets)
    REGISTRY.clear()
    yield
    REGISTRY.clear()
    REGISTRY._targets.update(saved)


@pytest.fixture
def temp_project(tmp_path: Path) -> TempProject:
    """A fresh project whose target file has a name no other test uses."""
    return TempProject(tmp_path / "proj", unique_stem(tmp_path))
