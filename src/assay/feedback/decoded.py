"""Input-to-state replacements for comparisons made *after decoding* the input.

A parser compares ``int(field, 16)``, ``float(v)``, ``b64decode(d)``,
``s.casefold()`` or ``json.loads(d)["k"]`` to a constant, so the operand it logs
appears in the input in another form.  :class:`DecodedForms` finds that form in
the input and writes the other operand in the same form:

* numbers: a decimal run (zero-padded to the field's width), a hex run (its case,
  its ``0x`` prefix, its width), a float run (``repr`` and ``%g``), and a decimal
  run off by a small constant (``int(f) - 1 == n``);
* text and bytes: base64 (standard, urlsafe, unpadded), base32, hex, percent
  encoding, JSON string escaping, and other letter case;
* transforms (AFL++ CmpLog): a byte run equal to the operand xor'ed with, or
  shifted by, one constant.

Each form gives at most one pair per comparison; the patterns always occur in
the input.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import re
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any

#: Longest operand (in bytes) whose encoded forms are searched.
MAX_FORM_OPERAND = 256
#: Shortest operand a transform (xor/shift) is searched for: shorter ones match by chance.
MIN_TRANSFORM = 3
#: Largest constant a decimal field may be off by (``int(f) + k == n``): wider
#: offsets mostly pair unrelated numbers.
MAX_OFFSET = 1
#: Most runs of one value considered per comparison.
MAX_RUNS = 2
#: Shortest operand whose hex and unpadded base64 forms are searched: one byte's
#: are two characters, which a parser's per-character checks would pair with every
#: two-digit number of the input.
MIN_ENCODED = 2
#: Shortest all-digit run also read as hex (a fixed-width field such as ``\u0041``);
#: shorter ones are decimal numbers far more often than hex.
MIN_HEX_FIELD = 4

_DEC = re.compile(rb"\d{1,20}")
_HEX = re.compile(rb"(?:0[xX])?[0-9a-fA-F]{1,16}")
#: Widths of the hex fields read inside a longer run of hex digits (a byte, a UTF-16 unit).
HEX_FIELD_WIDTHS = (2, 4)
#: Longest run of hex digits split into fields (a colour, an escape, a short hash; not a hex dump).
MAX_HEX_FIELDS_RUN = 16
_HEX_RUN = re.compile(rb"(\\u|\\x|%%|&#x|#|0[xX]|(?<![0-9a-zA-Z]))([0-9a-fA-F]{2,%d})" % MAX_HEX_FIELDS_RUN)
#: Escapes whose digits have a fixed width, whatever follows them.
_ESCAPE_WIDTHS = {b"\\u": 4, b"\\x": 2, b"%": 2}
_HEX_LETTERS = b"abcdefABCDEF"
_PCT = re.compile(rb"%[0-9A-Fa-f]{2}")
_FLOAT = re.compile(rb"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)", re.I)


#: Forms that leave most text as it is (so ``a`` may look raw while ``b`` must be escaped).
_ESCAPES = ("pct", "pct+", "json", "jsonu")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _fits_float(v: int | float) -> bool:
    """Is ``v`` a float, or an int a float can hold (a 400-digit Content-Length compared with ``inf`` is not)?"""
    return isinstance(v, float) or abs(v) <= sys.float_info.max


def _as_bytes(v: Any) -> bytes | None:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", "surrogatepass")
    return None


def _text_forms(v: Any) -> dict[str, bytes]:
    """The encoded forms of a str/bytes operand, by kind (the raw form excluded)."""
    raw = _as_bytes(v)
    if raw is None or not 0 < len(raw) <= MAX_FORM_OPERAND:
        return {}
    b64 = base64.b64encode(raw)
    b64u = base64.urlsafe_b64encode(raw)
    forms = {
        "b64": b64,
        "b64u": b64u,
        "b64n": b64.rstrip(b"="),
        "b64un": b64u.rstrip(b"="),
        "b32": base64.b32encode(raw),
        "hex": raw.hex().encode(),
        "HEX": raw.hex().upper().encode(),
        "pct": urllib.parse.quote(raw, safe="").encode(),
        "pct+": urllib.parse.quote_plus(raw, safe="").encode(),
    }
    if len(raw) < MIN_ENCODED:
        for kind in ("hex", "HEX", "b64n", "b64un"):
            del forms[kind]
    if isinstance(v, str):
        forms["json"] = json.dumps(v)[1:-1].encode()
        forms["jsonu"] = json.dumps(v, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")
    forms.update(escaped_forms(v, raw))
    return forms


def escaped_forms(v: str | bytes, raw: bytes) -> dict[str, bytes]:
    """``v`` with every character written as a hex escape: ``\\uXXXX`` (a str), ``%XX`` and
    ``\\xXX`` (its UTF-8 bytes), in both letter cases.  A client that escapes all of a
    value writes it so, and the text forms above (which escape only what needs it) never
    occur in such an input."""
    forms: dict[str, bytes] = {}
    if isinstance(v, str):
        units = [u for c in v for u in _utf16_units(c)]
        forms["uesc"] = "".join(f"\\u{u:04x}" for u in units).encode()
        forms["UESC"] = "".join(f"\\u{u:04X}" for u in units).encode()
    forms["pctall"] = "".join(f"%{c:02X}" for c in raw).encode()
    forms["pctall-lower"] = "".join(f"%{c:02x}" for c in raw).encode()
    forms["xesc"] = "".join(f"\\x{c:02x}" for c in raw).encode()
    forms["XESC"] = "".join(f"\\x{c:02X}" for c in raw).encode()
    return forms


def _utf16_units(c: str) -> tuple[int, ...]:
    """The UTF-16 code units of one character (a surrogate pair above U+FFFF), as ``\\u`` escapes write it."""
    o = ord(c)
    if o <= 0xFFFF:
        return (o,)
    o -= 0x10000
    return (0xD800 | o >> 10, 0xDC00 | o & 0x3FF)


@functools.lru_cache(maxsize=4096)
def _cached_forms(kind: type, v: Any) -> dict[str, bytes]:  # noqa: ARG001 - the type keeps b"a" and "a" apart
    return _text_forms(v)


def _forms_of(v: Any) -> dict[str, bytes]:
    """:func:`_text_forms`, each operand encoded once (a parser compares against the same few
    constants all the time); the dict is shared: read it, never change it."""
    kind = type(v)
    if (kind is str or kind is bytes) and len(v) <= MAX_FORM_OPERAND:
        return _cached_forms(kind, v)
    return _text_forms(v)  # unhashable, a subclass, or too long to have forms: not cached


def _like_case(template: bytes, word: bytes) -> bytes:
    if template.isupper():
        return word.upper()
    if template.islower():
        return word.lower()
    if template[:1].isupper() and template[1:].islower():
        return word[:1].upper() + word[1:].lower()
    return word


def _diff(s: bytes, op: Callable[[int, int], int]) -> bytes:
    return bytes(op(s[i + 1], s[i]) for i in range(len(s) - 1))


def _xor(x: int, y: int) -> int:
    return x ^ y


def _sub(x: int, y: int) -> int:
    return (x - y) & 0xFF


class DecodedForms:
    """The decoded views of one input, built once and asked per comparison."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.lower = data.lower()
        self._dec: dict[int, list[bytes]] | None = None
        self._hex: dict[int, list[bytes]] | None = None
        self._hex_fields: dict[int, list[tuple[bytes, int, int]]] | None = None
        self._float: dict[float, list[bytes]] | None = None
        self._diffs: dict[str, bytes] = {}
        self._views: dict[tuple[type, Any], tuple] = {}
        self._pct: bool | None = None  # does the input look percent-encoded (see _escapes)

    # -- runs of the input, by value (lazily) ---------------------------------------
    def _runs(self, pattern: re.Pattern, value: Callable[[bytes], Any]) -> dict:
        out: dict[Any, list[bytes]] = {}
        for m in pattern.finditer(self.data):
            try:
                v = value(m.group())
            except (ValueError, OverflowError):
                continue
            runs = out.setdefault(v, [])
            if len(runs) < MAX_RUNS and m.group() not in runs:
                runs.append(m.group())
        return out

    @property
    def dec(self) -> dict[int, list[bytes]]:
        if self._dec is None:
            self._dec = self._runs(_DEC, int)
        return self._dec

    @property
    def hex(self) -> dict[int, list[bytes]]:
        if self._hex is None:
            self._hex = self._runs(_HEX, lambda r: int(r, 16))
        return self._hex

    @property
    def hex_fields(self) -> dict[int, list[tuple[bytes, int, int]]]:
        """Fixed-width hex fields written inside text, by value: (run, offset, width), where
        the field is ``run[offset:offset + width]`` and ``run`` (with its marker) occurs in
        the input.  An escape (``\\u``, ``\\x``, ``%``) reads its width from the start of the
        digits after it, whatever follows; a colour (``#rrggbb``) or a run with hex letters
        is cut into aligned bytes and UTF-16 units."""
        if self._hex_fields is None:
            fields: dict[int, list[tuple[bytes, int, int]]] = {}
            for m in _HEX_RUN.finditer(self.data):
                mark, digits = m.group(1), m.group(2)
                run = m.group()
                escape = _ESCAPE_WIDTHS.get(mark)
                if escape is not None:
                    spots = (
                        [(len(mark), escape)] if len(digits) > escape else []
                    )  # a run of exactly the width: the plain hex pair
                elif mark or any(c in _HEX_LETTERS for c in digits):
                    end = m.end()
                    if end < len(self.data) and self.data[end : end + 1].isalnum():
                        continue  # part of a word
                    spots = [
                        (len(mark) + at, width)
                        for width in HEX_FIELD_WIDTHS
                        if len(digits) > width and len(digits) % width == 0
                        for at in range(0, len(digits), width)
                    ]
                else:
                    continue  # a decimal number: its digits are not hex fields
                for at, width in spots:
                    runs = fields.setdefault(int(run[at : at + width], 16), [])
                    if len(runs) < MAX_RUNS:
                        runs.append((run, at, width))
            self._hex_fields = fields
        return self._hex_fields

    @property
    def floats(self) -> dict[float, list[bytes]]:
        if self._float is None:
            self._float = self._runs(_FLOAT, float)
        return self._float

    def _escapes(self, kind: str) -> bool:
        """Does the input look like it uses ``kind``'s escaping (so escaping ``b`` is worth a try)?"""
        if kind.startswith("json"):
            return self.data.find(b'"') != -1
        if self._pct is None:
            data = self.data
            self._pct = _PCT.search(data) is not None or (data.find(b"=") != -1 and data.find(b"&") != -1)
        return self._pct

    # -- pairs ------------------------------------------------------------------------
    def pairs(self, a: Any, b: Any) -> list[tuple[bytes, bytes]]:
        """Pairs (form of ``a`` found in the input, ``b`` in the same form)."""
        out: list[tuple[bytes, bytes]] = []
        if _is_int(a) and _is_int(b):
            self._int_pairs(a, b, out)
        if isinstance(a, (int, float)) and isinstance(b, float) and not isinstance(a, bool):
            if _fits_float(a):
                self._float_pairs(float(a), b, out)
        elif isinstance(a, float) and _is_int(b):
            if _fits_float(b):
                self._float_pairs(a, float(b), out)
        if isinstance(a, (str, bytes, bytearray)) and isinstance(b, (str, bytes, bytearray)):
            self._text_pairs(a, b, out)
        return out

    def _int_pairs(self, a: int, b: int, out: list) -> None:
        if b >= 0:
            for run in self.dec.get(a, ()):
                out.append((run, str(b).zfill(len(run)).encode()))
        for run in self.hex.get(a, ()) if b >= 0 else ():
            prefix = run[:2] if run[:2] in (b"0x", b"0X") else b""
            digits = run[len(prefix) :]
            if not prefix and digits.isdigit() and (len(digits) < MIN_HEX_FIELD or int(digits) == a):
                continue  # a decimal-looking run: the decimal pair above covers it
            text = format(b, "X" if any(c in b"ABCDEF" for c in digits) else "x")
            out.append((run, prefix + text.zfill(len(digits)).encode()))
        for run, at, width in self.hex_fields.get(a, ()) if b >= 0 else ():
            digits = run[at : at + width]
            if b >= 1 << 4 * width:
                continue
            field = format(b, "X" if any(c in b"ABCDEF" for c in digits) else "x").zfill(width).encode()
            out.append((run, run[:at] + field + run[at + width :]))
        if a not in self.dec and abs(a) < 1 << 64:
            for v, runs in self.dec.items():
                k = a - v
                if k and abs(k) <= MAX_OFFSET and b - k >= 0:
                    out.append((runs[0], str(b - k).encode()))
                    break

    def _float_pairs(self, a: float, b: float, out: list) -> None:
        if math.isnan(a):
            return
        for run in self.floats.get(a, ()):
            out.append((run, repr(b).encode()))
            out.append((run, (b"%g" % b)))
            if b.is_integer() and abs(b) < 1e18:
                out.append((run, str(int(b)).encode()))

    def _text_pairs(self, a: Any, b: Any, out: list) -> None:
        found, ra, case_run, transforms = self._text_views(a)
        if found:
            fb = _forms_of(b)
            rb = _as_bytes(b)
            for kind, x in found:
                y = fb.get(kind)
                if y is None:
                    continue
                if x != ra:
                    out.append((x, y))
                elif kind in _ESCAPES and y != rb and self._escapes(kind):
                    out.append((x, y))  # ``a`` needed no escaping, ``b`` does: keep the field valid
        if case_run is None and not transforms:
            return
        rb = _as_bytes(b)
        if rb is None:
            return
        if case_run is not None:
            out.append((case_run, _like_case(case_run, rb)))
        for name, run, k in transforms:  # run = a (op) k, so the replacement is b (op) k
            out.append((run, bytes((c + k) & 0xFF if name == "sub" else c ^ k for c in rb)))

    def _text_views(self, a: Any) -> tuple[list[tuple[str, bytes]], bytes | None, bytes | None, list]:
        """What of a str/bytes operand ``a`` is in the input: its encoded forms found, its raw
        bytes, a run equal to it in another letter case, and its xor/shift transforms.

        Worked out once per operand and input (a parser compares one character against many).
        """
        key = (type(a), a) if type(a) is not bytearray else None
        cached = self._views.get(key) if key is not None else None
        if cached is not None:
            return cached
        find = self.data.find  # not ``x in data``: see input_to_state
        found = [(kind, x) for kind, x in _forms_of(a).items() if find(x) != -1]
        ra = _as_bytes(a)
        case_run = None
        transforms: list[tuple[str, bytes, int]] = []
        if ra is not None and 0 < len(ra) <= MAX_FORM_OPERAND:
            if ra.lower() != ra.upper():  # has letters: look for it in another case
                at = self.lower.find(ra.lower())
                if at != -1 and self.data[at : at + len(ra)] != ra:
                    case_run = self.data[at : at + len(ra)]
            if len(ra) >= MIN_TRANSFORM and find(ra) == -1:
                for name, op in (("xor", _xor), ("sub", _sub)):
                    diffs = self._diffs.get(name)
                    if diffs is None:
                        diffs = self._diffs[name] = _diff(self.data, op)
                    at = diffs.find(_diff(ra, op))
                    if at != -1:
                        run = self.data[at : at + len(ra)]
                        k = op(run[0], ra[0])
                        if k:
                            transforms.append((name, run, k))
        views = (found, ra, case_run, transforms)
        if key is not None:
            self._views[key] = views
        return views
