"""``FuzzedDataProvider`` as atheris defines it, in pure Python.

Every method consumes the input exactly as atheris 2.x/3.x does (same bytes, same
order, same values), so a harness written for atheris sees the same values under
assay, and a crash input found by either replays under the other.  Integers are
little-endian; ``ConsumeIntInRange`` and ``PickValueInList`` read from the *end*
of the buffer, like libFuzzer's C++ provider.  ``ConsumeRandomLengthBytes`` and
``ConsumeRandomLengthString`` come from libFuzzer's C++ provider (atheris lacks
them): a backslash followed by any other byte ends the value, ``\\\\`` is one
backslash.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

#: ``atheris.ALL_REMAINING``: the largest ``size_t``, "everything that is left".
ALL_REMAINING = 2**64 - 1
_U64_MAX = 2**64 - 1
_DOUBLE_MAX = sys.float_info.max
#: Values of ``ConsumeFloat``'s first byte 0..10, as atheris orders them.
_SPECIAL_FLOATS = (
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    5e-324,
    -5e-324,
    sys.float_info.min,
    -sys.float_info.min,
    _DOUBLE_MAX,
    -_DOUBLE_MAX,
)


class FuzzedDataProvider:
    """Turns the fuzzer's bytes into typed values (atheris' API and semantics)."""

    def __init__(self, data: bytes) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"FuzzedDataProvider needs bytes, not {type(data).__name__}")
        self._data = bytes(data)
        self._pos = 0  # the front cursor
        self._end = len(self._data)  # the back cursor (ConsumeIntInRange eats from here)

    # -- raw access ------------------------------------------------------------------------------
    def remaining_bytes(self) -> int:
        return self._end - self._pos

    def buffer(self) -> bytes:
        return self._data[self._pos : self._end]

    def _advance(self, n: int) -> None:
        self._pos = self._end if n > self.remaining_bytes() else self._pos + n

    def _take(self, n: int) -> bytes:
        n = min(_size(n), self.remaining_bytes())
        out = self._data[self._pos : self._pos + n]
        self._pos += n
        return out

    def ConsumeBytes(self, count: int) -> bytes:  # noqa: N802 - atheris' names
        return self._take(count)

    # -- text ------------------------------------------------------------------------------------
    def ConsumeUnicode(self, count: int) -> str:  # noqa: N802
        return self._unicode(count, filter_surrogates=False)

    def ConsumeUnicodeNoSurrogates(self, count: int) -> str:  # noqa: N802
        return self._unicode(count, filter_surrogates=True)

    def ConsumeString(self, count: int) -> str:  # noqa: N802 - ConsumeUnicode on Python 3
        return self._unicode(count, filter_surrogates=False)

    def _unicode(self, count: int, *, filter_surrogates: bool) -> str:
        count = _size(count)
        if count == 0 or self.remaining_bytes() == 0:
            return ""
        if self.remaining_bytes() == 1:
            self._advance(1)
            return ""
        spec = self._take(1)[0]
        if spec & 1:  # half the time pure ASCII, which bytes alone would rarely be
            return "".join(chr(b & 0x7F) for b in self._take(count))
        width = 2 if spec & 2 else 4
        raw = self._take(min(count * width, self.remaining_bytes()))
        units = [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw) - width + 1, width)]
        if width == 4:
            units = [(u & 0x1FFFFF) & ~0x0F0000 if u & 0x100000 else u & 0x1FFFFF for u in units]
        if filter_surrogates:
            units = [u - 0xD800 if 0xD800 <= u < 0xE000 else u for u in units]
        return "".join(map(chr, units))

    def ConsumeRandomLengthBytes(self, max_length: int = ALL_REMAINING) -> bytes:  # noqa: N802
        out = bytearray()
        max_length = _size(max_length)
        while len(out) < max_length and self.remaining_bytes():
            b = self._take(1)[0]
            if b == 0x5C and self.remaining_bytes():
                b = self._take(1)[0]
                if b != 0x5C:
                    break
            out.append(b)
        return bytes(out)

    def ConsumeRandomLengthString(self, max_length: int = ALL_REMAINING) -> str:  # noqa: N802
        return self.ConsumeRandomLengthBytes(max_length).decode("utf-8", "surrogateescape")

    # -- integers --------------------------------------------------------------------------------
    def ConsumeInt(self, byte_count: int) -> int:  # noqa: N802
        return int.from_bytes(self._take(byte_count), "little", signed=True)

    def ConsumeUInt(self, byte_count: int) -> int:  # noqa: N802
        return int.from_bytes(self._take(byte_count), "little", signed=False)

    def ConsumeIntInRange(self, min_value: int, max_value: int) -> int:  # noqa: N802
        delta = max_value - min_value
        if delta < 0:
            raise RuntimeError("ConsumeIntInRange: min must be <= max")
        size = delta.bit_length()
        if size <= 64:
            return min_value + self._small_int_in_range(size, delta)
        return min_value + self.ConsumeInt(size // 8) % (delta + 1)

    def _small_int_in_range(self, bits: int, value_range: int) -> int:
        result = offset = 0
        while offset < bits and (value_range >> offset) > 0 and self._end > self._pos:
            self._end -= 1
            result = (result << 8) | self._data[self._end]
            offset += 8
        if value_range != _U64_MAX:
            result %= value_range + 1
        return result

    def ConsumeIntList(self, count: int, byte_count: int) -> list[int]:  # noqa: N802
        return [self.ConsumeInt(byte_count) for _ in range(_size(count))]

    def ConsumeIntListInRange(self, count: int, min_value: int, max_value: int) -> list[int]:  # noqa: N802
        return [self.ConsumeIntInRange(min_value, max_value) for _ in range(_size(count))]

    # -- floats and booleans -----------------------------------------------------------------------
    def ConsumeBool(self) -> bool:  # noqa: N802
        return bool(self._take(1)[0] & 1) if self.remaining_bytes() else False

    def ConsumeProbability(self) -> float:  # noqa: N802
        return float(int.from_bytes(self._take(8), "little")) / float(_U64_MAX)

    def ConsumeFloatInRange(self, min_value: float, max_value: float) -> float:  # noqa: N802
        if min_value > max_value:
            raise RuntimeError("ConsumeFloatInRange: min must be <= max")
        result = float(min_value)
        if min_value < 0 < max_value and min_value + _DOUBLE_MAX < max_value:
            value_range = max_value / 2 - min_value / 2  # the plain difference would overflow
            if self.ConsumeBool():
                result += value_range
        else:
            value_range = max_value - min_value
        return result + value_range * self.ConsumeProbability()

    def ConsumeRegularFloat(self) -> float:  # noqa: N802
        return self.ConsumeFloatInRange(-_DOUBLE_MAX, _DOUBLE_MAX)

    def ConsumeFloat(self) -> float:  # noqa: N802
        if not self.remaining_bytes():
            return 0.0
        kind = self._take(1)[0]
        if kind <= 10:
            self._advance(min(9, self.remaining_bytes()))  # as many bytes as a regular float takes
            return _SPECIAL_FLOATS[kind]
        return self.ConsumeRegularFloat()

    def ConsumeFloatList(self, count: int) -> list[float]:  # noqa: N802
        return [self.ConsumeFloat() for _ in range(_size(count))]

    def ConsumeRegularFloatList(self, count: int) -> list[float]:  # noqa: N802
        return [self.ConsumeRegularFloat() for _ in range(_size(count))]

    def ConsumeProbabilityList(self, count: int) -> list[float]:  # noqa: N802
        return [self.ConsumeProbability() for _ in range(_size(count))]

    def ConsumeFloatListInRange(self, count: int, min_value: float, max_value: float) -> list[float]:  # noqa: N802
        return [self.ConsumeFloatInRange(min_value, max_value) for _ in range(_size(count))]

    # -- choices ---------------------------------------------------------------------------------
    def PickValueInList(self, values: Sequence[Any]) -> Any:  # noqa: N802
        n = len(values)
        if n == 0:
            raise IndexError("PickValueInList: the list is empty")
        bits = 8 if n <= 0xFF else 16 if n <= 0xFFFF else 32 if n <= 0xFFFFFFFF else 64
        return values[self._small_int_in_range(bits, n - 1)]


def _size(n: int) -> int:
    """A ``size_t`` argument: atheris (pybind11) refuses negatives and non-integers."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise TypeError(f"expected a non-negative integer count, not {n!r}")
    return n
