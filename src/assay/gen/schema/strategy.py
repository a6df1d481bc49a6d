"""``schema=`` targets: a JSON Schema as a strategy whose values are JSON documents.

``@assay.target(schema="order.schema.json", schema_mode="both")`` builds a
:class:`SchemaStrategy`, registers it under a name derived from the schema's
contents, the mode and ``max_len`` (``schema-<file or title>-<digest>@1``, so a campaign's seed
plus that name reproduce its schedule and a worker that imports the target
again finds the same strategy), and the target receives each value as UTF-8
JSON bytes.

Modes: ``valid`` (every value the schema accepts), ``adjacent`` (every value
has exactly one ``jsonschema`` error) and ``both``: each value, fresh or
mutated, is adjacent or valid on one coin drawn from the case RNG
(:data:`ADJACENT_RATE`; valid when the schema has no adjacent value), so the
split holds however the corpus grows; a crossover keeps its first parent's kind.  Values are judged by
``jsonschema`` (:mod:`assay.gen.schema.judge`), so the ``assay[schema]`` extra
is needed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError
from assay.gen.schema import NO_BASE, adjacent_value, prepare_schema, valid_value
from assay.gen.schema.adjacent import Adjacent
from assay.gen.schema.draw import RandomDraw
from assay.gen.schema.judge import Judge
from assay.gen.schema.model import DEFAULT_DEPTH, AttemptFailed, Generated, Unsatisfiable
from assay.gen.schema.valid import ValueGenerator
from assay.gen.schema.values import json_pointer, put_at
from assay.gen.strategy import get_strategy, register_strategy, spec

TARGET_MODES = ("valid", "adjacent", "both")
ADJACENT_RATE = 0.5  #: share of fresh values that are adjacent in ``both`` mode
MUTATE_TRIES = 6  #: subtrees regenerated before a mutation falls back to a fresh value
SIZE_TRIES = 8  #: fresh values drawn before one over ``max_len`` is handed over (and cut)
MAX_PARSE_BYTES = 1 << 20  #: larger input is not read (parse returns None)
MAX_SHRINK = 48  #: bound on shrink candidates per call
MAX_TOKENS = 64  #: bound on dictionary tokens per value


class SchemaStrategy:
    """Structured generation of JSON documents for one schema and mode."""

    version = 1

    def __init__(self, schema: Any, mode: str = "both", *, max_len: int = 4096, label: str = "") -> None:
        if mode not in TARGET_MODES:
            raise ConfigError(f"schema mode must be one of {', '.join(TARGET_MODES)}, not {mode!r}")
        self.schema = schema
        self.mode = mode
        self.max_len = max_len
        self.doc, self.entry = prepare_schema(schema, None, None, None)
        self.judge = Judge(self.doc)
        try:
            canonical = json.dumps([schema, mode, max_len], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"a JSON Schema must be JSON data (dicts, lists, strings, numbers): {exc}") from None
        slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in (label or _title(schema)).lower())
        slug = "-".join(filter(None, slug.split("-")))[:32]
        self.name = "-".join(filter(None, ("schema", slug, hashlib.sha256(canonical.encode()).hexdigest()[:12])))
        self._accept = {"valid", "adjacent"} if mode == "both" else {mode}

    # -- judging -------------------------------------------------------------

    def classify(self, value: Any) -> Generated:
        """``value`` with its kind by ``jsonschema``: valid, adjacent (one error) or invalid."""
        try:
            errors = self.judge.errors(self.entry, value, self.doc.base)
        except (Unsatisfiable, RecursionError):
            return Generated(value, "invalid")
        if not errors:
            return Generated(value, "valid")
        if len(errors) == 1:
            kw, path = errors[0]
            return Generated(value, "adjacent", kw, json_pointer(path), f"{kw} violated at {json_pointer(path) or '/'}")
        return Generated(value, "invalid", detail=f"{len(errors)} errors")

    # -- the Strategy protocol ------------------------------------------------

    def generate(self, rng: random.Random) -> Generated:
        """A fresh valid or adjacent value (as the mode says) whose JSON fits ``max_len`` when possible."""
        made = self._fresh(rng)
        for _ in range(SIZE_TRIES - 1):
            if self._fits(made):
                break
            made = self._fresh(rng)
        return made

    def parse(self, data: bytes) -> Generated | None:
        if len(data) > MAX_PARSE_BYTES:
            return None
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            return None
        return self.classify(value)

    def render(self, value: Generated) -> bytes:
        try:
            return json.dumps(value.value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate from a pattern's character class: escape it
            return json.dumps(value.value, separators=(",", ":")).encode("ascii")

    def mutate(self, value: Generated, rng: random.Random) -> Generated:
        """``value`` with one subtree regenerated, then made the kind the mode (or its coin) asks for.

        An adjacent parent asked to become valid has a subtree holding its violation
        regenerated; a valid parent asked to become adjacent gets one violation.
        """
        want = self._want(rng)
        if value.mode not in ("valid", "adjacent"):
            return self._fresh(rng, want)
        gen = self._generator(rng)
        sites = self._sites(gen, value.value)
        if value.mode == "adjacent" and want == "valid":
            sites = [s for s in sites if _holds(s[0], value.path or "")] or sites
        for _ in range(MUTATE_TRIES):
            path, parts, _current = sites[rng.randrange(len(sites))]
            try:
                new = gen.value(parts, len(path))
            except (AttemptFailed, Unsatisfiable, ConfigError):
                continue
            made = self.classify(put_at(value.value, path, new))
            if made.mode == "valid" and want == "adjacent":  # break one keyword of it
                try:
                    made = adjacent_value(gen, self.entry, made.value)
                except Unsatisfiable:
                    continue
            if made.mode == want and self._fits(made):
                return made
        return self._fresh(rng, want)

    def crossover(self, a: Generated, b: Generated, rng: random.Random) -> Generated:
        """``a`` with the subtree at a location both share taken from ``b`` (else ``a`` mutated)."""
        gen = self._generator(rng)
        in_b = {repr(path): current for path, _parts, current in self._sites(gen, b.value)}
        common = [path for path, _parts, _ in self._sites(gen, a.value) if path and repr(path) in in_b]
        if common:
            path = common[rng.randrange(len(common))]
            made = self.classify(put_at(a.value, path, in_b[repr(path)]))
            if made.mode in self._accept and (self.mode != "both" or made.mode == a.mode) and self._fits(made):
                return made
        return self.mutate(a, rng)

    def tokens(self, value: Generated) -> list[bytes]:
        """Property names and short strings of ``value``, bare and as JSON strings."""
        out: list[bytes] = []
        stack = [value.value]
        while stack and len(out) < MAX_TOKENS:
            node = stack.pop()
            if isinstance(node, dict):
                for k, v in node.items():
                    out += [k.encode("utf-8", "surrogatepass"), json.dumps(k).encode()]
                    stack.append(v)
            elif isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, str) and 0 < len(node) <= 32:
                out.append(json.dumps(node).encode())
        return list(dict.fromkeys(out))[:MAX_TOKENS]

    def shrink_candidates(self, value: Generated) -> Iterator[Generated]:
        """Values with one property or item removed, or one scalar simplified (bounded)."""
        count = 0
        for path, node in _walk(value.value, ()):
            if isinstance(node, dict):
                simpler: list[Any] = [{k: v for k, v in node.items() if k != drop} for drop in node]
            elif isinstance(node, list):
                simpler = [node[:i] + node[i + 1 :] for i in range(len(node))]
            elif isinstance(node, str) and node:
                simpler = ["", node[: len(node) // 2]]
            elif isinstance(node, (int, float)) and not isinstance(node, bool) and node != 0:
                simpler = [0]
            else:
                continue
            for s in simpler:
                yield Generated(put_at(value.value, path, s), value.mode)
                count += 1
                if count >= MAX_SHRINK:
                    return

    # -- helpers -------------------------------------------------------------

    def _fits(self, made: Generated) -> bool:
        """Whether the engine can hand ``made`` over whole (it cuts input at ``max_len``)."""
        return len(self.render(made)) <= self.max_len

    def _generator(self, rng: random.Random) -> ValueGenerator:
        return ValueGenerator(self.doc, RandomDraw(rng), DEFAULT_DEPTH)

    def _want(self, rng: random.Random) -> str:
        """The kind of the next value: the mode's, or in ``both`` mode one coin from the case RNG."""
        if self.mode != "both":
            return self.mode
        return "adjacent" if rng.random() < ADJACENT_RATE else "valid"

    def _fresh(self, rng: random.Random, want: str | None = None) -> Generated:
        want = want or self._want(rng)
        gen = self._generator(rng)
        if want == "adjacent":
            try:
                return adjacent_value(gen, self.entry, NO_BASE)
            except Unsatisfiable:
                if self.mode == "adjacent":
                    raise
        return Generated(valid_value(gen, self.entry), "valid")

    def _sites(self, gen: ValueGenerator, value: Any) -> list[tuple[tuple[Any, ...], Any, Any]]:
        sites: list[tuple[tuple[Any, ...], Any, Any]] = []
        Adjacent(gen).sites([(self.entry, self.doc.base)], value, (), sites)
        return sites or [((), [(self.entry, self.doc.base)], value)]


def _title(schema: Any) -> str:
    title = schema.get("title") if isinstance(schema, dict) else None
    return title if isinstance(title, str) else ""


def _holds(path: tuple[Any, ...], pointer: str) -> bool:
    """Whether the location ``path`` is ``pointer``'s or one of its ancestors."""
    here = json_pointer(path)
    return pointer == here or pointer.startswith(here + "/")


def _walk(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every location of a JSON value, outermost first."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))


def load_schema(schema: Any, relative_to: str = "") -> Any:
    """A schema given as a dict or boolean, or as the path of a JSON file (relative to ``relative_to``'s folder)."""
    if isinstance(schema, (dict, bool)):
        return schema
    if not isinstance(schema, (str, os.PathLike)):
        raise ConfigError(f"schema must be a JSON Schema (a dict) or the path of a .json file, not {schema!r}")
    path = Path(schema)
    if not path.is_absolute() and relative_to:
        beside = Path(relative_to).parent / path
        path = beside if beside.exists() else path
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"schema file {str(schema)!r} does not exist (looked at {path})") from None
    except (ValueError, OSError) as exc:
        raise ConfigError(f"schema file {str(path)!r} is not a readable JSON document: {exc}") from None


def schema_strategy(schema: Any, mode: str = "both", *, relative_to: str = "", max_len: int = 4096) -> str:
    """Register the strategy for ``schema`` in ``mode`` and return its ``name@version``.

    Fails early (:class:`~assay.core.errors.ConfigError`) when the schema is malformed,
    ``jsonschema`` is missing, or the mode asks for values the schema has none of.
    """
    label = Path(schema).name.split(".")[0] if isinstance(schema, (str, os.PathLike)) else ""
    strategy = SchemaStrategy(load_schema(schema, relative_to), mode, max_len=max_len, label=label)
    name = spec(strategy)
    try:
        return spec(get_strategy(name))
    except ConfigError:
        pass
    probe = random.Random(0)
    for _ in range(2):
        try:
            strategy._fresh(probe)
        except Unsatisfiable as exc:
            raise ConfigError(f"schema_mode={mode!r}: {exc}") from None
    register_strategy(strategy)
    return name
