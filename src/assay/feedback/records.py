"""Length-prefixed records (TLV) in an input, and replacements that keep them consistent.

A binary format made of records (a PNG chunk: length, type, data, CRC; a DER
element: tag, length, contents; a protobuf field: key, length, bytes) counts a
record only when its length prefix matches what follows.  A comparison's
replacement that changes a body's length, or a record inserted by hand, breaks
the prefix (and every enclosing one): the parser then reads garbage where the
next record should be, and no random mutation fixes the lengths in the same step.

So when a corpus entry is analysed, :func:`record_pairs` looks for a layout that
tiles the input (after a header of up to :data:`MAX_START` bytes) into at least
:data:`MIN_RECORDS` records, each body possibly records of its own, and turns
what the comparisons revealed into replacements of whole records with every
length (and CRC) written anew:

* a comparison's replacement inside a body, the record rebuilt around it (and an
  empty body compared with a value: that value in it);
* a record with a tag the comparisons named (a type from a small set) inserted:
  after the first record of a nested message (with that record's body, or wrapping
  a copy of it), before the last top-level record (with the first one's body), after
  the first (empty, or wrapping a copy of it where records nest);
* a record repeated, or left out.

Each pair replaces the outermost record that changes, so it applies to the entry
as :func:`assay.feedback.cmplog.replace_one` applies every pair.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: Header bytes (a magic number, a version) skipped looking for the first record.
MAX_START = 16
#: Fewest top-level records a layout must tile the input into (one matches by chance).
MIN_RECORDS = 2
#: Deepest nesting of records inside record bodies followed.
MAX_DEPTH = 4
#: Longest input searched for records (the search tries every layout at every start).
MAX_INPUT = 4096
#: Most replacement pairs one input gets from its records.
MAX_RECORD_PAIRS = 48
#: Most tags the comparisons named that get an inserted record.
MAX_TAGS = 16
#: Most places in the input one comparison's replacement is rebuilt at.
MAX_SPOTS = 4


#: Input that is text (no control byte but tab and line ends): a message of records has
#: small lengths and varints, which are control bytes.
_TEXT = re.compile(rb"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")


@dataclass(eq=False)
class Record:
    """One record: its bytes are ``data[start:end]``, its body ``data[body_start:body_end]``."""

    layout: Layout
    start: int
    end: int
    tag: bytes
    body_start: int
    body_end: int
    sized: bool = True  # its length is written in its header (a protobuf varint field's is not)
    children: list[Record] | None = None
    parent: Record | None = field(default=None, repr=False)


class Layout:
    """How one kind of record is read and written."""

    name = "?"
    nests = False
    #: Whether the records may follow a header (a file's magic number); a message that is
    #: records from its first byte (DER, protobuf) would otherwise tile text by chance.
    headed = False

    def read(self, data: bytes, pos: int, end: int) -> Record | None:
        raise NotImplementedError

    def write(self, record: Record, body: bytes) -> bytes:
        raise NotImplementedError

    def accepts(self, tag: bytes) -> bool:
        """Whether ``tag`` can be a record's tag."""
        raise NotImplementedError


class Chunk(Layout):
    """Length, then a tag, then the body, then optionally a CRC-32 of tag and body (PNG)."""

    def __init__(self, width: int, order: str, tag: int, crc: bool) -> None:
        self.width, self.order, self.tag_width, self.crc = width, order, tag, crc
        self.name = f"chunk{width}{order[0]}{tag}{'c' if crc else ''}"
        self.headed = True

    def read(self, data: bytes, pos: int, end: int) -> Record | None:
        head = pos + self.width + self.tag_width
        if head > end:
            return None
        n = int.from_bytes(data[pos : pos + self.width], self.order)  # type: ignore[arg-type]  # "big"/"little"
        stop = head + n + (4 if self.crc else 0)
        if stop > end:
            return None
        tag = data[pos + self.width : head]
        if self.crc and zlib.crc32(data[pos + self.width : head + n]) != int.from_bytes(data[head + n : stop], "big"):
            return None
        return Record(self, pos, stop, tag, head, head + n)

    def write(self, record: Record, body: bytes) -> bytes:
        out = len(body).to_bytes(self.width, self.order) + record.tag + body  # type: ignore[arg-type]
        return out + zlib.crc32(record.tag + body).to_bytes(4, "big") if self.crc else out

    def accepts(self, tag: bytes) -> bool:
        return len(tag) == self.tag_width


class Der(Layout):
    """A tag byte, a length (short form, or ``0x81``/``0x82`` and one or two bytes), the contents."""

    name = "der"
    nests = True

    def read(self, data: bytes, pos: int, end: int) -> Record | None:
        if pos + 2 > end or not self.accepts(data[pos : pos + 1]):
            return None
        first = data[pos + 1]
        if first < 0x80:
            n, head = first, pos + 2
        elif first in (0x81, 0x82):
            width = first - 0x80
            head = pos + 2 + width
            if head > end:
                return None
            n = int.from_bytes(data[pos + 2 : head], "big")
        else:
            return None
        if head + n > end:
            return None
        return Record(self, pos, head + n, data[pos : pos + 1], head, head + n)

    def write(self, record: Record, body: bytes) -> bytes:
        n = len(body)
        if n < 0x80:
            size = bytes([n])
        elif n < 0x100:
            size = b"\x81" + bytes([n])
        else:
            size = b"\x82" + (n & 0xFFFF).to_bytes(2, "big")
        return record.tag + size + body

    def accepts(self, tag: bytes) -> bool:
        # Universal primitive types, SEQUENCE and SET, context-specific tags: not the
        # application class (0x40-0x7F, where ASCII letters fall) nor multi-byte tags.
        return len(tag) == 1 and (0x01 <= tag[0] <= 0x1E or tag[0] in (0x30, 0x31) or 0x80 <= tag[0] <= 0xBE)


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int] | None:
    value = shift = 0
    while pos < end and shift < 64:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7
    return None


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a protobuf varint."""
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


class Protobuf(Layout):
    """A protobuf field: a varint key (field number, wire type), then a varint, 8 bytes,
    a varint length and that many bytes, or 4 bytes."""

    name = "protobuf"
    nests = True

    def read(self, data: bytes, pos: int, end: int) -> Record | None:
        key = _varint(data, pos, end)
        if key is None or key[0] >> 3 == 0:
            return None
        wire, head = key[0] & 7, key[1]
        tag = data[pos:head]
        if wire == 0:
            value = _varint(data, head, end)
            return None if value is None else Record(self, pos, value[1], tag, head, value[1], sized=False)
        if wire in (1, 5):
            stop = head + (8 if wire == 1 else 4)
            return None if stop > end else Record(self, pos, stop, tag, head, stop, sized=False)
        if wire != 2:
            return None
        size = _varint(data, head, end)
        if size is None or size[1] + size[0] > end:
            return None
        return Record(self, pos, size[1] + size[0], tag, size[1], size[1] + size[0])

    def write(self, record: Record, body: bytes) -> bytes:
        return record.tag + varint(len(body)) + body if record.sized else record.tag + body

    def accepts(self, tag: bytes) -> bool:
        return _varint(tag, 0, len(tag)) is not None


#: The layouts tried, most specific first: PNG's chunks (CRC-checked), then chunks with a
#: 4-byte length and a 4- or 1-byte type, or a 2-byte length and a 2- or 1-byte type,
#: either byte order, then DER and protobuf (from the first byte only).
LAYOUTS: tuple[Layout, ...] = (
    Chunk(4, "big", 4, True),
    *(Chunk(w, o, t, False) for w, t in ((4, 4), (4, 1), (2, 2), (2, 1)) for o in ("big", "little")),
    Der(),
    Protobuf(),
)


def _tile(layout: Layout, data: bytes, pos: int, end: int, depth: int) -> list[Record] | None:
    """The records of ``layout`` that tile ``data[pos:end]`` exactly, or None."""
    out: list[Record] = []
    while pos < end:
        record = layout.read(data, pos, end)
        if record is None:
            return None
        if layout.nests and record.sized and depth < MAX_DEPTH and record.body_end > record.body_start:
            record.children = _tile(layout, data, record.body_start, record.body_end, depth + 1)
            for child in record.children or ():
                child.parent = record
        out.append(record)
        pos = record.end
    return out


def find_records(data: bytes) -> list[Record]:
    """The top-level records of the layout that tiles the most of ``data`` (``[]`` if none does)."""
    if len(data) > MAX_INPUT or _TEXT.fullmatch(data) is not None:
        # Text: spaces and newlines read as protobuf keys and tile it by chance, and a
        # chunk's length field (below 2,304: a zero or control byte) cannot occur in it.
        return []
    best: list[Record] = []
    for layout in LAYOUTS:
        for start in range(min(MAX_START, len(data)) + 1 if layout.headed else 1):
            if best and len(data) - start <= len(data) - best[0].start:
                break  # covers no more than the best so far
            records = _tile(layout, data, start, len(data), 0)
            if records is not None and len(records) >= MIN_RECORDS:
                best = records
                break
        if best and isinstance(layout, Chunk) and layout.crc:
            return best  # its CRCs matched: no chance tiling
    return best


def _rebuilt(data: bytes, record: Record, new: bytes) -> tuple[bytes, bytes]:
    """(the outermost record holding ``record``, it with ``record``'s bytes replaced by
    ``new`` and every enclosing length written anew)."""
    while record.parent is not None:
        parent = record.parent
        body = data[parent.body_start : record.start] + new + data[record.end : parent.body_end]
        new = parent.layout.write(parent, body)
        record = parent
    return data[record.start : record.end], new


def _walk(records: Iterable[Record]) -> Iterable[Record]:
    for record in records:
        yield record
        yield from _walk(record.children or ())


def _innermost(records: list[Record], at: int, n: int) -> Record | None:
    """The innermost sized record whose body holds ``data[at:at + n]``."""
    found = None
    for record in _walk(records):
        if record.body_start <= at and at + n <= record.body_end and record.sized:
            found = record
    return found


def _tags(records: list[Record], compared: Iterable[tuple[Any, Any]]) -> list[bytes]:
    """Tags the comparisons named: the other operand of a comparison of a record's tag
    (its bytes, its byte's value, or a protobuf key's field number)."""
    tags: dict[bytes, None] = {}
    by_bytes: set[bytes] = set()
    by_value: dict[int, Record] = {}
    for record in _walk(records):
        by_bytes.add(record.tag)
        if isinstance(record.layout, Protobuf):
            key = _varint(record.tag, 0, len(record.tag))
            if key is not None:
                by_value.setdefault(key[0] >> 3, record)
        elif len(record.tag) == 1:
            by_value.setdefault(record.tag[0], record)
    for a, b in compared:
        for x, y in ((a, b), (b, a)):
            if isinstance(x, str) and isinstance(y, str):
                x, y = x.encode("latin-1", "replace"), y.encode("latin-1", "replace")
            if isinstance(x, (bytes, bytearray)) and isinstance(y, (bytes, bytearray)):
                if bytes(x) in by_bytes and len(y) == len(x) and y != x:
                    tags.setdefault(bytes(y), None)
            elif type(x) is int and type(y) is int and x != y and 0 < y < 1 << 29:
                named = by_value.get(x)
                if named is None:
                    continue
                if isinstance(named.layout, Protobuf):
                    key = _varint(named.tag, 0, len(named.tag))
                    tags.setdefault(varint(y << 3 | 2), None)  # a length-delimited field first: it can hold anything
                    if key is not None and key[0] & 7 != 2:
                        tags.setdefault(varint(y << 3 | key[0] & 7), None)
                elif y < 0x100:
                    tags.setdefault(bytes([y]), None)
        if len(tags) >= MAX_TAGS:
            break
    return list(tags)


def record_pairs(
    data: bytes, compared: list[tuple[Any, Any]], replacements: Iterable[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    """Replacement pairs that edit the records of ``data`` with their lengths kept
    consistent (see the module docstring); ``[]`` when no layout tiles it.

    ``compared`` are the operand pairs a recorded run logged, ``replacements`` the
    input-to-state pairs made of them.
    """
    records = find_records(data)
    if not records:
        return []
    out: dict[tuple[bytes, bytes], None] = {}

    def add(pattern: bytes, replacement: bytes) -> None:
        if pattern != replacement and len(out) < MAX_RECORD_PAIRS:
            out.setdefault((pattern, replacement), None)

    crc = any(isinstance(r.layout, Chunk) and r.layout.crc for r in records)
    for x, y in replacements:
        if not x or (len(x) == len(y) and not crc):
            continue  # the plain replacement keeps every length
        # The bodies that are the compared value first (a short value occurs in lengths
        # and tags too), then each place it occurs: the parser may compare only one.
        spots = [(r, r.body_start) for r in _walk(records) if r.sized and data[r.body_start : r.body_end] == x]
        at = data.find(x)
        while at != -1 and len(spots) < MAX_SPOTS:
            record = _innermost(records, at, len(x))
            if record is not None and (record, at) not in spots:
                spots.append((record, at))
            at = data.find(x, at + 1)
        for record, at in spots[:MAX_SPOTS]:
            body = data[record.body_start : at] + y + data[at + len(x) : record.body_end]
            add(*_rebuilt(data, record, record.layout.write(record, body)))
    empty = [r for r in _walk(records) if r.sized and r.body_start == r.body_end][:MAX_SPOTS]
    for a, b in compared if empty else ():  # an empty body compared with a value: that value in it
        for x, y in ((a, b), (b, a)):
            if isinstance(y, str) and isinstance(x, str) and not x:
                y = y.encode("utf-8", "surrogatepass")
            elif not (isinstance(x, (bytes, bytearray)) and isinstance(y, (bytes, bytearray)) and not x):
                continue
            for record in empty:
                add(*_rebuilt(data, record, record.layout.write(record, bytes(y))))
    tags = [t for t in _tags(records, compared) if records[0].layout.accepts(t)]
    for parent in _walk(records):  # inside a nested message: after its first record
        if parent.children:
            child = parent.children[0]
            kept, body = data[child.start : child.end], data[child.body_start : child.body_end]
            for tag in tags:
                new = Record(child.layout, 0, 0, tag, 0, 0)
                add(*_rebuilt(data, child, kept + child.layout.write(new, body)))
                add(*_rebuilt(data, child, kept + child.layout.write(new, kept)))  # wrapping a copy of it
    first, last = records[0], records[-1]
    head, tail = data[first.start : first.end], data[last.start : last.end]
    for tag in tags:
        new = Record(first.layout, 0, 0, tag, 0, 0)
        add(tail, first.layout.write(new, data[first.body_start : first.body_end]) + tail)
        add(head, head + first.layout.write(new, b""))
        if first.layout.nests:
            add(head, head + first.layout.write(new, head))  # a constructed record wrapping a copy of the first
    for record in records[:4]:
        whole = data[record.start : record.end]
        add(whole, whole + whole)
    for record in records[1:-1][:4]:
        add(data[record.start : record.end], b"")
    return list(out)
