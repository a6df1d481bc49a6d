"""sqlparse 0.4.4: deeply nested brackets raise ``RecursionError`` (CVE-2024-4340).

``sqlparse.parse`` groups bracketed token lists recursively (one Python frame per
nesting level); with the default 1,000-frame limit about a thousand nested
``(``/``[`` pairs exhaust the stack and a ``RecursionError`` escapes.  0.5.0
(GHSA-2m57-hf25-phgg) catches it and raises ``SQLParseError``.

Parsing ~1,000 nested pairs takes about 7 s in 0.4.4 (grouping is quadratic
too), far over a per-input timeout, so this target gives sqlparse a stack of
``STACK`` frames above the caller instead of 1,000: the same unbounded recursion
then shows at ~200 levels, in ~0.1 s.  Under the same budget 0.5.0 raises its
documented ``SQLParseError`` (``time_to_bug.py --verify`` checks both).
"""

from __future__ import annotations

import sys

import sqlparse
from sqlparse.exceptions import SQLParseError

import assay

STACK = 200  # frames sqlparse may use; the interpreter default leaves it ~1,000

HISTORY = {
    "venv": "sqlparse-0.4.4",
    "requirement": "sqlparse==0.4.4",
    "fixed": "sqlparse==0.5.0",
    "module": "sqlparse",
    "kind": "crash",
    "bug": ["RecursionError"],
    "reference": "CVE-2024-4340, GHSA-2m57-hf25-phgg",
    "poc": b"(" * 300 + b")" * 300,
}


def _depth() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        n, frame = n + 1, frame.f_back
    return n


@assay.target(
    name="sqlparse_0_4_4_nesting",
    expected=(SQLParseError,),
    sources=["sqlparse"],
    seeds=[b"select a from t where b in (1, 2, (3 + 4))", b"select [x] from [y]", b"insert into t values (1, 'a')"],
    max_len=1024,
)
def sqlparse_parse(data: bytes) -> None:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_depth() + STACK)
    try:
        sqlparse.parse(data.decode("latin-1"))
    finally:
        sys.setrecursionlimit(old)
