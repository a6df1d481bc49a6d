"""Finding the mutants of a project: files to mutate, functions, and their edits.

Every function (and method, and nested function) gets the operators' edits of
its own body; module- and class-level ``NAME = value`` assignments get the edits
that module-level rebinding can apply.  A line holding ``# assay: no mutate``
(or mutmut's ``# pragma: no mutate``) is never mutated; on a ``def`` line or a
decorator line it excludes the whole function, nested functions included.
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError
from assay.mutant.model import MODULE_SCOPE, Edit, Mutant, function_digest

#: Comments that exclude a line (or, on a ``def``, a whole function) from mutation.
PRAGMAS = ("# assay: no mutate", "# pragma: no mutate")
#: Folders never searched for code to mutate.
SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "env",
    ".tox",
    ".nox",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
    ".assay",
    ".mypy_cache",
    ".pytest_cache",
    "site-packages",
    "mutants",
}
#: What ``[tool.assay.mutant] exclude`` is when the project does not set it: test folders.
#: (Test files, ``test_*.py``, ``*_test.py`` and ``conftest.py``, are never mutated wherever they are.)
DEFAULT_EXCLUDE = ("tests", "test")
#: Keys ``[tool.assay.mutant]`` accepts.
SETTINGS = ("exclude",)

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def is_test_file(path: Path) -> bool:
    name = path.name
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or name == "setup.py"


def exclude_setting(raw: dict[str, Any], where: str = "pyproject.toml") -> list[str]:
    """``[tool.assay.mutant] exclude`` (``raw`` is ``[tool.assay]``), or :data:`DEFAULT_EXCLUDE` when unset."""
    table = raw.get("mutant", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.assay.mutant] must be a table, not {table!r}")
    unknown = sorted(set(table) - set(SETTINGS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} in [tool.assay.mutant]; known keys: {', '.join(SETTINGS)}"
        )
    value = table.get("exclude", list(DEFAULT_EXCLUDE))
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(
            f"{where}: [tool.assay.mutant] exclude must be a list of paths or glob patterns, not {value!r}"
        )
    return value


def excluded(relpath: str, patterns: Iterable[str]) -> bool:
    """Whether a file or folder (``relpath``: relative to the project, with ``/``) matches an exclude pattern.

    A pattern matches the whole relative path (``src/pkg/_vendor``, ``*/generated_*.py``),
    any one of its names (``tests``, ``*_pb2.py``), or a folder above it (``src/pkg/_vendor/``).
    """
    parts = relpath.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        pattern = pattern.strip("/") or pattern
        if any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
            return True
        if "/" not in pattern and any(fnmatch.fnmatchcase(part, pattern) for part in parts):
            return True
    return False


def files_to_mutate(
    root: Path,
    entries: Iterable[str],
    harness_folders: Iterable[str] = (),
    exclude: Iterable[str] = DEFAULT_EXCLUDE,
) -> list[Path]:
    """Resolve ``--paths`` / ``[tool.assay] mutate`` entries (files or folders) to Python files.

    With no entries: ``src/`` when it exists, else every ``*.py`` file of the project
    outside the fuzz targets' folders (``harness_folders``, ``[tool.assay] targets``:
    harnesses are test code, as tests are), virtual environments and build folders.
    Files and folders matching an ``exclude`` pattern (:func:`excluded`; by default
    the test folders) are left out of a folder's files; a file named on purpose is not.
    """
    entries = list(entries)
    exclude = list(exclude)
    named = bool(entries)
    skipped: set[Path] = set()
    if not entries:
        entries = ["src"] if (root / "src").is_dir() else ["."]
        skipped = {(root / h).resolve() for h in harness_folders if (root / h).is_dir()}
    files: list[Path] = []
    for entry in entries:
        path = Path(entry) if os.path.isabs(entry) else root / entry
        if not path.exists():
            raise ConfigError(
                f"path to mutate {entry!r} does not exist (looked at {path}); fix --paths or [tool.assay] mutate"
            )
        if path.is_file():
            if path.suffix != ".py":
                raise ConfigError(f"path to mutate {entry!r} is not a Python file")
            files.append(path.resolve())
            continue
        # A folder named on purpose is mutated even where a pattern would exclude it.
        patterns = [] if named and excluded(_relative(path, root), exclude) else exclude
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in SKIP_DIRS
                and not d.startswith(".")
                and (Path(dirpath) / d).resolve() not in skipped
                and not excluded(_relative(Path(dirpath) / d, root), patterns)
            )
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if name.endswith(".py") and not is_test_file(p) and not excluded(_relative(p, root), patterns):
                    files.append(p.resolve())
    unique = sorted(set(files))
    if not unique:
        raise ConfigError(
            f"no Python file to mutate under {', '.join(entries)} (excluded: {', '.join(exclude) or 'nothing'}); "
            "pass --paths, or set [tool.assay] mutate or [tool.assay.mutant] exclude"
        )
    return unique


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


@dataclass
class _Unit:
    qualname: str
    line: int
    end_line: int
    wrappers: tuple[tuple[int, int, str], ...]


def make_resolver(namespace: dict[str, Any] | None) -> Callable[[ast.expr], object | None]:
    """Resolve a callee expression (``name`` or ``a.b.c``) in a live module namespace."""

    def resolve(node: ast.expr) -> object | None:
        if namespace is None:
            return None
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        sentinel = object()
        obj = namespace.get(node.id, sentinel)
        if obj is sentinel:
            obj = getattr(builtins, node.id, None)
        for attr in reversed(parts):
            if obj is None:
                return None
            try:
                obj = getattr(obj, attr, None)
            except Exception:  # a property of the user's code may raise anything
                return None
        return obj

    return resolve


def mutants_in_file(
    path: Path, root: Path, namespace: dict[str, Any] | None = None, text: str | None = None
) -> list[Mutant]:
    """Every mutant of one file, in source order, with stable ids."""
    from assay.mutant.operators import OperatorContext, edits_in
    from assay.mutant.operators_control import source_lines

    text = path.read_text("utf-8") if text is None else text
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise ConfigError(
            f"{path} does not parse ({exc.msg}, line {exc.lineno}); fix it or leave it out of --paths"
        ) from None
    lines = text.splitlines()
    excluded = {i + 1 for i, line in enumerate(lines) if any(p in line for p in PRAGMAS)}
    try:
        relpath = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relpath = path.resolve().as_posix()
    resolve = make_resolver(namespace)
    written = source_lines(text)
    out: list[Mutant] = []

    def emit(edits: list[Edit], qualname: str, digest: str, unit: _Unit) -> None:
        counters: dict[str, int] = {}
        for edit in edits:
            if any(line in excluded for line in range(edit.line, edit.end_line + 1)):
                continue
            k = counters.get(edit.operator, 0)
            counters[edit.operator] = k + 1
            out.append(
                Mutant(
                    path=str(path.resolve()),
                    relpath=relpath,
                    qualname=qualname,
                    operator=edit.operator,
                    index=k,
                    digest=digest,
                    edit=edit,
                    unit=unit.qualname,
                    unit_line=unit.line,
                    unit_end_line=unit.end_line,
                    wrappers=unit.wrappers,
                )
            )

    def span_text(node: ast.AST) -> str:
        return "\n".join(lines[_first_line(node) - 1 : node.end_lineno])  # type: ignore[attr-defined]

    def visit_function(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, unit: _Unit) -> None:
        if any(line in excluded for line in range(_first_line(node), node.body[0].lineno)):
            return
        body = node.body
        emit(
            edits_in(body, OperatorContext(resolve=resolve, in_function=True, source=written)),
            qualname,
            function_digest(span_text(node)),
            unit,
        )
        for child in _nested_defs(body):
            visit_nested(child, f"{qualname}.<locals>", unit)

    def visit_nested(node: ast.AST, prefix: str, unit: _Unit) -> None:
        if isinstance(node, _FUNCS):
            visit_function(node, f"{prefix}.{node.name}", unit)
        elif isinstance(node, ast.ClassDef):
            for child in _nested_defs(node.body):
                visit_nested(child, f"{prefix}.{node.name}", unit)

    def visit_scope(body: list[ast.stmt], prefix: str, wrappers: tuple[tuple[int, int, str], ...]) -> None:
        for stmt in body:
            if isinstance(stmt, _FUNCS):
                qualname = f"{prefix}{stmt.name}"
                unit = _Unit(qualname, _first_line(stmt), stmt.end_lineno or stmt.lineno, wrappers)
                visit_function(stmt, qualname, unit)
            elif isinstance(stmt, ast.ClassDef):
                if stmt.lineno in excluded:
                    continue
                visit_scope(stmt.body, f"{prefix}{stmt.name}.", (*wrappers, (stmt.lineno, stmt.col_offset, stmt.name)))
            elif _rebindable(stmt):
                unit = _Unit("", stmt.lineno, stmt.end_lineno or stmt.lineno, wrappers)
                scope = prefix[:-1] or MODULE_SCOPE
                edits = edits_in([stmt], OperatorContext(resolve=resolve, in_function=False, source=written))
                emit(edits, scope, function_digest(span_text(stmt)), unit)

    visit_scope(tree.body, "", ())
    _number_module_scope(out)
    return out


def _number_module_scope(mutants: list[Mutant]) -> None:
    """Module-level edits come one assignment at a time; number them per scope, not per statement."""
    counters: dict[tuple[str, str], int] = {}
    for i, m in enumerate(mutants):
        if m.unit:
            continue
        key = (m.qualname, m.operator)
        k = counters.get(key, 0)
        counters[key] = k + 1
        mutants[i] = Mutant(**{**m.__dict__, "index": k})


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])  # type: ignore[attr-defined]


def _nested_defs(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Function and class definitions anywhere inside ``body``, not inside each other."""
    stack: list[ast.stmt | ast.excepthandler | ast.match_case] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCS, ast.ClassDef)):
            yield node
            continue
        children = [
            c for c in ast.iter_child_nodes(node) if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))
        ]
        stack.extend(reversed(children))


def _rebindable(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets)
    return isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None
