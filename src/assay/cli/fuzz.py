"""``assay fuzz``: run a campaign over the selected targets, then write its reports.

The shared ``--fuzz-*`` vocabulary (:func:`add_fuzz_args`) is defined here; the
campaign itself is :func:`assay.engine.campaign.run_campaign`.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from pathlib import Path
from typing import Any

from assay.cli.argtypes import (
    add_project_arg,
    arguments_of,
    positive_int as _positive_int,
    seconds as _seconds,
    seed as _seed,
    shard as _shard,
)
from assay.core.errors import ConfigError

#: Budget used when neither --fuzz-cases nor --fuzz-budget is given.
DEFAULT_BUDGET = 60.0


def register(sub: Any) -> argparse.ArgumentParser:
    """Add ``assay fuzz`` to the subcommands; returns its parser (libFuzzer flags are rewritten against it)."""
    fuzz = sub.add_parser("fuzz", help="run a fuzz campaign over registered targets")
    add_project_arg(fuzz)
    add_fuzz_args(fuzz)
    from assay.cli.harness_args import add_harness_args

    add_harness_args(fuzz)
    fuzz.add_argument(
        "--promote", action="store_true", help="after the run, promote new findings into regression tests"
    )
    fuzz.set_defaults(func=cmd_fuzz)
    return fuzz


def add_fuzz_args(parser: argparse.ArgumentParser) -> None:
    """The shared ``--fuzz-*`` vocabulary."""
    g = parser.add_argument_group("campaign")
    g.add_argument(
        "--fuzz-target", action="append", default=[], metavar="NAME", help="target to run (repeatable; default: all)"
    )
    g.add_argument(
        "--fuzz-backend",
        choices=("python", "native", "all"),
        help="default: python, or native when the project has native targets only (or --fuzz-target names one)",
    )
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
        help="write one self-contained HTML page: coverage over time, bugs, settings (needs Jinja2, assay's html extra)",
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
        "--jobs shards per target, each seeded and stateless (needs Dask, assay's dask extra)",
    )
    g.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="with --executor dask: an existing Dask scheduler (default: a LocalCluster on every core)",
    )


def cmd_fuzz(args: argparse.Namespace) -> int:
    from assay.cli.harness_args import after_run, apply_harness_args, follow_executed, harness_selection
    from assay.core.config import load_project
    from assay.core.output_paths import check_campaign_folders
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.harness.discovery import load_targets, select
    from assay.reports.campaign import build_report, summary, write_report

    if args.scheduler and args.executor != "dask":
        raise ConfigError("--scheduler needs --executor dask")
    specs, folders = harness_selection(args)  # harness files and corpus folders on the command line
    project = load_project(
        args.project,
        given=[k for k, flag in (("corpus", args.fuzz_corpus), ("artifacts", args.fuzz_artifacts)) if flag],
    )
    check_campaign_folders(
        args.fuzz_corpus, args.fuzz_artifacts, project.corpus, project.artifacts, replay_only=args.fuzz_replay_only
    )  # before any target is imported or any case runs
    _check_outputs(args)
    natives: list = []
    python_names: list[str] | None = args.fuzz_target
    if args.fuzz_backend is None:
        from assay.cli.native import default_backend

        args.fuzz_backend, note = ("python", None) if specs else default_backend(project, args.fuzz_target)
        if note:
            print(f"assay: {note}", file=sys.stderr)
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
    budget = args.fuzz_budget
    if budget is None and args.fuzz_cases is None and not args.fuzz_replay_only:
        budget = DEFAULT_BUDGET
    native_budget = None if budget is None else budget * len(natives) / (len(natives) + len(chosen))
    if natives and native_budget is not None:
        from assay.native.campaign import whole_seconds

        whole_seconds(native_budget / len(natives))  # refuse under 1 s per native target before anything runs
    from assay.engine.seeds import new_master_seed

    seed = args.fuzz_seed if args.fuzz_seed is not None else new_master_seed()
    options = CampaignOptions(
        corpus_root=_path(args.fuzz_corpus, project.corpus),
        artifact_root=_path(args.fuzz_artifacts, project.artifacts),
        max_cases=args.fuzz_cases,
        budget=None if budget is None else budget - (native_budget or 0.0),
        seed=seed,
        replay_only=args.fuzz_replay_only,
        shrink_cases=args.shrink_cases,
        dictionary=project.dictionary + extra_tokens,
        project_root=str(project.root),
        jobs=args.jobs,
    )
    if not args.fuzz_replay_only:
        chosen = follow_executed(chosen, options.corpus_root, str(project.root))
    if args.executor == "dask" and natives:
        raise ConfigError(
            "--executor dask runs Python targets only; run native targets with --executor local "
            "(or select Python targets with --fuzz-backend python)"
        )
    # First, and flushed before any case runs: a CI log killed mid-run still says how to repeat it.
    print(f"assay: master seed {seed} (repeat with --fuzz-seed {seed})", flush=True)
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
    # Targets loaded from harness files named on this command line: their files, for the reproduce lines.
    harnesses = {t.name: t.defined_in for t in chosen if t.defined_in} if specs else None
    print(summary(result, project_root=str(project.root), harnesses=harnesses, seed_line=False))
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
    _say_unsaved(result, options.artifact_root)
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


def _say_unsaved(result: Any, artifact_root: str) -> None:
    """Say on stderr, last and loudly, which findings exist only in this run's output."""
    from assay.reports.campaign import unsaved_findings

    lost = unsaved_findings(result)
    if not lost:
        return
    print(
        f"assay: WARNING: {len(lost)} finding(s) could not be saved under {artifact_root}; "
        "their inputs are only in this output and in the report (input_base64):",
        file=sys.stderr,
    )
    for target, f in lost:
        data = base64.b64encode(f.unsaved_input or b"").decode("ascii")
        print(f"assay:   {target} {f.signature} ({f.save_error}): input (base64) {data}", file=sys.stderr)


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse unwritable report paths, unreadable dictionaries (and --html without Jinja2) before
    any target is imported."""
    from assay.core.output_paths import check_input_file, check_output_file

    for flag in ("report", "junit", "sarif", "html"):
        if getattr(args, flag):
            check_output_file(getattr(args, flag), f"--{flag}")
    for path in args.dict:
        check_input_file(path, "--dict")
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
