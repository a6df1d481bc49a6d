"""OpenAPI documents into operations and whole-request schemas; safe-by-default selection."""

from __future__ import annotations

import pytest
from http_apps import DOC

from assay.core.errors import ConfigError
from assay.http.openapi import OpenAPIError, parse, request_schema
from assay.http.select import matches, select


def test_parse_indexes_operations_and_normalises_nullable():
    doc = parse(DOC)
    assert doc.draft == 4
    labels = sorted(op.label for op in doc.operations)
    assert labels == ["createThing", "deleteThing", "getThing", "health"]
    get = next(op for op in doc.operations if op.label == "getThing")
    assert [(p.location, p.name, p.required) for p in get.parameters] == [("path", "id", True), ("query", "q", False)]
    assert get.params("query")[0].schema == {"type": ["string", "null"]}
    assert get.pointer == "#/paths/~1things~1{id}/get"
    assert DOC["paths"]["/things/{id}"]["get"]["parameters"][1]["schema"] == {"type": "string", "nullable": True}


def test_request_schema_has_every_location():
    op = next(op for op in parse(DOC).operations if op.label == "createThing")
    schema = request_schema(op)
    assert schema["required"] == ["body"] and schema["properties"]["body"] == {"$ref": "#/components/schemas/Thing"}


def test_swagger_2_and_missing_files_are_refused(tmp_path):
    with pytest.raises(OpenAPIError, match="only OpenAPI 3.x"):
        parse({"swagger": "2.0", "paths": {}})
    with pytest.raises(OpenAPIError, match="does not exist"):
        parse(tmp_path / "nope.json")


def test_only_safe_methods_run_unless_allowed():
    ops = parse(DOC).operations
    assert sorted(op.label for op in select(ops)) == ["getThing", "health"]
    assert "createThing" in [op.label for op in select(ops, allow=["createThing"])]
    assert "createThing" in [op.label for op in select(ops, allow=["POST /things"])]
    assert "deleteThing" in [op.label for op in select(ops, allow=["tag:admin"])]
    assert "deleteThing" not in [op.label for op in select(ops, allow=["tag:things"])]
    assert [op.label for op in select(ops, exclude=["/things*"])] == ["health"]
    assert [op.label for op in select(ops, allow=["tag:*"], exclude=["tag:things", "/health"])] == ["deleteThing"]
    with pytest.raises(ConfigError, match="no operation of the app may run"):
        select(ops, exclude=["*", "/*"])


def test_rule_forms():
    get = next(op for op in parse(DOC).operations if op.label == "getThing")
    assert matches(get, "get*") and matches(get, "GET /things/*") and not matches(get, "POST /things/*")
    assert matches(get, "tag:thi*") and not matches(get, "tag:admin")


def test_a_dangling_reference_is_a_config_error_at_creation():
    from http_apps import thing_wsgi

    from assay.http import http_target

    broken = {
        **DOC,
        "paths": {
            "/x/{id}": {
                "get": {
                    "operationId": "getX",
                    "parameters": [
                        {
                            "name": "id",
                            "in": "path",
                            "required": True,
                            "schema": {"$ref": "#/components/schemas/Missing"},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    with pytest.raises(ConfigError, match="operation getX: cannot generate"):
        http_target(thing_wsgi, broken, register=False, name="broken_t")
