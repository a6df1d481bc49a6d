"""sqlparse 0.4.3: the string-literal regex backtracks exponentially (CVE-2023-30608).

The lexer's single-quoted string rule ``'(''|\\\\\\\\|\\\\'|[^'])*'`` lets a
backslash match two alternatives; an unterminated literal full of backslashes
makes it try every split.  Fixed in 0.4.4 (GHSA-rrm6-wvj7-cwh2).  Slowness
target: see ``_slow.py``.
"""

from __future__ import annotations

import sqlparse
from _slow import slow_guard

import assay

THRESHOLD = 0.25  # seconds; a seed takes ~0.5 ms, a random 128-byte input at most ~10 ms

HISTORY = {
    "venv": "sqlparse-0.4.3",
    "requirement": "sqlparse==0.4.3",
    "fixed": "sqlparse==0.4.4",
    "module": "sqlparse",
    "kind": "slow",
    "threshold_ms": 250,
    "bug": ["SlowInput", "wedge"],
    "reference": "CVE-2023-30608, GHSA-rrm6-wvj7-cwh2",
    "poc": b"select '" + b"\\" * 34,
}


@assay.target(
    name="sqlparse_0_4_3_string_literal",
    sources=["sqlparse"],
    seeds=[b"select 'a\\'b' from t", b"select \"x\" from y where z = 'it''s'", b"update t set a = 'b\\\\c'"],
    max_len=128,
    slow=THRESHOLD,  # cost feedback: the search climbs toward slower inputs
)
def sqlparse_parse_strings(data: bytes) -> None:
    slow_guard(sqlparse.parse, data.decode("latin-1"), THRESHOLD)
