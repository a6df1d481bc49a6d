"""``assay fuzz PATH[::NAME]... [CORPUS_DIR]...``: targets named on the command line.

A file (or a folder of ``*.py`` files) given on the command line is imported as :mod:`assay.harness.discovery` imports
target files; its targets are its ``@assay.target`` functions, else its atheris
entry point (``atheris.Setup`` callback or ``TestOneInput``), else its Hypothesis
``@given`` tests.  ``file.py::name`` picks one function: a target, a ``@given``
test, or any function taking ``bytes``.  Names default to ``file:function``, so
two harnesses' ``TestOneInput`` never clash.  Other folders on the command line are
libFuzzer corpus folders: their files are seeds, and the first one receives the
run's corpus, named by SHA-1 as libFuzzer names them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from assay.core.config import Project
from assay.core.errors import ConfigError, TargetError
from assay.core.target import Registry, Target
from assay.harness.define import make_target
from assay.harness.discovery import import_file, make_importable, targets_in
from assay.store.metadata import showable_harness


def split_positionals(words: list[str]) -> tuple[list[str], list[Path]]:
    """(target specs, corpus folders) from the positional words of ``assay fuzz``."""
    specs, folders = [], []
    for word in words:
        path = Path(word.partition("::")[0])
        if path.is_dir() and "::" not in word and any(path.glob("*.py")):
            specs.append(word)  # a folder of harness files, never a corpus to write into
        elif path.is_dir() and "::" not in word:
            folders.append(path.resolve())
        elif path.suffix == ".py":
            if not path.is_file():
                raise TargetError(f"harness file {path} does not exist")
            specs.append(word)
        else:
            raise ConfigError(
                f"{word!r} is neither a harness file (file.py or file.py::function) nor a corpus "
                "folder; targets from [tool.assay] are selected with --fuzz-target NAME"
            )
    return specs, folders


def load_path_targets(project: Project, specs: list[str]) -> Registry:
    """The targets of the files (and ``::name`` picks) in ``specs``."""
    make_importable(project.root)
    registry = Registry()
    for spec in specs:
        text, _, name = spec.partition("::")
        path = Path(text).resolve()
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_")) if path.is_dir() else [path]
        for file in files:
            module = import_file(file, project.root)
            for tgt in _pick(module, name, file) if name else _all(module, file):
                registry.add(tgt)
    return registry


def _all(module, path: Path) -> list[Target]:
    found = targets_in(module)
    if not found:
        found = [
            _given_target(module, v) for k, v in sorted(vars(module).items()) if k.startswith("test") and _is_given(v)
        ]
    if not found:
        raise TargetError(
            f"{path} defines no fuzz target: no @assay.target function, no TestOneInput(data) or atheris.Setup() "
            f"callback, no Hypothesis @given test; pick a function with {path.name}::FUNCTION"
        )
    return found


def _pick(module, name: str, path: Path) -> list[Target]:
    if "::" in name:
        raise TargetError(f"{path}::{name}: only module-level functions can be fuzzed, not methods of a test class")
    obj = getattr(module, name, None)
    if obj is None:
        defined = (
            ", ".join(sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))) or "none"
        )
        raise TargetError(f"{path} has no function {name!r} (its functions: {defined})")
    tgt = getattr(obj, "assay_target", None)
    if isinstance(tgt, Target):
        found = [tgt]
    elif _is_given(obj):
        found = [_given_target(module, obj)]
    elif callable(obj):
        found = [make_target(obj, name=f"{_stem(module)}:{name}")]
    else:
        raise TargetError(f"{path}::{name} is not a function")
    return _with_imports(module, found)


def _given_target(module, test) -> Target:
    from assay.harness.given import fuzz_function

    return _with_imports(module, [make_target(fuzz_function(test), name=f"{_stem(module)}:{test.__name__}")])[0]


def _is_given(obj: object) -> bool:
    from assay.harness.given import is_given_test

    return is_given_test(obj)


def _with_imports(module, found: list[Target]) -> list[Target]:
    imports: dict[str, str] = getattr(module, "__assay_imports__", {})
    for tgt in found:
        if not tgt.sources and not tgt.implied_sources:
            tgt.implied_sources, tgt.scope_reasons = tuple(imports), dict(imports)
    return found


def _stem(module) -> str:
    return module.__name__.rpartition(".")[2]


def with_overrides(
    targets: list[Target],
    *,
    max_len: int | None,
    timeout: float | None,
    rss_limit_mb: int | None,
    folders: list[Path],
    sources: Sequence[str] = (),
) -> list[Target]:
    """``targets`` with command-line settings applied and corpus folders' files added to their seeds."""
    if folders and len(targets) != 1:
        raise ConfigError(
            f"corpus folders belong to one target, and {len(targets)} are selected; "
            "pick one with --fuzz-target NAME or file.py::function"
        )
    out = []
    for tgt in targets:
        changes: dict = {}
        if max_len is not None:
            changes["max_len"] = max_len
        if timeout is not None:
            changes["timeout"] = float(timeout)
        if rss_limit_mb is not None:
            changes["rss_limit_mb"] = rss_limit_mb
        if sources:
            changes["sources"] = tuple(sources)
            changes["scope_reasons"] = dict.fromkeys(sources, "--sources")
        limit = changes.get("max_len", tgt.max_len)
        seeds = list(tgt.seeds) + _folder_inputs(folders)
        changes["seeds"] = tuple(dict.fromkeys(s[:limit] for s in seeds))  # libFuzzer truncates to -max_len too
        out.append(dataclasses.replace(tgt, **changes))
    return out


def _folder_inputs(folders: list[Path]) -> list[bytes]:
    inputs = []
    for folder in folders:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.is_file() and not entry.name.startswith("."):
                inputs.append(Path(entry.path).read_bytes())
    return inputs


def export_corpus(entries: list[bytes], folder: Path) -> int:
    """Write each entry missing from ``folder`` as ``<sha1>`` (libFuzzer's naming); how many were new."""
    from assay.store.atomic import write_bytes

    written = 0
    for data in entries:
        path = folder / hashlib.sha1(data).hexdigest()
        if not path.exists():
            write_bytes(path, data)
            written += 1
    return written


def registry_for(project: Project, harnesses: Sequence[str | os.PathLike[str]] = ()) -> Registry:
    """``[tool.assay]``'s targets, plus the targets of ``harnesses`` that are not configured there.

    ``harnesses`` are harness files the user named (``assay replay ARTIFACT --harness
    FILE``, ``assay promote --harness FILE``) or that the project's own committed
    regression test names (``assay.replay(..., harness=...)``).  They are never taken
    from an artifact's ``metadata.json``: artifacts travel between machines and are
    data, and importing a file runs it.  A configured target always wins over a
    harness file's target of the same name.
    """
    from assay.harness.discovery import load_targets

    files = [Path(h) for h in harnesses]
    for file in files:
        if not file.is_file():
            raise TargetError(f"harness file {file} does not exist (--harness names a .py file defining the target)")
    try:
        registry = load_targets(project)
    except TargetError:
        if not files:
            raise
        registry = Registry()
    for file in files:
        for tgt in load_path_targets(project, [str(file)]).all():
            if tgt.name not in registry:
                registry.add(tgt)
                registry.harness_files[tgt.name] = str(file.resolve())
    return registry


def harness_hint(recorded: object, cwd: Path | None = None) -> str:
    """The harness file an artifact recorded, ready to paste after ``--harness`` (``FILE`` when unsafe to show).

    Only a suggestion for the user to check: it is printed, never opened.
    """
    recorded = showable_harness(recorded)
    if recorded is None:
        return "FILE"
    path = Path(recorded)
    try:
        shown = str(path.relative_to((cwd or Path.cwd()).resolve())) if path.is_absolute() else recorded
    except ValueError:
        shown = recorded
    return shlex.quote(shown)


def unregistered_message(name: str, recorded: object, command: str) -> str:
    """Why a finding's target cannot be loaded, and the command that loads it: ``command --harness FILE``."""
    text = f"no target named {name!r} in this project's registry ([tool.assay] and its fuzz/ folder)"
    if recorded:
        hint = harness_hint(recorded)
        text += (
            f"; the artifact says it came from the harness file {hint}, and a path from an artifact's metadata "
            f"is never imported (artifacts are data); if you trust that file, name it: "
        )
    else:
        text += "; if it is defined in a harness file given on the command line, name that file: "
        hint = "FILE"
    return f"{text}{command} --harness {hint}"
