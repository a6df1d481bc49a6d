"""Finding targets: import the files and modules ``[tool.assay] targets`` names.

A target is any module-level object carrying an ``assay_target`` attribute that is
a :class:`~assay.target.Target` (what ``@assay.target`` sets).  Reading module
globals rather than a global registry makes discovery repeatable in one process.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from assay.config import Project
from assay.errors import TargetError
from assay.target import Registry, Target


def load_targets(project: Project) -> Registry:
    """Import every target location of ``project``; a registry of what they define."""
    registry = Registry()
    # A project declaring only [tool.assay.http] targets does not need the default fuzz/ folder.
    only_http = bool(project.raw.get("http")) and "targets" not in project.raw
    for entry in [] if only_http else project.targets:
        for module in _import_entry(project.root, entry):
            for tgt in targets_in(module):
                registry.add(tgt)
    if project.raw.get("http"):
        from assay.http.config import targets_from_config

        for tgt in targets_from_config(project.root, project.raw["http"]):
            registry.add(tgt)
    if not len(registry):
        where = ", ".join(project.targets)
        raise TargetError(
            f"no fuzz target found in {where} (under {project.root}); decorate a function taking bytes "
            "with @assay.target, or point [tool.assay] targets at the files that do"
        )
    return registry


def targets_in(module: ModuleType) -> list[Target]:
    found = []
    for value in list(vars(module).values()):
        tgt = getattr(value, "assay_target", None)
        if isinstance(tgt, Target):
            found.append(tgt)
    return found


def _import_entry(root: Path, entry: str) -> list[ModuleType]:
    path = (root / entry) if not Path(entry).is_absolute() else Path(entry)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            raise TargetError(f"target folder {path} holds no .py files; add target files or fix [tool.assay] targets")
        return [import_file(f) for f in files]
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise TargetError(f"target file {path} does not exist; fix [tool.assay] targets")
        return [import_file(path)]
    if "/" in entry:
        raise TargetError(f"target location {entry!r} does not exist under {root}; fix [tool.assay] targets")
    try:
        return [importlib.import_module(entry)]
    except Exception as exc:  # noqa: BLE001 - any import failure is a config error naming the module
        raise TargetError(_import_failure(f"module {entry!r}", exc)) from None


def import_file(path: Path) -> ModuleType:
    """Import a target file as a top-level module named after its stem."""
    path = path.resolve()
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None:
        if Path(getattr(existing, "__file__", "") or "").resolve() == path:
            return existing
        raise TargetError(
            f"target file {path} is named like the already imported module {name!r} "
            f"({getattr(existing, '__file__', 'built-in')}); rename the file"
        )
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import target file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001
        del sys.modules[name]
        raise TargetError(_import_failure(f"target file {path}", exc)) from None
    return module


def _import_failure(what: str, exc: BaseException) -> str:
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {last[0].filename}:{last[0].lineno})" if last else ""
    return f"{what} failed to import: {type(exc).__name__}: {exc}{where}; fix the error and run again"


def select(registry: Registry, names: list[str]) -> list[Target]:
    """The targets named (all if none named); an unknown name is an error."""
    if not names:
        return registry.all()
    return [registry.get(n) for n in dict.fromkeys(names)]
