"""Differential testing (the ``differential`` oracle): implementations that must agree.

:func:`differential` runs every implementation on the same input, normalises each
result to an :class:`~assay.oracles._common.Outcome` (a value, or an exception
class), and compares them pairwise.  A difference is a finding unless an entry of
an explicit :class:`AllowList` covers it.  The allow-list is code: every
:class:`Allow` has a name, a written reason and a predicate, entries are never
added at run time, and every hit is reported as a semantic feature so a reader of
the campaign can see how much the list is doing.

The signature is ``differential:<pair>/<kind>`` where ``<pair>`` is ``a~b`` (the
two implementation names, in the order given, prefixed by ``name:`` when a name
is passed) and ``<kind>`` is ``value-vs-value``, ``value-vs-error``,
``error-vs-value`` or ``error-class-vs-error-class``.  Exception classes and
messages stay out of the key: one missing feature in one implementation is one
bug, whatever exception it happens to raise for each input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from assay.core.observe import OracleFailure, feature
from assay.oracles._common import Outcome, attempt, class_name

#: The oracle tag of differential findings.
TAG = "differential"

Predicate = Callable[[Any, Outcome, Outcome], bool]


@dataclass(frozen=True)
class Allow:
    """One documented, accepted difference between implementations.

    ``when(data, a, b)`` says whether the difference between outcomes ``a`` and
    ``b`` on input ``data`` is this one.  With ``pair=(x, y)`` the entry applies
    only to implementations ``x`` and ``y`` and ``a`` is always ``x``'s outcome.
    ``reason`` says why the difference is correct (a documented behaviour, a
    standard's latitude, a known upstream bug with its reference); it is required.
    """

    name: str
    reason: str
    when: Predicate
    pair: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("an allow-list entry needs a name")
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError(f"allow-list entry {self.name!r} needs a reason: say why this difference is correct")
        if not callable(self.when):
            raise TypeError(f"allow-list entry {self.name!r}: when= must be a predicate (data, a, b) -> bool")
        if self.pair is not None and (len(self.pair) != 2 or self.pair[0] == self.pair[1]):
            raise ValueError(f"allow-list entry {self.name!r}: pair= must name two different implementations")

    def covers(self, data: Any, a: Outcome, b: Outcome) -> bool:
        """True when this entry accepts the difference between ``a`` and ``b``."""
        if self.pair is not None:
            if (a.impl, b.impl) == self.pair[::-1]:
                a, b = b, a
            elif (a.impl, b.impl) != self.pair:
                return False
        return bool(self.when(data, a, b))


class AllowList:
    """An immutable, ordered set of :class:`Allow` entries with unique names."""

    __slots__ = ("_entries",)

    def __init__(self, *entries: Allow) -> None:
        for e in entries:
            if not isinstance(e, Allow):
                raise TypeError(f"allow-list entries must be Allow(...), not {e!r}")
        names = [e.name for e in entries]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"allow-list entries must have unique names; repeated: {', '.join(dupes)}")
        self._entries: tuple[Allow, ...] = tuple(entries)

    @property
    def entries(self) -> tuple[Allow, ...]:
        return self._entries

    def match(self, data: Any, a: Outcome, b: Outcome) -> Allow | None:
        """The first entry covering the difference between ``a`` and ``b``, or ``None``."""
        for entry in self._entries:
            if entry.covers(data, a, b):
                return entry
        return None

    def __iter__(self) -> Iterator[Allow]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"AllowList({', '.join(e.name for e in self._entries)})"


#: The empty allow-list: every difference is a finding.
NOTHING_ALLOWED = AllowList()


def difference_kind(a: Outcome, b: Outcome) -> str:
    """How outcomes ``a`` and ``b`` differ (``""`` when they agree)."""
    if a.ok and b.ok:
        return "" if a.value == b.value else "value-vs-value"
    if a.ok:
        return "value-vs-error"
    if b.ok:
        return "error-vs-value"
    return "" if a.error is b.error else "error-class-vs-error-class"


def differential(
    impls: Mapping[str, Callable[[Any], Any]],
    data: Any,
    *,
    allow: AllowList = NOTHING_ALLOWED,
    name: str | None = None,
    normalize: Callable[[Any], Any] | Mapping[str, Callable[[Any], Any]] | None = None,
    catch: tuple[type[BaseException], ...] = (Exception,),
) -> dict[str, Outcome]:
    """Run every implementation on ``data``; any difference outside ``allow`` is a finding.

    ``impls`` maps an implementation name (letters, digits, ``._-``) to a
    callable taking ``data``.  ``normalize`` maps return values to comparable
    data, either one function for all or one per implementation name (missing
    names are compared as returned).  An exception in ``catch`` is the outcome
    "raised this class"; others propagate.  Pairs are compared in order
    (first with second, first with third, ..., second with third, ...), and the
    first difference no allow-list entry covers raises
    :class:`~assay.core.observe.OracleFailure` tagged ``differential``.

    Reports the features ``<label>.shape`` (which implementations returned),
    ``<label>.allow`` (each entry that matched) and ``<label>.allow-hits`` (how
    many differences the list accepted on this input), where ``<label>`` is
    ``name`` or ``differential``.  Returns the outcomes by implementation name.
    """
    if len(impls) < 2:
        raise ValueError("differential needs at least two implementations")
    for impl in impls:
        if not impl or not all(c.isalnum() or c in "._-" for c in impl):
            raise ValueError(f"implementation name {impl!r} may hold only letters, digits, '.', '_' and '-'")
    label = name or TAG
    outcomes: dict[str, Outcome] = {}
    for impl, fn in impls.items():
        norm = normalize.get(impl) if isinstance(normalize, Mapping) else normalize
        outcomes[impl] = attempt(impl, fn, data, catch=catch, normalize=norm)
    feature(f"{label}.shape", "".join("v" if o.ok else "e" for o in outcomes.values()))
    order = list(outcomes.values())
    hits = 0
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            kind = difference_kind(a, b)
            if not kind:
                continue
            entry = allow.match(data, a, b)
            if entry is not None:
                hits += 1
                feature(f"{label}.allow", entry.name)
                continue
            feature(f"{label}.allow-hits", hits)
            pair = f"{a.impl}~{b.impl}"
            raise OracleFailure(
                f"{name}:{pair}" if name else pair,
                f"{a.impl}: {a.describe()}; {b.impl}: {b.describe()}",
                kind=kind,
                oracle=TAG,
                data={"outcomes": [o.to_json() for o in order], "allow_list": [e.name for e in allow]},
            ) from (b.exception or a.exception)
    feature(f"{label}.allow-hits", hits)
    return outcomes


def both_raise(data: Any, a: Outcome, b: Outcome) -> bool:  # noqa: ARG001 - the Predicate signature
    """Predicate: both implementations rejected the input (whatever the classes)."""
    return a.is_error and b.is_error


def errors_are(a_classes: tuple[type[BaseException], ...], b_classes: tuple[type[BaseException], ...]) -> Predicate:
    """Predicate: ``a`` raised one of ``a_classes`` and ``b`` one of ``b_classes``."""

    def predicate(data: Any, a: Outcome, b: Outcome) -> bool:  # noqa: ARG001
        return (
            a.error is not None
            and b.error is not None
            and issubclass(a.error, a_classes)
            and issubclass(b.error, b_classes)
        )

    predicate.__name__ = f"errors_are({','.join(map(class_name, a_classes))};{','.join(map(class_name, b_classes))})"
    return predicate


__all__ = [
    "Allow",
    "AllowList",
    "NOTHING_ALLOWED",
    "both_raise",
    "difference_kind",
    "differential",
    "errors_are",
]
