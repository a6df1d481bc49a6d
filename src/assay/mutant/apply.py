"""Applying a mutant to live code, in memory: no file on disk is ever rewritten.

A mutant inside a function is applied by a ``__code__`` swap.  The *unit* (the
outermost function enclosing the edit that the module reaches by attribute: a
top-level function or a method) is compiled again from the mutated text, alone:
every line before it is blank except the headers of the classes around it, so
line numbers, the ``__class__`` cell and name mangling come out as in the real
module.  The new code object then replaces ``__code__`` on every live function
object made from the unit's definition (found once through the garbage collector,
so decorated functions, functions kept in registries and aliases all change).
Nested functions and lambdas inside the unit are constants of its code, so they
change with it.

A mutant outside any function (a module- or class-level ``NAME = value``) cannot
be reached by a code swap: its value was computed at import time, and what was
built from it then (``__slots__``, a pattern compiled from it, a default argument,
a table whose keys were copied from it) would not change.  Such a mutant, and one
inside a function that ran while the module was imported (``Mutant.reexec``), is
applied by *re-executing the module*: the whole mutated file runs again in the
module's own namespace, as an import would, and every function or class the
module defines that another loaded module bound by ``from module import NAME`` is
rebound there to its new version.  A mutated file that raises while it runs is a
module that would not import.  Only a mutant's forked child applies it this way
(the namespace is restored on revert, but objects built meanwhile stay).

*Module-level rebinding* (:meth:`Patch.build` with ``reexec=False``: only the
mutated assignment runs again in the module's or class's namespace) is the older,
cheaper mode; it changes nothing that was built from the value at import.
"""

from __future__ import annotations
import __future__

import ast
import functools
import gc
import os
import sys
import sysconfig
import textwrap
import types
from collections.abc import Iterable
from typing import Any

from assay.core.errors import AssayError
from assay.mutant.model import Mutant, apply_edit, edited_span

#: Future features whose compiler flags a unit inherits from its module.
_FUTURE_FLAGS = {name: getattr(__future__, name).compiler_flag for name in __future__.all_feature_names}


class MutantError(AssayError):
    """A mutant cannot be applied (its code does not compile or fit the live function)."""


class FunctionIndex:
    """Live function objects of some files, keyed by (file, qualname, first line).

    Built in one pass over the garbage collector's objects, after the code under
    test has been imported.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        wanted = {os.path.realpath(p) for p in paths}
        self._by_key: dict[tuple[str, str, int], list[types.FunctionType]] = {}
        real: dict[str, str] = {}
        for obj in gc.get_objects():
            if type(obj) is not types.FunctionType:
                continue
            code = obj.__code__
            filename = code.co_filename
            path = real.get(filename)
            if path is None:
                path = real[filename] = os.path.realpath(filename) if not filename.startswith("<") else filename
            if path in wanted:
                self._by_key.setdefault((path, code.co_qualname, code.co_firstlineno), []).append(obj)

    def functions(self, path: str, qualname: str, firstlineno: int) -> list[types.FunctionType]:
        return self._by_key.get((_realpath(path), qualname, firstlineno), [])

    def modules_of(self, path: str) -> list[types.ModuleType]:
        """Loaded modules whose file is ``path``."""
        real = _realpath(path)
        return [
            m
            for m in list(sys.modules.values())
            if isinstance(getattr(m, "__file__", None), str) and _realpath(m.__file__) == real
        ]


@functools.lru_cache(maxsize=4096)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


class Patch:
    """A compiled mutant, ready to be applied to and reverted from live code.

    Use :meth:`build`, then :meth:`apply` / :meth:`revert` (or ``with patch:``).
    Applying twice, or reverting without applying, does nothing.
    """

    def __init__(
        self,
        mutant: Mutant,
        swaps: list[tuple[types.FunctionType, types.CodeType]],
        rebind: tuple[types.CodeType, list[tuple[dict[str, Any], dict[str, Any] | type]], list[str]] | None,
        rerun: tuple[types.CodeType, list[types.ModuleType]] | None = None,
    ) -> None:
        self.mutant = mutant
        self._swaps = swaps  # (function, mutated code)
        self._originals = [fn.__code__ for fn, _ in swaps]
        self._rebind = rebind
        self._rerun = rerun  # (the whole mutated file, compiled; the modules it re-executes in)
        self._saved: list[dict[str, Any]] = []
        self._rebound: list[tuple[dict[str, Any], str, Any]] = []  # (namespace, name, old value)
        self.applied = False

    @property
    def reachable(self) -> bool:
        """False when nothing live would change (the unit was never imported)."""
        return bool(self._swaps) or bool(self._rebind and self._rebind[1]) or bool(self._rerun and self._rerun[1])

    @property
    def reexecutes(self) -> bool:
        """True when applying runs the whole (mutated) module again."""
        return self._rerun is not None

    @property
    def functions(self) -> list[types.FunctionType]:
        """The live functions whose code the patch swaps (none for a module-level rebinding)."""
        return [fn for fn, _ in self._swaps]

    @classmethod
    def build(
        cls,
        mutant: Mutant,
        text: str,
        index: FunctionIndex | None = None,
        *,
        reexec: bool | None = None,
        identity: bool = False,
    ) -> Patch:
        """Compile ``mutant`` against its file's ``text``; raise :class:`MutantError` if it cannot apply.

        ``reexec`` (default: for module-level mutants and ``mutant.reexec``) applies
        it by re-executing the module; ``identity`` re-executes the module
        *unchanged* (the control that shows re-execution alone changes nothing).
        """
        index = index or FunctionIndex([mutant.path])
        if reexec is None:
            reexec = not mutant.unit or mutant.reexec
        if reexec or identity:
            rerun = (
                _compile_module(mutant, text if identity else apply_edit(text, mutant.edit)),
                index.modules_of(mutant.path),
            )
            if identity or not mutant.unit:
                return cls(mutant, [], None, rerun)
            swapped = cls.build(mutant, text, index, reexec=False)
            return cls(mutant, swapped._swaps, None, rerun)
        if mutant.unit:
            flags = _future_flags(text)
            source = unit_source(mutant, text, mutated=True)
            code = _compile_unit(mutant, source, flags)
            # A decorated function's code starts at its first decorator: unit_line.
            funcs = index.functions(mutant.path, mutant.unit, mutant.unit_line)
            for fn in funcs:
                if fn.__code__.co_freevars != code.co_freevars:
                    if fn.__code__.co_freevars == ("__class__",) and not code.co_freevars:
                        code = _compile_unit(mutant, _keep_class_cell(mutant, source), flags)
                    if fn.__code__.co_freevars != code.co_freevars:
                        raise MutantError(f"{mutant.id}: the mutant changes the function's closure variables")
            return cls(mutant, [(fn, code) for fn in funcs], None)
        mutated = apply_edit(text, mutant.edit)
        stmt_code, names = _compile_assignment(mutant, mutated)
        return cls(mutant, [], (stmt_code, _namespaces(mutant, index), names))

    def apply(self) -> None:
        """Make the mutant live; an exception raised by the re-executed module propagates."""
        if self.applied:
            return
        for fn, code in self._swaps:
            fn.__code__ = code
        if self._rerun is not None:
            self.applied = True  # a module that raises half-way is restored by revert
            code, modules = self._rerun
            self._saved = [dict(m.__dict__) for m in modules]
            for module in modules:
                before = dict(module.__dict__)
                exec(code, module.__dict__)  # noqa: S102 - the user's own module, mutated
                self._rebind_copies(module, before)
        if self._rebind is not None:
            code, spaces, names = self._rebind
            self._saved = []
            for globals_, space in spaces:
                ns = space if isinstance(space, dict) else dict(vars(space))
                self._saved.append({n: ns[n] for n in names if n in ns})
                scratch = dict(ns)
                # Class bodies see the module's globals and the class namespace.
                exec(code, dict(globals_), scratch)  # noqa: S102 - the user's own assignment, mutated
                for n in names:
                    if isinstance(space, dict):
                        space[n] = scratch[n]
                    else:
                        setattr(space, n, scratch[n])
        self.applied = True

    def _rebind_copies(self, module: types.ModuleType, before: dict[str, Any]) -> None:
        """Where another loaded module bound one of this module's functions or classes by
        ``from module import NAME``, bind the re-executed module's version instead."""
        renewed: dict[int, Any] = {}
        for name, old in before.items():
            new = module.__dict__.get(name, old)
            if new is not old and isinstance(old, (types.FunctionType, type)):
                if getattr(old, "__module__", None) == module.__name__:
                    renewed[id(old)] = new
        if not renewed:
            return
        for other in _importers(module):
            space = other.__dict__
            for name in [n for n, v in space.items() if id(v) in renewed]:
                self._rebound.append((space, name, space[name]))
                space[name] = renewed[id(space[name])]

    def revert(self) -> None:
        if not self.applied:
            return
        for (fn, _), code in zip(self._swaps, self._originals):
            fn.__code__ = code
        if self._rerun is not None:
            for space, name, value in reversed(self._rebound):
                space[name] = value
            self._rebound = []
            for module, saved in zip(self._rerun[1], self._saved):
                module.__dict__.clear()
                module.__dict__.update(saved)
            self.applied = False
            return
        if self._rebind is not None:
            for (_, space), saved in zip(self._rebind[1], self._saved):
                for n, value in saved.items():
                    if isinstance(space, dict):
                        space[n] = value
                    else:
                        setattr(space, n, value)
        self.applied = False

    def __enter__(self) -> Patch:
        self.apply()
        return self

    def __exit__(self, *exc: object) -> None:
        self.revert()


#: Where installed code lives: modules there are not searched for names copied from a mutated module.
_INSTALLED = tuple(
    dict.fromkeys(
        os.path.realpath(path) + os.sep
        for vars_ in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
        for key, path in sysconfig.get_paths(vars=vars_).items()
        if key in ("stdlib", "platstdlib", "purelib", "platlib")
    )
)


def _importers(module: types.ModuleType) -> list[types.ModuleType]:
    """The loaded modules that may hold ``from module import NAME`` copies: the project's own
    modules and its tests, not the standard library, installed packages or assay.

    Reading every name of every loaded module would touch (and so copy, in a forked
    child) most of the parent's heap; the user's own modules are few.
    """
    top = module.__name__.partition(".")[0]
    out = []
    for other in list(sys.modules.values()):
        file = getattr(other, "__file__", None)
        if other is module or not isinstance(file, str) or not isinstance(getattr(other, "__dict__", None), dict):
            continue
        if _realpath(file).startswith(_INSTALLED) or "site-packages" in file or "dist-packages" in file:
            continue
        if other.__name__.partition(".")[0] == "assay" != top:
            continue
        out.append(other)
    return out


@functools.lru_cache(maxsize=32)
def _future_flags(text: str) -> int:
    flags = 0
    for line in _lines(text)[:200]:
        stripped = line.strip()
        if stripped.startswith("from __future__ import"):
            for name in stripped.split("import", 1)[1].replace("(", " ").replace(")", " ").split(","):
                flags |= _FUTURE_FLAGS.get(name.strip(), 0)
    return flags


@functools.lru_cache(maxsize=32)
def _lines(text: str) -> list[str]:
    """A file's lines, split once per file however many mutants it has (never mutate the list)."""
    return text.splitlines(keepends=True)


def unit_source(mutant: Mutant, text: str, mutated: bool = False) -> str:
    """The unit's lines of ``text`` (with the mutant's edit when ``mutated``), everything
    before them blank but the class headers, so every line keeps its number."""
    lines = _lines(text)
    out = ["\n"] * (mutant.unit_line - 1)
    for line, indent, name in mutant.wrappers:
        out[line - 1] = " " * indent + f"class {name}:\n"
    edit = mutant.edit
    if mutated:
        out.extend(lines[mutant.unit_line - 1 : edit.line - 1])
        out.append(edited_span(lines, edit))
        out.extend(lines[edit.end_line : mutant.unit_end_line])
    else:
        out.extend(lines[mutant.unit_line - 1 : mutant.unit_end_line])
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    return "".join(out)


def _compile_unit(mutant: Mutant, source: str, flags: int) -> types.CodeType:
    try:
        module_code = compile(source, mutant.path, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as exc:
        raise MutantError(
            f"{mutant.id}: the mutated function does not compile ({exc.msg}, line {exc.lineno})"
        ) from None
    found = _find_code(module_code, mutant.unit)
    if found is None:
        raise MutantError(f"{mutant.id}: no code object named {mutant.unit!r} in the compiled unit")
    return found


def _keep_class_cell(mutant: Mutant, source: str) -> str:
    """The unit's ``source`` with ``; __class__`` after the unit's last statement.

    A method whose mutant deletes its only ``super()`` call would lose the
    ``__class__`` cell, and a code object with fewer free variables cannot replace
    the live one.  An unreachable reference keeps the cell; no line moves.
    """
    tree = ast.parse(source)
    name = mutant.unit.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name == name
            and node.lineno >= mutant.unit_line
        ):
            lines = source.splitlines(keepends=True)
            raw = lines[node.end_lineno - 1].encode("utf-8")  # type: ignore[operator]  # parsed: positions set
            lines[node.end_lineno - 1] = (  # type: ignore[operator]
                raw[: node.end_col_offset] + b"; __class__" + raw[node.end_col_offset :]
            ).decode("utf-8")
            return "".join(lines)
    return source


def _find_code(code: types.CodeType, qualname: str) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            inner = _find_code(const, qualname)
            if inner is not None:
                return inner
    return None


def _compile_module(mutant: Mutant, source: str) -> types.CodeType:
    try:
        return compile(source, mutant.path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise MutantError(f"{mutant.id}: the mutated module does not compile ({exc.msg}, line {exc.lineno})") from None


def _compile_assignment(mutant: Mutant, mutated: str) -> tuple[types.CodeType, list[str]]:
    lines = mutated.splitlines(keepends=True)[mutant.unit_line - 1 : mutant.unit_end_line]
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise MutantError(f"{mutant.id}: the mutated assignment does not compile ({exc.msg})") from None
    names: list[str] = []
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        for t in targets:
            if not isinstance(t, ast.Name):
                raise MutantError(f"{mutant.id}: only NAME = value assignments can be rebound")
            names.append(t.id)
    ast.increment_lineno(tree, mutant.unit_line - 1)
    return compile(tree, mutant.path, "exec", flags=_future_flags(mutated), dont_inherit=True), names


def _namespaces(mutant: Mutant, index: FunctionIndex) -> list[tuple[dict[str, Any], dict[str, Any] | type]]:
    """Where a module- or class-level assignment lives: (module globals, module dict or class)."""
    spaces: list[tuple[dict[str, Any], dict[str, Any] | type]] = []
    for module in index.modules_of(mutant.path):
        if not mutant.wrappers:
            spaces.append((module.__dict__, module.__dict__))
            continue
        obj: Any = module
        for _, _, name in mutant.wrappers:
            obj = getattr(obj, name, None)
            if obj is None:
                break
        if isinstance(obj, type):
            spaces.append((module.__dict__, obj))
    return spaces
