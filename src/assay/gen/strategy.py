"""The structured-strategy protocol and the registry that names strategies.

A strategy is named ``name@version``.  Every hook draws only from the ``random.Random``
it is given (the case RNG) and bounds its output, so a seed plus the strategy's
version reproduces the schedule.  Changing what a hook produces for the same RNG
draws means bumping the version.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from assay.core.errors import ConfigError


@runtime_checkable
class Strategy(Protocol):
    """Structure-aware generation for one input grammar."""

    name: str
    version: int

    def generate(self, rng: random.Random) -> Any:
        """A fresh, valid value of the grammar."""

    def parse(self, data: bytes) -> Any | None:
        """The structure of ``data``, or ``None`` if this strategy cannot read it."""

    def render(self, value: Any) -> bytes:
        """The bytes of ``value``."""

    def mutate(self, value: Any, rng: random.Random) -> Any:
        """``value`` with one field changed, keeping the grammar where it can."""

    def crossover(self, a: Any, b: Any, rng: random.Random) -> Any:
        """A value combining parts of two compatible values."""

    def tokens(self, value: Any) -> list[bytes]:
        """Input-aware dictionary tokens (names, values) found in ``value``."""

    def shrink_candidates(self, value: Any) -> Iterator[Any]:
        """Simpler values to try before byte-level reduction (bounded)."""


_REGISTRY: dict[str, Strategy] = {}


def spec(strategy: Strategy) -> str:
    return f"{strategy.name}@{strategy.version}"


def register_strategy(strategy: Strategy) -> Strategy:
    """Make ``strategy`` available to targets as ``name@version``."""
    _REGISTRY[spec(strategy)] = strategy
    return strategy


def get_strategy(name: str) -> Strategy:
    """Look up ``name@version`` (or bare ``name`` for its newest version)."""
    _load_builtins()
    if name in _REGISTRY:
        return _REGISTRY[name]
    if "@" not in name:
        versions = [s for s in _REGISTRY.values() if s.name == name]
        if versions:
            return max(versions, key=lambda s: s.version)
    known = ", ".join(sorted(_REGISTRY)) or "none"
    raise ConfigError(f"unknown strategy {name!r} (registered: {known}); register it with assay.register_strategy")


def registered() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


_loaded = False


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for module in ("assay.gen.http1", "assay.gen.xml", "assay.gen.json"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
