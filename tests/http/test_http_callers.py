"""In-process callers: ASGI scopes and WSGI environs, no socket, same response type."""

from __future__ import annotations

import json
import socket

import pytest
from http_apps import echo_asgi, thing_wsgi

from assay.http.callers import app_kind, asgi_call, call


@pytest.fixture
def no_sockets(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an HTTP target opened a socket")

    # The event loop's self-pipe is a socketpair; what must never happen is binding or connecting.
    for name in ("bind", "connect", "connect_ex", "listen"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_asgi_scope_decodes_path_and_keeps_raw(no_sockets):
    r = asgi_call(echo_asgi, "POST", "/files/..%2Fx?a=1", [("X-Thing", "v")], b'{"k":1}')
    seen = json.loads(r.body)
    assert r.status == 200 and r.header("content-type") == "application/json"
    assert seen["path"] == "/files/../x" and seen["raw"] == "/files/..%2Fx" and seen["query"] == "a=1"
    assert seen["body"] == '{"k":1}' and seen["headers"]["x-thing"] == "v" and seen["headers"]["content-length"] == "7"


def test_kinds():
    assert app_kind(echo_asgi) == "asgi" and app_kind(thing_wsgi) == "wsgi"
    assert call(thing_wsgi, "wsgi", "GET", "/things/1").status == 200


def test_real_frameworks_in_process(no_sockets):
    from flask import Flask
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def hello(request):
        return PlainTextResponse("hi " + request.path_params["who"])

    star = Starlette(routes=[Route("/hi/{who}", hello)])
    assert app_kind(star) == "asgi"
    r = call(star, "asgi", "GET", "/hi/you")
    assert (r.status, r.body) == (200, b"hi you")
    flask_app = Flask("t")
    flask_app.add_url_rule("/hi/<who>", "hi", lambda who: "hi " + who)
    assert app_kind(flask_app) == "wsgi"
    assert call(flask_app, "wsgi", "GET", "/hi/you").body == b"hi you"


def test_exception_escaping_an_asgi_app_propagates():
    async def broken(scope, receive, send):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        asgi_call(broken)
    assert asgi_call(echo_asgi).status == 200  # the loop is usable afterwards


def test_lifespan_startup_runs_once_before_requests():
    from contextlib import asynccontextmanager

    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from assay.http.callers import asgi_startup

    started = []

    @asynccontextmanager
    async def lifespan(app):
        started.append(True)
        app.state.greeting = "ready"
        yield

    async def hello(request):
        return PlainTextResponse(request.app.state.greeting)

    app = Starlette(routes=[Route("/", hello)], lifespan=lifespan)
    assert asgi_startup(app) and asgi_startup(app) and started == [True]
    assert call(app, "asgi", "GET", "/").body == b"ready"
    assert asgi_startup(echo_asgi) is False  # no lifespan support: fine
