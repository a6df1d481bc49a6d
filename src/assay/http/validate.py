"""An independent check of generated requests against the document, by ``jsonschema``.

Used to measure generation acceptance (the share of generated requests a
validator for the document accepts) without trusting the generator's own
checker: every parameter location and the body are validated against the
document's schemas with ``jsonschema``, references resolved through a
``referencing`` registry holding the whole document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.http.openapi import Document, Operation, escape


@dataclass(frozen=True)
class RequestError:
    """One reason the document rejects a request: where, the JSON pointer, and the keyword."""

    location: str
    pointer: str
    keyword: str


class RequestValidator:
    """Validates ``{path, query, header, cookie, body}`` values of an operation's requests."""

    def __init__(self, doc: Document) -> None:
        import jsonschema
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT4, DRAFT202012

        spec = DRAFT4 if doc.draft == 4 else DRAFT202012
        self._uri = "urn:assay:validated-openapi"
        self._spec = spec
        self._registry = Registry().with_resource(self._uri, Resource(contents=doc.raw, specification=spec))  # type: ignore[call-arg]  # an attrs class mypy misreads
        self._cls = jsonschema.Draft4Validator if doc.draft == 4 else jsonschema.Draft202012Validator
        self._cache: dict[str, Any] = {}

    def _validator(self, pointer: str) -> Any:
        if pointer not in self._cache:
            self._cache[pointer] = self._cls({"$ref": self._uri + pointer}, registry=self._registry)
        return self._cache[pointer]

    def errors(self, op: Operation, values: Any) -> list[RequestError]:
        """Every violation of ``values`` (as generated, before serialization)."""
        values = values if isinstance(values, dict) else {}
        out: list[RequestError] = []
        for location in ("path", "query", "header", "cookie"):
            given = values.get(location) if isinstance(values.get(location), dict) else {}
            for p in op.params(location):
                if p.name not in given:
                    if p.required:
                        out.append(RequestError(location, f"/{escape(p.name)}", "required"))
                    continue
                for e in self._param(op, p.location, p.name).iter_errors(given[p.name]):
                    out.append(RequestError(location, f"/{escape(p.name)}" + _pointer(e), e.validator))
            declared = {p.name for p in op.params(location)}
            out += [RequestError(location, f"/{escape(k)}", "undeclared") for k in given if k not in declared]
        if op.body_schema is not None:
            if "body" not in values:
                if op.body_required:
                    out.append(RequestError("body", "", "required"))
            else:
                pointer = f"{op.pointer}/requestBody/content/{escape(op.body_media or '')}/schema"
                for e in self._validator(pointer).iter_errors(values["body"]):
                    out.append(RequestError("body", _pointer(e), e.validator))
        return out

    def _param(self, op: Operation, location: str, name: str) -> Any:
        """A validator for one parameter's schema (resolved when parsed, so validated by value)."""
        key = f"param:{op.pointer}:{location}:{name}"
        if key not in self._cache:
            schema = next(p.schema for p in op.parameters if (p.location, p.name) == (location, name))
            self._cache[key] = _Inline(self._cls, schema, self._registry, self._uri, key, self._spec)
        return self._cache[key]


class _Inline:
    """A validator for a schema object that is not addressable by a pointer into the document."""

    def __init__(self, cls: Any, schema: Any, registry: Any, uri: str, key: str, spec: Any) -> None:
        from referencing import Resource

        inner_uri = uri + "-" + key.replace("#", "").replace(":", "-")
        reg = registry.with_resource(inner_uri, Resource(contents=_rebase(schema, uri), specification=spec))  # type: ignore[call-arg]  # attrs
        self.validator = cls({"$ref": inner_uri}, registry=reg)

    def iter_errors(self, value: Any) -> Any:
        return self.validator.iter_errors(value)


def _rebase(node: Any, uri: str) -> Any:
    """``node`` with document-local ``$ref``\\ s made absolute (the schema is registered apart)."""
    if isinstance(node, dict):
        return {
            k: (uri + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else _rebase(v, uri))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rebase(v, uri) for v in node]
    return node


def _pointer(error: Any) -> str:
    return "".join("/" + escape(str(p)) for p in error.absolute_path)
