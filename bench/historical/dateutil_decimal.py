"""python-dateutil 2.7.0: ``parser.parse("nan")`` raises ``decimal.InvalidOperation``.

``dateutil.parser.parse`` documents ``ValueError`` (unknown string format) and
``OverflowError``.  2.7.0 parses numeric tokens with ``decimal.Decimal`` and an
input such as ``nan`` or ``1 nan`` escapes as ``decimal.InvalidOperation``.
Fixed in 2.7.3 (NEWS: "Fixed issue where parser.parse would raise Decimal-specific
errors instead of a standard ValueError if certain malformed values were parsed
(e.g. NaN or infinite values)", dateutil issue #662 / PR #679).
"""

from __future__ import annotations

from dateutil import parser

import assay

HISTORY = {
    "venv": "python-dateutil-2.7.0",
    "requirement": "python-dateutil==2.7.0",
    "fixed": "python-dateutil==2.7.3",
    "module": "dateutil",
    "kind": "crash",
    "bug": ["InvalidOperation"],
    "reference": "dateutil/dateutil issue #662, PR #679 (NEWS 2.7.3)",
    "poc": b"nan",
}


@assay.target(
    name="dateutil_2_7_0_parse",
    expected=(ValueError, OverflowError),
    sources=["dateutil.parser"],
    seeds=[b"2003-09-25T10:49:41", b"Thu Sep 25 10:36:28 BRST 2003", b"10:36:28.5 PM", b"25 Sep 2003"],
    max_len=128,
)
def dateutil_parse(data: bytes) -> None:
    parser.parse(data.decode("latin-1"))
