"""Seed derivation: master seed -> target seed -> one RNG per case.

The RNG of case *i* is derived from (target seed, i) alone, never from a generator
shared across cases, so a case can be regenerated without replaying the ones
before it, and a worker restarted after a crash continues the same schedule.
"""

from __future__ import annotations

import hashlib
import random
import secrets


def new_master_seed() -> int:
    """A fresh random master seed (63 bits, printable and passable to ``--fuzz-seed``)."""
    return secrets.randbits(63)


def target_seed(master: int, target_name: str) -> int:
    """``blake2b(master, target name)`` as a 64-bit integer."""
    digest = hashlib.blake2b(
        master.to_bytes(16, "big", signed=True) + target_name.encode("utf-8"),
        digest_size=8,
        person=b"assay-target",
    ).digest()
    return int.from_bytes(digest, "big")


def case_rng(tseed: int, index: int) -> random.Random:
    """The RNG of case ``index`` of the target with seed ``tseed``."""
    digest = hashlib.blake2b(
        tseed.to_bytes(8, "big") + index.to_bytes(8, "big"), digest_size=16, person=b"assay-case"
    ).digest()
    return random.Random(int.from_bytes(digest, "big"))
