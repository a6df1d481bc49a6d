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

from assay.gen.http1.generate import generate_stream
from assay.gen.http1.model import (
    CRLF,
    INVALID_RATE,
    MAX_BODY,
    MAX_BYTES,
    MAX_CHUNKS,
    MAX_HEADERS,
    MAX_MESSAGES,
    MAX_PARSE_BYTES,
    MAX_PARSE_CHUNKS,
    MAX_SHRINK,
    MAX_TOKENS,
    ODD_RATE,
    Chunk,
    Header,
    Http1Message,
    Http1Stream,
    render_stream,
)
from assay.gen.http1.parse import parse_stream
from assay.gen.http1.strategy import Http1Strategy
from assay.gen.strategy import register_strategy

__all__ = [
    "CRLF",
    "INVALID_RATE",
    "MAX_BODY",
    "MAX_BYTES",
    "MAX_CHUNKS",
    "MAX_HEADERS",
    "MAX_MESSAGES",
    "MAX_PARSE_BYTES",
    "MAX_PARSE_CHUNKS",
    "MAX_SHRINK",
    "MAX_TOKENS",
    "ODD_RATE",
    "Chunk",
    "Header",
    "Http1Message",
    "Http1Stream",
    "Http1Strategy",
    "generate_stream",
    "parse_stream",
    "render_stream",
]

register_strategy(Http1Strategy())
register_strategy(Http1Strategy("http1-request", ("request",)))
register_strategy(Http1Strategy("http1-response", ("response",)))
