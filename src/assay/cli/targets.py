"""``assay targets``: list the registered targets (Python and native) and their settings."""

from __future__ import annotations

import argparse
import json
from typing import Any

from assay.cli.argtypes import add_project_arg


def register(sub: Any) -> argparse.ArgumentParser:
    """Add ``assay targets`` to the subcommands."""
    targets = sub.add_parser("targets", help="list registered targets and their settings")
    add_project_arg(targets)
    targets.add_argument("--json", action="store_true", help="machine-readable output")
    targets.add_argument(
        "paths", nargs="*", metavar="PATH", help="harness files to list instead of [tool.assay] targets"
    )
    targets.set_defaults(func=cmd_targets)
    return targets


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
            if key == "sources":  # the coverage scope, one entry a line with the reason it is watched
                print(f"    {'scope':<11} " + _scope_lines(s["scope"]))
                continue
            print(f"    {key:<11} {value if value is not None else '-'}")
            if key == "expected" and s["expected_from"]:  # built-ins expected only when raised there
                print(f"    {'  raised in':<11} {', '.join(s['expected_from'])}")
    for s in natives:
        print(f"{s['name']}  (native)")
        for key in LISTED:
            value = s[key]
            if isinstance(value, list):
                value = ", ".join(value) or "-"
            print(f"    {key:<12} {value if value is not None else '-'}")
        for warning in s["warnings"]:
            print(f"    WARNING: {warning}")
    return 0


def _scope_lines(scope: list[dict[str, str]]) -> str:
    """``entry (reason)``, one a line, aligned under the first (the harness file is named by ``defined_in``)."""
    lines = [f"{e['source']}  ({e['reason']})" for e in scope if e["reason"] != "the target's file"]
    if len(lines) < len(scope):
        lines.insert(0, "its file  (the target's file)")
    return ("\n" + " " * 16).join(lines) or "-"
