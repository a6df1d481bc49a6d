"""``assay mutant`` and ``assay test``: thin adapters over :mod:`assay.mutant.session`.

``assay mutant [options] [pytest args]`` runs the baseline, the mutants and (with
``--fuzz on``) differential fuzzing of the survivors; ``assay mutant show ID``
prints one mutant's diff and evidence from the last run.  ``assay test [options]
[pytest args]`` runs the suite as pytest would, then the mutants (``--mutant
sample|changed``), then fuzzing; its exit status is pytest's unless
``--mutant-fail-under`` is given.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from assay.cli.argtypes import arguments_of, percent, positive_int, seconds, seed
from assay.core.errors import ConfigError

#: Mutants sampled by ``assay test --mutant sample`` without ``--mutant-samples``.
DEFAULT_TEST_SAMPLES = 50
#: Seconds between progress lines when stderr is not a terminal (CI logs).
LOG_PROGRESS_EVERY = 10.0
#: Where the history lives, relative to the project.
HISTORY = ".assay/mutants/history.json"
#: Every mutant of the last run, with its diff (written with or without --no-history, for ``show``).
LAST_RUN = ".assay/mutants/last-run.json"
#: Arguments that say where output goes, not what the verdicts are: left out of the unchanged-tree digest.
OUTPUT_ONLY = ("report",)


def register(subparsers: argparse._SubParsersAction) -> None:
    mutant = subparsers.add_parser(
        "mutant",
        help="mutation testing: which checks could no test miss; fuzz the survivors",
        description="Mutate the code in memory, run the tests that reach each mutant in a forked child, "
        "and report killed / survived / unreached / timeout / error. 'assay mutant show ID' "
        "prints one mutant's diff and evidence. Arguments after the options go to pytest.",
    )
    _common(mutant)
    mutant.add_argument("--sample", type=positive_int, metavar="N", help="run N mutants chosen by a stable hash")
    mutant.add_argument("--changed", metavar="REV", help="only mutants on lines changed since git revision REV")
    mutant.add_argument("--mutant-budget", type=seconds, metavar="S", help="stop starting mutants after S seconds")
    mutant.add_argument("pytest_args", nargs=argparse.REMAINDER, help="pytest arguments (or: show ID)")
    mutant.set_defaults(func=cmd_mutant)

    test = subparsers.add_parser(
        "test",
        help="run the test suite, then mutants, then fuzz the survivors",
        description="Runs pytest; then, with --mutant sample|changed, mutation testing over the suite; "
        "then, with --fuzz on, differential fuzzing of survivors (or every target when no "
        "survivor maps to one). Exit status is pytest's unless --mutant-fail-under is given.",
    )
    _common(test)
    test.add_argument("--mutant", choices=("off", "sample", "changed"), default="off")
    test.add_argument(
        "--mutant-samples",
        type=positive_int,
        metavar="N",
        help=f"mutants for --mutant sample (default {DEFAULT_TEST_SAMPLES})",
    )
    test.add_argument("--mutant-budget", type=seconds, metavar="S", help="stop starting mutants after S seconds")
    test.add_argument("--changed", metavar="REV", default="HEAD", help="revision for --mutant changed (default HEAD)")
    test.add_argument("pytest_args", nargs=argparse.REMAINDER, help="pytest arguments")
    test.set_defaults(func=cmd_test)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", metavar="DIR", help="project folder holding pyproject.toml (default: current folder)")
    p.add_argument(
        "--paths", nargs="+", metavar="P", help="files or folders to mutate (default: [tool.assay] mutate, else src/)"
    )
    p.add_argument(
        "--exclude",
        nargs="+",
        action="extend",
        default=[],
        metavar="PATTERN",
        help="also leave out files and folders matching PATTERN (a path or glob; added to "
        "[tool.assay.mutant] exclude, whose default is the test folders tests/ and test/)",
    )
    p.add_argument(
        "--operators", nargs="+", default=[], metavar="FAMILY", help="only these operator families (or prefixes: guard)"
    )
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="mutants run at once (default: CPU count)",
    )
    p.add_argument("--report", metavar="FILE", help="write the JSON report here")
    p.add_argument("--no-history", action="store_true", help="ignore and do not update the mutation history")
    p.add_argument(
        "--mutant-fail-under", type=percent, metavar="PCT", help="exit 1 when the killed share is below PCT percent"
    )
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local: fork the mutants here (default); dask: batches of mutants as Dask tasks, "
        "judged by pytest on the workers (needs Dask, assay's dask extra)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="with --executor dask: an existing Dask scheduler (default: a LocalCluster of --jobs processes)",
    )
    g = p.add_argument_group("fuzzing of survivors")
    g.add_argument("--fuzz", choices=("on", "off"), default="off")
    g.add_argument(
        "--fuzz-target", action="append", default=[], metavar="NAME", help="targets to fuzz with (default: by sources)"
    )
    g.add_argument(
        "--fuzz-cases", type=positive_int, metavar="N", help="generated cases per survivor and target (default 2000)"
    )
    g.add_argument("--fuzz-budget", type=seconds, metavar="S", help="wall-clock seconds shared by all survivors")
    g.add_argument("--fuzz-seed", type=seed, metavar="N", help="master seed (default: random; reported)")
    g.add_argument("--fuzz-corpus", metavar="DIR", help="corpus root, read as seeds (default from [tool.assay] corpus)")
    g.add_argument("--fuzz-artifacts", metavar="DIR", help="artifact root (default from [tool.assay] artifacts)")
    g.add_argument(
        "--max-len",
        type=positive_int,
        metavar="N",
        help="longest input of a survivor's campaign (default: each target's max_len; raised further when the "
        "mutated line compares a larger size)",
    )
    g.add_argument(
        "--compare",
        choices=("messages", "no-messages"),
        default="messages",
        help="messages: an exception message alone tells a mutant apart (default); no-messages: only behaviour "
        "(return value, state, features, exception type) does",
    )


# -- assay mutant ---------------------------------------------------------------------------------
def cmd_mutant(args: argparse.Namespace) -> int:
    if args.pytest_args[:1] == ["show"]:
        if len(args.pytest_args) != 2:
            raise ConfigError("usage: assay mutant show ID (an id from the summary or the JSON report)")
        return cmd_show(args, args.pytest_args[1])
    return _run(args, sample=args.sample, changed=args.changed, mode="mutant")


def cmd_test(args: argparse.Namespace) -> int:
    if args.mutant == "off" and args.fuzz == "off":
        return _run(args, sample=None, changed=None, mode="test", mutate=False)
    sample = (args.mutant_samples or DEFAULT_TEST_SAMPLES) if args.mutant == "sample" else None
    changed = args.changed if args.mutant == "changed" else None
    return _run(args, sample=sample, changed=changed, mode="test", mutate=args.mutant != "off")


def _run(args: argparse.Namespace, *, sample: int | None, changed: str | None, mode: str, mutate: bool = True) -> int:
    try:
        import pytest
    except ImportError:
        raise ConfigError(
            "assay mutant and assay test run the project's pytest suite: install pytest "
            "(pip install pytest) in this environment"
        ) from None

    from assay.core.config import load_project
    from assay.core.output_paths import check_campaign_folders, check_output_file
    from assay.harness.discovery import make_importable
    from assay.mutant.discover import exclude_setting, files_to_mutate
    from assay.mutant.report import build_report, summary
    from assay.mutant.session import MutationOptions, MutationPlugin
    from assay.reports.campaign import write_report

    if args.scheduler and args.executor != "dask":
        raise ConfigError("--scheduler needs --executor dask")
    given = [k for k in ("corpus", "artifacts") if getattr(args, f"fuzz_{k}", None)]  # the flags replace the settings
    project = load_project(args.project, given=given)
    root = project.root
    if args.report:
        check_output_file(args.report, "--report")
    if args.fuzz == "on" or given:  # the folders are checked whenever they are named, used or not
        check_campaign_folders(args.fuzz_corpus, args.fuzz_artifacts, project.corpus, project.artifacts)
    entries = args.paths if args.paths else project.raw.get("mutate", [])
    if isinstance(entries, str):
        entries = [entries]
    harnesses = [t for t in project.targets if not t.endswith(".py")]
    exclude = [*exclude_setting(project.raw, str(root / "pyproject.toml")), *args.exclude]
    files = files_to_mutate(root, entries, harnesses, exclude) if mutate or args.paths else []  # --paths checked
    files = files if mutate else []
    from assay.reports.progress import ProgressLine

    progress = ProgressLine(sys.stderr, _progress_line, LOG_PROGRESS_EVERY)
    options = MutationOptions(
        root=root,
        files=files,
        jobs=args.jobs,
        sample=sample,
        changed=changed,
        operators=args.operators,
        history=None if args.no_history else root / HISTORY,
        run_mutants=mutate,
        progress=progress,
        budget=args.mutant_budget,
    )
    # The project folder and its src/ are importable, as `assay fuzz` makes them: target
    # files and tests import the project's own modules from there (no pythonpath setting needed).
    make_importable(root)
    targets = None
    if args.fuzz == "on":
        from assay.mutant.survivors import load_fuzz_targets

        # Before the tests: a bad target fails fast.
        targets = load_fuzz_targets(project, args.fuzz_target, log=lambda line: print(line, file=sys.stderr))
    pytest_args = [a for a in args.pytest_args if a != "--"]
    if args.executor == "dask" and mutate:
        from assay.scale.dask_mutants import dask_mutant_runner

        options.remote = dask_mutant_runner(root, pytest_args, args.scheduler, cluster={"n_workers": args.jobs})
    plugin = MutationPlugin(options)
    tree = ""
    if options.history is not None and mutate:
        from assay.mutant.history import History, tree_digest
        from assay.mutant.selection import commit_of

        tree = tree_digest(
            root,
            {
                **{k: v for k, v in arguments_of(args).items() if k not in OUTPUT_ONLY},
                "mode": mode,
                "files": [str(f) for f in files],
                "changed_commit": commit_of(root, changed) if changed else None,
            },
        )
        if mode == "mutant":
            unchanged = History.load(options.history).unchanged_run(tree)
            if unchanged is not None:
                return _report_unchanged(args, unchanged, root, files)
    quiet = ["-p", "no:terminal"] if mode == "mutant" else []
    started = time.monotonic()
    old_cwd = os.getcwd()
    os.chdir(root)
    try:
        # assay itself is imported already, so pytest cannot rewrite its plugin's asserts: expected, not news.
        code = pytest.main(
            [
                *pytest_args,
                *quiet,
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(root),
                "-W",
                "ignore::pytest.PytestAssertRewriteWarning",
            ],
            plugins=[plugin],
        )
    finally:
        os.chdir(old_cwd)
    progress.finish()
    if plugin.error is not None:
        raise plugin.error
    code = int(code)
    base = plugin.baseline
    if base.collect_errors and mode == "mutant":
        raise ConfigError("the test suite does not collect:\n" + "\n".join(base.collect_errors[:5]))
    if code in (2, 3, 4) and mode == "mutant":
        raise ConfigError(
            f"pytest stopped with exit code {code} (usage or internal error); run the same pytest arguments alone to see why"
        )
    if base.unfixed:
        print(_unfixed_notice(base.unfixed), file=sys.stderr)
    if base.failed:
        listed = "\n  ".join(base.failed[:10]) + (
            f"\n  ... and {len(base.failed) - 10} more" if len(base.failed) > 10 else ""
        )
        message = (
            f"the baseline is not green: {len(base.failed)} test(s) fail without any mutant:\n  {listed}\n"
            "fix them, or leave them out with pytest's --deselect, before mutation testing"
        )
        if mode == "mutant":
            raise ConfigError(message)
        print(f"assay: {message}; mutants not run", file=sys.stderr)
        return code
    if mode == "mutant" and not base.passed:
        raise ConfigError(
            "no test passed in the baseline (pytest collected nothing?); pass the test paths after the options"
        )
    results = plugin.results
    fuzz_summary = None
    if targets is not None:
        from assay.mutant.survivors import fuzz_survivors, replay_targets

        fuzz = dict(
            cases=args.fuzz_cases,
            budget=args.fuzz_budget,
            seed=args.fuzz_seed,
            corpus=_abs(args.fuzz_corpus),
            artifacts=_abs(args.fuzz_artifacts),
        )
        fuzz_progress = ProgressLine(sys.stderr, _fuzz_progress_line, LOG_PROGRESS_EVERY)
        fuzz_summary = fuzz_survivors(
            results,
            plugin.texts,
            targets,
            project,
            log=print,
            progress=fuzz_progress,
            max_len=args.max_len,
            messages=args.compare == "messages",
            **fuzz,
        )
        fuzz_progress.finish()
        if mode == "test" and not fuzz_summary["mapped"]:
            print(_fallback_line(fuzz_summary["survivors"], targets, args), flush=True)
            campaign_progress = ProgressLine(sys.stderr, _campaign_progress_line, LOG_PROGRESS_EVERY)
            fuzz_summary["campaign"] = replay_targets(targets, project, progress=campaign_progress, **fuzz)
            campaign_progress.finish()
    plugin.save_history(tree)
    if mutate:
        _save_last_run(root, results, plugin.texts)
    elapsed = time.monotonic() - started
    if mutate:
        print(summary(results, elapsed, plugin.unrun))
    if options.history is not None and mutate:
        hs = plugin.history_stats
        print(
            f"history: {hs['gold_replays']} gold replays ({hs['gold_kills']} killed by the recorded test), {hs['reused']} verdicts reused"
        )
    if args.report:
        report = build_report(
            results,
            arguments=arguments_of(args),
            elapsed=elapsed,
            unrun=plugin.unrun,
            timings=plugin.timings,
            history=plugin.history_stats,
            fuzz=fuzz_summary,
            texts=plugin.texts,
            baseline={
                "tests": base.tests,
                "passed": len(base.passed),
                "unfixed": list(base.unfixed),
                "seconds": round(base.elapsed, 3),
                "files": [str(f.relative_to(root)) if f.is_relative_to(root) else str(f) for f in files],
            },
        )
        write_report(args.report, report)
        print(f"report: {args.report}")
    return _exit_status(args, results, mode, code)


def _fallback_line(survivors: int, targets: list, args: argparse.Namespace) -> str:
    """Why ``assay test --fuzz on`` fuzzes every target instead of survivors, and for how long."""
    from assay.mutant.survivors import FALLBACK_BUDGET

    why = (
        "no mutant is left for fuzzing (tests killed every reached one, or it was fuzzed before)"
        if survivors == 0
        else f"none of the {survivors} mutant(s) no test killed lies in a fuzz target's sources"
    )
    limit = (
        f"{args.fuzz_cases} cases"
        if args.fuzz_cases
        else f"{args.fuzz_budget:g}s"
        if args.fuzz_budget
        else f"{FALLBACK_BUDGET:g}s (--fuzz-cases N or --fuzz-budget S to change)"
    )
    names = ", ".join(t.name for t in targets)
    return f"assay: {why}; fuzzing every target ({names}) for {limit}"


def _fuzz_progress_line(done: int, total: int, killed: int) -> str:
    return f"fuzzing mutants {done}/{total}: {killed} killed by fuzzing"


def _campaign_progress_line(p: Any) -> str:
    return f"fuzzing {p.target}: {p.cases} cases, corpus {p.corpus}, findings {p.findings}"


def _unfixed_notice(tests: list[str]) -> str:
    """Says which promoted tests fail for their still unfixed bug, and that mutants ignore them."""
    listed = "\n  ".join(tests[:10]) + (f"\n  ... and {len(tests) - 10} more" if len(tests) > 10 else "")
    return (
        f"assay: {len(tests)} promoted regression test(s) fail for the bug they were promoted for "
        f"(not fixed yet); they cannot kill a mutant and are left out:\n  {listed}"
    )


def _exit_status(args: argparse.Namespace, results: list, mode: str, pytest_code: int) -> int:
    from assay.mutant.report import counts, score

    c = counts(results)
    if args.mutant_fail_under is not None:
        s = score(c)
        below = s is not None and s * 100 < args.mutant_fail_under
        if below:
            print(
                f"assay: killed share {s:.1%} is below --mutant-fail-under {args.mutant_fail_under:g}%", file=sys.stderr
            )
        return 1 if below or (mode == "test" and pytest_code) else 0
    if mode == "test":
        return pytest_code
    return 1 if c["survived"] or c["unreached"] else 0


def cmd_show(args: argparse.Namespace, mutant_id: str) -> int:
    from assay.core.config import load_project
    from assay.mutant.history import History, load_last_run
    from assay.mutant.model import Mutant, unified_diff
    from assay.mutant.report import show

    project = load_project(args.project)
    # The last run first (written with --no-history too), then the history of earlier runs.
    records = {
        **{
            k: v["result"]
            for k, v in History.load(project.root / HISTORY).records.items()
            if isinstance(v.get("result"), dict)
        },
        **load_last_run(project.root / LAST_RUN),
    }
    result = records.get(mutant_id)
    if result is None:
        matches = [k for k in records if mutant_id in k]
        if len(matches) == 1:
            mutant_id, result = matches[0], records[matches[0]]
        else:
            hint = (
                f"{len(matches)} ids contain it"
                if matches
                else "run 'assay mutant' first, or copy an id from its summary"
            )
            raise ConfigError(
                f"no mutant {mutant_id!r} in {project.root / LAST_RUN} or {project.root / HISTORY} ({hint})"
            )
    mutant = Mutant.from_json(result["mutant"])
    diff = ""
    try:
        text = Path(mutant.path).read_text("utf-8")
        from assay.mutant.discover import mutants_in_file

        current = {m.id for m in mutants_in_file(Path(mutant.path), project.root, None, text)}
        if mutant.id in current or mutant.operator == "call.drop-keyword":
            diff = unified_diff(text, mutant)
    except (OSError, ConfigError):
        pass
    if not diff and result.get("diff"):
        diff = f"(as recorded; the file changed since)\n{result['diff']}"
    print(show(result, diff))
    return 0


def _save_last_run(root: Path, results: list, texts: dict[str, str]) -> None:
    from assay.mutant.history import save_last_run
    from assay.mutant.report import mutant_record

    try:
        save_last_run(root / LAST_RUN, [{**mutant_record(r, texts), "mutant": r.mutant.to_json()} for r in results])
    except OSError as exc:  # a read-only checkout still gets its summary and report
        print(f"assay: could not keep this run for 'assay mutant show' in {root / LAST_RUN}: {exc}", file=sys.stderr)


def _report_unchanged(args: argparse.Namespace, records: list[dict[str, Any]], root: Path, files: list[Path]) -> int:
    """Nothing the verdicts depend on changed since the last complete run: reuse all of it."""
    from assay.mutant.model import Mutant
    from assay.mutant.report import build_report, summary
    from assay.mutant.session import from_record
    from assay.reports.campaign import write_report

    started = time.monotonic()
    results = [from_record(Mutant.from_json(r["mutant"]), r) for r in records]
    texts = {}
    for path in {r.mutant.path for r in results}:
        try:
            texts[path] = Path(path).read_text("utf-8")
        except OSError:  # the tree digest says it is unchanged; a file gone since is shown without a diff
            continue
    _save_last_run(root, results, texts)
    elapsed = time.monotonic() - started
    print(summary(results, elapsed))
    print(
        f"history: nothing changed since the last run (code, tests, configuration, installed packages, "
        f"arguments): all {len(results)} verdicts reused; --no-history runs them again"
    )
    hist = {"gold_replays": 0, "gold_kills": 0, "reused": len(results), "unchanged": True}
    if args.report:
        write_report(
            args.report,
            build_report(
                results,
                arguments=arguments_of(args),
                elapsed=elapsed,
                unrun=0,
                timings={},
                history=hist,
                fuzz=None,
                texts=texts,
                baseline={
                    "tests": None,
                    "passed": None,
                    "seconds": 0.0,
                    "files": [str(f.relative_to(root)) if f.is_relative_to(root) else str(f) for f in files],
                },
            ),
        )
        print(f"report: {args.report}")
    return _exit_status(args, results, "mutant", 0)


def _abs(path: str | None) -> str | None:
    return str(Path(path).resolve()) if path else None


def _arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(args).items() if k != "func"}


def _progress_line(counts: dict[str, int], total: int) -> str:
    return f"mutants {sum(counts.values())}/{total}: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
