"""Fuzz targets for ``h11`` (the PyPI HTTP/1.1 protocol library), server and client side.

h11's reader is incremental: ``receive_data`` may be given the byte stream cut
anywhere.  The oracle (``rechunk``) runs the same bytes through a fresh
``h11.Connection`` three ways -- all at once, in two halves, one byte at a time --
and compares what ``next_event`` produced: the list of events and whether (and
after which events) h11 rejected the stream with ``RemoteProtocolError``.

Normalization: h11 documents that message bodies may be split into ``Data``
events arbitrarily, so consecutive ``Data`` events are merged (their
``chunk_start``/``chunk_end`` flags describe transfer-encoding framing and depend
on the cut, so they are dropped).  Everything else must agree exactly.

Between pipelined requests the server side answers ``404`` with an empty body and
starts the next cycle, so every request in the input is parsed.
"""

from __future__ import annotations

import h11

import assay

_MAX_CYCLES = 8


def _norm(event: object) -> tuple:
    if isinstance(event, h11.Request):
        return ("Request", event.method, event.target, tuple(event.headers), event.http_version)
    if isinstance(event, (h11.Response, h11.InformationalResponse)):
        return (type(event).__name__, event.status_code, tuple(event.headers), event.http_version, event.reason)
    if isinstance(event, h11.EndOfMessage):
        return ("EndOfMessage", tuple(event.headers))
    return (type(event).__name__,)


def _add(events: list, event: object) -> None:
    if isinstance(event, h11.Data):
        if events and events[-1][0] == "Data":
            events[-1] = ("Data", events[-1][1] + bytes(event.data))
        else:
            events.append(("Data", bytes(event.data)))
    else:
        events.append(_norm(event))


def _drain(conn: h11.Connection, role: type, events: list) -> bool:
    """Pull events until h11 needs more data; False once no more can come."""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            return True
        if event is h11.PAUSED:  # e.g. after "Connection: close", or the client's response is done
            return False
        _add(events, event)
        if isinstance(event, h11.ConnectionClosed):
            return False
        if role is h11.SERVER and isinstance(event, h11.EndOfMessage):
            if conn.our_state is h11.SEND_RESPONSE:
                conn.send(h11.Response(status_code=404, headers=[("Content-Length", "0")]))
                conn.send(h11.EndOfMessage())
            if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                if sum(1 for e in events if e[0] == "EndOfMessage") >= _MAX_CYCLES:
                    return False
                conn.start_next_cycle()


def _run(role: type, chunks: list[bytes], prelude) -> tuple[list, str | None]:
    conn = h11.Connection(our_role=role)
    prelude(conn)
    events: list = []
    try:
        for chunk in chunks:
            conn.receive_data(chunk)
            if not _drain(conn, role, events):
                return events, None
        conn.receive_data(b"")  # end of stream
        _drain(conn, role, events)
    except h11.RemoteProtocolError:
        return events, "RemoteProtocolError"
    return events, None


def _check(data: bytes, role: type, prelude) -> None:
    whole = _run(role, [data], prelude)
    assay.feature("events", tuple(e[0] for e in whole[0][:8]) + (whole[1],))
    half = len(data) // 2
    halves = _run(role, [data[:half], data[half:]], prelude)
    if halves != whole:
        raise assay.InvariantViolation(
            "rechunk", f"{data!r}: whole {whole!r} != halves at {half} {halves!r}", kind="halves"
        )
    single = _run(role, [data[i : i + 1] for i in range(len(data))], prelude)
    if single != whole:
        raise assay.InvariantViolation("rechunk", f"{data!r}: whole {whole!r} != byte-by-byte {single!r}", kind="bytes")


_REQUEST_SEEDS = [
    b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
    b"POST /submit?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
    b"POST /up HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n",
    b"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.0\r\nUser-Agent: x\r\n  folded\r\n\r\n",
    b"PUT /x HTTP/1.1\nHost: a\nExpect: 100-continue\nContent-Length: 3\n\nabc",
]

_DICT = [
    b"\r\n",
    b"\n",
    b": ",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"Host: ",
    b"Content-Length: ",
    b"Transfer-Encoding: ",
    b"chunked",
    b"Connection: ",
    b"close",
    b"keep-alive",
    b"Upgrade: ",
    b"Expect: 100-continue",
    b"0\r\n\r\n",
    b";",
    b" ",
    b"\t",
    b"GET ",
    b"POST ",
    b"CONNECT ",
    b"HEAD ",
]


@assay.target(
    expected=(h11.RemoteProtocolError,),
    sources=["h11"],
    max_len=2048,
    seeds=_REQUEST_SEEDS,
    dictionary=_DICT,
    timeout=2.0,
)
def h11_server_rechunk(data: bytes) -> None:
    _check(data, h11.SERVER, lambda conn: None)


def _send_request(conn: h11.Connection) -> None:
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "example.com")]))
    conn.send(h11.EndOfMessage())


_RESPONSE_SEEDS = [
    b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nDate: x\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\n\r\nbody until close",
    b"HTTP/1.1 404 Not Found\nConnection: close\nContent-Length: 0\n\n",
]


@assay.target(
    expected=(h11.RemoteProtocolError,),
    sources=["h11"],
    max_len=2048,
    seeds=_RESPONSE_SEEDS,
    dictionary=_DICT,
    timeout=2.0,
)
def h11_client_rechunk(data: bytes) -> None:
    _check(data, h11.CLIENT, _send_request)
