"""The hand-written JSON Schema checker assay's schema generator used before it judged with ``jsonschema``.

Kept only as the baseline of bench/schema_judge.py (``--baseline
historical.schema_checker:_Checker`` with bench/ on the path): it mirrors
``jsonschema.iter_errors``' (keyword, instance path) reporting for the keywords
the generator supports, without ``unevaluatedItems`` and with an approximate
``$recursiveRef``.  Nothing in src/ imports it.
"""

from __future__ import annotations

from typing import Any

from assay.gen.schema.model import Error, Unsatisfiable
from assay.gen.schema.resolve import SchemaDocs
from assay.gen.schema.values import is_type, json_equal, pattern_search


def _unique(items: list[Any]) -> bool:
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if json_equal(items[i], items[j]):
                return False
    return True


def _not_multiple(value: float, divisor: float) -> bool:
    if isinstance(divisor, float):
        quotient = value / divisor
        try:
            return int(quotient) != quotient
        except (OverflowError, ValueError):
            from fractions import Fraction

            return (Fraction(value) / Fraction(divisor)).denominator != 1
    return bool(value % divisor)


class _Checker:
    """Errors as ``jsonschema.iter_errors`` reports them: (keyword, instance path)."""

    def __init__(self, doc: SchemaDocs) -> None:
        self.doc = doc
        self.draft = doc.draft

    def valid(self, schema: Any, value: Any, base: str) -> bool:
        return not self.errors(schema, value, base, (), first=True)

    def errors(
        self, schema: Any, value: Any, base: str, path: tuple[Any, ...], first: bool = False, depth: int = 0
    ) -> list[Error]:
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
            return [] if any(is_type(value, t, draft) for t in types if isinstance(t, str)) else here
        if kw == "enum":
            return [] if any(json_equal(value, e) for e in arg) else here
        if kw == "const" and draft >= 6:
            return [] if json_equal(value, arg) else here
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
                return [] if pattern_search(arg, value) else here
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
            return [
                e
                for p, s in arg.items()
                for k, v in value.items()
                if pattern_search(p, k)
                for e in sub(s, v, path + (k,))
            ]
        if kw == "additionalProperties":
            extras = [
                k
                for k in value
                if k not in schema.get("properties", {})
                and not any(pattern_search(p, k) for p in schema.get("patternProperties", {}))
            ]
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
            keys |= {k for k in value if pattern_search(pattern, k)}
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
