"""Hypothesis ``@given`` tests as fuzz targets, through ``fuzz_one_input``.

Hypothesis turns bytes into the test's arguments itself; assay's mutations of
those bytes become mutations of the arguments, and a failing example becomes an
assay finding like any other.  The target runs with Hypothesis's example database
switched off, so a fuzz run writes nothing outside assay's own stores.

The input bytes are Hypothesis choice bytes, meaningless to a person and tied to
the Hypothesis version.  So the test's inner function is wrapped (Hypothesis reads
``inner_test`` when ``fuzz_one_input`` is first fetched) and an exception escaping
it carries the *falsifying example*: the test's name and its keyword arguments
as Python source (:func:`falsifying_example`).  :func:`assay.core.verdict.classify`
puts it in the verdict's ``data["example"]``; explanations print it and the
promoter emits it as ``@example(...)``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from assay.core.errors import TargetError

#: Attribute of an exception raised by a ``@given`` target's body: a callable giving its example.
EXAMPLE_ATTR = "__assay_example__"


def falsifying_example(test_name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``{"test", "arguments": {name: source}, "replayable"}`` for one call of a test body.

    Arguments without a literal form are shown by ``repr`` and make the example
    not ``replayable`` (the promoter quarantines such a finding rather than guess).
    """
    from assay.core.literals import NotReplayable, to_source

    arguments: dict[str, str] = {}
    replayable = True
    for name, value in kwargs.items():
        try:
            arguments[name] = to_source(value, f"argument {name!r}")
        except NotReplayable:
            arguments[name] = repr(value)
            replayable = False
    return {"test": test_name, "arguments": arguments, "replayable": replayable}


def _capturing(inner: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(inner)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return inner(*args, **kwargs)
        except BaseException as exc:
            try:  # lazily: only a verdict that is not cached pays for the source text
                setattr(exc, EXAMPLE_ATTR, lambda: falsifying_example(name, kwargs))
            except (AttributeError, TypeError):
                pass
            raise

    return call


def is_given_test(obj: Any) -> bool:
    hyp = getattr(obj, "hypothesis", None)
    # Look on the class: reading the property would build (and cache) the fuzz
    # target with the test's own settings, example database included.
    return hyp is not None and hasattr(type(hyp), "fuzz_one_input")


def fuzz_function(test: Callable[..., Any]) -> Callable[[bytes], Any]:
    """A ``bytes -> None`` callable running ``test`` on the example the bytes encode."""
    if not is_given_test(test):
        raise TargetError(f"{test!r} is not a Hypothesis @given test (it has no .hypothesis.fuzz_one_input)")
    import hypothesis

    missing = object()
    current = getattr(test, "_hypothesis_internal_use_settings", missing)
    # fuzz_one_input reads the test's settings when the attribute is fetched;
    # without a database no failing example is written into .hypothesis/.  A test
    # without @settings has no settings of its own: the profile's are the base.
    base = hypothesis.settings() if current is missing or current is None else current
    test._hypothesis_internal_use_settings = hypothesis.settings(base, database=None)  # type: ignore[attr-defined, arg-type]  # Hypothesis internals
    handle = test.hypothesis  # type: ignore[attr-defined]
    inner = handle.inner_test
    handle.inner_test = _capturing(inner, getattr(test, "__name__", "test"))
    try:
        fuzz_one_input = handle.fuzz_one_input
    finally:
        handle.inner_test = inner
        if current is missing:
            del test._hypothesis_internal_use_settings  # type: ignore[attr-defined]
        else:
            test._hypothesis_internal_use_settings = current  # type: ignore[attr-defined]

    def run(data: bytes) -> None:
        fuzz_one_input(data)

    run.__name__ = getattr(test, "__name__", "given_test")
    run.__qualname__ = getattr(test, "__qualname__", run.__name__)
    run.__module__ = getattr(test, "__module__", __name__)
    run.__wrapped__ = test  # type: ignore[attr-defined]
    return run
