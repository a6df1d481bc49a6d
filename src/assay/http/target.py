"""``assay.http_target``: an ASGI or WSGI app (and its OpenAPI document) as one bytes target.

The input's first byte(s) choose the operation; the rest decode to a request of
that operation (:mod:`assay.http.request`).  Each response is judged by the
oracles: ``path-escape`` (a planted secret above ``served_root``), ``http-5xx``
and response conformance (:mod:`assay.http.conformance`); an exception escaping
the app propagates, so the engine reports a ``panic`` keyed by the app's frames.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from assay.core.errors import ConfigError
from assay.core.observe import feature
from assay.core.target import REGISTRY, Registry, Target
from assay.gen.bytesource import ByteSource
from assay.harness.define import make_target
from assay.http import routes as route_table
from assay.http.callers import Response, app_kind, asgi_startup, call
from assay.http.conformance import CHECKS, Conformance
from assay.http.numbers import app_numbers
from assay.http.openapi import Document, Operation, parse
from assay.http.request import Request, generate
from assay.http.select import select
from assay.oracles.http import PlantedSecret, no_secret, plant_secret

#: Default cap on an HTTP target's input size.
DEFAULT_HTTP_MAX_LEN = 2048


class HttpSurface:
    """The bytes target of one app: callable on fuzz input, with its operations and oracles."""

    def __init__(
        self,
        app: Any,
        operations: list[Operation],
        doc: Document | None,
        *,
        secret: PlantedSecret | None,
        conformance: Conformance,
        kind: str | None = None,
    ) -> None:
        self.app = app
        self.kind = kind or app_kind(app)
        self.operations = operations
        self.doc = doc or Document({}, 2020, operations)
        self.secret = secret
        self.conformance = conformance
        self.assay_target: Target | None = None
        self.numbers = app_numbers(app)

    def request_for(self, data: bytes) -> tuple[Operation, Request]:
        """The operation and request ``data`` decodes to (nothing is sent)."""
        source = ByteSource(data)
        op = self.operations[source.draw_int(0, len(self.operations) - 1)]
        return op, generate(self.doc, op, data[source.pos :], numbers=self.numbers)

    def send(self, op: Operation, request: Request, *, timeout: float | None = None) -> Response:
        """Send ``request`` to the app and judge the response; returns it when every oracle passes."""
        if self.kind == "asgi":
            asgi_startup(self.app)
        response = call(
            self.app, self.kind, request.method, request.target, request.headers, request.body, timeout=timeout
        )
        if self.secret is not None:
            no_secret(response, self.secret, name=op.label)
        self.conformance.judge(op, response, request.method, rerouted=request.rerouted)
        return response

    def __call__(self, data: bytes) -> int:
        op, request = self.request_for(data)
        feature("http.operation", op.label)
        # The request's kind (operation, mode, which slot was violated or planted) is semantic
        # feedback: each kind is kept in the corpus, so the engine explores all of them.
        feature("http.kind", f"{op.label}:{request.mode}:{request.violation}")
        return self.send(op, request).status

    def seeds(self) -> list[bytes]:
        """One input per operation (its simplest valid request)."""
        n = len(self.operations)
        if n <= 256:
            return [bytes([i]) for i in range(n)]
        return [i.to_bytes(2, "big") for i in range(n)]


def _caller_file(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("assay.http"):
        frame = frame.f_back  # type: ignore[assignment]
    return (
        os.path.abspath(frame.f_globals.get("__file__", ""))
        if frame is not None and frame.f_globals.get("__file__")
        else ""
    )


def http_target(
    app: Any,
    openapi: Any = None,
    *,
    routes: Sequence[str | tuple[str, str]] | None = None,
    allow: Iterable[str] = (),
    exclude: Iterable[str] = (),
    name: str | None = None,
    served_root: str | os.PathLike[str] | None = None,
    allow_5xx: Iterable[str] = (),
    checks: Iterable[str] = CHECKS,
    sources: Sequence[str] = (),
    max_len: int = DEFAULT_HTTP_MAX_LEN,
    register: bool | Registry = True,
    **settings: Any,
) -> HttpSurface:
    """Make ``app`` (ASGI or WSGI) a fuzz target; returns its :class:`HttpSurface`.

    ``openapi`` is an OpenAPI 3.x document (a path, a dict) or ``None`` for the
    app's own (``app.openapi()``, as FastAPI has), falling back to ``routes``
    (``["GET /items/{id}", ...]``) and then to the app's route table; pass
    ``openapi=False`` to skip the document.  ``allow``/``exclude`` take
    operationIds, path globs (``"POST /items*"``) and ``tag:NAME`` rules; only
    GET/HEAD/OPTIONS run unless allowed.  ``served_root`` plants a secret beside
    that folder for the ``path-escape`` oracle.  ``allow_5xx`` excludes
    documented 5xx (``"opId:503"``); ``checks`` picks conformance checks.  Other
    keyword arguments are :func:`assay.harness.define.make_target` settings.  The result
    carries ``assay_target``, so a module global holding it is discovered.
    """
    doc: Document | None = None
    if openapi is None and routes is None and callable(getattr(app, "openapi", None)):
        openapi = app
    if openapi is not None and openapi is not False:
        doc = parse(openapi)
        operations = doc.operations
    elif routes is not None:
        operations = route_table.from_list(list(routes))
    else:
        operations = route_table.discover(app)
    chosen = select(operations, allow, exclude)
    for op in chosen:  # a reference that does not resolve is a configuration error now, not a panic later
        try:
            generate(doc or Document({}, 2020, chosen), op, b"")
        except ConfigError as exc:
            raise ConfigError(f"operation {op.label}: cannot generate requests: {exc}") from None
    secret = plant_secret(served_root) if served_root is not None else None
    surface = HttpSurface(
        app, chosen, doc, secret=secret, conformance=Conformance(doc, tuple(checks), tuple(allow_5xx))
    )
    caller = _caller_file()
    tname = name or "http_" + os.path.splitext(os.path.basename(caller or "app"))[0]
    seeds = list(settings.pop("seeds", ())) + surface.seeds()
    target = make_target(
        surface,
        name=tname,
        sources=tuple(sources) or ((caller,) if caller else ()),
        max_len=max_len,
        seeds=seeds,
        extra={"http": True},
        **settings,
    )
    target = dataclasses.replace(target, defined_in=caller)
    surface.assay_target = target
    if register:
        (register if isinstance(register, Registry) else REGISTRY).add(target)
    return surface
