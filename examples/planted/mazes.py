"""Search mazes: planted bugs behind comparisons a fuzzer must get past.

Used by the test suite and by ``bench/time_to_bug.py``.  Each raises
``RuntimeError`` once solved; nothing else ever fails.
"""

from __future__ import annotations

import zlib

import assay


@assay.target(seeds=[b"hello"], max_len=64)
def maze_magic_slice(data: bytes) -> None:
    """A 4-byte magic compared as a slice."""
    if data[:4] == b"\x7fELF":
        raise RuntimeError("maze: magic slice")


@assay.target(seeds=[b"hello"], max_len=64)
def maze_magic_startswith(data: bytes) -> None:
    """The same magic through ``startswith``."""
    if data.startswith(b"\x89PNG"):
        raise RuntimeError("maze: magic startswith")


@assay.target(seeds=[b"GET / x"], max_len=64)
def maze_keyword_str(data: bytes) -> None:
    """A keyword compared as ``str`` after decoding and splitting."""
    words = data.decode("latin-1").split()
    if words and words[0] == "PROPFIND":
        raise RuntimeError("maze: keyword")


@assay.target(seeds=[b"id,7,name"], max_len=64)
def maze_int_field(data: bytes) -> None:
    """An integer field compared to a constant."""
    fields = data.split(b",")
    if len(fields) > 2 and fields[1].isdigit() and int(fields[1]) == 48879:
        raise RuntimeError("maze: integer field")


def _magic() -> int:
    # Computed at run time so it is not a literal a fuzzer could harvest.
    return zlib.crc32(b"assay") & 0xFFFF


@assay.target(seeds=[b"\x00\x00rest"], max_len=64)
def maze_computed_magic(data: bytes) -> None:
    """A 16-bit magic that is no literal in the source (only comparison feedback sees it)."""
    if len(data) >= 2 and int.from_bytes(data[:2], "big") == _magic():
        raise RuntimeError("maze: computed magic")


@assay.target(seeds=[b"\x00\x00\x00\x00body"], max_len=64)
def maze_checksum(data: bytes) -> None:
    """A branch guarded by a CRC-32 of the payload."""
    if len(data) >= 8 and int.from_bytes(data[:4], "little") == zlib.crc32(data[4:]):
        if data[4:7] == b"CMD":
            raise RuntimeError("maze: checksum")


try:
    from hypothesis import given, strategies as st
except ImportError:  # hypothesis is a dev dependency; the other mazes need nothing
    pass
else:

    @assay.target(max_len=256)
    @given(st.text(max_size=40), st.integers(0, 1000))
    def maze_given_roundtrip(text: str, n: int) -> None:
        """A Hypothesis @given test as a target: a planted round-trip bug."""
        encoded = f"{n}:{text}"
        head, _, rest = encoded.partition(":")
        assert int(head) == n
        if n == 7 and text:  # the planted bug: n == 7 loses the text
            rest = ""
        assert rest == text, "round trip lost the text"


@assay.target(seeds=[b"x[y]z"], max_len=4096, slow=0.01, timeout=5.0)
def slow_quadratic(data: bytes) -> int:
    """Quadratic: every '[' rescans the rest of the input in Python."""
    closers = 0
    for i, byte in enumerate(data):
        if byte == 0x5B:
            closers += sum(1 for later in data[i:] if later == 0x5D)
    return closers


@assay.target(seeds=[b"abc"], max_len=256, slow=0.05, timeout=3.0)
def slow_redos(data: bytes) -> None:
    """A catastrophic regex (nested quantifier): exponential backtracking in C."""
    import re

    re.match(rb"^(a+)+$", data)


@assay.target(seeds=[b"abc"], max_len=4096, slow=0.02, timeout=2.0)
def slow_linear(data: bytes) -> int:
    """Slow but linear: must never be reported as a slow finding."""
    total = 0
    for _ in range(40):
        for byte in data:
            total += byte
    return total
