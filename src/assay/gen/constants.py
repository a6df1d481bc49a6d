"""Dictionary tokens harvested from the target's source code.

Literal bytes, strings and small integers in the code under test are the values
its comparisons are most likely to want (as libFuzzer's ``-dict`` files and
HypoFuzz's literal mining exploit).  Constants that appear as comparison operands,
or as arguments of ``startswith``-like calls, come first; the total is bounded.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from functools import lru_cache

#: Most harvested tokens per target.
MAX_HARVESTED = 256
#: Longest literal kept as a token.
MAX_TOKEN_LEN = 64
#: Most source files read per target (a whole package can be large).
MAX_FILES = 400

_MATCHERS = {
    "startswith",
    "endswith",
    "find",
    "rfind",
    "index",
    "rindex",
    "split",
    "rsplit",
    "partition",
    "rpartition",
    "count",
    "replace",
    "strip",
    "lstrip",
    "rstrip",
    "get",
    "pop",
}


def _tokens_of(value: object) -> list[bytes]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, bytes):
        return [value] if 0 < len(value) <= MAX_TOKEN_LEN else []
    if isinstance(value, str):
        raw = value.encode("utf-8", "surrogatepass")
        return [raw] if 0 < len(raw) <= MAX_TOKEN_LEN else []
    if isinstance(value, int):
        out = [str(value).encode()]
        if 0 <= value <= 0xFF:
            out.append(bytes([value]))
        elif 0 <= value <= 0xFFFFFFFF:
            width = 2 if value <= 0xFFFF else 4
            out += [value.to_bytes(width, "little"), value.to_bytes(width, "big")]
        return out
    return []


@lru_cache(maxsize=1024)
def _file_constants(path: str, mtime: float) -> tuple[tuple[int, bytes], ...]:  # noqa: ARG001 - cache key
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return ()
    found: dict[bytes, int] = {}

    def add(node: ast.AST, priority: int) -> None:
        if isinstance(node, ast.Constant):
            for tok in _tokens_of(node.value):
                found[tok] = min(priority, found.get(tok, priority))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for elt in node.elts:
                add(elt, priority)

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                add(operand, 0)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MATCHERS:
            for arg in node.args:
                add(arg, 0)
        elif isinstance(node, ast.Subscript):
            add(node.slice, 1)
        elif (
            isinstance(node, ast.Constant)
            and not isinstance(node.value, str)
            or (isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 24)
        ):
            add(node, 2)
    return tuple(sorted((p, t) for t, p in found.items()))


def _python_files(paths: Iterable[str]) -> list[str]:
    files: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for folder, dirs, names in os.walk(p):
                dirs.sort()
                files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
        elif p.endswith(".py"):
            files.append(p)
    return files[:MAX_FILES]


def harvest(paths: Iterable[str], limit: int = MAX_HARVESTED) -> list[bytes]:
    """Tokens from the literals in ``paths`` (files or folders), best first, at most ``limit``."""
    ranked: dict[bytes, int] = {}
    for path in _python_files(paths):
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            continue
        for priority, tok in _file_constants(path, mtime):
            ranked[tok] = min(priority, ranked.get(tok, priority))
    ordered = sorted(ranked, key=lambda t: (ranked[t], len(t), t))
    return ordered[:limit]
