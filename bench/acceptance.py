"""How often real parsers accept what the structured strategies produce.

For each strategy, over several master seeds, a fixed number of cases per mode:

* ``generated``: ``strategy.generate(rng)``;
* ``mutated``: one ``strategy.mutate`` of a generated value;
* ``bytes``: the same generated input after plain byte-level mutation (the
  engine's ``ByteMutator`` when importable, else a local havoc mutator): the
  baseline a structure-unaware fuzzer starts from.

Each input goes to a real parser: ``h11`` (a server connection for requests, a
client connection for responses; accepted = every message read, through EOF,
with no ``RemoteProtocolError``), ``xml.etree.ElementTree.fromstring`` and
``json.loads``.  The table shows the median acceptance ratio over seeds.

    .venv/bin/python bench/acceptance.py [--cases 2000] [--seeds 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Callable

import h11

from assay.gen.strategy import get_strategy

DEFAULT_CASES = 2000  #: cases per (strategy, mode, seed)
DEFAULT_SEEDS = 5  #: master seeds; the table reports the median


# ------------------------------------------------------------------ parsers


def _drive(conn: h11.Connection, data: bytes, after_message: Callable[[h11.Connection], bool]) -> bool:
    conn.receive_data(data)
    eof = False
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                if eof:
                    return False
                conn.receive_data(b"")
                eof = True
            elif isinstance(event, h11.ConnectionClosed):
                return True
            elif (event is h11.PAUSED or isinstance(event, h11.EndOfMessage)) and not after_message(conn):
                return True
    except h11.RemoteProtocolError:
        return False


def _server_turn(conn: h11.Connection) -> bool:
    """Answer the request just read; True when another pipelined request follows."""
    if conn.our_state is h11.SEND_RESPONSE:
        # 404 never switches protocols (CONNECT needs 2xx, Upgrade needs 101).
        conn.send(h11.Response(status_code=404, headers=[("content-length", "0")]))
        conn.send(h11.EndOfMessage())
    if conn.our_state is h11.DONE and conn.their_state is h11.DONE and conn.trailing_data[0]:
        conn.start_next_cycle()
        return True
    return False


def _send_request(conn: h11.Connection) -> None:
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "example.com")]))
    conn.send(h11.EndOfMessage())


def _client_turn(conn: h11.Connection) -> bool:
    """After a final response: ask again when more response bytes are pipelined."""
    if conn.our_state is h11.DONE and conn.their_state is h11.DONE and conn.trailing_data[0]:
        conn.start_next_cycle()
        _send_request(conn)
        return True
    return conn.their_state is not h11.DONE and conn.their_state is not h11.MUST_CLOSE


def h11_accepts_requests(data: bytes) -> bool:
    """Does an h11 server read every pipelined request in ``data`` without a protocol error?"""
    return _drive(h11.Connection(h11.SERVER), data, _server_turn)


def h11_accepts_responses(data: bytes) -> bool:
    """Does an h11 client (sending GET before each) read every response in ``data``?"""
    conn = h11.Connection(h11.CLIENT)
    _send_request(conn)
    return _drive(conn, data, _client_turn)


def h11_accepts(data: bytes) -> bool:
    """Requests or responses, judged by how ``data`` starts."""
    return h11_accepts_responses(data) if data.startswith(b"HTTP/") else h11_accepts_requests(data)


def etree_accepts(data: bytes) -> bool:
    try:
        ET.fromstring(data)
    except (ET.ParseError, LookupError, ValueError):
        # LookupError: an unknown encoding in the XML declaration escapes as-is.
        return False
    return True


def json_accepts(data: bytes) -> bool:
    try:
        json.loads(data)
    except (ValueError, RecursionError):
        return False
    return True


#: (row label, strategy spec, acceptor)
ROWS: tuple[tuple[str, str, Callable[[bytes], bool]], ...] = (
    ("http1 requests (h11 server)", "http1-request@1", h11_accepts_requests),
    ("http1 responses (h11 client)", "http1-response@1", h11_accepts_responses),
    ("http1@1 mixed (h11)", "http1@1", h11_accepts),
    ("xml@1 (ElementTree)", "xml@1", etree_accepts),
    ("json@1 (json.loads)", "json@1", json_accepts),
)


# ----------------------------------------------------------- byte baseline


def _byte_mutator() -> tuple[str, Callable[[bytes, random.Random], bytes]]:
    try:
        from assay.gen.mutators import ByteMutator
    except ImportError:
        return "local havoc", _havoc
    mutator = ByteMutator(max_len=65536)
    return "assay.gen.mutators.ByteMutator", lambda data, rng: mutator.mutate(data, rng)[0]


def _havoc(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 5)):
        op = rng.randrange(5)
        if op == 0 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif op == 2:
            i = rng.randint(0, len(buf))
            buf[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3 and buf:
            i = rng.randrange(len(buf))
            del buf[i : i + rng.randint(1, 8)]
        elif buf:
            i = rng.randrange(len(buf))
            j = rng.randint(0, len(buf))
            buf[j:j] = buf[i : i + rng.randint(1, 16)]
    return bytes(buf)


# --------------------------------------------------------------- measuring


def measure(
    spec: str,
    accepts: Callable[[bytes], bool],
    seed: int,
    cases: int,
    byte_mutate: Callable[[bytes, random.Random], bytes],
) -> dict[str, float]:
    """Acceptance ratios of generated, strategy-mutated and byte-mutated inputs for one seed."""
    strategy = get_strategy(spec)
    counts = {"generated": 0, "mutated": 0, "bytes": 0}
    for case in range(cases):
        # The case RNG derives from (seed, case), never from a generator shared across cases.
        rng = random.Random(seed * 1_000_003 + case)
        value = strategy.generate(rng)
        data = strategy.render(value)
        counts["generated"] += accepts(data)
        counts["mutated"] += accepts(strategy.render(strategy.mutate(value, rng)))
        counts["bytes"] += accepts(byte_mutate(data, rng))
    return {mode: n / cases for mode, n in counts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=DEFAULT_CASES, help="cases per strategy, mode and seed")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="master seeds (median reported)")
    args = parser.parse_args(argv)
    baseline, byte_mutate = _byte_mutator()
    print(f"acceptance by real parsers: median over {args.seeds} seeds, {args.cases} cases per mode")
    print(f"bytes = generated input after byte-level mutation by {baseline}")
    print()
    header = f"{'strategy':32} {'generated':>10} {'mutated':>10} {'bytes':>10}"
    print(header)
    print("-" * len(header))
    for label, spec, accepts in ROWS:
        runs = [measure(spec, accepts, seed, args.cases, byte_mutate) for seed in range(args.seeds)]
        medians = {mode: statistics.median(run[mode] for run in runs) for mode in ("generated", "mutated", "bytes")}
        print(f"{label:32} {medians['generated']:>10.3f} {medians['mutated']:>10.3f} {medians['bytes']:>10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
