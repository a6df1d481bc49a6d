"""``json@1``: JSON documents as lexical trees.

Values are :class:`JsonNode` trees that keep the *spelling* of every scalar (a
number's digits and exponent, a string's escapes), so a mutation can turn ``1``
into ``-0`` or ``1E+400`` and a string into one with a lone surrogate escape:
the lexical corners a JSON decoder gets wrong.  Rendering is compact (no
insignificant whitespace); :meth:`JsonStrategy.parse` reads any strict JSON text
and renders it back in that compact form, byte for byte for what ``render``
produced.

Mutations keep the grammar most of the time; at :data:`INVALID_RATE` they
produce an *adjacent* invalid document (a leading zero, a trailing comma, a bad
escape) because those are the inputs that exercise a decoder's error paths.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from assay.gen.strategy import register_strategy

MAX_BYTES = 8192  #: hard bound on a rendered document
MAX_DEPTH = 6  #: nesting bound for generated and mutated documents
MAX_NODES = 96  #: node bound for generated documents
MAX_CHILDREN = 6  #: array items / object members drawn per container
MAX_PARSE_DEPTH = 64  #: deeper input is not read (parse returns None)
INVALID_RATE = 0.08  #: share of mutations that make the document adjacent-invalid
MAX_SHRINK = 64  #: bound on shrink candidates per call
MAX_TOKENS = 64  #: bound on dictionary tokens per value

_SCALARS = ("null", "true", "false", "number", "string")


@dataclass(frozen=True, slots=True)
class JsonNode:
    """One JSON value with its lexical form.

    ``kind`` is ``null``, ``true``, ``false``, ``number``, ``string``, ``array``,
    ``object`` or ``raw`` (a deliberately invalid token, rendered verbatim).
    ``text`` is the number literal, the escaped string body (without quotes) or
    the raw token.  ``items`` are array elements or object values; ``keys`` are
    the escaped object member names, parallel to ``items``.
    """

    kind: str
    text: str = ""
    items: tuple[JsonNode, ...] = ()
    keys: tuple[str, ...] = ()


# ---------------------------------------------------------------- rendering


def _render(node: JsonNode, out: list[str]) -> None:
    kind = node.kind
    if kind in ("null", "true", "false"):
        out.append(kind)
    elif kind in ("number", "raw"):
        out.append(node.text)
    elif kind == "string":
        out.append('"' + node.text + '"')
    elif kind == "array":
        out.append("[")
        for i, item in enumerate(node.items):
            if i:
                out.append(",")
            _render(item, out)
        out.append("]")
    else:
        out.append("{")
        for i, (key, item) in enumerate(zip(node.keys, node.items)):
            if i:
                out.append(",")
            out.append('"' + key + '":')
            _render(item, out)
        out.append("}")


def render_node(node: JsonNode) -> bytes:
    """The compact UTF-8 text of ``node``."""
    out: list[str] = []
    _render(node, out)
    return "".join(out).encode("utf-8", "surrogatepass")


# ------------------------------------------------------------------ parsing

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"((?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*)"')


class _Reject(Exception):
    pass


def _parse_value(text: str, pos: int, depth: int) -> tuple[JsonNode, int]:
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]  # _WS always matches
    if depth > MAX_PARSE_DEPTH or pos >= len(text):
        raise _Reject
    ch = text[pos]
    if ch == '"':
        m = _STRING.match(text, pos)
        if not m:
            raise _Reject
        return JsonNode("string", m.group(1)), m.end()
    if ch == "[":
        items: list[JsonNode] = []
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]  # _WS always matches
        if text.startswith("]", pos):
            return JsonNode("array"), pos + 1
        while True:
            item, pos = _parse_value(text, pos, depth + 1)
            items.append(item)
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]  # _WS always matches
            if text.startswith(",", pos):
                pos += 1
            elif text.startswith("]", pos):
                return JsonNode("array", items=tuple(items)), pos + 1
            else:
                raise _Reject
    if ch == "{":
        keys: list[str] = []
        values: list[JsonNode] = []
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]  # _WS always matches
        if text.startswith("}", pos):
            return JsonNode("object"), pos + 1
        while True:
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]  # _WS always matches
            m = _STRING.match(text, pos)
            if not m:
                raise _Reject
            pos = _WS.match(text, m.end()).end()  # type: ignore[union-attr]  # _WS always matches
            if not text.startswith(":", pos):
                raise _Reject
            value, pos = _parse_value(text, pos + 1, depth + 1)
            keys.append(m.group(1))
            values.append(value)
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]  # _WS always matches
            if text.startswith(",", pos):
                pos += 1
            elif text.startswith("}", pos):
                return JsonNode("object", items=tuple(values), keys=tuple(keys)), pos + 1
            else:
                raise _Reject
    for literal in ("null", "true", "false"):
        if text.startswith(literal, pos):
            return JsonNode(literal), pos + len(literal)
    m = _NUMBER.match(text, pos)
    if m:
        return JsonNode("number", m.group(0)), m.end()
    raise _Reject


def parse_node(data: bytes) -> JsonNode | None:
    """The tree of strict JSON ``data``, or ``None`` if it is not strict JSON."""
    try:
        text = data.decode("utf-8")
        node, pos = _parse_value(text, 0, 0)
    except (UnicodeDecodeError, _Reject, RecursionError):
        return None
    if _WS.match(text, pos).end() != len(text):  # type: ignore[union-attr]  # _WS always matches
        return None
    return node


# --------------------------------------------------------------- generation

_PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.:/"
_SIMPLE_ESCAPES = ('\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t")
_UNICODE = ("é", "ß", "中", "文", "😀", "\u2028", "\u00a0", "Ω", "\u200b", "ｱ")
_KEY_WORDS = (
    "id",
    "name",
    "type",
    "value",
    "items",
    "data",
    "user",
    "count",
    "tags",
    "enabled",
    "created_at",
    "__proto__",
    "constructor",
    "",
    "a b",
    "$ref",
)
_INTERESTING_NUMBERS = (
    "0",
    "-0",
    "1",
    "-1",
    "0.0",
    "-0.0",
    "1e0",
    "1E+2",
    "1e-7",
    "2.5E-3",
    "9007199254740993",
    "-9223372036854775809",
    "18446744073709551616",
    "1.7976931348623157e308",
    "5e-324",
    "1e400",
    "-1e400",
    "123456789012345678901234567890",
    "0.1",
    "3.141592653589793",
    "1.0000000000000002",
    "4.9e-325",
)
_INTERESTING_STRINGS = (
    "",
    " ",
    "\\u0000",
    "\\ud800",
    "\\udfff",
    "\\ud83d\\ude00",
    "\\ude00\\ud83d",
    "\\uFFFF",
    "\\uFEFF",
    "%s%n",
    "../../etc/passwd",
    "<script>",
    "' OR 1=1 --",
    "null",
    "true",
    "0",
    "é",
    "😀",
    "\\\\u0041",
    "a\\nb",
)
#: Tokens that make the document adjacent-invalid for a strict decoder.
_INVALID_TOKENS = (
    "01",
    "-",
    "1.",
    ".5",
    "+1",
    "1e",
    "1e+",
    "0x10",
    "NaN",
    "Infinity",
    "-Infinity",
    "tru",
    "nul",
    "True",
    "'x'",
    '"\\x"',
    '"\\u12"',
    '"\t"',
    '"\x01"',
    '"',
    "[",
    "{",
    "]",
    "}",
    "",
    "1 2",
    '"\\ud800',
    "undefined",
)


class _Budget:
    __slots__ = ("nodes",)

    def __init__(self, nodes: int) -> None:
        self.nodes = nodes


def _gen_number(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(_INTERESTING_NUMBERS)
    sign = "-" if rng.random() < 0.3 else ""
    if roll < 0.55:
        return sign + str(rng.randint(0, 1000))
    if roll < 0.65:
        return sign + str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(rng.randint(10, 40)))
    digits = str(rng.randint(0, 99999))
    frac = "." + str(rng.randint(0, 10 ** rng.randint(1, 6))) if rng.random() < 0.7 else ""
    exp = ""
    if rng.random() < 0.5:
        exp = rng.choice("eE") + rng.choice(("", "+", "-")) + str(rng.randint(0, 330))
    return sign + digits + frac + exp


def _gen_string(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return rng.choice(_INTERESTING_STRINGS)
    parts: list[str] = []
    for _ in range(rng.randint(0, 12)):
        roll = rng.random()
        if roll < 0.7:
            parts.append(rng.choice(_PLAIN))
        elif roll < 0.8:
            parts.append(rng.choice(_SIMPLE_ESCAPES))
        elif roll < 0.87:
            parts.append(rng.choice(_UNICODE))
        elif roll < 0.94:
            code = rng.choice((rng.randint(0, 0x1F), rng.randint(0x20, 0xD7FF), rng.randint(0xE000, 0xFFFF)))
            parts.append(("\\u%04x" if rng.random() < 0.5 else "\\u%04X") % code)
        elif roll < 0.98:
            hi, lo = rng.randint(0xD800, 0xDBFF), rng.randint(0xDC00, 0xDFFF)
            parts.append("\\u%04x\\u%04x" % (hi, lo))
        else:
            parts.append("\\u%04x" % rng.randint(0xD800, 0xDFFF))
    return "".join(parts)


def _gen_key(rng: random.Random) -> str:
    return rng.choice(_KEY_WORDS) if rng.random() < 0.6 else _gen_string(rng)


def _gen_node(rng: random.Random, depth: int, budget: _Budget) -> JsonNode:
    budget.nodes -= 1
    container_ok = depth < MAX_DEPTH and budget.nodes > 0
    roll = rng.random()
    if container_ok and roll < 0.18:
        count = rng.randint(0, MAX_CHILDREN)
        items = tuple(_gen_node(rng, depth + 1, budget) for _ in range(count) if budget.nodes > 0)
        return JsonNode("array", items=items)
    if container_ok and roll < 0.38:
        count = rng.randint(0, MAX_CHILDREN)
        keys: list[str] = []
        values: list[JsonNode] = []
        for _ in range(count):
            if budget.nodes <= 0:
                break
            keys.append(_gen_key(rng))
            values.append(_gen_node(rng, depth + 1, budget))
        return JsonNode("object", items=tuple(values), keys=tuple(keys))
    kind = rng.choice(("null", "true", "false", "number", "number", "string", "string", "string"))
    if kind == "number":
        return JsonNode("number", _gen_number(rng))
    if kind == "string":
        return JsonNode("string", _gen_string(rng))
    return JsonNode(kind)


def generate_node(rng: random.Random, max_nodes: int = MAX_NODES) -> JsonNode:
    """A fresh valid JSON tree (usually a container at the top)."""
    budget = _Budget(max_nodes)
    if rng.random() < 0.8:
        # Documents are usually objects or arrays; a top-level container reaches
        # more of a decoder than a bare scalar does.
        node = _gen_node(rng, 0, budget)
        while node.kind not in ("array", "object"):
            budget = _Budget(max_nodes)
            node = _gen_node(rng, 0, budget)
        return node
    return _gen_node(rng, 0, budget)


# ------------------------------------------------------------- tree surgery

Path = tuple[int, ...]


def _paths(node: JsonNode, limit: int = 512) -> list[Path]:
    out: list[Path] = []
    stack: list[tuple[JsonNode, Path]] = [(node, ())]
    while stack and len(out) < limit:
        current, path = stack.pop()
        out.append(path)
        for i in range(len(current.items) - 1, -1, -1):
            stack.append((current.items[i], path + (i,)))
    return out


def _get(node: JsonNode, path: Path) -> JsonNode:
    for i in path:
        node = node.items[i]
    return node


def _put(node: JsonNode, path: Path, new: JsonNode) -> JsonNode:
    if not path:
        return new
    items = list(node.items)
    items[path[0]] = _put(items[path[0]], path[1:], new)
    return replace(node, items=tuple(items))


def _depth(node: JsonNode) -> int:
    if not node.items:
        return 0
    return 1 + max(_depth(item) for item in node.items)


# ---------------------------------------------------------------- mutation


def _mutate_scalar(node: JsonNode, rng: random.Random) -> JsonNode:
    if node.kind == "number":
        if rng.random() < 0.5:
            return JsonNode("number", rng.choice(_INTERESTING_NUMBERS))
        text = node.text
        roll = rng.random()
        if roll < 0.3:
            return JsonNode("number", text[1:] if text.startswith("-") else "-" + text)
        if roll < 0.6 and "e" not in text.lower():
            return JsonNode("number", text + rng.choice("eE") + rng.choice(("", "+", "-")) + str(rng.randint(0, 400)))
        return JsonNode("number", _gen_number(rng))
    if node.kind == "string":
        roll = rng.random()
        if roll < 0.3:
            return JsonNode("string", rng.choice(_INTERESTING_STRINGS))
        if roll < 0.6:
            # Insert at a boundary between escape sequences so the body stays valid.
            cut = _escape_boundary(node.text, rng)
            return JsonNode("string", node.text[:cut] + _gen_string(rng)[:24] + node.text[cut:])
        if roll < 0.8 and node.text:
            cut = _escape_boundary(node.text, rng)
            return JsonNode("string", node.text[:cut])
        return JsonNode("string", _gen_string(rng))
    return _swap_literal(node, rng)


def _swap_literal(node: JsonNode, rng: random.Random) -> JsonNode:
    choice = rng.choice([k for k in ("null", "true", "false", "number", "string") if k != node.kind])
    if choice == "number":
        return JsonNode("number", rng.choice(_INTERESTING_NUMBERS))
    if choice == "string":
        return JsonNode("string", rng.choice(_INTERESTING_STRINGS))
    return JsonNode(choice)


_ESCAPE_RE = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.S)


def _escape_boundary(text: str, rng: random.Random) -> int:
    bounds = [0] + [m.end() for m in _ESCAPE_RE.finditer(text)]
    return rng.choice(bounds)


def _mutate_container(node: JsonNode, rng: random.Random, depth: int) -> JsonNode:
    items = list(node.items)
    keys = list(node.keys)
    is_obj = node.kind == "object"
    ops = ["insert"]
    if items:
        ops += ["delete", "duplicate", "unwrap"]
    if len(items) > 1:
        ops.append("swap")
    if is_obj and items:
        ops += ["rename", "dupkey"]
    op = rng.choice(ops)
    if op == "insert":
        i = rng.randint(0, len(items))
        items.insert(i, _gen_node(rng, depth + 1, _Budget(8)))
        if is_obj:
            keys.insert(i, _gen_key(rng))
    elif op == "delete":
        i = rng.randrange(len(items))
        del items[i]
        if is_obj:
            del keys[i]
    elif op == "duplicate":
        i = rng.randrange(len(items))
        items.insert(i, items[i])
        if is_obj:
            keys.insert(i, _gen_key(rng))
    elif op == "dupkey":
        # A repeated member name is valid JSON with implementation-defined meaning.
        i = rng.randrange(len(items))
        items.append(_gen_node(rng, depth + 1, _Budget(4)))
        keys.append(keys[i])
    elif op == "rename":
        keys[rng.randrange(len(keys))] = _gen_key(rng)
    elif op == "swap":
        i, j = rng.sample(range(len(items)), 2)
        items[i], items[j] = items[j], items[i]
        if is_obj:
            keys[i], keys[j] = keys[j], keys[i]
    elif op == "unwrap":
        return items[rng.randrange(len(items))]
    return JsonNode(node.kind, items=tuple(items), keys=tuple(keys) if is_obj else ())


def _mutate_invalid(node: JsonNode, rng: random.Random) -> JsonNode:
    paths = _paths(node)
    path = rng.choice(paths)
    target = _get(node, path)
    if target.kind in ("array", "object") and rng.random() < 0.4:
        # An empty raw item renders as a trailing or doubled comma.
        items = list(target.items)
        i = rng.randint(0, len(items))
        items.insert(i, JsonNode("raw", ""))
        keys = list(target.keys)
        if target.kind == "object":
            keys.insert(i, rng.choice(("", "k")))
        return _put(node, path, replace(target, items=tuple(items), keys=tuple(keys)))
    return _put(node, path, JsonNode("raw", rng.choice(_INVALID_TOKENS)))


class JsonStrategy:
    """Structured generation for JSON documents (``json@1``)."""

    name = "json"
    version = 1

    def generate(self, rng: random.Random) -> JsonNode:
        """A fresh valid document, bounded by :data:`MAX_NODES` and :data:`MAX_BYTES`."""
        node = generate_node(rng)
        while len(render_node(node)) > MAX_BYTES:
            node = generate_node(rng, MAX_NODES // 2)
        return node

    def parse(self, data: bytes) -> JsonNode | None:
        """The tree of strict JSON ``data`` (``None`` for anything else)."""
        if len(data) > 4 * MAX_BYTES:
            return None
        return parse_node(data)

    def render(self, value: JsonNode) -> bytes:
        """Compact UTF-8 JSON text."""
        return render_node(value)

    def mutate(self, value: JsonNode, rng: random.Random) -> JsonNode:
        """``value`` with one node changed; adjacent-invalid at :data:`INVALID_RATE`."""
        if rng.random() < INVALID_RATE:
            out = _mutate_invalid(value, rng)
        else:
            path = rng.choice(_paths(value))
            target = _get(value, path)
            depth = len(path)
            roll = rng.random()
            if roll < 0.25:
                new = _gen_node(rng, depth, _Budget(12))
            elif roll < 0.32 and depth < MAX_DEPTH:
                new = (
                    JsonNode("array", items=(target,))
                    if rng.random() < 0.5
                    else JsonNode("object", items=(target,), keys=(_gen_key(rng),))
                )
            elif target.kind in ("array", "object"):
                new = _mutate_container(target, rng, depth)
            else:
                new = _mutate_scalar(target, rng)
            out = _put(value, path, new)
        return out if self._fits(out) else value

    def crossover(self, a: JsonNode, b: JsonNode, rng: random.Random) -> JsonNode:
        """``a`` with one subtree replaced by (or extended with) a subtree of ``b``."""
        donor = _get(b, rng.choice(_paths(b)))
        path = rng.choice(_paths(a))
        target = _get(a, path)
        if target.kind in ("array", "object") and rng.random() < 0.5:
            items = list(target.items)
            i = rng.randint(0, len(items))
            items.insert(i, donor)
            keys = list(target.keys)
            if target.kind == "object":
                donor_keys = list(b.keys) or [_gen_key(rng)]
                keys.insert(i, rng.choice(donor_keys))
            out = _put(a, path, replace(target, items=tuple(items), keys=tuple(keys)))
        else:
            out = _put(a, path, donor)
        return out if self._fits(out) else a

    def tokens(self, value: JsonNode) -> list[bytes]:
        """Member names and scalar spellings found in ``value``, quoted as in the text."""
        seen: dict[bytes, None] = {}
        for path in _paths(value):
            node = _get(value, path)
            for key in node.keys:
                seen[('"' + key + '"').encode("utf-8", "surrogatepass")] = None
            if node.kind == "string" and node.text:
                seen[('"' + node.text + '"').encode("utf-8", "surrogatepass")] = None
            elif node.kind == "number":
                seen[node.text.encode()] = None
            if len(seen) >= MAX_TOKENS:
                break
        return list(seen)[:MAX_TOKENS]

    def shrink_candidates(self, value: JsonNode) -> Iterator[JsonNode]:
        """Simpler trees: a child in place of a container, one child dropped, empty scalars."""
        count = 0
        for path in _paths(value, limit=128):
            node = _get(value, path)
            candidates: list[JsonNode] = []
            if node.kind in ("array", "object"):
                candidates.extend(node.items)
                for i in range(len(node.items)):
                    items = node.items[:i] + node.items[i + 1 :]
                    keys = node.keys[:i] + node.keys[i + 1 :] if node.kind == "object" else ()
                    candidates.append(JsonNode(node.kind, items=items, keys=keys))
            elif node.kind == "string" and node.text:
                candidates.append(JsonNode("string", ""))
            elif node.kind == "number" and node.text != "0":
                candidates.append(JsonNode("number", "0"))
            elif node.kind == "raw" and node.text:
                candidates.append(JsonNode("number", "0"))
            for candidate in candidates:
                yield _put(value, path, candidate)
                count += 1
                if count >= MAX_SHRINK:
                    return

    @staticmethod
    def _fits(node: JsonNode) -> bool:
        return _depth(node) <= MAX_DEPTH + 2 and len(render_node(node)) <= MAX_BYTES


register_strategy(JsonStrategy())
