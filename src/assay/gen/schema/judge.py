"""Judging generated values with ``jsonschema``: errors as ``(keyword, instance path)`` pairs.

The generator builds values constructively, then asks this module whether a
value is valid, or whether a candidate adjacent value has exactly the one error
it claims.  ``jsonschema`` (the ``assay[schema]`` extra) is imported only here
and only when a schema is generated for; without it generation stops with one
message saying what to install.

References resolve the way :class:`~assay.gen.schema.resolve.SchemaDocs` resolves
them for generation: every document it indexed (the root under its base URI,
embedded ``$id``\\ s, ``resources``) goes into one ``referencing`` registry,
crawled once per document and kept (:data:`MAX_CACHED`) so per-input
generation (the HTTP surfaces) does not crawl a large OpenAPI document again.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from assay.core.errors import ConfigError
from assay.gen.schema.model import Error, Unsatisfiable
from assay.gen.schema.resolve import SchemaDocs

MAX_CACHED = 64  #: registries kept, one per (document, draft, resources): the HTTP surfaces use one per operation

_CACHE: OrderedDict[tuple[int, int, int], tuple[Any, Any, Any, Any]] = OrderedDict()


def _jsonschema() -> Any:
    try:
        import jsonschema
    except ModuleNotFoundError as exc:
        if exc.name not in ("jsonschema", "referencing", "jsonschema_specifications"):
            raise
        raise ConfigError(
            "JSON Schema generation judges its values with jsonschema, which is not installed; "
            "install it with: pip install 'jsonschema>=4.20' (assay's schema extra)"
        ) from None
    return jsonschema


def _setup(doc: SchemaDocs) -> tuple[Any, Any]:
    """The validator class and crawled registry for ``doc`` (cached by document identity)."""
    key = (id(doc.root), doc.draft, id(doc.resources))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is doc.root and hit[1] is doc.resources:
        _CACHE.move_to_end(key)
        return hit[2], hit[3]
    jsonschema = _jsonschema()
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4, DRAFT6, DRAFT7, DRAFT201909, DRAFT202012

    spec = {4: DRAFT4, 6: DRAFT6, 7: DRAFT7, 2019: DRAFT201909, 2020: DRAFT202012}[doc.draft]
    cls = {
        4: jsonschema.Draft4Validator,
        6: jsonschema.Draft6Validator,
        7: jsonschema.Draft7Validator,
        2019: jsonschema.Draft201909Validator,
        2020: jsonschema.Draft202012Validator,
    }[doc.draft]
    pairs = [(doc.base, Resource(doc.root, specification=spec))]  # type: ignore[call-arg]  # attrs class mypy misreads
    for uri, contents in (doc.resources or {}).items():
        pairs.append((uri.split("#")[0], Resource.from_contents(contents, default_specification=spec)))
    registry = Registry().with_resources(pairs)
    # The draft metaschemas, as jsonschema adds them itself when it builds the registry.
    from jsonschema_specifications import REGISTRY as SPECIFICATIONS

    registry = SPECIFICATIONS.combine(registry).crawl()
    _CACHE[key] = (doc.root, doc.resources, cls, registry)
    if len(_CACHE) > MAX_CACHED:
        _CACHE.popitem(last=False)
    return cls, registry


class Judge:
    """``jsonschema``'s verdict on values, as ``(keyword, instance path)`` errors."""

    def __init__(self, doc: SchemaDocs) -> None:
        self.doc = doc
        self.cls, self.registry = _setup(doc)
        self._resolvers: dict[str, Any] = {}

    def _validator(self, schema: Any, base: str) -> Any:
        resolver = self._resolvers.get(base)
        if resolver is None:
            resolver = self._resolvers[base] = self.registry.resolver(base_uri=base)
        return self.cls(schema, registry=self.registry, _resolver=resolver)

    def valid(self, schema: Any, value: Any, base: str) -> bool:
        return not self.errors(schema, value, base, (), first=True)

    def errors(
        self, schema: Any, value: Any, base: str, path: tuple[Any, ...] = (), first: bool = False
    ) -> list[Error]:
        from referencing.exceptions import Unresolvable

        validator = self._validator(schema, base)
        out: list[Error] = []
        try:
            for error in validator.iter_errors(value):
                out.append((error.validator if error.validator is not None else "false", path + tuple(error.path)))
                if first:
                    break
        except re.error as exc:
            raise Unsatisfiable(f"a pattern is not a Python regular expression ({exc}); assay cannot use it") from None
        except Unresolvable as exc:
            raise ConfigError(
                f"a $ref does not resolve: {exc}; pass the document that holds it as root= "
                "or its contents in resources={uri: schema}"
            ) from None
        except RecursionError:
            raise Unsatisfiable("schema recursion without progress while checking a value") from None
        return out
