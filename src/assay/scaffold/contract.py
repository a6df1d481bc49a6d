"""The exceptions a function promises for bad input: what a generated target lists in ``expected=``.

Three sources, each kept with a note saying where it came from: the classes the
function's code (and the project code it calls) raises, those its docstring names
(a ``Raises:`` section in Google or NumPy style, Sphinx ``:raises X:``, or a
built-in exception named in its text), and those it catches and re-raises.
Exceptions that mean a bug, never a rejection (``AssertionError``,
``RecursionError``, ...), are left out.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from dataclasses import dataclass

from assay.scaffold.api import Binding, Function, Module, Project, reached

#: Exception classes never listed as expected: they mean a bug (or an interrupt), not a rejection.
NEVER_EXPECTED = frozenset(
    {
        "AssertionError",
        "RecursionError",
        "MemoryError",
        "SystemExit",
        "KeyboardInterrupt",
        "BaseException",
        "SystemError",
    }
)
_BUILTIN_EXCEPTIONS = frozenset(
    n
    for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
)
_GOOGLE = re.compile(r"^\s*Raises\s*:\s*$", re.M)
_NUMPY = re.compile(r"^\s*Raises\s*\n\s*-{3,}\s*$", re.M)
_SPHINX = re.compile(r":(?:raises?|except|exception)\s+([\w.]+)\s*:")
_WORD = re.compile(r"\b([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Iteration))\b")


@dataclass(frozen=True)
class Expected:
    """One exception class a target expects."""

    dotted: str  # how the target names it: "ValueError", "pkg.errors.ParseError", "json.JSONDecodeError"
    import_from: str  # the module to import for it ("" for a built-in)
    note: str  # where it came from


def contract(project: Project, fn: Function) -> list[Expected]:
    """The exceptions ``fn`` promises, each once (the first source found is kept)."""
    found: dict[str, Expected] = {}
    public = public_classes(project)

    def add(binding: Binding | None, note: str) -> None:
        if binding is None:
            return
        name = binding.dotted
        if binding.kind == "builtin":
            if name not in _BUILTIN_EXCEPTIONS or name in NEVER_EXPECTED:
                return
            found.setdefault(name, Expected(name, "", note))
        elif binding.kind in ("class", "external") and "." in name:
            name = public.get(name, name) if binding.kind == "class" else name
            if name.rsplit(".", 1)[1] in NEVER_EXPECTED:
                return
            found.setdefault(name, Expected(name, name.rsplit(".", 1)[0], note))

    chain = reached(project, fn.module, fn.node)
    for module, node in chain:
        where = fn.public if node is fn.node else f"{module.name}.{getattr(node, 'name', '?')}"
        for name in docstring_raises(ast.get_docstring(node) or ""):  # type: ignore[arg-type]
            add(_lookup(project, module, name), f"named in {where}'s docstring")
    for module, node in chain:
        where = fn.public if node is fn.node else f"{module.name}.{getattr(node, 'name', '?')}"
        key = ("raises", id(node))
        if key not in project.memo:
            project.memo[key] = _raises(node, "{where}")
        for raised, note in project.memo[key]:
            add(project.expression(module, raised), note.replace("{where}", where))
    return list(found.values())


def public_classes(project: Project) -> dict[str, str]:
    """Where each class is defined -> the name an importer uses (``pkg._errors.E`` -> ``pkg.E``)."""
    cached = project.cache.get("public_classes")
    if cached is None:
        cached = {b.dotted: public for public, b in project.names() if b is not None and b.kind == "class"}
        project.cache["public_classes"] = cached
    return cached


def docstring_raises(doc: str) -> list[str]:
    """Exception names a docstring promises: its Raises section (Google, NumPy), Sphinx fields, built-ins in its text."""
    names: list[str] = []
    for pattern in (_GOOGLE, _NUMPY):
        match = pattern.search(doc)
        if match:
            section = doc[match.end() :].split("\n\n")[0]
            names += re.findall(r"^\s*([A-Za-z_][\w.]*)\s*(?::|$)", section, re.M)
    names += _SPHINX.findall(doc)
    names += [w for w in _WORD.findall(doc) if w in _BUILTIN_EXCEPTIONS]
    return list(dict.fromkeys(names))


def _lookup(project: Project, module: Module, name: str) -> Binding | None:
    """A docstring's exception name as the module sees it, else the project class of that name."""
    dotted = all(p.isidentifier() and not keyword.iskeyword(p) for p in name.split("."))
    expr = ast.parse(name, mode="eval").body if dotted else None
    found = project.expression(module, expr) if expr is not None else None
    if found is not None:
        return found
    short = name.rsplit(".", 1)[-1]
    classes = project.memo.get(("classes", 0))
    if classes is None:
        classes = {}
        for other in project.modules.values():
            for stmt in other.tree.body:
                if isinstance(stmt, ast.ClassDef):
                    classes.setdefault(stmt.name, project.binding(other, stmt.name))
        project.memo[("classes", 0)] = classes
    return classes.get(short)


def _raises(node: ast.AST, where: str) -> list[tuple[ast.expr, str]]:
    """(exception expression, note) for each ``raise X`` and each re-raised ``except X`` in ``node``."""
    out: list[tuple[ast.expr, str]] = []
    for handler in ast.walk(node):
        if isinstance(handler, ast.ExceptHandler) and handler.type is not None:
            reraises = any(
                isinstance(r, ast.Raise)
                and (r.exc is None or (isinstance(r.exc, ast.Name) and handler.name and r.exc.id == handler.name))
                for r in ast.walk(handler)
            )
            if reraises:
                types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                out += [(t, f"caught and re-raised in {where}") for t in types]
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            if isinstance(exc, (ast.Name, ast.Attribute)):
                out.append((exc, f"raised in {where}"))
    return out


def converts_errors(project: Project, fn: Function) -> str:
    """Where ``fn`` (or project code it calls) converts another error into its own, ``""`` when nowhere:
    an ``except X`` whose body raises a new exception.  Only then does a built-in exception escaping a
    library mean a broken promise (``expected_from="project"``)."""
    for module, node in reached(project, fn.module, fn.node):
        for handler in ast.walk(node):
            if isinstance(handler, ast.ExceptHandler) and handler.type is not None:
                for r in ast.walk(handler):
                    if (
                        isinstance(r, ast.Raise)
                        and r.exc is not None
                        and not (isinstance(r.exc, ast.Name) and r.exc.id == handler.name)
                    ):
                        name = fn.public if node is fn.node else f"{module.name}.{getattr(node, 'name', '?')}"
                        return f"{name} line {handler.lineno}"
    return ""
