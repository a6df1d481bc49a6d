"""OpenAPI 3.x documents: loading, normalising, and the operations they declare.

An :class:`Operation` is one (method, path) pair with what a generator needs
(parameters by location, the JSON request body) and what the conformance oracle
needs (documented statuses, content types and response schemas).  OpenAPI 3.0
schema objects are JSON Schema draft 4 plus ``nullable``; 3.0 documents are
normalised once (``nullable: true`` becomes a ``null`` alternative) so both the
generator and ``jsonschema`` read them as plain draft 4.  3.1 documents are
JSON Schema 2020-12 already.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError

#: Methods an OpenAPI path item may declare.
METHODS = ("get", "head", "options", "put", "post", "delete", "patch", "trace")
#: Parameter locations assay generates; ``cookie`` parameters are sent as a Cookie header.
LOCATIONS = ("path", "query", "header", "cookie")


class OpenAPIError(ConfigError):
    """An OpenAPI document that cannot be read or is not OpenAPI 3.x."""


@dataclass(frozen=True)
class Parameter:
    """One declared parameter: name, location, whether required, and its schema."""

    name: str
    location: str
    required: bool
    schema: Any
    style: str | None = None
    explode: bool | None = None


@dataclass
class Operation:
    """One operation of the document (or one discovered route)."""

    method: str
    path: str
    operation_id: str
    tags: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    body_schema: Any = None
    body_required: bool = False
    body_media: str | None = None
    responses: dict[str, Any] = field(default_factory=dict)
    pointer: str = ""
    links: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``operationId``, or ``METHOD /path`` when the document gives none."""
        return self.operation_id or f"{self.method.upper()} {self.path}"

    def params(self, location: str) -> list[Parameter]:
        return [p for p in self.parameters if p.location == location]


@dataclass
class Document:
    """A normalised OpenAPI document, its JSON Schema draft, and its operations."""

    raw: dict[str, Any]
    draft: int
    operations: list[Operation]
    #: Per-operation request schemas and reference roots, built on first use.
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def version(self) -> str:
        return str(self.raw.get("openapi", ""))


def load_document(source: str | os.PathLike[str] | Mapping[str, Any] | Any) -> dict[str, Any]:
    """The document as a dict: from a path (JSON or YAML), a dict, or an app.

    An app offering ``openapi()`` (FastAPI) is asked for its own document.
    """
    if isinstance(source, Mapping):
        return dict(source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise OpenAPIError(f"OpenAPI document {path} does not exist; pass an existing file or a dict")
        text = path.read_text("utf-8")
        if path.suffix in (".yaml", ".yml"):
            try:
                import yaml  # type: ignore[import-untyped]
            except ImportError:
                raise OpenAPIError(f"{path} is YAML; install PyYAML or pass the document as JSON") from None
            return yaml.safe_load(text)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise OpenAPIError(f"{path} is not valid JSON ({exc}); pass a JSON or YAML OpenAPI document") from None
    openapi = getattr(source, "openapi", None)
    if callable(openapi):
        return dict(openapi())
    raise OpenAPIError(
        f"cannot read an OpenAPI document from {type(source).__name__}; pass a path, a dict or an app "
        "with an openapi() method"
    )


def _nullable(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as a draft 4 ``null`` alternative (recursively, in place)."""
    if isinstance(node, dict):
        for value in node.values():
            _nullable(value)
        if node.get("nullable") is True:
            node.pop("nullable")
            kind = node.get("type")
            if isinstance(kind, str):
                node["type"] = [kind, "null"]
            elif isinstance(kind, list) and "null" not in kind:
                kind.append("null")
            if isinstance(node.get("enum"), list) and None not in node["enum"]:
                node["enum"].append(None)
    elif isinstance(node, list):
        for value in node:
            _nullable(value)
    return node


def escape(token: str) -> str:
    """One JSON pointer token."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve(doc: Mapping[str, Any], node: Any, depth: int = 0) -> Any:
    """``node`` with a top-level ``$ref`` (parameters, bodies, responses) followed within ``doc``."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 32:
        ref = node["$ref"]
        if not ref.startswith("#/"):
            raise OpenAPIError(f"$ref {ref!r} points outside the document; assay resolves references within it")
        target: Any = doc
        for raw in ref[2:].split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or token not in target:
                raise OpenAPIError(f"$ref {ref!r} does not resolve in the document")
            target = target[token]
        node, depth = target, depth + 1
    return node


def _operation_id(method: str, path: str) -> str:
    return method + re.sub(r"[^0-9A-Za-z]+", "_", path).rstrip("_")


def parse(source: Any) -> Document:
    """Read, normalise and index ``source`` (see :func:`load_document`)."""
    raw = copy.deepcopy(load_document(source))
    version = str(raw.get("openapi", ""))
    if not version.startswith("3."):
        found = f"swagger {raw['swagger']}" if "swagger" in raw else (version or "no 'openapi' field")
        raise OpenAPIError(f"only OpenAPI 3.x documents are supported ({found}); convert Swagger 2.0 documents first")
    draft = 2020 if version.startswith("3.1") else 4
    if draft == 4:
        _nullable(raw)
    operations: list[Operation] = []
    for path, item in sorted((raw.get("paths") or {}).items()):
        item = resolve(raw, item)
        if not isinstance(item, dict):
            continue
        shared = [resolve(raw, p) for p in item.get("parameters", [])]
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            operations.append(_operation(raw, path, method, op, shared))
    return Document(raw, draft, operations)


def _operation(raw: dict, path: str, method: str, op: dict, shared: list[dict]) -> Operation:
    params: dict[tuple[str, str], Parameter] = {}
    for p in shared + [resolve(raw, p) for p in op.get("parameters", [])]:
        if not isinstance(p, dict) or p.get("in") not in LOCATIONS or not isinstance(p.get("name"), str):
            continue
        schema = p.get("schema")
        if schema is None and isinstance(p.get("content"), dict) and p["content"]:
            schema = next(iter(p["content"].values())).get("schema")
        params[(p["in"], p["name"])] = Parameter(
            p["name"],
            p["in"],
            bool(p.get("required")) or p["in"] == "path",
            schema if schema is not None else {},
            p.get("style"),
            p.get("explode"),
        )
    body_schema = None
    body_required = False
    media = None
    body = resolve(raw, op.get("requestBody")) if op.get("requestBody") else None
    if isinstance(body, dict) and isinstance(body.get("content"), dict):
        content = body["content"]
        media = next(
            (m for m in content if m.split(";")[0].strip() == "application/json"),
            next((m for m in content if m.endswith("+json")), next(iter(content), None)),
        )
        if media is not None:
            body_schema = (content[media] or {}).get("schema", {})
            body_required = bool(body.get("required"))
    responses = {str(k): resolve(raw, v) for k, v in (op.get("responses") or {}).items()}
    links = {}
    for status, response in responses.items():
        if isinstance(response, dict) and isinstance(response.get("links"), dict):
            links[status] = {name: resolve(raw, link) for name, link in response["links"].items()}
    return Operation(
        method=method,
        path=path,
        operation_id=str(op.get("operationId") or _operation_id(method, path)),
        tags=tuple(str(t) for t in op.get("tags") or ()),
        parameters=tuple(params.values()),
        body_schema=body_schema,
        body_required=body_required,
        body_media=media,
        responses=responses,
        pointer=f"#/paths/{escape(path)}/{method}",
        links=links,
    )


def request_schema(op: Operation) -> dict[str, Any]:
    """One JSON Schema for a whole request of ``op``: ``{path, query, header, cookie, body}``.

    Generating from it (with the document as root) gives every parameter and the
    body in one draw, and adjacent mode puts exactly one violation somewhere in it.
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    for location in LOCATIONS:
        params = op.params(location)
        if not params:
            continue
        properties[location] = {
            "type": "object",
            "properties": {p.name: p.schema for p in params},
            "required": [p.name for p in params if p.required],
            "additionalProperties": False,
        }
        required.append(location)
    if op.body_schema is not None:
        properties["body"] = op.body_schema
        if op.body_required:
            required.append("body")
    # The top level stays open: an extra "location" would be a violation no HTTP request can carry.
    return {"type": "object", "properties": properties, "required": required}


def iter_statuses(op: Operation) -> Iterable[str]:
    return op.responses.keys()


def ref_root(raw: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    """The part of document ``raw`` that ``schema``'s ``#/...`` references reach (transitively).

    Generating with it as the ``$ref`` root resolves exactly as with the whole
    document, without indexing every path and response of a large document on
    each request.
    """
    root: dict[str, Any] = {}
    seen: set[str] = set()
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
                seen.add(ref)
                tokens = [t.replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/")]
                source: Any = raw
                target = root
                for i, token in enumerate(tokens):
                    if not isinstance(source, dict) or token not in source:
                        break
                    source = source[token]
                    if i == len(tokens) - 1:
                        target[token] = source
                        todo.append(source)
                    else:
                        target = target.setdefault(token, {})
            todo.extend(v for k, v in node.items() if k != "$ref")
        elif isinstance(node, list):
            todo.extend(node)
    return root
