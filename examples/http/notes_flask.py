"""A small notes API on Flask and a real SQLite file, with its hand-written OpenAPI 3.0 document.

Each :func:`create_app` call (and so each import) gets a fresh temp folder
holding ``notes.db`` and the served folder ``attachments/``.  Planted, realistic
bugs:

* ``GET /notes``: the ``X-Page-Size`` header is read with ``int()`` unchecked;
  a malformed value raises and Flask answers 500 (``http-5xx``);
* ``GET /attachments/{name}``: the guard only refuses names *starting* with
  ``../``, then joins and normalises: ``a/../../x`` escapes the served folder
  (``path-escape``);
* ``GET /notes/{note_id}/summary``: ``words=0``, the documented minimum, gives
  an empty summary where the response schema says ``minLength: 1`` (response
  conformance, ``error-shape``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from flask import Flask, jsonify, request

_ERROR = {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}
_JSON_ERROR = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}

#: The app's OpenAPI 3.0 document (written by hand, as many Flask projects do).
OPENAPI: dict = {
    "openapi": "3.0.3",
    "info": {"title": "notes", "version": "1.0"},
    "paths": {
        "/notes": {
            "get": {
                "operationId": "listNotes",
                "tags": ["notes"],
                "parameters": [
                    {"name": "X-Page-Size", "in": "header", "schema": {"type": "integer", "minimum": 1, "maximum": 50}},
                    {"name": "tag", "in": "query", "schema": {"type": "string", "maxLength": 20}},
                ],
                "responses": {
                    "200": {
                        "description": "notes",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Note"}}
                            }
                        },
                    },
                    "400": {"description": "bad request", **_JSON_ERROR},
                },
            },
            "post": {
                "operationId": "createNote",
                "tags": ["notes", "write"],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewNote"}}},
                },
                "responses": {
                    "201": {
                        "description": "created",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                    },
                    "400": {"description": "bad request", **_JSON_ERROR},
                },
            },
        },
        "/notes/{note_id}": {
            "parameters": [
                {"name": "note_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
            ],
            "get": {
                "operationId": "getNote",
                "tags": ["notes"],
                "responses": {
                    "200": {
                        "description": "a note",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                    },
                    "404": {"description": "no such note", **_JSON_ERROR},
                },
            },
        },
        "/notes/{note_id}/summary": {
            "get": {
                "operationId": "summarizeNote",
                "tags": ["notes"],
                "parameters": [
                    {"name": "note_id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}},
                    {
                        "name": "words",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "integer", "minimum": 0, "maximum": 5},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "summary",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["id", "summary"],
                                    "properties": {
                                        "id": {"type": "integer"},
                                        "summary": {"type": "string", "minLength": 1},
                                    },
                                }
                            }
                        },
                    },
                    "400": {"description": "bad request", **_JSON_ERROR},
                    "404": {"description": "no such note", **_JSON_ERROR},
                },
            },
        },
        "/attachments/{name}": {
            "get": {
                "operationId": "getAttachment",
                "tags": ["files"],
                "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {"description": "the file", "content": {"text/plain": {"schema": {"type": "string"}}}},
                    "404": {"description": "no such file", **_JSON_ERROR},
                },
            },
        },
    },
    "components": {
        "schemas": {
            "Error": _ERROR,
            "NewNote": {
                "type": "object",
                "required": ["title", "body"],
                "additionalProperties": False,
                "properties": {
                    "title": {"type": "string", "minLength": 1, "maxLength": 60},
                    "body": {"type": "string", "maxLength": 500},
                    "tag": {"type": "string", "maxLength": 20, "nullable": True},
                },
            },
            "Note": {
                "type": "object",
                "required": ["id", "title", "body"],
                "properties": {
                    "id": {"type": "integer"},
                    "title": {"type": "string"},
                    "body": {"type": "string"},
                    "tag": {"type": "string", "nullable": True},
                },
            },
        }
    },
}


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # never from a forked child of the process that made it
        shutil.rmtree(folder, ignore_errors=True)


def create_app(data_dir: str | os.PathLike[str] | None = None) -> Flask:
    """A fresh app with its own database and served folder (a new temp folder by default)."""
    if data_dir is None:
        data_dir = tempfile.mkdtemp(prefix="assay-example-")
        atexit.register(_remove, data_dir, os.getpid())  # the temp folder lives as long as the process
    data = Path(data_dir)
    attachments = data / "attachments"
    attachments.mkdir(parents=True, exist_ok=True)
    (attachments / "hello.txt").write_text("hello\n")
    db_path = data / "notes.db"
    with sqlite3.connect(db_path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, "
            "body TEXT NOT NULL, tag TEXT)"
        )
        if not db.execute("SELECT COUNT(*) FROM notes").fetchone()[0]:
            db.executemany(
                "INSERT INTO notes (title, body, tag) VALUES (?, ?, ?)",
                [("groceries", "milk eggs bread butter", "home"), ("todo", "write the report today", None)],
            )
    app = Flask("notes")
    app.config["DATA_DIR"] = data
    app.config["ATTACHMENTS"] = attachments
    app.logger.disabled = True  # the fuzzer provokes 500s on purpose; keep its output readable

    def connect() -> sqlite3.Connection:
        db = sqlite3.connect(db_path)
        db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough, no fsync per commit
        return db

    def row_to_note(row: tuple) -> dict:
        return {"id": row[0], "title": row[1], "body": row[2], "tag": row[3]}

    def error(status: int, message: str):
        return jsonify(error=message), status

    @app.get("/notes")
    def list_notes():
        size = int(request.headers.get("X-Page-Size", "20"))  # planted: a malformed header is a 500
        tag = request.args.get("tag")
        with connect() as db:
            if tag is None:
                rows = db.execute("SELECT id, title, body, tag FROM notes ORDER BY id LIMIT ?", (size,)).fetchall()
            else:
                rows = db.execute(
                    "SELECT id, title, body, tag FROM notes WHERE tag = ? ORDER BY id LIMIT ?", (tag, size)
                ).fetchall()
        return jsonify([row_to_note(r) for r in rows])

    @app.post("/notes")
    def create_note():
        payload = request.get_json(silent=True)
        if not isinstance(payload, dict) or not isinstance(payload.get("title"), str) or not payload["title"]:
            return error(400, "title is required")
        if not isinstance(payload.get("body"), str):
            return error(400, "body is required")
        with connect() as db:
            cur = db.execute(
                "INSERT INTO notes (title, body, tag) VALUES (?, ?, ?)",
                (payload["title"], payload["body"], payload.get("tag")),
            )
            new_id = cur.lastrowid
        return jsonify(id=new_id, title=payload["title"], body=payload["body"], tag=payload.get("tag")), 201

    @app.get("/notes/<int:note_id>")
    def get_note(note_id: int):
        with connect() as db:
            row = db.execute("SELECT id, title, body, tag FROM notes WHERE id = ?", (note_id,)).fetchone()
        return jsonify(row_to_note(row)) if row else error(404, "no such note")

    @app.get("/notes/<int:note_id>/summary")
    def summarize(note_id: int):
        words = request.args.get("words", type=int)
        if words is None or not 0 <= words <= 5:
            return error(400, "words must be an integer from 0 to 5")
        with connect() as db:
            row = db.execute("SELECT body FROM notes WHERE id = ?", (note_id,)).fetchone()
        if row is None:
            return error(404, "no such note")
        return jsonify(id=note_id, summary=" ".join(row[0].split()[:words]))  # planted: "" at words=0

    @app.get("/attachments/<path:name>")
    def get_attachment(name: str):
        if name.startswith(("/", "../")):  # planted: only a leading ../ is refused
            return error(404, "no such file")
        path = os.path.normpath(os.path.join(attachments, name))
        if not os.path.isfile(path):
            return error(404, "no such file")
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(), 200, {"Content-Type": "text/plain; charset=utf-8"}

    return app


app = create_app()
