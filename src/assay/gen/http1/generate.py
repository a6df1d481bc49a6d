"""Fresh request and response streams whose framing headers agree with their bodies."""

from __future__ import annotations

import random
from dataclasses import replace

from assay.gen.http1.model import (
    CRLF,
    FRAMING_NAMES,
    MAX_BODY,
    MAX_CHUNKS,
    MAX_HEADERS,
    MAX_MESSAGES,
    ODD_RATE,
    Chunk,
    Header,
    Http1Message,
    Http1Stream,
)
from assay.gen.http1.parse import body_forbidden

METHODS = (
    (b"GET",) * 6
    + (b"POST",) * 4
    + (b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"CONNECT", b"TRACE", b"PURGE", b"M-SEARCH", b"PROPFIND")
)
BODY_METHODS = (b"POST", b"PUT", b"PATCH", b"PROPFIND")
HOSTS = (
    b"example.com",
    b"localhost",
    b"127.0.0.1",
    b"[::1]",
    b"api.example.org",
    b"xn--bcher-kva.example",
    b"a.b.c.d.example",
    b"10.0.0.1",
    b"EXAMPLE.COM",
)
_SEGMENTS = (
    b"",
    b"index.html",
    b"api",
    b"v1",
    b"users",
    b"42",
    b"a%20b",
    b"%2e%2e",
    b"..",
    b".",
    b"~user",
    b"caf%C3%A9",
    b"x;y=1",
    b"a:b",
    b"@",
    b"file.tar.gz",
    b"%00",
    b"%2F",
)
_QUERY_KEYS = (b"q", b"id", b"page", b"sort", b"a[]", b"utm_source", b"x", b"")
_QUERY_VALUES = (b"1", b"", b"abc", b"%20", b"a+b", b"%26", b"true", b"-1", b"%E2%9C%93", b"=", b"?")
REASONS = {
    b"100": b"Continue",
    b"103": b"Early Hints",
    b"200": b"OK",
    b"201": b"Created",
    b"204": b"No Content",
    b"206": b"Partial Content",
    b"301": b"Moved Permanently",
    b"302": b"Found",
    b"304": b"Not Modified",
    b"400": b"Bad Request",
    b"401": b"Unauthorized",
    b"403": b"Forbidden",
    b"404": b"Not Found",
    b"418": b"I'm a teapot",
    b"500": b"Internal Server Error",
    b"502": b"Bad Gateway",
    b"503": b"Service Unavailable",
}
STATUSES = (b"200",) * 6 + tuple(REASONS)

REQUEST_HEADERS: tuple[tuple[bytes, tuple[bytes, ...]], ...] = (
    (b"User-Agent", (b"curl/8.5.0", b"Mozilla/5.0 (X11; Linux x86_64)", b"assay/1")),
    (b"Accept", (b"*/*", b"text/html,application/xhtml+xml;q=0.9", b"application/json", b"image/*;q=0.8")),
    (b"Accept-Encoding", (b"gzip, deflate, br", b"identity", b"*;q=0")),
    (b"Accept-Language", (b"en-US,en;q=0.5", b"de", b"*")),
    (b"Cookie", (b"a=1", b"session=abc123; theme=dark", b'x="quoted"')),
    (b"Authorization", (b"Bearer eyJhbGciOiJub25lIn0.e30.", b"Basic dXNlcjpwYXNz")),
    (b"Cache-Control", (b"no-cache", b"max-age=0", b"no-store, private")),
    (b"X-Forwarded-For", (b"203.0.113.7", b"203.0.113.7, 198.51.100.2", b"unknown")),
    (b"Referer", (b"http://example.com/", b"/relative")),
    (b"If-None-Match", (b'"abc"', b'W/"1", "2"', b"*")),
    (b"Range", (b"bytes=0-99", b"bytes=-500", b"bytes=0-0,-1")),
    (b"Origin", (b"http://example.com", b"null")),
    (b"Expect", (b"100-continue",)),
    (b"Upgrade-Insecure-Requests", (b"1",)),
    (b"X-Request-Id", (b"7f3c9a", b"", b"\xe2\x9c\x93")),
    (b"Via", (b"1.1 proxy", b"HTTP/1.1 a, 1.0 b")),
)
RESPONSE_HEADERS: tuple[tuple[bytes, tuple[bytes, ...]], ...] = (
    (b"Date", (b"Mon, 01 Jan 2024 00:00:00 GMT", b"Sun, 06 Nov 1994 08:49:37 GMT")),
    (b"Server", (b"nginx", b"Apache/2.4.58 (Unix)", b"assay")),
    (
        b"Set-Cookie",
        (b"id=a3fWa; Expires=Wed, 21 Oct 2015 07:28:00 GMT", b"x=1; Path=/; HttpOnly", b"y=2; SameSite=Strict; Secure"),
    ),
    (b"Cache-Control", (b"public, max-age=3600", b"no-store")),
    (b"ETag", (b'"33a64df5"', b'W/"0815"')),
    (b"Location", (b"/next", b"http://example.com/other?x=1")),
    (b"Vary", (b"Accept-Encoding", b"*")),
    (b"Content-Encoding", (b"identity",)),
    (b"Access-Control-Allow-Origin", (b"*", b"http://example.com")),
    (b"X-Frame-Options", (b"DENY",)),
    (b"Link", (b"</style.css>; rel=preload; as=style",)),
    (b"Retry-After", (b"120", b"Fri, 31 Dec 1999 23:59:59 GMT")),
)
_CONTENT_TYPES = (
    b"application/json",
    b"text/plain; charset=utf-8",
    b"application/x-www-form-urlencoded",
    b"text/html",
    b"application/octet-stream",
    b"multipart/form-data; boundary=xyz",
)
CHUNK_EXTS = (b";a", b";name=value", b';q="quoted ; value"', b";a=1;b=2", b"; spaced=1", b";x=")
TRAILERS = (
    (b"Expires", b"Wed, 21 Oct 2015 07:28:00 GMT"),
    (b"X-Checksum", b"abc123"),
    (b"Server-Timing", b"db;dur=53"),
)
_BODIES: tuple[bytes, ...] = (
    b"",
    b"{}",
    b'{"a":1}',
    b"a=1&b=2",
    b"hello world\n",
    b"\x00\x01\x02\xff",
    b"0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
)
INTERESTING_VALUES = (
    b"",
    b" ",
    b"0",
    b"-1",
    b"a" * 200,
    b"\xff\xfe",
    b"a,b,,c",
    b'"unterminated',
    b"=?utf-8?q?x?=",
    b"../../",
    b"%00",
    b"x\x01y",
    b"1e3",
    b"chunked",
    b"close",
    b"keep-alive",
    b'text/html; charset="utf-8"',
)


def odd_case(name: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.35:
        return name.lower()
    if roll < 0.6:
        return name.upper()
    return bytes(c ^ 0x20 if chr(c).isalpha() and rng.random() < 0.5 else c for c in name)


def make_header(name: bytes, value: bytes, rng: random.Random, odd: bool = True) -> Header:
    sep, trail = b" ", b""
    if odd and rng.random() < ODD_RATE:
        name = odd_case(name, rng)
    if odd and rng.random() < ODD_RATE:
        sep = rng.choice((b"", b"  ", b"\t", b" \t"))
        trail = rng.choice((b"", b" ", b"\t", b"  "))
    return Header(name, value, sep, trail)


def fold_header(header: Header, rng: random.Random) -> Header:
    words = header.value.split(b" ")
    if len(words) < 2:
        return replace(header, value=header.value + CRLF + rng.choice((b" ", b"\t", b"  ")) + b"cont")
    cut = rng.randint(1, len(words) - 1)
    return replace(
        header, value=b" ".join(words[:cut]) + CRLF + rng.choice((b" ", b"\t", b"   ")) + b" ".join(words[cut:])
    )


def _gen_path(rng: random.Random) -> bytes:
    segments = [rng.choice(_SEGMENTS) for _ in range(rng.randint(0, 4))]
    path = b"/" + b"/".join(segments)
    if rng.random() < 0.35:
        pairs = [
            rng.choice(_QUERY_KEYS) + (b"=" + rng.choice(_QUERY_VALUES) if rng.random() < 0.8 else b"")
            for _ in range(rng.randint(1, 3))
        ]
        path += b"?" + b"&".join(pairs)
    return path


def gen_target(method: bytes, host: bytes, rng: random.Random) -> bytes:
    if method == b"CONNECT":
        return host.split(b":")[0] + b":" + rng.choice((b"443", b"80", b"8443"))
    if method == b"OPTIONS" and rng.random() < 0.5:
        return b"*"
    if rng.random() < 0.2:
        userinfo = b"user:pw@" if rng.random() < 0.1 else b""
        return rng.choice((b"http", b"https", b"HTTP")) + b"://" + userinfo + host + _gen_path(rng)
    return _gen_path(rng)


def gen_host(rng: random.Random) -> bytes:
    host = rng.choice(HOSTS)
    if rng.random() < 0.3:
        host += b":" + rng.choice((b"80", b"8080", b"443", b"65535", b"0"))
    return host


def gen_body(rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(_BODIES)
    if roll < 0.7:
        return b"".join(
            rng.choice((b"ab", b"c=d&", b'{"k":', b"\n", b" ", b"\r\n", b"x")) for _ in range(rng.randint(1, 40))
        )
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, MAX_BODY)))


def size_spelling(n: int, rng: random.Random) -> bytes:
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
        ext = rng.choice(CHUNK_EXTS) if rng.random() < 0.15 else b""
        chunks.append(Chunk(size_spelling(hi - lo, rng), body[lo:hi], ext))
    return tuple(chunks)


def with_body(message: Http1Message, framing: str, body: bytes, rng: random.Random) -> Http1Message:
    """``message`` carrying ``body`` with consistent framing headers (old ones removed)."""
    headers = [h for h in message.headers if h.name.lower() not in FRAMING_NAMES]
    if framing == "length":
        headers.insert(rng.randint(0, len(headers)), make_header(b"Content-Length", str(len(body)).encode(), rng))
        return replace(message, headers=tuple(headers), framing="length", body=body, chunks=(), trailers=())
    if framing == "chunked":
        headers.insert(
            rng.randint(0, len(headers)),
            make_header(b"Transfer-Encoding", rng.choice((b"chunked",) * 5 + (b"Chunked",)), rng),
        )
        trailers: tuple[Header, ...] = ()
        if rng.random() < 0.2:
            trailers = tuple(make_header(n, v, rng, odd=False) for n, v in rng.sample(TRAILERS, rng.randint(1, 2)))
        last_ext = rng.choice(CHUNK_EXTS) if rng.random() < 0.1 else b""
        return replace(
            message,
            headers=tuple(headers),
            framing="chunked",
            body=b"",
            chunks=_gen_chunks(body, rng),
            last=Chunk(b"0" * rng.choice((1, 1, 1, 3)), b"", last_ext),
            trailers=trailers,
        )
    return replace(
        message,
        headers=tuple(headers),
        framing=framing,
        body=body if framing == "close" else b"",
        chunks=(),
        trailers=(),
    )


def _gen_headers(table: tuple[tuple[bytes, tuple[bytes, ...]], ...], rng: random.Random) -> list[Header]:
    headers: list[Header] = []
    for _ in range(rng.randint(0, min(6, MAX_HEADERS))):
        name, values = rng.choice(table)
        headers.append(make_header(name, rng.choice(values), rng))
    if headers and rng.random() < 0.2:
        # A repeated field: same name, another value (legal for list-valued fields).
        name, values = rng.choice(table)
        headers.append(make_header(name, rng.choice(values), rng))
        headers.append(make_header(name, rng.choice(values), rng))
    if headers and rng.random() < 0.05:
        i = rng.randrange(len(headers))
        headers[i] = fold_header(headers[i], rng)
    return headers


def _gen_request(rng: random.Random, last: bool) -> Http1Message:
    method = rng.choice(METHODS)
    host = gen_host(rng)
    version = b"HTTP/1.0" if last and rng.random() < 0.1 else b"HTTP/1.1"
    headers = _gen_headers(REQUEST_HEADERS, rng)
    if version == b"HTTP/1.1" or rng.random() < 0.7:
        headers.insert(rng.randint(0, len(headers)), make_header(b"Host", host, rng))
    if rng.random() < 0.2:
        token = b"close" if last and rng.random() < 0.5 else b"keep-alive"
        headers.append(make_header(b"Connection", token, rng))
    message = Http1Message(
        "request", method=method, target=gen_target(method, host, rng), version=version, headers=tuple(headers)
    )
    if method in BODY_METHODS or rng.random() < 0.1:
        body = gen_body(rng)
        if body and not any(h.name.lower() == b"content-type" for h in headers):
            message = replace(
                message, headers=message.headers + (make_header(b"Content-Type", rng.choice(_CONTENT_TYPES), rng),)
            )
        return with_body(message, "chunked" if rng.random() < 0.35 else "length", body, rng)
    return message


def _gen_response(rng: random.Random, last: bool) -> Http1Message:
    status = rng.choice(STATUSES)
    while last and status[:1] == b"1":
        # An interim (1xx) response must be followed by a final one.
        status = rng.choice(STATUSES)
    version = b"HTTP/1.0" if last and rng.random() < 0.1 else b"HTTP/1.1"
    roll = rng.random()
    reason: bytes | None = REASONS.get(status, b"OK")
    if roll < 0.08:
        reason = b""
    elif roll < 0.14:
        reason = None
    elif roll < 0.18:
        reason = rng.choice((b"Okay \t then", b"\xc3\x9cber", b"Not  Found  "))
    headers = _gen_headers(RESPONSE_HEADERS, rng)
    if rng.random() < 0.2:
        headers.append(make_header(b"Connection", b"close" if last and rng.random() < 0.5 else b"keep-alive", rng))
    message = Http1Message("response", version=version, status=status, reason=reason, headers=tuple(headers))
    if body_forbidden(message):
        return message
    body = gen_body(rng)
    if body:
        message = replace(
            message, headers=message.headers + (make_header(b"Content-Type", rng.choice(_CONTENT_TYPES), rng),)
        )
    roll = rng.random()
    if last and roll < 0.08:
        # Read-to-close framing only works for the last message on the connection.
        return with_body(message, "close", body, rng)
    return with_body(message, "chunked" if roll < 0.35 else "length", body, rng)


def fresh_message(kind: str, rng: random.Random, last: bool) -> Http1Message:
    return _gen_request(rng, last) if kind == "request" else _gen_response(rng, last)


def generate_stream(kind: str, rng: random.Random) -> Http1Stream:
    """A fresh valid stream of ``kind`` messages; only the last may close the connection."""
    count = 1 if rng.random() < 0.6 else rng.randint(2, MAX_MESSAGES)
    messages = tuple(fresh_message(kind, rng, i == count - 1) for i in range(count))
    return Http1Stream(messages)
