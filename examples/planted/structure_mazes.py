"""Structure mazes: records with length prefixes (TLV), and hex digits inside text.

Used by tests/test_structure_mazes.py and ``bench/time_to_bug.py``.  Each raises
``RuntimeError`` once solved; nothing else ever fails.
"""

from __future__ import annotations

import json
import re
import urllib.parse
import zlib

import assay

SIGNATURE = b"\x89ASY\r\n\x1a\n"
CHUNK_TYPES = frozenset({b"HEAD", b"DATA", b"NOTE", b"TIME", b"TAIL"})


def chunk(kind: bytes, body: bytes) -> bytes:
    """A PNG-style chunk: length (4 bytes, big-endian), type, body, CRC-32 of type and body."""
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


@assay.target(
    seeds=[SIGNATURE + chunk(b"HEAD", b"\x00\x01") + chunk(b"DATA", b"hello") + chunk(b"TAIL", b"")], max_len=256
)
def maze_tlv_chunks(data: bytes) -> None:
    """Chunks read one after another; one counts only when its length and CRC hold.

    The bug needs two chunk types the seed lacks, each with a body of its own length:
    a record inserted or a body replaced must come with its length (and CRC) rewritten.
    """
    if data[:8] != SIGNATURE:
        return
    pos, kinds = 8, []
    note = stamp = None
    while pos < len(data):
        if pos + 12 > len(data):
            return
        n = int.from_bytes(data[pos : pos + 4], "big")
        kind = data[pos + 4 : pos + 8]
        if pos + 12 + n > len(data):
            return
        body = data[pos + 8 : pos + 8 + n]
        if zlib.crc32(kind + body) != int.from_bytes(data[pos + 8 + n : pos + 12 + n], "big"):
            return
        if kind not in CHUNK_TYPES:
            return
        if kind == b"NOTE":
            note = body
        elif kind == b"TIME":
            stamp = body
        kinds.append(kind)
        pos += 12 + n
    if kinds[0] != b"HEAD" or kinds[-1] != b"TAIL":
        return
    if note is None or note != b"author=assay":
        return
    if stamp is None or stamp != b"\x07\xea\x0c\x07":
        return
    raise RuntimeError("maze: chunks with consistent lengths")


def _fields(data: bytes) -> list[tuple[int, int, object]] | None:
    """Protobuf-style fields (number, wire type, value) tiling ``data``, or None."""
    out: list[tuple[int, int, object]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        if key is None or key >> 3 == 0:
            return None
        wire = key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            if value is None:
                return None
            out.append((key >> 3, 0, value))
        elif wire == 2:
            n, pos = _varint(data, pos)
            if n is None or pos + n > len(data):
                return None
            out.append((key >> 3, 2, data[pos : pos + n]))
            pos += n
        else:
            return None
    return out


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    value = shift = 0
    while pos < len(data) and shift < 35:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7
    return None, pos


@assay.target(seeds=[b"\x0a\x02hi\x10\x01"], max_len=128)
def maze_tlv_fields(data: bytes) -> None:
    """Protobuf-style fields, and a message nested in field 3 whose field 5 must hold a name.

    A field counts only when its varint length fits; the nested message sits inside
    a length-delimited field, so a change inside it changes two lengths.
    """
    fields = _fields(data)
    if fields is None:
        return
    for number, wire, value in fields:
        if number == 3 and wire == 2:
            assert isinstance(value, bytes)
            inner = _fields(value)
            if inner is None:
                return
            for inner_number, inner_wire, inner_value in inner:
                if inner_number == 5 and inner_wire == 2 and inner_value == b"assay":
                    raise RuntimeError("maze: a nested length-delimited field")


@assay.target(seeds=[b'{"name": "\\u0061\\u0062\\u0063", "colour": "#102030", "q": "%41%42"}'], max_len=128)
def maze_hex_text(data: bytes) -> None:
    """Numbers written as hex digits inside text, compared after decoding: ``\\uXXXX``
    escapes, a colour's components, ``%XX`` escapes."""
    try:
        doc = json.loads(data)
    except ValueError:
        return
    if not isinstance(doc, dict):
        return
    name, colour, q = doc.get("name"), doc.get("colour"), doc.get("q")
    if not (isinstance(name, str) and isinstance(colour, str) and isinstance(q, str)):
        return
    if name != "\u00e9t\u00e9":
        return
    m = re.fullmatch(r"#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})", colour)
    if m is None:
        return
    if int(m[2], 16) != 0xC0 or int(m[3], 16) != 0xDE:
        return
    if urllib.parse.unquote(q) != "ok!":
        return
    raise RuntimeError("maze: hex digits inside text")


def _elements(data: bytes) -> list[tuple[int, bytes]] | None:
    """DER elements (tag, contents) tiling ``data``: short-form lengths and 0x81/0x82 long ones."""
    out = []
    pos = 0
    while pos < len(data):
        if pos + 2 > len(data):
            return None
        tag, first = data[pos], data[pos + 1]
        if first < 0x80:
            n, head = first, pos + 2
        elif first in (0x81, 0x82):
            head = pos + 2 + first - 0x80
            n = int.from_bytes(data[pos + 2 : head], "big")
        else:
            return None
        if head + n > len(data):
            return None
        out.append((tag, data[head : head + n]))
        pos = head + n
    return out


@assay.target(seeds=[b"\x30\x08\x02\x01\x01\x04\x03abc\x05\x00"], max_len=128)
def maze_tlv_der(data: bytes) -> None:
    """DER: a SEQUENCE of elements, one of them an explicit context tag [1] wrapping a
    UTF8String: a change inside it changes three lengths."""
    top = _elements(data)
    if not top or top[0][0] != 0x30:
        return
    fields = _elements(top[0][1])
    if fields is None:
        return
    for tag, contents in fields:
        if tag == 0xA1:
            inner = _elements(contents)
            if inner is None:
                return
            for inner_tag, value in inner:
                if inner_tag == 0x0C and value == b"assay":
                    raise RuntimeError("maze: a DER element inside an explicit tag")
