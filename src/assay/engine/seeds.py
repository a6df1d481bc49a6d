"""Seed derivation: master seed -> target seed -> one RNG per case.

The RNG of case *i* is derived from (target seed, i) alone, never from a generator
shared across cases, so a case can be regenerated without replaying the ones
before it, and a worker restarted after a crash continues the same schedule.
"""

from __future__ import annotations

import hashlib
import random
import secrets

from assay.gen import accelerated


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


#: Cases whose random bits come from one hash call (:class:`CaseStream`).
STREAM_BLOCK = 64
#: Random bytes each case starts with (more are hashed on demand).
STREAM_BYTES = 48
#: A :class:`FastRandom` draw below ``n`` keeps the pool at least ``n << 64``
#: (bias below 2**-64); ``random()`` needs this much.
_RANDOM_LOW = 1 << (64 + 53)
#: Draws below this bound from a pool of at least _FAST_POOL skip the check.
_FAST_N = 1 << 48
_FAST_POOL = 1 << 112


class FastRandom:
    """The engine's per-case generator on its hot path: a pool of hashed bits.

    It offers the few ``random.Random`` methods the byte mutators use, each a
    ``divmod`` of the pool, with none of ``random.Random``'s construction cost
    (allocating a Mersenne Twister state costs more than a whole mutation).  Its
    bits are a function of (key, case index) only: a slice of the block hash
    :class:`CaseStream` computes, then ``blake2b(key, index, n)`` when a case
    draws more than the slice holds.
    """

    __slots__ = ("_pool", "_key", "_index", "_more")

    def __init__(self, pool: int, key: bytes, index: int) -> None:
        self._pool = pool
        self._key = key
        self._index = index
        self._more = 0

    def _refill(self, need: int) -> None:
        pool = self._pool
        while pool < need:
            self._more += 1
            block = hashlib.blake2b(
                self._key + self._index.to_bytes(8, "big") + self._more.to_bytes(4, "big"),
                digest_size=64,
                person=b"assay-more",
            ).digest()
            pool = (pool << 512) | int.from_bytes(block, "little")
        self._pool = pool

    def _randbelow(self, n: int) -> int:
        pool = self._pool
        if n >= _FAST_N or pool < _FAST_POOL:  # the general case: keep the pool 64 bits above n
            if pool < n << 64:
                self._refill(n << 64)
            pool = self._pool
        self._pool, r = divmod(pool, n)
        return r

    def randrange(self, start: int, stop: int | None = None) -> int:
        if stop is None:
            if 0 < start < _FAST_N:
                pool = self._pool
                if pool >= _FAST_POOL:  # the hot path: a small bound, a full pool
                    self._pool, r = divmod(pool, start)
                    return r
            start, stop = 0, start
        width = stop - start
        if width <= 0:
            raise ValueError(f"empty range for randrange({start}, {stop})")
        return start + self._randbelow(width)

    def randint(self, a: int, b: int) -> int:
        return self.randrange(a, b + 1)

    def random(self) -> float:
        if self._pool < _RANDOM_LOW:
            self._refill(_RANDOM_LOW)
        pool = self._pool
        self._pool = pool >> 53
        return (pool & _MASK53) * 1.1102230246251565e-16  # 2**-53

    def choice(self, seq):
        return seq[self._randbelow(len(seq))]

    def shuffle(self, x: list) -> None:
        for i in reversed(range(1, len(x))):
            j = self._randbelow(i + 1)
            x[i], x[j] = x[j], x[i]

    def getrandbits(self, k: int) -> int:
        return self._randbelow(1 << k) if k > 0 else 0

    def randbytes(self, n: int) -> bytes:
        return self.getrandbits(n * 8).to_bytes(n, "little")

    def expovariate(self, lambd: float = 1.0) -> float:
        import math

        return -math.log(1.0 - self.random()) / lambd


class CaseStream:
    """``rng(i)``: the :class:`FastRandom` of case ``i`` of the target with seed ``tseed``.

    One ``shake_128`` call yields the bits of :data:`STREAM_BLOCK` consecutive cases,
    so a case's generator costs a few attribute stores.  Case ``i``'s bits depend on
    (tseed, i) alone, like :func:`case_rng`'s, whatever was drawn before.  The
    generator object is reused: the one ``rng(i)`` returned is valid until the next call.
    """

    def __init__(self, tseed: int) -> None:
        self.key = tseed.to_bytes(8, "big")
        self._block_no = -1
        self._pools: list[int] = []
        self._rng = FastRandom(0, self.key, 0)

    def rng(self, index: int) -> FastRandom:
        block_no, at = divmod(index, STREAM_BLOCK)
        if block_no != self._block_no:
            self._block_no = block_no
            block = hashlib.shake_128(b"assay-stream" + self.key + block_no.to_bytes(8, "big")).digest(
                STREAM_BLOCK * STREAM_BYTES
            )
            self._pools = [
                int.from_bytes(block[k : k + STREAM_BYTES], "little") for k in range(0, len(block), STREAM_BYTES)
            ]
        rng = self._rng
        rng._pool = self._pools[at]
        rng._index = index
        rng._more = 0
        return rng


def case_stream(tseed: int) -> CaseStream:
    """The hot path's per-case generators: :class:`CaseStream`, or its C twin when built.

    Both give every case the same draws (``tests/test_cmutate.py``), so a campaign's
    schedule does not depend on which one runs.
    """
    if accelerated.agrees(globals()):
        return accelerated.cmutate.Stream(tseed.to_bytes(8, "big"))  # type: ignore[union-attr]  # agrees(): built
    return CaseStream(tseed)
