"""Requests for one operation, drawn from fuzz bytes.

The first bytes choose the mode: ``valid`` and ``adjacent`` requests come from
the operation's whole-request JSON Schema through :mod:`assay.gen.schema`
(adjacent: exactly one violation, somewhere in the parameters or the body);
``hostile`` is a valid request with one string parameter replaced by a value
from :data:`HOSTILE` (traversal, encoding and injection classics the schema
cannot know about); ``raw`` is a valid request whose serialized bytes (the
request-target, a header, the body) are then mutated byte by byte, where the
schema stops.  Everything is a function of the input bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from assay.gen import schema as schemagen
from assay.gen.bytesource import ByteSource
from assay.http.openapi import Document, Operation, ref_root, request_schema
from assay.oracles.http import SECRET_NAME

#: Share of requests per mode, out of 100, in the order valid, adjacent, hostile, raw.
MODE_WEIGHTS = (("valid", 35), ("adjacent", 20), ("edge", 15), ("hostile", 15), ("raw", 15))
#: Most byte edits a ``raw`` request gets.
MAX_RAW_EDITS = 8
#: Values a ``hostile`` request puts into one string parameter.
HOSTILE: tuple[str, ...] = (
    f"../{SECRET_NAME}",
    f"../../{SECRET_NAME}",
    f"a/../../{SECRET_NAME}",
    f"./../{SECRET_NAME}",
    f"a/b/../../../{SECRET_NAME}",
    f"..\\{SECRET_NAME}",
    f"/{SECRET_NAME}",
    "..",
    "",
    " ",
    "0",
    "-1",
    "99999999999999999999",
    "1e999",
    "NaN",
    "null",
    "true",
    "%",
    "%00",
    "\x00",
    "a\r\nX-Injected: 1",
    "'\"",
    "<script>",
    "\u202e\ufeff",
    "\udcff",
    "x" * 4096,
)
#: Values an unbounded integer parameter takes in an ``edge`` request (ids of seeded data, zero, -1).
SMALL_INTEGERS: tuple[int, ...] = (0, 1, 2, -1)
#: Tokens a ``raw`` edit may insert.
RAW_TOKENS: tuple[bytes, ...] = (
    b"%",
    b"%2f",
    b"%2F",
    b"%00",
    b"..",
    b"/",
    b"\r\n",
    b'"',
    b"{",
    b"}",
    b"[",
    b"\\u0000",
    b"\xff",
    b"-1",
    b"1e999",
    b"NaN",
    b";",
    b"=",
    b"&",
    b",",
)


@dataclass
class Request:
    """One concrete request, ready for a caller, and how it was made."""

    method: str
    target: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    operation: str = ""
    mode: str = "valid"
    violation: str | None = None
    values: Any = None
    #: True when the request may no longer reach the operation's route (its path was mutated or
    #: holds a violation), so an undocumented 404/405/3xx says nothing about the operation.
    rerouted: bool = False

    def describe(self) -> dict[str, Any]:
        """Plain data for an artifact or a report."""
        return {
            "operation": self.operation,
            "mode": self.mode,
            "violation": self.violation,
            "method": self.method,
            "target": self.target,
            "headers": self.headers,
            "body": self.body.decode("utf-8", "backslashreplace")[:512],
        }


def text(value: Any) -> str:
    """A parameter value as it travels in a URL or header (JSON for structures)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"))


def pct(value: str) -> str:
    """Percent-encode ``value`` as one URL component (``/`` too; lone surrogates kept as their UTF-8-like bytes)."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def latin1(value: str) -> str:
    """A header value's text as the bytes a server would hand on (UTF-8 read as Latin-1)."""
    return value.encode("utf-8", "surrogatepass").decode("latin-1")


def serialize(op: Operation, values: Any, *, media: str | None = None) -> Request:
    """The request for ``op`` with generated ``values`` (``{path, query, header, cookie, body}``)."""
    values = values if isinstance(values, dict) else {}
    path = op.path
    pv = values.get("path") if isinstance(values.get("path"), dict) else {}
    for p in op.params("path"):
        path = path.replace("{" + p.name + "}", pct(text(pv.get(p.name, ""))))
    query: list[str] = []
    qv = values.get("query") if isinstance(values.get("query"), dict) else {}
    for name, value in qv.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            query.append(f"{pct(name)}={pct(text(item))}")
    target = path + ("?" + "&".join(query) if query else "")
    headers: list[tuple[str, str]] = []
    hv = values.get("header") if isinstance(values.get("header"), dict) else {}
    for name, value in hv.items():
        headers.append((latin1(name), latin1(text(value))))
    cv = values.get("cookie") if isinstance(values.get("cookie"), dict) else {}
    if cv:
        headers.append(("Cookie", latin1("; ".join(f"{k}={text(v)}" for k, v in cv.items()))))
    body = b""
    if "body" in values:
        kind = media or op.body_media or "application/json"
        if kind.startswith("multipart/form-data") and isinstance(values["body"], dict):
            body, kind = _multipart(values["body"])
        elif kind.startswith("application/x-www-form-urlencoded") and isinstance(values["body"], dict):
            body = "&".join(f"{pct(k)}={pct(text(v))}" for k, v in values["body"].items()).encode()
        else:
            body = json.dumps(values["body"], separators=(",", ":"), ensure_ascii=False, allow_nan=True).encode(
                "utf-8", "surrogatepass"
            )
        headers.append(("Content-Type", kind))
    return Request(op.method.upper(), target, headers, body, op.label, values=values)


#: Boundary of generated multipart bodies (fixed, so requests are a function of the input).
BOUNDARY = "assay-boundary-7d1f"


def _multipart(fields: dict[str, Any]) -> tuple[bytes, str]:
    parts = []
    for name, value in fields.items():
        disposition = f'form-data; name="{name}"'
        if name in ("file", "image", "audio"):
            disposition += f'; filename="{name}.bin"'
        parts.append(
            f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
            + text(value).encode("utf-8", "surrogatepass")
            + b"\r\n"
        )
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode(), f"multipart/form-data; boundary={BOUNDARY}"


def _mode(source: ByteSource) -> str:
    roll = source.draw_int(0, 99)
    for name, weight in MODE_WEIGHTS:
        if roll < weight:
            return name
        roll -= weight
    return MODE_WEIGHTS[0][0]


def _schema_of(doc: Document, op: Operation) -> tuple[dict[str, Any], dict[str, Any]]:
    """The operation's whole-request schema and the part of the document its references reach."""
    cached = doc.cache.get(op.pointer)
    if cached is None:
        schema = request_schema(op)
        cached = doc.cache[op.pointer] = (schema, ref_root(doc.raw, schema))
    return cached


def generate(
    doc: Document, op: Operation, data: bytes, *, mode: str | None = None, numbers: tuple[int, ...] = ()
) -> Request:
    """The request for ``op`` that ``data`` decodes to (``mode`` forces one instead of drawing it).

    ``numbers`` (constants of the app's handlers, :mod:`assay.http.numbers`) are tried
    often in integer and number fields.
    """
    source = ByteSource(data)
    mode = mode or _mode(source)
    pick = source.draw_int(0, 255)
    hostile_index = source.draw_int(0, 255)
    hostile = HOSTILE[hostile_index % len(HOSTILE)]
    edits = source.draw_raw(3 * source.draw_int(0, MAX_RAW_EDITS)) if mode == "raw" else b""
    rest = data[source.pos :]
    schema, root = _schema_of(doc, op)
    gen_mode = "adjacent" if mode == "adjacent" else "valid"
    violation = None
    try:
        made = schemagen.from_bytes(schema, rest, gen_mode, root=root, draft=doc.draft, numbers=numbers)
    except schemagen.Unsatisfiable:
        try:
            made = schemagen.from_bytes(schema, rest, "valid", root=root, draft=doc.draft, numbers=numbers)
        except schemagen.Unsatisfiable:
            made = schemagen.Generated({}, "valid")
        mode = "valid" if mode == "adjacent" else mode
    values = made.value
    if made.mode == "adjacent":
        violation = f"{made.violation}@{made.path}"
    if mode == "hostile":
        values, where = _plant(op, values, hostile, pick)
        violation = where
    elif mode == "edge":
        values, violation = _edge(op, values, pick, hostile_index, numbers)
    request = serialize(op, values)
    request.mode, request.violation = mode, violation
    path_values = pv if isinstance(values, dict) and isinstance(pv := values.get("path"), dict) else {}
    request.rerouted = bool(
        violation and (violation.startswith("path:") or "@/path" in violation or violation.endswith("@"))
    ) or any(text(path_values.get(p.name)) == "" for p in op.params("path"))
    if mode == "raw":
        request.rerouted = mutate(request, ByteSource(edits), pick) == "target" or request.rerouted
    return request


def _plant(op: Operation, values: Any, hostile: str, pick: int) -> tuple[Any, str | None]:
    """``values`` with the ``pick``-th parameter slot set to ``hostile``."""
    slots = [(p.location, p.name) for p in op.parameters if p.location in ("path", "query", "header")]
    if not slots:
        return values, None
    location, name = slots[pick % len(slots)]
    values = dict(values) if isinstance(values, dict) else {}
    values[location] = {**(values.get(location) or {}), name: hostile}
    return values, f"{location}:{name}"


def extremes(schema: Any, numbers: tuple[int, ...] = ()) -> list[Any]:
    """Values at the edges of what ``schema`` (a parameter's inline schema) allows; for an
    unbounded integer, small ones and ``numbers`` (the handlers' constants)."""
    if not isinstance(schema, dict):
        return []
    out: list[Any] = []
    kinds = t if isinstance(t := schema.get("type"), list) else [t]
    integer = "integer" in kinds
    for key, step in (("minimum", 0), ("maximum", 0), ("exclusiveMinimum", 1), ("exclusiveMaximum", -1)):
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            value = bound + step if integer or step == 0 else bound + step * 1e-9
            out.append(int(value) if integer else value)
    if integer and not out and "enum" not in schema:
        out += list(SMALL_INTEGERS) + [n for n in numbers if n not in SMALL_INTEGERS]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        out += [schema["enum"][0], schema["enum"][-1]]
    if isinstance(schema.get("maxLength"), int) and "pattern" not in schema and schema["maxLength"] <= 4096:
        out.append("a" * schema["maxLength"])
    if isinstance(schema.get("minLength"), int) and "pattern" not in schema and schema["minLength"] <= 4096:
        out.append("a" * schema["minLength"])
    return out


def _edge(op: Operation, values: Any, pick: int, which: int, numbers: tuple[int, ...] = ()) -> tuple[Any, str | None]:
    """``values`` with some parameters set to one of their :func:`extremes` (bit ``k`` of ``pick``
    chooses parameter ``k``; ``which`` picks among each one's extremes)."""
    slots = [(p.location, p.name, extremes(p.schema, numbers)) for p in op.parameters]
    slots = [s for s in slots if s[2]]
    if not slots:
        return values, None
    chosen = [s for k, s in enumerate(slots) if pick >> (k % 8) & 1] or [slots[pick % len(slots)]]
    values = dict(values) if isinstance(values, dict) else {}
    for k, (location, name, options) in enumerate(chosen):
        values[location] = {**(values.get(location) or {}), name: options[(which >> k) % len(options)]}
    return values, "edge:" + ",".join(f"{loc}:{name}" for loc, name, _ in chosen)


def mutate(request: Request, edits: ByteSource, pick: int) -> str:
    """Apply byte edits to one serialized part of ``request`` (in place); returns the part's name."""
    parts = ["target", "body"] + [f"header{i}" for i in range(len(request.headers))]
    part = parts[pick % len(parts)]
    if part == "target":
        raw = request.target.encode("latin-1", "replace")
    elif part == "body":
        raw = request.body
    else:
        raw = request.headers[int(part[6:])][1].encode("latin-1", "replace")
    buf = bytearray(raw)
    while not edits.exhausted:
        op, where, value = edits.draw_int(0, 4), edits.draw_int(0, 255), edits.draw_int(0, 255)
        at = where % (len(buf) + 1)
        if op == 0 and buf:
            buf[min(at, len(buf) - 1)] = value
        elif op == 1:
            buf[at:at] = bytes([value])
        elif op == 2 and buf:
            del buf[min(at, len(buf) - 1)]
        elif op == 3:
            buf[at:at] = RAW_TOKENS[value % len(RAW_TOKENS)]
        elif op == 4:
            del buf[at:]
    if part == "target":
        new = bytes(buf).decode("latin-1")
        request.target = new if new.startswith("/") else "/" + new
    elif part == "body":
        request.body = bytes(buf)
    else:
        i = int(part[6:])
        request.headers[i] = (request.headers[i][0], bytes(buf).decode("latin-1"))
    return part
