"""mkdocs hook: the command-line reference page, rendered from assay's own argparse parser.

The page ``reference/cli.md`` is generated at build time from
``assay.cli.main.build_parser()`` (which registers every command module of
``COMMANDS``), so it cannot drift from the code: nothing of it is
committed.  The checkout's ``src/`` goes first on ``sys.path`` so the build
documents this tree, installed or not.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

PAGE = "reference/cli.md"

INTRO = """# Command-line reference

Generated at build time from `assay.cli.main.build_parser()`: every subcommand's usage
and options, as `assay COMMAND --help` prints them. For what the commands do, see
[Commands and settings](commands.md).
"""


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) for each subcommand of ``parser``, in registration order."""
    found = []
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}  # noqa: SLF001
            for name, sub in action.choices.items():
                found.append((name, helps.get(name, ""), sub))
    return found


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):  # noqa: SLF001
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            if action.nargs != 0:
                metavar = action.metavar or action.dest.upper()
                name += f" `{metavar if isinstance(metavar, str) else ' '.join(metavar)}`"
        else:
            name = f"`{action.metavar or action.dest}`"
        default = action.default
        shown = ""
        if default not in (None, False, argparse.SUPPRESS, []) and action.nargs != 0:
            shown = f"`{default}`"
        if action.choices and not isinstance(action.choices, dict):
            name += " (" + ", ".join(f"`{c}`" for c in action.choices) + ")"
        rows.append(f"| {name} | {_cell(action.help or '')} | {shown} |")
    if not rows:
        return []
    return ["| argument | meaning | default |", "|---|---|---|", *rows, ""]


def _render(parser: argparse.ArgumentParser, prefix: str, level: int) -> list[str]:
    lines: list[str] = []
    for name, summary, sub in _subparsers(parser):
        lines += [f"{'#' * level} `{prefix} {name}`", ""]
        if summary:
            lines += [summary[0].upper() + summary[1:] + ".", ""]
        lines += ["```text", sub.format_help().rstrip(), "```", ""]
        lines += _options_table(sub)
        lines += _render(sub, f"{prefix} {name}", level + 1)
    return lines


def render() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: fix the width so builds agree
    from assay.cli.main import build_parser

    parser = build_parser()
    lines = [INTRO, "```text", parser.format_help().rstrip(), "```", ""]
    lines += _render(parser, "assay", 2)
    return "\n".join(lines)


def on_files(files, config):  # noqa: ANN001, ANN201 - mkdocs hook signature
    from mkdocs.structure.files import File

    src = Path(config.config_file_path).resolve().parent / "src"
    if src.is_dir() and str(src) not in sys.path:
        sys.path.insert(0, str(src))
    files.append(File.generated(config, PAGE, content=render()))
    return files
