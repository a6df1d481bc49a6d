"""Project configuration: ``[tool.assay]`` in ``pyproject.toml``."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError
from assay.core.native_target import NativeTarget, parse_native_table

#: The ``[tool.assay]`` settings that name a place assay writes to; each must stay inside the project.
PATH_KEYS = ("corpus", "artifacts", "regressions", "staging", "quarantine")
#: The command-line flag that overrides a path setting, where there is one.
PATH_FLAGS = {"corpus": "--fuzz-corpus", "artifacts": "--fuzz-artifacts"}

#: Every key ``[tool.assay]`` accepts, with its default.
DEFAULTS: dict[str, Any] = {
    "targets": ["fuzz"],
    "corpus": ".assay/corpus",
    "artifacts": ".assay/artifacts",
    "dictionary": [],
    "regressions": "tests/fuzz_regressions",
    "staging": ".assay/staging",
    "quarantine": ".assay/quarantine.jsonl",
    "mutate": [],
    "native": {},
    "http": {},  # [tool.assay.http.<name>] tables: HTTP targets (assay.http.config)
    "compose": {},  # [tool.assay.compose]: defaults of ``assay compose`` (``allow = ["subprocess"]``)
    "mutant": {},  # [tool.assay.mutant]: settings of ``assay mutant`` (``exclude = [...]``, assay.mutant.discover)
}


@dataclass
class Project:
    """A project's assay settings, with paths made absolute."""

    root: Path
    targets: list[str]
    corpus: Path
    artifacts: Path
    dictionary: list[bytes]
    regressions: Path
    staging: Path
    quarantine: Path
    raw: dict[str, Any] = field(default_factory=dict)
    #: Native (libFuzzer) targets declared in ``[tool.assay.native.<name>]``, by name.
    native: dict[str, NativeTarget] = field(default_factory=dict)


def find_root(start: str | os.PathLike[str]) -> Path:
    """The project folder for a command run in ``start`` without ``--project``.

    Like pytest's rootdir: ``start`` itself when it holds a ``pyproject.toml`` or a
    ``fuzz/`` folder; else the nearest folder above with a ``pyproject.toml`` that has
    ``[tool.assay]``, else the nearest with any ``pyproject.toml``, else ``start``.
    """
    start = Path(start).resolve()
    if (start / "pyproject.toml").is_file() or (start / "fuzz").is_dir():
        return start
    return _nearest_project(start.parents) or start


def project_holding(path: str | os.PathLike[str]) -> Path | None:
    """The project folder that ``path`` (an artifact, a corpus entry) lies in, or None.

    The nearest folder at or above it whose ``pyproject.toml`` has ``[tool.assay]``, else
    the nearest with any ``pyproject.toml``.  Decided by where the path is, never by what
    a file there says: it is the folder a user would ``cd`` into to run the command.
    """
    start = Path(path).resolve()
    return _nearest_project([start, *start.parents] if start.is_dir() else start.parents)


def _nearest_project(folders: Iterable[Path]) -> Path | None:
    """The first of ``folders`` whose ``pyproject.toml`` has ``[tool.assay]``, else the first with any."""
    nearest = None
    for folder in folders:
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        try:
            text = pyproject.read_text("utf-8", errors="replace")
        except OSError:
            continue
        if "[tool.assay]" in text or "[tool.assay." in text:
            return folder
        nearest = nearest or folder
    return nearest


def _check_inside(base: Path, key: str, value: str, pyproject: Path) -> None:
    """Refuse a path setting that resolves (``..``, an absolute path, a symbolic link) outside ``base``."""
    real_base = os.path.realpath(base)
    real = os.path.realpath(base / value)
    if real == real_base or real.startswith(real_base.rstrip(os.sep) + os.sep):
        return
    flag = PATH_FLAGS.get(key)
    instead = f"; to write there on purpose, pass {flag} {value} on the command line" if flag else ""
    raise ConfigError(
        f"{pyproject}: [tool.assay] {key} = {value!r} resolves to {real}, outside the project {real_base}; "
        f"name a folder inside the project{instead}"
    )


def load_project(root: str | os.PathLike[str] | None = None, given: Iterable[str] = ()) -> Project:
    """Read ``[tool.assay]`` from ``root/pyproject.toml`` (all defaults if absent).

    Without ``root``, the project is found from the current folder upwards, see :func:`find_root`.
    A path setting (:data:`PATH_KEYS`) that resolves outside the project folder is refused
    (a cloned repository must not make assay write to ``/etc``), unless its key is in
    ``given``: the command line names that place instead, so the setting is not used.
    """
    base = Path(root).resolve() if root else find_root(os.getcwd())
    if base.is_file():
        raise ConfigError(
            f"--project {root}: is a file, not a folder; pass the folder that holds pyproject.toml ({base.parent})"
        )
    if not base.is_dir():
        raise ConfigError(f"project directory {base} does not exist; pass an existing folder to --project")
    pyproject = base / "pyproject.toml"
    section: dict[str, Any] = {}
    if pyproject.exists():
        try:
            doc = tomllib.loads(pyproject.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{pyproject} is not valid TOML ({exc}); fix the file and run again") from None
        tool = doc.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{pyproject}: 'tool' must be a table ([tool.*]), not {tool!r}")
        section = tool.get("assay", {})
        if not isinstance(section, dict):
            raise ConfigError(f"{pyproject}: [tool.assay] must be a table")
    unknown = sorted(set(section) - set(DEFAULTS))
    if unknown:
        raise ConfigError(
            f"{pyproject}: unknown key(s) {', '.join(unknown)} in [tool.assay]; known keys: {', '.join(DEFAULTS)}"
        )
    merged = {**DEFAULTS, **section}
    for key in ("targets", "dictionary", "mutate"):
        value = merged[key]
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{pyproject}: [tool.assay] {key} must be a list of strings, not {value!r}")
        merged[key] = value
    for key in PATH_KEYS:
        if not isinstance(merged[key], str) or not merged[key]:
            raise ConfigError(f"{pyproject}: [tool.assay] {key} must be a non-empty path string")
        if key in section and key not in given:
            _check_inside(base, key, merged[key], pyproject)
    native = parse_native_table(merged["native"], str(pyproject))
    return Project(
        root=base,
        targets=merged["targets"],
        corpus=base / merged["corpus"],
        artifacts=base / merged["artifacts"],
        dictionary=[t.encode("utf-8") for t in merged["dictionary"]],
        regressions=base / merged["regressions"],
        staging=base / merged["staging"],
        quarantine=base / merged["quarantine"],
        raw=section,
        native=native,
    )
