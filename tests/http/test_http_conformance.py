"""The response oracles: http-5xx with documented exclusions, conformance keys, path-escape, panics."""

from __future__ import annotations

import pytest
from http_apps import DOC, thing_wsgi

from assay.core.observe import OracleFailure
from assay.engine.execute import run
from assay.http import http_target
from assay.http.conformance import Conformance
from assay.http.openapi import parse
from assay.oracles.http import wsgi_call


def _judge(path: str, conformance: Conformance | None = None, op_label: str = "getThing"):
    doc = parse(DOC)
    op = next(op for op in doc.operations if op.label == op_label)
    conformance = conformance or Conformance(doc)
    conformance.judge(op, wsgi_call(thing_wsgi, "GET", path), "GET")


def test_conforming_and_documented_responses_pass():
    _judge("/things/1")
    _judge("/things/99")  # 404 is documented, without content


@pytest.mark.parametrize(
    "path, oracle, key",
    [
        ("/things/2", "error-shape", "getThing/body:/name:minLength"),
        ("/things/3", "error-shape", "getThing/status:418"),
        ("/things/4", "error-shape", "getThing/content-type:200"),
        ("/things/5", "http-5xx", "getThing/500"),
    ],
)
def test_findings_name_operation_and_pointer_class(path, oracle, key):
    with pytest.raises(OracleFailure) as info:
        _judge(path)
    assert (info.value.oracle, f"{info.value.name}/{info.value.kind}") == (oracle, key)


def test_array_indices_fold_into_the_pointer_class():
    doc = parse(
        {
            **DOC,
            "components": {
                "schemas": {
                    "Thing": {
                        "type": "object",
                        "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 3}}},
                    }
                }
            },
        }
    )
    op = next(op for op in doc.operations if op.label == "getThing")
    with pytest.raises(OracleFailure) as info:
        Conformance(doc).judge(op, wsgi_call(thing_wsgi, "GET", "/things/2"), "GET")
    assert info.value.kind == "body:/tags/*:maxLength"


def test_documented_and_allowed_5xx_are_not_findings():
    _judge("/health", op_label="health")  # 503 is documented for health
    _judge("/things/5", Conformance(parse(DOC), allow_5xx=("getThing:500",)))
    with pytest.raises(OracleFailure):
        _judge("/things/5", Conformance(parse(DOC), allow_5xx=("health:500",)))


def test_target_runs_path_escape_and_panic(tmp_path):
    import os

    served = tmp_path / "served"
    served.mkdir()

    def files(environ, start_response):
        name = environ["PATH_INFO"][len("/f/") :]
        if "%" in name:
            raise ZeroDivisionError("planted")
        path = os.path.normpath(os.path.join(served, name))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [open(path, "rb").read() if os.path.isfile(path) else b""]

    surface = http_target(files, routes=["GET /f/{name}"], served_root=served, register=False, name="files_t")
    target = surface.assay_target
    assert target.seeds == (b"\x00",)
    import random

    rng = random.Random(0)
    verdicts = {}
    for _ in range(3000):
        result = run(target, rng.randbytes(rng.randint(1, 24)))
        if result.verdict:
            verdicts.setdefault(result.verdict.oracle, result.verdict)
    assert verdicts["path-escape"].key == "GET /f/{name}/body"
    assert verdicts["panic"].key.startswith("builtins.ZeroDivisionError@test_http_conformance:")
