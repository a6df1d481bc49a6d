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

Every value is checked before it is returned by a small validator that mirrors
``jsonschema``'s error reporting (:func:`check`), so a valid value has no error
and an adjacent value has exactly the one it claims.  When no value can be
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
"""

from __future__ import annotations

import copy
import hashlib
import math
import random
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import unquote, urldefrag, urljoin

from assay.errors import ConfigError
from assay.gen.bytesource import ByteSource

MODES = ("valid", "adjacent", "mixed")
DEFAULT_DEPTH = 4  #: nesting below which optional structure is still added
HARD_DEPTH = 24  #: recursion through required structure deeper than this is unsatisfiable
MAX_ATTEMPTS = 16  #: whole-value retries before giving up on valid mode
MAX_ADJACENT_TRIES = 24  #: candidate violations tried before giving up on adjacent mode
MAX_ITEMS = 64  #: largest array generated
MAX_STRING = 2048  #: longest string generated
OPTIONAL_RATE = 0.5  #: chance to include an optional property at the top level
EXTRA_RATE = 0.15  #: chance to add an undeclared property where the schema allows one
THEN_RATE = 0.35  #: chance to generate for an if-block's "then" side (else its "else" side)
_ROOT_URI = "urn:assay:schema"


class Unsatisfiable(ConfigError):
    """No value of the requested mode could be generated for this schema."""


@dataclass(frozen=True)
class Generated:
    """A generated value, its mode, and (for adjacent values) the one violation."""

    value: Any
    mode: str
    violation: str | None = None
    path: str | None = None
    detail: str = ""


# ------------------------------------------------------------------- draws


class _Draw:
    """Choices drawn from a ``random.Random`` or from fuzz bytes."""

    def int(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def chance(self, p: float) -> bool:
        raise NotImplementedError

    def real(self) -> float:
        return self.int(0, 1 << 20) / float(1 << 20)

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.int(0, len(seq) - 1)]

    def shuffled(self, seq: Iterable[Any]) -> list[Any]:
        items = list(seq)
        for i in range(len(items) - 1, 0, -1):
            j = self.int(0, i)
            items[i], items[j] = items[j], items[i]
        return items


class _RandomDraw(_Draw):
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


class _ByteDraw(_Draw):
    """Exhausted bytes choose the simplest option (low ints, no optional parts)."""

    def __init__(self, source: ByteSource) -> None:
        self.source = source

    def int(self, lo: int, hi: int) -> int:
        return self.source.draw_int(lo, hi)

    def chance(self, p: float) -> bool:
        if self.source.exhausted:
            return False
        return self.source.draw_weighted(p)


# -------------------------------------------------------------- resolution


def _draft_of(schema: Any) -> int:
    uri = schema.get("$schema", "") if isinstance(schema, dict) else ""
    if not isinstance(uri, str) or not uri:
        return 2020
    for marker, draft in (("draft-03", 3), ("draft-04", 4), ("draft-06", 6), ("draft-07", 7),
                          ("2019-09", 2019), ("2020-12", 2020)):
        if marker in uri:
            return draft
    return 2020


_NOT_SCHEMA = frozenset(("enum", "const", "default", "examples", "example", "required", "type",
                         "description", "title", "$comment", "format", "pattern"))


class _Doc:
    """The documents a schema can refer to, indexed by URI and anchor."""

    def __init__(self, root: Any, draft: int, resources: Mapping[str, Any] | None) -> None:
        self.root = root
        self.draft = draft
        self.by_uri: dict[str, Any] = {}
        self.anchors: dict[tuple[str, str], Any] = {}
        self.dynamic: dict[tuple[str, str], Any] = {}
        self.base = self._id_base(root, _ROOT_URI)
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


# ---------------------------------------------------------------- checking


def _is_type(value: Any, name: str, draft: int) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "number":
        return isinstance(value, (int, float))
    if name == "integer":
        if isinstance(value, int):
            return True
        return draft >= 6 and isinstance(value, float) and value.is_integer()
    return False


def _unbool(value: Any) -> Any:
    if value is True:
        return ("__true__",)
    if value is False:
        return ("__false__",)
    return value


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as ``jsonschema`` has it: ``True`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, dict)) or isinstance(b, (list, dict)):
        return False
    return _unbool(a) == _unbool(b)


def _unique(items: list[Any]) -> bool:
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if _equal(items[i], items[j]):
                return False
    return True


_PATTERN_CACHE: dict[str, re.Pattern[str] | None] = {}


def _regex(pattern: str) -> re.Pattern[str]:
    if pattern not in _PATTERN_CACHE:
        try:
            _PATTERN_CACHE[pattern] = re.compile(pattern)
        except re.error:
            _PATTERN_CACHE[pattern] = None
    compiled = _PATTERN_CACHE[pattern]
    if compiled is None:
        raise Unsatisfiable(f"pattern {pattern!r} is not a Python regular expression; assay cannot use it")
    return compiled


def _search(pattern: str, text: str) -> bool:
    return _regex(pattern).search(text) is not None


Error = tuple[str, tuple[Any, ...]]


class _Checker:
    """Errors as ``jsonschema.iter_errors`` reports them: (keyword, instance path)."""

    def __init__(self, doc: _Doc) -> None:
        self.doc = doc
        self.draft = doc.draft

    def valid(self, schema: Any, value: Any, base: str) -> bool:
        return not self.errors(schema, value, base, (), first=True)

    def errors(self, schema: Any, value: Any, base: str, path: tuple[Any, ...], first: bool = False,
               depth: int = 0) -> list[Error]:
        if depth > 200:
            raise Unsatisfiable("schema recursion without progress while checking a value")
        if schema is True or schema == {}:
            return []
        if schema is False:
            return [("false", path)]
        if not isinstance(schema, dict):
            return []
        draft = self.draft
        base = self.doc._id_base(schema, base) if not (draft <= 7 and "$ref" in schema) else base
        out: list[Error] = []

        def sub(s: Any, v: Any, p: tuple[Any, ...], b: str = base) -> list[Error]:
            return self.errors(s, v, b, p, first, depth + 1)

        def ok(s: Any, v: Any, b: str = base) -> bool:
            return not self.errors(s, v, b, (), True, depth + 1)

        if "$ref" in schema and isinstance(schema["$ref"], str):
            target, tbase = self.doc.resolve(schema["$ref"], base)
            out += sub(target, value, path, tbase)
            if draft <= 7:
                return out
        for key in ("$dynamicRef", "$recursiveRef"):
            if key in schema and (draft == 2020) == (key == "$dynamicRef") and draft >= 2019:
                target, tbase = self.doc.dynamic_resolve(schema[key], base)
                out += sub(target, value, path, tbase)
        for keyword, arg in schema.items():
            out += self._keyword(keyword, arg, schema, value, base, path, sub, ok)
            if first and out:
                return out
        return out

    def _keyword(self, kw: str, arg: Any, schema: dict, value: Any, base: str, path: tuple, sub, ok) -> list[Error]:
        draft = self.draft
        here = [(kw, path)]
        if kw == "type":
            types = arg if isinstance(arg, list) else [arg]
            return [] if any(_is_type(value, t, draft) for t in types if isinstance(t, str)) else here
        if kw == "enum":
            return [] if any(_equal(value, e) for e in arg) else here
        if kw == "const" and draft >= 6:
            return [] if _equal(value, arg) else here
        if kw == "allOf":
            return [e for s in arg for e in sub(s, value, path)]
        if kw == "anyOf":
            return [] if any(ok(s, value) for s in arg) else here
        if kw == "oneOf":
            return [] if sum(1 for s in arg if ok(s, value)) == 1 else here
        if kw == "not":
            return here if ok(arg, value) else []
        if kw == "if" and draft >= 7:
            if ok(arg, value):
                return sub(schema["then"], value, path) if "then" in schema else []
            return sub(schema["else"], value, path) if "else" in schema else []
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self._number(kw, arg, schema, value, here)
        if isinstance(value, str):
            if kw == "minLength":
                return here if len(value) < arg else []
            if kw == "maxLength":
                return here if len(value) > arg else []
            if kw == "pattern":
                return [] if _search(arg, value) else here
            return []
        if isinstance(value, list):
            return self._array(kw, arg, schema, value, path, sub, ok, here)
        if isinstance(value, dict):
            return self._object(kw, arg, schema, value, base, path, sub, ok, here)
        return []

    def _number(self, kw: str, arg: Any, schema: dict, value: float, here: list[Error]) -> list[Error]:
        if self.draft == 4:
            if kw == "minimum":
                return here if (value <= arg if schema.get("exclusiveMinimum", False) else value < arg) else []
            if kw == "maximum":
                return here if (value >= arg if schema.get("exclusiveMaximum", False) else value > arg) else []
            if kw in ("exclusiveMinimum", "exclusiveMaximum"):
                return []
        else:
            if kw == "minimum":
                return here if value < arg else []
            if kw == "maximum":
                return here if value > arg else []
            if kw == "exclusiveMinimum":
                return here if value <= arg else []
            if kw == "exclusiveMaximum":
                return here if value >= arg else []
        if kw == "multipleOf":
            return here if _not_multiple(value, arg) else []
        return []

    def _array(self, kw, arg, schema, value, path, sub, ok, here) -> list[Error]:
        draft = self.draft
        if kw == "minItems":
            return here if len(value) < arg else []
        if kw == "maxItems":
            return here if len(value) > arg else []
        if kw == "uniqueItems":
            return here if arg and not _unique(value) else []
        if kw == "items":
            if draft == 2020:
                prefix = len(schema.get("prefixItems", []))
                if len(value) <= prefix:
                    return []
                if arg is False:
                    return here
                return [e for i in range(prefix, len(value)) for e in sub(arg, value[i], path + (i,))]
            if isinstance(arg, list):
                return [e for i, (s, v) in enumerate(zip(arg, value)) for e in sub(s, v, path + (i,))]
            return [e for i, v in enumerate(value) for e in sub(arg, v, path + (i,))]
        if kw == "prefixItems" and draft == 2020:
            return [e for i, (s, v) in enumerate(zip(arg, value)) for e in sub(s, v, path + (i,))]
        if kw == "additionalItems" and draft <= 2019:
            items = schema.get("items", {})
            if not isinstance(items, list):
                return []
            if isinstance(arg, dict):
                return [e for i in range(len(items), len(value)) for e in sub(arg, value[i], path + (i,))]
            return here if arg is False and len(value) > len(items) else []
        if kw == "contains" and draft >= 6:
            matches = sum(1 for v in value if ok(arg, v))
            if draft <= 7:
                return [] if matches else here
            lo = schema.get("minContains", 1)
            hi = schema.get("maxContains", len(value))
            if matches > hi:
                return [("maxContains", path)]
            if matches < lo:
                return here if not matches else [("minContains", path)]
        if kw == "unevaluatedItems" and draft >= 2019:
            return []  # Not modelled; generation never adds items beyond the declared ones.
        return []

    def _object(self, kw, arg, schema, value, base, path, sub, ok, here) -> list[Error]:
        draft = self.draft
        if kw == "properties":
            return [e for k, s in arg.items() if k in value for e in sub(s, value[k], path + (k,))]
        if kw == "patternProperties":
            return [e for p, s in arg.items() for k, v in value.items() if _search(p, k)
                    for e in sub(s, v, path + (k,))]
        if kw == "additionalProperties":
            extras = [k for k in value if k not in schema.get("properties", {})
                      and not any(_search(p, k) for p in schema.get("patternProperties", {}))]
            if isinstance(arg, dict):
                return [e for k in extras for e in sub(arg, value[k], path + (k,))]
            return here if arg is False and extras else []
        if kw == "required" and isinstance(arg, list):
            return [("required", path) for k in arg if k not in value]
        if kw == "minProperties":
            return here if len(value) < arg else []
        if kw == "maxProperties":
            return here if len(value) > arg else []
        if kw == "propertyNames" and draft >= 6:
            return [e for k in value for e in sub(arg, k, path)]
        if kw == "dependencies" and draft <= 7:
            out: list[Error] = []
            for k, dep in arg.items():
                if k not in value:
                    continue
                if isinstance(dep, list):
                    out += [here[0] for d in dep if d not in value]
                else:
                    out += sub(dep, value, path)
            return out
        if kw == "dependentRequired" and draft >= 2019:
            return [here[0] for k, deps in arg.items() if k in value for d in deps if d not in value]
        if kw == "dependentSchemas" and draft >= 2019:
            return [e for k, s in arg.items() if k in value for e in sub(s, value, path)]
        if kw == "unevaluatedProperties" and draft >= 2019:
            evaluated = self._evaluated(schema, value, base, 0)
            left = [k for k in value if k not in evaluated]
            bad = [k for k in left if not ok(arg, value[k])]
            return here if bad else []
        return []

    def _evaluated(self, schema: Any, value: dict, base: str, depth: int) -> set[str]:
        """Keys of ``value`` that ``schema`` evaluates (for ``unevaluatedProperties``)."""
        if not isinstance(schema, dict) or depth > 32:
            return set()
        keys: set[str] = set()
        base = self.doc._id_base(schema, base)
        if isinstance(schema.get("$ref"), str):
            target, tbase = self.doc.resolve(schema["$ref"], base)
            keys |= self._evaluated(target, value, tbase, depth + 1)
        for ref_kw in ("$dynamicRef", "$recursiveRef"):
            if isinstance(schema.get(ref_kw), str):
                target, tbase = self.doc.dynamic_resolve(schema[ref_kw], base)
                keys |= self._evaluated(target, value, tbase, depth + 1)
        if isinstance(schema.get("properties"), dict):
            keys |= schema["properties"].keys() & value.keys()
        for kw in ("additionalProperties", "unevaluatedProperties"):
            if kw in schema:
                keys |= {k for k, v in value.items() if self.valid(schema[kw], v, base)}
        for pattern in schema.get("patternProperties", {}):
            keys |= {k for k in value if _search(pattern, k)}
        for k, s in schema.get("dependentSchemas", {}).items():
            if k in value:
                keys |= self._evaluated(s, value, base, depth + 1)
        for kw in ("allOf", "oneOf", "anyOf"):
            for s in schema.get(kw, []):
                if self.valid(s, value, base):
                    keys |= self._evaluated(s, value, base, depth + 1)
        if "if" in schema:
            if self.valid(schema["if"], value, base):
                keys |= self._evaluated(schema["if"], value, base, depth + 1)
                keys |= self._evaluated(schema.get("then"), value, base, depth + 1)
            else:
                keys |= self._evaluated(schema.get("else"), value, base, depth + 1)
        return keys


def _not_multiple(value: float, divisor: float) -> bool:
    if isinstance(divisor, float):
        quotient = value / divisor
        try:
            return int(quotient) != quotient
        except (OverflowError, ValueError):
            from fractions import Fraction

            return (Fraction(value) / Fraction(divisor)).denominator != 1
    return bool(value % divisor)


# ------------------------------------------------------------ regex strings

_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.:/@+"
_UNICODE = "éß中😀Ω\u00a0"


def _regex_string(pattern: str, draw: _Draw) -> str:
    """A string ``re.search(pattern, s)`` should accept (checked by the caller)."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise Unsatisfiable(f"pattern {pattern!r} does not parse: {exc}") from None
    groups: dict[int, str] = {}
    return _emit(parsed, draw, groups, sre_parse)


def _emit(items: Any, draw: _Draw, groups: dict[int, str], sp: Any) -> str:
    c = sp  # constants live on the parser module (re._constants re-exported)
    out: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append(next(ch for ch in "ab0" if ord(ch) != av))
        elif name == "ANY":
            out.append(draw.choice(_ALPHABET))
        elif name == "IN":
            out.append(_emit_class(av, draw))
        elif name == "BRANCH":
            out.append(_emit(draw.choice(av[1]), draw, groups, sp))
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            sub = av[-1] if name == "SUBPATTERN" else av
            text = _emit(sub, draw, groups, sp)
            if name == "SUBPATTERN" and av[0] is not None:
                groups[av[0]] = text
            out.append(text)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            hi = lo + 4 if hi == c.MAXREPEAT else min(hi, lo + 4)
            out.extend(_emit(sub, draw, groups, sp) for _ in range(draw.int(lo, hi)))
        elif name == "GROUPREF":
            out.append(groups.get(av, ""))
        elif name == "GROUPREF_EXISTS":
            out.append(_emit(av[1], draw, groups, sp))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        elif name == "CATEGORY":
            out.append(_emit_class([(op, av)], draw))
        else:
            raise Unsatisfiable(f"regex construct {name} is not supported for generation")
    return "".join(out)


def _emit_class(items: list[tuple[Any, Any]], draw: _Draw) -> str:
    negate = any(str(op) == "NEGATE" for op, _ in items)
    candidates: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            candidates.append(chr(av))
        elif name == "RANGE":
            lo, hi = av
            candidates += [chr(lo), chr(hi), chr(draw.int(lo, hi))]
        elif name == "CATEGORY":
            cat = str(av)
            if cat.endswith("NOT_DIGIT"):
                candidates += list("aZ_ ")
            elif cat.endswith("DIGIT"):
                candidates += list("0123456789")
            elif cat.endswith("NOT_WORD"):
                candidates += list(" -.!")
            elif cat.endswith("WORD"):
                candidates += list("azAZ09_é")
            elif cat.endswith("NOT_SPACE"):
                candidates += list("aZ0-")
            elif cat.endswith("SPACE"):
                candidates += list(" \t\n")
    if negate:
        pool = [ch for ch in _ALPHABET + _UNICODE if ch not in candidates]
        # Character-class categories in a negated set: filter with the real regex.
        return draw.choice(pool or ["~"])
    return draw.choice(candidates or ["a"])


# ------------------------------------------------------------- generation

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


class _Fail(Exception):
    """This attempt cannot produce a value (another attempt may)."""


def _as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else [x]


_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


class _Generator:
    def __init__(self, doc: _Doc, draw: _Draw, max_depth: int) -> None:
        self.doc = doc
        self.draw = draw
        self.max_depth = max_depth
        self.checker = _Checker(doc)

    # -- flattening ----------------------------------------------------------

    def flatten(self, schema: Any, base: str, choose: bool, out: list[tuple[dict, str]], hops: int = 0) -> None:
        """Schemas that all apply at one instance location (following $ref and allOf).

        With ``choose``, one branch of each ``anyOf``/``oneOf`` and one side of each
        ``if`` joins the list too (generation); without, they are left out (site search).
        """
        if hops > 48:
            raise _Fail("reference chain too long")
        if schema is True or schema is None:
            return
        if schema is False:
            raise _Fail("false schema")
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
            raise _Fail("required structure nests deeper than the hard depth bound")
        parts: list[tuple[dict, str]] = []
        for schema, base in schemas:
            self.flatten(schema, base, True, parts)
        enums = [p["enum"] for p, _ in parts if isinstance(p.get("enum"), list)]
        consts = [p["const"] for p, _ in parts if "const" in p and self.doc.draft >= 6]
        if consts or enums:
            pool = [consts[0]] if consts else enums[0]
            options = [v for v in pool if self._fits(parts, v)]
            if not options:
                raise _Fail("no enum/const member satisfies the other keywords")
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
            return all(self.checker.valid({k: v for k, v in p.items() if k not in ("anyOf", "oneOf", "allOf")},
                                          value, b) for p, b in parts)
        except Unsatisfiable:
            return False

    def _types(self, parts: list[tuple[dict, str]]) -> set[str] | None:
        allowed: set[str] | None = None
        for p, _ in parts:
            if "type" not in p:
                continue
            names = {t for t in _as_list(p["type"]) if isinstance(t, str)}
            if "number" in names:
                names.add("integer")
            allowed = names if allowed is None else allowed & names
        if allowed is not None and not allowed:
            raise _Fail("the schemas at one location allow no common type")
        return allowed

    def _pick_type(self, types: set[str] | None, parts: list[tuple[dict, str]], depth: int) -> str:
        keys = set().union(*(p.keys() for p, _ in parts)) if parts else set()
        if types is None:
            hinted = []
            if keys & {"properties", "required", "additionalProperties", "patternProperties", "minProperties",
                       "maxProperties", "propertyNames", "dependencies", "dependentRequired"}:
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
            ilo = -(10 ** 6) if lo == -math.inf else (math.floor(lo) + 1 if lo_open else math.ceil(lo))
            ihi = 10 ** 6 if hi == math.inf else (math.ceil(hi) - 1 if hi_open else math.floor(hi))
            if lo == -math.inf and hi != math.inf:
                ilo = ihi - 10 ** 6
            if hi == math.inf and lo != -math.inf:
                ihi = ilo + 10 ** 6
            if ilo > ihi:
                if integer:
                    raise _Fail("no integer within the bounds")
            else:
                step = 1
                for m in multiples:
                    if float(m).is_integer():
                        step = step * int(m) // math.gcd(step, int(m))
                klo, khi = -(-ilo // step), ihi // step
                if klo > khi:
                    if integer:
                        raise _Fail("no multiple within the bounds")
                else:
                    roll = self.draw.int(0, 9)
                    if roll == 0:
                        k = klo
                    elif roll == 1:
                        k = khi
                    elif roll < 5 and klo <= 0 <= khi:
                        k = self.draw.int(max(klo, -10), min(khi, 10))
                    else:
                        k = self.draw.int(klo, khi)
                    return k * step
        span_lo = lo if lo != -math.inf else (hi - 1000.0 if hi != math.inf else -1000.0)
        span_hi = hi if hi != math.inf else span_lo + 2000.0
        value = span_lo + (span_hi - span_lo) * self.draw.real()
        if (lo_open and value <= lo) or (hi_open and value >= hi):
            value = (span_lo + span_hi) / 2
        if multiples:
            m = multiples[0]
            value = round(value / m) * m
        return value

    def _string(self, parts: list[tuple[dict, str]]) -> str:
        lo = max([p["minLength"] for p, _ in parts if isinstance(p.get("minLength"), int)], default=0)
        hi = min([p["maxLength"] for p, _ in parts if isinstance(p.get("maxLength"), int)], default=MAX_STRING)
        if lo > hi or lo > MAX_STRING:
            raise _Fail("string length bounds are empty or too large")
        patterns = [p["pattern"] for p, _ in parts if isinstance(p.get("pattern"), str)]
        formats = [p["format"] for p, _ in parts if isinstance(p.get("format"), str)]
        if patterns:
            for _ in range(6):
                try:
                    text = _regex_string(patterns[0], self.draw)
                except Unsatisfiable as exc:
                    raise _Fail(str(exc)) from None
                if len(text) < lo:
                    text += "a" * (lo - len(text))
                if lo <= len(text) <= hi and all(_search(p, text) for p in patterns):
                    return text
            raise _Fail(f"could not satisfy pattern {patterns[0]!r} within length {lo}..{hi}")
        if formats and formats[0] in _FORMATS and self.draw.chance(0.85):
            text = self.draw.choice(_FORMATS[formats[0]])
            if lo <= len(text) <= hi:
                return text
        size = self.draw.int(lo, min(hi, lo + 12))
        chars = [self.draw.choice(_ALPHABET) if self.draw.int(0, 9) else self.draw.choice(_UNICODE)
                 for _ in range(size)]
        return "".join(chars)

    def _item_schemas(self, parts: list[tuple[dict, str]], index: int) -> tuple[list[tuple[Any, str]], bool]:
        """Schemas for array position ``index``; False when some part forbids the position."""
        draft = self.doc.draft
        out: list[tuple[Any, str]] = []
        for p, b in parts:
            prefix = p.get("prefixItems") if draft == 2020 else (p.get("items") if isinstance(p.get("items"), list) else None)
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
            raise _Fail("array size bounds are empty or too large")
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
                    raise _Fail("minItems exceeds the positions the schema allows")
                break
            if i == target:
                schemas = schemas + contains
            for _ in range(4):
                item = self.value(schemas, depth + 1)
                if not unique or all(not _equal(item, other) for other in items):
                    break
            else:
                if len(items) >= lo:
                    break
                raise _Fail("could not find enough distinct items")
            items.append(item)
        return items

    def _property_schemas(self, parts: list[tuple[dict, str]], key: str) -> list[tuple[Any, str]] | None:
        """Schemas the value under ``key`` must satisfy; None when some part forbids ``key``."""
        out: list[tuple[Any, str]] = []
        for p, b in parts:
            props = p.get("properties") if isinstance(p.get("properties"), dict) else {}
            matched = False
            if key in props:
                out.append((props[key], b))
                matched = True
            for pattern, s in (p.get("patternProperties") or {}).items():
                if _search(pattern, key):
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
            hi = min([p["maxProperties"] for p, _ in parts if isinstance(p.get("maxProperties"), int)], default=10 ** 9)
            keys = [k for k in required]
            rate = OPTIONAL_RATE * (0.6 ** depth) if depth < self.max_depth else 0.0
            # An optional key that some oneOf branch requires could satisfy a second branch.
            avoid = self._oneof_required(parts)
            for k in declared:
                if k not in keys and k not in avoid and self.draw.chance(rate) \
                        and self._property_schemas(parts, k) is not None:
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
                    raise _Fail("minProperties needs more properties than the schema allows")
                keys.append(extra)
            while len(keys) > hi:
                optional = [k for k in keys if k not in required]
                if not optional:
                    raise _Fail("maxProperties is below the number of required properties")
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
                raise _Fail(f"property {k!r} is both required and forbidden")
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
                except _Fail:
                    return None
            elif patterns and self.draw.chance(0.6):
                try:
                    key = _regex_string(self.draw.choice(patterns), self.draw)
                except Unsatisfiable:
                    continue
            else:
                key = self.draw.choice(("x-assay", "extra", "zz", "_meta", "é")) + (str(salt) if salt else "")
            if isinstance(key, str) and self._property_schemas(parts, key) is not None:
                return key
        return None


# ----------------------------------------------------------- adjacent values


def _pointer(path: tuple[Any, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = _put(value[head], rest, new)
        return out
    out_list = list(value)
    out_list[head] = _put(value[head], rest, new)
    return out_list


class _Adjacent:
    """Finds locations in a valid value and the single-keyword violations they admit."""

    def __init__(self, gen: _Generator) -> None:
        self.gen = gen
        self.draft = gen.doc.draft

    def sites(self, schemas: list[tuple[Any, str]], value: Any, path: tuple[Any, ...], out: list,
              depth: int = 0) -> None:
        """Collect ``(path, schemas there, value there)`` for locations outside any anyOf/oneOf branch."""
        if depth > HARD_DEPTH or len(out) > 256:
            return
        parts: list[tuple[dict, str]] = []
        try:
            for schema, base in schemas:
                self.gen.flatten(schema, base, False, parts)
        except _Fail:
            return
        out.append((path, parts, value))
        if isinstance(value, dict):
            for k, v in value.items():
                schemas = self.gen._property_schemas(parts, k)
                if schemas:
                    self.sites(schemas, v, path + (k,), out, depth + 1)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                schemas, _ = self.gen._item_schemas(parts, i)
                if schemas:
                    self.sites(schemas, v, path + (i,), out, depth + 1)

    def candidates(self, parts: list[tuple[dict, str]], value: Any) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        draft = self.draft
        types = None
        for p, _ in parts:
            if "type" in p:
                names = {t for t in _as_list(p["type"]) if isinstance(t, str)}
                types = names if types is None else types & names
        samples = (None, True, 7, 1.5, "assay", [], {})
        if types is not None:
            out += [("type", v) for v in samples if not any(_is_type(v, name, draft) for name in types)]
        for kw in ("anyOf", "oneOf", "not"):
            if any(kw in p for p, _ in parts):
                # Whatever single keyword rejects a plain value of another type is the claim.
                out += [("", v) for v in samples]
        for p, _ in parts:
            if isinstance(p.get("enum"), list):
                for v in _outside(p["enum"], value):
                    out.append(("enum", v))
            if "const" in p and draft >= 6:
                for v in _outside([p["const"]], value):
                    out.append(("const", v))
            if isinstance(value, dict):
                for k in p.get("required", []) if isinstance(p.get("required"), list) else []:
                    if k in value:
                        out.append(("required", {kk: vv for kk, vv in value.items() if kk != k}))
                if p.get("additionalProperties") is False:
                    for key in ("assay_extra", "x", "zz-extra"):
                        if key not in (p.get("properties") or {}) and not any(
                                _search(pat, key) for pat in (p.get("patternProperties") or {})):
                            out.append(("additionalProperties", {**value, key: None}))
                            break
                if isinstance(p.get("maxProperties"), int):
                    filler = {f"assay{i}": None for i in range(p["maxProperties"] + 1 - len(value))}
                    out.append(("maxProperties", {**value, **filler}))
                if isinstance(p.get("minProperties"), int) and p["minProperties"] > 0:
                    keep = list(value)[: p["minProperties"] - 1]
                    out.append(("minProperties", {k: value[k] for k in keep}))
                deps_kw = "dependencies" if draft <= 7 else "dependentRequired"
                for k, deps in (p.get(deps_kw) or {}).items() if isinstance(p.get(deps_kw), dict) else []:
                    if k in value and isinstance(deps, list):
                        for d in deps:
                            if d in value:
                                out.append((deps_kw, {kk: vv for kk, vv in value.items() if kk != d}))
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out += self._numbers(p, value)
            if isinstance(value, str):
                if isinstance(p.get("minLength"), int) and p["minLength"] > 0:
                    out.append(("minLength", value[: p["minLength"] - 1]))
                if isinstance(p.get("maxLength"), int):
                    pad = (value[-1:] or "a") * (p["maxLength"] + 1 - len(value))
                    out.append(("maxLength", value + pad))
                if isinstance(p.get("pattern"), str):
                    for v in ("", "~", " ", "\x00", "assay", value[::-1], value + "\n!", "!" + value):
                        try:
                            if not _search(p["pattern"], v):
                                out.append(("pattern", v))
                        except Unsatisfiable:
                            break
            if isinstance(value, list):
                if isinstance(p.get("minItems"), int) and p["minItems"] > 0:
                    out.append(("minItems", value[: p["minItems"] - 1]))
                if isinstance(p.get("maxItems"), int) and p["maxItems"] + 1 - len(value) <= MAX_ITEMS:
                    longer = self._extend(parts, value, p["maxItems"] + 1)
                    if longer is not None:
                        out.append(("maxItems", longer))
                if p.get("uniqueItems") is True and value:
                    out.append(("uniqueItems", value + [copy.deepcopy(value[0])]))
                if draft == 2020 and p.get("items") is False and isinstance(p.get("prefixItems"), list):
                    out.append(("items", value + [None]))
                if draft <= 2019 and p.get("additionalItems") is False and isinstance(p.get("items"), list):
                    out.append(("additionalItems", value + [None] * (len(p["items"]) + 1 - len(value))))
        return out

    def _extend(self, parts: list[tuple[dict, str]], value: list[Any], size: int) -> list[Any] | None:
        """``value`` grown to ``size`` with fresh valid items (distinct from the others)."""
        items = list(value)
        while len(items) < size:
            schemas, allowed = self.gen._item_schemas(parts, len(items))
            if not allowed:
                return None
            for _ in range(4):
                try:
                    item = self.gen.value(schemas, self.gen.max_depth)
                except _Fail:
                    return None
                if all(not _equal(item, other) for other in items):
                    break
            items.append(item)
        return items

    def _numbers(self, p: dict, value: float) -> list[tuple[str, Any]]:
        """Just-out-of-range numbers of ``value``'s kind (int stays int) for each bound in ``p``."""
        out: list[tuple[str, Any]] = []
        integer = isinstance(value, int)
        draft4 = self.draft == 4

        def under(bound: float, inclusive: bool) -> Any:
            # A value v with v < bound (or v <= bound when ``inclusive``).
            if integer:
                return math.floor(bound) if inclusive else math.ceil(bound) - 1
            return bound if inclusive else bound - 0.5

        def over(bound: float, inclusive: bool) -> Any:
            if integer:
                return math.ceil(bound) if inclusive else math.floor(bound) + 1
            return bound if inclusive else bound + 0.5

        for kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            bound = p.get(kw)
            if not isinstance(bound, (int, float)) or isinstance(bound, bool) or not math.isfinite(bound):
                continue
            if kw == "minimum":
                out.append((kw, under(bound, draft4 and p.get("exclusiveMinimum") is True)))
            elif kw == "maximum":
                out.append((kw, over(bound, draft4 and p.get("exclusiveMaximum") is True)))
            elif not draft4:
                out.append((kw, under(bound, True) if kw == "exclusiveMinimum" else over(bound, True)))
        m = p.get("multipleOf")
        if isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0:
            out.append(("multipleOf", value + 1 if m > 1 and float(m).is_integer() else value + m / 2))
        return out


def _outside(allowed: list[Any], value: Any) -> list[Any]:
    """Values of ``value``'s JSON type (when possible) equal to nothing in ``allowed``."""
    if isinstance(value, bool):
        pool: list[Any] = [not value]
    elif isinstance(value, (int, float)):
        numbers = [a for a in allowed if isinstance(a, (int, float)) and not isinstance(a, bool)]
        top = max(numbers, default=0)
        pool = [int(top) + 1 if isinstance(value, int) else float(top) + 0.5]
    elif isinstance(value, str):
        pool = [value + "~", "assay-not-in-enum", ""]
    elif isinstance(value, list):
        pool = [value + [None], []]
    elif isinstance(value, dict):
        pool = [{**value, "assay": None}, {}]
    else:
        pool = [0, "null"]
    return [v for v in pool if not any(_equal(v, a) for a in allowed)]


# ------------------------------------------------------------------ public


def _setup(schema: Any, root: Any | None, draft: int | None, resources: Mapping[str, Any] | None) -> tuple[_Doc, Any]:
    if not isinstance(schema, (dict, bool)):
        raise ConfigError(f"a JSON Schema must be an object or a boolean, not {type(schema).__name__}")
    document = root if root is not None else schema
    chosen = draft if draft is not None else _draft_of(document)
    if chosen == 3:
        raise ConfigError("draft 3 schemas are not supported; declare draft 4 or later in $schema")
    if chosen not in (4, 6, 7, 2019, 2020):
        raise ConfigError(f"unknown JSON Schema draft {chosen!r}; use 4, 6, 7, 2019 or 2020")
    return _Doc(document, chosen, resources), schema


def check(schema: Any, value: Any, *, root: Any | None = None, draft: int | None = None,
          resources: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """The errors ``value`` has against ``schema`` as ``(keyword, JSON pointer)`` pairs.

    Mirrors ``jsonschema``'s top-level ``iter_errors`` for the supported keywords
    (``format`` is not asserted).
    """
    doc, schema = _setup(schema, root, draft, resources)
    return [(kw, _pointer(p)) for kw, p in _Checker(doc).errors(schema, value, doc.base, ())]


def _valid(gen: _Generator, schema: Any) -> Any:
    last = "no attempt"
    for _ in range(MAX_ATTEMPTS):
        try:
            value = gen.value([(schema, gen.doc.base)], 0)
            errors = gen.checker.errors(schema, value, gen.doc.base, ())
        except (_Fail, Unsatisfiable) as exc:
            last = str(exc)
            continue
        if not errors:
            return value
        last = f"{errors[0][0]} at {_pointer(errors[0][1]) or '/'}"
    raise Unsatisfiable(f"no valid value found in {MAX_ATTEMPTS} attempts (last failure: {last}); "
                        "simplify the schema or use adjacent mode")


def _adjacent(gen: _Generator, schema: Any) -> Generated:
    adj = _Adjacent(gen)
    last = "no violation site"
    for _ in range(3):
        base_value = _valid(gen, schema)
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
                candidate = _put(base_value, path, new)
                try:
                    errors = gen.checker.errors(schema, candidate, gen.doc.base, ())
                except Unsatisfiable:
                    continue
                if len(errors) == 1 and errors[0][1] == path and (kw == "" or errors[0][0] == kw):
                    claim = errors[0][0]
                    return Generated(candidate, "adjacent", claim, _pointer(path),
                                     f"{claim} violated at {_pointer(path) or '/'}")
                last = f"{kw or 'a type change'} at {_pointer(path) or '/'} gave {len(errors)} errors"
    raise Unsatisfiable(f"no single-violation value found ({last}); the schema may accept every value")


def _run(schema: Any, draw: _Draw, mode: str, root: Any | None, draft: int | None,
         resources: Mapping[str, Any] | None, max_depth: int) -> Generated:
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    doc, schema = _setup(schema, root, draft, resources)
    gen = _Generator(doc, draw, max_depth)
    if mode == "mixed":
        if draw.chance(0.5):
            try:
                return _adjacent(gen, schema)
            except Unsatisfiable:
                pass
        return Generated(_valid(gen, schema), "valid")
    if mode == "adjacent":
        return _adjacent(gen, schema)
    return Generated(_valid(gen, schema), "valid")


def generate(schema: Any, rng: random.Random, mode: str = "valid", *, root: Any | None = None,
             draft: int | None = None, resources: Mapping[str, Any] | None = None,
             max_depth: int = DEFAULT_DEPTH) -> Generated:
    """A value for ``schema`` in ``mode`` (``valid``, ``adjacent`` or ``mixed``), drawn from ``rng``.

    ``root`` is the document that ``$ref``\\ s resolve against when ``schema`` is
    part of a larger one (an OpenAPI document, a schema's ``definitions``);
    ``resources`` maps other URIs to their schemas.  ``draft`` overrides the
    draft read from ``$schema``.  Raises :class:`Unsatisfiable` when no value of
    the mode exists or can be found, and :class:`~assay.errors.ConfigError` for a
    malformed schema or a reference that does not resolve.
    """
    return _run(schema, _RandomDraw(rng), mode, root, draft, resources, max_depth)


def from_bytes(schema: Any, data: bytes, mode: str = "mixed", *, root: Any | None = None,
               draft: int | None = None, resources: Mapping[str, Any] | None = None,
               max_depth: int = DEFAULT_DEPTH) -> Generated:
    """Like :func:`generate`, with every choice read from ``data`` (see :class:`ByteSource`).

    The engine's byte mutations then become structural mutations, and shorter
    input decodes to simpler values.  When the bytes lead nowhere valid, a
    generator seeded from the bytes' digest takes over, so the result is still
    a function of ``data`` alone.
    """
    try:
        return _run(schema, _ByteDraw(ByteSource(data)), mode, root, draft, resources, max_depth)
    except Unsatisfiable:
        seed = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")
        return _run(schema, _RandomDraw(random.Random(seed)), mode, root, draft, resources, max_depth)
