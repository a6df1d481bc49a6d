"""``assay compose``: run the composition oracle on a classifier from the command line.

``register(subparsers)`` adds the subcommand to assay's CLI; ``run(args)`` returns
0 when the campaign found nothing and 1 with findings, and raises
:class:`~assay.errors.ConfigError` (exit 2 in the main CLI) for bad input.
``python -m assay.compose ...`` runs the same thing standalone.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

from assay.compose.classifier import DEFAULT_ALLOW_VALUES, DEFAULT_COMMAND_TIMEOUT, CommandClassifier, load_object
from assay.compose.leaves import DEFAULT_STATE_HEADS
from assay.compose.operators import SHELL, load_table
from assay.compose.oracle import DEFAULT_BOUND, DEFAULT_FAMILIES
from assay.compose.target import composition_target
from assay.compose.tree import MAX_LEAVES
from assay.errors import AssayError, ArtifactError, ConfigError

#: Cases run when neither --fuzz-cases nor --fuzz-budget is given.
DEFAULT_CASES = 10_000
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
            "(R, over-denial).  Classified commands are only judged, never executed."
        ),
    )
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--classifier", metavar="MOD:FUNC",
                     help="Python classifier: 'pkg.mod:func' or 'path/file.py:func', func(command) -> bool or level")
    who.add_argument("--classifier-cmd", metavar="'PROG ARGS'",
                     help="out-of-process classifier; the command is its last argument (or replaces '{}')")
    p.add_argument("--allowed-predicate", metavar="MOD:FUNC", help="allowed(level) -> bool, for level classifiers")
    p.add_argument("--rank", metavar="MOD:FUNC", help="rank(level) -> orderable, to compare allowed levels")
    p.add_argument("--classifier-json-field", metavar="FIELD",
                   help="read the verdict from this JSON field (dotted) on stdout instead of the exit status")
    p.add_argument("--classifier-allow-values", metavar="A,B", default=",".join(DEFAULT_ALLOW_VALUES),
                   help="JSON string values that mean allowed (default: %(default)s)")
    p.add_argument("--classifier-stdin", action="store_true", help="pass the command on stdin, not as an argument")
    p.add_argument("--classifier-timeout", type=float, default=DEFAULT_COMMAND_TIMEOUT, metavar="S",
                   help="seconds per out-of-process verdict (default: %(default)s)")
    p.add_argument("--leaves", required=True, metavar="FILE",
                   help="one command per line; optional 'allow:'/'deny:' hints; '#' lines are comments")
    p.add_argument("--name", default="compose", help="target name (corpus and artifact folder; default: %(default)s)")
    p.add_argument("--fuzz-cases", type=int, metavar="N", help=f"generated cases (default {DEFAULT_CASES})")
    p.add_argument("--fuzz-budget", type=float, metavar="S", help="seconds to fuzz (instead of a case count)")
    p.add_argument("--fuzz-seed", type=int, metavar="N", help="master seed (random if absent)")
    p.add_argument("--fuzz-corpus", metavar="DIR", help="corpus root (default: [tool.assay] corpus)")
    p.add_argument("--fuzz-artifacts", metavar="DIR", help="artifact root (default: [tool.assay] artifacts)")
    p.add_argument("--bound", type=int, default=DEFAULT_BOUND, metavar="N",
                   help="largest tree (leaves) the over-denial check R judges (default: %(default)s)")
    p.add_argument("--r-ops", metavar="FAMILIES",
                   help="operator families R applies to, comma-separated, 'none' to turn R off "
                        f"(default: {','.join(sorted(SHELL.sequencing))})")
    p.add_argument("--families", default=",".join(DEFAULT_FAMILIES), metavar="LIST",
                   help="metamorphic families to draw: wrapper,redirect,embed or 'none' (default: %(default)s)")
    p.add_argument("--protected-path", action="append", metavar="PATH",
                   help="a path no allowed command may write (repeat; replaces the defaults)")
    p.add_argument("--operators", metavar="FILE", help="operator table (.json/.toml); 'extend = true' adds to shell")
    p.add_argument("--allow-head", action="append", default=[], metavar="WORD",
                   help="admit leaves headed by this state-changing word (repeat)")
    p.add_argument("--max-leaves", type=int, default=MAX_LEAVES, metavar="N",
                   help="most leaves in one tree (default: %(default)s)")
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


def build_target(args: argparse.Namespace) -> Any:
    """The composition target that ``args`` describe (raises ConfigError on bad input)."""
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
        max_leaves=args.max_leaves,
        seeds=not args.no_seeds,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``assay compose``: 0 clean, 1 findings; ConfigError for bad input."""
    from assay.config import load_project
    from assay.engine.campaign import CampaignOptions, run_campaign

    target = build_target(args)
    composition = target.composition
    summary = composition.pool.summary
    for line in summary.lines():
        print(line)
    print(f"operators: {len(composition.table.binary)} binary, {len(composition.table.wrappers)} wrappers, "
          f"{len(composition.table.redirects)} redirects x {len(composition.table.protected_paths)} paths, "
          f"{len(composition.table.embeds)} embeddings; R on {','.join(sorted(composition.r_families)) or 'nothing'} "
          f"up to {args.bound} leaves")
    if args.fuzz_corpus is None or args.fuzz_artifacts is None:
        project = load_project()
    cases = args.fuzz_cases if args.fuzz_cases is not None or args.fuzz_budget is not None else DEFAULT_CASES
    if cases is not None and cases < 0:
        raise ConfigError(f"--fuzz-cases must be zero or more, not {cases}")
    options = CampaignOptions(
        corpus_root=args.fuzz_corpus or str(project.corpus),
        artifact_root=args.fuzz_artifacts or str(project.artifacts),
        max_cases=cases,
        budget=args.fuzz_budget,
        seed=args.fuzz_seed,
    )
    result = run_campaign([target.assay_target], options, progress=_progress_printer())
    findings = explain_findings(result)
    _print_result(result, findings)
    if args.report:
        _write_report(args, result, summary.to_json(), findings)
    return 1 if result.findings else 0


def explain_findings(result: Any) -> list[dict[str, Any]]:
    """Each finding with its minimized command, read back from its artifact."""
    from assay.store.artifacts import load_artifact

    out = []
    for t in result.targets:
        for f in t.findings:
            entry: dict[str, Any] = {"target": t.name, "signature": f.signature, "oracle": f.oracle,
                                     "artifact": f.artifact, "occurrences": f.occurrences}
            try:
                data = load_artifact(f.artifact).metadata.get("verdict", {}).get("data") or {}
            except ArtifactError:
                data = {}
            for key in ("command", "witness", "culprit", "property", "shape"):
                if key in data:
                    entry[key] = data[key]
            out.append(entry)
    return out


def _print_result(result: Any, findings: list[dict[str, Any]]) -> None:
    for t in result.targets:
        print(f"{t.name}: {t.cases} cases in {t.elapsed:.1f}s, corpus {t.corpus_size}, "
              f"{len(t.findings)} finding(s); master seed {result.master_seed}")
    for f in findings:
        print(f"  [{f['oracle']}] {f['signature']}  (seen {f['occurrences']}x)")
        if "witness" in f:
            print(f"      minimized: {f['witness']!r}")
        if f.get("command") and f.get("command") != f.get("witness"):
            print(f"      as fuzzed: {f['command']!r}")
        culprit = f.get("culprit") or {}
        if "text" in culprit:
            print(f"      denied part: {culprit['text']!r}")
        elif "path" in culprit:
            print(f"      protected path: {culprit['path']!r}")
        print(f"      artifact: {f['artifact']}")
    print(f"{len(findings)} finding(s)" if findings else "no findings")


def _write_report(args: argparse.Namespace, result: Any, pool: dict[str, Any], findings: list[dict[str, Any]]) -> None:
    arguments = {k: v for k, v in vars(args).items() if k != "func" and not callable(v)}
    try:
        from assay.report import build_report

        report = build_report(result, arguments=arguments)
    except ImportError:  # the shared report module is optional here
        report = {"arguments": arguments, "master_seed": result.master_seed,
                  "status": "findings" if result.findings else "clean"}
    report["compose"] = {"pool": pool, "findings": findings}
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
    """Standalone entry point (``python -m assay.compose``): exit 2 on configuration errors."""
    parser = argparse.ArgumentParser(prog="assay")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return args.func(args)
    except AssayError as exc:
        print(f"assay: error: {exc}", file=sys.stderr)
        return 2
