"""Finding native targets: ``[tool.assay.native.<name>]`` tables and module-level declarations.

A :class:`~assay.core.native_target.NativeTarget` assigned at module level in a file that
``[tool.assay] targets`` names (what :func:`assay.native_target` returns) is a native
target too.  Only target locations that exist are imported, so a project with native
targets alone needs no ``fuzz/`` folder.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from assay.core.config import Project
from assay.core.errors import NativeError
from assay.core.native_target import NativeTarget


def _python_locations(project: Project) -> list[Path]:
    found = []
    for entry in project.targets:
        path = Path(entry) if Path(entry).is_absolute() else project.root / entry
        if path.is_file() or (path.is_dir() and any(not p.name.startswith("_") for p in path.glob("*.py"))):
            found.append(path)
    return found


def has_python_targets(project: Project) -> bool:
    """Whether any ``[tool.assay] targets`` location exists (files, folders or module names)."""
    if _python_locations(project):
        return True
    for entry in project.targets:
        if "/" in entry or entry.endswith(".py"):
            continue
        try:
            if importlib.util.find_spec(entry) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False


def load_native_targets(project: Project) -> dict[str, NativeTarget]:
    """Every native target of ``project`` by name (pyproject tables first, then Python declarations)."""
    from assay.harness.discovery import import_entry

    targets: dict[str, NativeTarget] = dict(project.native)
    for location in _python_locations(project):
        for module in import_entry(project.root, str(location)):
            for value in list(vars(module).values()):
                if not isinstance(value, NativeTarget):
                    continue
                known = targets.get(value.name)
                if known is not None and known != value:
                    raise NativeError(
                        f"two native targets are named {value.name!r} ({known.defined_in or 'pyproject.toml'} and "
                        f"{getattr(module, '__file__', module.__name__)}); rename one"
                    )
                targets[value.name] = value
    return dict(sorted(targets.items()))
