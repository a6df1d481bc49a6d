"""Search mazes, round two: progress that only a branch direction, a compared value
or a decoded comparison shows, and one that only a non-ASCII character reaches.

Used by tests/test_search_mazes.py and ``bench/time_to_bug.py``.  Each raises
``RuntimeError`` once solved; nothing else ever fails.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import urllib.parse

import assay


@assay.target(seeds=[b"hello world"], max_len=64)
def maze_branch_ternary(data: bytes) -> None:
    """Four conditional expressions: each direction differs only by its branch edge.

    Every site runs 40 times per input from the first input on (a hot loop, as in a
    parser), and each condition's constant depends on the one before (256 matches
    no byte), so the four directions must be found one after another at sites that
    have long gone one way.
    """
    if len(data) < 4:
        return
    for _ in range(40):
        a = 1 if data[0] == 0x4D else 0
        b = 1 if data[1] == (0x41 if a else 256) else 0
        c = 1 if data[2] == (0x5A if b else 256) else 0
        d = 1 if data[3] == (0x45 if c else 256) else 0
    if d:
        raise RuntimeError("maze: four conditional expressions")


@assay.target(seeds=[b"hello world"], max_len=64)
def maze_branch_mixed(data: bytes) -> None:
    """An ``and`` chain, a comprehension filter and a ``while`` condition, one line each.

    Each part needs the one before (independent parts would also need a lucky
    combination of inputs that each solved one).
    """
    if len(data) < 6:
        return
    chain = data[0] == 0x4D and data[1] == 0x41 and data[2] == 0x5A
    kept = [x for x in data[3:4] if chain and x == 0x45]
    n = 0
    while kept and n < 2 and data[4 + n] == 0x21: n += 1  # noqa: E701 - the body on the condition's line  # fmt: skip
    if n == 2:
        raise RuntimeError("maze: and chain, comprehension filter, while condition")


@assay.target(seeds=[b"hello world"], max_len=64)
def maze_branch_joins(data: bytes) -> None:
    """Four ``or`` exits, each a jump into the join where the operands meet.

    As maze_branch_ternary, but each wanted direction runs into a join: no instruction
    of its own in the original code (only a ``BRANCH`` event, or an edge split, can
    report it) and no new line.  Each constant depends on the one before by
    arithmetic, not by another branch, and every site runs 40 times per input.
    """
    if len(data) < 4:
        return
    for _ in range(40):
        a = data[0] == 0x4D or data[0] == 0x100
        b = data[1] == 0x41 + 0x100 * (1 - a) or data[1] == 0x100
        c = data[2] == 0x5A + 0x100 * (1 - b) or data[2] == 0x100
        d = data[3] == 0x45 + 0x100 * (1 - c) or data[3] == 0x100
    if d:
        raise RuntimeError("maze: four or exits into joins")


_TRANSITIONS = {
    "START": ("LOGIN", "AUTHED"),
    "AUTHED": ("SELECT", "SELECTED"),
    "SELECTED": ("FETCH", "FETCHED"),
    "FETCHED": ("LOGOUT", "DONE"),
}


@assay.target(seeds=[b"HELO a b c d"], max_len=64)
def maze_protocol_state(data: bytes) -> None:
    """Verbs checked in order against a transition table: every step runs the same lines."""
    state = "START"
    for verb in data.decode("latin-1").split():
        expected, nxt = _TRANSITIONS[state]
        if verb != expected:
            return
        state = nxt
        if state == "DONE":
            raise RuntimeError("maze: protocol state machine")


@assay.target(seeds=[b"ff;1.5;aGVsbG8=;guest;0007"], max_len=96)
def maze_decoded_fields(data: bytes) -> None:
    """Fields compared after decoding: hex, float, urlsafe base64, casefold, zero-padded int."""
    parts = data.split(b";")
    if len(parts) != 5:
        return
    try:
        if int(parts[0], 16) != 0xC0DEC0DE:
            return
        if float(parts[1]) != 6.25e2:
            return
        if base64.urlsafe_b64decode(parts[2]) != b"\xfb\xffassay":
            return
        if parts[3].decode().casefold() != "admin":
            return
        if int(parts[4]) != 4242:
            return
    except ValueError:  # binascii.Error and UnicodeDecodeError too
        return
    raise RuntimeError("maze: decoded fields")


@assay.target(seeds=[b'{"mode": "read", "n": 1}'], max_len=96)
def maze_decoded_json(data: bytes) -> None:
    """A JSON value whose expected string needs escaping to stay valid JSON."""
    try:
        doc = json.loads(data)
    except ValueError:
        return
    if isinstance(doc, dict) and doc.get("mode") == 'purge "all"\\now':
        raise RuntimeError("maze: JSON-escaped value")


_REQUEST = re.compile(rb"(\w+)=(\d+)")


@assay.target(seeds=[b"user=17"], max_len=64)
def maze_regex_compound(data: bytes) -> None:
    """A regex match whose groups are compared: one to a word, one after ``int()``."""
    m = _REQUEST.fullmatch(data)
    if m and m.group(1) == b"limit" and int(m.group(2)) == 65000:
        raise RuntimeError("maze: regex groups")


_STAMP = re.compile(rb"(\d\d):(\d\d)(?:(Z)|([+-])(\d\d):(\d\d))?")


@assay.target(seeds=[b"at 07:32-08:00 ok"], max_len=64)
def maze_regex_alternative(data: bytes) -> None:
    """A regex's other alternative: the zulu suffix, which no comparison names."""
    m = _STAMP.search(data)
    if m and m.group(3) and m.group(1) == b"23":
        raise RuntimeError("maze: a regex alternative")


@assay.target(seeds=[b"abcdefgh"], max_len=64)
def maze_transform_xor(data: bytes) -> None:
    """A key compared after a byte-wise xor (an AFL++ CmpLog transform)."""
    if bytes(b ^ 0x5A for b in data[:6]) == b"\x1b\x09\x09\x1b\x03\x7b":
        raise RuntimeError("maze: xor transform")


@assay.target(seeds=[b"http://example.com/index.html"], max_len=64)
def maze_unicode_netloc(data: bytes) -> None:
    """urllib.parse's own check: a host that NFKC folds into a delimiter (CVE-2019-9636)."""
    try:
        urllib.parse.urlsplit(data.decode("utf-8", "surrogateescape"))
    except ValueError as e:
        if "NFKC" in str(e):
            raise RuntimeError("maze: a netloc that NFKC folds into a delimiter") from e


#: Built at run time, so that no literal in the source hands them to the dictionary.
_VERB = bytes((0x51, 0x55, 0x4F, 0x54, 0x41))
_SCOPE = bytes((0x73, 0x68, 0x61, 0x72, 0x65, 0x64))


@functools.cache
def _verb_kind(verb: bytes) -> int:
    return 1 if verb == _VERB else 0


@functools.cache
def _scope_kind(scope: bytes) -> int:
    return 2 if scope == _SCOPE else 0


@assay.target(seeds=[b"GET user 17"], max_len=64)
def maze_memoized(data: bytes) -> None:
    """Comparisons inside ``functools.lru_cache`` helpers, as a parser memoizes its lookups.

    An entry's comparisons are recorded after its plain run, when the caches already
    hold its words: a hit runs none of the helper's code.
    """
    verb, _, rest = data.partition(b" ")
    scope, _, _ = rest.partition(b" ")
    if _verb_kind(verb) + _scope_kind(scope) == 3:
        raise RuntimeError("maze: comparisons behind a memo cache")
