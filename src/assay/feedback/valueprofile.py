"""Comparison progress as feedback (libFuzzer's ``-use_value_profile``, bounded).

A state machine whose steps run the same lines (``if verb == expected:`` against
a transition table) shows no new edge when a step succeeds; what changes is the
value the program compares against next.  So a new ``(comparison site, operand
value)`` is a feature, for (in)equalities in the target's ``sources`` only, and
only for operands that do *not* occur in the input (in any plain encoding): a
value taken from the input is the fuzzer's own noise, a value that is not is
program state (the next expected verb, the new state's name).  Only strings,
bytes and integers below :data:`MAX_INT` count: a checksum or hash takes a new
value with every input and would fill the corpus with noise.

Comparisons are not traced on the fast path: the instrumented twins of
:mod:`assay.feedback.cmplog` observe them, on the analysis run of each new corpus
entry (which only marks its values as seen) and on a budgeted share of the cases
made by an input-to-state replacement (the mutation most likely to advance a
comparison), which are run once more with the twins when they showed nothing new
(the first child of each replacement only).

Bounds: at most :data:`PER_SITE` values per site and :data:`MAX_FEATURES` in all
ever become features, and the extra runs stay under :data:`BUDGET` of the cases.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Hashable, Iterable
from typing import Any

#: Distinct operand values per comparison site that count as progress.
PER_SITE = 8
#: Value-profile features per campaign, at most.
MAX_FEATURES = 512
#: Share of all cases that may get an extra instrumented run for the value profile.
BUDGET = 0.01
#: Operands longer than this (in bytes) are not values of a state.
MAX_VALUE = 64
#: Integers this large or larger are hashes, checksums or offsets, not states: a
#: checksum compared with the input's copy of it takes a new value every input.
MAX_INT = 1 << 16

_KIND = "vp"


def _plain_forms(v: Any) -> list[bytes]:
    if isinstance(v, (bytes, bytearray)):
        return [bytes(v)]
    if isinstance(v, str):
        return [v.encode("utf-8", "surrogatepass")]
    if isinstance(v, int) and not isinstance(v, bool) and -MAX_INT < v < MAX_INT:
        out = [str(v).encode()]
        if 0 <= v <= 0xFF:
            out.append(bytes([v]))
        elif v > 0:
            out += [v.to_bytes(2, "little"), v.to_bytes(2, "big")]
        return out
    return []


def _digest(v: Any) -> int | None:
    forms = _plain_forms(v)
    if not forms or len(forms[0]) > MAX_VALUE:
        return None
    ident = type(v).__name__.encode() + b"\0" + forms[0]
    return int.from_bytes(hashlib.blake2b(ident, digest_size=8).digest(), "big")


@functools.lru_cache(maxsize=4096)
def _cached_digest(kind: type, v: Any) -> int | None:  # noqa: ARG001 - the type keeps 1 and True apart
    # A parser compares every character against the same few constants: each is hashed once.
    return _digest(v)


class ValueProfile:
    """Which (site, value) pairs were seen; reports the new ones as features."""

    def __init__(self, seen: Iterable[Hashable] = ()) -> None:
        self.sites: dict[int, set[int]] = {}
        self.features = 0
        self.runs = 0
        self.tried: set[Hashable] = set()
        for key in seen:
            if isinstance(key, tuple) and len(key) == 3 and key[0] == _KIND:
                self._add(key[1], key[2])

    def _add(self, site: int, h: int) -> bool:
        values = self.sites.setdefault(site, set())
        if h in values or len(values) >= PER_SITE or self.features >= MAX_FEATURES:
            return False
        values.add(h)
        self.features += 1
        return True

    def refuses(self, cases: int) -> bool:
        """Does :meth:`wants_run` refuse every replacement now (its budget spent, or its features)?"""
        return self.runs >= BUDGET * cases + 1 or self.features >= MAX_FEATURES

    def wants_run(self, cases: int, replacement: Hashable) -> bool:
        """May a case made by ``replacement`` (parent index, pair) get an instrumented run?

        Only the first case of each replacement does (later ones differ only in the
        occurrence replaced), and only within :data:`BUDGET` of all cases.
        """
        if replacement in self.tried or self.refuses(cases):
            return False
        self.tried.add(replacement)
        self.runs += 1
        return True

    def observe(self, data: bytes, records: list[tuple[int, Any, Any]]) -> list[Hashable]:
        """New features among ``records`` (``(vsite, a, b)`` of a run on ``data``)."""
        new: list[Hashable] = []
        if self.features >= MAX_FEATURES:
            return new
        # Whether a value (by digest, which fixes its forms) is in ``data``: a parser compares
        # each character of the input at several sites, so each is looked for once.
        in_data: dict[int, bool] = {}
        for site, a, b in records:
            seen = self.sites.get(site, ())
            if len(seen) >= PER_SITE:
                continue  # a full site takes no value: skip the hashing
            for v in (a, b):
                kind = type(v)
                cached = kind is int or ((kind is str or kind is bytes) and len(v) <= MAX_VALUE)
                h = _cached_digest(kind, v) if cached else _digest(v)  # type: ignore[arg-type]  # a type is hashable
                if h is None or h in seen:
                    continue
                inside = in_data.get(h)
                if inside is None:
                    # find, not ``form in data``: a bytes ``in`` costs a microsecond on CPython 3.12
                    inside = in_data[h] = any(data.find(form) != -1 for form in _plain_forms(v))
                if inside:
                    continue  # the input's own bytes, not program state
                if self._add(site, h):
                    new.append((_KIND, site, h))
        return new
