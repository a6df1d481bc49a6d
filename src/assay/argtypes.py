"""argparse value types shared by every command (each error says what is wrong)."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def seed(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer seed") from None


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
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
