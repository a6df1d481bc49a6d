"""Outcome identity: what one run of a target did, in a form two processes can compare.

Differential fuzzing runs the same input on the original code and on a mutant,
each time in a forked child, and asks "did they do the same thing?".  The answer
must be stable across replays (a fresh process, new object addresses) and still
tell apart everything a test could tell apart.  An outcome identity is a small
JSON-able dict:

``{"kind": "return", "type": ..., "digest": ..., "repr": ..., "features": [...]}``
    The target returned.  ``digest`` is the SHA-256 (first 32 hex digits) of
    :func:`stable_repr` of the value; ``repr`` is a truncated copy for people.

``{"kind": "raise", "type": ..., "shape": ..., "message": ..., "features": [...]}``
    The target raised.  ``type`` is ``module.qualname`` of the exception class and
    ``shape`` its message under :func:`message_shape`; ``message`` is for people.

``{"kind": "wedge" | "resource", ...}``
    The run did not end within the target's timeout, or exhausted memory
    (:data:`RESOURCE_ERRORS`).  Never compared: on the mutant side it is an
    infrastructure finding, on the original side the case is not comparable.

Every other exception, ``RecursionError`` and ``SystemExit`` included, is an
ordinary ``raise`` outcome: a test calling the code would see it too.  Only the
death of the process (a signal, ``os._exit``) and a hang are infrastructure.

``features`` is the sorted list of the semantic features the run reported with
:func:`assay.feature` (multiplicity kept: a feature reported twice is not one
reported once).  Only :func:`compared` fields decide equality; the rest is for the
artifact.

Stable rendering of return values (:func:`stable_repr`)
---------------------------------------------------------
* ``None``, booleans, numbers, strings and bytes: their ``repr``.
* lists and tuples element by element; dicts, sets and frozensets sorted by the
  rendering of their keys/elements, so two values that compare equal render
  equally whatever their insertion order (a test using ``==`` cannot see order).
* dataclass instances and objects whose class keeps ``object.__repr__`` are
  rendered from their state (``Cls(a=..., b=...)``, attributes sorted), so a
  mutant that changes a field of a returned record is seen even without a
  ``__repr__``.
* objects of :data:`IDENTITY_ONLY` types (functions, methods, modules, generators,
  code and frame objects, locks, files, weak references, ...) have no state
  worth comparing and an address in their ``repr``: they render as ``<type
  qualname>``.
* everything else uses its own ``repr``, with any ``" at 0x..."`` address
  removed (:data:`ADDRESS`).  A ``repr`` that raises renders as
  ``<unrepresentable T: E>``.
* cycles render as ``<cycle>``; past :data:`MAX_DEPTH` levels or
  :data:`MAX_NODES` rendered nodes the rest renders as ``...``.

Message shape (:func:`message_shape`)
-------------------------------------
Exception messages often carry numbers that are not stable across processes
(addresses, ids, sizes of caches).  The shape keeps the words and punctuation and
coarsens the rest: ``0x`` hex runs become ``0x0``, digit runs become ``0``,
quoted substrings (``'...'`` or ``"..."``, up to :data:`MAX_QUOTED` characters)
keep their quotes but their content is replaced by its length class
(``<e>`` empty, ``<c>`` one character, ``<s>`` 2-8, ``<m>`` 9-32, ``<l>`` longer),
whitespace runs become one space, and the result is cut at :data:`MAX_SHAPE`
characters.  So ``"expected 3 got 4"`` and ``"expected 5 got 6"`` share a shape,
while ``"bad header"`` and ``"bad trailer"`` or ``"unexpected 'x'"`` and
``"unexpected 'xyz'"`` do not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import re
import threading
import types
import weakref
from collections.abc import Hashable
from typing import Any

#: Exceptions that mean "the run ran out of resources", not "the code said no".
RESOURCE_ERRORS: tuple[type[BaseException], ...] = (MemoryError,)
#: Types whose instances are compared by type alone: they carry identity, not value.
IDENTITY_ONLY: tuple[type, ...] = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.CodeType,
    types.FrameType,
    types.TracebackType,
    types.CellType,
    weakref.ref,
    weakref.ProxyType,
    io.IOBase,
    type(threading.Lock()),
    type(threading.RLock()),
    threading.Thread,
)
#: ``" at 0x..."`` in a ``repr``: an address, different in every process.
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: Nesting levels rendered before the rest becomes ``...``.
MAX_DEPTH = 24
#: Nodes (values) rendered per outcome before the rest becomes ``...``.
MAX_NODES = 20_000
#: Characters of a value's rendering kept in the human-readable ``repr`` field.
MAX_REPR = 400
#: Characters of a message shape kept (and compared).
MAX_SHAPE = 240
#: Characters of the raw exception message kept for people.
MAX_MESSAGE = 400
#: Longest quoted substring whose content the shape replaces by a length class.
MAX_QUOTED = 200

_HEX = re.compile(r"0x[0-9a-fA-F]+")
_DIGITS = re.compile(r"\d+")
_QUOTED = re.compile(r"'([^'\n]{0,%d})'|\"([^\"\n]{0,%d})\"" % (MAX_QUOTED, MAX_QUOTED))
_SPACE = re.compile(r"\s+")

Identity = dict[str, Any]


def _length_class(n: int) -> str:
    if n == 0:
        return "<e>"
    if n == 1:
        return "<c>"
    if n <= 8:
        return "<s>"
    if n <= 32:
        return "<m>"
    return "<l>"


def message_shape(message: str) -> str:
    """The shape of an exception message (see the module docstring for the rule)."""

    def quoted(m: re.Match[str]) -> str:
        q = m.group(0)[0]
        body = m.group(1) if m.group(1) is not None else m.group(2)
        return q + _length_class(len(body)) + q

    text = _QUOTED.sub(quoted, message)
    text = _HEX.sub("0x0", text)
    text = _DIGITS.sub("0", text)
    return _SPACE.sub(" ", text).strip()[:MAX_SHAPE]


class _Renderer:
    """One bounded, address-free rendering of a value (see :func:`stable_repr`)."""

    def __init__(self) -> None:
        self.nodes = 0
        self.active: set[int] = set()

    def render(self, value: Any, depth: int = 0) -> str:
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            return "..."
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            return _safe_repr(value)
        if isinstance(value, IDENTITY_ONLY):
            return f"<{_qualname(type(value))}>"
        if isinstance(value, type):
            return f"<class {_qualname(value)}>"
        key = id(value)
        if key in self.active:
            return "<cycle>"
        self.active.add(key)
        try:
            return self._container(value, depth)
        finally:
            self.active.discard(key)

    def _container(self, value: Any, depth: int) -> str:
        name = _qualname(type(value))
        if isinstance(value, (list, tuple)):
            inner = ", ".join(self.render(v, depth + 1) for v in value)
            return f"{name}[{inner}]"
        if isinstance(value, dict):
            items = sorted((self.render(k, depth + 1), self.render(v, depth + 1)) for k, v in value.items())
            return name + "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
        if isinstance(value, (set, frozenset)):
            return name + "{" + ", ".join(sorted(self.render(v, depth + 1) for v in value)) + "}"
        if isinstance(value, (bytearray, memoryview)):
            return f"{name}({bytes(value)!r})"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = [(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value)]
            return self._state(name, fields, depth)
        if type(value).__repr__ is object.__repr__:
            return self._state(name, sorted(_attributes(value).items()), depth)
        return ADDRESS.sub("", _safe_repr(value))

    def _state(self, name: str, fields: list[tuple[str, Any]], depth: int) -> str:
        return f"{name}(" + ", ".join(f"{k}={self.render(v, depth + 1)}" for k, v in fields) + ")"


def _attributes(value: Any) -> dict[str, Any]:
    """An object's state: its ``__dict__`` and the ``__slots__`` of its classes."""
    out: dict[str, Any] = {}
    try:
        out.update(vars(value))
    except TypeError:
        pass
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot in out or slot in ("__dict__", "__weakref__"):
                continue
            try:
                out[slot] = getattr(value, slot)
            except Exception:  # noqa: BLE001 - an unset slot, or a descriptor that raises
                continue
    return out


def _qualname(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls.__name__)}"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ is part of the outcome
        return f"<unrepresentable {_qualname(type(value))}: {_qualname(type(exc))}>"


def stable_repr(value: Any) -> str:
    """A rendering of ``value`` that is equal across processes for equal values."""
    return _Renderer().render(value)


def _feature_text(key: Hashable) -> str:
    if isinstance(key, tuple) and len(key) == 3 and key[0] == "f":
        return f"{key[1]}={key[2]}"
    return repr(key)


def features_of(keys: list[Hashable]) -> list[str]:
    """The sorted semantic features of a run, as text (multiplicity kept)."""
    return sorted(_feature_text(k) for k in keys)


def returned(value: Any, features: list[Hashable]) -> Identity:
    """The identity of a run that returned ``value``."""
    text = stable_repr(value)
    return {
        "kind": "return",
        "type": _qualname(type(value)),
        "digest": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32],
        "repr": text[:MAX_REPR],
        "features": features_of(features),
    }


def raised(exc: BaseException, features: list[Hashable]) -> Identity:
    """The identity of a run that raised ``exc``."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001
        message = f"<unprintable {type(exc).__name__}>"
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates stay writable
    kind = "resource" if isinstance(exc, RESOURCE_ERRORS) else "raise"
    return {
        "kind": kind,
        "type": _qualname(type(exc)),
        "shape": message_shape(message),
        "message": message[:MAX_MESSAGE],
        "features": features_of(features),
    }


def wedged(timeout: float) -> Identity:
    """The identity of a run stopped by its timeout."""
    return {"kind": "wedge", "timeout": timeout}


def died(detail: str) -> Identity:
    """The identity of a run whose process died (a replay child's signal or exit)."""
    return {"kind": "crash", "detail": detail}


def comparable(identity: Identity) -> bool:
    """True for outcomes that say what the code did (a return or a raise)."""
    return identity.get("kind") in ("return", "raise")


def compared(identity: Identity) -> tuple:
    """The fields of an outcome that decide whether two runs did the same thing."""
    kind = identity.get("kind")
    if kind == "return":
        return ("return", identity["digest"], tuple(identity["features"]))
    if kind == "raise":
        return ("raise", identity["type"], identity["shape"], tuple(identity["features"]))
    return (kind,)


def same(a: Identity, b: Identity, messages: bool = True) -> bool:
    """True when two outcomes are indistinguishable (without ``messages``: by more than an exception message)."""
    if compared(a) == compared(b):
        return True
    return not messages and difference(a, b) == "exception-shape"


def message_only(original: Identity, mutated: Identity) -> bool:
    """True when the only difference is an exception's message (a kill by message, not behaviour)."""
    return difference(original, mutated) == "exception-shape"


def difference(original: Identity, mutated: Identity) -> str:
    """The class of difference between two outcomes (part of the finding's key).

    ``return-value``, ``exception-shape``, ``exception-type``, ``return-vs-raise``,
    ``raise-vs-return`` or ``features``; ``""`` when they are the same.
    """
    if compared(original) == compared(mutated):
        return ""
    ok, mk = original.get("kind"), mutated.get("kind")
    if ok != mk:
        return f"{ok}-vs-{mk}"
    if ok == "return" and original["digest"] != mutated["digest"]:
        return "return-value"
    if ok == "raise" and original["type"] != mutated["type"]:
        return "exception-type"
    if ok == "raise" and original["shape"] != mutated["shape"]:
        return "exception-shape"
    return "features"


def difference_class(original: Identity, mutated: Identity) -> tuple:
    """What a shrunk input must keep: the kind of difference and both sides' outcome class.

    A shrink candidate counts only if it differs in the same way: the same
    :func:`difference`, the same kinds and types on each side, and, for raises, the
    same message shapes (a returned value may change as the input shrinks).
    """

    def side(o: Identity) -> tuple:
        return (o.get("kind"), o.get("type"), o.get("shape"))

    return (difference(original, mutated), side(original), side(mutated))


#: Characters of identical text shown before the first difference of two returned values.
DIFF_CONTEXT = 40


def describe(original: Identity, mutated: Identity) -> str:
    """One sentence saying how the mutant's outcome differs from the original's."""
    what = difference(original, mutated)

    start = 0
    if original.get("kind") == mutated.get("kind") == "return":
        # Show both reprs from a little before where they first differ, not from their
        # (often identical) beginnings.
        a, b = original["repr"], mutated["repr"]
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        start = max(0, first - DIFF_CONTEXT)

    def show(o: Identity) -> str:
        if o.get("kind") == "return":
            text = o["repr"]
            return (
                f"returns {'...' if start else ''}{text[start : start + 120]}{'...' if len(text) > start + 120 else ''}"
            )
        if o.get("kind") == "raise":
            return f"raises {o['type']}({o['message'][:120]!r})"
        return o.get("kind", "?")

    if what == "features":
        only_o = sorted(set(original["features"]) - set(mutated["features"]))
        only_m = sorted(set(mutated["features"]) - set(original["features"]))
        if not only_o and not only_m:
            return "the semantic features differ in how often they were reported"
        return f"the semantic features differ: original only {only_o[:5]}, mutant only {only_m[:5]}"
    return f"{what}: the original {show(original)}, the mutant {show(mutated)}"
