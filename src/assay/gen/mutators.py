"""libFuzzer-class byte mutators.

Each mutator takes the input as a ``bytearray`` plus the case RNG and returns a new
``bytearray`` (or ``None`` when it does not apply, e.g. erasing from an empty
input).  :class:`ByteMutator` stacks a few of them per case and clamps the result
to the target's ``max_len``.  Everything draws only from the RNG it is handed.
"""

from __future__ import annotations

import random
import re
from typing import Callable, Iterable, Sequence

#: Most mutations stacked on one case (libFuzzer's ``-mutate_depth`` is 5).
MAX_STACK = 5
#: Longest run a single insert/erase touches.
MAX_CHUNK = 128
#: Share of chunk repetitions that also cut off the rest of the input.
CUT_AFTER_PUMP = 0.5
#: Most dictionary tokens kept per target.
MAX_DICTIONARY = 512
#: How many recent wins (mutations that led to new coverage) are remembered.
WIN_MEMORY = 256
#: Share of mutation picks drawn from recent wins rather than uniformly.
WIN_SHARE = 0.3

_INTERESTING_8 = (0, 1, 0x7F, 0x80, 0xFF, 0x10, 0x20, 0x40, 0x64)
_INTERESTING_16 = (0, 0x80, 0xFF, 0x100, 0x200, 0x3E8, 0x400, 0x7FFF, 0x8000, 0xFFFF)
_INTERESTING_32 = (0, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFA0000FA)

Mutation = Callable[["ByteMutator", bytearray, random.Random, bytes | None], bytearray | None]


def _erase(m: "ByteMutator", b: bytearray, rng: random.Random, other: bytes | None) -> bytearray | None:
    if len(b) < 1:
        return None
    n = rng.randint(1, min(len(b), MAX_CHUNK if rng.random() < 0.3 else 8))
    at = rng.randrange(len(b) - n + 1)
    del b[at : at + n]
    return b


def _insert_byte(m, b, rng, other):
    b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
    return b


def _insert_repeated(m, b, rng, other):
    n = rng.randint(3, MAX_CHUNK)
    at = rng.randrange(len(b) + 1)
    byte = rng.choice((0, 0xFF, rng.randrange(256), ord(" "), ord("A")))
    b[at:at] = bytes([byte]) * n
    return b


def _change_byte(m, b, rng, other):
    if not b:
        return None
    b[rng.randrange(len(b))] = rng.randrange(256)
    return b


def _flip_bit(m, b, rng, other):
    if not b:
        return None
    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return b


def _shuffle(m, b, rng, other):
    if len(b) < 2:
        return None
    n = rng.randint(2, min(len(b), 8))
    at = rng.randrange(len(b) - n + 1)
    part = list(b[at : at + n])
    rng.shuffle(part)
    b[at : at + n] = bytes(part)
    return b


def _interesting(m, b, rng, other):
    width = rng.choice((1, 2, 4))
    if len(b) < width:
        return None
    table = {1: _INTERESTING_8, 2: _INTERESTING_16, 4: _INTERESTING_32}[width]
    value = rng.choice(table)
    if rng.random() < 0.5:
        value = (-value) & ((1 << (8 * width)) - 1)
    at = rng.randrange(len(b) - width + 1)
    b[at : at + width] = value.to_bytes(width, rng.choice(("little", "big")))
    return b


def _add_to_int(m, b, rng, other):
    width = rng.choice((1, 2, 4, 8))
    if len(b) < width:
        return None
    at = rng.randrange(len(b) - width + 1)
    order = rng.choice(("little", "big"))
    value = int.from_bytes(b[at : at + width], order) + rng.randint(-35, 35)
    b[at : at + width] = (value % (1 << (8 * width))).to_bytes(width, order)
    return b


_DIGITS = re.compile(rb"-?[0-9]+")


def _ascii_int(m, b, rng, other):
    spans = [x.span() for x in _DIGITS.finditer(b)]
    if not spans:
        return None
    start, end = rng.choice(spans)
    value = int(b[start:end])
    choice = rng.randrange(6)
    if choice == 0:
        value += 1
    elif choice == 1:
        value -= 1
    elif choice == 2:
        value *= 2
    elif choice == 3:
        value //= 2
    elif choice == 4:
        value = rng.choice((0, -1, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**32, 2**63))
    else:
        value = rng.randrange(1000)
    b[start:end] = str(value).encode()
    return b


def _repeat_chunk(m, b, rng, other):
    """Repeat a short chunk many times in place: lets inputs grow towards slow ones.

    Half the time the input ends right after the repetition: prefix + pump with the
    suffix cut off is the classic shape of a catastrophic-backtracking input (the
    closing quote or bracket that would let the pattern match is gone).
    """
    if not b:
        return None
    n = rng.randint(1, min(len(b), 8))
    at = rng.randrange(len(b) - n + 1)
    times = rng.randint(2, max(2, min(256, m.max_len // n)))
    end = len(b) if rng.random() < CUT_AFTER_PUMP else at + n
    b[at:end] = bytes(b[at : at + n]) * times
    return b


def _copy_part(m, b, rng, other):
    if len(b) < 2:
        return None
    n = rng.randint(1, min(len(b), MAX_CHUNK))
    src = rng.randrange(len(b) - n + 1)
    chunk = bytes(b[src : src + n])
    at = rng.randrange(len(b) + 1)
    if rng.random() < 0.5:
        b[at:at] = chunk
    else:
        b[at : at + n] = chunk
    return b


def _crossover(m, b, rng, other):
    if not other:
        return None
    n = rng.randint(1, min(len(other), MAX_CHUNK * 4))
    src = rng.randrange(len(other) - n + 1)
    chunk = other[src : src + n]
    mode = rng.randrange(3)
    if mode == 0:  # splice: head of ours, tail of theirs
        cut = rng.randrange(len(b) + 1)
        return bytearray(b[:cut] + other[rng.randrange(len(other)) :])
    at = rng.randrange(len(b) + 1)
    if mode == 1:
        b[at:at] = chunk
    else:
        b[at : at + n] = chunk
    return b


def _dict_insert(m, b, rng, other):
    if not m.dictionary:
        return None
    token = rng.choice(m.dictionary)
    at = rng.randrange(len(b) + 1)
    b[at:at] = token
    return b


def _dict_overwrite(m, b, rng, other):
    if not m.dictionary:
        return None
    token = rng.choice(m.dictionary)
    at = rng.randrange(len(b) + 1)
    b[at : at + len(token)] = token
    return b


#: Every mutation by name; the names go into artifacts' ``mutation_operators``.
MUTATIONS: dict[str, Mutation] = {
    "erase": _erase,
    "insert-byte": _insert_byte,
    "insert-repeated": _insert_repeated,
    "change-byte": _change_byte,
    "flip-bit": _flip_bit,
    "shuffle": _shuffle,
    "interesting-int": _interesting,
    "add-to-int": _add_to_int,
    "ascii-int": _ascii_int,
    "copy-part": _copy_part,
    "repeat-chunk": _repeat_chunk,
    "crossover": _crossover,
    "dict-insert": _dict_insert,
    "dict-overwrite": _dict_overwrite,
}


class ByteMutator:
    """Stacks libFuzzer-class mutations, clamped to ``max_len``."""

    def __init__(self, max_len: int, dictionary: Sequence[bytes] = ()) -> None:
        self.max_len = max_len
        self.dictionary = list(dictionary)[:MAX_DICTIONARY]
        self.names = list(MUTATIONS)
        self.funcs = [MUTATIONS[n] for n in self.names]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.wins: list[int] = []  # indices of mutations that recently paid off

    def reward(self, ops: Iterable[str]) -> None:
        """Remember that ``ops`` produced new coverage (picked more often for a while)."""
        for op in ops:
            i = self.index.get(op)
            if i is not None:
                self.wins.append(i)
        if len(self.wins) > WIN_MEMORY:
            del self.wins[: len(self.wins) - WIN_MEMORY]

    def mutate(self, data: bytes, rng: random.Random, other: bytes | None = None) -> tuple[bytes, list[str]]:
        """A mutated copy of ``data`` and the names of the mutations applied."""
        buf = bytearray(data)
        applied: list[str] = []
        # Mostly one or two mutations: each extra one risks undoing the useful one.
        depth = min(MAX_STACK, 1 + int(rng.expovariate(1.0)))
        attempts = 0
        while len(applied) < depth and attempts < depth * 4:
            attempts += 1
            if self.wins and rng.random() < WIN_SHARE:
                i = self.wins[rng.randrange(len(self.wins))]
            else:
                i = rng.randrange(len(self.funcs))
            out = self.funcs[i](self, buf, rng, other)
            if out is not None:
                buf = out
                applied.append(self.names[i])
        if len(buf) > self.max_len:
            del buf[self.max_len :]
        return bytes(buf), applied


_TOKEN = re.compile(rb"[A-Za-z0-9_\-]{2,32}|[^A-Za-z0-9_\s]{2,4}|\r\n")


def tokens_from(samples: Iterable[bytes], limit: int = MAX_DICTIONARY) -> list[bytes]:
    """Dictionary tokens (words, punctuation runs, CRLF) harvested from samples."""
    found: dict[bytes, None] = {}
    for sample in samples:
        for match in _TOKEN.finditer(sample):
            found.setdefault(match.group(), None)
            if len(found) >= limit:
                return sorted(found)
    return sorted(found)
