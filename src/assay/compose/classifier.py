"""Classifier adapters: anything that judges a command string, as one interface.

* :class:`CallableClassifier` wraps ``fn(command) -> bool``, or ``fn(command) ->
  level`` with an ``allowed(level) -> bool`` predicate.  Levels are ordered (an
  ``int``/``IntEnum``, or via ``rank=``): among allowed verdicts the whole must be
  at least the highest level of its parts ("Denied wins, otherwise the highest").
* :class:`CommandClassifier` runs an external program once per distinct command
  (cached): exit status 0 means allowed, or a JSON field on its stdout decides.
  The command is passed as one argument (or on stdin), never to a shell.

Nothing here ever executes a classified command; classifiers only judge strings.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from assay.core.errors import ConfigError

#: Seconds an out-of-process classifier may take for one command.
DEFAULT_COMMAND_TIMEOUT = 10.0
#: Most verdicts an out-of-process classifier keeps cached.
MAX_CACHE = 200_000
#: Module-name prefix of classifiers imported from a file path (``file.py:func``).
USER_MODULE_PREFIX = "assay_compose_user_"
#: JSON string values that mean "allowed" (compared case-insensitively).
DEFAULT_ALLOW_VALUES: tuple[str, ...] = ("allow", "allowed", "ok", "safe", "yes", "true", "pass")


class ClassifierError(RuntimeError):
    """The classifier failed to produce a verdict (crashed, timed out, bad output)."""


class VerdictTypeError(TypeError):
    """The classifier returned a level but no predicate says which levels are allowed."""


@dataclass(frozen=True)
class Judgement:
    """One verdict: allowed or not, the raw level, and its rank when levels are ordered."""

    allowed: bool
    level: Any = None
    rank: Any = None

    def describe(self) -> str:
        word = "allowed" if self.allowed else "denied"
        return word if self.level is None or isinstance(self.level, bool) else f"{word} ({self.level!r})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"allowed": self.allowed}
        if self.level is not None and not isinstance(self.level, bool):
            out["level"] = self.level if isinstance(self.level, (int, float, str)) else repr(self.level)
        if self.rank is not None:
            out["rank"] = self.rank if isinstance(self.rank, (int, float, str)) else repr(self.rank)
        return out


@runtime_checkable
class Classifier(Protocol):
    """Judges one command string."""

    def judge(self, command: str) -> Judgement: ...

    def describe(self) -> str: ...


def _default_rank(level: Any) -> Any:
    if isinstance(level, bool) or level is None:
        return None
    if isinstance(level, (int, float)):
        return level
    return None


class CallableClassifier:
    """An in-process classifier: ``fn(command) -> bool`` or ``-> level`` plus ``allowed``."""

    def __init__(
        self,
        fn: Callable[[str], Any],
        allowed: Callable[[Any], bool] | None = None,
        rank: Callable[[Any], Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise ConfigError(f"classifier {fn!r} is not callable; pass a function taking a command string")
        self.fn = fn
        self.allowed = allowed
        self.rank = rank

    def judge(self, command: str) -> Judgement:
        level = self.fn(command)
        if self.allowed is None:
            if not isinstance(level, bool):
                raise VerdictTypeError(
                    f"classifier {self.describe()} returned {level!r}, not a bool; "
                    "pass allowed=<predicate> (CLI: --allowed-predicate) to say which levels are allowed"
                )
            return Judgement(level, level, None)
        ok = bool(self.allowed(level))
        rank = self.rank(level) if self.rank is not None else _default_rank(level)
        return Judgement(ok, level, rank)

    def describe(self) -> str:
        return _qualname(self.fn)

    def source_file(self) -> str | None:
        """The file defining the classifier (its coverage guides the campaign)."""
        return _source_file(self.fn)


class CommandClassifier:
    """An out-of-process classifier: one run of ``argv`` per distinct command, cached.

    ``mode="exit"``: exit status 0 is allowed, any other status denied (126, 127
    and death by a signal are errors).  ``mode="json"``: stdout is a JSON object and
    ``field`` (dotted path) decides: a bool, or a string in ``allow_values``.  The
    command goes in place of a ``{}`` argument, else as the last argument, or on
    stdin with ``stdin=True``.  No shell is involved at any point.
    """

    def __init__(
        self,
        argv: Sequence[str] | str,
        *,
        mode: str = "exit",
        field: str = "allowed",
        allow_values: Iterable[str] = DEFAULT_ALLOW_VALUES,
        stdin: bool = False,
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> None:
        args = shlex.split(argv) if isinstance(argv, str) else list(argv)
        if not args:
            raise ConfigError("the classifier command is empty; pass --classifier-cmd 'prog args'")
        if mode not in ("exit", "json"):
            raise ConfigError(f"classifier mode must be 'exit' or 'json', not {mode!r}")
        self.argv = args
        self.mode = mode
        self.field = field
        self.allow_values = frozenset(v.lower() for v in allow_values)
        self.stdin = stdin
        self.timeout = timeout
        self.env = env
        self.cache: dict[str, Judgement] = {}
        self.calls = 0
        self.hits = 0

    def _argv(self, command: str) -> list[str]:
        if self.stdin:
            return list(self.argv)
        if any("{}" in a for a in self.argv):
            return [a.replace("{}", command) for a in self.argv]
        return self.argv + [command]

    def judge(self, command: str) -> Judgement:
        cached = self.cache.get(command)
        if cached is not None:
            self.hits += 1
            return cached
        self.calls += 1
        try:
            proc = subprocess.run(
                self._argv(command),
                input=command.encode("utf-8", "surrogateescape") if self.stdin else None,
                stdin=None if self.stdin else subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout,
                env=self.env,
                shell=False,
                check=False,
            )
        except FileNotFoundError:
            raise ConfigError(f"classifier program {self.argv[0]!r} was not found; fix --classifier-cmd") from None
        except PermissionError:
            raise ConfigError(f"classifier program {self.argv[0]!r} is not executable; fix --classifier-cmd") from None
        except subprocess.TimeoutExpired:
            raise ClassifierError(
                f"classifier {self.describe()} took longer than {self.timeout}s on {command!r}"
            ) from None
        judgement = self._verdict(proc, command)
        if len(self.cache) < MAX_CACHE:
            self.cache[command] = judgement
        return judgement

    def _verdict(self, proc: subprocess.CompletedProcess, command: str) -> Judgement:
        status = proc.returncode
        if status < 0 or status in (126, 127):
            tail = proc.stderr.decode("utf-8", "replace")[-500:]
            raise ClassifierError(f"classifier {self.describe()} failed (status {status}) on {command!r}: {tail}")
        if self.mode == "exit":
            return Judgement(status == 0, status, None)
        try:
            value: Any = json.loads(proc.stdout.decode("utf-8", "replace"))
            for key in self.field.split("."):
                value = value[key]
        except (ValueError, KeyError, TypeError, IndexError):
            out = proc.stdout.decode("utf-8", "replace")[:300]
            raise ClassifierError(
                f"classifier {self.describe()} printed no JSON field {self.field!r} for {command!r} (stdout: {out!r})"
            ) from None
        if isinstance(value, bool):
            return Judgement(value, value, None)
        if isinstance(value, str):
            return Judgement(value.lower() in self.allow_values, value, None)
        raise ClassifierError(f"classifier field {self.field!r} is {value!r}; expected a bool or a string")

    def describe(self) -> str:
        return shlex.join(self.argv)

    def source_file(self) -> str | None:
        return None


def adapt(
    classifier: Any,
    allowed: Callable[[Any], bool] | None = None,
    rank: Callable[[Any], Any] | None = None,
) -> Classifier:
    """Turn what the user passed (a function, or a :class:`Classifier`) into a :class:`Classifier`."""
    if isinstance(classifier, Classifier) and not inspect.isroutine(classifier):
        return classifier
    return CallableClassifier(classifier, allowed=allowed, rank=rank)


def load_object(spec: str, what: str = "classifier") -> Any:
    """Import ``pkg.mod:attr`` or ``path/to/file.py:attr`` (attr may be dotted)."""
    if ":" not in spec:
        raise ConfigError(f"{what} {spec!r} must look like 'package.module:function' or 'file.py:function'")
    mod_part, _, attr = spec.rpartition(":")
    try:
        if mod_part.endswith(".py") or os.sep in mod_part or "/" in mod_part:
            module = _import_path(mod_part)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(mod_part)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is the user's to fix
        raise ConfigError(
            f"cannot import {what} module {mod_part!r} ({type(exc).__name__}: {exc}); fix --{what}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{what} {spec!r}: {mod_part!r} has no attribute {attr!r}; fix --{what}") from None
    return obj


def _import_path(path: str) -> Any:
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise ConfigError(f"classifier file {path} does not exist; fix --classifier")
    name = USER_MODULE_PREFIX + os.path.splitext(os.path.basename(full))[0]
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) == full:
        return existing
    folder = os.path.dirname(full)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot import {path}; pass a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def _source_file(obj: Any) -> str | None:
    target = getattr(obj, "__func__", obj)
    if not (inspect.isfunction(target) or inspect.ismethod(target) or inspect.isclass(target)):
        target = type(target)
    try:
        path = inspect.getsourcefile(target)
    except TypeError:
        return None
    return os.path.abspath(path) if path else None
