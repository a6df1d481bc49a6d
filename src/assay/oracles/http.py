"""HTTP oracles on an in-process WSGI app: ``http-5xx`` and ``path-escape``.

:func:`wsgi_call` drives a PEP 3333 application with one request and collects
the response, without sockets or threads.  :func:`no_5xx` fires on any 5xx
status: bad input may earn a 4xx, never a server error.  :func:`no_secret` fires
when a planted secret (:func:`plant_secret`, a file one level *above* the
served root) shows up in a response: some path escaped its root.

An exception escaping the app is not turned into a 500 here: it propagates, so
the engine reports it as a ``panic`` keyed by the app's own frames, which names
the bug more precisely than a status code can.  Apps wrapped in middleware that
catches errors and answers 500 are caught by :func:`no_5xx` instead.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

from assay.core.observe import InvariantViolation, OracleFailure, feature
from assay.oracles._common import identity, short_repr

#: File name of the planted secret, written next to (not inside) the served root.
SECRET_NAME = ".assay-planted-secret"
#: Response body bytes kept in a finding's data.
MAX_BODY_KEPT = 512

WsgiApp = Callable[[dict, Callable[..., Any]], Iterable[bytes]]


@dataclass
class WsgiResponse:
    """What the app answered: status code and line, headers, and the whole body."""

    status: int
    status_line: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The first header called ``name`` (case-insensitive), or ``None``."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)


def wsgi_environ(
    method: str,
    target: str | bytes,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    server_name: str = "fuzz.invalid",
    server_port: str = "80",
    scheme: str = "http",
) -> dict[str, Any]:
    """A PEP 3333 ``environ`` for one request.

    ``target`` is the request-target as sent (``/a%20b?x=1``): ``PATH_INFO`` is
    its path percent-decoded and read as Latin-1, as PEP 3333 servers do;
    ``QUERY_STRING`` stays encoded.
    """
    raw = target.encode("latin-1") if isinstance(target, str) else bytes(target)
    path, _, query = raw.partition(b"?")
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
        "QUERY_STRING": query.decode("latin-1"),
        "SERVER_NAME": server_name,
        "SERVER_PORT": server_port,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_LENGTH": str(len(body)) if body else "",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scheme,
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in headers:
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            environ[key] = value
            continue
        key = "HTTP_" + key
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ


def wsgi_call(
    app: WsgiApp,
    method: str = "GET",
    target: str | bytes = "/",
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
    **environ_options: Any,
) -> WsgiResponse:
    """Run one request through ``app`` in-process and return the full response.

    The app's own exceptions propagate.  An app that breaks the WSGI protocol
    (never calls ``start_response``, or gives a status line that does not start
    with three digits) raises :class:`~assay.core.observe.InvariantViolation` named
    ``wsgi`` with kind ``no-start-response`` or ``bad-status``.  Reports the
    feature ``http.status``.
    """
    environ = wsgi_environ(method, target, headers, body, **environ_options)
    started: list[tuple[str, list[tuple[str, str]]]] = []
    written: list[bytes] = []

    def start_response(status: str, response_headers: list, exc_info: Any = None) -> Callable[[bytes], None]:
        if started and exc_info is None:
            raise InvariantViolation("wsgi", "start_response called twice without exc_info", kind="restarted")
        started[:] = [(status, list(response_headers))]
        return written.append

    result = app(environ, start_response)
    try:
        for chunk in result:
            written.append(bytes(chunk))
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    if not started:
        raise InvariantViolation("wsgi", "the app returned without calling start_response", kind="no-start-response")
    status_line, response_headers = started[0]
    code = status_line[:3]
    if not (len(code) == 3 and code.isdigit() and code.isascii()) or status_line[3:4] not in ("", " "):
        raise InvariantViolation("wsgi", f"status line {status_line!r}", kind="bad-status")
    feature("http.status", int(code))
    return WsgiResponse(int(code), status_line, response_headers, b"".join(written))


def no_5xx(response: WsgiResponse, *, name: str = "response") -> WsgiResponse:
    """Fire ``http-5xx`` when ``response`` is a server error; else return it.

    The signature is ``http-5xx:<name>/<status>``: pass the route or handler as
    ``name`` when one app has several, so their 500s stay apart.
    """
    if 500 <= response.status <= 599:
        raise OracleFailure(
            name,
            f"server error {response.status_line!r}",
            kind=str(response.status),
            oracle="http-5xx",
            data={"status": response.status_line, "body": short_repr(response.body[:MAX_BODY_KEPT])},
        )
    return response


def http_5xx(
    app: WsgiApp,
    method: str,
    target: str | bytes,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    name: str | None = None,
) -> WsgiResponse:
    """:func:`wsgi_call` then :func:`no_5xx`; ``name`` defaults to the app's ``module.qualname``."""
    return no_5xx(wsgi_call(app, method, target, headers, body), name=name or identity(app))


@dataclass(frozen=True)
class PlantedSecret:
    """A secret file next to a served root: ``token`` must never be served."""

    path: Path
    token: bytes


def plant_secret(root: str | os.PathLike[str], *, name: str = SECRET_NAME) -> PlantedSecret:
    """Write a secret file in the *parent* of ``root`` and return it.

    The token is derived from the root's absolute path, so the same root always
    plants the same secret (replays see the same bytes) and a token never occurs
    by chance in ordinary content.
    """
    root = Path(root).resolve()
    token = b"ASSAY-SECRET-" + hashlib.blake2b(str(root).encode(), digest_size=16).hexdigest().encode()
    path = root.parent / name
    path.write_bytes(token + b"\n")
    return PlantedSecret(path, token)


def no_secret(response: WsgiResponse, secret: PlantedSecret | bytes, *, name: str = "planted-secret") -> WsgiResponse:
    """Fire ``path-escape`` when the secret appears in ``response``'s body or headers.

    Kinds: ``body`` and ``header``.  Returns the response otherwise.
    """
    token = secret.token if isinstance(secret, PlantedSecret) else bytes(secret)
    if token in response.body:
        raise OracleFailure(
            name,
            "the planted secret is in the response body",
            kind="body",
            oracle="path-escape",
            data={"status": response.status_line},
        )
    for key, value in response.headers:
        if token in value.encode("latin-1", "replace"):
            raise OracleFailure(
                name,
                f"the planted secret is in header {key!r}",
                kind="header",
                oracle="path-escape",
                data={"status": response.status_line},
            )
    return response


__all__ = [
    "PlantedSecret",
    "WsgiResponse",
    "http_5xx",
    "no_5xx",
    "no_secret",
    "plant_secret",
    "wsgi_call",
    "wsgi_environ",
]
