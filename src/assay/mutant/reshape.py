"""Structural variations of an input that reaches a survivor's mutated line.

Reaching the mutated line is not telling the mutant apart when the difference
lies in the shape of the input rather than in one value at the compared place.
Two shapes that line-based protocols (headers, records, form uploads) check,
and that byte mutations and the comparison log rarely make (a folded line is not
one of them: the parser compares a line's first byte with a space or a tab, and
the comparison log puts one there within a few dozen cases):

* **A repeated line.**  State one line sets is checked when the next line like it
  arrives (``Content-Length`` given twice, a key defined again): a copy of a line
  with its last word replaced by one of the mutated line's constants goes in before
  it, a plain copy after it.
* **A shifted delimiter.**  A push parser that reads its input in fixed chunks
  handles a delimiter split across two reads on its own path: each occurrence of a
  repeated line (a delimiter) moves by 1 to :data:`MAX_SHIFT` bytes, across every
  offset of a read of up to that size.

:func:`pairs` gives them as (pattern, replacement) pairs for the engine's
input-to-state stage, each pattern the shortest run of bytes whose first
occurrence ends (or, at the start, begins) at the place of the change.
"""

from __future__ import annotations

import re

#: Lines of an entry looked at (the first ones: a header block comes before its body).
MAX_LINES = 24
#: Constants a repeated line's last word is replaced with (the mutated line's own come first).
MAX_VALUES = 4
#: Largest shift of a delimiter: every offset within a read of up to this many bytes.
MAX_SHIFT = 16
#: Pairs given per entry at most.
MAX_PAIRS = 256
#: Longest anchor a pair's pattern is (see :func:`_insertion`).
MAX_ANCHOR = 64
#: A word of an input: what the aim and the reshaped lines replace (a run without separators or quotes).
WORD = re.compile(rb"[^\s:;=,&/?#()<>\[\]{}\"']+")


def pairs(data: bytes, values: list[bytes], max_len: int, repeat: bool = True) -> list[tuple[bytes, bytes]]:
    """Replacement pairs that repeat and shift the lines of ``data`` (none longer than ``max_len``).

    ``values`` are the mutated line's constants as bytes, best first.  A line ends
    at ``\\n`` or ``\\r\\n`` (each its own: a first line may end otherwise than the rest);
    what is put in after a line ends as that line does.  Without ``repeat`` only a
    delimiter's first occurrence moves (its preamble, which random mutations of a
    valid prefix rarely make), and no line is repeated.
    """
    lines = _lines(data)
    if len(lines) < 2:
        return []
    room = max_len - len(data)
    out: list[tuple[bytes, bytes]] = []

    def insert(at: int, text: bytes) -> None:
        pair = _insertion(data, at, text) if len(text) <= room else None
        if pair is not None:
            out.append(pair)

    for at, filler, eol in _delimiters(data, lines):
        if repeat or eol:
            for k in range(1, MAX_SHIFT + 1):
                insert(at, filler * k + eol)
    for start, end, eol in lines if repeat else ():
        line = data[start:end]
        if not line.strip():
            continue
        # A copy with a constant goes first (it sets the state the line itself is then checked
        # against); a plain copy goes after (the line again, as a second record).
        for copy in _with_last_word(line, values[:MAX_VALUES]):
            insert(start, copy + (eol or lines[-2][2]))
        if eol:
            insert(end + len(eol), line + eol)
        else:  # the last line, unterminated
            insert(end, lines[-2][2] + line)
    return list(dict.fromkeys(p for p in out if p[0] != p[1]))[:MAX_PAIRS]


def _lines(data: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, terminator) of the first :data:`MAX_LINES` lines of ``data``, ``end`` before the terminator."""
    lines: list[tuple[int, int, bytes]] = []
    start = 0
    while start < len(data) and len(lines) < MAX_LINES:
        nl = data.find(b"\n", start)
        if nl == -1:
            lines.append((start, len(data), b""))
            break
        end = nl - 1 if nl > start and data[nl - 1] == 0x0D else nl
        lines.append((start, end, data[end : nl + 1]))
        start = nl + 1
    return lines


def _with_last_word(line: bytes, values: list[bytes]) -> list[bytes]:
    words = WORD.findall(line)
    if not words:
        return []
    last = words[-1]
    at = line.rfind(last)
    return [line[:at] + v + line[at + len(last) :] for v in values if v != last]


def _delimiters(data: bytes, lines: list[tuple[int, int, bytes]]) -> list[tuple[int, bytes, bytes]]:
    """Where a shift of each occurrence of a delimiter goes: (offset, filler byte, terminator or nothing).

    A delimiter is a line of two or more bytes that a later line repeats or starts
    with (``--b`` and the closing ``--b--``).  Its first occurrence moves by a line of
    filler put in before it (a preamble); a later one by growing the line before it
    (the body it ends).
    """
    found: list[tuple[int, bytes, bytes]] = []
    texts = [data[start:end] for start, end, _ in lines]
    for i, (start, _, eol) in enumerate(lines):
        line = texts[i]
        if len(line.strip()) < 2:
            continue
        if any(line.startswith(t) for t in texts[:i] if len(t.strip()) >= 2):
            before_start, before_end, _ = lines[i - 1]
            filler = data[before_end - 1 : before_end] if before_end > before_start else b"A"
            found.append((before_end, filler, b""))
        elif any(t.startswith(line) for t in texts[i + 1 :]):
            found.append((start, b"A", eol or b"\n"))
    return found


def _insertion(data: bytes, at: int, text: bytes) -> tuple[bytes, bytes] | None:
    """A pair whose first application to ``data`` puts ``text`` at offset ``at`` (None: no short anchor).

    The anchor is the shortest run of at most :data:`MAX_ANCHOR` bytes ending at ``at``
    whose first occurrence is there, else one starting at ``at``: in a long run of
    one byte neither exists, and a longer search would cost the length squared.
    """
    for n in range(1, min(at, MAX_ANCHOR) + 1):
        anchor = data[at - n : at]
        if data.find(anchor) == at - n:
            return anchor, anchor + text
    for n in range(1, min(len(data) - at, MAX_ANCHOR) + 1):
        anchor = data[at : at + n]
        if data.find(anchor) == at:
            return anchor, text + anchor
    return None
