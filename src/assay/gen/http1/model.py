"""HTTP/1 messages and streams as exact wire bytes, their bounds, and rendering."""

from __future__ import annotations

from dataclasses import dataclass

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
OWS = b" \t"
FRAMING_NAMES = (b"content-length", b"transfer-encoding")


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
