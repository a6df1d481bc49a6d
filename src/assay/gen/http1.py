"""``http1@1``: HTTP/1.x request and response streams.

A value is an :class:`Http1Stream`, a list of pipelined :class:`Http1Message`
of one kind (all requests or all responses).  Every field keeps its exact bytes
(header-name case, the whitespace around a value, obsolete line folds, a chunk
size's spelling), so ``render`` is plain concatenation and ``parse`` is lossless:
``render(parse(data)) == data`` for every ``data`` it reads.

Framing lives in the headers, as on the wire: ``Content-Length`` and
``Transfer-Encoding`` are ordinary header fields, and a message's ``framing``
only says how its body bytes are laid out.  Generation keeps the two consistent;
mutation mostly does too, and at :data:`INVALID_RATE` breaks them on purpose
(a disagreeing or duplicated Content-Length, a chunk size that lies, a
continuation line at the start of the headers): the request-smuggling corners.

Three strategies are registered: ``http1@1`` (streams of either kind),
``http1-request@1`` and ``http1-response@1``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from assay.gen.strategy import register_strategy

MAX_BYTES = 8192  #: hard bound on a rendered stream
MAX_PARSE_BYTES = 65536  #: larger input is not read (parse returns None)
MAX_MESSAGES = 4  #: pipelined messages per generated stream
MAX_HEADERS = 12  #: extra header fields per generated message (framing headers aside)
MAX_BODY = 512  #: generated body size
MAX_CHUNKS = 5  #: chunks per generated chunked body
MAX_PARSE_CHUNKS = 256  #: a chunked body with more chunks is not read
INVALID_RATE = 0.12  #: share of mutations that create an adjacent protocol violation
ODD_RATE = 0.15  #: chance of a legal-but-odd spelling (header case, whitespace, folding)
MAX_SHRINK = 64  #: bound on shrink candidates per call
MAX_TOKENS = 64  #: bound on dictionary tokens per value

CRLF = b"\r\n"
_OWS = b" \t"
_FRAMING_NAMES = (b"content-length", b"transfer-encoding")


@dataclass(frozen=True, slots=True)
class Header:
    """One header field: ``name ":" sep value trail eol``.

    ``value`` may contain obsolete line folds (``CRLF`` followed by SP or HTAB).
    """

    name: bytes
    value: bytes
    sep: bytes = b" "
    trail: bytes = b""
    eol: bytes = CRLF

    def render(self) -> bytes:
        return self.name + b":" + self.sep + self.value + self.trail + self.eol


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of a chunked body; ``size`` is the hex spelling as sent."""

    size: bytes
    data: bytes = b""
    ext: bytes = b""


@dataclass(frozen=True, slots=True)
class Http1Message:
    """One request or response.

    A request's start line is ``method SP target SP version``; a response's is
    ``version SP status [SP reason]`` (``reason`` is ``None`` when the space is
    absent too).  ``framing`` is ``none`` (no body bytes), ``length`` (``body``
    follows the header block), ``chunked`` (``chunks``, the ``last`` zero-size
    chunk and ``trailers``) or ``close`` (``body`` runs to the end of the stream).
    """

    kind: str
    method: bytes = b""
    target: bytes = b""
    version: bytes = b"HTTP/1.1"
    status: bytes = b""
    reason: bytes | None = None
    headers: tuple[Header, ...] = ()
    framing: str = "none"
    body: bytes = b""
    chunks: tuple[Chunk, ...] = ()
    last: Chunk = Chunk(b"0")
    trailers: tuple[Header, ...] = ()
    start_eol: bytes = CRLF
    head_end: bytes = CRLF

    def render(self) -> bytes:
        if self.kind == "request":
            line = self.method + b" " + self.target + b" " + self.version
        else:
            line = self.version + b" " + self.status
            if self.reason is not None:
                line += b" " + self.reason
        out = [line, self.start_eol]
        out.extend(h.render() for h in self.headers)
        out.append(self.head_end)
        if self.framing == "chunked":
            for chunk in self.chunks:
                out += [chunk.size, chunk.ext, CRLF, chunk.data, CRLF]
            out += [self.last.size, self.last.ext, CRLF]
            out.extend(h.render() for h in self.trailers)
            out.append(CRLF)
        else:
            out.append(self.body)
        return b"".join(out)


@dataclass(frozen=True, slots=True)
class Http1Stream:
    """Pipelined messages, all of one kind, rendered back to back."""

    messages: tuple[Http1Message, ...]

    @property
    def kind(self) -> str:
        return self.messages[0].kind if self.messages else "request"


def render_stream(stream: Http1Stream) -> bytes:
    """The wire bytes of ``stream``."""
    return b"".join(m.render() for m in stream.messages)


# ------------------------------------------------------------------ parsing


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
    stripped = rest.lstrip(_OWS)
    sep = rest[: len(rest) - len(stripped)]
    value = stripped.rstrip(_OWS)
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
            value = folded.rstrip(_OWS)
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


def _body_forbidden(message: Http1Message) -> bool:
    return message.kind == "response" and (message.status[:1] == b"1" or message.status in (b"204", b"304"))


def _read_message(data: bytes, pos: int, kind: str) -> tuple[Http1Message, int]:
    line, start_eol, pos = _line(data, pos)
    if kind == "request":
        first, last = line.find(b" "), line.rfind(b" ")
        if first <= 0 or last == first:
            raise _Reject
        message = Http1Message("request", method=line[:first], target=line[first + 1 : last],
                               version=line[last + 1 :], start_eol=start_eol)
    else:
        if not line.startswith(b"HTTP/"):
            raise _Reject
        parts = line.split(b" ", 2)
        if len(parts) < 2:
            raise _Reject
        message = Http1Message("response", version=parts[0], status=parts[1],
                               reason=parts[2] if len(parts) == 3 else None, start_eol=start_eol)
    headers, head_end, pos = _read_fields(data, pos)
    message = replace(message, headers=tuple(headers), head_end=head_end)
    if _body_forbidden(message):
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
                return replace(message, framing="chunked", chunks=tuple(chunks),
                               last=Chunk(size, b"", ext), trailers=tuple(trailers)), pos
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


# --------------------------------------------------------------- generation

_METHODS = (b"GET",) * 6 + (b"POST",) * 4 + (b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH",
                                              b"CONNECT", b"TRACE", b"PURGE", b"M-SEARCH", b"PROPFIND")
_BODY_METHODS = (b"POST", b"PUT", b"PATCH", b"PROPFIND")
_HOSTS = (b"example.com", b"localhost", b"127.0.0.1", b"[::1]", b"api.example.org", b"xn--bcher-kva.example",
          b"a.b.c.d.example", b"10.0.0.1", b"EXAMPLE.COM")
_SEGMENTS = (b"", b"index.html", b"api", b"v1", b"users", b"42", b"a%20b", b"%2e%2e", b"..", b".", b"~user",
             b"caf%C3%A9", b"x;y=1", b"a:b", b"@", b"file.tar.gz", b"%00", b"%2F")
_QUERY_KEYS = (b"q", b"id", b"page", b"sort", b"a[]", b"utm_source", b"x", b"")
_QUERY_VALUES = (b"1", b"", b"abc", b"%20", b"a+b", b"%26", b"true", b"-1", b"%E2%9C%93", b"=", b"?")
_REASONS = {b"100": b"Continue", b"103": b"Early Hints", b"200": b"OK", b"201": b"Created",
            b"204": b"No Content", b"206": b"Partial Content", b"301": b"Moved Permanently",
            b"302": b"Found", b"304": b"Not Modified", b"400": b"Bad Request", b"401": b"Unauthorized",
            b"403": b"Forbidden", b"404": b"Not Found", b"418": b"I'm a teapot",
            b"500": b"Internal Server Error", b"502": b"Bad Gateway", b"503": b"Service Unavailable"}
_STATUSES = (b"200",) * 6 + tuple(_REASONS)

_REQUEST_HEADERS: tuple[tuple[bytes, tuple[bytes, ...]], ...] = (
    (b"User-Agent", (b"curl/8.5.0", b"Mozilla/5.0 (X11; Linux x86_64)", b"assay/1")),
    (b"Accept", (b"*/*", b"text/html,application/xhtml+xml;q=0.9", b"application/json", b"image/*;q=0.8")),
    (b"Accept-Encoding", (b"gzip, deflate, br", b"identity", b"*;q=0")),
    (b"Accept-Language", (b"en-US,en;q=0.5", b"de", b"*")),
    (b"Cookie", (b"a=1", b"session=abc123; theme=dark", b"x=\"quoted\"")),
    (b"Authorization", (b"Bearer eyJhbGciOiJub25lIn0.e30.", b"Basic dXNlcjpwYXNz")),
    (b"Cache-Control", (b"no-cache", b"max-age=0", b"no-store, private")),
    (b"X-Forwarded-For", (b"203.0.113.7", b"203.0.113.7, 198.51.100.2", b"unknown")),
    (b"Referer", (b"http://example.com/", b"/relative")),
    (b"If-None-Match", (b"\"abc\"", b"W/\"1\", \"2\"", b"*")),
    (b"Range", (b"bytes=0-99", b"bytes=-500", b"bytes=0-0,-1")),
    (b"Origin", (b"http://example.com", b"null")),
    (b"Expect", (b"100-continue",)),
    (b"Upgrade-Insecure-Requests", (b"1",)),
    (b"X-Request-Id", (b"7f3c9a", b"", b"\xe2\x9c\x93")),
    (b"Via", (b"1.1 proxy", b"HTTP/1.1 a, 1.0 b")),
)
_RESPONSE_HEADERS: tuple[tuple[bytes, tuple[bytes, ...]], ...] = (
    (b"Date", (b"Mon, 01 Jan 2024 00:00:00 GMT", b"Sun, 06 Nov 1994 08:49:37 GMT")),
    (b"Server", (b"nginx", b"Apache/2.4.58 (Unix)", b"assay")),
    (b"Set-Cookie", (b"id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT", b"x=1; Path=/; HttpOnly",
                     b"y=2; SameSite=Strict; Secure")),
    (b"Cache-Control", (b"public, max-age=3600", b"no-store")),
    (b"ETag", (b"\"33a64df5\"", b"W/\"0815\"")),
    (b"Location", (b"/next", b"http://example.com/other?x=1")),
    (b"Vary", (b"Accept-Encoding", b"*")),
    (b"Content-Encoding", (b"identity",)),
    (b"Access-Control-Allow-Origin", (b"*", b"http://example.com")),
    (b"X-Frame-Options", (b"DENY",)),
    (b"Link", (b"</style.css>; rel=preload; as=style",)),
    (b"Retry-After", (b"120", b"Fri, 31 Dec 1999 23:59:59 GMT")),
)
_CONTENT_TYPES = (b"application/json", b"text/plain; charset=utf-8", b"application/x-www-form-urlencoded",
                  b"text/html", b"application/octet-stream", b"multipart/form-data; boundary=xyz")
_CHUNK_EXTS = (b";a", b";name=value", b';q="quoted ; value"', b";a=1;b=2", b"; spaced=1", b";x=")
_TRAILERS = ((b"Expires", b"Wed, 21 Oct 2015 07:28:00 GMT"), (b"X-Checksum", b"abc123"),
             (b"Server-Timing", b"db;dur=53"))
_BODIES: tuple[bytes, ...] = (b"", b"{}", b"{\"a\":1}", b"a=1&b=2", b"hello world\n", b"\x00\x01\x02\xff",
                              b"0\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
_INTERESTING_VALUES = (b"", b" ", b"0", b"-1", b"a" * 200, b"\xff\xfe", b"a,b,,c", b"\"unterminated",
                       b"=?utf-8?q?x?=", b"../../", b"%00", b"x\x01y", b"1e3", b"chunked", b"close",
                       b"keep-alive", b"text/html; charset=\"utf-8\"")


def _odd_case(name: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.35:
        return name.lower()
    if roll < 0.6:
        return name.upper()
    return bytes(c ^ 0x20 if chr(c).isalpha() and rng.random() < 0.5 else c for c in name)


def _header(name: bytes, value: bytes, rng: random.Random, odd: bool = True) -> Header:
    sep, trail = b" ", b""
    if odd and rng.random() < ODD_RATE:
        name = _odd_case(name, rng)
    if odd and rng.random() < ODD_RATE:
        sep = rng.choice((b"", b"  ", b"\t", b" \t"))
        trail = rng.choice((b"", b" ", b"\t", b"  "))
    return Header(name, value, sep, trail)


def _fold(header: Header, rng: random.Random) -> Header:
    words = header.value.split(b" ")
    if len(words) < 2:
        return replace(header, value=header.value + CRLF + rng.choice((b" ", b"\t", b"  ")) + b"cont")
    cut = rng.randint(1, len(words) - 1)
    return replace(header, value=b" ".join(words[:cut]) + CRLF + rng.choice((b" ", b"\t", b"   "))
                   + b" ".join(words[cut:]))


def _gen_path(rng: random.Random) -> bytes:
    segments = [rng.choice(_SEGMENTS) for _ in range(rng.randint(0, 4))]
    path = b"/" + b"/".join(segments)
    if rng.random() < 0.35:
        pairs = [rng.choice(_QUERY_KEYS) + (b"=" + rng.choice(_QUERY_VALUES) if rng.random() < 0.8 else b"")
                 for _ in range(rng.randint(1, 3))]
        path += b"?" + b"&".join(pairs)
    return path


def _gen_target(method: bytes, host: bytes, rng: random.Random) -> bytes:
    if method == b"CONNECT":
        return host.split(b":")[0] + b":" + rng.choice((b"443", b"80", b"8443"))
    if method == b"OPTIONS" and rng.random() < 0.5:
        return b"*"
    if rng.random() < 0.2:
        userinfo = b"user:pw@" if rng.random() < 0.1 else b""
        return rng.choice((b"http", b"https", b"HTTP")) + b"://" + userinfo + host + _gen_path(rng)
    return _gen_path(rng)


def _gen_host(rng: random.Random) -> bytes:
    host = rng.choice(_HOSTS)
    if rng.random() < 0.3:
        host += b":" + rng.choice((b"80", b"8080", b"443", b"65535", b"0"))
    return host


def _gen_body(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(_BODIES)
    if roll < 0.7:
        return b"".join(rng.choice((b"ab", b"c=d&", b"{\"k\":", b"\n", b" ", b"\r\n", b"x")) for _ in range(rng.randint(1, 40)))
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, MAX_BODY)))


def _size_spelling(n: int, rng: random.Random) -> bytes:
    text = b"%x" % n
    roll = rng.random()
    if roll < 0.15:
        text = text.upper()
    elif roll < 0.25:
        text = b"0" * rng.randint(1, 3) + text
    return text


def _gen_chunks(body: bytes, rng: random.Random) -> tuple[Chunk, ...]:
    if not body:
        return ()
    count = rng.randint(1, min(MAX_CHUNKS, len(body)))
    cuts = sorted(rng.sample(range(1, len(body)), count - 1)) if count > 1 else []
    bounds = [0] + cuts + [len(body)]
    chunks = []
    for lo, hi in zip(bounds, bounds[1:]):
        ext = rng.choice(_CHUNK_EXTS) if rng.random() < 0.15 else b""
        chunks.append(Chunk(_size_spelling(hi - lo, rng), body[lo:hi], ext))
    return tuple(chunks)


def _with_body(message: Http1Message, framing: str, body: bytes, rng: random.Random) -> Http1Message:
    """``message`` carrying ``body`` with consistent framing headers (old ones removed)."""
    headers = [h for h in message.headers if h.name.lower() not in _FRAMING_NAMES]
    if framing == "length":
        headers.insert(rng.randint(0, len(headers)), _header(b"Content-Length", str(len(body)).encode(), rng))
        return replace(message, headers=tuple(headers), framing="length", body=body, chunks=(), trailers=())
    if framing == "chunked":
        headers.insert(rng.randint(0, len(headers)),
                       _header(b"Transfer-Encoding", rng.choice((b"chunked",) * 5 + (b"Chunked",)), rng))
        trailers: tuple[Header, ...] = ()
        if rng.random() < 0.2:
            trailers = tuple(_header(n, v, rng, odd=False) for n, v in rng.sample(_TRAILERS, rng.randint(1, 2)))
        last_ext = rng.choice(_CHUNK_EXTS) if rng.random() < 0.1 else b""
        return replace(message, headers=tuple(headers), framing="chunked", body=b"",
                       chunks=_gen_chunks(body, rng), last=Chunk(b"0" * rng.choice((1, 1, 1, 3)), b"", last_ext),
                       trailers=trailers)
    return replace(message, headers=tuple(headers), framing=framing, body=body if framing == "close" else b"",
                   chunks=(), trailers=())


def _gen_headers(table: tuple[tuple[bytes, tuple[bytes, ...]], ...], rng: random.Random) -> list[Header]:
    headers: list[Header] = []
    for _ in range(rng.randint(0, min(6, MAX_HEADERS))):
        name, values = rng.choice(table)
        headers.append(_header(name, rng.choice(values), rng))
    if headers and rng.random() < 0.2:
        # A repeated field: same name, another value (legal for list-valued fields).
        name, values = rng.choice(table)
        headers.append(_header(name, rng.choice(values), rng))
        headers.append(_header(name, rng.choice(values), rng))
    if headers and rng.random() < 0.05:
        i = rng.randrange(len(headers))
        headers[i] = _fold(headers[i], rng)
    return headers


def _gen_request(rng: random.Random, last: bool) -> Http1Message:
    method = rng.choice(_METHODS)
    host = _gen_host(rng)
    version = b"HTTP/1.0" if last and rng.random() < 0.1 else b"HTTP/1.1"
    headers = _gen_headers(_REQUEST_HEADERS, rng)
    if version == b"HTTP/1.1" or rng.random() < 0.7:
        headers.insert(rng.randint(0, len(headers)), _header(b"Host", host, rng))
    if rng.random() < 0.2:
        token = b"close" if last and rng.random() < 0.5 else b"keep-alive"
        headers.append(_header(b"Connection", token, rng))
    message = Http1Message("request", method=method, target=_gen_target(method, host, rng), version=version,
                           headers=tuple(headers))
    if method in _BODY_METHODS or rng.random() < 0.1:
        body = _gen_body(rng)
        if body and not any(h.name.lower() == b"content-type" for h in headers):
            message = replace(message, headers=message.headers + (_header(b"Content-Type", rng.choice(_CONTENT_TYPES), rng),))
        return _with_body(message, "chunked" if rng.random() < 0.35 else "length", body, rng)
    return message


def _gen_response(rng: random.Random, last: bool) -> Http1Message:
    status = rng.choice(_STATUSES)
    while last and status[:1] == b"1":
        # An interim (1xx) response must be followed by a final one.
        status = rng.choice(_STATUSES)
    version = b"HTTP/1.0" if last and rng.random() < 0.1 else b"HTTP/1.1"
    roll = rng.random()
    reason: bytes | None = _REASONS.get(status, b"OK")
    if roll < 0.08:
        reason = b""
    elif roll < 0.14:
        reason = None
    elif roll < 0.18:
        reason = rng.choice((b"Okay \t then", b"\xc3\x9cber", b"Not  Found  "))
    headers = _gen_headers(_RESPONSE_HEADERS, rng)
    if rng.random() < 0.2:
        headers.append(_header(b"Connection", b"close" if last and rng.random() < 0.5 else b"keep-alive", rng))
    message = Http1Message("response", version=version, status=status, reason=reason, headers=tuple(headers))
    if _body_forbidden(message):
        return message
    body = _gen_body(rng)
    if body:
        message = replace(message, headers=message.headers + (_header(b"Content-Type", rng.choice(_CONTENT_TYPES), rng),))
    roll = rng.random()
    if last and roll < 0.08:
        # Read-to-close framing only works for the last message on the connection.
        return _with_body(message, "close", body, rng)
    return _with_body(message, "chunked" if roll < 0.35 else "length", body, rng)


def _fresh_message(kind: str, rng: random.Random, last: bool) -> Http1Message:
    return _gen_request(rng, last) if kind == "request" else _gen_response(rng, last)


def generate_stream(kind: str, rng: random.Random) -> Http1Stream:
    """A fresh valid stream of ``kind`` messages; only the last may close the connection."""
    count = 1 if rng.random() < 0.6 else rng.randint(2, MAX_MESSAGES)
    messages = tuple(_fresh_message(kind, rng, i == count - 1) for i in range(count))
    return Http1Stream(messages)


# ----------------------------------------------------------------- mutation

_Op = Callable[[Http1Message, random.Random], Http1Message]


def _pick_header(message: Http1Message, rng: random.Random, framing_ok: bool = False) -> int | None:
    indexes = [i for i, h in enumerate(message.headers)
               if framing_ok or h.name.lower() not in _FRAMING_NAMES + (b"host",)]
    return rng.choice(indexes) if indexes else None


def _set_header(message: Http1Message, i: int, header: Header) -> Http1Message:
    headers = list(message.headers)
    headers[i] = header
    return replace(message, headers=tuple(headers))


def _table(message: Http1Message) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    return _REQUEST_HEADERS if message.kind == "request" else _RESPONSE_HEADERS


def _op_header_value(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng)
    if i is None:
        return _op_header_add(m, rng)
    h = m.headers[i]
    known = dict(_table(m)).get(h.name, ())
    value = rng.choice(known) if known and rng.random() < 0.5 else rng.choice(_INTERESTING_VALUES)
    return _set_header(m, i, replace(h, value=value))


def _op_header_add(m: Http1Message, rng: random.Random) -> Http1Message:
    name, values = rng.choice(_table(m))
    headers = list(m.headers)
    headers.insert(rng.randint(0, len(headers)), _header(name, rng.choice(values), rng))
    return replace(m, headers=tuple(headers))


def _op_header_dup(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng)
    if i is None:
        return _op_header_add(m, rng)
    headers = list(m.headers)
    headers.insert(rng.randint(0, len(headers)), headers[i])
    return replace(m, headers=tuple(headers))


def _op_header_remove(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng)
    if i is None:
        return m
    return replace(m, headers=m.headers[:i] + m.headers[i + 1 :])


def _op_header_case(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng, framing_ok=True)
    if i is None:
        return m
    return _set_header(m, i, replace(m.headers[i], name=_odd_case(m.headers[i].name, rng)))


def _op_header_ws(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng, framing_ok=True)
    if i is None:
        return m
    return _set_header(m, i, replace(m.headers[i], sep=rng.choice((b"", b" ", b"\t", b"  \t ")),
                                     trail=rng.choice((b"", b" ", b"\t", b" \t"))))


def _op_header_fold(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng)
    if i is None:
        return m
    return _set_header(m, i, _fold(m.headers[i], rng))


def _op_header_swap(m: Http1Message, rng: random.Random) -> Http1Message:
    if len(m.headers) < 2:
        return m
    i, j = rng.sample(range(len(m.headers)), 2)
    headers = list(m.headers)
    headers[i], headers[j] = headers[j], headers[i]
    return replace(m, headers=tuple(headers))


def _op_start_line(m: Http1Message, rng: random.Random) -> Http1Message:
    roll = rng.random()
    if roll < 0.3:
        return replace(m, version=rng.choice((b"HTTP/1.1", b"HTTP/1.0", b"HTTP/1.1", b"HTTP/2.0", b"HTTP/1.9")))
    if m.kind == "request":
        if roll < 0.6:
            method = rng.choice(_METHODS)
            target = m.target
            if (method == b"CONNECT") != (m.method == b"CONNECT") or m.target == b"*":
                target = _gen_target(method, rng.choice(_HOSTS), rng)
            return replace(m, method=method, target=target)
        if m.target.startswith(b"/") and rng.random() < 0.5:
            return replace(m, target=m.target + rng.choice((b"/", b"/x", b"?a=1", b"&b", b"%41", b"/..")))
        return replace(m, target=_gen_target(m.method, _gen_host(rng), rng))
    if _body_forbidden(m) or m.framing == "none":
        status = rng.choice((b"204", b"304", b"100", b"103"))
    else:
        status = rng.choice([s for s in _STATUSES if s[:1] != b"1" and s not in (b"204", b"304")])
    return replace(m, status=status, reason=rng.choice((_REASONS.get(status, b"OK"), b"", b"Whatever")))


def _op_body(m: Http1Message, rng: random.Random) -> Http1Message:
    if _body_forbidden(m) or (m.kind == "request" and m.framing == "none" and m.method not in _BODY_METHODS
                              and rng.random() < 0.5):
        return _op_header_value(m, rng)
    current = m.body if m.framing != "chunked" else b"".join(c.data for c in m.chunks)
    roll = rng.random()
    if roll < 0.3:
        body = _gen_body(rng)
    elif roll < 0.5 and current:
        body = current[: rng.randrange(len(current))]
    elif roll < 0.7:
        body = current + _gen_body(rng)[:64]
    else:
        body = bytearray(current or b"x")
        body[rng.randrange(len(body))] = rng.randrange(256)
        body = bytes(body)
    framing = m.framing if m.framing in ("length", "chunked", "close") else "length"
    if rng.random() < 0.15 and framing != "close":
        framing = "chunked" if framing == "length" else "length"
    return _with_body(m, framing, body, rng)


def _op_chunks(m: Http1Message, rng: random.Random) -> Http1Message:
    if m.framing != "chunked":
        return _op_body(m, rng)
    chunks = list(m.chunks)
    roll = rng.random()
    if roll < 0.25 or not chunks:
        data = _gen_body(rng)[:128] or b"z"
        chunks.insert(rng.randint(0, len(chunks)), Chunk(_size_spelling(len(data), rng), data))
    elif roll < 0.4:
        del chunks[rng.randrange(len(chunks))]
    elif roll < 0.55:
        i = rng.randrange(len(chunks))
        data = chunks[i].data
        if len(data) > 1:
            cut = rng.randint(1, len(data) - 1)
            chunks[i : i + 1] = [Chunk(_size_spelling(cut, rng), data[:cut]),
                                 Chunk(_size_spelling(len(data) - cut, rng), data[cut:])]
    elif roll < 0.7:
        i = rng.randrange(len(chunks))
        ext = b"" if chunks[i].ext else rng.choice(_CHUNK_EXTS)
        chunks[i] = replace(chunks[i], ext=ext)
    elif roll < 0.8:
        i = rng.randrange(len(chunks))
        chunks[i] = replace(chunks[i], size=_size_spelling(len(chunks[i].data), rng))
    elif roll < 0.9:
        trailers = list(m.trailers)
        if trailers and rng.random() < 0.5:
            del trailers[rng.randrange(len(trailers))]
        else:
            name, value = rng.choice(_TRAILERS)
            trailers.append(_header(name, value, rng, odd=False))
        return replace(m, trailers=tuple(trailers))
    else:
        return replace(m, last=replace(m.last, ext=b"" if m.last.ext else rng.choice(_CHUNK_EXTS)))
    return replace(m, chunks=tuple(chunks))


_VALID_OPS: tuple[tuple[_Op, int], ...] = (
    (_op_header_value, 4), (_op_header_add, 3), (_op_header_dup, 2), (_op_header_remove, 2),
    (_op_header_case, 2), (_op_header_ws, 2), (_op_header_fold, 1), (_op_header_swap, 1),
    (_op_start_line, 3), (_op_body, 3), (_op_chunks, 3),
)


def _framing_index(m: Http1Message, name: bytes) -> int | None:
    for i, h in enumerate(m.headers):
        if h.name.lower() == name:
            return i
    return None


def _invalid(m: Http1Message, rng: random.Random) -> Http1Message:
    """``m`` with one adjacent protocol violation."""
    cl = _framing_index(m, b"content-length")
    te = _framing_index(m, b"transfer-encoding")
    choices = ["bad_name", "bad_value", "bad_start", "lead_fold", "host"]
    if cl is not None:
        choices += ["cl_off", "cl_dup", "cl_bad", "cl_te"] * 2
    if te is not None:
        choices += ["te_bad", "te_dup"]
    if m.framing == "chunked" and m.chunks:
        choices += ["chunk_size", "chunk_size", "chunk_hex", "chunk_crlf"]
    kind = rng.choice(choices)
    headers = list(m.headers)
    if kind == "cl_off":
        n = max(0, len(m.body) + rng.choice((-1, 1, 1, 1000)))
        headers[cl] = replace(headers[cl], value=str(n).encode())
    elif kind == "cl_dup":
        other = str(len(m.body) + rng.choice((0, 1))).encode()
        headers.insert(rng.randint(0, len(headers)), _header(b"Content-Length", other, rng))
    elif kind == "cl_bad":
        headers[cl] = replace(headers[cl], value=rng.choice((b"-1", b"+5", b"0x10", b"1 2", b"", b"1,2",
                                                             b"99999999999999999999", "١".encode())))
    elif kind == "cl_te":
        headers.insert(rng.randint(0, len(headers)), _header(b"Transfer-Encoding", b"chunked", rng))
    elif kind == "te_bad":
        headers[te] = replace(headers[te], value=rng.choice((b"chunked, gzip", b"gzip, chunked", b"xchunked",
                                                             b"chunked\x0b", b"identity", b"chunk")))
    elif kind == "te_dup":
        headers.insert(rng.randint(0, len(headers)), headers[te])
    elif kind in ("chunk_size", "chunk_hex", "chunk_crlf"):
        chunks = list(m.chunks)
        i = rng.randrange(len(chunks))
        if kind == "chunk_size":
            size = b"%x" % max(0, len(chunks[i].data) + rng.choice((-1, 1, 16)))
        elif kind == "chunk_hex":
            size = rng.choice((b"g", b"-1", b"0x5", b"ffffffffffffffffffff0", b" 5", b"5 "))
        else:
            return replace(m, chunks=tuple(chunks[:i]) + (replace(chunks[i], data=chunks[i].data + b"\n"),)
                           + tuple(chunks[i + 1 :]))
        chunks[i] = replace(chunks[i], size=size)
        return replace(m, chunks=tuple(chunks))
    elif kind == "bad_name":
        name = rng.choice((b"Host ", b"X Y", b"X\x00Y", b"", b"X-\xe9", b"(X)", b"X\tY"))
        headers.insert(rng.randint(0, len(headers)), Header(name, b"v"))
    elif kind == "bad_value":
        value = rng.choice((b"a\x00b", b"a\rb", b"a\nb", b"a\x7fb"))
        headers.insert(rng.randint(0, len(headers)), Header(b"X-Bad", value))
    elif kind == "lead_fold":
        headers.insert(0, Header(b" X-Folded", b"v") if rng.random() < 0.5 else Header(b"\tX", b"v"))
    elif kind == "host":
        host = _framing_index(m, b"host")
        if host is not None and rng.random() < 0.5:
            del headers[host]
        else:
            headers.insert(rng.randint(0, len(headers)), _header(b"Host", _gen_host(rng), rng))
    else:
        if m.kind == "request":
            field = rng.choice(("method", "target", "version"))
            bad = {"method": (b"G(ET", b"", b"GET\x00"), "target": (b"/a b", b"/\xe9", b"", b"/\x7f"),
                   "version": (b"HTTP/1.1a", b"http/1.1", b"HTTP/11", b"HTTP/1.", b"HTTP/1.1 ")}[field]
            return replace(m, **{field: rng.choice(bad)})
        return replace(m, status=rng.choice((b"20", b"2000", b"abc", b"")), reason=m.reason)
    return replace(m, headers=tuple(headers))


def _weighted(ops: tuple[tuple[_Op, int], ...], rng: random.Random) -> _Op:
    total = sum(w for _, w in ops)
    roll = rng.randrange(total)
    for op, weight in ops:
        if roll < weight:
            return op
        roll -= weight
    return ops[-1][0]


class Http1Strategy:
    """Structured generation for HTTP/1 message streams.

    ``kinds`` selects what ``generate`` produces: ``("request",)``,
    ``("response",)`` or both (each stream is one kind).
    """

    version = 1

    def __init__(self, name: str = "http1", kinds: tuple[str, ...] = ("request", "response")) -> None:
        self.name = name
        self.kinds = kinds

    def generate(self, rng: random.Random) -> Http1Stream:
        """A fresh valid stream of one to :data:`MAX_MESSAGES` messages."""
        kind = self.kinds[0] if len(self.kinds) == 1 else rng.choice(self.kinds)
        stream = generate_stream(kind, rng)
        while len(render_stream(stream)) > MAX_BYTES:
            stream = Http1Stream(stream.messages[:-1]) if len(stream.messages) > 1 else generate_stream(kind, rng)
        return stream

    def parse(self, data: bytes) -> Http1Stream | None:
        """The stream in ``data``; ``None`` when it is not a readable HTTP/1 stream."""
        stream = parse_stream(data)
        if stream is None or stream.kind not in self.kinds:
            return None
        return stream

    def render(self, value: Http1Stream) -> bytes:
        """The wire bytes."""
        return render_stream(value)

    def mutate(self, value: Http1Stream, rng: random.Random) -> Http1Stream:
        """One field of one message changed (or one message added, dropped, duplicated, moved)."""
        messages = list(value.messages)
        if not messages:
            return self.generate(rng)
        roll = rng.random()
        if roll < 0.08:
            op = rng.choice(("add", "drop", "dup", "swap"))
            if op == "add" and len(messages) < 2 * MAX_MESSAGES:
                messages.insert(rng.randint(0, len(messages) - 1), _fresh_message(value.kind, rng, last=False))
            elif op == "drop" and len(messages) > 1:
                del messages[rng.randrange(len(messages))]
            elif op == "dup" and len(messages) < 2 * MAX_MESSAGES:
                i = rng.randrange(len(messages))
                messages.insert(i, messages[i])
            elif len(messages) > 1:
                i, j = rng.sample(range(len(messages)), 2)
                messages[i], messages[j] = messages[j], messages[i]
        else:
            i = rng.randrange(len(messages))
            if rng.random() < INVALID_RATE:
                messages[i] = _invalid(messages[i], rng)
            else:
                messages[i] = _weighted(_VALID_OPS, rng)(messages[i], rng)
        out = Http1Stream(tuple(messages))
        return out if len(render_stream(out)) <= MAX_BYTES else value

    def crossover(self, a: Http1Stream, b: Http1Stream, rng: random.Random) -> Http1Stream:
        """Header fields, bodies or whole messages of ``b`` spliced into ``a``."""
        if not a.messages or not b.messages:
            return a
        messages = list(a.messages)
        i = rng.randrange(len(messages))
        donor = rng.choice(b.messages)
        roll = rng.random()
        if roll < 0.35 or donor.kind != a.kind:
            # Header fields are kind-agnostic; framing headers stay the recipient's.
            fields = [h for h in donor.headers if h.name.lower() not in _FRAMING_NAMES + (b"host",)]
            if fields:
                headers = list(messages[i].headers)
                for field in rng.sample(fields, rng.randint(1, min(3, len(fields)))):
                    headers.insert(rng.randint(0, len(headers)), field)
                messages[i] = replace(messages[i], headers=tuple(headers))
        elif roll < 0.6 and not _body_forbidden(messages[i]) and donor.framing != "none":
            body = donor.body if donor.framing != "chunked" else b"".join(c.data for c in donor.chunks)
            framing = messages[i].framing if messages[i].framing != "none" else donor.framing
            if framing == "close" and i != len(messages) - 1:
                framing = "length"
            messages[i] = _with_body(messages[i], framing, body, rng)
        else:
            j = rng.randrange(len(b.messages))
            messages = messages[: i + 1] + list(b.messages[j:])
            messages = messages[: 2 * MAX_MESSAGES]
        out = Http1Stream(tuple(messages))
        return out if len(render_stream(out)) <= MAX_BYTES else a

    def tokens(self, value: Http1Stream) -> list[bytes]:
        """Methods, target pieces, versions, statuses, header names and values, chunk extensions."""
        seen: dict[bytes, None] = {}

        def add(token: bytes) -> None:
            if token and len(seen) < MAX_TOKENS:
                seen[token] = None

        for m in value.messages:
            if m.kind == "request":
                add(m.method)
                add(m.target)
                path, _, query = m.target.partition(b"?")
                for segment in path.split(b"/"):
                    add(segment)
                for pair in query.split(b"&"):
                    key, _, val = pair.partition(b"=")
                    add(key)
                    add(val)
            else:
                add(m.status)
                add(m.reason or b"")
            add(m.version)
            for h in m.headers + m.trailers:
                add(h.name + b":")
                add(h.value)
            for c in m.chunks:
                add(c.ext)
        return list(seen)

    def shrink_candidates(self, value: Http1Stream) -> Iterator[Http1Stream]:
        """Fewer messages, fewer headers, empty bodies, one chunk, no extensions or trailers."""
        messages = value.messages
        count = 0

        def put(i: int, m: Http1Message) -> Http1Stream:
            return Http1Stream(messages[:i] + (m,) + messages[i + 1 :])

        candidates: list[Http1Stream] = []
        for i in range(len(messages)):
            if len(messages) > 1:
                candidates.append(Http1Stream(messages[:i] + messages[i + 1 :]))
        for i, m in enumerate(messages):
            if m.framing == "chunked":
                body = b"".join(c.data for c in m.chunks)
                plain = replace(m, chunks=(Chunk(b"%x" % len(body), body),) if body else (), trailers=(),
                                last=Chunk(b"0"))
                if plain != m:
                    candidates.append(put(i, plain))
            if m.framing in ("length", "close") and m.body:
                candidates.append(put(i, _shrunk_body(m, b"")))
                candidates.append(put(i, _shrunk_body(m, m.body[: len(m.body) // 2])))
            for j, h in enumerate(m.headers):
                if h.name.lower() in _FRAMING_NAMES:
                    continue
                candidates.append(put(i, replace(m, headers=m.headers[:j] + m.headers[j + 1 :])))
        for candidate in candidates:
            yield candidate
            count += 1
            if count >= MAX_SHRINK:
                return


def _shrunk_body(m: Http1Message, body: bytes) -> Http1Message:
    """``m`` with a shorter body and its Content-Length fields updated to match."""
    headers = tuple(replace(h, value=str(len(body)).encode()) if h.name.lower() == b"content-length" else h
                    for h in m.headers)
    return replace(m, body=body, headers=headers if m.framing == "length" else m.headers)


register_strategy(Http1Strategy())
register_strategy(Http1Strategy("http1-request", ("request",)))
register_strategy(Http1Strategy("http1-response", ("response",)))
