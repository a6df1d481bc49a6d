"""JSON Schema driven generation: *valid* values and *adjacent* ones.

``generate(schema, rng, mode)`` returns a :class:`Generated`:

* ``valid``: a value the schema accepts.
* ``adjacent``: a valid value with exactly one violation (wrong type, a missing
  required property, a value outside the enum or const, an extra property where
  the object is closed, a number, length or item count just out of bounds, a
  string that misses the pattern).  ``violation`` names the schema keyword that
  rejects it (the ``validator`` of the single ``jsonschema`` error) and ``path``
  is the JSON pointer of the instance location.
* ``mixed``: either, half and half.

Every value is judged by ``jsonschema`` before it is returned (:func:`check`,
:mod:`~assay.gen.schema.judge`), so a valid value has no error and an adjacent
value has exactly the one it claims.  ``jsonschema`` is the ``assay[schema]``
extra (the ``http`` extra pulls it in); without it generation stops with a
:class:`~assay.core.errors.ConfigError` saying so.  When no value can be
found (a ``pattern`` this module cannot satisfy, a schema that accepts
everything and so has no adjacent value) :class:`Unsatisfiable` says why.

Supported: ``type`` (and lists of types), ``enum``, ``const``, ``properties``,
``required``, ``additionalProperties``, ``patternProperties``,
``propertyNames``, ``min/maxProperties``, ``dependencies`` /
``dependentRequired`` / ``dependentSchemas``, ``items`` (schema or array),
``prefixItems``, ``additionalItems``, ``contains``, ``min/maxItems``,
``uniqueItems``, numeric bounds (draft 4 boolean exclusives too),
``multipleOf``, ``min/maxLength``, ``pattern``, ``format`` (plausible values;
not asserted, as in ``jsonschema``), ``allOf`` / ``anyOf`` / ``oneOf`` / ``not``
/ ``if``-``then``-``else``, ``$ref`` within the document (``#/definitions/...``,
``#/$defs/...``, ``#/components/schemas/...``, anchors, embedded ``$id``\\ s) and
in ``resources`` passed by URI, ``$dynamicRef`` / ``$recursiveRef`` to the
entry document's anchor, ``unevaluatedProperties``.  Draft 4, 6, 7, 2019-09
and 2020-12 semantics, chosen from ``$schema`` (default 2020-12, like
``jsonschema``).  Draft 3 is refused.

Modules: :mod:`.resolve` (drafts, ``$ref``), :mod:`.valid` (the constructive
generator), :mod:`.adjacent` (one-violation candidates), :mod:`.regex`
(strings for a ``pattern``), :mod:`.judge` (``jsonschema``'s verdict),
:mod:`.draw`, :mod:`.values`, :mod:`.model`; this one ties them together.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from typing import Any

from assay.core.errors import ConfigError
from assay.gen.bytesource import ByteSource
from assay.gen.schema.adjacent import Adjacent
from assay.gen.schema.draw import ByteDraw, Draw, RandomDraw
from assay.gen.schema.judge import Judge
from assay.gen.schema.model import (
    DEFAULT_DEPTH,
    HARD_DEPTH,
    MAX_ADJACENT_TRIES,
    MAX_ATTEMPTS,
    MAX_ITEMS,
    MAX_STRING,
    MODES,
    AttemptFailed,
    Generated,
    Unsatisfiable,
)
from assay.gen.schema.resolve import SchemaDocs, draft_of
from assay.gen.schema.valid import ValueGenerator
from assay.gen.schema.values import json_pointer, put_at

__all__ = [
    "DEFAULT_DEPTH",
    "HARD_DEPTH",
    "MAX_ADJACENT_TRIES",
    "MAX_ATTEMPTS",
    "MAX_ITEMS",
    "MAX_STRING",
    "MODES",
    "Generated",
    "Unsatisfiable",
    "check",
    "from_bytes",
    "generate",
]


def prepare_schema(
    schema: Any, root: Any | None, draft: int | None, resources: Mapping[str, Any] | None
) -> tuple[SchemaDocs, Any]:
    if not isinstance(schema, (dict, bool)):
        raise ConfigError(f"a JSON Schema must be an object or a boolean, not {type(schema).__name__}")
    document = root if root is not None else schema
    chosen = draft if draft is not None else draft_of(document)
    if chosen == 3:
        raise ConfigError("draft 3 schemas are not supported; declare draft 4 or later in $schema")
    if chosen not in (4, 6, 7, 2019, 2020):
        raise ConfigError(f"unknown JSON Schema draft {chosen!r}; use 4, 6, 7, 2019 or 2020")
    return SchemaDocs(document, chosen, resources), schema


def check(
    schema: Any,
    value: Any,
    *,
    root: Any | None = None,
    draft: int | None = None,
    resources: Mapping[str, Any] | None = None,
) -> list[tuple[str, str]]:
    """The errors ``value`` has against ``schema`` as ``(keyword, JSON pointer)`` pairs.

    ``jsonschema``'s top-level ``iter_errors`` for the draft in force, with
    references resolved as generation resolves them (``format`` is not asserted).
    """
    doc, schema = prepare_schema(schema, root, draft, resources)
    return [(kw, json_pointer(p)) for kw, p in Judge(doc).errors(schema, value, doc.base, ())]


NO_BASE = object()


def valid_value(gen: ValueGenerator, schema: Any) -> Any:
    last = "no attempt"
    for _ in range(MAX_ATTEMPTS):
        try:
            value = gen.value([(schema, gen.doc.base)], 0)
            errors = gen.checker.errors(schema, value, gen.doc.base, ())
        except (AttemptFailed, Unsatisfiable) as exc:
            last = str(exc)
            continue
        if not errors:
            return value
        last = f"{errors[0][0]} at {json_pointer(errors[0][1]) or '/'}"
    raise Unsatisfiable(
        f"no valid value found in {MAX_ATTEMPTS} attempts (last failure: {last}); "
        "simplify the schema or use adjacent mode"
    )


def adjacent_value(gen: ValueGenerator, schema: Any, base: Any = NO_BASE) -> Generated:
    """A one-violation value: from ``base`` (a valid value) when given, else from a fresh valid value."""
    adj = Adjacent(gen)
    last = "no violation site"
    for _ in range(3):
        base_value = valid_value(gen, schema) if base is NO_BASE else base
        sites: list = []
        adj.sites([(schema, gen.doc.base)], base_value, (), sites)
        by_keyword: dict[str, list[tuple[tuple[Any, ...], Any]]] = {}
        for path, parts, current in sites:
            for kw, v in adj.candidates(parts, current):
                by_keyword.setdefault(kw, []).append((path, v))
        if not by_keyword:
            continue
        # Keyword first, then location: otherwise "type" (possible almost everywhere) crowds out the rest.
        queues = {kw: gen.draw.shuffled(found) for kw, found in by_keyword.items()}
        order = gen.draw.shuffled(sorted(queues))
        tries = 0
        while tries < MAX_ADJACENT_TRIES and any(queues.values()):
            for kw in order:
                if not queues[kw] or tries >= MAX_ADJACENT_TRIES:
                    continue
                path, new = queues[kw].pop()
                tries += 1
                candidate = put_at(base_value, path, new)
                try:
                    errors = gen.checker.errors(schema, candidate, gen.doc.base, ())
                except Unsatisfiable:
                    continue
                if len(errors) == 1 and errors[0][1] == path and (kw == "" or errors[0][0] == kw):
                    claim = errors[0][0]
                    return Generated(
                        candidate,
                        "adjacent",
                        claim,
                        json_pointer(path),
                        f"{claim} violated at {json_pointer(path) or '/'}",
                    )
                last = f"{kw or 'a type change'} at {json_pointer(path) or '/'} gave {len(errors)} errors"
    raise Unsatisfiable(f"no single-violation value found ({last}); the schema may accept every value")


def _run(
    schema: Any,
    draw: Draw,
    mode: str,
    root: Any | None,
    draft: int | None,
    resources: Mapping[str, Any] | None,
    max_depth: int,
    numbers: tuple[int, ...] = (),
) -> Generated:
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    doc, schema = prepare_schema(schema, root, draft, resources)
    gen = ValueGenerator(doc, draw, max_depth, numbers)
    if mode == "mixed":
        if draw.chance(0.5):
            try:
                return adjacent_value(gen, schema)
            except Unsatisfiable:
                pass
        return Generated(valid_value(gen, schema), "valid")
    if mode == "adjacent":
        return adjacent_value(gen, schema)
    return Generated(valid_value(gen, schema), "valid")


def generate(
    schema: Any,
    rng: random.Random,
    mode: str = "valid",
    *,
    root: Any | None = None,
    draft: int | None = None,
    resources: Mapping[str, Any] | None = None,
    max_depth: int = DEFAULT_DEPTH,
) -> Generated:
    """A value for ``schema`` in ``mode`` (``valid``, ``adjacent`` or ``mixed``), drawn from ``rng``.

    ``root`` is the document that ``$ref``\\ s resolve against when ``schema`` is
    part of a larger one (an OpenAPI document, a schema's ``definitions``);
    ``resources`` maps other URIs to their schemas.  ``draft`` overrides the
    draft read from ``$schema``.  Raises :class:`Unsatisfiable` when no value of
    the mode exists or can be found, and :class:`~assay.core.errors.ConfigError` for a
    malformed schema or a reference that does not resolve.
    """
    return _run(schema, RandomDraw(rng), mode, root, draft, resources, max_depth)


def from_bytes(
    schema: Any,
    data: bytes,
    mode: str = "mixed",
    *,
    root: Any | None = None,
    draft: int | None = None,
    resources: Mapping[str, Any] | None = None,
    max_depth: int = DEFAULT_DEPTH,
    numbers: tuple[int, ...] = (),
) -> Generated:
    """Like :func:`generate`, with every choice read from ``data`` (see :class:`ByteSource`).

    The engine's byte mutations then become structural mutations, and shorter
    input decodes to simpler values.  When the bytes lead nowhere valid, a
    generator seeded from the bytes' digest takes over, so the result is still
    a function of ``data`` alone.  ``numbers`` are integers integer and number
    fields try often (with their neighbours): constants of the code under test.
    """
    try:
        return _run(schema, ByteDraw(ByteSource(data)), mode, root, draft, resources, max_depth, numbers)
    except Unsatisfiable:
        seed = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")
        return _run(schema, RandomDraw(random.Random(seed)), mode, root, draft, resources, max_depth, numbers)
