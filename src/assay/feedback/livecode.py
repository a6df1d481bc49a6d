"""The live functions of in-scope modules: what a ``__code__`` swap must reach."""

from __future__ import annotations

import os
import sys
from types import FunctionType, ModuleType
from typing import Any, Callable, Iterable


def modules_by_file(contains: Callable[[str], bool]) -> dict[str, list[ModuleType]]:
    """Imported modules whose ``.py`` file is in scope, by real path."""
    by_file: dict[str, list[ModuleType]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py") and contains(path):
            by_file.setdefault(os.path.realpath(path), []).append(module)
    return by_file


def functions_of(module: ModuleType) -> Iterable[FunctionType]:
    """Functions defined in ``module``: module level, in its classes, and under decorators.

    Nested functions, lambdas and comprehensions are not listed: their code objects
    are constants of their parent's code, so a swap of the parent covers them.
    """
    seen: set[int] = set()
    stack: list[Any] = list(vars(module).values())
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, (staticmethod, classmethod)):
            stack.append(obj.__func__)
        elif isinstance(obj, property):
            stack.extend(f for f in (obj.fget, obj.fset, obj.fdel) if f is not None)
        elif isinstance(obj, FunctionType):
            if obj.__module__ == module.__name__:
                yield obj
            # Decorated functions, and the body of a Hypothesis @given test.
            inner = getattr(obj, "__wrapped__", None) or getattr(getattr(obj, "hypothesis", None), "inner_test", None)
            if inner is not None:
                stack.append(inner)
        elif isinstance(obj, type) and obj.__module__ == module.__name__:
            stack.extend(vars(obj).values())
