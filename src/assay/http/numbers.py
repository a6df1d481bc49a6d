"""Integers that appear as constants in an app's handler code.

A handler that fails on one value of a parameter (``100 // (n - 7)``, ``if page == 13``)
names that value in its code.  Drawn uniformly over a parameter's range it is all but
never hit; offered to the generator (:class:`assay.gen.schema.valid.ValueGenerator`'s
``numbers``) it is tried, with its neighbours, on a few percent of requests.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from types import CodeType
from typing import Any

#: Most integers kept per app (handlers first, in route order).
MAX_NUMBERS = 32
#: Integers at least this large (in magnitude) are left out: ids, masks and timestamps, not edge values.
MAX_MAGNITUDE = 1 << 32


def handlers(app: Any) -> list[Callable[..., Any]]:
    """The view functions of a Flask or Starlette/FastAPI app, or the app itself when it is a function."""
    views = getattr(app, "view_functions", None)
    if isinstance(views, dict):
        return [fn for fn in views.values() if callable(fn)]
    routes = getattr(app, "routes", None)
    if routes is not None:
        return list(_endpoints(routes))
    return [app] if inspect.isfunction(app) else []


def _endpoints(routes: Iterable[Any]) -> Iterable[Callable[..., Any]]:
    for route in routes:
        endpoint = getattr(route, "endpoint", None)
        if callable(endpoint):
            yield endpoint
        sub = getattr(route, "routes", None)
        if sub:
            yield from _endpoints(sub)


def code_numbers(functions: Iterable[Callable[..., Any]], limit: int = MAX_NUMBERS) -> tuple[int, ...]:
    """The integer constants of ``functions``' code (nested functions included), first seen first."""
    found: dict[int, None] = {}
    for fn in functions:
        code = getattr(inspect.unwrap(fn), "__code__", None)
        if isinstance(code, CodeType):
            _collect(code, found)
    return tuple(found)[:limit]


def _collect(code: CodeType, found: dict[int, None]) -> None:
    for value in code.co_consts:
        if isinstance(value, CodeType):
            _collect(value, found)
        elif type(value) is int and abs(value) < MAX_MAGNITUDE:  # exact type: no bools
            found.setdefault(value, None)


def app_numbers(app: Any) -> tuple[int, ...]:
    """:func:`code_numbers` of the app's :func:`handlers`."""
    return code_numbers(handlers(app))
