"""Code measured by test_feedback.py (kept apart so the tests' own code is out of scope)."""

import functools
import re


def branchy(x: int) -> int:
    if x > 5:
        return 1
    return 2


def looped(n: int) -> int:
    total = 0
    for i in range(n):
        if i == 7:
            total += 100
        total += i
    return total


def gate(x: int) -> str:
    if x == 1:
        return "a"
    return "b"


def framed(data: bytes) -> str:
    """A frame whose first four bytes must equal a checksum of the rest."""
    import zlib

    stored = int.from_bytes(data[:4], "big")
    if stored == zlib.crc32(data[4:]):
        return "ok"
    return "bad"


def ternary(x: int) -> int:
    """Both directions of the conditional expression run on the same line."""
    a = 1 if x == 7 else 0
    return a


def guarded(x: int) -> int:
    """The false direction of ``x != 7`` runs into a join: no instruction of its own."""
    total = 1
    if x != 7:
        total = 2
    if x == 99:
        return 0
    return total


HEX = frozenset("0123456789abcdefABCDEF")


def hex_escape(text: str) -> str:
    """A character-class check, as tomllib's ``parse_hex_char`` makes one."""
    field = text[2:6]
    if text.startswith("\\u") and HEX.issuperset(field):
        return chr(int(field, 16))
    return ""


def scalar_escape(field: str) -> str:
    """A range check written as chained comparisons, as tomllib's ``is_unicode_scalar_value``."""
    cp = int(field, 16)
    if 0 <= cp <= 0xD7FF or 0xE000 <= cp <= 0x10FFFF:
        return chr(cp)
    raise ValueError("not a Unicode scalar value")


CALLS: list[str] = []


def noted(name: str, value: int) -> int:
    CALLS.append(name)
    return value


def chained(x: int) -> bool:
    """A chain whose later operands must be evaluated once each, and only when reached."""
    return noted("a", 0) < noted("b", x) < noted("c", 10) != (noted("d", x) < noted("e", 5) < noted("f", 7))


# Join shapes named in issue 13: each one's rare direction runs into a join or a lone
# instruction, and shows no new line of its own.
def either(data: bytes) -> int:
    """``and``/``or``: the short-circuit exits."""
    ok = data[0] == 1 and data[1] == 2
    alt = data[2] == 3 or data[3] == 4
    return ok + alt


def kept(data: bytes) -> list[int]:
    """A comprehension filter: a rejected element goes straight back to the loop head."""
    return [b for b in data if b != 0x41]


def counted(data: bytes) -> int:
    """A ``while`` condition with a second test."""
    i = 0
    while i < len(data) and data[i] != 0x2C: i += 1  # noqa: E701 - the body on the condition's line  # fmt: skip
    return i


def skipped(data: bytes) -> int:
    """``continue`` in a loop: the direction is a lone back jump."""
    n = 0
    for b in data:
        if b == 0x20: continue  # noqa: E701 - the direction is a lone back jump  # fmt: skip
        n += 1
    return n


def tolerant(data: bytes) -> int:
    """A ``continue`` inside ``try``: its moved back jump needs the same handler."""
    n = 0
    try:
        for b in data:
            if b == 0x20: continue  # noqa: E701 - the direction is a lone back jump  # fmt: skip
            n += 10 // b
    except ZeroDivisionError:
        n = -1
    return n


def searched(data: bytes) -> int:
    """A ``for`` ended by ``break`` or by running out: both go on at the same join."""
    for b in data:
        if b == 0x20:
            break
    size = len(data)
    return size * 2 + size // 3


def classified(token: str, limit: object) -> str:
    """Membership both ways, and an ordering that raises when ``limit`` is not a number."""
    if token in ("GET", "PUT"):
        return "verb"
    if token not in "abc" and token != "":
        return "other" if len(token) < limit else "long"
    return "letter"


WORDS = frozenset({"alpha", "beta", "gamma", 7, 3.5, None, b"raw"})
MANY = tuple(f"w{i}" for i in range(20))  # past the 16 elements recorded


def membership(token: object) -> int:
    """Membership in each kind of container, as a parser tests a character or a keyword."""
    hits = 0
    hits += token in WORDS
    hits += token in {"x", "yy", str(token) + "!"}
    hits += token in {"k1": 1, "k2": 2}
    hits += token in ["l1", 2, ("t",), b"b"]
    hits += token in MANY
    hits += token in list(range(5000))  # too long to record
    if isinstance(token, str):
        hits += token in "a beta z"
        hits += bytearray(token.encode()) in b"beta"
    return hits


@functools.cache
def memo_counted(data: bytes) -> int:
    """``counted`` behind a memo cache (a C object wrapping the function)."""
    i = 0
    while i < len(data) and data[i] != 0x2C: i += 1  # noqa: E701 - the body on the condition's line  # fmt: skip
    return i


class Signs:
    @functools.cache  # noqa: B019 - the memoized method is the subject under test
    def sign(self, ch: str) -> int:
        """A memoized method: a comparison a cache hit skips."""
        return 1 if ch == "+" else -1


SIGNS = Signs()


def offset(text: str) -> int:
    """A parser's memoized helper: the sign of ``-hh``/``+hh``, through two caches."""
    return memo_sign(text[0]) * SIGNS.sign(text[0]) * int(text[1:])


@functools.cache
def memo_sign(ch: str) -> int:
    return 1 if ch == "+" else -1


STAMP = re.compile(
    r"""
    (\d{2}):(\d{2})           # hour and minute
    (?:(Z)|([+-])(\d{2}))?    # zulu, or an offset
""",
    re.VERBOSE,
)


def stamp(text: str, at: int = 0) -> str:
    """A regex with an optional alternative, as a date parser has; and ``re``'s own function."""
    m = STAMP.match(text, at)
    if m is None:
        return "hex" if re.fullmatch(r"[0-9a-f]{4}", text) else "none"
    return "zulu" if m.group(3) else "local"


def paired(data: bytes) -> str:
    """Two four-byte fields that must be equal, compared in code nested in the function (a generator)."""
    return "ok" if any(head == data[4:8] for head in [data[:4]]) else "bad"
