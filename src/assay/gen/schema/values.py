"""JSON values as JSON Schema sees them: types, equality, regex search, instance paths."""

from __future__ import annotations

import re
from typing import Any

from assay.gen.schema.model import Unsatisfiable


def is_type(value: Any, name: str, draft: int) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "number":
        return isinstance(value, (int, float))
    if name == "integer":
        if isinstance(value, int):
            return True
        return draft >= 6 and isinstance(value, float) and value.is_integer()
    return False


def _unbool(value: Any) -> Any:
    if value is True:
        return ("__true__",)
    if value is False:
        return ("__false__",)
    return value


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality as ``jsonschema`` has it: ``True`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    return _unbool(a) == _unbool(b)


_PATTERN_CACHE: dict[str, re.Pattern[str] | None] = {}


def _regex(pattern: str) -> re.Pattern[str]:
    if pattern not in _PATTERN_CACHE:
        try:
            _PATTERN_CACHE[pattern] = re.compile(pattern)
        except re.error:
            _PATTERN_CACHE[pattern] = None
    compiled = _PATTERN_CACHE[pattern]
    if compiled is None:
        raise Unsatisfiable(f"pattern {pattern!r} is not a Python regular expression; assay cannot use it")
    return compiled


def pattern_search(pattern: str, text: str) -> bool:
    return _regex(pattern).search(text) is not None


def as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


def json_pointer(path: tuple[Any, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def put_at(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = put_at(value[head], rest, new)
        return out
    out_list = list(value)
    out_list[head] = put_at(value[head], rest, new)
    return out_list
