"""Strings that a regular expression accepts, built from its parse tree."""

from __future__ import annotations

import random
import re
from typing import Any

from assay.gen.schema.draw import Draw, RandomDraw
from assay.gen.schema.model import Unsatisfiable

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.:/@+"
UNICODE_SAMPLES = "éß中😀Ω\u00a0"


def regex_string(pattern: str, draw: Draw, flags: int = 0) -> str:
    """A string ``re.search(pattern, s)`` should accept (checked by the caller)."""
    parsed, sre_parse = _parse(pattern, flags)
    return _emit(parsed, draw, {}, sre_parse)


def _parse(pattern: str | bytes, flags: int) -> tuple[Any, Any]:
    """The parse tree of ``pattern`` and the parser module (whose constants :func:`_emit` compares with)."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse
    try:
        return sre_parse.parse(pattern, flags), sre_parse
    except re.error as exc:
        raise Unsatisfiable(f"pattern {pattern!r} does not parse: {exc}") from None


def full_matches(compiled: re.Pattern, count: int, seed: int, longest: int) -> list[str | bytes]:
    """Up to ``count`` distinct strings that ``compiled.fullmatch`` accepts, each at most
    ``longest`` long, drawn from its parse tree with ``random.Random(seed)``.

    Strings of a bytes pattern are bytes.  Constructs the generator cannot build
    (or draws the pattern then rejects: lookarounds, negated classes) give fewer.
    """
    draw = RandomDraw(random.Random(seed))
    out: list[str | bytes] = []
    try:
        # Parsed once: the tree is only read, and parsing it for every draw was most of the cost.
        parsed, sre_parse = _parse(compiled.pattern, compiled.flags)
    except (Unsatisfiable, RecursionError):
        return out
    for _ in range(4 * count):
        try:
            text: str | bytes = _emit(parsed, draw, {}, sre_parse)
            if isinstance(compiled.pattern, bytes):
                text = text.encode("latin-1")  # type: ignore[union-attr]
        except (Unsatisfiable, UnicodeEncodeError, RecursionError):
            continue
        if len(text) <= longest and text not in out and compiled.fullmatch(text):
            out.append(text)
            if len(out) == count:
                break
    return out


def _emit(items: Any, draw: Draw, groups: dict[int, str], sp: Any) -> str:
    c = sp  # constants live on the parser module (re._constants re-exported)
    out: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append(next(ch for ch in "ab0" if ord(ch) != av))
        elif name == "ANY":
            out.append(draw.choice(ALPHABET))
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


def _emit_class(items: list[tuple[Any, Any]], draw: Draw) -> str:
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
        pool = [ch for ch in ALPHABET + UNICODE_SAMPLES if ch not in candidates]
        # Character-class categories in a negated set: filter with the real regex.
        return draw.choice(pool or ["~"])
    return draw.choice(candidates or ["a"])
