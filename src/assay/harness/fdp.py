"""``FuzzedDataProvider`` as atheris defines it: the C provider, or its pure-Python reference.

Every method consumes the input exactly as atheris 2.x/3.x does (same bytes, same
order, same values, the same exception types for the same bad arguments), so a
harness written for atheris sees the same values under assay, and a crash input
found by either replays under the other.  :data:`FuzzedDataProvider` is the C twin
(``assay.gen._cmutate``, as fast as atheris' own) when it is built, else
:class:`PythonFuzzedDataProvider`, the reference it is tested against.  Integers are
little-endian; ``ConsumeIntInRange`` and ``PickValueInList`` read from the *end*
of the buffer, like libFuzzer's C++ provider.  ``ConsumeRandomLengthBytes`` and
``ConsumeRandomLengthString`` come from libFuzzer's C++ provider (atheris lacks
them): a backslash followed by any other byte ends the value, ``\\\\`` is one
backslash.
"""

from __future__ import annotations

import math
import operator
import sys
from typing import Any

from assay.gen.accelerated import cmutate

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


class PythonFuzzedDataProvider:
    """Turns the fuzzer's bytes into typed values (atheris' API and semantics), in Python."""

    def __init__(self, data: bytes) -> None:
        if not isinstance(data, bytes):  # atheris takes bytes only
            raise TypeError(f"FuzzedDataProvider needs bytes, not {type(data).__name__}")
        self._data = data
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

    def ConsumeBytes(self, count: int, /) -> bytes:  # noqa: N802 - atheris' names
        return self._take(count)

    # -- text ------------------------------------------------------------------------------------
    def ConsumeUnicode(self, count: int) -> str:  # noqa: N802
        return self._unicode(count, filter_surrogates=False)

    def ConsumeUnicodeNoSurrogates(self, count: int, /) -> str:  # noqa: N802
        return self._unicode(count, filter_surrogates=True)

    def ConsumeString(self, count: int, /) -> str:  # noqa: N802 - ConsumeUnicode on Python 3
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
        raw = self._take(min((count * width) & _U64_MAX, self.remaining_bytes()))  # atheris' size_t wraps
        units = [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw) - width + 1, width)]
        if width == 4:
            units = [(u & 0x1FFFFF) & ~0x0F0000 if u & 0x100000 else u & 0x1FFFFF for u in units]
        if filter_surrogates:
            units = [u - 0xD800 if 0xD800 <= u < 0xE000 else u for u in units]
        return "".join(map(chr, units))

    def ConsumeRandomLengthBytes(self, max_length: int = ALL_REMAINING, /) -> bytes:  # noqa: N802
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

    def ConsumeRandomLengthString(self, max_length: int = ALL_REMAINING, /) -> str:  # noqa: N802
        return self.ConsumeRandomLengthBytes(max_length).decode("utf-8", "surrogateescape")

    # -- integers --------------------------------------------------------------------------------
    def ConsumeInt(self, byte_count: int, /) -> int:  # noqa: N802
        return int.from_bytes(self._take(byte_count), "little", signed=True)

    def ConsumeUInt(self, byte_count: int, /) -> int:  # noqa: N802
        return int.from_bytes(self._take(byte_count), "little", signed=False)

    def ConsumeIntInRange(self, min_value: int, max_value: int, /) -> int:  # noqa: N802
        if not isinstance(min_value, int) or not isinstance(max_value, int):
            raise TypeError("ConsumeIntInRange: min and max must be ints")
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

    def ConsumeIntList(self, count: int, byte_count: int, /) -> list[int]:  # noqa: N802
        _size(byte_count)
        return [self.ConsumeInt(byte_count) for _ in _slots(count)]

    def ConsumeIntListInRange(self, count: int, min_value: int, max_value: int, /) -> list[int]:  # noqa: N802
        if not isinstance(min_value, int) or not isinstance(max_value, int):
            raise TypeError("ConsumeIntListInRange: min and max must be ints")
        return [self.ConsumeIntInRange(min_value, max_value) for _ in _slots(count)]

    # -- floats and booleans -----------------------------------------------------------------------
    def ConsumeBool(self) -> bool:  # noqa: N802
        return bool(self._take(1)[0] & 1) if self.remaining_bytes() else False

    def ConsumeProbability(self) -> float:  # noqa: N802
        return float(int.from_bytes(self._take(8), "little")) / float(_U64_MAX)

    def ConsumeFloatInRange(self, min_value: float, max_value: float, /) -> float:  # noqa: N802
        min_value, max_value = _double(min_value), _double(max_value)
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

    def ConsumeFloatList(self, count: int, /) -> list[float]:  # noqa: N802
        return [self.ConsumeFloat() for _ in _slots(count)]

    def ConsumeRegularFloatList(self, count: int, /) -> list[float]:  # noqa: N802
        return [self.ConsumeRegularFloat() for _ in _slots(count)]

    def ConsumeProbabilityList(self, count: int, /) -> list[float]:  # noqa: N802
        return [self.ConsumeProbability() for _ in _slots(count)]

    def ConsumeFloatListInRange(self, count: int, min_value: float, max_value: float, /) -> list[float]:  # noqa: N802
        min_value, max_value = _double(min_value), _double(max_value)
        return [self.ConsumeFloatInRange(min_value, max_value) for _ in _slots(count)]

    # -- choices ---------------------------------------------------------------------------------
    def PickValueInList(self, values: list[Any], /) -> Any:  # noqa: N802
        if not isinstance(values, list):  # atheris takes a list only
            raise TypeError(f"PickValueInList needs a list, not {type(values).__name__}")
        n = len(values)
        bits = 8 if n <= 0xFF else 16 if n <= 0xFFFF else 32 if n <= 0xFFFFFFFF else 64
        # An empty list still costs a byte, as in atheris (n - 1 wraps to the largest size_t).
        pick = self._small_int_in_range(bits, (n - 1) & _U64_MAX)
        if pick >= n:
            raise IndexError("list index out of range")
        return values[pick]


def _is_number(value: object) -> bool:
    """``PyNumber_Check``: what pybind11 tries ``int()`` or ``float()`` on."""
    kind = type(value)
    return isinstance(value, complex) or any(hasattr(kind, m) for m in ("__index__", "__int__", "__float__"))


def _size(n: Any) -> int:
    """A ``size_t`` argument as pybind11 converts it for atheris: an int (bool included) or what
    ``int()`` makes of a number, in 0 .. 2**64 - 1; never a float.  TypeError otherwise."""
    if not isinstance(n, int) or isinstance(n, float):
        if isinstance(n, float) or not _is_number(n):
            raise TypeError(f"expected a count (an int from 0 to 2**64 - 1), not {n!r}")
        try:
            n = int(n)
        except Exception:
            raise TypeError(f"expected a count (an int from 0 to 2**64 - 1), not {n!r}") from None
    if not 0 <= n <= _U64_MAX:
        raise TypeError(f"expected a count (an int from 0 to 2**64 - 1), not {n!r}")
    return int(n)


def _slots(count: Any) -> list[None]:
    """A list the length of a list method's count, made up front as atheris' ``py::list(count)``
    is: a count that cannot be allocated is atheris' RuntimeError, not a loop that never ends."""
    n = _size(count)
    try:
        if n > sys.maxsize:
            raise MemoryError
        return [None] * n
    except MemoryError:
        raise RuntimeError("Could not allocate list object!") from None


def _double(value: Any) -> float:
    """A ``double`` argument as pybind11 converts it (``PyFloat_AsDouble``: a float, ``__float__``
    or ``__index__``); TypeError otherwise, an int too large for a float included."""
    try:
        if isinstance(value, float):
            return float(value)
        if hasattr(type(value), "__float__"):
            return float(value)
        return float(operator.index(value))
    except Exception:
        raise TypeError(f"expected a float, not {value!r}") from None


#: The provider harnesses get: the C twin when it is built (and not turned off), else the
#: reference (also when the built module predates the provider: a stale in-place build).
FuzzedDataProvider: type[PythonFuzzedDataProvider] = getattr(cmutate, "FuzzedDataProvider", PythonFuzzedDataProvider)
