"""Structure that comparisons cannot see: length-prefixed records and hex digits in text.

Each maze in examples/planted/structure_mazes.py is solved within a case cap on fixed
seeds, and with its mechanism off (:mod:`assay.feedback.records` for the records, the
hex fields and escaped forms of :mod:`assay.feedback.decoded` for the text) it is not
solved within a cap four times as large.
"""

from __future__ import annotations

import zlib

import pytest

from assay.feedback import cmplog, decoded
from assay.feedback.records import find_records, record_pairs, varint
from assay.store.artifacts import load_artifact

CAP = 5000
OFF_CAP = 4 * CAP

MAZES = ["maze_tlv_chunks", "maze_tlv_fields", "maze_tlv_der", "maze_hex_text"]


def _solved_at(result) -> int | None:
    (t,) = result.targets
    hits = [load_artifact(f.artifact).metadata for f in t.findings]
    hits = [m for m in hits if (m.get("exception") or {}).get("type", "").endswith("RuntimeError")]
    return min(m["case_index"] for m in hits) if hits else None


@pytest.fixture
def no_record_pairs(monkeypatch):
    monkeypatch.setattr(cmplog, "record_pairs", lambda *args: [])


@pytest.fixture
def no_hex_fields(monkeypatch):
    monkeypatch.setattr(decoded.DecodedForms, "hex_fields", property(lambda self: {}))


@pytest.fixture
def no_escaped_forms(monkeypatch):
    monkeypatch.setattr(decoded, "escaped_forms", lambda v, raw: {})
    decoded._cached_forms.cache_clear()  # forms computed with the escapes must not be reused
    yield
    decoded._cached_forms.cache_clear()


@pytest.mark.campaign
@pytest.mark.parametrize("name", MAZES)
@pytest.mark.parametrize("seed", [1, 2])
def test_structure_maze_solved_within_cap(planted, campaign, name, seed):
    at = _solved_at(campaign([planted.get(name)], cases=CAP, seed=seed, shrink_cases=32))
    assert at is not None, f"{name} not solved within {CAP} cases (seed {seed})"


@pytest.mark.campaign
@pytest.mark.parametrize("name", ["maze_tlv_chunks", "maze_tlv_fields", "maze_tlv_der"])
def test_without_record_pairs_the_record_mazes_are_not_solved(planted, campaign, no_record_pairs, name):
    assert _solved_at(campaign([planted.get(name)], cases=OFF_CAP, seed=1, shrink_cases=32)) is None


@pytest.mark.campaign
def test_without_hex_fields_the_hex_maze_is_not_solved(planted, campaign, no_hex_fields):
    assert _solved_at(campaign([planted.get("maze_hex_text")], cases=OFF_CAP, seed=1, shrink_cases=32)) is None


@pytest.mark.campaign
def test_without_escaped_forms_the_hex_maze_is_not_solved(planted, campaign, no_escaped_forms):
    assert _solved_at(campaign([planted.get("maze_hex_text")], cases=OFF_CAP, seed=1, shrink_cases=32)) is None


# -- the mechanisms on their own ---------------------------------------------------------


def _chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def _chunks_of(data: bytes, start: int) -> list[tuple[bytes, bytes]]:
    """Parse PNG-style chunks strictly (length, type, body, CRC): what a reader accepts."""
    out, pos = [], start
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        assert len(body) == n and zlib.crc32(kind + body) == int.from_bytes(data[pos + 8 + n : pos + 12 + n], "big")
        out.append((kind, body))
        pos += 12 + n
    return out


def test_chunks_are_found_after_a_header_and_rebuilt_with_length_and_crc():
    data = b"MAGIC!" + _chunk(b"HEAD", b"\x00\x01") + _chunk(b"DATA", b"hello") + _chunk(b"TAIL", b"")
    records = find_records(data)
    assert [r.tag for r in records] == [b"HEAD", b"DATA", b"TAIL"] and records[0].start == 6
    pairs = record_pairs(data, [(b"hello", b"a longer body"), (b"DATA", b"NOTE")], [(b"hello", b"a longer body")])
    children = [cmplog.replace_one(data, x, y, 0) for x, y in pairs]
    parsed = [_chunks_of(child, 6) for child in children if child is not None]
    assert [(b"HEAD", b"\x00\x01"), (b"DATA", b"a longer body"), (b"TAIL", b"")] in parsed
    # A record of the compared tag, inserted before the last one with every length right.
    assert any([k for k, _ in p] == [b"HEAD", b"DATA", b"NOTE", b"TAIL"] for p in parsed)
    # The plain replacement breaks the length: what the pairs are for.
    with pytest.raises(AssertionError):
        _chunks_of(cmplog.replace_one(data, b"hello", b"a longer body", 0), 6)


def test_nested_protobuf_fields_are_rebuilt_with_both_lengths():
    # field 1: "hi"; field 3: a message holding field 13 (varint 105); field 2: varint 1
    data = b"\x0a\x02hi" + b"\x1a\x02hi" + b"\x10\x01"
    (outer,) = [r for r in find_records(data) if r.tag == b"\x1a"]
    assert outer.children is not None and outer.children[0].tag == b"h"
    # The nested message's reader compared a field number (13) with 5: a field 5 goes in.
    pairs = record_pairs(data, [(13, 5)], [])
    field5 = varint(5 << 3 | 2)
    assert (b"\x1a\x02hi", b"\x1a\x05hi" + field5 + b"\x01i") in pairs
    # A replacement inside it rewrites the inner and the outer length.
    child = b"\x0a\x02hi\x1a\x05hi" + field5 + b"\x01i\x10\x01"
    pairs = record_pairs(child, [(b"i", b"assay")], [(b"i", b"assay")])
    assert (b"\x1a\x05hi*\x01i", b"\x1a\x09hi*\x05assay") in pairs


def test_der_elements_nest():
    inner = b"\x02\x01\x05" + b"\x04\x03abc"
    data = b"\x30" + bytes([len(inner)]) + inner + b"\x05\x00"
    records = find_records(data)
    assert [r.tag for r in records] == [b"\x30", b"\x05"]
    pairs = record_pairs(data, [(b"abc", b"x" * 200)], [(b"abc", b"x" * 200)])
    rebuilt = cmplog.replace_one(data, *pairs[0], 0)
    # 200 bytes need the long form (0x81 len), and the SEQUENCE's length grows with it.
    assert rebuilt == b"\x30\x81\xce\x02\x01\x05\x04\x81\xc8" + b"x" * 200 + b"\x05\x00"


def test_text_has_no_records():
    for text in (b"hello world, this is text", b'{"a": [1, 2, 3]}', b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"):
        assert record_pairs(text, [(b"hello", b"bye")], [(b"hello", b"bye")]) == []


def test_hex_fields_inside_text():
    forms = decoded.DecodedForms(b'c=#102030; n="\\u00e9ab"; q=%41BC; year=2026')
    assert (b"#102030", b"#10c030") in forms.pairs(0x20, 0xC0)  # a colour's component
    assert (b"\\u00e9ab", b"\\u263aab") in forms.pairs(0xE9, 0x263A)  # an escape followed by hex letters
    assert (b"%41BC", b"%21BC") in forms.pairs(0x41, 0x21)
    assert not any(b"2026" in x for x, _ in forms.pairs(0x20, 0x21))  # a decimal number is not hex


def test_every_character_escaped():
    forms = decoded.DecodedForms(b'{"name": "\\u0061\\u0062", "q": "%41%42"}')
    assert (b"\\u0061\\u0062", b"\\u00e9\\u0074") in forms.pairs("ab", "\u00e9t")
    assert (b"%41%42", b"%6F%6B%21") in forms.pairs("AB", "ok!")
    assert (b"\\u0061\\u0062", b"\\ud83d\\ude00") in forms.pairs("ab", "\U0001f600")  # a surrogate pair
