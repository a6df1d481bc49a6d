"""The package's layout: rules about how its modules refer to each other."""

from __future__ import annotations

import ast
import importlib.machinery
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "assay"


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
