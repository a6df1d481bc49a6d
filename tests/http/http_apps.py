"""Tiny apps and documents for the HTTP unit tests (the real examples live in examples/http)."""

from __future__ import annotations

import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "http"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

#: A small OpenAPI 3.0 document with one operation per concern.
DOC = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/things/{id}": {
            "get": {
                "operationId": "getThing",
                "tags": ["things"],
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
                    {"name": "q", "in": "query", "schema": {"type": "string", "nullable": True}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                    },
                    "404": {"description": "missing"},
                },
            },
            "delete": {"operationId": "deleteThing", "tags": ["admin"], "responses": {"204": {"description": "gone"}}},
        },
        "/things": {
            "post": {
                "operationId": "createThing",
                "tags": ["things"],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                },
                "responses": {"201": {"description": "made"}},
            },
        },
        "/health": {
            "get": {
                "operationId": "health",
                "responses": {"200": {"description": "ok"}, "503": {"description": "down"}},
            }
        },
    },
    "components": {
        "schemas": {
            "Thing": {
                "type": "object",
                "required": ["id", "name"],
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string", "minLength": 1},
                    "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}},
                },
            }
        }
    },
}


async def echo_asgi(scope, receive, send):
    """A bare ASGI app answering JSON about the request it saw."""
    import json

    message = await receive()
    body = json.dumps(
        {
            "method": scope["method"],
            "path": scope["path"],
            "raw": scope["raw_path"].decode(),
            "query": scope["query_string"].decode(),
            "body": message.get("body", b"").decode(),
            "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
        }
    ).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


def thing_wsgi(environ, start_response):
    """A bare WSGI app serving DOC's getThing: one conformance bug per path."""
    import json

    path = environ["PATH_INFO"]
    if path == "/things/1":
        payload, status = {"id": 1, "name": "one"}, "200 OK"
    elif path == "/things/2":
        payload, status = {"id": 2, "name": "", "tags": ["ok", "toolong"]}, "200 OK"
    elif path == "/things/3":
        payload, status = {"id": 3, "name": "x"}, "418 I'm a teapot"
    elif path == "/things/4":
        start_response("200 OK", [("Content-Type", "text/html")])
        return [b"<p>hi</p>"]
    elif path == "/health":
        payload, status = {}, "503 Service Unavailable"
    elif path == "/things/5":
        payload, status = {}, "500 Internal Server Error"
    else:
        payload, status = {"error": "missing"}, "404 Not Found"
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(payload).encode()]
