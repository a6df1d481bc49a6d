"""The byte-source API: total, deterministic draws; fewer bytes, simpler values."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from assay.gen.bytesource import ByteSource


@given(st.binary(max_size=64))
def test_every_input_decodes_within_bounds(data):
    src = ByteSource(data)
    assert 3 <= src.draw_int(3, 9) <= 9
    assert src.draw_choice("abc") in "abc"
    assert 2 <= len(src.draw_bytes(2, 5)) <= 5
    text = src.draw_text("xy", 1, 4)
    assert 1 <= len(text) <= 4 and set(text) <= {"x", "y"}
    assert len(src.draw_list(lambda s: s.draw_int(0, 3), 0, 6)) <= 6


def test_exhausted_source_gives_the_smallest_values():
    src = ByteSource(b"")
    assert src.draw_int(5, 100) == 5
    assert src.draw_choice(["first", "second"]) == "first"
    assert src.draw_bytes(0, 10) == b""
    assert src.draw_list(lambda s: s.draw_int(0, 9)) == []
    assert src.exhausted


def test_same_bytes_same_values():
    def draws():
        return [(s := ByteSource(b"\x05\x10\xff\x00abc")).draw_int(0, 300), s.draw_bool(), s.draw_bytes(0, 4)]

    assert draws() == draws()


def test_draws_cover_the_range():
    seen = {ByteSource(bytes([b])).draw_int(0, 9) for b in range(256)}
    assert seen == set(range(10))


def test_deleting_bytes_drops_list_elements():
    full = ByteSource(b"\x01\x07\x01\x08\x00").draw_list(lambda s: s.draw_int(0, 255))
    shorter = ByteSource(b"\x01\x07\x00").draw_list(lambda s: s.draw_int(0, 255))
    assert full == [7, 8] and shorter == [7]


def test_empty_range_and_choice_are_errors():
    with pytest.raises(ValueError):
        ByteSource(b"x").draw_int(3, 2)
    with pytest.raises(ValueError):
        ByteSource(b"x").draw_choice([])
