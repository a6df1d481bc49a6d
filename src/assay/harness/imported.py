"""Default coverage sources: the packages a target module imports.

atheris asks the user to wrap imports in ``instrument_imports()``; assay decides the
same thing once, right after importing a target file: every top-level package that
the module's globals come from (``import pkg``, ``from pkg.sub import f``, an
instance of ``pkg.Parser``), except the standard library, test frameworks, assay
itself and helper modules living beside the harness.  When some of those packages
live in the project itself, only they are chosen (the others are its dependencies);
otherwise a third-party package with more than :data:`MAX_FILES` Python files is
left out with a notice, since watching and mining a framework slows every run.  A
target's own ``sources=`` always overrides this choice.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType

#: Top-level packages that are tools around the code under test, never the code under test.
NOT_UNDER_TEST = frozenset(
    {
        "assay",
        "hypothesis",
        "pytest",
        "_pytest",
        "pluggy",
        "atheris",
        "typing_extensions",
        "_hypothesis_globals",
        "_hypothesis_pytestplugin",
        "__main__",
        "builtins",
    }
)
#: Folders under the project root whose modules are tests or their helpers.
TEST_FOLDERS = ("tests", "test")
#: A third-party package with more Python files than this is not watched by default.
MAX_FILES = 150


def imported_packages(module: ModuleType, project_root: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """Sorted top-level package names whose Python code ``module`` uses, per the rules above."""
    own = module.__name__.partition(".")[0]
    harness_dir = Path(getattr(module, "__file__", "") or ".").resolve().parent
    root = Path(project_root).resolve() if project_root else None
    tops = set()
    for value in list(vars(module).values()):
        name = _module_of(value)
        if name:
            tops.add(name.partition(".")[0])
    found: dict[str, Path] = {}
    for top in sorted(tops - {own}):
        if top in NOT_UNDER_TEST or top in sys.stdlib_module_names:
            continue
        location = _python_location(sys.modules.get(top))
        if location is not None and not _is_beside_harness(location, harness_dir, root):
            found[top] = location
    local = [top for top, location in found.items() if _is_local(location, root)]
    if local:
        return tuple(local)
    chosen = []
    for top, location in found.items():
        if location.is_dir() and _more_files_than(location, MAX_FILES):
            from assay.core import notices

            notices.notify(
                f"{top} (over {MAX_FILES} Python files) is left out of the default coverage sources of "
                f"{module.__name__}'s targets, since watching all of it slows every run; name it with "
                f"--sources {top} or sources=[...] to watch it"
            )
            continue
        chosen.append(top)
    return tuple(chosen)


def _is_local(location: Path, root: Path | None) -> bool:
    """Under the project root and not installed there (a ``.venv`` inside the project is common)."""
    if root is None or not location.is_relative_to(root):
        return False
    installed = {"site-packages", "dist-packages"} & set(location.parts)
    return not installed and not location.is_relative_to(Path(sys.prefix).resolve())


def _more_files_than(folder: Path, limit: int) -> bool:
    count = 0
    for _, _, files in os.walk(folder):
        count += sum(name.endswith(".py") for name in files)
        if count > limit:
            return True
    return False


def _module_of(value: object) -> str | None:
    if isinstance(value, ModuleType):
        return value.__name__
    if isinstance(value, dict):  # __builtins__ and plain data
        return None
    name = getattr(value, "__module__", None) if isinstance(value, type) or callable(value) else None
    if not isinstance(name, str):
        name = getattr(type(value), "__module__", None)
    return name if isinstance(name, str) else None


def _python_location(mod: ModuleType | None) -> Path | None:
    """The package folder or module file holding Python code; ``None`` for C extensions and namespaces."""
    file = getattr(mod, "__file__", None)
    if not file:
        return None  # built-in, frozen, or a namespace package (no single home)
    path = Path(file).resolve()
    if path.suffix not in (".py", ".pyc"):
        return None  # an extension module: no Python code for sys.monitoring to see
    return path.parent if path.name.startswith("__init__.") else path


def _is_beside_harness(location: Path, harness_dir: Path, root: Path | None) -> bool:
    """Helpers in the harness's own folder, or anywhere under the project's tests, are not under test."""
    if root is not None:
        for folder in TEST_FOLDERS:
            if location.is_relative_to(root / folder):
                return True
    return harness_dir != root and location.is_relative_to(harness_dir)
