"""Error shape: a JSON Schema (``jsonschema``) against the code that consumes validated data.

``ORDER_SCHEMA`` is what an API publishes; ``Order.from_json`` is the code
behind it.  A document the schema accepts must build an order, and one it
rejects must not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import jsonschema

import assay
from assay.oracles import error_shape

ORDER_SCHEMA = {
    "type": "object",
    "required": ["id", "items"],
    "properties": {
        "id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"},
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["sku", "qty"],
                "properties": {"sku": {"type": "string", "minLength": 1}, "qty": {"type": "integer", "minimum": 1}},
            },
        },
        "note": {"type": "string", "maxLength": 20},
    },
    "additionalProperties": False,
}

_VALIDATOR = jsonschema.Draft202012Validator(ORDER_SCHEMA)


@dataclass
class Order:
    id: str
    lines: list[tuple[str, int]]
    note: str = ""

    @classmethod
    def from_json(cls, doc: dict) -> Order:
        """Build an order; raises ``ValueError`` on anything it cannot use."""
        if not isinstance(doc, dict) or set(doc) - {"id", "items", "note"}:
            raise ValueError("not an order")
        oid = doc["id"]
        if not isinstance(oid, str) or "-" not in oid or not oid.split("-", 1)[1].isdigit():
            raise ValueError("bad id")
        lines = []
        for item in doc["items"]:
            qty = item["qty"]
            if not isinstance(qty, int) or qty < 1:
                raise ValueError("bad qty")
            lines.append((str(item["sku"]), qty))
        if not lines:
            raise ValueError("no lines")
        note = doc.get("note", "")
        if not isinstance(note, str) or len(note) > 20:
            raise ValueError("bad note")
        return cls(oid, lines, note)


@assay.target(
    expected=(ValueError, RecursionError),
    strategy="json@1",
    max_len=512,
    seeds=[
        b'{"id": "AB-12", "items": [{"sku": "x", "qty": 2}], "note": "gift"}',
        b'{"id": "ZZ-0", "items": [{"sku": "y", "qty": 1}, {"sku": "z", "qty": 30}]}',
    ],
)
def oracle_errorshape_schema(data: bytes) -> None:
    doc = json.loads(data)
    error_shape(
        _VALIDATOR.validate,
        Order.from_json,
        doc,
        name="order-schema~Order.from_json",
        invalid=(jsonschema.ValidationError,),
    )
