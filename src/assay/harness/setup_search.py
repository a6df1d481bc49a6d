"""Finding an atheris harness's ``Setup`` call when importing the file does not make it.

Most OSS-Fuzz harnesses call ``atheris.Setup(sys.argv, callback)`` inside ``main()``,
which runs only under ``if __name__ == "__main__":``; importing such a file defines
the callback (under any name) but never says which it is.  :func:`setup_sites` reads
the file's syntax tree for ``Setup`` calls (``atheris.Setup``, ``import atheris as a``
then ``a.Setup``, or ``from atheris import Setup``); :func:`main_guard` compiles the
bodies of its ``__main__`` blocks, which discovery runs with the atheris stand-in so
the callback is whatever the harness really passes; :func:`resolve` reads a callback
named in the tree (a name or dotted name) from the module, for a harness whose
start-up code cannot run here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

_FLAG = re.compile(r"^-[a-z_]+=")


@dataclass(frozen=True)
class SetupSite:
    """One ``Setup(args, callback)`` call in a harness's source."""

    #: The callback argument as written, or ``None`` when the call passes none.
    callback: ast.expr | None
    #: The libFuzzer flags written literally in the argument list (``sys.argv + ["-max_len=64"]``).
    flags: tuple[str, ...]
    line: int


def read_tree(path: Path) -> ast.Module | None:
    """The syntax tree of the file at ``path``; ``None`` when it cannot be read or parsed."""
    try:
        return ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):
        return None


def setup_sites(tree: ast.Module) -> list[SetupSite]:
    """Every call of atheris' ``Setup`` anywhere in ``tree`` (module level, in functions, under guards)."""
    modules, functions = {"atheris"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "atheris"}
        elif isinstance(node, ast.ImportFrom) and node.module == "atheris":
            functions |= {a.asname or a.name for a in node.names if a.name == "Setup"}
    sites = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        by_module = (
            isinstance(func, ast.Attribute)
            and func.attr == "Setup"
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        )
        if not (by_module or (isinstance(func, ast.Name) and func.id in functions)):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        callback = node.args[1] if len(node.args) > 1 else keywords.get("test_one_input")
        args = node.args[0] if node.args else keywords.get("args")
        sites.append(SetupSite(callback, _literal_flags(args), node.lineno))
    return sites


def _literal_flags(expr: ast.expr | None) -> tuple[str, ...]:
    if expr is None:
        return ()
    words = [n.value for n in ast.walk(expr) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return tuple(w for w in words if _FLAG.match(w))


def main_guard(tree: ast.Module, filename: str) -> CodeType | None:
    """The bodies of the module's ``if __name__ == "__main__":`` blocks as one code object (``None``: none)."""
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            body.extend(node.body)
    if not body:
        return None
    return compile(ast.Module(body=body, type_ignores=[]), filename, "exec")


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


def resolve(expr: ast.expr | None, namespace: dict[str, Any]) -> Any:
    """The object a name or dotted name (``fuzz``, ``helpers.fuzz``) denotes in ``namespace``; ``None`` if not one."""
    attributes: list[str] = []
    while isinstance(expr, ast.Attribute):
        attributes.insert(0, expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name) or expr.id not in namespace:
        return None
    value = namespace[expr.id]
    for attribute in attributes:
        value = getattr(value, attribute, None)
    return value
