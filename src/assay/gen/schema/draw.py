"""Where the generator's choices come from: a ``random.Random`` or fuzz bytes."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

from assay.gen.bytesource import ByteSource


class Draw:
    """Choices drawn from a ``random.Random`` or from fuzz bytes."""

    def int(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def chance(self, p: float) -> bool:
        raise NotImplementedError

    def real(self) -> float:
        return self.int(0, 1 << 20) / float(1 << 20)

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.int(0, len(seq) - 1)]

    def shuffled(self, seq: Iterable[Any]) -> list[Any]:
        items = list(seq)
        for i in range(len(items) - 1, 0, -1):
            j = self.int(0, i)
            items[i], items[j] = items[j], items[i]
        return items


class RandomDraw(Draw):
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


class ByteDraw(Draw):
    """Exhausted bytes choose the simplest option (low ints, no optional parts)."""

    def __init__(self, source: ByteSource) -> None:
        self.source = source

    def int(self, lo: int, hi: int) -> int:
        return self.source.draw_int(lo, hi)

    def chance(self, p: float) -> bool:
        if self.source.exhausted:
            return False
        return self.source.draw_weighted(p)
