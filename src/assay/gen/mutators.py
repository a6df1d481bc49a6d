"""libFuzzer-class byte mutators.

Each mutator takes the input as a ``bytearray`` plus the case RNG and returns a new
``bytearray`` (or ``None`` when it does not apply, e.g. erasing from an empty
input).  :class:`ByteMutator` stacks a few of them per case and clamps the result
to the target's ``max_len``.  Everything draws only from the RNG it is handed.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Iterable, Sequence

from assay.gen import accelerated
from assay.gen.accelerated import cmutate

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
_INTERESTING = {1: _INTERESTING_8, 2: _INTERESTING_16, 4: _INTERESTING_32}

#: ``other``: a partner for crossover, or a list of candidates to draw it from, or None.
Mutation = Callable[["ByteMutator", bytearray, random.Random, "bytes | list[bytes] | None"], bytearray | None]


def _erase(m: ByteMutator, b: bytearray, rng: random.Random, other: bytes | list[bytes] | None) -> bytearray | None:
    if len(b) < 1:
        return None
    # One draw: 3 in 10 erasures may be long (up to MAX_CHUNK), the rest up to 8 bytes.
    x = rng.randrange(10 << 32)
    longer, x = x % 10 < 3, x // 10
    n = 1 + x % min(len(b), MAX_CHUNK if longer else 8)
    at = (x >> 8) % (len(b) - n + 1)
    del b[at : at + n]
    return b


def _insert_byte(m, b, rng, other):
    at, byte = divmod(rng.randrange((len(b) + 1) << 8), 256)  # one draw for both
    b.insert(at, byte)
    return b


def _insert_repeated(m, b, rng, other):
    x = rng.randrange(1 << 48)  # one draw: length, place, byte
    n = 3 + x % (MAX_CHUNK - 2)
    x //= MAX_CHUNK - 2
    at = x % (len(b) + 1)
    x //= len(b) + 1
    kind = x % 5
    byte = (0, 0xFF, (x >> 3) & 0xFF, 0x20, 0x41)[kind]
    b[at:at] = bytes((byte,)) * n
    return b


def _change_byte(m, b, rng, other):
    if not b:
        return None
    at, byte = divmod(rng.randrange(len(b) << 8), 256)
    b[at] = byte
    return b


def _flip_bit(m, b, rng, other):
    if not b:
        return None
    at, bit = divmod(rng.randrange(len(b) << 3), 8)
    b[at] ^= 1 << bit
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
    x = rng.randrange(1 << 48)  # one draw: width, value, sign, order, place
    width = (1, 2, 4)[x % 3]
    if len(b) < width:
        return None
    x //= 3
    table = _INTERESTING[width]
    value = table[x % len(table)]
    x //= len(table)
    if x & 1:
        value = (-value) & ((1 << (8 * width)) - 1)
    order = "little" if x & 2 else "big"
    at = (x >> 2) % (len(b) - width + 1)
    b[at : at + width] = value.to_bytes(width, order)
    return b


def _add_to_int(m, b, rng, other):
    x = rng.randrange(1 << 48)  # one draw: width, order, delta, place
    width = (1, 2, 4, 8)[x & 3]
    if len(b) < width:
        return None
    order = "little" if x & 4 else "big"
    x >>= 3
    delta = x % 71 - 35
    at = (x // 71) % (len(b) - width + 1)
    value = int.from_bytes(b[at : at + width], order) + delta
    b[at : at + width] = (value % (1 << (8 * width))).to_bytes(width, order)
    return b


#: Longest run of digits ``ascii-int`` reads as one number (a longer run is several:
#: ``int()`` refuses more than 4,300 digits).
MAX_DIGITS = 1000
_DIGITS = re.compile(rb"-?[0-9]{1,%d}" % MAX_DIGITS)


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
    times = rng.randint(2, max(2, min(256, m.cap // n)))
    end = len(b) if rng.random() < CUT_AFTER_PUMP else at + n
    b[at:end] = bytes(b[at : at + n]) * times
    return b


#: Bracket pairs the nesting mutation looks for (its chunk starts at an opener).
_OPENERS = {0x28: 0x29, 0x5B: 0x5D, 0x7B: 0x7D, 0x3C: 0x3E}
#: How far the nesting mutation scans for an opener and for its matching closer.
NEST_SCAN = 512
#: Share of nesting mutations that take a bracketed group; the rest take any chunk.
NEST_STRUCTURAL = 0.75
#: Share of nestings that may pass the campaign's length limit (up to ``max_len``).
NEST_DEEP = 0.25
_OPENER = re.compile(rb"[(\[{<]")


def _nest(m, b, rng, other):
    """Nest a chunk inside itself N times, N log-uniform up to what the length cap allows.

    The chunk is split into left, core and right (``[`` ``1`` ``]``, or
    ``{"a":`` ``1`` ``}``) and becomes left*N + core + right*N: how recursion
    limits are reached (brackets, parentheses, nested tables).  Mostly the chunk
    is a bracketed group whose closer is found by counting depth.
    """
    n = len(b)
    if n < 2:
        return None
    a = c = -1
    if rng.random() < NEST_STRUCTURAL:
        found = _OPENER.search(b, rng.randrange(n), rng.randrange(n) + NEST_SCAN)
        if found is not None:
            i = found.start()
            opener, closer = b[i : i + 1], bytes((_OPENERS[b[i]],))
            k = b.find(closer, i + 1, i + NEST_SCAN)
            while k != -1 and b.count(opener, i, k) != b.count(closer, i, k + 1):
                k = b.find(closer, k + 1, i + NEST_SCAN)
            if k != -1:
                a, c = i, k + 1
    if a < 0:
        a = rng.randrange(n - 1)
        c = rng.randint(a + 2, min(n, a + 16))
    p = rng.randint(a + 1, c - 1)
    q = rng.randint(p, c - 1)
    left, core, right = bytes(b[a:p]), bytes(b[p:q]), bytes(b[q:c])
    if rng.random() < NEST_DEEP:  # past the length limit: recursion limits need hundreds of levels
        m.cap = m.max_len
    room = (m.cap - n + (c - a) - len(core)) // (len(left) + len(right))
    if room < 2:
        return None
    # N log-uniform: depths of every order of magnitude up to what the length allows.
    most = 1 << rng.randint(1, room.bit_length() - 1)
    times = rng.randint(max(2, most // 2), min(room, most))
    b[a:c] = left * times + core + right * times
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
    if type(other) is list:  # the whole corpus: pick the partner only when crossing over
        other = other[rng.randrange(len(other))] if other else None
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


#: Characters Python's text handling treats specially, as the mutation ``unicode-char``
#: writes them (UTF-8): compatibility forms that NFKC folds into ASCII punctuation
#: (U+2100 into "a/c", what urllib.parse's netloc check looks for; fullwidth ``/ # ? @ :``
#: and dots, the IDNA full stop U+3002), case mappings that change length or leave ASCII
#: (U+0130, U+0131, the Kelvin sign, long s, sharp s, the fi ligature), digits ``int()``
#: takes or only ``str.isdigit()`` passes (U+0663, U+FF11, U+00B2), line breaks only
#: ``str.splitlines()`` knows (U+2028, U+0085), spaces (U+00A0, U+3000), the zero-width
#: space, a BOM, a combining mark and a character outside the BMP.  A byte mutation
#: seldom writes a valid multi-byte sequence, let alone one of these.
UNICODE_CHARS = tuple(
    ch.encode()
    for ch in (
        "\u00a0",
        "\u2100",
        "\uff0f",
        "\uff03",
        "\uff1f",
        "\uff20",
        "\uff1a",
        "\u0130",
        "\u0131",
        "\u212a",
        "\u017f",
        "\u00df",
        "\ufb01",
        "\u0663",
        "\uff11",
        "\u00b2",
        "\u2028",
        "\u0085",
        "\u200b",
        "\ufeff",
        "\u0301",
        "\U0001f600",
        "\u3000",
        "\u3002",
        "\uff0e",
        "\u2024",
    )
)


def _unicode_char(m, b, rng, other):
    """Write a character of :data:`UNICODE_CHARS`: inserted, or in place of one byte."""
    x = rng.randrange(1 << 48)  # one draw: character, insert or replace, place
    char = UNICODE_CHARS[x % len(UNICODE_CHARS)]
    x //= len(UNICODE_CHARS)
    if x & 1 and b:
        at = (x >> 1) % len(b)
        b[at : at + 1] = char
    else:
        at = (x >> 1) % (len(b) + 1)
        b[at:at] = char
    return b


#: Share of children allowed past the campaign's current length limit (up to
#: ``max_len``): the long inputs super-linear bugs and deep nesting need.
LONG_SHARE = 1 / 32
#: A parent longer than this many times the length limit (a long child kept for its
#: coverage) has its other children cut to the limit, so it cannot make them all long;
#: one up to it (a comparison replacement lengthened it a little) keeps its length.
LONG_PARENT = 2

#: Mutations that can apply to an empty input.
_INSERTING = ("insert-byte", "insert-repeated", "crossover", "dict-insert", "unicode-char")

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
    "nest": _nest,
    "crossover": _crossover,
    "dict-insert": _dict_insert,
    "dict-overwrite": _dict_overwrite,
    "unicode-char": _unicode_char,
}


class ByteMutator:
    """Stacks libFuzzer-class mutations, clamped to ``max_len``."""

    def __init__(self, max_len: int, dictionary: Sequence[bytes] = ()) -> None:
        self.max_len = max_len
        self.dictionary = list(dictionary)[:MAX_DICTIONARY]
        self.names = list(MUTATIONS)
        self.funcs = [MUTATIONS[n] for n in self.names]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.inserting = [self.index[n] for n in _INSERTING if n in self.index] or list(range(len(self.names)))
        self.wins: list[int] = []  # indices of mutations that recently paid off
        self.cap = max_len  # the length this case's child is cut to (growth mutations aim below it)
        # One draw picks a mutation: below win_cut (WIN_SHARE of the range) a recent win.
        self._picks = (len(self.funcs) * 10, int(len(self.funcs) * 10 * WIN_SHARE))
        #: The C twin of :meth:`mutate` (the same bytes), when it is built and agrees with this module.
        self._c = (
            cmutate
            if (
                accelerated.agrees(globals())
                and tuple(self.names) == cmutate.NAMES  # type: ignore[union-attr]  # agrees() is False without the twin
                and getattr(cmutate, "UNICODE_CHARS", None) == UNICODE_CHARS
            )
            else None
        )
        #: ``mutate(rng, data, other, limit)`` in C, for a ``_cmutate.Random`` and bytes (None without the twin).
        self.mutate_c = None
        if self._c is not None:
            self.mutate_c = functools.partial(
                self._c.mutate, self.max_len, self.dictionary, self.wins, self.inserting, self._c.NAMES, *self._picks
            )

    def reward(self, ops: Iterable[str]) -> None:
        """Remember that ``ops`` produced new coverage (picked more often for a while)."""
        for op in ops:
            i = self.index.get(op)
            if i is not None:
                self.wins.append(i)
        if len(self.wins) > WIN_MEMORY:
            del self.wins[: len(self.wins) - WIN_MEMORY]

    def mutate(
        self, data: bytes, rng: random.Random, other: bytes | list[bytes] | None = None, limit: int | None = None
    ) -> tuple[bytes, list[str]]:
        """A mutated copy of ``data`` and the names of the mutations applied.

        ``limit`` is the campaign's current length limit: a child longer than both
        it and ``data`` is cut to it, and so is a child of a parent longer than
        :data:`LONG_PARENT` times it, except a :data:`LONG_SHARE` of children (and
        deep nestings, :data:`NEST_DEEP`), which may reach ``max_len``.
        """
        if self.mutate_c is not None and type(rng) is self._c.Random and type(data) is bytes:  # type: ignore[union-attr]  # mutate_c implies _c
            return self.mutate_c(rng, data, other, limit)
        buf = bytearray(data)
        applied: list[str] = []
        # Mostly one or two mutations: each extra one risks undoing the useful one.
        # (1 + int(expovariate(1)), capped at MAX_STACK, from a single draw.)
        r = rng.random()
        depth = 1 + (r < 0.36788) + (r < 0.13534) + (r < 0.04979) + (r < 0.01832)
        if depth > MAX_STACK:
            depth = MAX_STACK
        # Growth mutations size their output by self.cap.
        if limit is None or (r * 1024) % 1 < LONG_SHARE:  # low bits of the same draw: independent of depth
            self.cap = self.max_len
        else:
            if len(buf) > LONG_PARENT * limit:
                del buf[limit:]  # mutate the part the child keeps
            self.cap = max(limit, len(buf))
        funcs, names, wins = self.funcs, self.names, self.wins
        n_picks, win_cut = self._picks
        n_funcs = len(funcs)
        attempts = depth * 8
        while attempts:
            attempts -= 1
            if not buf:  # most mutations need a byte to work on: only the inserting ones can apply
                i = self.inserting[rng.randrange(len(self.inserting))]
            else:
                high, k = divmod(rng.randrange(n_picks << 20), n_picks)  # high: which win, if a win
                i = wins[high % len(wins)] if wins and k < win_cut else k % n_funcs
            out = funcs[i](self, buf, rng, other)
            if out is not None:
                buf = out
                applied.append(names[i])
                if len(applied) == depth:
                    break
        if len(buf) > self.cap:
            del buf[self.cap :]
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
