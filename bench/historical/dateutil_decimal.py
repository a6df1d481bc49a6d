"""python-dateutil 2.7.0: ``parser.parse`` leaks ``decimal.InvalidOperation``.

``dateutil.parser.parse`` documents ``ValueError`` (unknown string format) and
``OverflowError``.  2.7.0 converts numeric tokens with ``decimal.Decimal`` without
guarding it, so malformed input escapes as ``decimal.InvalidOperation``.  Two
NEWS entries fix it: 2.7.1 "Fixed issue where parser.parse would occasionally
raise decimal.Decimal-specific error types rather than ValueError" (gh issue
#632, pr #636; e.g. ``0: ``) and 2.7.3 for ``NaN``/infinite values (gh issue
#662, pr #679; e.g. ``nan``).  The "fixed" release here is 2.7.3, which has both.
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
    "reference": "dateutil issues #632 (fixed in 2.7.1) and #662 (fixed in 2.7.3), NEWS",
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
