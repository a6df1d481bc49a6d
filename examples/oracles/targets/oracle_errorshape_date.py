"""Error shape: ``email.utils.parsedate_tz`` as the validator, ``parsedate_to_datetime`` as the user.

Code that checks a ``Date:`` header with ``parsedate_tz(value) is not None``
and then converts it with ``parsedate_to_datetime`` assumes the two agree on
what a parseable date is.
"""

from __future__ import annotations

from email.utils import parsedate_to_datetime, parsedate_tz

import assay
from assay.oracles import error_shape

_SEEDS = [
    b"Fri, 21 Nov 1997 09:55:06 -0600",
    b"21 Nov 97 09:55:06 GMT",
    b"Mon, 1 Jan 2024 00:00:00 +0000",
    b"Tue, 29 Feb 2000 23:59:60 EST",
]


def parses(value: str) -> bool:
    """``parsedate_tz`` found a date, and its fields are in RFC 5322 section 3.3 ranges.

    ``parsedate_tz`` alone checks syntax only (it returns day 0 or hour 99 as
    read); the first campaign showed ``parsedate_tz(v) is not None`` is no
    validation at all ("0 Feb 0 0:0", day 0).  So the ranges are checked here,
    as the RFC states them, except the leap second: RFC 5322 allows second 60,
    ``datetime`` documents that it has none, and the second campaign found
    exactly that ("9 Feb 0 0:0:60", valid-rejected).  A documented difference,
    so the validator here follows the user (0..59).  Likewise the year: the RFC
    sets no upper bound, ``datetime.MAXYEAR`` is 9999 (third campaign:
    "1 Nov 50000 0:0") and the zone: ``datetime.timezone`` documents offsets
    strictly within 24 hours, the RFC bounds only the digits (fourth campaign:
    "1 Nov 0 0:0 6000", read as +60:00).
    """
    t = parsedate_tz(value)
    if t is None:
        return False
    year, month, day, hour, minute, second = t[:6]
    offset = t[9] or 0
    days = [
        31,
        29 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 28,
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ]
    return (
        1 <= month <= 12
        and 1 <= day <= days[month - 1]
        and 0 <= hour <= 23
        and 0 <= minute <= 59
        and 0 <= second <= 59
        and 1 <= year <= 9999
        and abs(offset) < 24 * 3600
    )


@assay.target(sources=["email._parseaddr", "email.utils"], seeds=_SEEDS, max_len=64)
def oracle_errorshape_date(data: bytes) -> None:
    error_shape(parses, parsedate_to_datetime, data.decode("latin-1"), name="parsedate_tz~parsedate_to_datetime")
