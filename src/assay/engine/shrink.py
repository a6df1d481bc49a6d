"""Byte-level test-case reduction.

Design
------
The shrinker is a pure function of an input and a predicate ("does this still
fail with the same signature?"), bounded by a number of predicate calls.  It only
ever accepts a candidate that is smaller in shortlex order (shorter, or as long
and bytewise smaller), so it terminates and the result is canonical-ish.

Passes, repeated until a full round makes no progress or the budget runs out:

1. structural candidates from the target's strategy, if any (drop a header, a
   message, a subtree): big, grammar-preserving steps first;
2. chunk deletion, chunk sizes from half the input down to single bytes, scanning
   left to right (``ddmin``-style, greedy);
3. byte simplification: each byte replaced by the first of a few canonical
   smaller values (NUL, space, ``0``, ``A``, ``a``) that keeps the failure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: Predicate calls one shrink may spend.
DEFAULT_MAX_CASES = 1024
#: Replacement values tried, in order, when simplifying a byte.
SIMPLER_BYTES = (0x00, 0x20, 0x30, 0x41, 0x61)


@dataclass
class ShrinkResult:
    data: bytes
    cases: int
    exhausted: bool  # True if the budget ran out before a fixed point


def _smaller(a: bytes, b: bytes) -> bool:
    return (len(a), a) < (len(b), b)


class Shrinker:
    """Greedy shortlex reduction of one failing input (see module docstring)."""

    def __init__(
        self,
        data: bytes,
        still_fails: Callable[[bytes], bool],
        max_cases: int = DEFAULT_MAX_CASES,
        structural: Callable[[bytes], Iterable[bytes]] | None = None,
        simplify: bool = True,
    ) -> None:
        self.best = data
        self.simplify = simplify
        self.still_fails = still_fails
        self.max_cases = max_cases
        self.structural = structural
        self.cases = 0
        self._tried: set[bytes] = set()

    def _budget_left(self) -> bool:
        return self.cases < self.max_cases

    def consider(self, candidate: bytes) -> bool:
        """Try ``candidate``; adopt it if it is smaller and still fails."""
        if not _smaller(candidate, self.best) or candidate in self._tried or not self._budget_left():
            return False
        self._tried.add(candidate)
        self.cases += 1
        if self.still_fails(candidate):
            self.best = candidate
            return True
        return False

    def run(self) -> ShrinkResult:
        while self._budget_left():
            before = self.best
            self._structural_pass()
            self._deletion_pass()
            if self.simplify:
                self._simplify_pass()
            if self.best == before:
                return ShrinkResult(self.best, self.cases, False)
        return ShrinkResult(self.best, self.cases, True)

    def _structural_pass(self) -> None:
        if self.structural is None:
            return
        progress = True
        while progress and self._budget_left():
            progress = False
            for candidate in self.structural(self.best):
                if self.consider(candidate):
                    progress = True
                    break
                if not self._budget_left():
                    return

    def _deletion_pass(self) -> None:
        size = max(1, len(self.best) // 2)
        while size >= 1 and self._budget_left():
            i = 0
            while i < len(self.best) and self._budget_left():
                candidate = self.best[:i] + self.best[i + size :]
                if not self.consider(candidate):
                    i += size
            size //= 2

    def _simplify_pass(self) -> None:
        i = 0
        while i < len(self.best) and self._budget_left():
            current = self.best[i]
            for value in SIMPLER_BYTES:
                if value >= current:
                    break
                if self.consider(self.best[:i] + bytes([value]) + self.best[i + 1 :]):
                    break
            i += 1


def shrink(
    data: bytes,
    still_fails: Callable[[bytes], bool],
    max_cases: int = DEFAULT_MAX_CASES,
    structural: Callable[[bytes], Iterable[bytes]] | None = None,
    simplify: bool = True,
) -> ShrinkResult:
    """Reduce ``data`` while ``still_fails`` holds; at most ``max_cases`` calls.

    Without ``simplify`` only deletions are tried (pass 3 keeps the length).
    """
    return Shrinker(data, still_fails, max_cases, structural, simplify).run()
