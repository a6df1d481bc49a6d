"""What a target reports from inside a run: semantic features and invariants.

Both are no-ops outside a fuzz run, so they may stay in production code.  During a
run the engine installs a :class:`FeatureSink`; :func:`feature` adds to it and
:func:`invariant` raises :class:`InvariantViolation` when its condition is false.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

#: Longest ``repr`` of a feature value kept verbatim; longer values are hashed so a
#: target reporting large values cannot make the feature table grow without bound.
MAX_FEATURE_REPR = 64


class OracleFailure(AssertionError):
    """A semantic oracle fired: a relation the target checks did not hold.

    ``oracle`` is the tag (``invariant``, ``error-shape``, ``differential``,
    ``fail-open``, ...), ``name`` identifies the relation and ``kind`` the class of
    detail (``"mismatch"``, ``"decode-failed"``, ...); tag, name and kind make up the
    signature, so two different broken relations never dedup together.  ``detail``
    is free text and ``data`` plain JSON-able data for the artifact; neither is part
    of the signature.
    """

    #: The tag used when none is passed.
    default_oracle = "invariant"

    def __init__(
        self,
        name: str,
        detail: str = "",
        *,
        kind: str = "",
        oracle: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{name}: {detail}" if detail else name)
        self.name = name
        self.detail = detail
        self.kind = kind
        self.oracle = oracle or self.default_oracle
        self.data = data or {}


class InvariantViolation(OracleFailure):
    """A named invariant of the target did not hold (the ``invariant`` oracle)."""


class FeatureSink:
    """Collects the semantic features of one run as hashable keys."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: list[Hashable] = []

    def add(self, name: str, value: object) -> None:
        self.keys.append(feature_key(name, value))


def feature_key(name: str, value: object) -> Hashable:
    """The stable key of feature ``name`` with ``value``."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        text = repr(value)
    else:
        text = f"{type(value).__qualname__}:{value!r}"
    if len(text) > MAX_FEATURE_REPR:
        import hashlib

        text = "#" + hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()
    return ("f", name, text)


_active: FeatureSink | None = None


def fuzzing() -> bool:
    """True while assay is executing an input (a campaign, a replay, a shrink)."""
    return _active is not None


def feature(name: str, value: object = True) -> None:
    """Report that the current input showed ``name`` with ``value``.

    An input that produces a feature key never seen before is kept in the corpus,
    exactly as one that reaches a new branch edge.  Outside a run this does nothing.
    """
    sink = _active
    if sink is not None:
        sink.add(name, value)


def invariant(condition: object, name: str, detail: str = "", *, kind: str = "") -> None:
    """Raise :class:`InvariantViolation` if ``condition`` is false during a fuzz run.

    Outside a run it returns at once, whatever the condition, so a check placed in
    production code costs one call.  The condition must have no side effects.
    """
    if _active is not None and not condition:
        raise InvariantViolation(name, detail, kind=kind)


def activate(sink: FeatureSink | None) -> FeatureSink | None:
    """Install ``sink`` as the active run's sink; return the previous one."""
    global _active
    previous, _active = _active, sink
    return previous
