"""Routes discovered from an app's own route table, for apps without an OpenAPI document.

Starlette (and so FastAPI) apps expose ``app.routes`` (``Mount`` prefixes are
followed); Flask apps expose ``app.url_map``.  Each route becomes an
:class:`~assay.http.openapi.Operation` whose path parameters are plain strings
and whose body, for methods that take one, is any JSON value: the generator then
byte-fuzzes what no schema describes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from assay.core.errors import ConfigError
from assay.http.openapi import Operation, Parameter

_FLASK_ARG = re.compile(r"<(?:[a-zA-Z_][a-zA-Z_0-9]*(?:\([^)]*\))?:)?([a-zA-Z_][a-zA-Z_0-9]*)>")
_STARLETTE_ARG = re.compile(r"\{([a-zA-Z_][a-zA-Z_0-9]*)(?::[a-zA-Z_]+)?\}")
_BODY_METHODS = ("post", "put", "patch")


def discover(app: Any) -> list[Operation]:
    """Every (method, path) the app's route table declares; a :class:`ConfigError` if it has none."""
    url_map = getattr(app, "url_map", None)
    if url_map is not None and hasattr(url_map, "iter_rules"):
        ops = _flask(url_map)
    elif hasattr(app, "routes"):
        ops = _starlette(app.routes, "")
    else:
        raise ConfigError(
            f"cannot discover the routes of {type(app).__name__}: pass openapi=... (a document) "
            "or routes=[('GET', '/path/{param}'), ...]"
        )
    return sorted(ops, key=lambda o: (o.path, o.method))


def from_list(routes: Iterable[str | tuple[str, str]]) -> list[Operation]:
    """Operations from ``[("GET", "/items/{id}"), "POST /items", ...]``."""
    ops = []
    for route in routes:
        method, path = route.split(None, 1) if isinstance(route, str) else route
        ops.append(_operation(method, path, _STARLETTE_ARG.findall(path)))
    return ops


def _operation(method: str, path: str, names: list[str]) -> Operation:
    method = method.lower()
    params = tuple(Parameter(n, "path", True, {"type": "string"}) for n in names)
    return Operation(
        method=method,
        path=path,
        operation_id=f"{method.upper()} {path}",
        parameters=params,
        body_schema={} if method in _BODY_METHODS else None,
    )


def _flask(url_map: Any) -> list[Operation]:
    ops = []
    for rule in url_map.iter_rules():
        path = _FLASK_ARG.sub(lambda m: "{" + m.group(1) + "}", rule.rule)
        names = _STARLETTE_ARG.findall(path)
        for method in sorted(rule.methods or ()):
            ops.append(_operation(method, path, names))
    return ops


def _starlette(routes: Any, prefix: str) -> list[Operation]:
    ops = []
    for route in routes:
        path = prefix + getattr(route, "path", "")
        sub = getattr(route, "routes", None)
        methods = getattr(route, "methods", None)
        if methods:
            clean = _STARLETTE_ARG.sub(lambda m: "{" + m.group(1) + "}", path)
            for method in sorted(methods):
                ops.append(_operation(method, clean, _STARLETTE_ARG.findall(clean)))
        elif sub:
            ops += _starlette(sub, path)
    return ops
