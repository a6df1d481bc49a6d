"""Small codecs and parsers, each in a correct and a deliberately broken version.

The non-vacuity tests fuzz targets built on these: the broken version must make
its oracle fire within a case cap, and the correct one must not.
"""

from __future__ import annotations

import json

# --------------------------------------------------------------------------- round trip: an escape codec

_ESCAPES = {ord("n"): ord("\n"), ord("t"): ord("\t"), ord("\\"): ord("\\"), ord('"'): ord('"')}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}


def unescape(data: bytes) -> bytes:
    """Decode backslash escapes (``\\n``, ``\\t``, ``\\\\``, ``\\"``); others are a ValueError."""
    out = bytearray()
    i = 0
    while i < len(data):
        c = data[i]
        if c == ord("\\"):
            if i + 1 >= len(data) or data[i + 1] not in _ESCAPES:
                raise ValueError(f"bad escape at {i}")
            out.append(_ESCAPES[data[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return bytes(out)


def unescape_drops_byte(data: bytes) -> bytes:
    """``unescape`` with an off-by-one: an escaped backslash also swallows the next byte."""
    out = bytearray()
    i = 0
    while i < len(data):
        c = data[i]
        if c == ord("\\"):
            if i + 1 >= len(data) or data[i + 1] not in _ESCAPES:
                raise ValueError(f"bad escape at {i}")
            out.append(_ESCAPES[data[i + 1]])
            i += 3 if data[i + 1] == ord("\\") else 2  # the planted bug
        else:
            out.append(c)
            i += 1
    return bytes(out)


def escape(value: bytes) -> bytes:
    out = bytearray()
    for c in value:
        if c in _UNESCAPES:
            out += b"\\" + bytes([_UNESCAPES[c]])
        else:
            out.append(c)
    return bytes(out)


# --------------------------------------------------------------------------- rechunk: a CRLF line splitter


class LineSplitter:
    """Splits a byte stream into CRLF-terminated lines, carrying partial lines across feeds."""

    def __init__(self) -> None:
        self.pending = b""
        self.lines: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        parts = (self.pending + chunk).split(b"\r\n")
        self.pending = parts.pop()
        self.lines.extend(parts)

    def close(self) -> list[bytes]:
        if self.pending:
            self.lines.append(self.pending)
        return self.lines


class ForgetfulLineSplitter(LineSplitter):
    """Loses state at a chunk boundary: a chunk ending in a bare CR drops it (thinking it stray)."""

    def feed(self, chunk: bytes) -> None:
        parts = (self.pending + chunk).split(b"\r\n")
        self.pending = parts.pop().removesuffix(b"\r")  # the planted bug
        self.lines.extend(parts)


def split_lines(chunks: list[bytes]) -> list[bytes]:
    parser = LineSplitter()
    for c in chunks:
        parser.feed(c)
    return parser.close()


def split_lines_forgetful(chunks: list[bytes]) -> list[bytes]:
    parser = ForgetfulLineSplitter()
    for c in chunks:
        parser.feed(c)
    return parser.close()


# --------------------------------------------------------------------------- error shape: a record validator


def _is_age(v: object) -> bool:
    return type(v) is int and 0 <= v <= 150


def validate_person(record: object) -> bool:
    """The validator: name a non-empty string, age an int in 0..150, email holding an '@'."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("name"), str)
        and record["name"] != ""
        and _is_age(record.get("age"))
        and isinstance(record.get("email"), str)
        and "@" in record["email"]
    )


def validate_person_lax(record: object) -> bool:
    """The same validator letting one field through: ``age`` is never checked."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("name"), str)
        and record["name"] != ""
        and isinstance(record.get("email"), str)
        and "@" in record["email"]
    )


class Person:
    """The code that uses validated records; its constructor enforces every field."""

    def __init__(self, record: dict) -> None:
        name, age, email = record["name"], record["age"], record["email"]
        if not isinstance(name, str) or not name:
            raise ValueError("name")
        if not _is_age(age):
            raise ValueError("age")
        if not isinstance(email, str) or "@" not in email:
            raise ValueError("email")
        self.name, self.age, self.email = name, age, email


def load_record(data: bytes) -> object:
    return json.loads(data)


# --------------------------------------------------------------------------- differential: hex decoders

_HEX = "0123456789abcdef"


def hex_decode(text: str) -> bytes:
    """Strict hex decoding (either case); anything else is a ValueError."""
    if len(text) % 2:
        raise ValueError("odd length")
    digits = [_HEX.index(c) if c in _HEX else _HEX.index(c.lower()) if c in "ABCDEF" else -1 for c in text]
    if -1 in digits:
        raise ValueError("not a hex digit")
    return bytes(16 * hi + lo for hi, lo in zip(digits[::2], digits[1::2]))


def hex_decode_lowercase_only(text: str) -> bytes:
    """A second decoder that mis-handles one input class: uppercase digits decode to wrong values."""
    if len(text) % 2:
        raise ValueError("odd length")
    digits = []
    for c in text:
        if c.isdigit() and c.isascii():
            digits.append(ord(c) - ord("0"))
        elif c in "abcdef":
            digits.append(ord(c) - ord("a") + 10)
        elif c in "ABCDEF":
            digits.append(ord(c) - ord("A"))  # the planted bug: forgets the +10
        else:
            raise ValueError("not a hex digit")
    return bytes(16 * hi + lo for hi, lo in zip(digits[::2], digits[1::2]))


# --------------------------------------------------------------------------- idempotence: path normalisation


def collapse_slashes(path: str) -> str:
    """Collapse runs of '/' to one."""
    while "//" in path:
        path = path.replace("//", "/")
    return path


def collapse_slashes_once(path: str) -> str:
    """One pass only: '///' becomes '//' (the planted bug)."""
    return path.replace("//", "/")


# --------------------------------------------------------------------------- monotonicity: a session state machine

FRESH, READY, CLOSED = 0, 1, 2


def session_states(commands: bytes, *, reset_reverts: bool = False) -> list[int]:
    """States of a session driven by one-byte commands: I(nit), D(ata), R(eset), Q(uit).

    The state never goes back: R on a ready session keeps it ready (it only
    clears buffers).  With ``reset_reverts`` (the planted bug) R returns to FRESH.
    """
    state = FRESH
    states = [state]
    for c in commands:
        if c == ord("I") and state == FRESH:
            state = READY
        elif c == ord("R") and state == READY and reset_reverts:
            state = FRESH
        elif c == ord("Q"):
            state = CLOSED
        states.append(state)
    return states


# --------------------------------------------------------------------------- http: a small file server


def make_file_app(root: str, *, confine: bool):
    """A WSGI app serving ``GET /files/<path>`` from ``root``, and ``/sum?a=..&b=..``.

    Errors inside a handler become a 500 (as any WSGI server would answer).  The
    planted bugs: without ``confine`` the file path is joined without checking it
    stays under ``root``; ``/sum`` converts its arguments without a 400 for bad
    numbers unless ``confine`` (the same switch: the "fixed" app fixes both).
    """
    import os
    import re
    from urllib.parse import parse_qs

    def handle(environ):
        path = environ["PATH_INFO"]
        if path.startswith("/files/"):
            rel = path[len("/files/") :]
            full = os.path.normpath(os.path.join(root, rel))
            if confine and os.path.commonpath([full, root]) != root:
                return "404 Not Found", b"no such file"
            if not os.path.isfile(full):
                return "404 Not Found", b"no such file"
            with open(full, "rb") as f:
                return "200 OK", f.read()
        if path == "/sum":
            args = parse_qs(environ["QUERY_STRING"])
            try:
                a, b = args["a"][0], args["b"][0]
            except KeyError:
                return "400 Bad Request", b"need a and b"
            if confine and not (re.fullmatch(r"-?[0-9]+", a) and re.fullmatch(r"-?[0-9]+", b)):
                return "400 Bad Request", b"numbers please"
            return "200 OK", str(int(a) + int(b)).encode()
        return "404 Not Found", b"no route"

    def app(environ, start_response):
        try:
            status, body = handle(environ)
        except Exception:  # the server's last resort, like wsgiref's error_output
            status, body = "500 Internal Server Error", b"internal error"
        start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]

    return app
