"""Draw structured values from fuzz bytes, the way Rust's ``arbitrary`` does.

A :class:`ByteSource` reads a fuzz input front to back.  Every draw is total: when
the bytes run out it returns the smallest allowed value, so any input (including
the empty one) decodes to *some* structure, and the engine's byte mutations become
structural mutations.  Smaller bytes decode to simpler values, so the byte-level
shrinker also simplifies the structure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class ByteSource:
    """A cursor over fuzz bytes with total, deterministic draws."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    @property
    def exhausted(self) -> bool:
        return self.pos >= len(self.data)

    def draw_raw(self, n: int) -> bytes:
        """The next ``n`` bytes, zero-padded past the end."""
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk + bytes(n - len(chunk)) if len(chunk) < n else chunk

    def draw_int(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``; ``lo`` once the bytes are exhausted."""
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        span = hi - lo
        if span == 0:
            return lo
        nbytes = (span.bit_length() + 7) // 8
        return lo + int.from_bytes(self.draw_raw(nbytes), "big") % (span + 1)

    def draw_bool(self) -> bool:
        return self.draw_int(0, 1) == 1

    def draw_weighted(self, p_true: float) -> bool:
        """True with probability about ``p_true`` (one byte)."""
        return self.draw_int(0, 255) < int(p_true * 256)

    def draw_choice(self, options: Sequence[T]) -> T:
        """One of ``options``; the first once the bytes are exhausted."""
        if not options:
            raise ValueError("draw_choice needs at least one option")
        return options[self.draw_int(0, len(options) - 1)]

    def draw_bytes(self, min_size: int = 0, max_size: int = 64) -> bytes:
        """A length in ``[min_size, max_size]``, then that many bytes."""
        size = self.draw_int(min_size, max_size)
        return self.draw_raw(size)

    def draw_text(self, alphabet: str, min_size: int = 0, max_size: int = 16) -> str:
        """A string of ``alphabet`` characters with a length in the given range."""
        size = self.draw_int(min_size, max_size)
        return "".join(self.draw_choice(alphabet) for _ in range(size))

    def draw_list(self, draw_one, min_size: int = 0, max_size: int = 8) -> list:
        """Elements drawn by ``draw_one(self)`` while a continue-byte says so.

        Continue-bytes (rather than an up-front length) let deletion of bytes drop
        elements, which keeps byte shrinking effective on lists.
        """
        items: list[Any] = []
        while len(items) < max_size:
            if len(items) >= min_size and (self.exhausted or not self.draw_bool()):
                break
            items.append(draw_one(self))
        return items
