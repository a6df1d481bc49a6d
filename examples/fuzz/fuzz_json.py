"""Fuzz target for the standard library's ``json``.

Two relations on every document ``json.loads`` accepts:

* ``c-vs-python``: CPython ships a C scanner (``_json``) and a pure-Python one
  (``json.scanner.py_make_scanner`` with ``json.decoder.py_scanstring``).  Both
  implement the same decoder, so on every input they must accept the same
  documents and produce the same values (error messages are not compared).
* ``roundtrip``: ``json.loads(json.dumps(v)) == v`` for ``v = json.loads(text)``,
  with ``ensure_ascii`` both on and off.

Normalization: inputs nested deeper than the pure-Python scanner's recursion limit
are skipped (see ``_decode``).  NaN never equals itself, so NaNs compare equal here (``json`` reads
``NaN``/``Infinity`` by default and writes them back the same way).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner

from _compare import same_value

import assay


def _py_decoder() -> json.JSONDecoder:
    decoder = json.JSONDecoder()
    decoder.parse_string = json.decoder.py_scanstring
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    return decoder


_C = json.JSONDecoder()
_PY = _py_decoder()


def _same(a: object, b: object) -> bool:
    return same_value(a, b, ordered_keys=True)


def _decode(decoder: json.JSONDecoder, text: str):
    try:
        return decoder.decode(text), None
    except json.JSONDecodeError as exc:
        return None, (exc.msg, exc.pos)
    except RecursionError:
        # The pure-Python scanner recurses a few frames per nesting level, so it
        # hits the interpreter's recursion limit near depth 400, the C one near
        # 2000+.  That is a known property of the fallback, not a disagreement.
        return None, ("RecursionError", -1)


_SEEDS = [
    b'{"name": "assay", "version": [0, 1, 0], "ok": true, "none": null}',
    b'[1, -2.5e+10, 0.000001, 1E400, -0, "\\u00e9\\ud83d\\ude00", "tab\\tnew\\nline"]',
    b'{"nested": {"a": [{"b": {}}, []]}, "dup": 1, "dup": 2}',
    b'[NaN, Infinity, -Infinity, "\\"quoted\\"", "\\/\\\\"]',
    '"caf\u00e9 \u2603"'.encode("utf-8"),
    b"  123  ",
]


@assay.target(
    expected=(json.JSONDecodeError, UnicodeDecodeError),
    sources=["json"],
    max_len=1024,
    seeds=_SEEDS,
    dictionary=[
        b"{",
        b"}",
        b"[",
        b"]",
        b":",
        b",",
        b'"',
        b"\\u",
        b"\\ud800",
        b"\\",
        b"true",
        b"false",
        b"null",
        b"NaN",
        b"Infinity",
        b"-",
        b"e+",
        b"E-",
        b".",
        b"0",
    ],
    timeout=2.0,
)
def json_roundtrip(data: bytes) -> None:
    text = data.decode("utf-8")
    value, error = _decode(_C, text)
    py_value, py_error = _decode(_PY, text)
    assay.feature("outcome", (type(value).__name__, error[0] if error else None))
    if "RecursionError" in (error and error[0], py_error and py_error[0]):
        return
    # Only acceptance and the value are compared: the two scanners word some error
    # messages differently and may point one character apart (e.g. for a bad
    # escape, C points at the backslash, Python after it).  That is cosmetic.
    if (error is None) != (py_error is None) or (error is None and not _same(value, py_value)):
        raise assay.InvariantViolation(
            "c-vs-python",
            f"{text!r}: C gives {value!r}/{error!r}, Python gives {py_value!r}/{py_error!r}",
            kind="mismatch",
        )
    if error is not None:
        raise json.JSONDecodeError(error[0], text, error[1])
    for ensure_ascii in (True, False):
        out = json.dumps(value, ensure_ascii=ensure_ascii)
        again = json.loads(out)
        if not _same(value, again):
            raise assay.InvariantViolation(
                "roundtrip", f"{text!r} -> {value!r} -> {out!r} -> {again!r}", kind=f"ensure_ascii={ensure_ascii}"
            )
