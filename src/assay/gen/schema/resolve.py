"""The documents a schema can refer to: drafts, base URIs, ``$ref`` and anchor resolution."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from assay.core.errors import ConfigError
from assay.gen.schema.model import ROOT_URI


def draft_of(schema: Any) -> int:
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    if not isinstance(uri, str) or not uri:
        return 2020
    for marker, draft in (
        ("draft-03", 3),
        ("draft-04", 4),
        ("draft-06", 6),
        ("draft-07", 7),
        ("2019-09", 2019),
        ("2020-12", 2020),
    ):
        if marker in uri:
            return draft
    return 2020


_NOT_SCHEMA = frozenset(
    (
        "enum",
        "const",
        "default",
        "examples",
        "example",
        "required",
        "type",
        "description",
        "title",
        "$comment",
        "format",
        "pattern",
    )
)


class SchemaDocs:
    """The documents a schema can refer to, indexed by URI and anchor."""

    def __init__(self, root: Any, draft: int, resources: Mapping[str, Any] | None) -> None:
        self.root = root
        self.draft = draft
        self.resources = resources
        self.by_uri: dict[str, Any] = {}
        self.anchors: dict[tuple[str, str], Any] = {}
        self.dynamic: dict[tuple[str, str], Any] = {}
        self.base = self._id_base(root, ROOT_URI)
        self._index(root, self.base)
        for uri, contents in (resources or {}).items():
            uri = urldefrag(uri)[0]
            self._index(contents, self._id_base(contents, uri))
            self.by_uri.setdefault(uri, contents)

    def _id_key(self) -> str:
        return "id" if self.draft == 4 else "$id"

    def _id_base(self, schema: Any, base: str) -> str:
        if isinstance(schema, dict):
            ident = schema.get(self._id_key())
            if isinstance(ident, str) and not ident.startswith("#"):
                return urldefrag(_join(base, ident))[0]
        return base

    def _index(self, schema: Any, base: str, depth: int = 0) -> None:
        if depth > 64:
            return
        if isinstance(schema, dict):
            if not (self.draft <= 7 and "$ref" in schema):
                ident = schema.get(self._id_key())
                if isinstance(ident, str):
                    if ident.startswith("#"):
                        self.anchors[(base, ident[1:])] = schema
                    else:
                        base = urldefrag(_join(base, ident))[0]
                        self.by_uri.setdefault(base, schema)
            if depth == 0:
                self.by_uri.setdefault(base, schema)
            anchor = schema.get("$anchor")
            if isinstance(anchor, str):
                self.anchors[(base, anchor)] = schema
            dynamic = schema.get("$dynamicAnchor")
            if isinstance(dynamic, str):
                self.anchors.setdefault((base, dynamic), schema)
                self.dynamic[(base, dynamic)] = schema
            for key, value in schema.items():
                if key not in _NOT_SCHEMA:
                    self._index(value, base, depth + 1)
        elif isinstance(schema, list):
            for item in schema:
                self._index(item, base, depth + 1)

    def resolve(self, ref: str, base: str) -> tuple[Any, str]:
        """The schema ``ref`` points to from ``base``, and its own base URI."""
        base = urldefrag(base)[0]
        full = base + ref if ref.startswith("#") else _join(base, ref)
        uri, fragment = urldefrag(full)
        if uri not in self.by_uri:
            raise ConfigError(
                f"$ref {ref!r} (resolved to {uri!r}) is not in the schema document; assay resolves "
                "references within the document only: pass the document that holds it as root= "
                "or its contents in resources={uri: schema}"
            )
        target = self.by_uri[uri]
        if not fragment:
            return target, uri
        if fragment.startswith("/"):
            node = target
            node_base = uri
            for raw in fragment.split("/")[1:]:
                token = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(node, list) and token.isdigit() and int(token) < len(node):
                    node = node[int(token)]
                elif isinstance(node, dict) and token in node:
                    node = node[token]
                    node_base = self._id_base(node, node_base)
                else:
                    raise ConfigError(f"$ref {ref!r}: no {token!r} at that point of the document; fix the pointer")
            return node, node_base
        key = (uri, fragment)
        if key in self.anchors:
            return self.anchors[key], uri
        raise ConfigError(f"$ref {ref!r}: anchor {fragment!r} is not declared in {uri!r}")

    def dynamic_resolve(self, ref: str, base: str) -> tuple[Any, str]:
        """``$dynamicRef``/``$recursiveRef``: the entry document's anchor wins when it has one."""
        fragment = ref[1:] if ref.startswith("#") else urldefrag(ref)[1]
        if (self.base, fragment) in self.dynamic:
            return self.dynamic[(self.base, fragment)], self.base
        return self.resolve(ref, base)


def _join(base: str, ref: str) -> str:
    if base.startswith("urn:") and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", ref):
        # urljoin does not understand URNs: a fragment stays in the URN's document, and a
        # relative path stays as written (it can only match a resource passed under that name).
        return base.split("#")[0] + ref if ref.startswith("#") else ref
    return urljoin(base, ref)
