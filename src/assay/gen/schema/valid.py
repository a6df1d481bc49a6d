"""Valid values: a constructive generator that follows the schema keyword by keyword."""

from __future__ import annotations

import copy
import math
from typing import Any

from assay.core.errors import ConfigError
from assay.gen.schema.draw import Draw
from assay.gen.schema.judge import Judge
from assay.gen.schema.model import (
    EXTRA_RATE,
    HARD_DEPTH,
    MAX_ITEMS,
    MAX_STRING,
    OPTIONAL_RATE,
    THEN_RATE,
    AttemptFailed,
    Unsatisfiable,
)
from assay.gen.schema.regex import ALPHABET, UNICODE_SAMPLES, regex_string
from assay.gen.schema.resolve import SchemaDocs
from assay.gen.schema.values import as_list, json_equal, pattern_search

_FORMATS: dict[str, tuple[str, ...]] = {
    "date-time": ("2024-01-02T03:04:05Z", "1970-01-01T00:00:00+00:00", "2024-02-29T23:59:60.999-08:00"),
    "date": ("2024-01-02", "2000-02-29"),
    "time": ("03:04:05Z", "23:59:59.5+01:00"),
    "email": ("a@example.com", "first.last+tag@sub.example.org"),
    "idn-email": ("ü@example.com",),
    "uri": ("https://example.com/x?y=1#z", "urn:isbn:0451450523"),
    "uri-reference": ("/relative/path", "https://example.com/", "#frag"),
    "iri": ("https://例え.jp/パス",),
    "uuid": ("123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000"),
    "ipv4": ("192.0.2.1", "0.0.0.0", "255.255.255.255"),
    "ipv6": ("2001:db8::1", "::1"),
    "hostname": ("example.com", "a-b.c"),
    "regex": ("^a+$", "[0-9]{2,}"),
    "json-pointer": ("/a/b", "", "/a~1b/0"),
    "duration": ("P1D", "PT1H30M"),
    "byte": ("aGVsbG8=", ""),
    "binary": ("\x00\x01",),
    "password": ("hunter2",),
}


_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


#: Out of 16 rolls for an integer: the lower bound, the upper bound, then how many pick a small value
#: and how many a value from ``numbers`` (a constant of the code under test, or one beside it).
_ROLLS, _SMALL_ROLLS, _HINT_ROLLS = 16, 4, 4
#: Small integers are drawn from ``[-SMALL, SMALL]`` (within the schema's bounds).
SMALL = 10


class ValueGenerator:
    """Values for a schema, each choice read from ``draw``.

    ``numbers`` are integers worth trying in any integer or number field: constants
    from the code the values are sent to (``100 // (n - 7)`` wants 7), tried along with
    their neighbours, as often as small values and more often than a uniform draw
    over the field's range would ever hit them.
    """

    def __init__(self, doc: SchemaDocs, draw: Draw, max_depth: int, numbers: tuple[int, ...] = ()) -> None:
        self.doc = doc
        self.draw = draw
        self.max_depth = max_depth
        self.checker = Judge(doc)
        self.numbers = numbers

    # -- flattening ----------------------------------------------------------

    def flatten(self, schema: Any, base: str, choose: bool, out: list[tuple[dict, str]], hops: int = 0) -> None:
        """Schemas that all apply at one instance location (following $ref and allOf).

        With ``choose``, one branch of each ``anyOf``/``oneOf`` and one side of each
        ``if`` joins the list too (generation); without, they are left out (site search).
        """
        if hops > 48:
            raise AttemptFailed("reference chain too long")
        if schema is True or schema is None:
            return
        if schema is False:
            raise AttemptFailed("false schema")
        if not isinstance(schema, dict):
            return
        draft = self.doc.draft
        if "$ref" in schema and isinstance(schema["$ref"], str):
            target, tbase = self.doc.resolve(schema["$ref"], base)
            self.flatten(target, tbase, choose, out, hops + 1)
            if draft <= 7:
                return
        base = self.doc._id_base(schema, base)
        for key in ("$dynamicRef", "$recursiveRef"):
            if isinstance(schema.get(key), str) and draft >= 2019:
                target, tbase = self.doc.dynamic_resolve(schema[key], base)
                self.flatten(target, tbase, choose, out, hops + 1)
        out.append((schema, base))
        for sub in schema.get("allOf", []):
            self.flatten(sub, base, choose, out, hops + 1)
        if choose:
            for kw in ("anyOf", "oneOf"):
                branches = schema.get(kw)
                if branches:
                    self.flatten(self.draw.choice(branches), base, choose, out, hops + 1)
            if "if" in schema and draft >= 7 and ("then" in schema or "else" in schema):
                # Several if-blocks usually discriminate on one field: committing to many
                # "then"s at once mostly produces contradictions.
                if "then" in schema and self.draw.chance(THEN_RATE):
                    self.flatten(schema["if"], base, choose, out, hops + 1)
                    self.flatten(schema["then"], base, choose, out, hops + 1)
                elif "else" in schema:
                    self.flatten(schema["else"], base, choose, out, hops + 1)

    # -- values --------------------------------------------------------------

    def value(self, schemas: list[tuple[Any, str]], depth: int) -> Any:
        """A value satisfying every ``(schema, base URI)`` in ``schemas``."""
        if depth > HARD_DEPTH:
            raise AttemptFailed("required structure nests deeper than the hard depth bound")
        parts: list[tuple[dict, str]] = []
        for schema, base in schemas:
            self.flatten(schema, base, True, parts)
        enums = [p["enum"] for p, _ in parts if isinstance(p.get("enum"), list)]
        consts = [p["const"] for p, _ in parts if "const" in p and self.doc.draft >= 6]
        if consts or enums:
            pool = [consts[0]] if consts else enums[0]
            options = [v for v in pool if self._fits(parts, v)]
            if not options:
                raise AttemptFailed("no enum/const member satisfies the other keywords")
            return copy.deepcopy(self.draw.choice(options))
        types = self._types(parts)
        kind = self._pick_type(types, parts, depth)
        if kind == "null":
            return None
        if kind == "boolean":
            return self.draw.chance(0.5)
        if kind in ("integer", "number"):
            return self._number(parts, types is not None and "number" not in types)
        if kind == "string":
            return self._string(parts)
        if kind == "array":
            return self._array(parts, depth)
        return self._object(parts, depth)

    def _fits(self, parts: list[tuple[dict, str]], value: Any) -> bool:
        try:
            return all(
                self.checker.valid({k: v for k, v in p.items() if k not in ("anyOf", "oneOf", "allOf")}, value, b)
                for p, b in parts
            )
        except Unsatisfiable:
            return False

    def _types(self, parts: list[tuple[dict, str]]) -> set[str] | None:
        allowed: set[str] | None = None
        for p, _ in parts:
            if "type" not in p:
                continue
            names = {t for t in as_list(p["type"]) if isinstance(t, str)}
            if "number" in names:
                names.add("integer")
            allowed = names if allowed is None else allowed & names
        if allowed is not None and not allowed:
            raise AttemptFailed("the schemas at one location allow no common type")
        return allowed

    def _pick_type(self, types: set[str] | None, parts: list[tuple[dict, str]], depth: int) -> str:
        keys = set().union(*(p.keys() for p, _ in parts)) if parts else set()
        if types is None:
            hinted = []
            if keys & {
                "properties",
                "required",
                "additionalProperties",
                "patternProperties",
                "minProperties",
                "maxProperties",
                "propertyNames",
                "dependencies",
                "dependentRequired",
            }:
                hinted.append("object")
            if keys & {"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "additionalItems"}:
                hinted.append("array")
            if keys & {"minLength", "maxLength", "pattern", "format"}:
                hinted.append("string")
            if keys & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}:
                hinted.append("number")
            types = set(hinted) if hinted and self.draw.chance(0.85) else set(_TYPES)
        options = sorted(types, key=_TYPES.index)
        if depth >= self.max_depth:
            scalar = [t for t in options if t not in ("array", "object")]
            if scalar:
                options = scalar
        if "number" in options and "integer" in options and len(options) > 2:
            options.remove("integer")
        return self.draw.choice(options)

    def _number(self, parts: list[tuple[dict, str]], integer: bool) -> int | float:
        lo, hi = -math.inf, math.inf
        lo_open = hi_open = False
        multiples: list[float] = []
        draft = self.doc.draft
        for p, _ in parts:
            for kw, is_lo in (("minimum", True), ("maximum", False)):
                v = p.get(kw)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    exclusive = draft == 4 and p.get("exclusiveMinimum" if is_lo else "exclusiveMaximum") is True
                    if is_lo and (v > lo or (v == lo and exclusive)):
                        lo, lo_open = v, exclusive
                    elif not is_lo and (v < hi or (v == hi and exclusive)):
                        hi, hi_open = v, exclusive
            if draft >= 6:
                for kw, is_lo in (("exclusiveMinimum", True), ("exclusiveMaximum", False)):
                    v = p.get(kw)
                    if isinstance(v, (int, float)):
                        v = float(v) if isinstance(v, bool) else v
                        if is_lo and v >= lo:
                            lo, lo_open = v, True
                        elif not is_lo and v <= hi:
                            hi, hi_open = v, True
            m = p.get("multipleOf")
            if isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0:
                multiples.append(m)
        if integer or not self.draw.chance(0.4):
            ilo = -(10**6) if lo == -math.inf else (math.floor(lo) + 1 if lo_open else math.ceil(lo))
            ihi = 10**6 if hi == math.inf else (math.ceil(hi) - 1 if hi_open else math.floor(hi))
            if lo == -math.inf and hi != math.inf:
                ilo = ihi - 10**6
            if hi == math.inf and lo != -math.inf:
                ihi = ilo + 10**6
            if ilo > ihi:
                if integer:
                    raise AttemptFailed("no integer within the bounds")
            else:
                step = 1
                for m in multiples:
                    if float(m).is_integer():
                        step = step * int(m) // math.gcd(step, int(m))
                klo, khi = -(-ilo // step), ihi // step
                if klo > khi:
                    if integer:
                        raise AttemptFailed("no multiple within the bounds")
                else:
                    return self._integer(klo, khi, step) * step
        span_lo = lo if lo != -math.inf else (hi - 1000.0 if hi != math.inf else -1000.0)
        span_hi = hi if hi != math.inf else span_lo + 2000.0
        value = span_lo + (span_hi - span_lo) * self.draw.real()
        if (lo_open and value <= lo) or (hi_open and value >= hi):
            value = (span_lo + span_hi) / 2
        if multiples:
            m = multiples[0]
            value = round(value / m) * m
        return value

    def _integer(self, klo: int, khi: int, step: int) -> int:
        """A multiplier ``k`` in ``[klo, khi]`` (the value is ``k * step``): a bound, a small
        value, a value from :attr:`numbers` or beside one, or any value of the range."""
        near = [k for n in self.numbers if n % step == 0 for k in (n // step - 1, n // step, n // step + 1)]
        near = [k for k in dict.fromkeys(near) if klo <= k <= khi]
        if not near:  # the draws of a generator without numbers, as they always were
            roll = self.draw.int(0, 9)
            if roll < 2:
                return klo if roll == 0 else khi
            if roll < 5 and klo <= 0 <= khi:
                return self.draw.int(max(klo, -SMALL), min(khi, SMALL))
            return self.draw.int(klo, khi)
        roll = self.draw.int(0, _ROLLS - 1)
        if roll < 2:
            return klo if roll == 0 else khi
        if roll < 2 + _HINT_ROLLS:
            return near[self.draw.int(0, len(near) - 1)]
        if roll < 2 + _HINT_ROLLS + _SMALL_ROLLS and klo <= 0 <= khi:
            return self.draw.int(max(klo, -SMALL), min(khi, SMALL))
        return self.draw.int(klo, khi)

    def _string(self, parts: list[tuple[dict, str]]) -> str:
        lo = max([p["minLength"] for p, _ in parts if isinstance(p.get("minLength"), int)], default=0)
        hi = min([p["maxLength"] for p, _ in parts if isinstance(p.get("maxLength"), int)], default=MAX_STRING)
        if lo > hi or lo > MAX_STRING:
            raise AttemptFailed("string length bounds are empty or too large")
        patterns = [p["pattern"] for p, _ in parts if isinstance(p.get("pattern"), str)]
        formats = [p["format"] for p, _ in parts if isinstance(p.get("format"), str)]
        if patterns:
            for _ in range(6):
                try:
                    text = regex_string(patterns[0], self.draw)
                except Unsatisfiable as exc:
                    raise AttemptFailed(str(exc)) from None
                if len(text) < lo:
                    text += "a" * (lo - len(text))
                if lo <= len(text) <= hi and all(pattern_search(p, text) for p in patterns):
                    return text
            raise AttemptFailed(f"could not satisfy pattern {patterns[0]!r} within length {lo}..{hi}")
        if formats and formats[0] in _FORMATS and self.draw.chance(0.85):
            text = self.draw.choice(_FORMATS[formats[0]])
            if lo <= len(text) <= hi:
                return text
        size = self.draw.int(lo, min(hi, lo + 12))
        chars = [
            self.draw.choice(ALPHABET) if self.draw.int(0, 9) else self.draw.choice(UNICODE_SAMPLES)
            for _ in range(size)
        ]
        return "".join(chars)

    def _item_schemas(self, parts: list[tuple[dict, str]], index: int) -> tuple[list[tuple[Any, str]], bool]:
        """Schemas for array position ``index``; False when some part forbids the position."""
        draft = self.doc.draft
        out: list[tuple[Any, str]] = []
        for p, b in parts:
            prefix = (
                p.get("prefixItems")
                if draft == 2020
                else (p.get("items") if isinstance(p.get("items"), list) else None)
            )
            if prefix is not None:
                if index < len(prefix):
                    out.append((prefix[index], b))
                    continue
                rest = p.get("items") if draft == 2020 else p.get("additionalItems")
            else:
                rest = p.get("items")
            if rest is False:
                return out, False
            if rest is not None:
                out.append((rest, b))
        return out, True

    def _array(self, parts: list[tuple[dict, str]], depth: int) -> list[Any]:
        lo = max([p["minItems"] for p, _ in parts if isinstance(p.get("minItems"), int)], default=0)
        hi = min([p["maxItems"] for p, _ in parts if isinstance(p.get("maxItems"), int)], default=MAX_ITEMS)
        if lo > MAX_ITEMS or lo > hi:
            raise AttemptFailed("array size bounds are empty or too large")
        extra = 0 if depth >= self.max_depth else 3
        size = self.draw.int(lo, min(hi, lo + extra))
        unique = any(p.get("uniqueItems") is True for p, _ in parts)
        contains = [(p["contains"], b) for p, b in parts if "contains" in p and self.doc.draft >= 6]
        if contains and size == 0 and hi > 0:
            size = 1
        target = self.draw.int(0, size - 1) if contains and size else -1
        items: list[Any] = []
        for i in range(size):
            schemas, allowed = self._item_schemas(parts, i)
            if not allowed:
                if i < lo:
                    raise AttemptFailed("minItems exceeds the positions the schema allows")
                break
            if i == target:
                schemas = schemas + contains
            for _ in range(4):
                item = self.value(schemas, depth + 1)
                if not unique or all(not json_equal(item, other) for other in items):
                    break
            else:
                if len(items) >= lo:
                    break
                raise AttemptFailed("could not find enough distinct items")
            items.append(item)
        return items

    def _property_schemas(self, parts: list[tuple[dict, str]], key: str) -> list[tuple[Any, str]] | None:
        """Schemas the value under ``key`` must satisfy; None when some part forbids ``key``."""
        out: list[tuple[Any, str]] = []
        for p, b in parts:
            props = pp if isinstance(pp := p.get("properties"), dict) else {}
            matched = False
            if key in props:
                out.append((props[key], b))
                matched = True
            for pattern, s in (p.get("patternProperties") or {}).items():
                if pattern_search(pattern, key):
                    out.append((s, b))
                    matched = True
            if not matched and "additionalProperties" in p:
                extra = p["additionalProperties"]
                if extra is False:
                    return None
                out.append((extra, b))
            if not matched and p.get("unevaluatedProperties") is False and "additionalProperties" not in p:
                # Only a property some subschema declares counts as evaluated.
                declared = any(key in (q.get("properties") or {}) for q, _ in parts)
                if not declared:
                    return None
        return out

    def _object(self, parts: list[tuple[dict, str]], depth: int) -> dict[str, Any]:
        draft = self.doc.draft
        for _ in range(3):
            required: list[str] = []
            declared: list[str] = []
            for p, _b in parts:
                for k in p.get("required", []) if isinstance(p.get("required"), list) else []:
                    if k not in required:
                        required.append(k)
                for k in (p.get("properties") or {}) if isinstance(p.get("properties"), dict) else []:
                    if k not in declared:
                        declared.append(k)
            lo = max([p["minProperties"] for p, _ in parts if isinstance(p.get("minProperties"), int)], default=0)
            hi = min([p["maxProperties"] for p, _ in parts if isinstance(p.get("maxProperties"), int)], default=10**9)
            keys = list(required)
            rate = OPTIONAL_RATE * (0.6**depth) if depth < self.max_depth else 0.0
            # An optional key that some oneOf branch requires could satisfy a second branch.
            avoid = self._oneof_required(parts)
            for k in declared:
                if (
                    k not in keys
                    and k not in avoid
                    and self.draw.chance(rate)
                    and self._property_schemas(parts, k) is not None
                ):
                    keys.append(k)
            if depth < self.max_depth and self.draw.chance(EXTRA_RATE):
                extra = self._extra_key(parts)
                if extra is not None and extra not in keys:
                    keys.append(extra)
            for k in declared:
                if len(keys) >= lo:
                    break
                if k not in keys and self._property_schemas(parts, k) is not None:
                    keys.append(k)
            while len(keys) < lo:
                extra = self._extra_key(parts, len(keys))
                if extra is None or extra in keys:
                    raise AttemptFailed("minProperties needs more properties than the schema allows")
                keys.append(extra)
            while len(keys) > hi:
                optional = [k for k in keys if k not in required]
                if not optional:
                    raise AttemptFailed("maxProperties is below the number of required properties")
                keys.remove(optional[-1])
            # Property dependencies pull in more keys (and, for schema dependencies, more parts).
            grown = False
            for p, b in list(parts):
                deps = {}
                if draft <= 7 and isinstance(p.get("dependencies"), dict):
                    deps = p["dependencies"]
                for kw in ("dependentRequired", "dependentSchemas"):
                    if draft >= 2019 and isinstance(p.get(kw), dict):
                        deps = {**deps, **p[kw]}
                for k, dep in deps.items():
                    if k not in keys:
                        continue
                    if isinstance(dep, list):
                        for d in dep:
                            if d not in keys:
                                keys.append(d)
                    elif isinstance(dep, (dict, bool)) and not any(dep is q for q, _ in parts):
                        more: list[tuple[dict, str]] = []
                        self.flatten(dep, b, True, more)
                        parts = parts + more
                        grown = True
            if not grown:
                break
        out: dict[str, Any] = {}
        for k in keys:
            schemas = self._property_schemas(parts, k)
            if schemas is None:
                raise AttemptFailed(f"property {k!r} is both required and forbidden")
            out[k] = self.value(schemas, depth + 1)
        return out

    def _oneof_required(self, parts: list[tuple[dict, str]]) -> set[str]:
        keys: set[str] = set()
        for p, b in parts:
            for branch in p.get("oneOf", []) if isinstance(p.get("oneOf"), list) else []:
                if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
                    try:
                        branch, _ = self.doc.resolve(branch["$ref"], b)
                    except ConfigError:
                        continue
                if isinstance(branch, dict) and isinstance(branch.get("required"), list):
                    keys.update(k for k in branch["required"] if isinstance(k, str))
        return keys

    def _extra_key(self, parts: list[tuple[dict, str]], salt: int = 0) -> str | None:
        patterns = [pat for p, _ in parts for pat in (p.get("patternProperties") or {})]
        names = [(p["propertyNames"], b) for p, b in parts if "propertyNames" in p and self.doc.draft >= 6]
        for _ in range(4):
            if names:
                try:
                    key = self.value(names + [({"type": "string"}, self.doc.base)], self.max_depth)
                except AttemptFailed:
                    return None
            elif patterns and self.draw.chance(0.6):
                try:
                    key = regex_string(self.draw.choice(patterns), self.draw)
                except Unsatisfiable:
                    continue
            else:
                key = self.draw.choice(("x-assay", "extra", "zz", "_meta", "é")) + (str(salt) if salt else "")
            if isinstance(key, str) and self._property_schemas(parts, key) is not None:
                return key
        return None
