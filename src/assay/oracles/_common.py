"""What the oracle helpers share: outcomes, callable identity, and failure data.

An :class:`Outcome` is one call normalised to "returned this value" or "raised
this exception class", so that two calls can be compared without comparing
exception messages (which echo the input and differ between implementations).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Longest ``repr`` of a value kept in a finding's detail and data; the full
#: value is reproducible from the input, so the artifact needs only a glimpse.
MAX_REPR = 240


@dataclass(frozen=True)
class Outcome:
    """What one call did: returned ``value`` (``error is None``) or raised ``error``.

    ``value`` is the normalised return value (what comparisons see) and ``raw``
    the value as returned.  ``exception`` keeps the raised instance for chaining;
    it takes no part in equality.
    """

    impl: str
    value: Any = None
    error: type[BaseException] | None = None
    raw: Any = field(default=None, compare=False, repr=False)
    exception: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True when the call returned."""
        return self.error is None

    @property
    def is_error(self) -> bool:
        """True when the call raised."""
        return self.error is not None

    def describe(self) -> str:
        """A short human description: ``value <repr>`` or ``error <class>``."""
        if self.error is None:
            return f"value {short_repr(self.value)}"
        return f"error {class_name(self.error)}"

    def to_json(self) -> dict[str, Any]:
        """Plain data for an artifact's ``data`` field."""
        if self.error is None:
            return {"impl": self.impl, "value": short_repr(self.value)}
        return {
            "impl": self.impl,
            "error": class_name(self.error),
            "message": short_repr(str(self.exception)) if self.exception is not None else "",
        }


def attempt(
    impl: str,
    fn: Callable[..., Any],
    *args: Any,
    catch: tuple[type[BaseException], ...] = (Exception,),
    normalize: Callable[[Any], Any] | None = None,
) -> Outcome:
    """Call ``fn(*args)`` and describe what happened as an :class:`Outcome`.

    Exceptions outside ``catch`` propagate (so a wedge timeout or an interrupt is
    never turned into an outcome).  ``normalize`` maps the return value before it
    is compared; its own exceptions propagate, since they are bugs in the oracle.
    """
    try:
        raw = fn(*args)
    except catch as exc:
        return Outcome(impl, error=type(exc), exception=exc)
    value = normalize(raw) if normalize is not None else raw
    return Outcome(impl, value=value, raw=raw)


def identity(fn: Callable[..., Any]) -> str:
    """A stable name for a callable: ``module.qualname`` without ``<locals>``.

    Used to build default relation names, so two relations over different
    functions get different signatures even when the user names neither.
    """
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = getattr(fn, "__func__", fn)  # bound and class methods: name the function
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "?")
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{qualname.replace('<locals>.', '')}"


def class_name(cls: type) -> str:
    """``module.qualname`` of a class, without the ``builtins.`` prefix."""
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def short_repr(value: Any) -> str:
    """``repr(value)`` cut to :data:`MAX_REPR` characters."""
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the finding
        text = f"<unrepresentable {type(value).__qualname__}>"
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 3] + "..."
