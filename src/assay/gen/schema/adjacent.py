"""Adjacent values: a valid value with one keyword broken at one location."""

from __future__ import annotations

import copy
import math
from typing import Any

from assay.gen.schema.model import HARD_DEPTH, MAX_ITEMS, AttemptFailed, Unsatisfiable
from assay.gen.schema.valid import ValueGenerator
from assay.gen.schema.values import as_list, is_type, json_equal, pattern_search


class Adjacent:
    """Finds locations in a valid value and the single-keyword violations they admit."""

    def __init__(self, gen: ValueGenerator) -> None:
        self.gen = gen
        self.draft = gen.doc.draft

    def sites(
        self, schemas: list[tuple[Any, str]], value: Any, path: tuple[Any, ...], out: list, depth: int = 0
    ) -> None:
        """Collect ``(path, schemas there, value there)`` for locations outside any anyOf/oneOf branch."""
        if depth > HARD_DEPTH or len(out) > 256:
            return
        parts: list[tuple[dict, str]] = []
        try:
            for schema, base in schemas:
                self.gen.flatten(schema, base, False, parts)
        except AttemptFailed:
            return
        out.append((path, parts, value))
        if isinstance(value, dict):
            for k, v in value.items():
                schemas = self.gen._property_schemas(parts, k)  # type: ignore[assignment]  # None: checked below
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
                names = {t for t in as_list(p["type"]) if isinstance(t, str)}
                types = names if types is None else types & names
        samples: tuple[Any, ...] = (None, True, 7, 1.5, "assay", [], {})
        if types is not None:
            out += [("type", v) for v in samples if not any(is_type(v, name, draft) for name in types)]
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
                            pattern_search(pat, key) for pat in (p.get("patternProperties") or {})
                        ):
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
                            if not pattern_search(p["pattern"], v):
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
                except AttemptFailed:
                    return None
                if all(not json_equal(item, other) for other in items):
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
    return [v for v in pool if not any(json_equal(v, a) for a in allowed)]
