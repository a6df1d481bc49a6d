"""Planted-bug targets for assay's own test suite.

Each target hides one known failure so the tests can check that the engine finds
it (within a case cap), isolates it, names it and keeps its exact input.
"""

from __future__ import annotations

import ctypes
import os
import random

import assay


@assay.target(seeds=[b"hello"], max_len=64)
def planted_nested_compares(data: bytes) -> None:
    """Eight nested single-byte compares guard the bug: b"FUZZBUG!"."""
    if len(data) >= 8:
        if data[0] == 0x46:  # F
            if data[1] == 0x55:  # U
                if data[2] == 0x5A:  # Z
                    if data[3] == 0x5A:  # Z
                        if data[4] == 0x42:  # B
                            if data[5] == 0x55:  # U
                                if data[6] == 0x47:  # G
                                    if data[7] == 0x21:  # !
                                        raise RuntimeError("planted: nested compares solved")


@assay.target(seeds=[b"(a)"], max_len=64)
def planted_feature_only(data: bytes) -> None:
    """The bug needs exactly 12 '(' characters; branch coverage gives no gradient.

    The depth is computed without a branch per level; only the ``depth`` feature
    tells the engine it is getting closer.
    """
    depth = data.count(b"(")
    assay.feature("depth", depth)
    if depth == 12:
        raise RuntimeError("planted: feature-only depth reached")


@assay.target(seeds=[b"hello"], max_len=64, timeout=0.5)
def planted_segfault(data: bytes) -> None:
    if data[:1] == b"X":
        ctypes.string_at(0)


@assay.target(seeds=[b"hello"], max_len=64, timeout=0.5)
def planted_exit(data: bytes) -> None:
    if data[:1] == b"E":
        os._exit(3)


@assay.target(seeds=[b"hello"], max_len=64, timeout=0.5)
def planted_hang(data: bytes) -> None:
    if data[:1] == b"H":
        while True:
            pass


@assay.target(seeds=[b"hello"], max_len=64, timeout=0.5)
def planted_hang_swallow(data: bytes) -> None:
    """A hang that swallows the soft timeout: only the hard deadline stops it."""
    if data[:1] == b"S":
        while True:
            try:
                while True:
                    pass
            except BaseException:  # noqa: BLE001 - the point of this target
                pass


@assay.target(seeds=[b"hello"], max_len=64, timeout=2.0, rss_limit_mb=1024)
def planted_memory(data: bytes) -> None:
    if data[:1] == b"M":
        bytearray(1 << 40)


@assay.target(seeds=[b"hello"], max_len=64)
def planted_invariant(data: bytes) -> None:
    if len(data) == 3 and data[:1] == b"I":
        raise assay.InvariantViolation("parity", f"odd record {data!r}", kind="length")


def _a(data: bytes) -> int:
    return data[len(data) + 5]


def _b(data: bytes) -> int:
    return {}[data]


@assay.target(seeds=[b"hello"], max_len=64)
def planted_two_bugs(data: bytes) -> None:
    if data[:1] == b"A":
        _a(data)
    elif data[:1] == b"B":
        _b(data)


@assay.target(seeds=[b"hello"], max_len=64)
def planted_flaky(data: bytes) -> None:
    """Fails on about half its runs, whatever the input (for the flake guard)."""
    if random.random() < 0.5:
        raise RuntimeError("planted: flaky")


@assay.target(seeds=[b"hello"], max_len=64)
def planted_clean(data: bytes) -> int:
    """A correct target: never fails."""
    return len(data.decode("utf-8", errors="replace"))
