"""The ``atheris`` module a harness sees while assay imports it.

assay puts this module into ``sys.modules["atheris"]`` only for the duration of
importing a target file (:func:`active`), so a plain atheris harness runs unchanged
without atheris installed, and a real atheris elsewhere in the process is never
shadowed.  Instrumentation calls are no-ops (assay measures coverage with
``sys.monitoring``); :func:`Setup` records the harness's callback as a target (with
the argument list it was given, whose libFuzzer flags become the target's settings)
and :func:`Fuzz` stops the harness's own start-up code, since assay runs the campaign.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from assay.harness.fdp import ALL_REMAINING, FuzzedDataProvider

__all__ = [
    "ALL_REMAINING",
    "FuzzedDataProvider",
    "Fuzz",
    "Mutate",
    "Setup",
    "SetupCall",
    "enabled_hooks",
    "gen_match",
    "instrument_all",
    "instrument_func",
    "instrument_imports",
    "path",
]


class SetupCall(NamedTuple):
    """One ``atheris.Setup(args, callback)`` call: the callback and the argument list it came with."""

    callback: Callable[[bytes], Any]
    args: tuple[str, ...]


#: The :func:`Setup` calls made during the current import, in call order.
calls: list[SetupCall] = []


class FuzzCalled(BaseException):
    """Raised by :func:`Fuzz` to end a harness's start-up code, as atheris' ``Fuzz()`` never returns."""


def Setup(args: list[str], test_one_input: Callable[[bytes], Any], **kwargs: Any) -> list[str]:  # noqa: N802
    """Record ``test_one_input`` as the harness's target, with ``args`` (their libFuzzer flags are its settings)."""
    if not callable(test_one_input):
        raise TypeError(f"atheris.Setup: {test_one_input!r} is not callable")
    words = tuple(str(a) for a in args)
    calls.append(SetupCall(test_one_input, words))
    return [a for a in words if not a.startswith("-")]


def Fuzz() -> None:  # noqa: N802
    """Stop here: assay, not the harness, runs the fuzz loop."""
    raise FuzzCalled()


def instrument_all() -> None:
    """No-op: assay's coverage comes from ``sys.monitoring``, decided by each target's sources."""


def instrument_func(func: Callable[..., Any]) -> Callable[..., Any]:
    """No-op decorator (assay instruments nothing)."""
    return func


@contextlib.contextmanager
def instrument_imports(include: Any = None, exclude: Any = None, enable_loader_override: bool = True) -> Iterator[None]:
    """No-op context manager: what a target module imports is in its default sources anyway."""
    yield


class _EnabledHooks(set[str]):
    """``atheris.enabled_hooks``: hooks are accepted and ignored (named in any case, as atheris does)."""

    def add(self, hook: str) -> None:
        set.add(self, hook.lower())

    def __contains__(self, hook: object) -> bool:
        return isinstance(hook, str) and set.__contains__(self, hook.lower())


enabled_hooks = _EnabledHooks()


def gen_match(pattern: Any) -> Any:
    """atheris returns a string the regex matches; the pattern itself is a fair stand-in."""
    return pattern


def Mutate(data: bytes, max_size: int) -> bytes:  # noqa: N802
    """libFuzzer's mutator is not available under assay: custom mutators keep the input
    (cut to ``max_size``).  As cheap per call as atheris' own: the input itself when it fits."""
    if type(data) is bytes and len(data) <= max_size:
        return data
    return bytes(data)[:max_size]


def path() -> str:
    import os

    return os.path.dirname(os.path.dirname(__file__))


@contextlib.contextmanager
def active() -> Iterator[list[SetupCall]]:
    """This module as ``atheris`` for the duration; yields a list that receives the ``Setup`` calls at the end."""
    previous = sys.modules.get("atheris")
    sys.modules["atheris"] = sys.modules[__name__]
    outer = calls[:]  # a target file importing another keeps the two apart
    calls.clear()
    found: list[SetupCall] = []
    try:
        yield found
    finally:
        found.extend(calls)
        calls[:] = outer
        if previous is None:
            sys.modules.pop("atheris", None)
        else:
            sys.modules["atheris"] = previous
