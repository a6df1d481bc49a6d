"""A structured strategy drives a real campaign end to end (h11 through http1@1)."""

from __future__ import annotations

import pytest

h11 = pytest.importorskip("h11")

from assay.harness.define import make_target  # noqa: E402


def parse_request(data: bytes) -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    while True:
        event = conn.next_event()
        if event in (h11.NEED_DATA, h11.PAUSED) or isinstance(event, h11.ConnectionClosed):
            return
        if isinstance(event, h11.EndOfMessage):
            return


def _target(strategy):
    return make_target(
        parse_request,
        name=f"h11_{(strategy or 'bytes').replace('@', '_')}",
        expected=(h11.RemoteProtocolError,),
        sources=["h11"],
        seeds=[b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"],
        max_len=4096,
        strategy=strategy,
    )


def test_strategy_campaign_reaches_more_of_h11_than_bytes(campaign, tmp_path):
    structured = campaign([_target("http1@1")], cases=1500, seed=1, corpus=tmp_path / "s", artifacts=tmp_path / "sa")
    raw = campaign([_target(None)], cases=1500, seed=1, corpus=tmp_path / "b", artifacts=tmp_path / "ba")
    (s,), (b,) = structured.targets, raw.targets
    assert s.strategy == "http1@1"
    assert s.findings == [] and b.findings == []
    assert s.edges + s.lines > b.edges + b.lines, (s.edges, s.lines, b.edges, b.lines)


def test_strategy_campaign_is_deterministic(campaign, tmp_path):
    runs = [
        campaign([_target("http1@1")], cases=300, seed=4, corpus=tmp_path / f"c{i}", artifacts=tmp_path / f"a{i}")
        for i in range(2)
    ]
    assert runs[0].targets[0].schedule_digest == runs[1].targets[0].schedule_digest
