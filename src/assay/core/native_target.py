"""Native target declarations: ``[tool.assay.native.<name>]`` and :func:`native_target`.

A native target is a C/C++ libFuzzer harness (a file defining
``LLVMFuzzerTestOneInput``) plus what it links.  Paths are relative to the project
root.  Only ``harness`` is required::

    [tool.assay.native.llhttp]
    harness = "fuzz/llhttp_harness.c"
    sources = ["vendor/llhttp/src/api.c", "vendor/llhttp/src/http.c", "vendor/llhttp/src/llhttp.c"]
    include_dirs = ["vendor/llhttp/include"]
    seeds = ["fuzz/seeds/http"]          # files or folders of seed inputs
    dictionary = "fuzz/http.dict"        # a libFuzzer dictionary file, or a list of tokens
    max_len = 4096
    timeout = 2                          # whole seconds per input
    rss_limit_mb = 2048
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import NativeError

#: Every key a ``[tool.assay.native.<name>]`` table accepts.
KEYS = (
    "harness",
    "sources",
    "include_dirs",
    "defines",
    "cflags",
    "seeds",
    "dictionary",
    "max_len",
    "timeout",
    "rss_limit_mb",
    "embed_python",
)
#: Default cap on input size (libFuzzer's ``-max_len``), as for Python targets.
DEFAULT_MAX_LEN = 4096
#: Default per-input time limit in whole seconds (libFuzzer's ``-timeout``).
DEFAULT_TIMEOUT = 2
#: Default memory limit in MiB (libFuzzer's ``-rss_limit_mb``; also the single-malloc limit).
DEFAULT_RSS_LIMIT_MB = 2048
#: Suffixes that make a harness or source C++ (built with clang++).
CXX_SUFFIXES = (".cc", ".cpp", ".cxx", ".C")


@dataclass(frozen=True)
class NativeTarget:
    """A declared native harness.  Paths are as declared; :meth:`resolve` makes them absolute."""

    name: str
    harness: str
    sources: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    cflags: tuple[str, ...] = ()
    seeds: tuple[str, ...] = ()
    dictionary: str | tuple[str, ...] | None = None
    max_len: int = DEFAULT_MAX_LEN
    timeout: int = DEFAULT_TIMEOUT
    rss_limit_mb: int = DEFAULT_RSS_LIMIT_MB
    embed_python: bool = False
    defined_in: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def cxx(self) -> bool:
        return any(p.endswith(CXX_SUFFIXES) for p in (self.harness, *self.sources))

    def path(self, root: str | os.PathLike[str], entry: str) -> Path:
        """``entry`` resolved against the project ``root``."""
        p = Path(entry)
        return (p if p.is_absolute() else Path(root) / p).resolve()

    def missing_paths(self, root: str | os.PathLike[str]) -> list[str]:
        """``"key: entry"`` for every declared path that does not exist under ``root``."""
        missing = []
        for key, entries in (
            ("harness", (self.harness,)),
            ("sources", self.sources),
            ("include_dirs", self.include_dirs),
            ("seeds", self.seeds),
            ("dictionary", (self.dictionary,) if isinstance(self.dictionary, str) else ()),
        ):
            for entry in entries:
                if not self.path(root, entry).exists():
                    missing.append(f"{key}: {entry}")
        return missing

    def check_paths(self, root: str | os.PathLike[str]) -> None:
        """Raise :class:`NativeError` naming every declared path that does not exist."""
        missing = self.missing_paths(root)
        if missing:
            raise NativeError(
                f"native target {self.name!r}: {len(missing)} declared path(s) do not exist under {root}: "
                f"{'; '.join(missing)}; fix [tool.assay.native.{self.name}] (paths are relative to the project)"
            )

    def seed_inputs(self, root: str | os.PathLike[str]) -> list[bytes]:
        """The bytes of every seed file (folders give their files, sorted); each within ``max_len``."""
        out: list[bytes] = []
        for entry in self.seeds:
            p = self.path(root, entry)
            files = sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p]
            for f in files:
                data = f.read_bytes()
                if len(data) > self.max_len:
                    raise NativeError(
                        f"native target {self.name!r}: seed {f} has {len(data)} bytes, over max_len={self.max_len}"
                    )
                out.append(data)
        return out

    def settings(self) -> dict[str, Any]:
        """The target's settings as plain data (for ``assay targets`` and reports)."""
        return {
            "name": self.name,
            "backend": "native",
            "harness": self.harness,
            "sources": list(self.sources),
            "include_dirs": list(self.include_dirs),
            "defines": list(self.defines),
            "cflags": list(self.cflags),
            "seeds": list(self.seeds),
            "dictionary": self.dictionary
            if isinstance(self.dictionary, str) or self.dictionary is None
            else list(self.dictionary),
            "max_len": self.max_len,
            "timeout": self.timeout,
            "rss_limit_mb": self.rss_limit_mb,
            "embed_python": self.embed_python,
            "defined_in": self.defined_in,
        }


def _strings(name: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise NativeError(f"native target {name!r}: {key} must be a list of strings, not {value!r}")
    return tuple(value)


def _defines(name: str, value: Any) -> tuple[str, ...]:
    """``defines`` as macro definitions: ``X=8`` and ``-DX=8`` (the compiler's spelling) are the same entry."""
    out = []
    for entry in _strings(name, "defines", value):
        macro = entry[2:] if entry.startswith("-D") else entry
        if not macro or macro.startswith(("-", "=")) or any(c.isspace() for c in macro.split("=", 1)[0]):
            raise NativeError(
                f"native target {name!r}: defines entry {entry!r} is not a macro definition; "
                'write NAME or NAME=VALUE (a leading -D is accepted), e.g. defines = ["WIDTH=8"]'
            )
        out.append(macro)
    return tuple(out)


def _whole(name: str, key: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise NativeError(f"native target {name!r}: {key} must be a whole number of at least {minimum}, not {value!r}")
    return value


def native_target(
    name: str,
    *,
    harness: str,
    sources: Any = (),
    include_dirs: Any = (),
    defines: Any = (),
    cflags: Any = (),
    seeds: Any = (),
    dictionary: Any = None,
    max_len: int = DEFAULT_MAX_LEN,
    timeout: int = DEFAULT_TIMEOUT,
    rss_limit_mb: int = DEFAULT_RSS_LIMIT_MB,
    embed_python: bool = False,
    defined_in: str = "",
) -> NativeTarget:
    """Declare a native target (validated); the Python twin of a ``[tool.assay.native.<name>]`` table.

    Put the returned object at module level in a file ``[tool.assay] targets`` names and
    ``assay targets`` / ``assay fuzz --fuzz-backend native`` find it.  Paths are
    relative to the project root.
    """
    if (
        not isinstance(name, str)
        or not name
        or name.startswith(".")
        or not all(c.isalnum() or c in "-_." for c in name)
    ):
        raise NativeError(f"native target name {name!r} may hold only letters, digits, '-', '_' and '.'")
    if not isinstance(harness, str) or not harness:
        raise NativeError(
            f"native target {name!r}: harness must be the path of a C/C++ file defining LLVMFuzzerTestOneInput"
        )
    if dictionary is not None and not isinstance(dictionary, str):
        dictionary = _strings(name, "dictionary", dictionary)
    if not isinstance(embed_python, bool):
        raise NativeError(f"native target {name!r}: embed_python must be true or false, not {embed_python!r}")
    return NativeTarget(
        name=name,
        harness=harness,
        sources=_strings(name, "sources", sources),
        include_dirs=_strings(name, "include_dirs", include_dirs),
        defines=_defines(name, defines),
        cflags=_strings(name, "cflags", cflags),
        seeds=_strings(name, "seeds", seeds),
        dictionary=dictionary,
        max_len=_whole(name, "max_len", max_len, 1),
        timeout=_whole(name, "timeout", timeout, 1),
        rss_limit_mb=_whole(name, "rss_limit_mb", rss_limit_mb, 1),
        embed_python=embed_python,
        defined_in=defined_in,
    )


def parse_native_table(table: Any, where: str) -> dict[str, NativeTarget]:
    """The targets of a ``[tool.assay.native]`` table; unknown keys are refused."""
    if not isinstance(table, dict):
        raise NativeError(f"{where}: [tool.assay.native] must be a table of [tool.assay.native.<name>] tables")
    targets: dict[str, NativeTarget] = {}
    for name, body in sorted(table.items()):
        if not isinstance(body, dict):
            raise NativeError(f'{where}: [tool.assay.native.{name}] must be a table (with at least harness = "...")')
        unknown = sorted(set(body) - set(KEYS))
        if unknown:
            raise NativeError(
                f"{where}: unknown key(s) {', '.join(unknown)} in [tool.assay.native.{name}]; known keys: {', '.join(KEYS)}"
            )
        if "harness" not in body:
            raise NativeError(f'{where}: [tool.assay.native.{name}] lacks harness = "path/to/harness.c"')
        targets[name] = native_target(name, defined_in=where, **body)
    return targets
