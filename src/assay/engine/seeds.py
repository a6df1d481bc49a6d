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
    return CaseRandom(tseed.to_bytes(8, "big") + index.to_bytes(8, "big"))


#: A case generator keeps at least this much entropy in its pool between draws...
_POOL_LOW = 1 << 128
#: ...so a draw below this bound needs no check (bias below 2**-64).
_SMALL_DRAW = 1 << 64
_MASK53 = (1 << 53) - 1


class CaseRandom(random.Random):
    """A ``random.Random`` whose bits come from ``blake2b(key, block)``, 512 at a time.

    Seeding a Mersenne Twister costs ~4 µs (it initialises 624 words), more than the
    engine's whole mutation step, and a case needs a fresh generator because its RNG
    must depend on (target seed, case index) alone.  Here a case's generator is one
    hash away.  Every ``random.Random`` method works, since they all draw through
    :meth:`_randbelow`, :meth:`random` or :meth:`getrandbits`.  A draw takes
    ``pool mod n`` from a pool kept at least 64 bits wider than ``n``.
    """

    def __init__(self, key: bytes) -> None:  # never seeds the Twister underneath
        self._key = key
        self._block = 0
        self._pool = self._refill(0, _POOL_LOW)
        self.gauss_next = None

    def seed(self, *args, **kwargs) -> None:  # noqa: ARG002 - the key is the seed
        return None

    def _refill(self, pool: int, low: int) -> int:
        while pool < low:
            self._block += 1
            block = hashlib.blake2b(self._key + self._block.to_bytes(4, "big"), digest_size=64, person=b"assay-case")
            pool = (pool << 512) | int.from_bytes(block.digest(), "big")
        return pool

    def _randbelow(self, n: int) -> int:
        if n >= _SMALL_DRAW:
            self._pool = self._refill(self._pool, n << 64)
        pool, r = divmod(self._pool, n)
        self._pool = pool if pool >= _POOL_LOW else self._refill(pool, _POOL_LOW)
        return r

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        # The engine draws a few of these per case: skip the general method's checks.
        if step == 1 and type(start) is int and (stop is None or type(stop) is int):
            low, width = (0, start) if stop is None else (start, stop - start)
            if width > 0:
                return low + self._randbelow(width)
        return super().randrange(start, stop, step)

    def random(self) -> float:
        pool = self._pool
        rest = pool >> 53
        self._pool = rest if rest >= _POOL_LOW else self._refill(rest, _POOL_LOW)
        return (pool & _MASK53) * 1.1102230246251565e-16  # 2**-53

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        return self._randbelow(1 << k) if k else 0

    def randbytes(self, n: int) -> bytes:
        return self.getrandbits(n * 8).to_bytes(n, "little")
