"""argparse value types shared by every command (each error says what is wrong)."""

from __future__ import annotations

import argparse
import math
from typing import Any

#: Smallest and largest ``--fuzz-seed`` (seeds are hashed as 16 signed bytes; 64 bits is plenty).
SEED_MIN, SEED_MAX = -(2**63), 2**64 - 1


def _whole_number(text: str, least: int, bound: str) -> int:
    """``text`` as a whole number of at least ``least``; ``bound`` says the bound in the error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{text!r} must be {bound}")
    return value


def positive_int(text: str) -> int:
    """A whole number of 1 or more."""
    return _whole_number(text, 1, "at least 1")


def count(text: str) -> int:
    """A whole number of 0 or more."""
    return _whole_number(text, 0, "0 or more")


def percent(text: str) -> float:
    """A percentage from 0 to 100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a percentage from 0 to 100)") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage from 0 to 100")
    return value


def seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer seed") from None
    if not SEED_MIN <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"seed {text!r} does not fit in 64 bits")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 seconds")
    return value


def shard(text: str) -> tuple[int | None, int]:
    """``K/N`` (1 <= K <= N), or ``auto/N``: K is ``None``, read later from the batch system."""
    try:
        head, tail = text.split("/")
        n = int(tail)
        k = None if head == "auto" else int(head)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N or auto/N (for example 1/4)") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"shard {text!r} needs N >= 1")
    if k is None:
        return None, n
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"shard {text!r} needs 1 <= K <= N")
    return k, n


def arguments_of(args: argparse.Namespace) -> dict[str, Any]:
    """A parsed command line as plain data, for reports."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(args).items() if k != "func"}


def add_project_arg(parser: argparse.ArgumentParser) -> None:
    """``--project DIR``, which every command that reads ``[tool.assay]`` takes."""
    parser.add_argument(
        "--project", metavar="DIR", help="project folder holding pyproject.toml (default: current folder)"
    )
