"""Default coverage sources: the project's packages and the libraries its code calls into.

atheris asks the user to wrap imports in ``instrument_imports()``; assay decides the
same thing once, right after importing a target file, from what the import left in
the module globals (``import pkg``, ``from pkg.sub import f``, an instance of
``pkg.Parser``):

* every top-level package the target module uses that lives in the project (not
  installed, not a test helper): a *project package*;
* every third-party package the target module uses: *imported by the target*;
* every third-party package that a project package's modules use (the library a
  project's ``parse()`` wraps): *imported by* that package.  One step only: the
  library's own dependencies are not added, and a library that only runs them is
  named by the run's scope warning instead.

The standard library, test frameworks, assay itself and helper modules beside the
harness are never chosen, and neither is a package without Python code (a C
extension).  A package's size is no reason to leave it out: scope is decided once
per code object, so unexecuted modules cost nothing.  A target's own ``sources=``
(or ``--sources``) always overrides this choice.
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
#: Follow the project's packages into the libraries they use, and keep third-party packages the
#: target imports beside them.  Off: the scope before, the project's packages alone when there are
#: some (a project wrapping a library then fuzzed blind); kept so a test can show the difference.
FOLLOW_LIBRARIES = True
#: The reason of a package that lives in the project.
PROJECT_PACKAGE = "project package"
#: The reason of a third-party package the target module itself uses.
IMPORTED_BY_TARGET = "imported by the target"


def default_scope(module: ModuleType, project_root: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Top-level package name -> why it is watched, per the rules above (project packages first)."""
    own = module.__name__.partition(".")[0]
    harness_dir = Path(getattr(module, "__file__", "") or ".").resolve().parent
    root = Path(project_root).resolve() if project_root else None

    def candidates(tops: set[str]) -> dict[str, Path]:
        found = {}
        for top in sorted(tops - {own}):
            if top in NOT_UNDER_TEST or top in sys.stdlib_module_names:
                continue
            location = _python_location(sys.modules.get(top))
            if location is not None and not _is_beside_harness(location, harness_dir, root):
                found[top] = location
        return found

    direct = candidates(_tops_used(module))
    local = [top for top, location in direct.items() if _is_local(location, root)]
    if local and not FOLLOW_LIBRARIES:
        return dict.fromkeys(local, PROJECT_PACKAGE)
    chosen: dict[str, str] = {}
    pending = list(local)
    while pending:  # project packages and the project packages they use, breadth first
        top = pending.pop(0)
        if top in chosen:
            continue
        chosen[top] = PROJECT_PACKAGE
        for dep, location in candidates(_tops_used_by_package(top)).items():
            if dep in chosen or dep in pending:
                continue
            if _is_local(location, root):
                pending.append(dep)
            else:
                chosen.setdefault(dep, f"imported by {top}")
    for top in direct:
        if top not in chosen:
            chosen[top] = IMPORTED_BY_TARGET
    order = {PROJECT_PACKAGE: 0, IMPORTED_BY_TARGET: 1}
    return dict(sorted(chosen.items(), key=lambda item: (order.get(item[1], 2), item[0])))


def imported_packages(module: ModuleType, project_root: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """The names of :func:`default_scope`, in its order."""
    return tuple(default_scope(module, project_root))


def _tops_used(module: ModuleType) -> set[str]:
    tops = set()
    for value in list(vars(module).values()):
        name = _module_of(value)
        if name:
            tops.add(name.partition(".")[0])
    return tops


def _tops_used_by_package(top: str) -> set[str]:
    """Top-level packages used by any imported module of package ``top`` (itself left out)."""
    tops: set[str] = set()
    prefix = top + "."
    for name, mod in list(sys.modules.items()):
        if isinstance(mod, ModuleType) and (name == top or name.startswith(prefix)):
            tops |= _tops_used(mod)
    tops.discard(top)
    return tops


def _is_local(location: Path, root: Path | None) -> bool:
    """Under the project root and not installed there (a ``.venv`` inside the project is common)."""
    if root is None or not location.is_relative_to(root):
        return False
    installed = {"site-packages", "dist-packages"} & set(location.parts)
    return not installed and not location.is_relative_to(Path(sys.prefix).resolve())


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
