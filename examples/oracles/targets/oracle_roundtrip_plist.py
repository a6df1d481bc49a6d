"""Round trips through ``plistlib`` (XML and binary) and ``json``.

``plistlib.loads`` auto-detects the format; the value it returns is written
back in the same format and read again.  For ``json`` the one documented
non-fixed point is normalised: ``NaN`` is not equal to itself.
"""

from __future__ import annotations

import json
import math
import plistlib
from xml.parsers.expat import ExpatError

import assay
from assay.oracles import round_trip

_PLIST_SEEDS = [
    plistlib.dumps({"a": [1, 2.5, True, "x"], "b": {"c": b"\x00\x01"}, "d": "caf\u00e9"}),
    plistlib.dumps({"k": [1, {"n": -3}], "big": 2**40}, fmt=plistlib.FMT_BINARY),
    plistlib.dumps(["x", 0.1, False]),
]


def _plist_encoder(data: bytes):
    fmt = plistlib.FMT_BINARY if data.startswith(b"bplist00") else plistlib.FMT_XML
    return lambda value: plistlib.dumps(value, fmt=fmt, sort_keys=False)


def canonical(value) -> list:
    """``value`` as a flat, comparable graph: NaN equal to itself, containers numbered.

    Both are documented latitude, not bugs: NaN != NaN in Python, and a binary
    plist may reference one container from several places or from inside itself,
    which plistlib loads as shared or recursive objects on purpose
    (python/cpython#76253).  Numbering containers in depth-first order and
    referring to them by number compares such graphs in linear time, where ``==``
    would recurse forever or take exponential time on shared references.
    """
    nodes: list = []
    index: dict[int, int] = {}

    def ref(v):
        if isinstance(v, float) and math.isnan(v):
            return ("nan",)
        if not isinstance(v, (list, dict)):
            return (type(v).__name__, v)
        if id(v) in index:
            return ("ref", index[id(v)])
        index[id(v)] = len(nodes)
        slot = len(nodes)
        nodes.append(None)
        if isinstance(v, list):
            nodes[slot] = ("list", [ref(x) for x in v])
        else:
            nodes[slot] = ("dict", [(k, ref(x)) for k, x in v.items()])
        return ("ref", slot)

    return [ref(value), nodes]


def load_plist(data: bytes):
    """``plistlib.loads`` plus the format's rule that dictionary keys are strings."""
    value = plistlib.loads(data)
    _check_keys(value, set())
    return value


def _check_keys(value, seen: set) -> None:
    if isinstance(value, (list, dict)):
        if id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, dict):
            bad = [k for k in value if not isinstance(k, str)]
            if bad:
                raise assay.InvariantViolation(
                    "plist-string-keys", f"loads returned a dict key {bad[0]!r}", kind="non-string-key"
                )
            value = list(value.values())
        for item in value:
            _check_keys(item, seen)


@assay.target(
    expected=(plistlib.InvalidFileException, ExpatError, ValueError),
    sources=["plistlib"],
    seeds=_PLIST_SEEDS,
    max_len=2048,
)
def oracle_roundtrip_plist(data: bytes) -> None:
    round_trip(load_plist, _plist_encoder(data), data, name="plist", normalize=canonical)


def _nan_safe(value):
    """NaN as a marker that equals itself (``json`` reads ``NaN`` by default)."""
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, list):
        return [_nan_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_safe(v) for k, v in value.items()}
    return value


@assay.target(
    expected=(ValueError, RecursionError),
    sources=["json"],
    strategy="json@1",
    max_len=1024,
    seeds=[b'{"a": [1, 2.5e3, -0.0, NaN, "\\ud800"], "b": null}', b"[1e400, -1e400]"],
)
def oracle_roundtrip_json(data: bytes) -> None:
    round_trip(json.loads, json.dumps, data, name="json", normalize=_nan_safe)
