"""The ``http1@1`` strategy objects: the Strategy protocol over the modules beside it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

from assay.gen.http1.generate import fresh_message, generate_stream, with_body
from assay.gen.http1.model import (
    FRAMING_NAMES,
    INVALID_RATE,
    MAX_BYTES,
    MAX_MESSAGES,
    MAX_SHRINK,
    MAX_TOKENS,
    Chunk,
    Http1Message,
    Http1Stream,
    render_stream,
)
from assay.gen.http1.mutate import VALID_OPS, invalid_message, pick_weighted
from assay.gen.http1.parse import body_forbidden, parse_stream


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
                messages.insert(rng.randint(0, len(messages) - 1), fresh_message(value.kind, rng, last=False))
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
                messages[i] = invalid_message(messages[i], rng)
            else:
                messages[i] = pick_weighted(VALID_OPS, rng)(messages[i], rng)
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
            fields = [h for h in donor.headers if h.name.lower() not in FRAMING_NAMES + (b"host",)]
            if fields:
                headers = list(messages[i].headers)
                for field in rng.sample(fields, rng.randint(1, min(3, len(fields)))):
                    headers.insert(rng.randint(0, len(headers)), field)
                messages[i] = replace(messages[i], headers=tuple(headers))
        elif roll < 0.6 and not body_forbidden(messages[i]) and donor.framing != "none":
            body = donor.body if donor.framing != "chunked" else b"".join(c.data for c in donor.chunks)
            framing = messages[i].framing if messages[i].framing != "none" else donor.framing
            if framing == "close" and i != len(messages) - 1:
                framing = "length"
            messages[i] = with_body(messages[i], framing, body, rng)
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
                plain = replace(
                    m, chunks=(Chunk(b"%x" % len(body), body),) if body else (), trailers=(), last=Chunk(b"0")
                )
                if plain != m:
                    candidates.append(put(i, plain))
            if m.framing in ("length", "close") and m.body:
                candidates.append(put(i, _shrunk_body(m, b"")))
                candidates.append(put(i, _shrunk_body(m, m.body[: len(m.body) // 2])))
            for j, h in enumerate(m.headers):
                if h.name.lower() in FRAMING_NAMES:
                    continue
                candidates.append(put(i, replace(m, headers=m.headers[:j] + m.headers[j + 1 :])))
        for candidate in candidates:
            yield candidate
            count += 1
            if count >= MAX_SHRINK:
                return


def _shrunk_body(m: Http1Message, body: bytes) -> Http1Message:
    """``m`` with a shorter body and its Content-Length fields updated to match."""
    headers = tuple(
        replace(h, value=str(len(body)).encode()) if h.name.lower() == b"content-length" else h for h in m.headers
    )
    return replace(m, body=body, headers=headers if m.framing == "length" else m.headers)
