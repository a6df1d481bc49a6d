"""``assay replay ARTIFACT | TARGET INPUT``: rerun one finding and print its verdict."""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.cli.argtypes import add_project_arg
from assay.core.errors import ConfigError, TargetError

if TYPE_CHECKING:
    from assay.mutant.replay import MutantReplay


def register(sub: Any) -> argparse.ArgumentParser:
    """Add ``assay replay`` to the subcommands."""
    replay = sub.add_parser(
        "replay",
        help="rerun one finding (an artifact folder) or input file and print the verdict",
        usage="assay replay ARTIFACT | TARGET INPUT [--harness FILE] [--project DIR] [--isolated]",
    )
    add_project_arg(replay)
    replay.add_argument(
        "target",
        metavar="ARTIFACT|TARGET",
        help="an artifact folder (its metadata names the target), or a target name followed by INPUT",
    )
    replay.add_argument("input", nargs="?", help="input file, or artifact folder, for the named target")
    replay.add_argument(
        "--harness",
        metavar="FILE",
        action="append",
        default=[],
        help="harness file defining the target (one given on the command line, as in assay fuzz FILE, "
        "not in [tool.assay]); an artifact's metadata never names a file to import",
    )
    replay.add_argument("--isolated", action="store_true", help="run in a forked child (for crashes and hangs)")
    replay.set_defaults(func=cmd_replay)
    return replay


def cmd_replay(args: argparse.Namespace) -> int:
    from assay.core.config import load_project
    from assay.core.target import Registry
    from assay.engine.execute import recorded_room, run_input
    from assay.engine.isolate import run_isolated
    from assay.harness.paths import registry_for, unregistered_message
    from assay.store.artifacts import load_artifact

    if args.project is not None:
        load_project(args.project)  # a bad --project is the first thing said
    if args.input is None:  # assay replay ARTIFACT: the metadata names the target
        path = Path(args.target)
        if not (path.is_dir() and (path / "metadata.json").is_file()):
            raise ConfigError(
                f"{path} is not an artifact folder (holding input and metadata.json); "
                "to replay an input file, name its target: assay replay TARGET INPUT"
            )
    else:
        path = Path(args.input)
    project = load_project(args.project or _project_root(path))
    artifact = load_artifact(path) if path.is_dir() else None
    name = artifact.target if args.input is None else args.target  # type: ignore[union-attr]  # an artifact folder, checked above
    from assay.cli.native import is_native

    if is_native(project, name, path):
        return _replay_native(project, name, path)
    # Targets come from the project's registry by name, or from harness files the user named:
    # never from a path in the artifact's metadata (artifacts are data; importing a file runs it).
    recorded = artifact.metadata.get("harness") if artifact is not None else None
    try:
        registry = registry_for(project, args.harness)
    except TargetError:
        if args.harness or not recorded:
            raise
        registry = Registry()  # no configured targets: say how to name the harness file below
    if name not in registry:
        words = [args.target] if args.input is None else [args.target, args.input]
        words += ["--project", args.project] if args.project else []
        raise TargetError(unregistered_message(name, recorded, shlex.join(["assay", "replay", *words])))
    target = registry.get(name)
    isolated = args.isolated
    if artifact is not None:
        if "mutant" in artifact.metadata:  # a differential finding: both sides, not the original alone
            from assay.mutant.replay import replay_mutant_artifact

            return _print_mutant_replay(replay_mutant_artifact(target, artifact, project.root))
        data = artifact.input
        isolated = isolated or artifact.verdict.oracle in (
            "safety",
            "crash",
            "wedge",
        )  # never run these in this process
        from assay.findings.explain import finding_lines

        print("finding:")
        for line in finding_lines(artifact.metadata, data, path, project_root=project.root):
            print(f"  {line}")
    elif path.is_file():
        data = path.read_bytes()
    else:
        raise ConfigError(f"{path} is neither an input file nor an artifact folder")
    room = recorded_room(artifact.verdict) if artifact is not None else None
    if isolated:
        verdict = run_isolated(target, data, room=room).verdict
    else:
        verdict = run_input(target, data, timeout=target.timeout, room=room)
    print(f"input: {len(data)} bytes {data[:200]!r}{'...' if len(data) > 200 else ''}")
    if verdict is None:
        print("verdict: pass (no oracle fired)")
        return 0
    print(f"verdict: {verdict.oracle}\nsignature: {verdict.signature}")
    if verdict.detail:
        print(f"detail: {verdict.detail}")
    example = verdict.data.get("example") if isinstance(verdict.data, dict) else None
    if example:
        from assay.findings.explain import example_call

        print(f"falsifying example: {example_call({'verdict': verdict.to_json()})}")
    if verdict.exception and verdict.exception.traceback:
        print(verdict.exception.traceback.rstrip())
    return 1


def _project_root(path: Path) -> Path:
    """The project for ``assay replay PATH`` without ``--project``: the one ``path`` lies in
    (where it was fuzzed), so a printed command works from any folder; the current folder's
    when that is a project holding ``path`` at least as closely (one with only a ``fuzz/``
    folder has no pyproject.toml to be found by).  Decided by the path's location, never by
    its metadata."""
    from assay.core.config import find_root, project_holding

    here = find_root(os.getcwd())
    there = project_holding(path)
    if there is None:
        return here
    is_project = (here / "pyproject.toml").is_file() or (here / "fuzz").is_dir()
    if is_project and path.resolve().is_relative_to(here) and here.is_relative_to(there):
        return here
    return there


def _print_mutant_replay(replayed: MutantReplay) -> int:
    """Show a differential finding replayed on both sides; 1 while they still differ."""
    data = replayed.input
    print(f"mutant: {replayed.mutant_id}\n{replayed.diff.rstrip()}")
    print(f"input: {len(data)} bytes {data[:200]!r}{'...' if len(data) > 200 else ''}")
    if replayed.difference is None:
        print("verdict: the original and the mutant agree on this input now (the difference is gone)")
        return 0
    print(f"verdict: differential\n{replayed.difference}")
    return 1


def _replay_native(project, name: str, path: Path) -> int:
    from assay.native.replay import replay_native
    from assay.store.artifacts import load_artifact

    if path.is_dir():
        art = load_artifact(path)
        data, name = art.input, art.target
    elif path.is_file():
        data = path.read_bytes()
    else:
        raise ConfigError(f"{path} is neither an input file nor an artifact folder")
    verdict, report = replay_native(project, name, data)
    print(f"input: {len(data)} bytes {data[:200]!r}{'...' if len(data) > 200 else ''}")
    if verdict is None:
        print("verdict: pass (no sanitizer or libFuzzer report)")
        return 0
    print(f"verdict: {verdict.oracle}\nsignature: {verdict.signature}\n{report.rstrip()}")
    return 1
