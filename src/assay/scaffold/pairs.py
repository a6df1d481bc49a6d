"""Round trips and twins among the picked functions.

A round trip pairs a decoder with its encoder (``loads``/``dumps``,
``decode``/``encode``, ``from_x``/``to_x``, ``parse``/``serialize``): the target
decodes the input, encodes the value and decodes it again, and the two values
must agree (:func:`assay.oracles.round_trip`).  Twins are two entry points doing
one job, the bytes one and the text one (``parse``/``parse_bytes``) or the strict
one and the lax one: the target runs both on the input and a difference is a
finding (:func:`assay.oracles.differential`), except the strict one refusing what
the lax one accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.scaffold.selection import Picked

#: Decoder word -> encoder words that undo it, for round trips (the words of a name split on ``_``).
ENCODERS = {
    "loads": ("dumps",),
    "load": ("dump",),
    "decode": ("encode",),
    "parse": ("serialize", "format", "unparse", "dumps", "render", "stringify"),
    "deserialize": ("serialize",),
    "unpack": ("pack",),
    "unpackb": ("packb",),
    "from": ("to",),
    "unmarshal": ("marshal",),
    "unescape": ("escape",),
    "unquote": ("quote",),
    "decompress": ("compress",),
    "read": ("format",),
}
#: Suffixes (after ``_``) that name the bytes or text twin of an entry point.
BYTES_TEXT = ("bytes", "b", "str", "string", "text")
#: Words that name the strict twin and the lax twin.
STRICT, LAX = ("strict",), ("lax", "lenient", "loose", "relaxed")


@dataclass(frozen=True)
class RoundTrip:
    decode: Picked
    encode: Picked


@dataclass(frozen=True)
class Twins:
    first: Picked  # the strict one for "strict-lax"
    second: Picked
    kind: str  # "bytes-text" or "strict-lax"


def _single_input(p: Picked) -> bool:
    return len(p.args) == 1 and p.args[0].kind in ("bytes", "text")


def round_trips(picked: list[Picked]) -> list[RoundTrip]:
    """Each decoder with one encoder that undoes it; an encoder serves one decoder, the closest
    pairing first (``loads``/``dumps`` before ``parse``/``dumps``)."""
    by_name = {p.fn.public: p for p in picked}
    candidates: list[tuple[int, int, RoundTrip]] = []
    for order, p in enumerate(picked):
        if not _single_input(p):
            continue
        words = p.fn.name.split("_")
        prefix = p.fn.public.rsplit(".", 1)[0]
        for i, word in enumerate(words):
            for rank, enc in enumerate(ENCODERS.get(word, ())):
                name = "_".join([*words[:i], enc, *words[i + 1 :]])
                partner = by_name.get(f"{prefix}.{name}")
                if partner is not None and partner is not p and len(partner.args) == 1:
                    candidates.append((rank, order, RoundTrip(p, partner)))
    out: list[RoundTrip] = []
    used: set[str] = set()
    for _, _, trip in sorted(candidates, key=lambda c: (c[0], c[1])):
        if trip.decode.fn.public not in used and trip.encode.fn.public not in used:
            used |= {trip.decode.fn.public, trip.encode.fn.public}
            out.append(trip)
    return out


def twins(picked: list[Picked]) -> list[Twins]:
    """Pairs of entry points that do the same job: bytes and text, strict and lax."""
    by_name = {p.fn.public: p for p in picked}
    out = []
    for p in picked:
        if not _single_input(p):
            continue
        prefix, name = p.fn.public.rsplit(".", 1)
        for suffix in BYTES_TEXT:
            other = by_name.get(f"{prefix}.{name}_{suffix}")
            if other is not None and _single_input(other) and {p.args[0].kind, other.args[0].kind} == {"bytes", "text"}:
                out.append(Twins(p, other, "bytes-text"))
        for other_name in _lax_names(name):
            other = by_name.get(f"{prefix}.{other_name}")
            if other is not None and _single_input(other) and other.args[0].kind == p.args[0].kind:
                out.append(Twins(p, other, "strict-lax"))
    return out


def _lax_names(name: str) -> list[str]:
    """The names the lax twin of ``name`` may have (``parse_strict`` -> ``parse_lax``, ``parse`` ->
    ``parse_lax``); ``name`` is taken for the strict one."""
    words = name.split("_")
    if any(w in STRICT for w in words):
        kept = [w for w in words if w not in STRICT]
        return ["_".join(kept)] + ["_".join(lax if w in STRICT else w for w in words) for lax in LAX]
    return [f"{name}_{lax}" for lax in LAX] + [f"{lax}_{name}" for lax in LAX]
