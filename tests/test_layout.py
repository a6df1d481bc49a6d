"""The house's shape: packages only at the top, every package in the layers contract, the contract live.

``lint-imports`` (run by ``.ci/run``) checks the contract itself; these tests check that the
contract covers what it must, that it fails on a climbing import (so a green run means
something), and the rules it cannot express: no private names across modules, what
``import assay`` loads, and that no package reaches back into the package root.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "assay"
#: What may stand loose beside the packages.
LOOSE = {"__init__.py", "__main__.py", "pytest_plugin.py", "py.typed"}


def _packages() -> set[str]:
    return {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}


def _contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_package_folder_holds_packages_only() -> None:
    loose = {
        p.name
        for p in PACKAGE.iterdir()
        if p.is_file() and not p.name.endswith((".so", ".pyd")) and p.name not in LOOSE
    }
    assert not loose, f"modules loose beside the packages: {sorted(loose)}; move each into the package of its job"


def test_every_package_stands_in_the_layers_contract_once() -> None:
    (layers,) = [c for c in _contracts() if c["type"] == "layers"]
    assert layers["containers"] == ["assay"]
    named = [name.strip() for layer in layers["layers"] for name in layer.split("|")]
    assert sorted(named) == sorted(set(named)), "a package is named in two layers"
    assert set(named) == _packages(), "every package of src/assay is in exactly one layer, and no other name"


def test_every_package_says_which_layers_it_may_import() -> None:
    for name in sorted(_packages()):
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text())) or ""
        assert "Layer:" in doc, f"assay.{name}'s docstring has no 'Layer:' line saying what it may import"


def test_no_package_imports_the_package_root() -> None:
    """The root wires the layers together (it imports from them); a package importing it back would be a circle."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(a.name == "assay" for a in node.names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and node.module == "assay" and node.level == 0:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def test_import_assay_loads_neither_the_engine_nor_the_promoter() -> None:
    """``import assay`` (every target file does it) stays light: the registries are filled lazily."""
    code = "import sys, assay; print('\\n'.join(sorted(m for m in sys.modules if m.startswith('assay'))))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    ).stdout.split()
    heavy = [m for m in out if m.split(".")[1:2] and m.split(".")[1] in {"engine", "feedback", "http", "native"}]
    assert not heavy, heavy
    assert "assay.promote.from_fuzz" not in out and "assay.harness.discovery" not in out
    assert len(out) <= 25, out


@pytest.mark.skipif(
    shutil.which("lint-imports") is None and not (Path(sys.executable).parent / "lint-imports").exists(),
    reason="import-linter is not installed (it is in the dev extra)",
)
@pytest.mark.parametrize(
    ("where", "climb"),
    [
        ("core/errors.py", "def _climb():\n    from assay.cli import main\n"),  # inside a function, too
        ("engine/strays.py", "import assay.reports.campaign\n"),
        ("http/config.py", "from assay.compose import tree\n"),  # two peers
    ],
)
def test_the_layers_contract_breaks_on_a_climbing_import(tmp_path: Path, where: str, climb: str) -> None:
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    shutil.copytree(PACKAGE, tmp_path / "src" / "assay", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    kept = subprocess.run([lint, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert kept.returncode == 0, kept.stdout[-2000:]
    with open(tmp_path / "src" / "assay" / where, "a") as f:
        f.write("\n\n" + climb)
    broken = subprocess.run([lint, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert broken.returncode != 0 and "BROKEN" in broken.stdout, broken.stdout[-2000:]


def _module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of the module at ``path`` and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _is_submodule(dotted: str) -> bool:
    """Whether ``dotted`` names a module of the package: a ``.py`` file, a package or a C extension."""
    where = SRC.joinpath(*dotted.split("."))
    if where.with_suffix(".py").is_file() or (where / "__init__.py").is_file():
        return True
    # A C extension: built in place, or only its source in a fresh checkout.
    suffixes = [*importlib.machinery.EXTENSION_SUFFIXES, ".c"]
    return any(where.parent.joinpath(where.name + suffix).is_file() for suffix in suffixes)


def _imported_from(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def test_no_module_imports_another_modules_private_name():
    """A name another module imports is part of its module's interface, so it has a public name.

    Private submodules (the C extension ``assay.gen._cmutate``) and dunder names are allowed.
    """
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, is_package = _module_name(path)
        # ast.walk reaches function-local imports as well as module-level ones.
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _imported_from(node, module, is_package)
            if source != "assay" and not source.startswith("assay."):
                continue
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                    continue
                if _is_submodule(f"{source}.{name}"):
                    continue
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: from {source} import {name}")
    assert not found, "modules import another module's private name:\n" + "\n".join(found)
