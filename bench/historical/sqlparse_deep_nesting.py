"""sqlparse 0.4.4: deeply nested brackets raise ``RecursionError`` (CVE-2024-4340).

``sqlparse.parse`` groups bracketed token lists recursively; about a thousand
nested ``(``/``[`` pairs exhaust the interpreter stack and a ``RecursionError``
escapes.  0.5.0 (GHSA-2m57-hf25-phgg) turns it into ``SQLParseError``.
"""

from __future__ import annotations

import sqlparse
from sqlparse.exceptions import SQLParseError

import assay

HISTORY = {
    "venv": "sqlparse-0.4.4",
    "requirement": "sqlparse==0.4.4",
    "fixed": "sqlparse==0.5.0",
    "module": "sqlparse",
    "kind": "crash",
    "bug": ["RecursionError"],
    "reference": "CVE-2024-4340, GHSA-2m57-hf25-phgg",
    "poc": b"[" * 1000 + b"]" * 1000,
}


@assay.target(
    name="sqlparse_0_4_4_nesting",
    expected=(SQLParseError,),
    sources=["sqlparse"],
    seeds=[b"select a from t where b in (1, 2, (3 + 4))", b"select [x] from [y]", b"insert into t values (1, 'a')"],
    max_len=4096,
)
def sqlparse_parse(data: bytes) -> None:
    sqlparse.parse(data.decode("latin-1"))
