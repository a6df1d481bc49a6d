"""Declaring a target: ``@assay.target`` and :func:`make_target`.

The decorator understands what comes in through the harness layer: a Hypothesis
``@given`` test (fed its bytes through ``fuzz_one_input``, :mod:`assay.harness.given`)
and ``schema=`` (a JSON Schema strategy, :mod:`assay.gen.schema.strategy`). It lives
here rather than beside :class:`~assay.core.target.Target` so that the vocabulary
in :mod:`assay.core` imports no generator and no harness.
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.core.allowance import parse_allow
from assay.core.config import project_holding
from assay.core.errors import ConfigError, TargetError
from assay.core.target import (
    DEFAULT_MAX_LEN,
    DEFAULT_REPLAYS,
    DEFAULT_RSS_LIMIT_MB,
    DEFAULT_TIMEOUT,
    REGISTRY,
    Registry,
    Target,
)
from assay.harness.given import fuzz_function, is_given_test


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
    expected_from: str | Iterable[str] = (),
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

    ``expected_from`` (``"project"``, or module names) makes a built-in exception
    of an ``expected`` class expected only when the project's own code raised it:
    ``"project"`` is the code in the folder of the project defining the target
    (outside installed packages), a module name covers its submodules too.
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
    owners = _owners(expected_from, defined_in, tname)
    if schema is not None:
        if strategy is not None:
            raise TargetError(f"target {tname!r}: give schema=... or strategy=..., not both")
        # Imported here: the schema generator (and jsonschema) load only for schema= targets.
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
        expected_from=owners,
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


def _owners(expected_from: str | Iterable[str], defined_in: str, tname: str) -> tuple[str, ...]:
    """``expected_from`` as module names and absolute folders (``"project"``: the defining project's folder)."""
    entries = (expected_from,) if isinstance(expected_from, str) else tuple(expected_from)
    owners = []
    for entry in entries:
        if entry == "project":
            if not defined_in:
                raise TargetError(f"target {tname!r}: expected_from='project' needs a target defined in a file")
            here = Path(defined_in).resolve()
            owners.append(str(project_holding(here) or here.parent))
        elif isinstance(entry, str) and entry and all(part.isidentifier() for part in entry.split(".")):
            owners.append(entry)
        else:
            raise TargetError(
                f"target {tname!r}: expected_from=... holds {entry!r}; use 'project' or module names like 'mypkg'"
            )
    return tuple(owners)


def _number(tname: str, setting: str, value: Any) -> None:
    """Refuse a setting that must be a finite number of seconds (``timeout="2"``, NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TargetError(f"target {tname!r}: {setting} must be a finite number of seconds, not {value!r}")


def _as_bytes(value: bytes | str, tname: str, what: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TargetError(f"target {tname!r}: {what}=... holds {value!r}; use bytes or str")
