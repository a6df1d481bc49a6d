"""The ``assay`` command line: a thin adapter over the library.

Only :func:`main` turns exceptions into exit codes: 0 clean, 1 findings,
2 usage or configuration error (with a message saying what to change), 3 an
internal error of assay itself (one line, plus the file holding the traceback),
130 interrupted (SIGINT or SIGTERM, with or without ``--jobs``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from assay.core.errors import AssayError, InternalError
from assay.core.version import __version__

#: The commands, one module of this package each, in the order ``assay --help`` lists them;
#: each module has ``register(subparsers)``.
COMMANDS = (
    "assay.cli.fuzz",
    "assay.cli.targets",
    "assay.cli.replay",
    "assay.cli.promote",
    "assay.cli.compose",
    "assay.cli.mutant",
    "assay.cli.merge_corpus",
    "assay.cli.init",
    "assay.cli.findings",
)
#: Commands re-executed with PYTHONHASHSEED=0 (when unset) so runs are reproducible.
REPRODUCIBLE_COMMANDS = ("fuzz", "compose", "mutant", "test")


def build_parser() -> argparse.ArgumentParser:
    """The whole ``assay`` parser: every command's module registers its subcommand."""
    from assay.cli.parser import OneLineParser

    parser = OneLineParser(prog="assay", description="Fuzzing and mutation testing for Python.")
    parser.add_argument("--version", action="version", version=f"assay {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in COMMANDS:
        registered = importlib.import_module(module_name).register(sub)
        if module_name == "assay.cli.fuzz":
            parser.fuzz_parser = registered  # type: ignore[attr-defined]  # main() rewrites libFuzzer flags with it
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``assay`` with ``argv`` (default: the command line); returns the exit code."""
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
    _line_buffered(sys.stdout)
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
    except BrokenPipeError:
        return _reader_went_away()
    except Exception as exc:  # noqa: BLE001 - anything else is assay's own fault
        return _internal(exc)


def _line_buffered(stream: object) -> None:
    """Write each line of ``stream`` as it is printed, also to a file or pipe.

    Redirected, stdout is block-buffered: a CI log would show stdout's lines after
    stderr's progress, out of order, and lose them all to a kill -9.
    """
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(line_buffering=True)
        except (OSError, ValueError):
            pass  # a closed or unusual stream: output is still written, only later


def _reader_went_away() -> int:
    """Exit as a pipe's writer does when its reader stopped early (``assay targets | head``).

    Quietly, with the shell's code for SIGPIPE; stdout goes to /dev/null so that
    flushing it at exit cannot raise the same error again.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _internal(exc: BaseException) -> int:
    """Exit 3: one line naming the failure and the file holding its traceback."""
    from assay.cli.crashlog import one_line, write_traceback

    path = write_traceback(exc)
    where = f"full traceback in {path}" if path else "the traceback could not be written to a file either"
    print(f"assay: internal error: {one_line(exc)} ({where})", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
