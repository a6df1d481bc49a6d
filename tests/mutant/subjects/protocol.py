"""A small request parser, planted for the directed differential-fuzzing tests.

A request line, a header block and a body.  Its deepest checks are reached only
after a valid prefix: a priority header's bound (a comparison on a value parsed
after the request line and the header block), and a body-size limit four times
the target's ``max_len``.
"""

from __future__ import annotations


class ProtocolError(ValueError):
    """The input is not a request."""


def parse_request(data: bytes) -> tuple:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        raise ProtocolError("no end of the header block")
    lines = head.split(b"\r\n")
    method, _, rest = lines[0].partition(b" ")
    if method not in (b"GET", b"POST", b"PUT"):
        raise ProtocolError("unknown method")
    path, _, version = rest.partition(b" ")
    if not path.startswith(b"/") or version != b"HTTP/1.1":
        raise ProtocolError("bad request line")
    headers: dict[bytes, bytes] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name:
            raise ProtocolError("bad header")
        headers[name.strip().lower()] = value.strip()
    priority = priority_of(headers)
    if len(body) > 256:
        raise ProtocolError("body too large")
    return method, path, sorted(headers), priority, len(body)


def priority_of(headers: dict[bytes, bytes]) -> int:
    value = headers.get(b"priority")
    if value is None:
        return 0
    if not value.isdigit():
        raise ProtocolError("priority is not a number")
    level = int(value)
    if level > 41:
        raise ProtocolError("priority out of range")
    return level


class HeaderReader:
    """Header lines under a size limit the instance holds, set from a constructor default."""

    def __init__(self, max_line: int = 4096 + 128) -> None:
        self.max_line = max_line

    def read(self, data: bytes) -> list[bytes]:
        lines = data.split(b"\r\n")
        for line in lines:
            if len(line) > self.max_line:
                raise ProtocolError("header line too long")
        return lines
