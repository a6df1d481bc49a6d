"""Field mutations, and the adjacent protocol violations (the request-smuggling corners)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from assay.gen.http1.generate import (
    BODY_METHODS,
    CHUNK_EXTS,
    HOSTS,
    INTERESTING_VALUES,
    METHODS,
    REASONS,
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    STATUSES,
    TRAILERS,
    fold_header,
    gen_body,
    gen_host,
    gen_target,
    make_header,
    odd_case,
    size_spelling,
    with_body,
)
from assay.gen.http1.model import FRAMING_NAMES, Chunk, Header, Http1Message
from assay.gen.http1.parse import body_forbidden

_Op = Callable[[Http1Message, random.Random], Http1Message]


def _pick_header(message: Http1Message, rng: random.Random, framing_ok: bool = False) -> int | None:
    indexes = [
        i for i, h in enumerate(message.headers) if framing_ok or h.name.lower() not in FRAMING_NAMES + (b"host",)
    ]
    return rng.choice(indexes) if indexes else None


def _set_header(message: Http1Message, i: int, header: Header) -> Http1Message:
    headers = list(message.headers)
    headers[i] = header
    return replace(message, headers=tuple(headers))


def _table(message: Http1Message) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    return REQUEST_HEADERS if message.kind == "request" else RESPONSE_HEADERS


def _op_header_value(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng)
    if i is None:
        return _op_header_add(m, rng)
    h = m.headers[i]
    known = dict(_table(m)).get(h.name, ())
    value = rng.choice(known) if known and rng.random() < 0.5 else rng.choice(INTERESTING_VALUES)
    return _set_header(m, i, replace(h, value=value))


def _op_header_add(m: Http1Message, rng: random.Random) -> Http1Message:
    name, values = rng.choice(_table(m))
    headers = list(m.headers)
    headers.insert(rng.randint(0, len(headers)), make_header(name, rng.choice(values), rng))
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
    return _set_header(m, i, replace(m.headers[i], name=odd_case(m.headers[i].name, rng)))


def _op_header_ws(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng, framing_ok=True)
    if i is None:
        return m
    return _set_header(
        m,
        i,
        replace(
            m.headers[i], sep=rng.choice((b"", b" ", b"\t", b"  \t ")), trail=rng.choice((b"", b" ", b"\t", b" \t"))
        ),
    )


def _op_header_fold(m: Http1Message, rng: random.Random) -> Http1Message:
    i = _pick_header(m, rng)
    if i is None:
        return m
    return _set_header(m, i, fold_header(m.headers[i], rng))


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
            method = rng.choice(METHODS)
            target = m.target
            if (method == b"CONNECT") != (m.method == b"CONNECT") or m.target == b"*":
                target = gen_target(method, rng.choice(HOSTS), rng)
            return replace(m, method=method, target=target)
        if m.target.startswith(b"/") and rng.random() < 0.5:
            return replace(m, target=m.target + rng.choice((b"/", b"/x", b"?a=1", b"&b", b"%41", b"/..")))
        return replace(m, target=gen_target(m.method, gen_host(rng), rng))
    if body_forbidden(m) or m.framing == "none":
        status = rng.choice((b"204", b"304", b"100", b"103"))
    else:
        status = rng.choice([s for s in STATUSES if s[:1] != b"1" and s not in (b"204", b"304")])
    return replace(m, status=status, reason=rng.choice((REASONS.get(status, b"OK"), b"", b"Whatever")))


def _op_body(m: Http1Message, rng: random.Random) -> Http1Message:
    if body_forbidden(m) or (
        m.kind == "request" and m.framing == "none" and m.method not in BODY_METHODS and rng.random() < 0.5
    ):
        return _op_header_value(m, rng)
    current = m.body if m.framing != "chunked" else b"".join(c.data for c in m.chunks)
    roll = rng.random()
    if roll < 0.3:
        body = gen_body(rng)
    elif roll < 0.5 and current:
        body = current[: rng.randrange(len(current))]
    elif roll < 0.7:
        body = current + gen_body(rng)[:64]
    else:
        body = bytearray(current or b"x")  # type: ignore[assignment]  # a scratch copy, bytes again below
        body[rng.randrange(len(body))] = rng.randrange(256)  # type: ignore[index]
        body = bytes(body)
    framing = m.framing if m.framing in ("length", "chunked", "close") else "length"
    if rng.random() < 0.15 and framing != "close":
        framing = "chunked" if framing == "length" else "length"
    return with_body(m, framing, body, rng)


def _op_chunks(m: Http1Message, rng: random.Random) -> Http1Message:
    if m.framing != "chunked":
        return _op_body(m, rng)
    chunks = list(m.chunks)
    roll = rng.random()
    if roll < 0.25 or not chunks:
        data = gen_body(rng)[:128] or b"z"
        chunks.insert(rng.randint(0, len(chunks)), Chunk(size_spelling(len(data), rng), data))
    elif roll < 0.4:
        del chunks[rng.randrange(len(chunks))]
    elif roll < 0.55:
        i = rng.randrange(len(chunks))
        data = chunks[i].data
        if len(data) > 1:
            cut = rng.randint(1, len(data) - 1)
            chunks[i : i + 1] = [
                Chunk(size_spelling(cut, rng), data[:cut]),
                Chunk(size_spelling(len(data) - cut, rng), data[cut:]),
            ]
    elif roll < 0.7:
        i = rng.randrange(len(chunks))
        ext = b"" if chunks[i].ext else rng.choice(CHUNK_EXTS)
        chunks[i] = replace(chunks[i], ext=ext)
    elif roll < 0.8:
        i = rng.randrange(len(chunks))
        chunks[i] = replace(chunks[i], size=size_spelling(len(chunks[i].data), rng))
    elif roll < 0.9:
        trailers = list(m.trailers)
        if trailers and rng.random() < 0.5:
            del trailers[rng.randrange(len(trailers))]
        else:
            name, value = rng.choice(TRAILERS)
            trailers.append(make_header(name, value, rng, odd=False))
        return replace(m, trailers=tuple(trailers))
    else:
        return replace(m, last=replace(m.last, ext=b"" if m.last.ext else rng.choice(CHUNK_EXTS)))
    return replace(m, chunks=tuple(chunks))


VALID_OPS: tuple[tuple[_Op, int], ...] = (
    (_op_header_value, 4),
    (_op_header_add, 3),
    (_op_header_dup, 2),
    (_op_header_remove, 2),
    (_op_header_case, 2),
    (_op_header_ws, 2),
    (_op_header_fold, 1),
    (_op_header_swap, 1),
    (_op_start_line, 3),
    (_op_body, 3),
    (_op_chunks, 3),
)


def _framing_index(m: Http1Message, name: bytes) -> int | None:
    for i, h in enumerate(m.headers):
        if h.name.lower() == name:
            return i
    return None


def invalid_message(m: Http1Message, rng: random.Random) -> Http1Message:
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
        headers[cl] = replace(headers[cl], value=str(n).encode())  # type: ignore[index]  # cl_* kinds: cl is set
    elif kind == "cl_dup":
        other = str(len(m.body) + rng.choice((0, 1))).encode()
        headers.insert(rng.randint(0, len(headers)), make_header(b"Content-Length", other, rng))
    elif kind == "cl_bad":
        headers[cl] = replace(  # type: ignore[index]  # cl_* kinds: cl is set
            headers[cl],  # type: ignore[index]
            value=rng.choice((b"-1", b"+5", b"0x10", b"1 2", b"", b"1,2", b"99999999999999999999", "١".encode())),
        )
    elif kind == "cl_te":
        headers.insert(rng.randint(0, len(headers)), make_header(b"Transfer-Encoding", b"chunked", rng))
    elif kind == "te_bad":
        headers[te] = replace(  # type: ignore[index]  # te_* kinds: te is set
            headers[te],  # type: ignore[index]
            value=rng.choice((b"chunked, gzip", b"gzip, chunked", b"xchunked", b"chunked\x0b", b"identity", b"chunk")),
        )
    elif kind == "te_dup":
        headers.insert(rng.randint(0, len(headers)), headers[te])  # type: ignore[index]  # te_* kinds: te is set
    elif kind in ("chunk_size", "chunk_hex", "chunk_crlf"):
        chunks = list(m.chunks)
        i = rng.randrange(len(chunks))
        if kind == "chunk_size":
            size = b"%x" % max(0, len(chunks[i].data) + rng.choice((-1, 1, 16)))
        elif kind == "chunk_hex":
            size = rng.choice((b"g", b"-1", b"0x5", b"ffffffffffffffffffff0", b" 5", b"5 "))
        else:
            return replace(
                m,
                chunks=tuple(chunks[:i]) + (replace(chunks[i], data=chunks[i].data + b"\n"),) + tuple(chunks[i + 1 :]),
            )
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
            headers.insert(rng.randint(0, len(headers)), make_header(b"Host", gen_host(rng), rng))
    else:
        if m.kind == "request":
            field = rng.choice(("method", "target", "version"))
            bad = {
                "method": (b"G(ET", b"", b"GET\x00"),
                "target": (b"/a b", b"/\xe9", b"", b"/\x7f"),
                "version": (b"HTTP/1.1a", b"http/1.1", b"HTTP/11", b"HTTP/1.", b"HTTP/1.1 "),
            }[field]
            return replace(m, **{field: rng.choice(bad)})  # type: ignore[arg-type]  # a bytes field
        return replace(m, status=rng.choice((b"20", b"2000", b"abc", b"")), reason=m.reason)
    return replace(m, headers=tuple(headers))


def pick_weighted(ops: tuple[tuple[_Op, int], ...], rng: random.Random) -> _Op:
    total = sum(w for _, w in ops)
    roll = rng.randrange(total)
    for op, weight in ops:
        if roll < weight:
            return op
        roll -= weight
    return ops[-1][0]
