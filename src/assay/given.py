"""Hypothesis ``@given`` tests as fuzz targets, through ``fuzz_one_input``.

Hypothesis turns bytes into the test's arguments itself; assay's mutations of
those bytes become mutations of the arguments, and a failing example becomes an
assay finding like any other.  The target runs with Hypothesis's example database
switched off, so a fuzz run writes nothing outside assay's own stores.
"""

from __future__ import annotations

from typing import Any, Callable

from assay.errors import TargetError


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
    test._hypothesis_internal_use_settings = hypothesis.settings(base, database=None)
    try:
        fuzz_one_input = test.hypothesis.fuzz_one_input
    finally:
        if current is missing:
            del test._hypothesis_internal_use_settings
        else:
            test._hypothesis_internal_use_settings = current

    def run(data: bytes) -> None:
        fuzz_one_input(data)

    run.__name__ = getattr(test, "__name__", "given_test")
    run.__qualname__ = getattr(test, "__qualname__", run.__name__)
    run.__module__ = getattr(test, "__module__", __name__)
    run.__wrapped__ = test  # type: ignore[attr-defined]
    return run
