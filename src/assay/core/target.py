"""Targets: named callables that take ``bytes``, and the registry that holds them."""

from __future__ import annotations

import importlib.util
import inspect
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError, TargetError

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
    any other exception is a ``panic``.  ``sources`` names the files, directories or
    modules whose code gives coverage feedback (default: the file defining the
    target plus ``implied_sources``, the packages its module imports, which
    discovery fills in).  ``strategy`` names a structured generation strategy (``"http1@1"``).
    """

    name: str
    fn: Callable[[bytes], Any]
    expected: tuple[type[BaseException], ...] = ()
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

    def __call__(self, data: bytes) -> Any:
        return self.fn(data)

    def source_paths(self, project_root: str | os.PathLike[str] | None = None) -> list[str]:
        """Absolute paths (files or directories) whose code is in feedback scope."""
        entries = self.sources or ((self.defined_in,) if self.defined_in else ()) + self.implied_sources
        return [resolve_source(entry, self, project_root) for entry in entries]

    def settings(self) -> dict[str, Any]:
        """The target's settings as plain data (for ``assay targets`` and reports)."""
        return {
            "name": self.name,
            "expected": [qualified_name(e) for e in self.expected],
            "sources": list(self.sources or self.implied_sources),
            "sources_from": "sources=" if self.sources else "imports" if self.implied_sources else "harness file",
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


def target(fn: Callable[[bytes], Any] | None = None, *, registry: Registry | None = None, **settings: Any) -> Any:
    """Register a function taking ``bytes`` as a fuzz target.

    Usable bare (``@assay.target``) or with settings
    (``@assay.target(expected=(ValueError,), seeds=[b"..."])``); the settings are
    :func:`make_target`'s keyword arguments, and unknown ones are kept in
    ``Target.extra``.  Returns the function unchanged, with the :class:`Target` on
    its ``assay_target`` attribute.  Applied to a Hypothesis ``@given`` test, the
    target feeds the bytes to the test through ``fuzz_one_input``.
    """
    known = set(inspect.signature(make_target).parameters) - {"func", "extra"}
    extra = {k: settings.pop(k) for k in list(settings) if k not in known}

    def register(func: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
        from assay.harness.given import fuzz_function, is_given_test

        body = fuzz_function(func) if is_given_test(func) else func
        if "name" not in settings and body is not func:
            settings["name"] = getattr(func, "__name__", None)
        tgt = make_target(body, extra=extra, **settings)
        (registry or REGISTRY).add(tgt)
        try:
            func.assay_target = tgt  # type: ignore[attr-defined]
        except AttributeError:  # bound methods and builtins take no attributes
            pass
        return func

    return register(fn) if fn is not None else register


def make_target(
    func: Callable[[bytes], Any],
    *,
    name: str | None = None,
    expected: Iterable[type[BaseException]] = (),
    sources: Sequence[str] = (),
    max_len: int = DEFAULT_MAX_LEN,
    seeds: Iterable[bytes] = (),
    timeout: float = DEFAULT_TIMEOUT,
    strategy: str | None = None,
    dictionary: Iterable[bytes | str] = (),
    replays: int = DEFAULT_REPLAYS,
    rss_limit_mb: int = DEFAULT_RSS_LIMIT_MB,
    slow: float | None = None,
    allow: Iterable[str] = (),
    schema: Any = None,
    schema_mode: str = "both",
    extra: dict[str, Any] | None = None,
) -> Target:
    """Validate settings and build a :class:`Target` (without registering it).

    ``schema`` (a JSON Schema dict or the path of a ``.json`` file, relative to the
    defining file) makes the target's strategy generate JSON documents for it,
    ``schema_mode`` ``"valid"``, ``"adjacent"`` or ``"both"`` (see
    :mod:`assay.gen.schema.strategy`); it replaces ``strategy``.
    """
    tname = name or getattr(func, "__name__", None)
    if not tname or not isinstance(tname, str):
        raise TargetError(f"cannot name target {func!r}; pass name=...")
    if not all(c.isalnum() or c in "-_.:" for c in tname) or tname.startswith((".", ":")):
        raise TargetError(f"target name {tname!r} may hold only letters, digits, '-', '_', '.' and ':'")
    if not callable(func):
        raise TargetError(f"target {tname!r} is not callable")
    exp = tuple(expected)
    for e in exp:
        if not (isinstance(e, type) and issubclass(e, BaseException)):
            raise TargetError(f"target {tname!r}: expected=... holds {e!r}, which is not an exception class")
    if isinstance(sources, str):
        sources = (sources,)
    if not isinstance(max_len, int) or max_len < 1:
        raise TargetError(f"target {tname!r}: max_len must be a positive integer, not {max_len!r}")
    seed_list = tuple(_as_bytes(s, tname, "seeds") for s in seeds)
    for s in seed_list:
        if len(s) > max_len:
            raise TargetError(f"target {tname!r}: a seed of {len(s)} bytes exceeds max_len={max_len}")
    if isinstance(max_len, bool):
        raise TargetError(f"target {tname!r}: max_len must be a positive integer, not {max_len!r}")
    _number(tname, "timeout", timeout)
    if timeout <= 0:
        raise TargetError(f"target {tname!r}: timeout must be positive seconds, not {timeout!r}")
    if not isinstance(replays, int) or isinstance(replays, bool) or replays < 1:
        raise TargetError(f"target {tname!r}: replays must be a whole number of at least 1, not {replays!r}")
    if not isinstance(rss_limit_mb, int) or isinstance(rss_limit_mb, bool) or rss_limit_mb < 0:
        raise TargetError(
            f"target {tname!r}: rss_limit_mb must be a whole number of MiB (0: no limit), not {rss_limit_mb!r}"
        )
    if strategy is not None and not isinstance(strategy, str):
        raise TargetError(f"target {tname!r}: strategy must be a string like 'http1@1', not {strategy!r}")
    if slow is not None:
        _number(tname, "slow", slow)
    from assay.engine.sandbox import parse_allow

    allow = (allow,) if isinstance(allow, str) else tuple(allow)
    parse_allow(allow, tname)
    if slow is not None and not (0 < slow < timeout):
        raise TargetError(
            f"target {tname!r}: slow={slow!r} must be a positive number of seconds below timeout={timeout}"
        )
    try:
        defined_in = inspect.getsourcefile(inspect.unwrap(func)) or ""
    except TypeError:
        defined_in = ""
    if schema is not None:
        if strategy is not None:
            raise TargetError(f"target {tname!r}: give schema=... or strategy=..., not both")
        from assay.gen.schema.strategy import schema_strategy

        try:
            strategy = schema_strategy(schema, schema_mode, relative_to=defined_in, max_len=max_len)
        except ConfigError as exc:
            raise TargetError(f"target {tname!r}: {exc}") from None
    elif schema_mode != "both":
        raise TargetError(f"target {tname!r}: schema_mode={schema_mode!r} needs schema=...")
    return Target(
        name=tname,
        fn=func,
        expected=exp,
        sources=tuple(sources),
        max_len=max_len,
        seeds=seed_list,
        timeout=float(timeout),
        strategy=strategy,
        dictionary=tuple(_as_bytes(t, tname, "dictionary") for t in dictionary),
        replays=replays,
        rss_limit_mb=rss_limit_mb,
        slow=slow,
        defined_in=os.path.abspath(defined_in) if defined_in else "",
        extra=dict(extra or {}),
        allow=allow,
    )


def _number(tname: str, setting: str, value: Any) -> None:
    """Refuse a setting that must be a finite number of seconds (``timeout="2"``, NaN)."""
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TargetError(f"target {tname!r}: {setting} must be a finite number of seconds, not {value!r}")


def _as_bytes(value: bytes | str, tname: str, what: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TargetError(f"target {tname!r}: {what}=... holds {value!r}; use bytes or str")
