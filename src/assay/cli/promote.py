"""``assay promote [ARTIFACT...] [--project DIR] [--harness FILE] [--write] [--replays K] [--include-harness] [--xfail]``.

With no artifacts it considers every artifact under the project's artifact root
(findings on mutants aside).  Emit-only by default: tests are staged for review;
``--write`` puts them into the regressions folder and records their buckets.
Exit status: 1 when a new bug was promoted, 0 otherwise; a bad argument raises
:class:`~assay.core.errors.ConfigError`, which the main CLI turns into exit 2.
"""

from __future__ import annotations

import argparse

from assay.cli.argtypes import positive_int as _replays
from assay.core.config import load_project
from assay.core.errors import ConfigError
from assay.promote.from_fuzz import promote_artifacts
from assay.promote.summary import PromoteSummary, format_summary

__all__ = ["register", "run", "promote_artifacts", "format_summary", "PromoteSummary"]


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``promote`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "promote",
        help="turn fuzz findings into named regression tests (dedup, flake guard, emit)",
        description=(
            "Dedup findings against the bucket store, replay each K times, and emit a regression "
            "test for every one that fails all K times with the same signature; the rest are "
            "quarantined in the project's quarantine log. Tests are staged for review unless --write."
        ),
    )
    parser.add_argument(
        "artifacts",
        nargs="*",
        metavar="ARTIFACT",
        help="artifact folders (default: every artifact under the project's artifact root)",
    )
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help="project folder holding pyproject.toml (default: the current folder)",
    )
    parser.add_argument(
        "--harness",
        metavar="FILE",
        action="append",
        default=[],
        help="harness file defining targets given on the command line (assay fuzz FILE), not in [tool.assay]; "
        "an artifact's metadata never names a file to import",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="write tests into the regressions folder and record their buckets (default: stage only)",
    )
    parser.add_argument(
        "--replays",
        metavar="K",
        type=_replays,
        default=None,
        help="flake-guard replays per finding (default: each target's replays, 5)",
    )
    parser.add_argument(
        "--include-harness",
        action="store_true",
        help="also promote findings raised in the harness file itself (default: listed, not staged)",
    )
    parser.add_argument(
        "--xfail",
        action="store_true",
        help="emit bugs raised outside the project (third-party code) as strict xfail tests",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Promote, print the summary; 1 when a new bug was promoted, else 0."""
    replays = getattr(args, "replays", None)
    if replays is not None and (isinstance(replays, bool) or not isinstance(replays, int) or replays < 1):
        raise ConfigError(f"--replays must be a whole number of at least 1, not {replays!r}")
    project = load_project(getattr(args, "project", None))
    summary = promote_artifacts(
        project,
        getattr(args, "artifacts", None) or None,
        write=bool(getattr(args, "write", False)),
        replays=replays,
        include_harness=bool(getattr(args, "include_harness", False)),
        xfail=bool(getattr(args, "xfail", False)),
        harnesses=list(getattr(args, "harness", None) or ()),
    )
    if not summary.outcomes:
        print(f"assay promote: no artifacts to promote under {project.artifacts}")
        return 0
    print(format_summary(summary))
    return summary.exit_code
