"""``assay merge-corpus OUT IN...``: the command-line face of :mod:`assay.scale.merge`."""

from __future__ import annotations

import argparse
import sys

#: Exit status when every input replayed cleanly, and when some were set aside.
EXIT_CLEAN, EXIT_ASIDE = 0, 1


def register(subparsers) -> None:
    """Add ``merge-corpus`` to the ``assay`` command line."""
    p = subparsers.add_parser(
        "merge-corpus",
        help="union corpus roots (shards, CI artifacts) into OUT, minimized by feature cover",
        description="Validate every input root, union the entries by target, replay each input once "
        "recording its features, and keep the smallest set that preserves every feature. "
        "OUT may be one of the inputs; its own entries are part of the union.",
    )
    p.add_argument("--project", metavar="DIR", help="project folder holding pyproject.toml (default: current folder)")
    p.add_argument("--aside", metavar="DIR", help="where inputs that crash, hang or fail go (default: OUT.aside)")
    p.add_argument("--report", metavar="FILE", help="write the JSON report here")
    p.add_argument("out", metavar="OUT", help="corpus root to write (created if missing)")
    p.add_argument("inputs", metavar="IN", nargs="+", help="corpus roots to merge (<root>/<target>/<sha256>.input)")
    p.set_defaults(func=cmd_merge_corpus)


def cmd_merge_corpus(args: argparse.Namespace) -> int:
    """Run the merge; exit 1 when inputs were set aside (they are findings to look at)."""
    from assay.core.config import load_project
    from assay.core.version import __version__
    from assay.harness.discovery import load_targets
    from assay.scale.merge import merge_corpora, summary
    from assay.store.atomic import write_json

    project = load_project(args.project)
    _check_paths(args)
    targets = load_targets(project).all() if _has_python_targets(project) else []

    def done(t) -> None:
        print(
            f"merge: {t.name}: {t.entries_in} in, {t.entries_out} out, {len(t.aside)} set aside, {t.seconds:.1f}s",
            file=sys.stderr,
            flush=True,
        )

    result = merge_corpora(args.out, args.inputs, targets, project=project, aside_root=args.aside, progress=done)
    print(summary(result))
    if args.report:
        write_json(
            args.report,
            {"report_version": 1, "assay_version": __version__, "command": "merge-corpus", **result.to_json()},
        )
        print(f"report: {args.report}")
    return EXIT_ASIDE if result.aside else EXIT_CLEAN


def _check_paths(args: argparse.Namespace) -> None:
    """OUT and --aside must be folders assay can write, --report a file: before any target loads
    (the IN roots are checked by the merge, which lists every offender at once)."""
    from assay.core.output_paths import check_output_dir, check_output_file

    check_output_dir(args.out, "OUT")
    if args.aside:
        check_output_dir(args.aside, "--aside")
    if args.report:
        check_output_file(args.report, "--report")


def _has_python_targets(project) -> bool:
    """False only for a project whose targets are all native (``assay.native`` decides)."""
    try:
        from assay.native.discovery import has_python_targets
    except ImportError:
        return True
    return has_python_targets(project)
