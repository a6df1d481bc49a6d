"""Comparison feedback: twins record operands; input-to-state pairs."""

from __future__ import annotations

import feedback_subject as subject

from assay.feedback.cmplog import CmpLog, guards_of, input_to_state, repair, replace_one
from assay.feedback.scope import Scope


def _log():
    log = CmpLog(Scope([subject.__file__]).contains)
    log.attach()
    return log


def test_twins_record_and_originals_return():
    log = _log()
    assert log.swaps
    original = subject.branchy.__code__
    records, _ = log.record(lambda: subject.branchy(3))
    assert (3, 5) in records
    assert subject.branchy.__code__ is original, "originals are swapped back"
    assert log.record(lambda: None) == ([], [])


def test_twin_behaves_like_the_original():
    log = _log()
    out = []
    log.record(lambda: out.extend([subject.branchy(9), subject.looped(10), subject.gate(1)]))
    assert out == [subject.branchy(9), subject.looped(10), subject.gate(1)]


def test_character_class_check_gives_its_field_made_valid():
    log = _log()
    records, _ = log.record(lambda: subject.hex_escape("\\uZ1?x!"))
    assert ("Z1?x", "0100") in records  # each character outside the class becomes the least one in it
    assert subject.hex_escape("\\u0100") == "\u0100"
    pairs, _ = input_to_state(b'a = "\\uZ1?x"', records)
    assert (b"Z1?x", b"0100") in pairs
    records, _ = log.record(lambda: subject.hex_escape("\\u00e9"))
    assert not [r for r in records if r[0] == "00e9"], "a check that held records nothing"


def test_input_to_state_pairs_and_tokens():
    records = [(ord("h"), 0x46), (b"hell", b"\x7fELF"), (5, 48879), (None, "PROPFIND")]
    pairs, tokens = input_to_state(b"hello,5", records)
    assert (b"h", b"F") in pairs
    assert (b"hell", b"\x7fELF") in pairs
    assert (b"5", b"48879") in pairs
    assert b"PROPFIND" in tokens


def test_replace_one_picks_an_occurrence():
    assert replace_one(b"xaxa", b"a", b"B", 0) == b"xBxa"
    assert replace_one(b"xaxa", b"a", b"B", 1) == b"xaxB"
    assert replace_one(b"xx", b"a", b"B", 0) is None


def _frame(payload: bytes) -> bytes:
    import zlib

    return zlib.crc32(payload).to_bytes(4, "big") + payload


def test_guards_are_held_equalities_of_computed_values_found_in_the_input():
    log = _log()
    good = _frame(b"hello world")
    _, guard_records = log.record(lambda: subject.framed(good))
    guards = guards_of(good, guard_records)
    assert [(kind, at) for _site, kind, at in guards] == [("be4", 0)]
    # Literal comparisons (``x == 1``) are never guards, and nothing held for a bad frame.
    _, literal = log.record(lambda: subject.gate(1))
    assert literal == []
    bad = b"\0\0\0\0" + b"hello world"
    assert guards_of(bad, log.record(lambda: subject.framed(bad))[1]) == []


def test_repair_restores_a_broken_checksum():
    log = _log()
    good = _frame(b"hello world")
    guards = guards_of(good, log.record(lambda: subject.framed(good))[1])
    child = good[:4] + b"HELLO world!"  # a mutated payload with the parent's stale checksum
    assert subject.framed(child) == "bad"
    fixed = repair(child, log.record(lambda: subject.framed(child))[1], guards)
    assert fixed == _frame(b"HELLO world!") and subject.framed(fixed) == "ok"
    # A child that still holds its guards needs no repair.
    assert repair(good, log.record(lambda: subject.framed(good))[1], guards) is None
