"""python-multipart 0.0.6: Content-Type option parsing backtracks exponentially (CVE-2024-24762).

``parse_options_header`` matches quoted option values with ``"(?:\\\\.|[^"])*"``,
where a backslash fits both alternatives; an unterminated quoted value full of
backslashes makes the regex try every split.  0.0.7 (GHSA-2jv5-9r88-3w3p)
replaced the regex with ``email.message``-style parsing.  Slowness target: see
``_slow.py``.
"""

from __future__ import annotations

from _slow import slow_guard
from multipart.multipart import parse_options_header

import assay

THRESHOLD = 0.1  # seconds; a seed takes a few microseconds

HISTORY = {
    "venv": "python-multipart-0.0.6",
    "requirement": "python-multipart==0.0.6",
    "fixed": "python-multipart==0.0.7",
    "module": "multipart",
    "kind": "slow",
    "threshold_ms": 100,
    "bug": ["SlowInput", "wedge"],
    "reference": "CVE-2024-24762, GHSA-2jv5-9r88-3w3p",
    "poc": b'a; b="' + b"\\" * 30,
}


@assay.target(
    name="multipart_0_0_6_options_header",
    sources=["multipart"],
    seeds=[
        b'multipart/form-data; boundary="----WebKitFormBoundary7MA4YWxk"',
        b"text/plain; charset=utf-8",
        b'form-data; name="file"; filename="a\\"b.txt"',
    ],
    max_len=512,
    slow=THRESHOLD,  # cost feedback: the search climbs toward slower inputs
)
def multipart_options(data: bytes) -> None:
    slow_guard(parse_options_header, data, THRESHOLD)
