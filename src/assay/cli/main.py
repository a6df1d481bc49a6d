"""The ``assay`` command line: a thin adapter over the library.

Only :func:`main` turns exceptions into exit codes: 0 clean, 1 findings,
2 usage or configuration error (with a message saying what to change), 3 an
internal error of assay itself (one line, plus the file holding the traceback),
130 interrupted (SIGINT or SIGTERM, with or without ``--jobs``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.cli.argtypes import (
    arguments_of,
    positive_int as _positive_int,
    seconds as _seconds,
    seed as _seed,
    shard as _shard,
)
from assay.core.errors import AssayError, ConfigError, InternalError
from assay.core.version import __version__

#: Subcommands that live beside their feature; each module has ``register(subparsers)``.
PLUGGED_COMMANDS = (
    "assay.cli.promote",
    "assay.cli.compose",
    "assay.cli.mutant",
    "assay.cli.merge_corpus",
    "assay.cli.init",
    "assay.cli.findings",
)
#: Budget used when neither --fuzz-cases nor --fuzz-budget is given.
DEFAULT_BUDGET = 60.0
#: Commands re-executed with PYTHONHASHSEED=0 (when unset) so runs are reproducible.
REPRODUCIBLE_COMMANDS = ("fuzz", "compose", "mutant", "test")


def add_project_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project", metavar="DIR", help="project folder holding pyproject.toml (default: current folder)"
    )


def add_fuzz_args(parser: argparse.ArgumentParser) -> None:
    """The shared ``--fuzz-*`` vocabulary."""
    g = parser.add_argument_group("campaign")
    g.add_argument(
        "--fuzz-target", action="append", default=[], metavar="NAME", help="target to run (repeatable; default: all)"
    )
    g.add_argument("--fuzz-backend", choices=("python", "native", "all"), default="python")
    g.add_argument(
        "--fuzz-cases", type=_positive_int, metavar="N", help="generated cases per target (after seeds and corpus)"
    )
    g.add_argument(
        "--fuzz-budget",
        type=_seconds,
        metavar="S",
        help=f"wall-clock seconds shared by all targets (default {DEFAULT_BUDGET:g} without --fuzz-cases)",
    )
    g.add_argument("--fuzz-seed", type=_seed, metavar="N", help="master seed (default: random; printed and reported)")
    g.add_argument(
        "--fuzz-replay-only", action="store_true", help="run seeds and corpus only; generate and write nothing"
    )
    g.add_argument("--fuzz-corpus", metavar="DIR", help="corpus root (default from [tool.assay] corpus)")
    g.add_argument("--fuzz-artifacts", metavar="DIR", help="artifact root (default from [tool.assay] artifacts)")
    g.add_argument("--report", metavar="FILE", help="write the JSON report here (docs/report-schema.json)")
    g.add_argument("--junit", metavar="FILE", help="write JUnit XML: one test case per target, a failure per bug")
    g.add_argument("--sarif", metavar="FILE", help="write SARIF 2.1.0: one result per bug (GitHub code scanning)")
    g.add_argument(
        "--html",
        metavar="FILE",
        help="write one self-contained HTML page: coverage over time, bugs, settings (needs assay[html])",
    )
    g.add_argument(
        "--jobs",
        type=_positive_int,
        default=1,
        metavar="N",
        help="parallel workers per target sharing its corpus (N > 1 is not deterministic)",
    )
    g.add_argument(
        "--shard",
        type=_shard,
        metavar="K/N",
        help="run only the K-th of N slices of the sorted targets; auto/N takes K from "
        "JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm)",
    )
    g.add_argument("--shrink-cases", type=_positive_int, default=1024, metavar="N", help="shrink budget per finding")
    g.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local: this machine (default); dask: one Dask task per (target, shard), "
        "--jobs shards per target, each seeded and stateless (needs assay[dask])",
    )
    g.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="with --executor dask: an existing Dask scheduler (default: a LocalCluster on every core)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="Fuzzing and mutation testing for Python.")
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    fuzz = sub.add_parser("fuzz", help="run a fuzz campaign over registered targets")
    add_project_arg(fuzz)
    add_fuzz_args(fuzz)
    from assay.cli.harness_args import add_harness_args

    add_harness_args(fuzz)
    parser.fuzz_parser = fuzz  # type: ignore[attr-defined]  # main() rewrites libFuzzer flags with it
    fuzz.add_argument(
        "--promote", action="store_true", help="after the run, promote new findings into regression tests"
    )
    fuzz.set_defaults(func=cmd_fuzz)

    targets = sub.add_parser("targets", help="list registered targets and their settings")
    add_project_arg(targets)
    targets.add_argument("--json", action="store_true", help="machine-readable output")
    targets.add_argument(
        "paths", nargs="*", metavar="PATH", help="harness files to list instead of [tool.assay] targets"
    )
    targets.set_defaults(func=cmd_targets)

    replay = sub.add_parser(
        "replay",
        help="rerun one finding (an artifact folder) or input file and print the verdict",
        usage="assay replay ARTIFACT | TARGET INPUT [--project DIR] [--isolated]",
    )
    add_project_arg(replay)
    replay.add_argument(
        "target",
        metavar="ARTIFACT|TARGET",
        help="an artifact folder (its metadata names the target), or a target name followed by INPUT",
    )
    replay.add_argument("input", nargs="?", help="input file, or artifact folder, for the named target")
    replay.add_argument("--isolated", action="store_true", help="run in a forked child (for crashes and hangs)")
    replay.set_defaults(func=cmd_replay)

    for module_name in PLUGGED_COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # that feature is not part of this build
            raise
        module.register(sub)
    return parser


# -- fuzz ---------------------------------------------------------------------------------------
def cmd_fuzz(args: argparse.Namespace) -> int:
    from assay.cli.harness_args import after_run, apply_harness_args, harness_selection
    from assay.core.config import load_project
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.harness.discovery import load_targets, select
    from assay.reports.campaign import build_report, summary, write_report

    specs, folders = harness_selection(args)  # harness files and corpus folders on the command line
    project = load_project(args.project)
    natives: list = []
    python_names: list[str] | None = args.fuzz_target
    if args.fuzz_backend != "python" and not specs:
        from assay.cli.native import split_selection

        natives, python_names = split_selection(project, args.fuzz_target, args.fuzz_backend)
    if specs:
        from assay.harness.paths import load_path_targets

        chosen = select(load_path_targets(project, specs), python_names or [])
    else:
        chosen = select(load_targets(project), python_names) if python_names is not None else []
    chosen, extra_tokens = apply_harness_args(chosen, args, folders)
    skipped: dict[str, str] = {}
    if args.shard:
        from assay.scale.shard_select import in_shard, resolve_shard

        k, n = args.shard = resolve_shard(args.shard)
        names = sorted([t.name for t in chosen] + [t.name for t in natives])
        keep = {name for i, name in enumerate(names) if in_shard(i, k, n)}
        for name in names:
            if name not in keep:
                skipped[name] = f"not in shard {k}/{n}"
        chosen = [t for t in chosen if t.name in keep]
        natives = [t for t in natives if t.name in keep]
    if not chosen and not natives:
        raise ConfigError("the selection holds no target (check --fuzz-target and --shard); nothing was run")
    _check_outputs(args)
    budget = args.fuzz_budget
    if budget is None and args.fuzz_cases is None and not args.fuzz_replay_only:
        budget = DEFAULT_BUDGET
    native_budget = None if budget is None else budget * len(natives) / (len(natives) + len(chosen))
    if natives and native_budget is not None:
        from assay.native.campaign import whole_seconds

        whole_seconds(native_budget / len(natives))  # refuse under 1 s per native target before anything runs
    options = CampaignOptions(
        corpus_root=_path(args.fuzz_corpus, project.corpus),
        artifact_root=_path(args.fuzz_artifacts, project.artifacts),
        max_cases=args.fuzz_cases,
        budget=None if budget is None else budget - (native_budget or 0.0),
        seed=args.fuzz_seed,
        replay_only=args.fuzz_replay_only,
        shrink_cases=args.shrink_cases,
        dictionary=project.dictionary + extra_tokens,
        project_root=str(project.root),
        jobs=args.jobs,
    )
    if args.scheduler and args.executor != "dask":
        raise ConfigError("--scheduler needs --executor dask")
    if args.executor == "dask" and natives:
        raise ConfigError(
            "--executor dask runs Python targets only; run native targets with --executor local "
            "(or select Python targets with --fuzz-backend python)"
        )
    if args.executor == "dask":
        from assay.scale.dask_executor import run_campaign_dask

        def done(r, n: int, total: int) -> None:
            o = r.outcome
            print(
                f"dask: {n}/{total} {r.target} shard {r.index + 1}: {o['cases']} cases, "
                f"{len(o['findings'])} finding(s), +{len(r.additions)} corpus",
                file=sys.stderr,
                flush=True,
            )

        result, applied = run_campaign_dask(chosen, options, shards=args.jobs, scheduler=args.scheduler, progress=done)
        print(
            f"dask: {sum(t.jobs for t in result.targets)} task(s); wrote {applied.corpus_written} corpus "
            f"entr{'y' if applied.corpus_written == 1 else 'ies'} and {applied.artifacts_written} artifact(s)"
        )
    else:
        from assay.reports.progress import CampaignProgress

        progress = CampaignProgress(sys.stderr)
        if chosen:
            result = run_campaign(chosen, options, progress=progress)
        else:
            from assay.engine.campaign import CampaignResult
            from assay.engine.seeds import new_master_seed

            seed = args.fuzz_seed if args.fuzz_seed is not None else new_master_seed()
            result = CampaignResult(seed, [], time.monotonic(), 0.0)
        progress.finish()
    native_outcomes: list = []
    if natives and not result.interrupted:
        from assay.cli.native import run_native

        print(
            f"assay: native targets {', '.join(t.name for t in natives)}: building and running libFuzzer",
            file=sys.stderr,
        )
        native_outcomes = run_native(
            project,
            natives,
            args,
            master_seed=result.master_seed,
            budget=native_budget,
            corpus_root=options.corpus_root,
            artifact_root=options.artifact_root,
        )
        result.targets.extend(native_outcomes)
        result.elapsed = time.monotonic() - result.started
    print(summary(result, project_root=str(project.root)))
    after_run(result, chosen, folders, options.corpus_root)
    if native_outcomes:
        from assay.cli.native import native_summary

        print(native_summary(native_outcomes))
    if args.report or args.junit or args.sarif or args.html:
        status = "interrupted" if result.interrupted else None
        report = build_report(
            result, arguments=_arguments(args), skipped=skipped, status=status, project_root=str(project.root)
        )
        if args.report:
            try:
                write_report(args.report, report)
                print(f"report: {args.report}")
            except OSError as exc:
                print(
                    f"assay: could not write the report to {args.report} ({exc.strerror or exc}); it follows on stdout",
                    file=sys.stderr,
                )
                print(json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False))
        _write_other_reports(args, report)
    code = 1 if result.findings else 0
    if any(t.status == "infrastructure" for t in result.targets):
        print("assay: a native run failed for infrastructure reasons (see above); exit 3", file=sys.stderr)
        code = 3
    if result.interrupted:
        print("assay: interrupted; findings and corpus so far are saved", file=sys.stderr)
        return 130
    if args.promote and result.findings:
        from assay.cli.promote import format_summary, promote_artifacts
        from assay.store.artifacts import load_artifact

        artifacts = [load_artifact(f.artifact) for t in result.targets for f in t.findings if f.artifact]
        promoted = promote_artifacts(project, artifacts)
        print(format_summary(promoted))
    return code


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable report paths (and --html without Jinja2) before anything runs."""
    from assay.core.output_paths import check_output_file

    for flag in ("report", "junit", "sarif", "html"):
        if getattr(args, flag):
            check_output_file(getattr(args, flag), f"--{flag}")
    if args.html:
        from assay.reports.html import require_jinja2

        require_jinja2()


def _write_other_reports(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """--junit, --sarif and --html, each from the JSON report; a failed write is said, not fatal."""
    from assay.reports.html import write_html
    from assay.reports.junit import write_junit
    from assay.reports.sarif import write_sarif

    for flag, write in (("junit", write_junit), ("sarif", write_sarif), ("html", write_html)):
        path = getattr(args, flag)
        if not path:
            continue
        try:
            write(path, report)
            print(f"{flag}: {path}")
        except OSError as exc:
            print(f"assay: could not write --{flag} {path} ({exc.strerror or exc})", file=sys.stderr)


def _path(flag: str | None, default: Path) -> str:
    return str(Path(flag).resolve()) if flag else str(default)


def _arguments(args: argparse.Namespace) -> dict[str, Any]:
    return arguments_of(args)


# -- targets --------------------------------------------------------------------------------------
def cmd_targets(args: argparse.Namespace) -> int:
    from assay.cli.native import LISTED, listing
    from assay.core.config import load_project
    from assay.harness.discovery import load_targets
    from assay.native.discovery import has_python_targets

    project = load_project(args.project)
    if args.paths:
        from assay.harness.paths import load_path_targets, split_positionals

        natives, registry = [], load_path_targets(project, split_positionals(args.paths)[0])
    else:
        natives = listing(project)  # native targets ([tool.assay.native.<name>] and assay.native_target)
        registry = load_targets(project) if has_python_targets(project) or not natives else None  # type: ignore[assignment]  # None checked below
    settings = [t.settings() for t in registry.all()] if registry is not None else []
    if args.json:
        print(json.dumps([{**s, "backend": "python"} for s in settings] + natives, indent=2))
        return 0
    for s in settings:
        print(s["name"])
        for key in (
            "expected",
            "sources",
            "max_len",
            "seeds",
            "timeout",
            "strategy",
            "dictionary",
            "replays",
            "defined_in",
        ):
            value = s[key]
            if isinstance(value, list):
                value = ", ".join(value) or "-"
            if key == "sources" and s.get("sources_from") != "sources=":  # the default, said as such
                value = (
                    f"its file + {value} (from imports)" if s["sources"] else "its file only (it imports no package)"
                )
            print(f"    {key:<11} {value if value is not None else '-'}")
    for s in natives:
        print(f"{s['name']}  (native)")
        for key in LISTED:
            value = s[key]
            if isinstance(value, list):
                value = ", ".join(value) or "-"
            print(f"    {key:<12} {value if value is not None else '-'}")
    return 0


# -- replay ----------------------------------------------------------------------------------------
def cmd_replay(args: argparse.Namespace) -> int:
    from assay.core.config import load_project
    from assay.engine.execute import run_input
    from assay.engine.isolate import run_isolated
    from assay.harness.paths import registry_for
    from assay.store.artifacts import load_artifact

    project = load_project(args.project)
    if args.input is None:  # assay replay ARTIFACT: the metadata names the target
        path = Path(args.target)
        if not (path.is_dir() and (path / "metadata.json").is_file()):
            raise ConfigError(
                f"{path} is not an artifact folder (holding input and metadata.json); "
                "to replay an input file, name its target: assay replay TARGET INPUT"
            )
    else:
        path = Path(args.input)
    artifact = load_artifact(path) if path.is_dir() else None
    name = artifact.target if args.input is None else args.target  # type: ignore[union-attr]  # an artifact folder, checked above
    from assay.cli.native import is_native

    if is_native(project, name, path):
        return _replay_native(project, name, path)
    harness = artifact.metadata.get("harness") if artifact is not None else None
    target = registry_for(project, {name: harness}).get(name)
    isolated = args.isolated
    if artifact is not None:
        if "mutant" in artifact.metadata:  # a differential finding: both sides, not the original alone
            from assay.mutant.replay import replay_mutant_artifact

            return replay_mutant_artifact(target, artifact)
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
    if isolated:
        verdict = run_isolated(target, data).verdict
    else:
        verdict = run_input(target, data, timeout=target.timeout)
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


def _replay_native(project, name: str, path: Path) -> int:
    from assay.cli.native import replay_native
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


def main(argv: Sequence[str] | None = None) -> int:
    from assay.core import interrupts, notices
    from assay.core.platform_check import problem

    unsupported = problem()
    if unsupported:
        print(f"assay: error: {unsupported}", file=sys.stderr)
        return 2
    raw = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in raw if not a.startswith("-")), None)
    if command in REPRODUCIBLE_COMMANDS and "PYTHONHASHSEED" not in os.environ:
        # Targets that iterate sets or dicts of strings behave differently under
        # each hash seed; a fixed one makes --fuzz-seed reproduce the schedule.
        # Decided before the parser imports every command's module: they would
        # only be imported again after the exec.
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "assay", *raw])
    interrupts.install()  # SIGTERM stops as gracefully as Ctrl-C
    notices.set_sink(lambda message: print(f"assay: {message}", file=sys.stderr))
    try:
        parser = build_parser()  # inside the try: an interrupt while it imports every command is one too
        if command == "fuzz":
            from assay.cli.harness_args import rewrite_libfuzzer_flags

            raw = rewrite_libfuzzer_flags(raw, parser.fuzz_parser)  # type: ignore[attr-defined]
        args = parser.parse_args(raw)
        return int(args.func(args) or 0)
    except InternalError as exc:
        return _internal(exc)
    except AssayError as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("assay: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - anything else is assay's own fault
        return _internal(exc)


def _internal(exc: BaseException) -> int:
    """Exit 3: one line naming the failure and the file holding its traceback."""
    from assay.cli.crashlog import one_line, write_traceback

    path = write_traceback(exc)
    where = f"full traceback in {path}" if path else "the traceback could not be written to a file either"
    print(f"assay: internal error: {one_line(exc)} ({where})", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
