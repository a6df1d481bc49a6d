"""sqlparse 0.4.1: ``format(strip_comments=True)`` backtracks exponentially (CVE-2021-32839).

``StripCommentsFilter`` searches each comment with ``((\\r\\n|\\r|\\n)+) *$``; a
comment holding many ``\\r\\n`` and not ending in line breaks makes the regex try
every way of splitting them, exponential in their number.  Fixed in 0.4.2.
Slowness target: see ``_slow.py``.  (0.4.1 also has the
string-literal ReDoS of CVE-2023-30608; the artifact shows which one was hit.)
"""

from __future__ import annotations

import sqlparse
from _slow import slow_guard

import assay

THRESHOLD = 0.25  # seconds; a seed takes ~0.5 ms, a random 128-byte input at most ~10 ms

HISTORY = {
    "venv": "sqlparse-0.4.1",
    "requirement": "sqlparse==0.4.1",
    "fixed": "sqlparse==0.4.2",
    "module": "sqlparse",
    "kind": "slow",
    "threshold_ms": 250,
    "bug": ["SlowInput", "wedge"],
    "reference": "CVE-2021-32839 (sqlparse 0.4.2 changelog)",
    "poc": b"select /*" + b"\r\n" * 20 + b"x*/ 1",
}


def _format(text: str) -> str:
    return sqlparse.format(text, strip_comments=True)


@assay.target(
    name="sqlparse_0_4_1_strip_comments",
    sources=["sqlparse"],
    seeds=[b"select a -- note\nfrom t", b"select /* c */ 1", b"select *\r\nfrom t /* multi\r\nline */ where x = 1"],
    max_len=128,
    slow=THRESHOLD,  # cost feedback: the search climbs toward slower inputs
)
def sqlparse_strip_comments(data: bytes) -> None:
    slow_guard(_format, data.decode("latin-1"), THRESHOLD)
