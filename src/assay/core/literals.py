"""Python source for values: the bytes literal of an input and the arguments of a test.

An emitted regression test carries its input inline, so the text written here must
evaluate back to an equal value in a fresh interpreter.  :func:`to_source` covers
the plain data types (numbers, text, bytes, containers); anything else raises
:class:`NotReplayable`, and the promoter quarantines the failure rather than guess.
"""

from __future__ import annotations

import ast
import math
from typing import Any

#: Width a line of a bytes literal may grow to before it is broken.
LINE_WIDTH = 72

#: Names (besides literals) that :func:`to_source` output may use.
SAFE_NAMES: dict[str, Any] = {
    "float": float,
    "complex": complex,
    "set": set,
    "frozenset": frozenset,
    "bytearray": bytearray,
}


class NotReplayable(ValueError):
    """A value that has no source form assay can write and read back."""


def _escape_byte(b: int) -> str:
    if b == 0x5C:
        return "\\\\"
    if b == 0x22:
        return '\\"'
    if b == 0x0A:
        return "\\n"
    if b == 0x0D:
        return "\\r"
    if b == 0x09:
        return "\\t"
    if 0x20 <= b < 0x7F:
        return chr(b)
    return f"\\x{b:02x}"


def bytes_lines(data: bytes, width: int = LINE_WIDTH) -> list[str]:
    """``data`` as one or more ``b"..."`` literals, broken after newlines and at ``width``."""
    lines: list[str] = []
    current = ""
    for b in data:
        piece = _escape_byte(b)
        if current and len(current) + len(piece) > width:
            lines.append(f'b"{current}"')
            current = ""
        current += piece
        if b == 0x0A:
            lines.append(f'b"{current}"')
            current = ""
    if current or not lines:
        lines.append(f'b"{current}"')
    return lines


def bytes_assignment(name: str, data: bytes) -> str:
    """``NAME = b"..."``, parenthesised over several lines when long."""
    lines = bytes_lines(data)
    if len(lines) == 1:
        return f"{name} = {lines[0]}\n"
    body = "".join(f"    {line}\n" for line in lines)
    return f"{name} = (\n{body})\n"


def _float_source(value: float) -> str:
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


def to_source(value: Any, _path: str = "value", _active: frozenset[int] = frozenset()) -> str:
    """Python source that evaluates (with builtins) to a value equal to ``value``.

    Only exact built-in data types are accepted; subclasses (named tuples, enums,
    ``bool`` aside) and arbitrary objects raise :class:`NotReplayable` naming where
    in the value the problem is.
    """
    kind = type(value)
    if value is None or kind in (bool, int, str, bytes):
        return repr(value)
    if kind is float:
        return _float_source(value)
    if kind is complex:  # repr loses signed zeros ((-0-0j) evaluates to -0j): spell both parts
        return f"complex({_float_source(value.real)}, {_float_source(value.imag)})"
    if kind is bytearray:
        return f"bytearray({bytes(value)!r})"
    if kind in (list, tuple, set, frozenset, dict):
        if id(value) in _active:
            raise NotReplayable(f"{_path} contains itself")
        active = _active | {id(value)}
        if kind is dict:
            items = [
                f"{to_source(k, f'{_path} key', active)}: {to_source(v, f'{_path}[{k!r}]', active)}"
                for k, v in value.items()
            ]
            return "{" + ", ".join(items) + "}"
        parts = [to_source(v, f"{_path}[{i}]", active) for i, v in enumerate(value)]
        if kind is list:
            return "[" + ", ".join(parts) + "]"
        if kind is tuple:
            return "(" + parts[0] + ",)" if len(parts) == 1 else "(" + ", ".join(parts) + ")"
        parts.sort()  # set order is not stable across runs; sorted text is
        inner = "{" + ", ".join(parts) + "}"
        if kind is set:
            return inner if parts else "set()"
        return f"frozenset({inner})" if parts else "frozenset()"
    raise NotReplayable(
        f"{_path} is a {kind.__module__}.{kind.__qualname__}, which has no literal form "
        "(only None, bool, int, float, complex, str, bytes, bytearray, list, tuple, set, "
        "frozenset and dict are written into regression tests)"
    )


def literal_problem(source: object) -> str | None:
    """None when ``source`` is text :func:`to_source` could have written, else what is wrong with it.

    Such text travels in artifacts' metadata (a falsifying example's arguments), which
    is untrusted data: only literals, their containers, unary signs and calls of
    :data:`SAFE_NAMES` with literal arguments pass; never an attribute, a subscript,
    another name or operator.
    """
    if not isinstance(source, str):
        return f"{type(source).__name__} instead of source text"
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "text that does not parse as a Python expression"
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, _LITERAL_NODES):
            continue
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            continue
        if isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Name):
            continue
        if isinstance(node, ast.Name) and node.id in SAFE_NAMES and id(node) in callees:
            continue
        return f"a {type(node).__name__} node, which is not part of a literal ({source[:60]!r})"
    return None


_LITERAL_NODES = (
    ast.Expression,
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.Load,
    ast.USub,
    ast.UAdd,
)


def evaluate(source: str) -> Any:
    """Evaluate text written by :func:`to_source` (no other names are available).

    Anything else (see :func:`literal_problem`) raises :class:`NotReplayable` unevaluated.
    """
    problem = literal_problem(source)
    if problem is not None:
        raise NotReplayable(f"not a literal: {problem}")
    return eval(source, {"__builtins__": {}, **SAFE_NAMES})  # noqa: S307 - checked to be a literal above


def same_value(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to itself (for round-trip checks)."""
    try:
        return to_source(a) == to_source(b)
    except NotReplayable:
        return False
