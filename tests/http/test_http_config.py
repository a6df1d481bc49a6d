"""HTTP targets from ``[tool.assay.http.<name>]`` and from a bare route table."""

from __future__ import annotations

import textwrap

import pytest

from assay.core.config import load_project
from assay.core.errors import ConfigError
from assay.harness.discovery import load_targets
from assay.http import http_target

APP = textwrap.dedent("""
    from flask import Flask

    app = Flask("cfg_app")

    @app.get("/hello/<name>")
    def hello(name):
        return "hello " + name

    @app.post("/items")
    def create():
        return "made", 201
""")


def _project(tmp_path, table: str):
    (tmp_path / "cfg_http_app.py").write_text(APP)
    (tmp_path / "pyproject.toml").write_text("[tool.assay.http.cfg_hello]\n" + table)
    return load_project(tmp_path)


def test_a_table_declares_a_target_without_target_files(tmp_path):
    registry = load_targets(_project(tmp_path, 'app = "cfg_http_app:app"\nexclude = ["/static/*"]\n'))
    target = registry.get("cfg_hello")
    surface = target.fn
    labels = [op.label for op in surface.operations]
    assert "GET /hello/{name}" in labels and "POST /items" not in labels  # POST is not allowed
    assert target(b"\x00\x00\x00\x00\x00\x09" + b"\x01" * 12) in (200, 404)
    assert target.sources == (str(tmp_path / "cfg_http_app.py"),)


def test_unknown_keys_and_bad_apps_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown key"):
        load_targets(_project(tmp_path, 'app = "cfg_http_app:app"\nallowed = []\n'))
    with pytest.raises(ConfigError, match="no attribute"):
        load_targets(_project(tmp_path, 'app = "cfg_http_app:nope"\n'))


def test_routes_without_a_schema_are_discovered_and_byte_fuzzed():
    from flask import Flask
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route

    async def show(request):
        return PlainTextResponse(request.path_params["key"])

    star = Starlette(
        routes=[Mount("/api", routes=[Route("/things/{key}", show), Route("/things", show, methods=["POST"])])]
    )
    surface = http_target(star, register=False, name="star_t")
    assert [op.label for op in surface.operations] == ["GET /api/things/{key}", "HEAD /api/things/{key}"]
    flask_app = Flask("t2")
    flask_app.add_url_rule("/f/<int:n>", "f", lambda n: str(n))
    labels = [op.label for op in http_target(flask_app, register=False, name="flask_t").operations]
    assert "GET /f/{n}" in labels
    for i in range(50):
        surface.assay_target(bytes([i % 2, i, 255 - i]) * 5)  # any bytes make a request
