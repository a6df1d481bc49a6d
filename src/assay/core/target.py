"""Targets: named callables that take ``bytes``, and the registry that holds them."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import TargetError

#: Default cap on input size, as libFuzzer's ``-max_len`` default.
DEFAULT_MAX_LEN = 4096
#: Default per-input time limit in seconds before an input is a ``wedge``.
DEFAULT_TIMEOUT = 2.0
#: Default number of replays the promoter's flake guard demands.
DEFAULT_REPLAYS = 5
#: Default address-space limit of a campaign worker, in MiB (``MemoryError`` above it).
DEFAULT_RSS_LIMIT_MB = 2048


@dataclass
class Target:
    """One fuzz target: a callable taking ``bytes`` plus the settings that judge it.

    ``expected`` are exception classes that are a correct rejection of bad input;
    any other exception is a ``panic``.  ``expected_from`` (module names and
    project folders) accepts a built-in exception of those classes only when the
    project's own code raised it (see :mod:`assay.core.provenance`).  ``sources`` names the files, directories or
    modules whose code gives coverage feedback (default: the file defining the
    target plus ``implied_sources``, the project's packages and the libraries they
    call into, which discovery fills in with ``scope_reasons``: entry -> why it is watched).  ``strategy`` names a structured generation strategy (``"http1@1"``).
    """

    name: str
    fn: Callable[[bytes], Any]
    expected: tuple[type[BaseException], ...] = ()
    expected_from: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    max_len: int = DEFAULT_MAX_LEN
    seeds: tuple[bytes, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    strategy: str | None = None
    dictionary: tuple[bytes, ...] = ()
    replays: int = DEFAULT_REPLAYS
    rss_limit_mb: int = DEFAULT_RSS_LIMIT_MB
    slow: float | None = None
    defined_in: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    implied_sources: tuple[str, ...] = ()
    scope_reasons: dict[str, str] = field(default_factory=dict)

    def __call__(self, data: bytes) -> Any:
        return self.fn(data)

    def source_paths(self, project_root: str | os.PathLike[str] | None = None) -> list[str]:
        """Absolute paths (files or directories) whose code is in feedback scope."""
        entries = self.sources or ((self.defined_in,) if self.defined_in else ()) + self.implied_sources
        return [resolve_source(entry, self, project_root) for entry in entries]

    def scope(self) -> list[dict[str, str]]:
        """Each entry of the coverage scope with the reason it is there, in :meth:`source_paths` order."""
        if self.sources:
            return [{"source": s, "reason": self.scope_reasons.get(s, "set in sources=")} for s in self.sources]
        own = [{"source": self.defined_in, "reason": "the target's file"}] if self.defined_in else []
        return own + [{"source": s, "reason": self.scope_reasons.get(s, "imported")} for s in self.implied_sources]

    def settings(self) -> dict[str, Any]:
        """The target's settings as plain data (for ``assay targets`` and reports)."""
        return {
            "name": self.name,
            "expected": [qualified_name(e) for e in self.expected],
            "expected_from": list(self.expected_from),
            "sources": list(self.sources or self.implied_sources),
            "sources_from": "sources=" if self.sources else "imports" if self.implied_sources else "harness file",
            "scope": self.scope(),
            "max_len": self.max_len,
            "seeds": len(self.seeds),
            "timeout": self.timeout,
            "strategy": self.strategy,
            "dictionary": len(self.dictionary),
            "replays": self.replays,
            "rss_limit_mb": self.rss_limit_mb,
            "slow": self.slow,
            "allow": list(self.allow),
            "defined_in": self.defined_in,
        }


def qualified_name(obj: Any) -> str:
    """``module.qualname`` of a class or function."""
    module = getattr(obj, "__module__", None) or "?"
    return f"{module}.{getattr(obj, '__qualname__', repr(obj))}"


def resolve_source(entry: str, target: Target, project_root: str | os.PathLike[str] | None) -> str:
    """Resolve one ``sources`` entry: a path (file or directory) or a module name."""
    looks_like_path = "/" in entry or entry.endswith(".py") or os.sep in entry
    if looks_like_path:
        candidates = [Path(entry)] if os.path.isabs(entry) else []
        if target.defined_in:
            candidates.append(Path(target.defined_in).parent / entry)
        candidates.append(Path(project_root or os.getcwd()) / entry)
        for candidate in candidates:
            if candidate.exists():
                return str(candidate.resolve())
        raise TargetError(
            f"target {target.name!r}: source {entry!r} does not exist "
            f"(looked in {', '.join(str(c) for c in candidates)}); fix its sources=[...]"
        )
    try:
        spec = importlib.util.find_spec(entry)
    except (ImportError, ValueError) as exc:
        raise TargetError(f"target {target.name!r}: source module {entry!r} cannot be found: {exc}") from None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        raise TargetError(
            f"target {target.name!r}: source module {entry!r} has no Python file "
            "(built-in or not found); name a module implemented in Python"
        )
    if spec.submodule_search_locations:
        return str(Path(spec.origin).parent.resolve())
    return str(Path(spec.origin).resolve())


class Registry:
    """Name -> :class:`Target`.  Registering a second target under a name is an error."""

    def __init__(self) -> None:
        self._targets: dict[str, Target] = {}
        #: name -> harness file, for targets loaded from a path named on a command line (not [tool.assay]).
        self.harness_files: dict[str, str] = {}

    def add(self, target: Target) -> Target:
        existing = self._targets.get(target.name)
        if existing is not None and existing.fn is not target.fn:
            if _same_definition(existing, target):
                self._targets[target.name] = target  # the same file imported again
                return target
            raise TargetError(
                f"two targets are named {target.name!r} ({existing.defined_in} and "
                f"{target.defined_in}); pass name=... to tell them apart"
            )
        self._targets[target.name] = target
        return target

    def get(self, name: str) -> Target:
        try:
            return self._targets[name]
        except KeyError:
            known = ", ".join(sorted(self._targets)) or "none"
            raise TargetError(f"no target named {name!r} (registered: {known})") from None

    def names(self) -> list[str]:
        return sorted(self._targets)

    def all(self) -> list[Target]:
        return [self._targets[n] for n in self.names()]

    def clear(self) -> None:
        self._targets.clear()

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def __len__(self) -> int:
        return len(self._targets)


def _same_definition(a: Target, b: Target) -> bool:
    return a.defined_in == b.defined_in and getattr(a.fn, "__qualname__", None) == getattr(b.fn, "__qualname__", None)


#: The process-wide registry that ``@assay.target`` adds to.
REGISTRY = Registry()
