"""Finding targets: import the files and modules ``[tool.assay] targets`` names.

A target is any module-level object carrying an ``assay_target`` attribute that is
a :class:`~assay.core.target.Target` (what ``@assay.target`` sets), any target that
importing the module registered without binding it to a module name, and, in a
module with none of those, an atheris harness's ``atheris.Setup`` callback or its
``TestOneInput`` (named ``file:function``).  Reading module globals (plus what
was recorded on the module at import) rather than a global registry makes
discovery repeatable in one process.  Files are imported with the project root
importable, ``sys.argv`` as ``python harness.py`` sets it, and
:mod:`assay.harness.atheris_shim` standing in for ``atheris``.

A harness that calls ``Setup`` only from its ``if __name__ == "__main__":`` block
(usually through ``main()``) has that block run after the import, with the same
stand-in, so its callback is found under whatever name it has; when the block
cannot run here, the callback named in the ``Setup`` call is read from the module
(:mod:`assay.harness.setup_search`).  A module with Hypothesis ``@given`` tests keeps
them as its targets instead, since fetching ``fuzz_one_input`` early would bypass
assay's wrapping of the test.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from assay.core import notices
from assay.core.config import Project
from assay.core.errors import TargetError
from assay.core.target import REGISTRY, Registry, Target
from assay.harness.atheris_shim import FuzzCalled, SetupCall, active
from assay.harness.define import make_target
from assay.harness.given import is_given_test
from assay.harness.libfuzzer_flags import harness_settings
from assay.harness.setup_search import main_guard, read_tree, resolve, setup_sites
from assay.harness.tables import TABLE_LOADERS

#: Module attributes where discovery keeps what it learned while importing a file.
_REGISTERED, _SETUP, _IMPORTS = "__assay_registered__", "__assay_setup_callbacks__", "__assay_imports__"
#: The function name atheris and libFuzzer harnesses use for their entry point.
ENTRY_POINT = "TestOneInput"


def load_targets(project: Project) -> Registry:
    """Import every target location of ``project``; a registry of what they define."""
    registry = Registry()
    make_importable(project.root)
    # A project declaring only table targets ([tool.assay.http]) does not need the default fuzz/ folder.
    tables = [table for table in TABLE_LOADERS if project.raw.get(table)]
    only_tables = bool(tables) and "targets" not in project.raw
    if not only_tables and "targets" not in project.raw and not (project.root / "fuzz").exists():
        where = (
            f"no fuzz/ folder in {project.root}, where targets are looked for by default "
            "([tool.assay] targets = ['fuzz'])"
            if (project.root / "pyproject.toml").is_file()
            else f"no pyproject.toml in {project.root} or any folder above it, and no fuzz/ folder here "
            "(the default of [tool.assay] targets = ['fuzz'])"
        )
        raise TargetError(
            f"{where}: run `assay init` in your project to create fuzz/ with an example target "
            "(or pass --project DIR), or name a harness file: `assay fuzz path/to/harness.py`"
        )
    for entry in [] if only_tables else project.targets:
        for module in import_entry(project.root, entry):
            for tgt in targets_in(module):
                registry.add(tgt)
    for table in tables:
        for tgt in TABLE_LOADERS[table](project.root, project.raw[table]):
            registry.add(tgt)
    if not len(registry):
        where = ", ".join(project.targets)
        raise TargetError(
            f"no fuzz target found in {where} (under {project.root}); decorate a function taking bytes "
            "with @assay.target (an atheris TestOneInput(data) works too), or point [tool.assay] targets at "
            "the files that do"
        )
    return registry


def make_importable(root: Path) -> None:
    """Put the project root (and its ``src/``) on ``sys.path``, as pytest's rootdir ``pythonpath`` does."""
    for folder in (root / "src", root):
        if folder.is_dir() and str(folder) not in sys.path:
            sys.path.insert(0, str(folder))


def targets_in(module: ModuleType) -> list[Target]:
    """The targets ``module`` defines (see the module docstring for what counts)."""
    found: list[Target] = []
    for value in list(vars(module).values()):
        tgt = getattr(value, "assay_target", None)
        if isinstance(tgt, Target) and tgt not in found:
            found.append(tgt)
    found += [t for t in getattr(module, _REGISTERED, ()) if t not in found]
    if not found:
        found = harness_targets(module)
    imports: dict[str, str] = getattr(module, _IMPORTS, {})
    for tgt in found:
        if not tgt.sources and not tgt.implied_sources:
            tgt.implied_sources, tgt.scope_reasons = tuple(imports), dict(imports)
    return found


def harness_targets(module: ModuleType) -> list[Target]:
    """An atheris harness's entry points: its ``Setup`` callbacks, else its ``TestOneInput``."""
    cached = module.__dict__.get("__assay_harness_targets__")
    if cached is not None:
        return list(cached)
    stem = module.__name__.rpartition(".")[2]
    calls: list[SetupCall] = list(getattr(module, _SETUP, ()))
    entry = getattr(module, ENTRY_POINT, None)
    if not calls and callable(entry):
        calls = [SetupCall(entry, ())]
    harness_dir = Path(getattr(module, "__file__", None) or ".").resolve().parent
    first_args: dict = {}
    for call in calls:
        first_args.setdefault(call.callback, call.args)
    made = []
    for fn, args in first_args.items():
        name = getattr(fn, "__name__", "")
        settings = harness_settings(args, harness_dir, notices.notify)
        made.append(make_target(fn, name=f"{stem}:{name if name.isidentifier() else ENTRY_POINT}", **settings))
    module.__assay_harness_targets__ = made  # type: ignore[attr-defined]  # a marker on the harness module
    return list(made)


def import_entry(root: Path, entry: str) -> list[ModuleType]:
    make_importable(root)
    path = (root / entry) if not Path(entry).is_absolute() else Path(entry)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            raise TargetError(f"target folder {path} holds no .py files; add target files or fix [tool.assay] targets")
        return [import_file(f, root) for f in files]
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise TargetError(f"target file {path} does not exist; fix [tool.assay] targets")
        return [import_file(path, root)]
    if "/" in entry:
        raise TargetError(f"target location {entry!r} does not exist under {root}; fix [tool.assay] targets")
    with _Recording() as registered, active() as calls:
        try:
            module = importlib.import_module(entry)
        except FuzzCalled:  # importlib drops a module whose import raised: its file can be named instead
            raise TargetError(
                f"module {entry!r} calls atheris.Fuzz() while it is imported; list its file "
                "in [tool.assay] targets instead of its module name"
            ) from None
        except ModuleNotFoundError as exc:
            if exc.name == entry.partition(".")[0]:
                raise TargetError(
                    f"target location {entry!r} is neither a file or folder under {root} nor an "
                    "importable module; fix [tool.assay] targets"
                ) from None
            raise TargetError(_import_failure(f"module {entry!r}", exc)) from None
        except Exception as exc:  # noqa: BLE001 - any import failure is a config error naming the module
            raise TargetError(_import_failure(f"module {entry!r}", exc)) from None
    file = getattr(module, "__file__", None)
    if not calls and not registered and file:
        calls = _main_guard_calls(module, Path(file))
    _record(module, registered, calls, root)
    return [module]


def import_file(path: Path, project_root: Path | None = None) -> ModuleType:
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
    with _argv_of(path), _Recording() as registered, active() as calls:
        try:
            spec.loader.exec_module(module)
        except FuzzCalled:
            pass  # a harness calling atheris.Fuzz() at module level: everything before it has run
        except SystemExit as exc:
            del sys.modules[name]
            raise TargetError(
                f"target file {path} exited (sys.exit({exc.code!r})) while it was imported; put its "
                'start-up code under `if __name__ == "__main__":`'
            ) from None
        except Exception as exc:  # noqa: BLE001
            del sys.modules[name]
            raise TargetError(_import_failure(f"target file {path}", exc)) from None
    if not calls and not registered:
        calls = _main_guard_calls(module, path)
    _record(module, registered, calls, project_root)
    return module


@contextlib.contextmanager
def _argv_of(path: Path) -> Iterator[None]:
    """``sys.argv`` as ``python path`` sets it: assay's own options are not the harness's."""
    saved = sys.argv
    sys.argv = [str(path)]
    try:
        yield
    finally:
        sys.argv = saved


def _main_guard_calls(module: ModuleType, path: Path) -> list[SetupCall]:
    """The ``Setup`` calls of a harness that makes them only from its ``__main__`` block (module docstring)."""
    tree = read_tree(path)
    sites = setup_sites(tree) if tree is not None else []
    namespace = vars(module)
    if tree is None or not sites or any(is_given_test(v) for v in list(namespace.values())):
        return []
    if any(isinstance(getattr(v, "assay_target", None), Target) for v in list(namespace.values())):
        return []
    failure = ""
    code = main_guard(tree, str(path))
    if code is not None:
        with _argv_of(path), active() as calls:
            try:
                exec(code, namespace)  # noqa: S102 - the harness's own start-up code, as `python harness.py` runs it
            except FuzzCalled:
                pass
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure falls back to reading the source
                failure = f"{type(exc).__name__}: {exc}"
        if calls:
            return calls
    found = [SetupCall(fn, site.flags) for site in sites if callable(fn := resolve(site.callback, namespace))]
    if not found and failure and not callable(namespace.get(ENTRY_POINT)):
        notices.notify(
            f'{path}: its `if __name__ == "__main__":` block, run to find the atheris.Setup callback, failed '
            f"({failure}), and the callback it names is not a module-level function; name one with "
            f"{path.name}::FUNCTION"
        )
    return found


class _Recording:
    """Collects the targets registered with ``@assay.target`` while a module is imported."""

    def __enter__(self) -> list[Target]:
        self._before = {id(t) for t in REGISTRY.all()}
        self.added: list[Target] = []
        return self.added

    def __exit__(self, *exc: object) -> None:
        self.added.extend(t for t in REGISTRY.all() if id(t) not in self._before)


def _record(module: ModuleType, registered: list[Target], calls: list[SetupCall], project_root: Path | None) -> None:
    """Keep on the module what its import did: unbound targets, Setup callbacks, imported packages."""
    from assay.harness.imported import default_scope

    if hasattr(module, _IMPORTS):
        return  # imported before: the first import's record stands
    bound = {id(getattr(v, "assay_target", None)) for v in list(vars(module).values())}
    setattr(module, _REGISTERED, [t for t in registered if id(t) not in bound])
    setattr(module, _SETUP, list(calls))
    setattr(module, _IMPORTS, default_scope(module, project_root))


def _import_failure(what: str, exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f" (at {exc.filename}:{exc.lineno})"
    else:
        where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    hint = "fix the error and run again"
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        hint = (
            f"install {exc.name.partition('.')[0]!r} into the Python that runs assay ({sys.executable}), "
            "or fix the import"
        )
    return f"{what} failed to import: {type(exc).__name__}: {exc}{where}; {hint}"


def select(registry: Registry, names: list[str]) -> list[Target]:
    """The targets named (all if none named); an unknown name is an error."""
    if not names:
        return registry.all()
    return [registry.get(n) for n in dict.fromkeys(names)]
