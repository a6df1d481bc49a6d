"""Metamorphic relations (the ``invariant`` oracle): one input, several deliveries.

Each helper is called from inside a target with the input (or a value decoded
from it) and raises :class:`~assay.core.observe.InvariantViolation` when its relation
does not hold.  The finding's signature is ``invariant:<name>/<kind>``: ``name``
is the relation (pass ``name=...``; the default is built from the functions'
``module.qualname`` so distinct relations never share one) and ``kind`` the class
of disagreement (``mismatch``, ``chunked-rejected``, ...).  Neither the input nor
any message text enters the signature.

A failure of the *first* call on the raw input is never a finding of these
helpers: it propagates unchanged, so the target's ``expected=`` decides whether
it is a correct rejection or a panic.  Unlike :func:`assay.invariant`, the
helpers check outside a fuzz run too, so they also work in plain unit tests.
"""

from __future__ import annotations

import hashlib
import operator
import random
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from assay.core.observe import InvariantViolation
from assay.oracles._common import Outcome, attempt, identity, short_repr

T = TypeVar("T")
S = TypeVar("S", bytes, str)

#: Data-derived chunkings :func:`rechunk` tries besides whole and byte-by-byte.
DEFAULT_CHUNKINGS = 3
#: Inputs longer than this are not also fed byte by byte (one call per byte).
MAX_BYTEWISE = 16384
#: Largest chunk of the "small chunks" chunking.
SMALL_CHUNK = 8
#: Chunk sizes kept in a finding's data (the rest are elided).
MAX_SIZES_KEPT = 64


# --------------------------------------------------------------------------- rechunk


def derive_chunkings(data: S, count: int = DEFAULT_CHUNKINGS) -> list[list[S]]:
    """``count`` deterministic ways to cut ``data`` into two or more chunks.

    The cut points come from a hash of ``data``, so the same input always gets
    the same chunkings (replays and the shrinker see what the campaign saw) and a
    mutated input gets fresh ones.  The shapes: one cut, a few cuts, then small
    chunks of 1..:data:`SMALL_CHUNK` items; further chunkings are random cut sets.
    Inputs shorter than two items have no chunking.
    """
    n = len(data)
    if n < 2 or count < 1:
        return []
    raw = data if isinstance(data, bytes) else str(data).encode("utf-8", "surrogatepass")
    rng = random.Random(int.from_bytes(hashlib.blake2b(raw, digest_size=8, person=b"assay-rechunk").digest(), "big"))
    cut_sets: list[list[int]] = []
    for shape in range(count):
        if shape == 0:
            cuts = [rng.randint(1, n - 1)]
        elif shape == 2:
            cuts, pos = [], 0
            while True:
                pos += rng.randint(1, SMALL_CHUNK)
                if pos >= n:
                    break
                cuts.append(pos)
        else:
            k = min(n - 1, rng.randint(2, 4) if shape == 1 else rng.randint(1, n - 1))
            cuts = sorted(rng.sample(range(1, n), k))
        if cuts and cuts not in cut_sets and len(cuts) < n - 1:  # n-1 cuts is byte by byte
            cut_sets.append(cuts)
    return [_cut(data, cuts) for cuts in cut_sets]


def _cut(data: S, cuts: list[int]) -> list[S]:
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


def rechunk(
    feed: Callable[[list[S]], T],
    data: S,
    *,
    name: str | None = None,
    chunkings: int = DEFAULT_CHUNKINGS,
    bytewise: bool = True,
    normalize: Callable[[Any], Any] | None = None,
    catch: tuple[type[BaseException], ...] = (Exception,),
) -> T:
    """Feed ``data`` to a streaming parser whole, re-chunked and byte by byte; all must agree.

    ``feed(chunks)`` must build a *fresh* parser, feed it each chunk in order,
    close it and return the result as comparable data (``normalize`` can map it
    first, e.g. to merge text events a parser may legitimately split).  The
    chunkings are :func:`derive_chunkings` of ``data`` plus, unless ``bytewise``
    is false or the input is longer than :data:`MAX_BYTEWISE`, one chunk per item.

    Returns the whole-input result.  When the whole input raises and every
    chunking raises the same class, that exception is re-raised (a consistent
    rejection, judged by the target's ``expected=``).  Otherwise the first
    disagreement raises ``InvariantViolation`` of kind ``mismatch`` (both
    returned, different results), ``chunked-rejected`` (only the chunked feed
    raised), ``chunked-accepted`` (only the whole feed raised) or ``error-class``
    (both raised, different classes).  Exceptions outside ``catch`` propagate.
    """
    label = name or f"rechunk({identity(feed)})"
    whole = attempt("whole", feed, [data], catch=catch, normalize=normalize)
    plans: list[tuple[str, list[S]]] = [(f"derived-{i}", c) for i, c in enumerate(derive_chunkings(data, chunkings))]
    if bytewise and 1 < len(data) <= MAX_BYTEWISE:
        plans.append(("bytewise", [data[i : i + 1] for i in range(len(data))]))
    for plan, chunks in plans:
        got = attempt(plan, feed, chunks, catch=catch, normalize=normalize)
        kind = _disagreement(whole, got, ("mismatch", "chunked-rejected", "chunked-accepted", "error-class"))
        if kind:
            sizes = [len(c) for c in chunks]
            raise InvariantViolation(
                label,
                f"fed whole: {whole.describe()}; fed as {plan} ({len(chunks)} chunks): {got.describe()}",
                kind=kind,
                data={
                    "whole": whole.to_json(),
                    "chunked": got.to_json(),
                    "chunking": plan,
                    "chunk_sizes": sizes[:MAX_SIZES_KEPT],
                },
            ) from got.exception or whole.exception
    if whole.exception is not None:
        raise whole.exception
    return whole.raw


def _disagreement(first: Outcome, second: Outcome, kinds: tuple[str, str, str, str]) -> str:
    """``""`` when the outcomes agree, else one of ``kinds``:
    (both returned, only second raised, only first raised, both raised)."""
    if first.ok and second.ok:
        return "" if first.value == second.value else kinds[0]
    if first.ok:
        return kinds[1]
    if second.ok:
        return kinds[2]
    return "" if first.error is second.error else kinds[3]


# --------------------------------------------------------------------------- round trip


def round_trip(
    decode: Callable[[Any], T],
    encode: Callable[[T], Any],
    data: Any,
    *,
    name: str | None = None,
    normalize: Callable[[Any], Any] | None = None,
    rejections: tuple[type[BaseException], ...] = (Exception,),
) -> T:
    """Check the fixed point ``decode(encode(decode(data))) == decode(data)``.

    The first ``decode(data)`` is the target's own parse: its exceptions
    propagate (a rejection or a panic, as ``expected=`` says).  After that, an
    exception in ``rejections`` from ``encode`` is kind ``encode-rejected``, from
    the second ``decode`` kind ``reencode-rejected`` (the decoder refuses what the
    encoder wrote), and unequal decodes are kind ``mismatch``.  ``normalize``
    maps both decoded values before comparing (for example to make ``nan`` equal
    to itself).  Returns the first decoded value.
    """
    label = name or f"round-trip({identity(decode)},{identity(encode)})"
    first = decode(data)
    try:
        encoded = encode(first)
    except rejections as exc:
        raise InvariantViolation(
            label,
            f"encode refused the decoded value {short_repr(first)}: {type(exc).__name__}",
            kind="encode-rejected",
            data={"decoded": short_repr(first)},
        ) from exc
    try:
        second = decode(encoded)
    except rejections as exc:
        raise InvariantViolation(
            label,
            f"decode refused the re-encoded {short_repr(encoded)}: {type(exc).__name__}",
            kind="reencode-rejected",
            data={"decoded": short_repr(first), "encoded": short_repr(encoded)},
        ) from exc
    a = normalize(first) if normalize is not None else first
    b = normalize(second) if normalize is not None else second
    if a != b:
        raise InvariantViolation(
            label,
            f"decoded {short_repr(a)}, re-encoded as {short_repr(encoded)}, decoded again {short_repr(b)}",
            kind="mismatch",
            data={"decoded": short_repr(a), "encoded": short_repr(encoded), "redecoded": short_repr(b)},
        )
    return first


# --------------------------------------------------------------------------- idempotence


def idempotent(
    f: Callable[[T], T],
    x: T,
    *,
    name: str | None = None,
    normalize: Callable[[Any], Any] | None = None,
    rejections: tuple[type[BaseException], ...] = (Exception,),
) -> T:
    """Check ``f(f(x)) == f(x)`` (a normaliser, canonicaliser or sanitiser).

    ``f(x)`` propagates its exceptions; ``f`` refusing its own output (an
    exception in ``rejections``) is kind ``rejected-own-output``, a different
    second result kind ``mismatch``.  Returns ``f(x)``.
    """
    label = name or f"idempotent({identity(f)})"
    once = f(x)
    try:
        twice = f(once)
    except rejections as exc:
        raise InvariantViolation(
            label,
            f"f refused its own output {short_repr(once)}: {type(exc).__name__}",
            kind="rejected-own-output",
            data={"once": short_repr(once)},
        ) from exc
    a = normalize(once) if normalize is not None else once
    b = normalize(twice) if normalize is not None else twice
    if a != b:
        raise InvariantViolation(
            label,
            f"f(x) = {short_repr(a)} but f(f(x)) = {short_repr(b)}",
            kind="mismatch",
            data={"once": short_repr(a), "twice": short_repr(b)},
        )
    return once


# --------------------------------------------------------------------------- monotonicity


def monotonic(
    f: Callable[[Any], T],
    smaller: Any,
    larger: Any,
    *,
    name: str | None = None,
    order: Callable[[T, T], bool] = operator.le,  # type: ignore[assignment]  # T must be ordered then
) -> tuple[T, T]:
    """Check ``order(f(smaller), f(larger))``: growing the input never shrinks the result.

    The caller picks the pair (a prefix and the whole input, a subset and its
    superset, ...).  Exceptions of ``f`` propagate.  A violation is kind
    ``order``.  Returns both results.
    """
    label = name or f"monotonic({identity(f)})"
    a, b = f(smaller), f(larger)
    if not order(a, b):
        raise InvariantViolation(
            label,
            f"f(smaller) = {short_repr(a)} is not {_order_name(order)} f(larger) = {short_repr(b)}",
            kind="order",
            data={
                "smaller": short_repr(smaller),
                "larger": short_repr(larger),
                "f_smaller": short_repr(a),
                "f_larger": short_repr(b),
            },
        )
    return a, b


def monotonic_sequence(
    values: Iterable[T],
    *,
    name: str,
    order: Callable[[T, T], bool] = operator.le,  # type: ignore[assignment]  # T must be ordered then
) -> list[T]:
    """Check ``order(a, b)`` for each consecutive pair of ``values`` (a state never reverts).

    ``values`` are the states a stateful surface went through, in order; ``name``
    is required because no function identifies the relation.  A violation is
    kind ``order``, with its position in the finding's data.  Returns the values.
    """
    seen = list(values)
    for i in range(1, len(seen)):
        a, b = seen[i - 1], seen[i]
        if not order(a, b):
            raise InvariantViolation(
                name,
                f"step {i}: {short_repr(a)} -> {short_repr(b)} is not {_order_name(order)}",
                kind="order",
                data={"step": i, "before": short_repr(a), "after": short_repr(b)},
            )
    return seen


def _order_name(order: Callable[..., bool]) -> str:
    names = {operator.le: "<=", operator.lt: "<", operator.ge: ">=", operator.gt: ">"}
    return names.get(order, getattr(order, "__name__", "in order with"))


__all__ = [
    "DEFAULT_CHUNKINGS",
    "derive_chunkings",
    "idempotent",
    "monotonic",
    "monotonic_sequence",
    "rechunk",
    "round_trip",
]
