"""Signatures of oracle findings, and the kinds each helper reports."""

from __future__ import annotations

import json
import plistlib

import pytest

from assay.core.observe import InvariantViolation, OracleFailure
from assay.engine.execute import run_input
from assay.harness.define import make_target
from assay.oracles import (
    Allow,
    AllowList,
    both_raise,
    derive_chunkings,
    differential,
    error_shape,
    errors_are,
    idempotent,
    monotonic,
    monotonic_sequence,
    rechunk,
    round_trip,
)


def _sig(fn, data: bytes, expected=()) -> str | None:
    verdict = run_input(make_target(fn, name="t", expected=expected), data)
    return verdict.signature if verdict else None


def _kind(call) -> tuple[str, str, str]:
    with pytest.raises(OracleFailure) as info:
        call()
    exc = info.value
    return exc.oracle, exc.name, exc.kind


# --------------------------------------------------------------------------- signatures


def lossy_decode(data: bytes) -> str:
    return data.decode("latin-1").replace("\x00", "")


def test_one_relation_through_different_inputs_gets_one_signature():
    def target(data: bytes) -> None:
        round_trip(lambda d: d.decode("latin-1"), lambda s: s.encode("latin-1")[:-1], data, name="trim")

    sigs = {_sig(target, d) for d in (b"ab", b"xyz" * 30, b"\x00\xff\x80")}
    assert sigs == {"invariant:trim/mismatch"}


def test_two_relations_get_two_signatures():
    def target(data: bytes) -> None:
        if data[:1] == b"A":
            round_trip(lambda d: d, lambda d: d + b"!", data, name="first")
        else:
            round_trip(lambda d: d, lambda d: d + b"!", data, name="second")

    assert _sig(target, b"A1") == "invariant:first/mismatch"
    assert _sig(target, b"B1") == "invariant:second/mismatch"


def test_default_names_come_from_the_functions():
    def json_rt(data: bytes) -> None:
        round_trip(json.loads, lambda v: json.dumps(v) + "x", data)

    def plist_rt(data: bytes) -> None:
        round_trip(plistlib.loads, lambda v: plistlib.dumps(v)[:-9], data)

    a = _sig(json_rt, b"1")
    b = _sig(plist_rt, plistlib.dumps({"k": 1}))
    assert a.startswith("invariant:round-trip(json.loads,") and a.endswith("/reencode-rejected")
    assert b.startswith("invariant:round-trip(plistlib.loads,")
    assert a != b


def test_same_name_different_kind_gets_two_signatures():
    def target(data: bytes) -> None:
        decode = lambda d: d.decode("ascii")  # noqa: E731
        encode = (lambda s: s.encode("ascii") + b"\xff") if data[:1] == b"R" else (lambda s: s.upper().encode())
        round_trip(decode, encode, data, name="codec")

    assert _sig(target, b"Rx", expected=(UnicodeDecodeError,)) == "invariant:codec/reencode-rejected"
    assert _sig(target, b"ax", expected=(UnicodeDecodeError,)) == "invariant:codec/mismatch"
    assert _sig(target, b"\xff", expected=(UnicodeDecodeError,)) is None  # first decode: a rejection


def test_differential_key_is_pair_and_kind_not_exception_class_or_message():
    def b_impl(text: str) -> int:
        if text.startswith("-"):
            raise TypeError(f"no negatives like {text}")
        if text.startswith("+"):
            raise ValueError(f"no plus like {text}")
        return int(text)

    def target(data: bytes) -> None:
        differential({"a": int, "b": b_impl}, data.decode("latin-1"))

    sigs = {_sig(target, d) for d in (b"-1", b"+1", b"-123456", b"+9")}
    assert sigs == {"differential:a~b/value-vs-error"}
    assert _sig(target, b"12") is None


def test_differential_kinds_and_orientation():
    def raise_(cls):
        def f():
            raise cls("x")

        return f

    def check(values):
        fns = {k: (v if callable(v) else (lambda v=v: v)) for k, v in values.items()}
        return _kind(lambda: differential({k: (lambda _d, f=f: f()) for k, f in fns.items()}, b""))

    assert check({"a": 1, "b": 2}) == ("differential", "a~b", "value-vs-value")
    assert check({"a": 1, "b": raise_(ValueError)}) == ("differential", "a~b", "value-vs-error")
    assert check({"a": raise_(ValueError), "b": 1}) == ("differential", "a~b", "error-vs-value")
    assert check({"a": raise_(ValueError), "b": raise_(KeyError)}) == (
        "differential",
        "a~b",
        "error-class-vs-error-class",
    )
    assert check({"a": 1, "b": 1, "c": 2}) == ("differential", "a~c", "value-vs-value")
    # three implementations: the first differing pair in (a,b), (a,c), (b,c) order is named
    assert check({"a": 1, "b": 2, "c": 2}) == ("differential", "a~b", "value-vs-value")
    assert check({"a": 2, "b": 1, "c": 2}) == ("differential", "a~b", "value-vs-value")
    assert check({"a": 1, "b": 1, "c": raise_(ValueError)}) == ("differential", "a~c", "value-vs-error")
    differential({"a": lambda _d: 1, "b": lambda _d: 1, "c": lambda _d: 1}, b"")  # all agree: no finding


def test_differential_normalize_per_implementation():
    out = differential({"lower": str.lower, "upper": str.upper}, "Ab", normalize={"upper": str.lower})
    assert out["lower"].value == out["upper"].value == "ab"
    assert out["upper"].raw == "AB"


def test_allow_entries_need_a_reason_and_unique_names():
    with pytest.raises(ValueError, match="reason"):
        Allow("x", "  ", both_raise)
    with pytest.raises(ValueError, match="unique"):
        AllowList(Allow("x", "r", both_raise), Allow("x", "r", both_raise))
    with pytest.raises(TypeError):
        AllowList(both_raise)  # type: ignore[arg-type]


def test_allow_pair_orients_the_outcomes():
    seen = []

    def when(data, a, b):
        seen.append((a.impl, b.impl))
        return a.ok and b.is_error

    allow = AllowList(Allow("b-strict", "b rejects what a takes", when, pair=("b", "a")))
    # a raises, b returns: in pair order (b, a) that is "b ok, a error": covered.
    differential({"a": lambda d: int(d), "b": lambda d: d}, "x", allow=allow)
    assert seen == [("b", "a")]
    with pytest.raises(OracleFailure):
        differential({"a": lambda d: d, "b": lambda d: int(d)}, "x", allow=allow)


def test_errors_are_predicate():
    allow = AllowList(Allow("classes", "documented error classes differ", errors_are((ValueError,), (KeyError,))))
    differential({"a": lambda d: int(d), "b": lambda d: {}[d]}, "x", allow=allow)
    with pytest.raises(OracleFailure):
        differential({"a": lambda d: {}[d], "b": lambda d: int(d)}, "x", allow=allow)


# --------------------------------------------------------------------------- kinds per helper


def test_round_trip_encode_rejected():
    def encode(v):
        raise TypeError("cannot")

    assert _kind(lambda: round_trip(str, encode, 1, name="r")) == ("invariant", "r", "encode-rejected")


def test_rechunk_kinds_and_consistent_rejection():
    def stateless_count(chunks):  # counts b"ab" per chunk: loses state at boundaries
        return sum(c.count(b"ab") for c in chunks)

    assert _kind(lambda: rechunk(stateless_count, b"xxab", name="n")) == ("invariant", "n", "mismatch")

    def rejects_small_chunks(chunks):
        if len(chunks) > 1 and min(map(len, chunks)) < 2:
            raise ValueError("short read")
        return b"".join(chunks)

    assert _kind(lambda: rechunk(rejects_small_chunks, b"abcdef", name="n"))[2] == "chunked-rejected"

    def accepts_only_chunked(chunks):
        if len(chunks) == 1:
            raise ValueError("whole")
        return 1

    assert _kind(lambda: rechunk(accepts_only_chunked, b"abc", name="n"))[2] == "chunked-accepted"

    def error_class(chunks):
        raise (ValueError if len(chunks) == 1 else KeyError)("x")

    assert _kind(lambda: rechunk(error_class, b"abc", name="n"))[2] == "error-class"

    def always_rejects(chunks):
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        rechunk(always_rejects, b"abc")
    assert rechunk(lambda cs: b"".join(cs), b"hello") == b"hello"


def test_rechunk_feeds_whole_bytewise_and_derived():
    calls = []

    def feed(chunks):
        calls.append(list(chunks))
        return b"".join(chunks)

    data = b"0123456789abcdef"
    rechunk(feed, data)
    assert calls[0] == [data]
    assert calls[-1] == [bytes([c]) for c in data]
    assert all(b"".join(c) == data for c in calls)
    assert len(calls) == 2 + 3


def test_derive_chunkings_is_deterministic_and_covers_the_data():
    data = bytes(range(200))
    first = derive_chunkings(data)
    assert first == derive_chunkings(data)
    assert len(first) == 3
    for chunks in first:
        assert b"".join(chunks) == data and len(chunks) >= 2 and all(chunks)
    assert derive_chunkings(data[:-1]) != first
    assert derive_chunkings(b"a") == []
    text = "h\u00e9llo w\u00f6rld \ud800"
    assert all("".join(c) == text for c in derive_chunkings(text, 5))


def test_idempotent_kinds():
    assert idempotent(str.strip, "  a ") == "a"
    assert _kind(lambda: idempotent(lambda s: s + "x", "a", name="i")) == ("invariant", "i", "mismatch")

    def once_only(s):
        if s.startswith("<"):
            return s[1:]
        raise ValueError("not wrapped")

    assert _kind(lambda: idempotent(once_only, "<a", name="i")) == ("invariant", "i", "rejected-own-output")


def test_monotonic_forms():
    assert monotonic(len, "ab", "abc") == (2, 3)
    assert _kind(lambda: monotonic(lambda s: -len(s), "ab", "abc", name="m")) == ("invariant", "m", "order")
    assert monotonic_sequence([0, 1, 1, 2], name="s") == [0, 1, 1, 2]
    with pytest.raises(InvariantViolation) as info:
        monotonic_sequence([0, 1, 0], name="s")
    assert info.value.kind == "order" and info.value.data["step"] == 2


def test_error_shape_kinds_and_validator_conventions():
    import ipaddress
    import socket

    def pack(text):
        return socket.inet_pton(socket.AF_INET, text)

    assert error_shape(ipaddress.IPv4Address, pack, "1.2.3.4").valid
    assert not error_shape(ipaddress.IPv4Address, pack, "1.2.3").valid  # both reject

    tag, name, kind = _kind(lambda: error_shape(lambda v: False, len, "abc"))
    assert (tag, kind) == ("error-shape", "invalid-accepted")
    assert name.endswith("~builtins.len")
    assert _kind(lambda: error_shape(lambda v: None, int, "x", name="e")) == ("error-shape", "e", "valid-rejected")


def test_unexpected_exceptions_propagate():
    def boom(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        differential({"a": boom, "b": str}, "x")
    with pytest.raises(KeyError):
        error_shape(lambda v: {}[v], str, "x", invalid=(ValueError,))
