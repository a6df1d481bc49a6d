"""``http-5xx`` and ``path-escape`` on the standard library's static file mapping.

``http.server.SimpleHTTPRequestHandler.translate_path`` maps a request path to
a file under the served directory, "ignoring components that mean special
things to the local file system".  A minimal WSGI app serves files through it
(the same mapping ``python -m http.server`` uses), with a secret planted one
level above the served root.  Requests are drawn from path segments that have
broken such mappings before: dot segments, encoded dots and slashes,
backslashes, doubled slashes, NUL.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import assay
from assay.gen.bytesource import ByteSource
from assay.oracles import no_5xx, no_secret, plant_secret, wsgi_call
from assay.oracles.http import SECRET_NAME

_TMP = Path(tempfile.mkdtemp(prefix="assay-static-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
ROOT = _TMP / "site"
(ROOT / "docs").mkdir(parents=True)
(ROOT / "index.html").write_bytes(b"<h1>home</h1>")
(ROOT / "docs" / "a.txt").write_bytes(b"doc")
SECRET = plant_secret(ROOT)

#: Path segments requests are built from.
SEGMENTS = [
    "index.html",
    "docs",
    "a.txt",
    "..",
    ".",
    "%2e%2e",
    ".%2e",
    "%2e.",
    "..%2f",
    "..%5c",
    "..\\",
    "%2f",
    "",
    "%00",
    SECRET_NAME,
    "~",
    "C:",
]


def translate(path: str) -> str:
    handler = SimpleHTTPRequestHandler.__new__(SimpleHTTPRequestHandler)
    handler.directory = str(ROOT)
    return handler.translate_path(path)


def static_app(environ, start_response):
    """Serve the file ``translate_path`` names, as SimpleHTTPRequestHandler.send_head does."""
    raw = environ["PATH_INFO"]
    if environ["QUERY_STRING"]:
        raw += "?" + environ["QUERY_STRING"]
    try:
        path = translate(raw)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        with open(path, "rb") as f:
            body = f.read()
        status = "200 OK"
    except OSError:
        status, body = "404 Not Found", b"not found"
    except ValueError:  # e.g. an embedded NUL: a bad request, not a server error
        status, body = "400 Bad Request", b"bad request"
    start_response(status, [("Content-Type", "application/octet-stream")])
    return [body]


def request_target(data: bytes) -> str:
    """A request-target drawn from SEGMENTS, with an optional query or leading '//'."""
    src = ByteSource(data)
    lead = src.draw_choice(["/", "//", "/./", "\\"])
    segments = src.draw_list(lambda s: s.draw_choice(SEGMENTS), min_size=1, max_size=6)
    depth = lowest = 0
    for seg in segments:
        depth += -1 if seg == ".." else 0 if seg in (".", "") else 1
        lowest = min(lowest, depth)
    assay.feature("lowest-depth", lowest)  # a gradient towards escaping the root
    target = lead + "/".join(segments)
    if src.draw_bool():
        target += src.draw_choice(["?x=1", "#frag", "?/../" + SECRET_NAME])
    return target


@assay.target(sources=["http.server"], max_len=64, seeds=[b"\x00\x00", b"\x00\x01\x01\x02", b""])
def oracle_http_static(data: bytes) -> None:
    response = wsgi_call(static_app, "GET", request_target(data).encode("latin-1"))
    no_5xx(response, name="static")
    no_secret(response, SECRET, name="static")
