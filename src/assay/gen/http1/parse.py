"""Reading bytes back into streams, losslessly (``render(parse(data)) == data``)."""

from __future__ import annotations

from dataclasses import replace

from assay.gen.http1.model import (
    CRLF,
    MAX_PARSE_BYTES,
    MAX_PARSE_CHUNKS,
    OWS,
    Chunk,
    Header,
    Http1Message,
    Http1Stream,
)


class _Reject(Exception):
    pass


def _line(data: bytes, pos: int) -> tuple[bytes, bytes, int]:
    """The line at ``pos`` without its terminator, the terminator, and the next position."""
    nl = data.find(b"\n", pos)
    if nl < 0:
        raise _Reject
    if nl > pos and data[nl - 1 : nl] == b"\r":
        return data[pos : nl - 1], CRLF, nl + 1
    return data[pos:nl], b"\n", nl + 1


def _split_header(line: bytes, eol: bytes) -> Header:
    colon = line.find(b":")
    if colon <= 0:
        raise _Reject
    rest = line[colon + 1 :]
    stripped = rest.lstrip(OWS)
    sep = rest[: len(rest) - len(stripped)]
    value = stripped.rstrip(OWS)
    return Header(line[:colon], value, sep, stripped[len(value) :], eol)


def _read_fields(data: bytes, pos: int) -> tuple[list[Header], bytes, int]:
    """Header lines up to the empty line; returns them, the empty line's terminator, next pos."""
    headers: list[Header] = []
    while True:
        line, eol, pos = _line(data, pos)
        if not line:
            return headers, eol, pos
        if line[:1] in (b" ", b"\t"):
            if not headers:
                raise _Reject
            prev = headers[-1]
            # Keep the fold verbatim inside the value: trail + eol + continuation.
            folded = prev.value + prev.trail + prev.eol + line
            value = folded.rstrip(OWS)
            headers[-1] = replace(prev, value=value, trail=folded[len(value) :], eol=eol)
        else:
            headers.append(_split_header(line, eol))
        if len(headers) > 256:
            raise _Reject


def _header_values(headers: tuple[Header, ...] | list[Header], name: bytes) -> list[bytes]:
    return [h.value for h in headers if h.name.lower() == name]


def _is_chunked(headers: list[Header]) -> bool:
    values = _header_values(headers, b"transfer-encoding")
    return bool(values) and values[-1].split(b",")[-1].strip().lower() == b"chunked"


def _content_length(headers: list[Header]) -> int | None:
    for value in _header_values(headers, b"content-length"):
        first = value.split(b",")[0].strip()
        if first.isdigit() and len(first) <= 18:
            return int(first)
    return None


def body_forbidden(message: Http1Message) -> bool:
    return message.kind == "response" and (message.status[:1] == b"1" or message.status in (b"204", b"304"))


def _read_message(data: bytes, pos: int, kind: str) -> tuple[Http1Message, int]:
    line, start_eol, pos = _line(data, pos)
    if kind == "request":
        first, last = line.find(b" "), line.rfind(b" ")
        if first <= 0 or last == first:
            raise _Reject
        message = Http1Message(
            "request", method=line[:first], target=line[first + 1 : last], version=line[last + 1 :], start_eol=start_eol
        )
    else:
        if not line.startswith(b"HTTP/"):
            raise _Reject
        parts = line.split(b" ", 2)
        if len(parts) < 2:
            raise _Reject
        message = Http1Message(
            "response",
            version=parts[0],
            status=parts[1],
            reason=parts[2] if len(parts) == 3 else None,
            start_eol=start_eol,
        )
    headers, head_end, pos = _read_fields(data, pos)
    message = replace(message, headers=tuple(headers), head_end=head_end)
    if body_forbidden(message):
        return message, pos
    if _is_chunked(headers):
        chunks: list[Chunk] = []
        while True:
            nl = data.find(b"\r\n", pos)
            if nl < 0:
                raise _Reject
            size_line = data[pos:nl]
            digits = len(size_line) - len(size_line.lstrip(b"0123456789abcdefABCDEF"))
            if digits == 0 or digits > 16:
                raise _Reject
            size, ext = size_line[:digits], size_line[digits:]
            pos = nl + 2
            n = int(size, 16)
            if n == 0:
                trailers, _end, pos = _read_fields(data, pos)
                if _end != CRLF:
                    raise _Reject
                return replace(
                    message,
                    framing="chunked",
                    chunks=tuple(chunks),
                    last=Chunk(size, b"", ext),
                    trailers=tuple(trailers),
                ), pos
            if data[pos + n : pos + n + 2] != CRLF:
                raise _Reject
            chunks.append(Chunk(size, data[pos : pos + n], ext))
            pos += n + 2
            if len(chunks) > MAX_PARSE_CHUNKS:
                raise _Reject
    length = _content_length(headers)
    if length is not None:
        return replace(message, framing="length", body=data[pos : pos + length]), min(len(data), pos + length)
    if kind == "response":
        return replace(message, framing="close", body=data[pos:]), len(data)
    return message, pos


def parse_stream(data: bytes) -> Http1Stream | None:
    """The messages of ``data``, or ``None`` if it is not a readable HTTP/1 stream."""
    if not data or len(data) > MAX_PARSE_BYTES:
        return None
    kind = "response" if data.startswith(b"HTTP/") else "request"
    messages: list[Http1Message] = []
    pos = 0
    try:
        while pos < len(data):
            message, pos = _read_message(data, pos, kind)
            messages.append(message)
            if len(messages) > 64:
                return None
    except _Reject:
        return None
    return Http1Stream(tuple(messages))
