"""Re-chunking ``h11``: a server connection must read the same requests however the bytes arrive.

``h11.Connection.receive_data`` is built to be fed whatever ``recv()`` returned.
The oracle feeds one request stream whole, in data-derived chunkings and byte
by byte, and compares the events (``Data`` events merged: how a body is split
into ``Data`` events is documented as arbitrary) and the final state, or the
protocol error class.
"""

from __future__ import annotations

import h11

import assay
from assay.oracles import rechunk

_SEEDS = [
    b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
    b"POST /submit HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n",
    b"GET /a HTTP/1.0\r\n\r\n",
]


def _event(ev) -> tuple:
    if isinstance(ev, h11.Request):
        return ("request", ev.method, ev.target, tuple(ev.headers), ev.http_version)
    if isinstance(ev, h11.Data):
        return ("data", bytes(ev.data))
    if isinstance(ev, h11.EndOfMessage):
        return ("end", tuple(ev.headers))
    return (type(ev).__name__,)


def read_requests(chunks: list[bytes]) -> tuple:
    conn = h11.Connection(h11.SERVER)
    events: list[tuple] = []
    for chunk in [*chunks, b""]:  # b"": the peer closed
        conn.receive_data(chunk)
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA or ev is h11.PAUSED:
                break
            if events and events[-1][0] == "data" and isinstance(ev, h11.Data):
                events[-1] = ("data", events[-1][1] + bytes(ev.data))
            else:
                events.append(_event(ev))
            if isinstance(ev, h11.ConnectionClosed):
                break
    return tuple(events), conn.their_state


# One call per byte plus the chunkings for each input: a generous timeout.
@assay.target(
    expected=(h11.RemoteProtocolError,),
    sources=["h11"],
    strategy="http1-request@1",
    seeds=_SEEDS,
    max_len=1024,
    timeout=10.0,
)
def oracle_rechunk_h11(data: bytes) -> None:
    rechunk(read_requests, data, name="h11-server")
