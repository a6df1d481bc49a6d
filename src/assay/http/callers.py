"""Driving an app in-process: ASGI through ``app(scope, receive, send)``, WSGI through PEP 3333.

No server, no socket: an ASGI app gets a synthesized ``http`` scope and a
``receive`` that hands over the body once, and its coroutine runs on an event
loop owned by this process (recreated after a fork).  WSGI apps go through
:func:`assay.oracles.http.wsgi_call`.  Both return the same response type and
let the app's own exceptions propagate (a ``panic`` keyed by the app's frames).
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import os
import weakref
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote_to_bytes

from assay.core.errors import ConfigError
from assay.core.observe import InvariantViolation, feature
from assay.oracles.http import WsgiResponse, wsgi_call

Response = WsgiResponse

_loop: asyncio.AbstractEventLoop | None = None
_loop_pid = 0


def app_kind(app: Any) -> str:
    """``"asgi"`` or ``"wsgi"``: an ``async`` callable is ASGI, anything else callable is WSGI."""
    if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(getattr(app, "__call__", None)):  # noqa: B004 - the method itself is inspected
        return "asgi"
    if callable(app):
        return "wsgi"
    raise ConfigError(f"{app!r} is neither an ASGI nor a WSGI application; pass the app object itself")


def _event_loop() -> asyncio.AbstractEventLoop:
    global _loop, _loop_pid
    if _loop is None or _loop.is_closed() or _loop_pid != os.getpid():
        _loop = asyncio.new_event_loop()
        _loop_pid = os.getpid()
    return _loop


def _close_loop() -> None:
    """At exit: cancel what still waits on the loop (lifespan tasks, as a server's shutdown would)."""
    loop = _loop
    if loop is None or loop.is_closed() or loop.is_running() or _loop_pid != os.getpid():
        return
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    try:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    finally:
        loop.close()


atexit.register(_close_loop)


def run_coroutine(coro: Any, timeout: float | None = None) -> Any:
    """Run ``coro`` to completion on this process's loop (``asyncio.wait_for`` with ``timeout``)."""
    global _loop
    loop = _event_loop()
    try:
        if timeout is not None:
            return loop.run_until_complete(asyncio.wait_for(coro, timeout))
        return loop.run_until_complete(coro)
    except BaseException:
        # A timeout signal may have left the loop mid-step: never reuse it.
        if not isinstance(_loop, asyncio.AbstractEventLoop) or _loop.is_running():
            _loop = None
        raise


def asgi_scope(method: str, target: str, headers: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """An ASGI ``http`` scope for one request (``path`` percent-decoded as UTF-8, as servers do)."""
    raw = target.encode("latin-1", "replace")
    raw_path, _, query = raw.partition(b"?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote_to_bytes(raw_path).decode("utf-8", "replace"),
        "raw_path": raw_path,
        "root_path": "",
        "query_string": query,
        "headers": [(k.lower().encode("latin-1", "replace"), v.encode("latin-1", "replace")) for k, v in headers],
        "server": ("fuzz.invalid", 80),
        "client": ("127.0.0.1", 1),
        "state": {},
    }


async def _asgi(app: Any, scope: dict[str, Any], body: bytes) -> Response:
    sent = False
    status: int | None = None
    response_headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(0)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            if status is not None:
                raise InvariantViolation("asgi", "http.response.start sent twice", kind="restarted")
            status = int(message["status"])
            response_headers.extend(
                (bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in message.get("headers", [])
            )
        elif message["type"] == "http.response.body":
            if status is None:
                raise InvariantViolation("asgi", "body sent before http.response.start", kind="body-first")
            chunks.append(bytes(message.get("body", b"")))

    await app(scope, receive, send)
    if status is None:
        raise InvariantViolation("asgi", "the app returned without starting a response", kind="no-start-response")
    return Response(status, str(status), response_headers, b"".join(chunks))


def asgi_call(
    app: Any,
    method: str = "GET",
    target: str = "/",
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    timeout: float | None = None,
) -> Response:
    """Run one request through ASGI ``app`` in-process; reports the feature ``http.status``."""
    headers = list(headers)
    if body and not any(k.lower() == "content-length" for k, _ in headers):
        headers.append(("Content-Length", str(len(body))))
    response = run_coroutine(_asgi(app, asgi_scope(method, target, headers), body), timeout)
    feature("http.status", response.status)
    return response


_started: weakref.WeakKeyDictionary[Any, tuple[int, Any]] = weakref.WeakKeyDictionary()


def asgi_startup(app: Any, timeout: float = 10.0) -> bool:
    """Run the app's ``lifespan`` startup once per process (what a server does before serving).

    The lifespan coroutine stays suspended on this process's loop afterwards, as
    under a server.  Returns False when the app does not support lifespan (it
    raises or returns at once), which is not an error: many apps have none.
    """
    known = _started.get(app)
    if known is not None and known[0] == os.getpid():
        return known[1] is not None
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    done: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def receive() -> dict[str, Any]:
        return await queue.get()

    async def send(message: dict[str, Any]) -> None:
        await done.put(message)

    async def start() -> Any:
        task = asyncio.ensure_future(app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send))
        await queue.put({"type": "lifespan.startup"})
        waiter = asyncio.ensure_future(done.get())
        finished, _ = await asyncio.wait({task, waiter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiter in finished and waiter.result().get("type") == "lifespan.startup.complete":
            return task
        waiter.cancel()
        if task in finished and task.exception() is not None:
            return None  # lifespan unsupported
        if waiter in finished:
            raise ConfigError(f"the app's lifespan startup failed: {waiter.result().get('message', '')}")
        return None

    task = run_coroutine(start())
    _started[app] = (os.getpid(), task)
    return task is not None


def call(
    app: Any,
    kind: str,
    method: str,
    target: str,
    headers: Iterable[tuple[str, str]] = (),
    body: bytes = b"",
    *,
    timeout: float | None = None,
) -> Response:
    """One request through ``app`` of ``kind`` (``asgi`` or ``wsgi``)."""
    if kind == "asgi":
        return asgi_call(app, method, target, headers, body, timeout=timeout)
    return wsgi_call(app, method, target, headers, body)
