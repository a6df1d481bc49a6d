"""A small record parser, planted for the differential-fuzzing tests.

``key=value`` fields separated by ``;``.  Keys are lower-cased identifiers, values
are cut at ``MAX_VALUE`` characters, and at most ``MAX_FIELDS`` fields are read.
"""

from __future__ import annotations

import functools

import assay

MAX_VALUE = 8
MAX_FIELDS = 6


class RecordError(ValueError):
    """The input is not a record."""


def parse_record(data: bytes) -> dict[str, str]:
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise RecordError("not ascii") from None
    fields: dict[str, str] = {}
    for part in text.split(";"):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise RecordError("bad record")
        key = normalize_key(key)
        if not key.isidentifier():
            raise RecordError(f"bad key {key!r}")
        if len(value) > MAX_VALUE:
            value = value[:MAX_VALUE]
        fields[key] = value
        if len(fields) >= MAX_FIELDS:
            break
    assay.feature("size", "big" if len(fields) > 2 else "small")
    return fields


@functools.lru_cache(maxsize=256)
def normalize_key(key: str) -> str:
    return key.strip().lower()


def checksum(data: bytes) -> int:
    total = 0
    for byte in data:
        total = (total * 2 + byte) & 0xFFFF
    return total


def count_fields(data: bytes) -> int:
    n = 0
    i = 0
    while i < len(data):
        if data[i] == 0x3B:
            n += 1
        i += 1
    return n


_lengths: dict[bytes, int] = {}


def cached_length(data: bytes) -> int:
    if data in _lengths:
        return _lengths[data]
    _lengths[data] = len(data)
    return len(data)
