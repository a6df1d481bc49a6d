"""The live functions of in-scope modules: what a ``__code__`` swap must reach."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from types import FunctionType, ModuleType
from typing import Any


def modules_by_file(contains: Callable[[str], bool]) -> dict[str, list[ModuleType]]:
    """Imported modules whose ``.py`` file is in scope, by real path."""
    by_file: dict[str, list[ModuleType]] = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py") and contains(path):
            by_file.setdefault(os.path.realpath(path), []).append(module)
    return by_file


#: The type of ``functools.lru_cache``/``functools.cache`` wrappers: a C object, not a
#: function, so a ``__code__`` swap must reach the function it wraps.
MEMO_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))


def functions_of(module: ModuleType) -> Iterable[FunctionType]:
    """Functions defined in ``module``: module level, in its classes, and under decorators
    (decorator functions, and memo caches: ``functools.lru_cache`` and ``cache``).

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
        elif isinstance(obj, MEMO_WRAPPER):
            stack.append(obj.__wrapped__)
        elif isinstance(obj, type) and obj.__module__ == module.__name__:
            stack.extend(vars(obj).values())


def memo_caches(module: ModuleType) -> Iterable[tuple[Any, str, Any]]:
    """``(namespace, name, wrapper)`` for each memo cache bound in ``module`` or its classes.

    A recorded run binds each name to the wrapped function for its duration (see
    :class:`assay.feedback.cmplog.CmpLog`): a cache hit would hide the comparisons of
    every call the cache has seen before.
    """
    spaces: list[Any] = [module]
    seen = {id(module)}
    while spaces:
        space = spaces.pop()
        for name, obj in list(vars(space).items()):
            if isinstance(obj, MEMO_WRAPPER) and isinstance(obj.__wrapped__, FunctionType):
                yield space, name, obj
            elif isinstance(obj, type) and obj.__module__ == module.__name__ and id(obj) not in seen:
                seen.add(id(obj))
                spaces.append(obj)
