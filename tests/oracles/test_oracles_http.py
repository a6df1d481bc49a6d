"""The HTTP oracles: an in-process WSGI app, ``http-5xx`` and ``path-escape``."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

import oracle_subjects as subj
import pytest

from assay.core.observe import InvariantViolation, OracleFailure, feature
from assay.engine.execute import run_input
from assay.gen.bytesource import ByteSource
from assay.harness.define import make_target
from assay.oracles import http_5xx, no_5xx, no_secret, plant_secret, wsgi_call
from assay.oracles.http import SECRET_NAME

SUBJECTS = str(Path(subj.__file__).resolve())
#: Generated cases per campaign (seed 1 finds the escape at case ~2300).
CASES = 4000

_TMP = Path(tempfile.mkdtemp(prefix="assay-http-oracle-"))
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
ROOT = _TMP / "www"
ROOT.mkdir()
(ROOT / "a.txt").write_bytes(b"hello")
(ROOT / "sub").mkdir()
(ROOT / "sub" / "b.txt").write_bytes(b"world")
SECRET = plant_secret(ROOT)
LEAKY = subj.make_file_app(str(ROOT), confine=False)
CONFINED = subj.make_file_app(str(ROOT), confine=True)
#: Path segments and query values the structured request generator draws from.
SEGMENTS = ["a.txt", "sub", "b.txt", "..", SECRET_NAME, "."]
VALUES = ["1", "-2", "30", "", "x", "1_0", "--1", "\u00b2"]
SEEDS = [b"\x00\x00", b"\x00\x01\x01\x02", b"\x01\x00\x01"]  # /files/a.txt, /files/sub/b.txt, /sum?a=1&b=-2


def _request(data: bytes) -> tuple[str, str]:
    """A GET request drawn from the bytes: a file path from SEGMENTS or a sum from VALUES."""
    src = ByteSource(data)
    if src.draw_int(0, 1) == 0:
        segments = src.draw_list(lambda s: s.draw_choice(SEGMENTS), min_size=1, max_size=4)
        # How far above the root the path climbs: a gradient towards an escape
        # that branch coverage of the app cannot give (every miss is one 404).
        depth = lowest = 0
        for seg in segments:
            depth += -1 if seg == ".." else 0 if seg == "." else 1
            lowest = min(lowest, depth)
        feature("files.lowest-depth", lowest)
        return "GET", "/files/" + "/".join(segments)
    a, b = src.draw_choice(VALUES), src.draw_choice(VALUES)
    return "GET", f"/sum?a={quote(a)}&b={quote(b)}"


def escape_leaky(data: bytes) -> None:
    no_secret(wsgi_call(LEAKY, *_request(data)), SECRET, name="files")


def escape_confined(data: bytes) -> None:
    no_secret(wsgi_call(CONFINED, *_request(data)), SECRET, name="files")


def status_leaky(data: bytes) -> None:
    http_5xx(LEAKY, *_request(data), name="file-app")


def status_confined(data: bytes) -> None:
    http_5xx(CONFINED, *_request(data), name="file-app")


def _target(fn):
    return make_target(fn, name=fn.__name__, seeds=SEEDS, max_len=64, sources=[SUBJECTS])


@pytest.mark.parametrize(
    "broken, correct, signature",
    [
        (escape_leaky, escape_confined, "path-escape:files/body"),
        (status_leaky, status_confined, "http-5xx:file-app/500"),
    ],
    ids=["path-escape", "http-5xx"],
)
def test_http_oracles_fire_on_the_broken_app_only(campaign, tmp_path, broken, correct, signature):
    for seed in SEEDS:
        assert run_input(_target(broken), seed) is None
    (found,) = campaign(
        [_target(broken)], cases=CASES, seed=1, corpus=tmp_path / "c1", artifacts=tmp_path / "a1"
    ).targets
    assert [f.signature for f in found.findings] == [signature]
    (clean,) = campaign(
        [_target(correct)], cases=CASES, seed=1, corpus=tmp_path / "c2", artifacts=tmp_path / "a2"
    ).targets
    assert clean.findings == []


def test_wsgi_call_builds_a_pep3333_environ_and_collects_the_body():
    seen = {}

    def app(environ, start_response):
        seen.update(environ)
        write = start_response("201 Created", [("X-A", "1")])
        write(b"early ")
        return iter([b"late", b"!"])

    response = wsgi_call(app, "POST", "/a%20b/%C3%A9?x=%41", [("Content-Type", "text/plain"), ("X-Y", "z")], b"body")
    assert (response.status, response.body, response.header("x-a")) == (201, b"early late!", "1")
    assert seen["PATH_INFO"] == "/a b/\xc3\xa9"  # percent-decoded, read as Latin-1 (PEP 3333)
    assert seen["QUERY_STRING"] == "x=%41"
    assert seen["CONTENT_TYPE"] == "text/plain" and seen["CONTENT_LENGTH"] == "4"
    assert seen["HTTP_X_Y"] == "z" and seen["wsgi.input"].read() == b"body"


def test_wsgi_protocol_violations_are_invariants():
    def silent(environ, start_response):
        return [b""]

    def bad_status(environ, start_response):
        start_response("OK", [])
        return [b""]

    with pytest.raises(InvariantViolation) as info:
        wsgi_call(silent)
    assert info.value.kind == "no-start-response"
    with pytest.raises(InvariantViolation) as info:
        wsgi_call(bad_status)
    assert info.value.kind == "bad-status"


def test_app_exceptions_propagate_as_panics():
    def crashing(environ, start_response):
        raise KeyError("boom")

    def target(data: bytes) -> None:
        http_5xx(crashing, "GET", "/")

    verdict = run_input(make_target(target, name="t"), b"")
    assert verdict.oracle == "panic" and verdict.key.startswith("builtins.KeyError@")


def test_signatures_per_route_and_status_and_secret_kinds():
    def status(code):
        def app(environ, start_response):
            start_response(f"{code} X", [("Set-Cookie", environ["PATH_INFO"])])
            return [b""]

        return app

    with pytest.raises(OracleFailure) as info:
        no_5xx(wsgi_call(status(503)), name="route-a")
    assert (info.value.oracle, info.value.name, info.value.kind) == ("http-5xx", "route-a", "503")
    assert no_5xx(wsgi_call(status(404))).status == 404
    token = b"SECRET-XYZ"
    with pytest.raises(OracleFailure) as info:
        no_secret(wsgi_call(status(200), "GET", b"/" + token), token)
    assert (info.value.oracle, info.value.kind) == ("path-escape", "header")


def test_plant_secret_is_outside_the_root_and_deterministic(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    first = plant_secret(root)
    assert first.path.parent == tmp_path and first.path.read_bytes().startswith(first.token)
    assert plant_secret(root) == first
