"""Fuzz target for the standard library's ``tomllib`` with a round trip through ``tomli_w``.

Oracle (``roundtrip``): for every document ``tomllib`` accepts,
``tomllib.loads(tomli_w.dumps(doc)) == doc`` where ``doc = tomllib.loads(text)``.
The writer must accept every value the reader produces (kind ``dump-failed``), the
reader must accept what the writer wrote (kind ``reload-failed``) and the values
must agree, types included (kind ``mismatch``).

Normalization (documented, not bugs): NaN never equals itself and TOML leaves the
sign of ``nan`` to the implementation, so any two NaNs compare equal here.
``1``, ``1.0`` and ``true`` are different TOML values, so types are compared too.
"""

from __future__ import annotations

import tomllib

import tomli_w
from _compare import same_value

import assay

_SEEDS = [
    b'title = "TOML Example"\n\n[owner]\nname = "Tom Preston-Werner"\ndob = 1979-05-27T07:32:00-08:00\n',
    b'[database]\nenabled = true\nports = [ 8000, 8001, 8002 ]\ndata = [ ["delta", "phi"], [3.14] ]\n'
    b"temp_targets = { cpu = 79.5, case = 72.0 }\n",
    b'[[products]]\nname = "Hammer"\nsku = 738594937\n\n[[products]]\n\n[[products]]\nname = "Nail"\ncolor = "gray"\n',
    b'str1 = """\nRoses are red\\\n  Violets are blue"""\nwinpath = \'C:\\Users\\nodejs\\templates\'\n'
    b"regex = '''I [dw]on't need \\d{2} apples'''\n",
    b"int1 = +99\nhex = 0xDEAD_BEEF\noct = 0o755\nbin = 0b1101\nflt = -2E-2\nsf = -inf\nnan = nan\n"
    b"ld = 1979-05-27\nlt = 07:32:00.999999\nldt = 1979-05-27T00:32:00.999999\n",
    b'"quoted key" = 1\nsite."google.com" = true\na.b.c = { d = [ { e = 1 } ] }\n"\\u00e9" = "\\U0001F600"\n',
]

_DICT = [
    b"[",
    b"]",
    b"[[",
    b"]]",
    b"{",
    b"}",
    b"=",
    b",",
    b".",
    b'"',
    b"'",
    b'"""',
    b"'''",
    b"\\u",
    b"\\U",
    b"\\",
    b"\n",
    b"true",
    b"false",
    b"inf",
    b"nan",
    b"0x",
    b"0o",
    b"0b",
    b"1979-05-27",
    b"T07:32:00",
    b"Z",
    b"+01:00",
    b"e+",
    b"_",
    b"#",
]


def _same(a: object, b: object) -> bool:
    return same_value(a, b, ordered_keys=False)


def _depth(value: object) -> int:
    """Nesting depth of a parsed document (iterative: documents can be ~1000 deep)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return deepest


@assay.target(
    expected=(tomllib.TOMLDecodeError, UnicodeDecodeError),
    sources=["tomllib", "tomli_w"],
    max_len=4096,
    seeds=_SEEDS,
    dictionary=_DICT,
    timeout=2.0,
)
def toml_roundtrip(data: bytes) -> None:
    doc = tomllib.loads(data.decode("utf-8"))
    assay.feature("depth", min(_depth(doc), 64))
    try:
        text = tomli_w.dumps(doc)
    except (TypeError, ValueError) as exc:
        raise assay.InvariantViolation(
            "roundtrip", f"tomli_w cannot write {doc!r}: {exc!r}", kind="dump-failed"
        ) from exc
    try:
        again = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise assay.InvariantViolation("roundtrip", f"tomllib rejects {text!r}: {exc}", kind="reload-failed") from exc
    if not _same(doc, again):
        raise assay.InvariantViolation("roundtrip", f"{doc!r} -> {text!r} -> {again!r}", kind="mismatch")
