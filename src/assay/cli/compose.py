"""``assay compose``: run the composition oracle on a classifier from the command line.

``register(subparsers)`` adds the subcommand to assay's CLI; ``run(args)`` returns
0 when the campaign found nothing and 1 with findings, and raises
:class:`~assay.core.errors.ConfigError` (exit 2 in the main CLI) for bad input.
``python -m assay compose ...`` is the same command without the ``assay`` script.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from assay.cli.argtypes import count, positive_int, seconds, seed
from assay.cli.parser import OneLineParser
from assay.compose.classifier import (
    DEFAULT_ALLOW_VALUES,
    DEFAULT_COMMAND_TIMEOUT,
    CallableClassifier,
    CommandClassifier,
    load_object,
)
from assay.compose.findings import explain_findings, group_findings, refused_everything, summary_lines
from assay.compose.leaves import DEFAULT_STATE_HEADS, OVERRIDABLE, exclusions
from assay.compose.operators import SHELL, load_table
from assay.compose.oracle import DEFAULT_BOUND, DEFAULT_FAMILIES
from assay.compose.target import composition_target
from assay.compose.tree import MAX_LEAVES
from assay.core.allowance import parse_allow
from assay.core.errors import AssayError, ConfigError, SandboxRefusedEverything, TargetError

#: Seconds fuzzed when neither --fuzz-cases nor --fuzz-budget is given (as ``assay fuzz``):
#: fast classifiers ran 10,000 cases in 5 s, and some families showed only later.
DEFAULT_BUDGET = 60.0
#: Seconds between progress lines on a terminal.
PROGRESS_EVERY = 2.0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``compose`` subcommand to ``subparsers`` (``set_defaults(func=run)``)."""
    p = subparsers.add_parser(
        "compose",
        help="fuzz an allow/deny command classifier with the composition (fail-open) oracle",
        description=(
            "Compose clean leaves with shell operators, wrappers, redirects and substitutions, and check "
            "that the classifier never allows a whole whose executed parts it denies (F, fail-open) and, "
            "for plain sequences of at most --bound leaves, never denies a whole whose parts it allows "
            "(R, over-denial).  Classified commands are only judged, never executed.  "
            "The classifier runs in assay's sandbox: a classifier that starts a process (a bridge to "
            "another language) or opens a socket needs --allow subprocess / --allow network "
            "(or [tool.assay.compose] allow = [...]).  "
            "When PYTHONHASHSEED is unset, 'assay compose' re-executes itself with PYTHONHASHSEED=0 so that "
            "--fuzz-seed reproduces a run: state a launcher set up in-process (monkeypatches, imported "
            "modules) is lost; set PYTHONHASHSEED yourself, or call assay.cli.compose.main(argv) in-process."
        ),
    )
    who = p.add_mutually_exclusive_group()
    who.add_argument(
        "--classifier",
        metavar="MOD:FUNC",
        help="Python classifier: 'pkg.mod:func' or 'path/file.py:func', func(command) -> bool or level",
    )
    who.add_argument(
        "--classifier-cmd",
        metavar="'PROG ARGS'",
        help="out-of-process classifier; the command is its last argument (or replaces '{}')",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="CLASS",
        help="side effect the classifier may have in the sandbox: subprocess, network or write:PATH "
        "(repeat or comma-separate; adds to [tool.assay.compose] allow)",
    )
    p.add_argument("--allowed-predicate", metavar="MOD:FUNC", help="allowed(level) -> bool, for level classifiers")
    p.add_argument("--rank", metavar="MOD:FUNC", help="rank(level) -> orderable, to compare allowed levels")
    p.add_argument(
        "--classifier-json-field",
        metavar="FIELD",
        help="read the verdict from this JSON field (dotted) on stdout instead of the exit status",
    )
    p.add_argument(
        "--classifier-allow-values",
        metavar="A,B",
        default=",".join(DEFAULT_ALLOW_VALUES),
        help="JSON string values that mean allowed (default: %(default)s)",
    )
    p.add_argument("--classifier-stdin", action="store_true", help="pass the command on stdin, not as an argument")
    p.add_argument(
        "--classifier-timeout",
        type=seconds,
        default=DEFAULT_COMMAND_TIMEOUT,
        metavar="S",
        help="seconds per out-of-process verdict (default: %(default)s)",
    )
    p.add_argument(
        "--sources",
        action="append",
        default=[],
        metavar="PKG",
        help="module, package or path whose code guides the search besides the classifier's file "
        "(repeat or comma-separate; as sources= of a target)",
    )
    p.add_argument(
        "--leaves", metavar="FILE", help="one command per line; optional 'allow:'/'deny:' hints; '#' lines are comments"
    )
    p.add_argument("--name", help="target name (corpus and artifact folder; default: the classifier's import path)")
    p.add_argument("--fuzz-cases", type=count, metavar="N", help="generated cases (instead of the time budget)")
    p.add_argument(
        "--fuzz-budget",
        type=seconds,
        metavar="S",
        help=f"seconds to fuzz (default {DEFAULT_BUDGET:g} without --fuzz-cases)",
    )
    p.add_argument("--fuzz-seed", type=seed, metavar="N", help="master seed (random if absent)")
    p.add_argument("--fuzz-corpus", metavar="DIR", help="corpus root (default: [tool.assay] corpus)")
    p.add_argument("--fuzz-artifacts", metavar="DIR", help="artifact root (default: [tool.assay] artifacts)")
    p.add_argument(
        "--bound",
        type=positive_int,
        default=DEFAULT_BOUND,
        metavar="N",
        help="largest tree (leaves) the over-denial check R judges (default: %(default)s)",
    )
    p.add_argument(
        "--r-ops",
        metavar="FAMILIES",
        help="operator families R applies to, comma-separated, 'none' to turn R off "
        f"(default: {','.join(sorted(SHELL.sequencing))})",
    )
    p.add_argument(
        "--families",
        default=",".join(DEFAULT_FAMILIES),
        metavar="LIST",
        help="metamorphic families to draw: wrapper,redirect,embed or 'none' (default: %(default)s)",
    )
    p.add_argument(
        "--protected-path",
        action="append",
        metavar="PATH",
        help="a path no allowed command may write (repeat; replaces the defaults)",
    )
    p.add_argument("--operators", metavar="FILE", help="operator table (.json/.toml); 'extend = true' adds to shell")
    p.add_argument(
        "--allow-head",
        action="append",
        default=[],
        metavar="WORD",
        help="admit leaves headed by this state-changing word (repeat)",
    )
    p.add_argument(
        "--admit",
        action="append",
        default=[],
        choices=sorted(OVERRIDABLE),
        metavar="REASON",
        help=f"admit leaves the filter drops for this reason ({', '.join(OVERRIDABLE)}; repeat)",
    )
    p.add_argument(
        "--list-exclusions",
        action="store_true",
        help="list the leaf filter's rules, the state-changing words and how to admit each, and exit",
    )
    p.add_argument(
        "--max-leaves",
        type=positive_int,
        default=MAX_LEAVES,
        metavar="N",
        help="most leaves in one tree (default: %(default)s)",
    )
    p.add_argument("--no-seeds", action="store_true", help="do not seed the campaign with one case per operator")
    p.add_argument("--report", metavar="FILE", help="write a JSON report here")
    p.set_defaults(func=run)
    return p


def _csv(value: str | None) -> list[str] | None:
    if value is None:
        return None
    if value.strip().lower() in ("", "none"):
        return []
    return [v.strip() for v in value.split(",") if v.strip()]


def _sources(args: argparse.Namespace, classifier: Any) -> list[str] | None:
    """The classifier's file plus ``--sources`` (``None``: the default, the classifier's file)."""
    given = [s for v in args.sources for s in (_csv(v) or [])]
    if not given:
        return None
    if not args.classifier:
        raise ConfigError(
            "--sources applies to --classifier: the code of a --classifier-cmd program "
            "runs in another process, where coverage cannot see it"
        )
    own = CallableClassifier(classifier).source_file() if callable(classifier) else None
    return ([own] if own else []) + given


def allowance(args: argparse.Namespace, configured: Any = ()) -> list[str]:
    """The classifier's ``allow=[...]``: ``[tool.assay.compose] allow`` plus ``--allow`` (checked)."""
    if isinstance(configured, str):
        configured = [configured]
    if not isinstance(configured, (list, tuple)) or not all(isinstance(c, str) for c in configured):
        raise ConfigError(f"[tool.assay.compose] allow must be a list of strings, not {configured!r}")
    entries = [*configured, *(e for v in getattr(args, "allow", []) for e in (_csv(v) or []))]
    try:
        parse_allow(entries, "compose")
    except TargetError as exc:
        bad = str(exc).split(" holds ", 1)[-1].split(";", 1)[0]
        raise ConfigError(f"--allow {bad} is not a side-effect class; use subprocess, network or write:PATH") from None
    return sorted(set(entries))


def build_target(args: argparse.Namespace, allow: Sequence[str] = ()) -> Any:
    """The composition target that ``args`` describe (raises ConfigError on bad input)."""
    if not (args.classifier or args.classifier_cmd):
        raise ConfigError("pass --classifier MOD:FUNC (in process) or --classifier-cmd 'PROG ARGS'")
    if not args.leaves:
        raise ConfigError("pass --leaves FILE, a text file with one command per line")
    if args.classifier:
        classifier: Any = load_object(args.classifier, "classifier")
        allowed = load_object(args.allowed_predicate, "allowed-predicate") if args.allowed_predicate else None
        rank = load_object(args.rank, "rank") if args.rank else None
    else:
        if args.allowed_predicate or args.rank:
            raise ConfigError("--allowed-predicate and --rank apply to --classifier, not --classifier-cmd")
        classifier = CommandClassifier(
            args.classifier_cmd,
            mode="json" if args.classifier_json_field else "exit",
            field=args.classifier_json_field or "allowed",
            allow_values=_csv(args.classifier_allow_values) or DEFAULT_ALLOW_VALUES,
            stdin=args.classifier_stdin,
            timeout=args.classifier_timeout,
        )
        allowed = rank = None
    sources = _sources(args, classifier)
    if args.bound < 1:
        raise ConfigError(f"--bound must be at least 1, not {args.bound}")
    table = load_table(args.operators) if args.operators else SHELL
    families = _csv(args.families)
    return composition_target(
        classifier,
        args.leaves,
        name=args.name,
        allowed=allowed,
        rank=rank,
        table=table,
        protected_paths=args.protected_path,
        bound=args.bound,
        r_families=_csv(args.r_ops),
        families=DEFAULT_FAMILIES if families is None else families,
        state_heads=DEFAULT_STATE_HEADS - set(args.allow_head),
        admit=args.admit,
        max_leaves=args.max_leaves,
        seeds=not args.no_seeds,
        sources=sources,
        allow=list(allow),
    )


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse unreadable input files and unusable output paths before the classifier is loaded."""
    from assay.core.config import load_project
    from assay.core.output_paths import check_campaign_folders, check_input_file, check_output_file

    for flag, path in (("--leaves", args.leaves), ("--operators", args.operators)):
        if path:
            check_input_file(path, flag)
    if args.report:
        check_output_file(args.report, "--report")
    project = load_project(
        given=[k for k, v in (("corpus", args.fuzz_corpus), ("artifacts", args.fuzz_artifacts)) if v]
    )
    check_campaign_folders(args.fuzz_corpus, args.fuzz_artifacts, project.corpus, project.artifacts)


def _shown(path: str) -> str:
    """``path`` relative to the current folder when it lies inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def limits(args: argparse.Namespace) -> tuple[int | None, float | None]:
    """(case cap, seconds) of the campaign: --fuzz-cases and/or --fuzz-budget, else the default budget."""
    if args.fuzz_cases is not None and args.fuzz_cases < 0:
        raise ConfigError(f"--fuzz-cases must be zero or more, not {args.fuzz_cases}")
    if args.fuzz_budget is not None and args.fuzz_budget <= 0:
        raise ConfigError(f"--fuzz-budget must be a positive number of seconds, not {args.fuzz_budget}")
    if args.fuzz_cases is None and args.fuzz_budget is None:
        return None, DEFAULT_BUDGET
    return args.fuzz_cases, args.fuzz_budget


def run(args: argparse.Namespace) -> int:
    """Run ``assay compose``: 0 clean, 1 findings; ConfigError for bad input."""
    from assay.core.config import load_project
    from assay.engine.campaign import CampaignOptions, run_campaign

    if args.list_exclusions:
        print("\n".join(exclusions(DEFAULT_STATE_HEADS - set(args.allow_head))))
        return 0
    cases, budget = limits(args)
    _check_paths(args)
    given = [key for key, flag in (("corpus", args.fuzz_corpus), ("artifacts", args.fuzz_artifacts)) if flag]
    project = load_project(given=given)
    configured = project.raw.get("compose", {})
    if not isinstance(configured, dict):
        raise ConfigError("[tool.assay.compose] must be a table (allow = [...])")
    allow = allowance(args, configured.get("allow", []))
    target = build_target(args, allow)
    composition = target.composition
    summary = composition.pool.summary
    for line in summary.lines():
        print(line)
    print(
        f"operators: {len(composition.table.binary)} binary, {len(composition.table.wrappers)} wrappers, "
        f"{len(composition.table.redirects)} redirects x {len(composition.table.protected_paths)} paths, "
        f"{len(composition.table.embeds)} embeddings; R on {','.join(sorted(composition.r_families)) or 'nothing'} "
        f"up to {args.bound} leaves"
    )
    target.assay_target.source_paths()  # a --sources entry that does not exist stops here
    scope = [_shown(p) if os.path.isabs(p) else p for p in target.assay_target.sources]
    print(
        f"target {target.assay_target.name}; feedback scope: "
        f"{', '.join(scope) or 'none (the classifier runs out of process or has no Python source)'}"
    )
    if allow:
        print(f"sandbox: the classifier may use {', '.join(allow)}")
    if cases is None:
        print(f"budget: {budget:g}s (--fuzz-cases N for a fixed number of cases)")
    from assay.core.output_paths import check_campaign_folders

    corpus_root = args.fuzz_corpus or str(project.corpus)
    artifact_root = args.fuzz_artifacts or str(project.artifacts)
    check_campaign_folders(args.fuzz_corpus, args.fuzz_artifacts, corpus_root, artifact_root)
    options = CampaignOptions(
        corpus_root=corpus_root,
        artifact_root=artifact_root,
        max_cases=cases,
        budget=budget,
        seed=args.fuzz_seed,
    )
    result = run_campaign([target.assay_target], options, progress=_progress_printer())
    refused = refused_everything(result)
    if refused is not None:
        name, kind = refused
        flag = "--allow write:PATH" if kind == "write" else f"--allow {kind}"
        raise SandboxRefusedEverything(
            f"assay's sandbox refused {kind} on every case of {name}, so nothing was judged; "
            f"if the classifier needs it (a bridge process, a socket), pass {flag} "
            f'(or [tool.assay.compose] allow = ["{kind}"])'
        )
    findings = explain_findings(result)
    groups = group_findings(findings)
    for t in result.targets:
        print(
            f"{t.name}: {t.cases} cases in {t.elapsed:.1f}s, corpus {t.corpus_size}, "
            f"{len(t.findings)} finding(s); master seed {result.master_seed}"
        )
    for line in summary_lines(groups, composition.enabled):
        print(line)
    if args.report:
        _write_report(args, result, summary.to_json(), findings, groups)
    return 1 if result.findings else 0


def _write_report(
    args: argparse.Namespace,
    result: Any,
    pool: dict[str, Any],
    findings: list[dict[str, Any]],
    groups: list[dict[str, Any]],
) -> None:
    arguments = {k: v for k, v in vars(args).items() if k != "func" and not callable(v)}
    try:
        from assay.reports.campaign import build_report

        report = build_report(result, arguments=arguments)
    except ImportError:  # the shared report module is optional here
        report = {
            "arguments": arguments,
            "master_seed": result.master_seed,
            "status": "findings" if result.findings else "clean",
        }
    report["compose"] = {"pool": pool, "groups": groups, "findings": findings}
    from assay.store.atomic import write_json

    write_json(args.report, report)


def _progress_printer() -> Any:
    if not sys.stderr.isatty():
        return None
    last = [0.0]

    def show(p: Any) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY:
            last[0] = now
            print(f"{p.target}: {p.cases} cases, corpus {p.corpus}, findings {p.findings}", file=sys.stderr)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    """The subcommand alone, with its own parser: exit 2 on configuration errors."""
    parser = OneLineParser(prog="assay")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return args.func(args)
    except AssayError as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return 2
