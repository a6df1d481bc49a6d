"""The native backend's side of ``assay fuzz``, ``assay targets`` and ``assay replay``.

``assay.cli.main`` stays the one place that turns errors into exit codes; these helpers
select native targets, run them, and print their part of the summary.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import Any

from assay.core.config import Project
from assay.core.errors import NativeError, TargetError
from assay.core.native_target import NativeTarget
from assay.native.campaign import MAX_RESTARTS, NO_SCHEDULE, NativeOptions, NativeOutcome, run_native_campaign
from assay.native.discovery import has_python_targets, load_native_targets

#: Seconds between progress lines when stderr is not a terminal (CI logs).
LOG_EVERY = 10.0
#: Settings ``assay targets`` prints for a native target.
LISTED = (
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


def split_selection(project: Project, names: list[str], backend: str) -> tuple[list[NativeTarget], list[str] | None]:
    """(native targets to run, Python target names to run or None for none) for ``--fuzz-backend``.

    With ``native`` every name must be a native target.  With ``all`` a name may be
    either kind; without names every target of both kinds runs.
    """
    natives = load_native_targets(project)
    if backend == "native":
        if not natives:
            raise NativeError(
                "--fuzz-backend native: the project declares no native target; add a [tool.assay.native.<name>] "
                'table with harness = "path/to/harness.c"'
            )
        unknown = [n for n in names if n not in natives]
        if unknown:
            raise TargetError(f"no native target named {', '.join(map(repr, unknown))} (native: {', '.join(natives)})")
        return [natives[n] for n in dict.fromkeys(names)] if names else list(natives.values()), None
    if names:
        chosen = [natives[n] for n in dict.fromkeys(names) if n in natives]
        rest = [n for n in names if n not in natives]
        return chosen, (rest or None)
    return list(natives.values()), ([] if has_python_targets(project) or not natives else None)


def default_backend(project: Project, names: list[str]) -> tuple[str, str | None]:
    """The backend of ``assay fuzz`` without ``--fuzz-backend``, and a note when native targets sit out.

    Python when the project has Python targets (a ``[tool.assay] targets`` location that
    exists, or a table such as ``[tool.assay.http]``); native when it has native targets
    only, so that such a project needs no ``fuzz/`` folder and no flag; with
    ``--fuzz-target`` names, whichever kind each name is.
    """
    from assay.harness.tables import TABLE_LOADERS

    if names:
        natives = load_native_targets(project)
        return ("all" if any(n in natives for n in names) else "python"), None
    if has_python_targets(project) or any(project.raw.get(table) for table in TABLE_LOADERS):
        note = None
        if project.native:
            note = (
                f"native target(s) {', '.join(project.native)} not run; add --fuzz-backend all "
                "(or native, or --fuzz-target NAME) to run them"
            )
        return "python", note
    return ("native" if load_native_targets(project) else "python"), None


def run_native(
    project: Project,
    targets: list[NativeTarget],
    args: Any,
    *,
    master_seed: int,
    budget: float | None,
    corpus_root: str,
    artifact_root: str,
) -> list[NativeOutcome]:
    """Run the selected native targets with the ``--fuzz-*`` flags in ``args``."""
    options = NativeOptions(
        corpus_root=corpus_root,
        artifact_root=artifact_root,
        project_root=str(project.root),
        max_cases=args.fuzz_cases,
        budget=budget,
        replay_only=args.fuzz_replay_only,
        dictionary=project.dictionary,
        progress=NativeProgress(sys.stderr),
    )
    try:
        return run_native_campaign(targets, options, master_seed=master_seed)
    finally:
        options.progress.finish()  # type: ignore[union-attr]  # the NativeProgress above


class NativeProgress:
    """libFuzzer's status line: live on a terminal, one line every :data:`LOG_EVERY` seconds otherwise."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.last = 0.0
        self.drawn = False

    def __call__(self, target: str, line: str) -> None:
        now = time.monotonic()
        if not self.live and now - self.last < LOG_EVERY:
            return
        self.last = now
        text = f"{target}: {line}"
        if self.live:
            width = shutil.get_terminal_size().columns
            self.stream.write("\r" + text[: width - 1].ljust(width - 1))
            self.drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def native_summary(outcomes: list[NativeOutcome]) -> str:
    """Lines the human summary adds for native targets: the build and the missing schedule digest."""
    lines = []
    for o in outcomes:
        b = o.build
        if b:
            how = "reused" if b.get("reused") else f"built in {b.get('build_seconds', 0):.1f}s"
            lines.append(f"  {o.name}: native build {b['identity'][:16]} ({how}), manifest {b['manifest']}")
        lines.append(
            f"  {o.name}: libFuzzer -seed={o.libfuzzer_seed}; restarted {o.restarts} time(s) after a new bug "
            f"(at most {MAX_RESTARTS}) and {o.refound_restarts} time(s) after a known bug was found again"
        )
        if o.stopped_early:
            lines.append(f"  {o.name}: STOPPED EARLY: {o.stopped_early}")
        if o.error:
            lines.append(f"  {o.name}: INFRASTRUCTURE FAILURE: {o.error.splitlines()[0]}")
    if outcomes:
        lines.append(f"  (native: {NO_SCHEDULE})")
    return "\n".join(lines)


def listing(project: Project) -> list[dict[str, Any]]:
    """Settings of every native target, for ``assay targets``, with ``warnings`` about declared paths that are missing."""
    out = []
    for t in load_native_targets(project).values():
        missing = t.missing_paths(project.root)
        warnings = [f"{m} does not exist under {project.root}; `assay fuzz` will refuse this target" for m in missing]
        out.append({**t.settings(), "warnings": warnings})
    return out


def is_native(project: Project, name: str, artifact: Path | None = None) -> bool:
    """Whether ``assay replay NAME`` means a native target (by its artifact, else by name)."""
    if artifact is not None and artifact.is_dir() and (artifact / "metadata.json").is_file():
        from assay.store.artifacts import load_artifact

        return load_artifact(artifact).metadata.get("backend") == "native"
    return name in project.native or (name in load_native_targets(project))
