"""A project's public API as an importer sees it, read from source (nothing is imported).

The package's top module exports what its ``__all__`` names, else its public
top-level definitions and what it re-exports from its own submodules; each public
submodule (no ``_``-prefixed part) exports the same way.  A name is followed
through ``from .x import y`` (and ``y = x`` aliases) to the ``def`` that defines
it, so a function defined in a submodule and re-exported is found once, under the
shortest name an importer uses.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Folders inside a package that never hold its API.
NOT_API = frozenset({"tests", "test", "testing", "__pycache__", "benchmarks", "examples", "docs"})
#: How deep a name is followed through re-exports before giving up.
MAX_HOPS = 8

Node = ast.FunctionDef | ast.AsyncFunctionDef
_BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class Module:
    """One source module of the project."""

    name: str  # dotted import name
    path: Path
    tree: ast.Module
    is_package: bool  # an __init__.py


@dataclass(frozen=True)
class Binding:
    """What a name in a module stands for."""

    kind: str  # "function", "class", "module", "external" (outside the project) or "builtin"
    module: Module | None = None  # where a function or class is defined (the module itself for "module")
    node: ast.AST | None = None
    dotted: str = ""  # the import path: "pkg.mod.Name", "json.JSONDecodeError", "ValueError"


@dataclass(frozen=True)
class Function:
    """A public function of the project."""

    public: str  # how an importer calls it: "pkg.parse"
    module: Module  # where it is defined
    node: Node

    @property
    def name(self) -> str:
        return self.node.name


@dataclass
class Project:
    """The modules of one package (or single module), by dotted name."""

    package: str
    modules: dict[str, Module] = field(default_factory=dict)
    cache: dict[str, dict[str, str]] = field(default_factory=dict)  # derived tables, computed once
    memo: dict[tuple[str, int], Any] = field(default_factory=dict)  # per-node results (calls, raises, effects)
    _index: dict[str, dict[str, ast.stmt]] = field(default_factory=dict)
    _bindings: dict[tuple[str, str], Binding | None] = field(default_factory=dict)

    @classmethod
    def load(cls, package: str, source: Path) -> Project:
        """Read ``source`` (a package's ``__init__.py`` or a single module) and, for a package, every module under it."""
        project = cls(package)
        if source.name != "__init__.py":
            project._add(package, source, is_package=False)
            return project
        folder = source.parent
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("").parts
            if any(part in NOT_API or not part.isidentifier() for part in rel[:-1]):
                continue
            is_package = rel[-1] == "__init__"
            parts = rel[:-1] if is_package else rel
            if parts and not (folder.joinpath(*parts[:-1]) / "__init__.py").is_file() and len(parts) > 1:
                continue
            project._add(".".join((package, *parts)), path, is_package)
        return project

    def _add(self, name: str, path: Path, is_package: bool) -> None:
        try:
            tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            return
        self.modules[name] = Module(name, path, tree, is_package)

    # ------------------------------------------------------------------ names

    def binding(self, module: Module, name: str, hops: int = 0) -> Binding | None:
        """What ``name`` stands for at the top level of ``module`` (followed through imports)."""
        if hops > MAX_HOPS:
            return None
        key = (module.name, name)
        if key in self._bindings:
            return self._bindings[key]
        found = self._bind(module, name, hops)
        if found is not None or hops == 0:
            self._bindings[key] = found
        return found

    def _bind(self, module: Module, name: str, hops: int) -> Binding | None:
        stmt = self._statements(module).get(name)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return Binding("function", module, stmt, f"{module.name}.{name}")
        if isinstance(stmt, ast.ClassDef):
            return Binding("class", module, stmt, f"{module.name}.{name}")
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    return self._from_import(module, stmt, alias.name, hops)
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if (alias.asname or alias.name.split(".")[0]) == name:
                    target = alias.name if alias.asname else alias.name.split(".")[0]
                    own = self.modules.get(target)
                    return Binding("module", own, None, target) if own else Binding("external", dotted=target)
        if isinstance(stmt, ast.Assign):
            return self.expression(module, stmt.value, hops + 1)
        if name in _BUILTIN_NAMES:
            return Binding("builtin", dotted=name)
        return None

    def _statements(self, module: Module) -> dict[str, ast.stmt]:
        """Each name bound at the top level of ``module`` -> the first statement binding it."""
        index = self._index.get(module.name)
        if index is not None:
            return index
        index = {}
        for stmt in _top_level(module.tree):
            names: list[str] = []
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_overload(stmt):
                names = [stmt.name]
            elif isinstance(stmt, ast.ClassDef):
                names = [stmt.name]
            elif isinstance(stmt, ast.ImportFrom):
                names = [a.asname or a.name for a in stmt.names]
            elif isinstance(stmt, ast.Import):
                names = [a.asname or a.name.split(".")[0] for a in stmt.names]
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Name, ast.Attribute)):
                names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            for name in names:
                index.setdefault(name, stmt)
        self._index[module.name] = index
        return index

    def expression(self, module: Module, expr: ast.expr, hops: int = 0) -> Binding | None:
        """What a ``Name`` or dotted ``Attribute`` expression in ``module`` stands for."""
        if isinstance(expr, ast.Name):
            return self.binding(module, expr.id, hops)
        if isinstance(expr, ast.Attribute):
            base = self.expression(module, expr.value, hops)
            if base is None:
                return None
            if base.kind == "module" and base.module is not None:
                return self.binding(base.module, expr.attr, hops + 1) or self._submodule(base.module, expr.attr)
            if base.kind == "external":
                return Binding("external", dotted=f"{base.dotted}.{expr.attr}")
        return None

    def _from_import(self, module: Module, stmt: ast.ImportFrom, name: str, hops: int) -> Binding | None:
        source = _absolute(module, stmt)
        own = self.modules.get(source)
        if own is None:
            return Binding("external", dotted=f"{source}.{name}") if source else None
        return self.binding(own, name, hops + 1) or self._submodule(own, name)

    def _submodule(self, package: Module, name: str) -> Binding | None:
        sub = self.modules.get(f"{package.name}.{name}")
        return Binding("module", sub, None, sub.name) if sub else None

    # ------------------------------------------------------------------ the API

    def exports(self, module: Module) -> list[str]:
        """The names ``module`` exports: ``__all__``, else its public definitions and re-exports."""
        names = _dunder_all(module.tree)
        if names is not None:
            return names
        out: list[str] = []
        for stmt in _top_level(module.tree):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append(stmt.name)
            elif isinstance(stmt, ast.ImportFrom) and _absolute(module, stmt) in self.modules:
                out += [a.asname or a.name for a in stmt.names if a.name != "*"]
        return [n for n in dict.fromkeys(out) if not n.startswith("_")]

    def public_modules(self) -> list[Module]:
        """The top module first, then each submodule an importer reaches through it: one it imports or
        names in ``__all__`` (``from . import formats``), never a ``_`` one.  When the top module exports
        no function of its own, every public submodule is the API."""
        top = self.modules.get(self.package)
        if top is None:
            return []
        subs = [
            m
            for name, m in sorted(self.modules.items())
            if name != self.package and not any(p.startswith("_") for p in name.split(".")[1:])
        ]
        if not any(self._is_function(top, name) for name in self.exports(top)):
            return [top, *subs]
        return [top, *(m for m in subs if self._reached_from_top(m.name))]

    def _is_function(self, module: Module, name: str) -> bool:
        found = self.binding(module, name)
        return found is not None and found.kind == "function"

    def _reached_from_top(self, dotted: str) -> bool:
        parts = dotted.split(".")
        for i in range(1, len(parts)):
            parent = self.modules.get(".".join(parts[:i]))
            if parent is None:
                return False
            child = ".".join(parts[: i + 1])
            found = self.binding(parent, parts[i])
            if found is None:  # not bound by the parent: public only when its __all__ names it
                if parts[i] not in (_dunder_all(parent.tree) or []):
                    return False
            elif not (found.kind == "module" and found.dotted == child):
                return False  # the name is bound to something else (a function shadowing the submodule)
        return True

    def names(self) -> list[tuple[str, Binding | None]]:
        """Every exported name (``pkg.sub.name``) with what it stands for, each definition once."""
        seen: set[tuple[str, str]] = set()
        out: list[tuple[str, Binding | None]] = []
        for module in self.public_modules():
            for name in self.exports(module):
                found = self.binding(module, name)
                if found is not None and found.kind in ("function", "class") and found.module is not None:
                    key = (found.module.name, found.dotted)
                    if key in seen:
                        continue
                    seen.add(key)
                if found is not None and found.kind in ("module", "builtin"):
                    continue
                out.append((f"{module.name}.{name}", found))
        return out

    def functions(self) -> list[Function]:
        """The public functions (each definition once)."""
        return [
            Function(public, b.module, b.node)  # type: ignore[arg-type]
            for public, b in self.names()
            if b is not None and b.kind == "function" and b.module is not None
        ]


def _top_level(tree: ast.Module) -> list[ast.stmt]:
    """Top-level statements, with those inside ``if``/``try`` blocks (``try: from ._c import x``)."""
    out: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        stmt = todo.pop(0)
        if isinstance(stmt, ast.If):
            todo[:0] = stmt.body + stmt.orelse
        elif isinstance(stmt, ast.Try):
            todo[:0] = stmt.body + [s for h in stmt.handlers for s in h.body] + stmt.orelse
        else:
            out.append(stmt)
    return out


def _absolute(module: Module, stmt: ast.ImportFrom) -> str:
    """The absolute module name an ``ImportFrom`` reads from."""
    if not stmt.level:
        return stmt.module or ""
    parts = module.name.split(".")
    base = parts if module.is_package else parts[:-1]
    base = base[: len(base) - (stmt.level - 1)] if stmt.level > 1 else base
    return ".".join([*base, stmt.module] if stmt.module else base)


def _dunder_all(tree: ast.Module) -> list[str] | None:
    names: list[str] | None = None
    for stmt in _top_level(tree):
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                if isinstance(stmt.value, (ast.List, ast.Tuple)):
                    found = [
                        e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    ]
                    names = (names or []) + found if isinstance(stmt, ast.AugAssign) else found
    return names


def _is_overload(node: Node) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "overload") or (isinstance(d, ast.Attribute) and d.attr == "overload")
        for d in node.decorator_list
    )


#: Most functions followed from one entry point when looking for what it raises or does.
MAX_REACHED = 300


def reached(project: Project, module: Module, node: Node) -> list[tuple[Module, ast.AST]]:
    """``node`` and the project functions it calls, transitively (a called class brings its methods)."""
    key = ("reached", id(node))
    if key in project.memo:
        return project.memo[key]
    out: list[tuple[Module, ast.AST]] = []
    seen: set[int] = set()
    todo: list[tuple[Module, ast.AST]] = [(module, node)]
    while todo and len(out) < MAX_REACHED:
        mod, fn = todo.pop(0)
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append((mod, fn))
        todo += calls(project, mod, fn)
    project.memo[key] = out
    return out


def calls(project: Project, module: Module, node: ast.AST) -> list[tuple[Module, ast.AST]]:
    """The project functions ``node`` calls directly (a called class: its methods)."""
    key = ("calls", id(node))
    if key in project.memo:
        return project.memo[key]
    out: list[tuple[Module, ast.AST]] = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        found = project.expression(module, call.func)
        if found is None or found.module is None or found.node is None:
            continue
        if found.kind == "function":
            out.append((found.module, found.node))
        elif found.kind == "class":
            out += [
                (found.module, s)
                for s in found.node.body  # type: ignore[attr-defined]
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
    project.memo[key] = out
    return out
