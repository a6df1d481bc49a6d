"""A small shop API on FastAPI and a real SQLite file, with planted bugs for assay to find.

Each run (each import, or each :func:`create_app` call) gets a fresh temp folder
holding the database ``shop.db`` and the served folder ``files/``.  Planted,
realistic bugs (one per oracle class):

* ``GET /stats``: the ``X-Client-Version`` header is split on ``.`` and its
  major part read with ``int()`` unchecked: a malformed header raises (FastAPI
  answers 500 and re-raises: a ``panic`` keyed by ``client_major``);
* ``GET /files/{name}``: the traversal guard looks at the *raw* path for
  ``../``, but the file is opened from the decoded one: ``..%2f`` escapes the
  served folder (``path-escape``);
* ``GET /items/{item_id}/quote``: the bulk discount reaches 100% at the edge
  value ``quantity=1000``, so ``total`` is 0 where the documented schema says
  ``exclusiveMinimum: 0`` (response conformance, ``error-shape``);
* ``DELETE /items/{item_id}`` forgets to evict the read cache, so a deleted
  item comes back on the next read: visible only in a sequence (create, read,
  delete, read).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from fastapi import FastAPI, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field


class NewItem(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    price: float = Field(gt=0, le=10000)


class Item(BaseModel):
    id: int
    name: str
    price: float


class Quote(BaseModel):
    item_id: int
    quantity: int = Field(ge=1)
    total: float = Field(gt=0)


class Stats(BaseModel):
    items: int
    client_major: int


NOT_FOUND = {404: {"description": "No such item or file"}}


def client_major(version: str) -> int:
    """The major part of ``X-Client-Version: MAJOR.MINOR`` (planted: no check on the format)."""
    return int(version.split(".")[0])


def reset(app: FastAPI) -> None:
    """Empty the app's storage: a new database with the three starting items, an empty cache."""
    db_path = app.state.db_path
    for suffix in ("", "-wal", "-shm"):
        db_path.with_name(db_path.name + suffix).unlink(missing_ok=True)
    with sqlite3.connect(db_path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
        db.executemany(
            "INSERT INTO items (name, price) VALUES (?, ?)", [("kettle", 25.0), ("teapot", 18.5), ("mug", 4.0)]
        )
    app.state.cache.clear()


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # never from a forked child of the process that made it
        shutil.rmtree(folder, ignore_errors=True)


def create_app(data_dir: str | os.PathLike[str] | None = None) -> FastAPI:
    """A fresh app with its own database and served folder (a new temp folder by default)."""
    if data_dir is None:
        data_dir = tempfile.mkdtemp(prefix="assay-example-")
        atexit.register(_remove, data_dir, os.getpid())  # the temp folder lives as long as the process
    data = Path(data_dir)
    files = data / "files"
    files.mkdir(parents=True, exist_ok=True)
    (files / "readme.txt").write_text("welcome to the shop\n")
    db_path = data / "shop.db"
    app = FastAPI(title="shop", version="1.0")
    app.state.data_dir = data
    app.state.files_dir = files
    app.state.cache = {}  # item id -> item, for reads
    app.state.db_path = db_path
    reset(app)

    def connect() -> sqlite3.Connection:
        db = sqlite3.connect(db_path)
        db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough, no fsync per commit
        return db

    @app.get("/items", response_model=list[Item], operation_id="listItems", tags=["items"])
    async def list_items(limit: int = Query(10, ge=1, le=100)) -> list[dict]:
        with connect() as db:
            rows = db.execute("SELECT id, name, price FROM items ORDER BY id LIMIT ?", (limit,)).fetchall()
        return [{"id": r[0], "name": r[1], "price": r[2]} for r in rows]

    @app.get("/items/{item_id}", response_model=Item, responses=NOT_FOUND, operation_id="getItem", tags=["items"])
    async def get_item(item_id: int) -> dict:
        cache = app.state.cache
        if item_id in cache:
            return cache[item_id]
        with connect() as db:
            row = db.execute("SELECT id, name, price FROM items WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise HTTPException(404, "no such item")
        cache[item_id] = {"id": row[0], "name": row[1], "price": row[2]}
        return cache[item_id]

    @app.post("/items", response_model=Item, status_code=201, operation_id="createItem", tags=["items", "write"])
    async def create_item(item: NewItem) -> dict:
        with connect() as db:
            cur = db.execute("INSERT INTO items (name, price) VALUES (?, ?)", (item.name, item.price))
            new_id = cur.lastrowid
        return {"id": new_id, "name": item.name, "price": item.price}

    @app.delete(
        "/items/{item_id}", status_code=204, responses=NOT_FOUND, operation_id="deleteItem", tags=["items", "write"]
    )
    async def delete_item(item_id: int) -> None:
        with connect() as db:
            gone = db.execute("DELETE FROM items WHERE id = ?", (item_id,)).rowcount
        if not gone:
            raise HTTPException(404, "no such item")
        # planted: the read cache keeps the deleted item

    @app.get(
        "/items/{item_id}/quote",
        response_model=None,
        operation_id="quoteItem",
        tags=["items"],
        responses={200: {"model": Quote}, **NOT_FOUND},
    )
    async def quote(item_id: int, quantity: int = Query(ge=1, le=1000)) -> JSONResponse:
        with connect() as db:
            row = db.execute("SELECT price FROM items WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise HTTPException(404, "no such item")
        discount = quantity / 1000  # planted: 100% off at the top of the range
        total = round(row[0] * quantity * (1 - discount), 2)
        return JSONResponse({"item_id": item_id, "quantity": quantity, "total": total})

    @app.get(
        "/files/{name:path}",
        response_class=PlainTextResponse,
        operation_id="getFile",
        tags=["files"],
        responses=NOT_FOUND,
    )
    async def get_file(name: str, request: Request) -> PlainTextResponse:
        if b"../" in request.scope.get("raw_path", b""):  # planted: checks the raw path, opens the decoded one
            raise HTTPException(404, "no such file")
        path = os.path.normpath(os.path.join(files, name))
        if not os.path.isfile(path):
            raise HTTPException(404, "no such file")
        with open(path, encoding="utf-8", errors="replace") as handle:
            return PlainTextResponse(handle.read())

    @app.get("/stats", response_model=Stats, operation_id="getStats", tags=["stats"])
    async def stats(x_client_version: str = Header("1.0")) -> dict:
        with connect() as db:
            count = db.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        return {"items": count, "client_major": client_major(x_client_version)}

    return app


app = create_app()
