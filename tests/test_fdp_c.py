"""The C FuzzedDataProvider (assay.gen._cmutate) against atheris' own and against the Python reference.

Each case runs one seeded script of calls (every method, every argument edge: 0, 1,
sys.maxsize, 2**64 - 1, negative, huge, wrong types) over one input (every length class:
empty, 1 byte, small, 20, 387, 4,096 and odd lengths) on each provider, and records per
call the value, or the exception's type, and the bytes left: the records must be equal.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from assay.gen.accelerated import cmutate
from assay.harness import atheris_shim
from assay.harness.fdp import ALL_REMAINING, PythonFuzzedDataProvider

needs_c = pytest.mark.skipif(cmutate is None, reason="the C twin is not built here (or ASSAY_PURE_PYTHON is set)")

DMAX = sys.float_info.max
LENGTHS = (0, 1, 2, 3, 5, 8, 13, 20, 31, 64, 387, 1001, 4096)


class Index:
    """A number by __index__ only."""

    def __index__(self) -> int:
        return 5


class IntOnly:
    """A number by __int__ only (pybind11 takes it as a count, not as a float)."""

    def __int__(self) -> int:
        return 3


COUNTS: tuple[Any, ...] = (0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 100, 1000, 4096, sys.maxsize, 2**62, 2**63)
COUNTS += (ALL_REMAINING, 2**64, -1, -(2**70), True, False, 3.0, Index(), IntOnly(), Decimal(4), Fraction(9, 2))
COUNTS += (None, "3", b"3", 1j)
#: List lengths: small ones run, the huge ones are atheris' allocation error.
LIST_COUNTS: tuple[Any, ...] = (0, 1, 2, 5, 33, sys.maxsize, ALL_REMAINING, 2**64, -1, 2.0, Index())
INT_RANGES: tuple[tuple[Any, Any], ...] = (
    (0, 0), (0, 1), (1, 32), (-5, 5), (0, 255), (0, 256), (-1, 65535), (0, 2**16), (0, 2**32 - 1), (0, 2**32),
    (-(2**63), 2**63 - 1), (0, 2**64 - 1), (-1, 2**64 - 1), (0, 2**64), (-(2**100), 2**100), (2**70, 2**70 + 3),
    (-(2**64), 0), (5, 1), (1, 0), (False, True), (True, 5), (0, 3.0), (0.0, 1), (0, Index()), (None, 1), (0, "1"),
)  # fmt: skip
FLOAT_RANGES: tuple[tuple[Any, Any], ...] = (
    (0.0, 1.0), (-1.0, 1.0), (-DMAX, DMAX), (0.0, DMAX), (-DMAX, 0.0), (-DMAX, 1.0), (1.5, 1.5), (2.0, 1.0),
    (math.nan, 1.0), (0.0, math.nan), (-math.inf, math.inf), (0.0, math.inf), (-math.inf, 0.0), (0, 5),
    (-(2**60), 2**60), (True, 2), (0, Index()), (0, IntOnly()), (0, 10**400), (0, "1"), (None, 1.0), (0, Decimal(2)),
    (1e-300, 1e300), (-5e-324, 5e-324),
)  # fmt: skip
PICK_LISTS: tuple[Any, ...] = ([], [7], [1, 2], list(range(255)), list(range(256)), list(range(70000)), (1, 2), "ab")


def _calls(rng: random.Random, *, extras: bool) -> list[tuple[str, tuple[Any, ...]]]:
    """One script: a few calls, each an atheris method with arguments drawn from the edge lists."""
    makers: list[tuple[str, Callable[[], tuple[Any, ...]]]] = [
        ("ConsumeBytes", lambda: (rng.choice(COUNTS),)),
        ("ConsumeUnicode", lambda: (rng.choice(COUNTS),)),
        ("ConsumeUnicodeNoSurrogates", lambda: (rng.choice(COUNTS),)),
        ("ConsumeString", lambda: (rng.choice(COUNTS),)),
        ("ConsumeInt", lambda: (rng.choice(COUNTS),)),
        ("ConsumeUInt", lambda: (rng.choice(COUNTS),)),
        ("ConsumeIntInRange", lambda: rng.choice(INT_RANGES)),
        (
            "ConsumeIntList",
            lambda: (rng.choice(LIST_COUNTS), rng.choice((0, 1, 2, 3, 4, 5, 8, 9, 16, sys.maxsize, -1))),
        ),
        ("ConsumeIntListInRange", lambda: (rng.choice(LIST_COUNTS), *rng.choice(INT_RANGES))),
        ("ConsumeBool", tuple),
        ("ConsumeProbability", tuple),
        ("ConsumeFloat", tuple),
        ("ConsumeRegularFloat", tuple),
        ("ConsumeFloatInRange", lambda: rng.choice(FLOAT_RANGES)),
        ("ConsumeFloatList", lambda: (rng.choice(LIST_COUNTS),)),
        ("ConsumeRegularFloatList", lambda: (rng.choice(LIST_COUNTS),)),
        ("ConsumeProbabilityList", lambda: (rng.choice(LIST_COUNTS),)),
        ("ConsumeFloatListInRange", lambda: (rng.choice(LIST_COUNTS), *rng.choice(FLOAT_RANGES))),
        ("PickValueInList", lambda: (rng.choice(PICK_LISTS),)),
        ("remaining_bytes", tuple),
        ("buffer", tuple),
        ("wrong_arity", tuple),
    ]
    if extras:  # libFuzzer's, which atheris lacks
        makers.append(("ConsumeRandomLengthBytes", lambda: rng.choice(((), *((c,) for c in COUNTS)))))
        makers.append(("ConsumeRandomLengthString", lambda: rng.choice(((), *((c,) for c in COUNTS)))))
    out = []
    for _ in range(rng.randrange(1, 12)):
        name, make = rng.choice(makers)
        out.append((name, make()))
    return out


def _norm(value: Any) -> Any:
    """A value as a comparable record: floats by their bits (so -0.0 != 0.0 and nan == nan)."""
    if isinstance(value, float):
        return ("float", value.hex() if not math.isnan(value) else "nan")
    if isinstance(value, list):
        return ("list", [_norm(v) for v in value])
    return (type(value).__name__, value)


def _run(provider_type: Any, data: bytes, calls: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
    """The record of one script on one provider: per call (value or exception type, bytes left)."""
    try:
        fdp = provider_type(data)
    except Exception as exc:  # noqa: BLE001 - the exception's type is the record
        return [("init", type(exc).__name__)]
    record = []
    for name, args in calls:
        try:
            if name == "wrong_arity":  # one argument too many, and a keyword atheris does not name
                fdp.ConsumeBytes(1, 2)
            got = _norm(getattr(fdp, name)(*args))
        except Exception as exc:  # noqa: BLE001 - the exception's type is the record
            got = ("raised", type(exc).__name__)
        record.append((name, got, fdp.remaining_bytes()))
    return record


class BytesSubclass(bytes):
    """atheris takes a bytes subclass too (and hands back plain bytes from buffer())."""


def _inputs(seed: int, per_length: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for n in LENGTHS:
        for k in range(per_length):
            if k % 4 == 3:  # text-heavy bytes: ASCII and the UTF-16 surrogate block
                out.append(bytes(rng.choice((0x41, 0x7F, 0xD8, 0xDB, 0xDC, 0xDF, 0x00, 0x10)) for _ in range(n)))
            elif k % 8 == 5:
                out.append(BytesSubclass(rng.randbytes(n)))
            else:
                out.append(rng.randbytes(n))
    return out


def _sweep(left: Any, right: Any, *, seed: int, per_length: int, extras: bool) -> list[Any]:
    """Every (input, script) on which the two provider types disagree."""
    rng = random.Random(seed)
    differences = []
    for data in _inputs(seed, per_length):
        for _ in range(3):
            calls = _calls(rng, extras=extras)
            a, b = _run(left, data, calls), _run(right, data, calls)
            if a != b:
                differences.append((data[:40], len(data), calls, a, b))
    return differences


def test_python_provider_matches_atheris_everywhere(capfd: pytest.CaptureFixture[str]) -> None:
    atheris = pytest.importorskip("atheris", reason="the real atheris (dev extra) is the reference")
    differences = _sweep(atheris.FuzzedDataProvider, PythonFuzzedDataProvider, seed=1, per_length=12, extras=False)
    assert differences == []


@needs_c
def test_c_provider_matches_atheris_everywhere(capfd: pytest.CaptureFixture[str]) -> None:
    atheris = pytest.importorskip("atheris", reason="the real atheris (dev extra) is the reference")
    assert cmutate is not None
    differences = _sweep(atheris.FuzzedDataProvider, cmutate.FuzzedDataProvider, seed=2, per_length=40, extras=False)
    assert differences == []


@needs_c
def test_c_and_python_providers_agree_everywhere() -> None:
    assert cmutate is not None
    differences = _sweep(PythonFuzzedDataProvider, cmutate.FuzzedDataProvider, seed=3, per_length=25, extras=True)
    assert differences == []


def test_the_sweep_catches_a_provider_that_differs_by_one_byte() -> None:
    """Non-vacuity: the provider as it was before in one respect (an empty PickValueInList
    consumed no byte before its IndexError) disagrees with the faithful one on the sweep."""

    class Before(PythonFuzzedDataProvider):
        def PickValueInList(self, values: list[Any], /) -> Any:  # noqa: N802
            if isinstance(values, list) and not values:
                raise IndexError("empty")
            return super().PickValueInList(values)

    assert _sweep(PythonFuzzedDataProvider, Before, seed=3, per_length=25, extras=True) != []


@needs_c
@pytest.mark.parametrize(
    ("data", "count", "expected", "left"),
    [
        (b"\x00" + bytes(100), 2**62, "", 100),  # UTF-32: count * 4 wraps to 0
        (b"\x02" + bytes(100), 2**63, "", 100),  # UTF-16: count * 2 wraps to 0
        (b"\x02" + bytes(100), ALL_REMAINING, "\x00" * 50, 0),  # count * 2 wraps to 2**64 - 2
        (b"\x02\x41\x00\x42", 5, "A", 0),  # UTF-16, odd tail byte dropped but consumed
        (b"\x00\x00\xd8\x00\x00", 9, "\ud800", 0),  # ConsumeUnicode keeps a surrogate
        (b"\x03\xc1\xe2", 9, "Ab", 0),  # ASCII: the top bit cleared
        (b"\x00\xff\xff\xff\xff", 1, "\U0010ffff", 0),  # UTF-32: 21 bits, then at most 0x10FFFF
    ],
)
def test_c_unicode_edges(data: bytes, count: int, expected: str, left: int) -> None:
    assert cmutate is not None
    fdp = cmutate.FuzzedDataProvider(data)
    assert fdp.ConsumeUnicode(count) == expected
    assert fdp.remaining_bytes() == left


@needs_c
def test_c_no_surrogates_maps_the_surrogate_block_down() -> None:
    assert cmutate is not None
    assert cmutate.FuzzedDataProvider(b"\x00\x00\xd8\x00\x00").ConsumeUnicodeNoSurrogates(1) == "\x00"
    assert cmutate.FuzzedDataProvider(b"\x02\xff\xdf").ConsumeUnicodeNoSurrogates(1) == "\u07ff"


@needs_c
def test_c_provider_takes_bytes_only_and_can_be_subclassed() -> None:
    assert cmutate is not None
    for bad in (bytearray(b"ab"), memoryview(b"ab"), "ab", None):
        with pytest.raises(TypeError):
            cmutate.FuzzedDataProvider(bad)

    class Tagged(cmutate.FuzzedDataProvider):  # type: ignore[misc, name-defined]
        def __init__(self, data: bytes, tag: str) -> None:
            super().__init__(data)
            self.tag = tag

    fdp = Tagged(b"\x05xyz", "t")
    assert (fdp.tag, fdp.ConsumeUInt(1), fdp.buffer()) == ("t", 5, b"xyz")


@needs_c
def test_the_harness_provider_is_the_c_one_when_built_and_python_when_turned_off() -> None:
    assert cmutate is not None
    assert atheris_shim.FuzzedDataProvider is cmutate.FuzzedDataProvider
    code = "from assay.harness import atheris_shim as a; print(a.FuzzedDataProvider.__module__)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**_env(), "ASSAY_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "assay.harness.fdp"


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


@pytest.mark.parametrize("provider_type", [PythonFuzzedDataProvider, cmutate and cmutate.FuzzedDataProvider])
def test_only_consume_unicode_takes_its_count_by_name(provider_type: Any) -> None:
    """atheris names ConsumeUnicode's argument (count=) and no other method's."""
    if provider_type is None:
        pytest.skip("the C twin is not built here")
    fdp = provider_type(b"\x01abcdef")
    assert fdp.ConsumeUnicode(count=2) == "ab"
    for name in ("ConsumeBytes", "ConsumeString", "ConsumeUnicodeNoSurrogates", "ConsumeInt"):
        with pytest.raises(TypeError):
            getattr(fdp, name)(count=1)
    assert fdp.remaining_bytes() == 4


#: Units at the edges the text paths decide on: the surrogate block, the width of the str
#: (ASCII, Latin-1, two bytes, four), and the 21-bit mask with its 0x10FFFF clamp.
EDGE_UNITS = (0, 0x41, 0x7F, 0x80, 0xFF, 0x100, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFF, 0x10000,
              0x10D800, 0x10FFFF, 0x11D800, 0x1FD800, 0x1FFFFF, 0x20D800, 0xFFFFFFFF, 0xFFE0D800)  # fmt: skip


@needs_c
@pytest.mark.parametrize("method", ["ConsumeUnicode", "ConsumeUnicodeNoSurrogates"])
def test_c_text_matches_the_reference_on_edge_units(method: str) -> None:
    """Runs of edge units of every length (the C decoder works four or two units a word, then
    one at a time): the same str as the reference, of the same (canonical) width."""
    assert cmutate is not None
    rng = random.Random(7)
    for case in range(3000):
        width = rng.choice((2, 4))
        pool = [u for u in EDGE_UNITS if u < 1 << (8 * width)]
        narrow = rng.random() < 0.3  # all units below 0x100 (or 0x10000): a narrower str
        if narrow:
            pool = [u for u in pool if u < (0x100 if width == 2 else 0x10000)]
        units = [rng.choice(pool) for _ in range(rng.randrange(0, 40))]
        data = bytes([0 if width == 4 else 2]) + b"".join(u.to_bytes(width, "little") for u in units)
        data += rng.randbytes(rng.randrange(0, width))  # a partial unit at the end
        count = rng.choice((len(units), len(units) + 1, max(0, len(units) - 3), sys.maxsize))
        expected = getattr(PythonFuzzedDataProvider(data), method)(count)
        got = getattr(cmutate.FuzzedDataProvider(data), method)(count)
        assert (got, hash(got), len(got)) == (expected, hash(expected), len(expected)), (case, data, count)
        if got:
            assert max(map(ord, got)) <= 0x10FFFF
