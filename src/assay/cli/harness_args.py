"""The part of ``assay fuzz`` that runs harness files, libFuzzer flags and corpus folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from assay.cli.argtypes import positive_int, seconds
from assay.core.errors import ConfigError
from assay.core.target import Target


def add_harness_args(parser: argparse.ArgumentParser) -> None:
    """Positional harness files and corpus folders, and the per-target settings libFuzzer flags set."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="harness files to fuzz instead of [tool.assay] targets (file.py, or file.py::function "
        "for one function, e.g. a Hypothesis test), and libFuzzer corpus folders (read as "
        "seeds; the first receives the corpus). libFuzzer flags work too: -runs=N, "
        "-max_len=N, -timeout=S, -seed=N, -dict=FILE, -rss_limit_mb=N, -max_total_time=S",
    )
    g = parser.add_argument_group("target settings (override every selected target's own)")
    g.add_argument("--max-len", type=positive_int, metavar="N", help="largest input in bytes (-max_len)")
    g.add_argument("--timeout", type=seconds, metavar="S", help="seconds per input before it is a wedge (-timeout)")
    g.add_argument("--rss-limit-mb", type=_mib, metavar="N", help="worker memory limit in MiB, 0: none (-rss_limit_mb)")
    g.add_argument(
        "--sources",
        action="append",
        default=[],
        metavar="PKG",
        help="file, folder or module whose code gives coverage feedback (repeatable; replaces the "
        "targets' sources, by default their file plus the packages they import)",
    )
    g.add_argument(
        "--dict",
        action="append",
        default=[],
        metavar="FILE",
        help="libFuzzer/AFL dictionary file whose tokens join the dictionary (-dict; repeatable)",
    )


def _mib(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of MiB") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 (no limit) or more")
    return value


def rewrite_libfuzzer_flags(raw: list[str], fuzz_parser: argparse.ArgumentParser) -> list[str]:
    """``raw`` (a whole ``assay`` command line) with the words after ``fuzz`` translated."""
    from assay.core import notices
    from assay.harness.libfuzzer_flags import translate

    at = raw.index("fuzz")
    actions = fuzz_parser._option_string_actions  # argparse has no public way to ask this

    def takes_value(option: str) -> bool:
        action = actions.get(option)
        return action is not None and action.nargs != 0

    return raw[: at + 1] + translate(raw[at + 1 :], takes_value, notices.notify)


def harness_selection(args: argparse.Namespace) -> tuple[list[str], list[Path]]:
    """(harness specs, corpus folders) from the command line's positional words.

    The project is still found from the current folder, even for a harness file
    elsewhere (a library's own harness in site-packages, say): its corpus and
    findings belong to the project the user is working in.
    """
    from assay.harness.paths import split_positionals

    specs, folders = split_positionals(args.paths)
    if specs and args.fuzz_backend not in (None, "python"):
        raise ConfigError(
            "harness files run on the python backend; drop --fuzz-backend "
            "(native targets come from [tool.assay.native])"
        )
    if specs and args.executor == "dask":
        raise ConfigError(
            "--executor dask runs the targets of [tool.assay] targets, which its workers import by "
            "name; list the harness file there, or run it with --executor local"
        )
    return specs, folders


def apply_harness_args(
    chosen: list[Target], args: argparse.Namespace, folders: list[Path]
) -> tuple[list[Target], list[bytes]]:
    """(the selected targets with command-line settings applied, extra dictionary tokens)."""
    from assay.harness.libfuzzer_flags import read_dictionary
    from assay.harness.paths import with_overrides

    tokens = [tok for path in args.dict for tok in read_dictionary(path)]
    if args.max_len is None and args.timeout is None and args.rss_limit_mb is None and not folders and not args.sources:
        return chosen, tokens
    if args.timeout is not None and any(t.slow is not None and t.slow >= args.timeout for t in chosen):
        raise ConfigError(f"--timeout {args.timeout:g} is not above a selected target's slow= threshold; raise it")
    return with_overrides(
        chosen,
        max_len=args.max_len,
        timeout=args.timeout,
        rss_limit_mb=args.rss_limit_mb,
        sources=args.sources,
        folders=folders,
    ), tokens


def after_run(result, chosen: list[Target], folders: list[Path], corpus_root: str) -> None:
    """Copy the corpus into the first corpus folder; warn about targets whose coverage scope misses their code."""
    from assay.harness.scope_hint import low_coverage_hints

    if folders and chosen and not getattr(result, "interrupted", False):
        from assay.harness.paths import export_corpus
        from assay.store.corpus import Corpus

        target = chosen[0]
        entries = [data for _, data in Corpus(corpus_root, target.name, target.max_len).load()]
        try:
            written = export_corpus(entries, folders[0])
            print(f"corpus: {written} new entr{'y' if written == 1 else 'ies'} written to {folders[0]}")
        except OSError as exc:
            print(f"assay: could not write the corpus into {folders[0]} ({exc.strerror or exc})", file=sys.stderr)
    for line in low_coverage_hints(result.targets, chosen, _executed(result, chosen, corpus_root)):
        print(f"assay: warning: {line}", file=sys.stderr)


def _executed(result, chosen: list[Target], corpus_root: str) -> dict:
    """Per target that ran cases: the lines its seeds and corpus ran, in scope and outside it."""
    from assay.engine.scope_audit import executed_lines
    from assay.store.corpus import Corpus

    if getattr(result, "interrupted", False):
        return {}
    by_name = {t.name: t for t in chosen}
    found = {}
    for outcome in result.targets:
        target = by_name.get(getattr(outcome, "name", ""))
        if target is None or not getattr(outcome, "cases", 0) or not getattr(outcome, "sources", None):
            continue
        inputs = list(target.seeds) + [data for _, data in Corpus(corpus_root, target.name, target.max_len).load()]
        ran = executed_lines(target, outcome.sources, inputs)
        if ran is not None:
            found[target.name] = ran
    return found


def follow_executed(chosen: list[Target], corpus_root: str, project_root: str) -> list[Target]:
    """Targets on their default scope, plus the packages their first cases (seeds, corpus) ran most outside it.

    The packages a target imports are its default scope; what they miss (a library imported inside a
    function, or one the wrapped library hands its work to) shows when the seeds and corpus entries
    the campaign starts with are run once, before it starts.  ``sources`` set by hand are kept as set.
    """
    import dataclasses

    from assay.core import notices
    from assay.engine.scope_audit import executed_lines
    from assay.harness.scope_hint import EXECUTED_BY_FIRST_CASES, packages_to_follow
    from assay.store.corpus import Corpus

    out = []
    for target in chosen:
        inputs = list(target.seeds) + [data for _, data in Corpus(corpus_root, target.name, target.max_len).load()]
        ran = executed_lines(target, target.source_paths(project_root), inputs) if not target.sources else None
        added = [pkg for pkg in packages_to_follow(ran) if pkg not in target.implied_sources] if ran else []
        if added:
            notices.notify(f"{target.name}: watching {', '.join(added)} too ({EXECUTED_BY_FIRST_CASES})")
            target = dataclasses.replace(
                target,
                implied_sources=target.implied_sources + tuple(added),
                scope_reasons={**target.scope_reasons, **dict.fromkeys(added, EXECUTED_BY_FIRST_CASES)},
            )
        out.append(target)
    return out
