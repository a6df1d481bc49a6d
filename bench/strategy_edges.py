"""Coverage reached in a fixed case budget: structured strategy versus bytes alone.

    python bench/strategy_edges.py [--cases 3000] [--seeds 3]

For each built-in strategy, a real parser is fuzzed twice per seed with the same
case cap and seeds: once with the strategy, once with byte mutation only.  Prints
the median branch edges and lines reached, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import xml.dom.minidom
import xml.parsers.expat

import h11

from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target


def http1(data: bytes) -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    for _ in range(64):
        event = conn.next_event()
        if event in (h11.NEED_DATA, h11.PAUSED) or isinstance(event, (h11.ConnectionClosed, h11.EndOfMessage)):
            return


def xml_dom(data: bytes) -> None:
    xml.dom.minidom.parseString(data)


_decoder = json.JSONDecoder()
_decoder.scan_once = json.scanner.py_make_scanner(_decoder)  # the pure-Python scanner, so coverage sees it


def json_py(data: bytes) -> None:
    _decoder.decode(data.decode("utf-8", "replace"))


SUBJECTS = [
    ("h11 (http1@1)", http1, ["h11"], (h11.RemoteProtocolError,), "http1@1", b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"),
    ("xml.dom.minidom (xml@1)", xml_dom, ["xml.dom"], (xml.parsers.expat.ExpatError,), "xml@1", b"<a x='1'>t</a>"),
    ("json pure-Python (json@1)", json_py, ["json"], (ValueError,), "json@1", b'{"a": [1, 2.5, "x"]}'),
]


def measure(fn, sources, expected, strategy, seed_input, cases, seed) -> int:
    target = make_target(
        fn,
        name=f"{fn.__name__}_{strategy or 'bytes'}".replace("@", "_"),
        sources=sources,
        expected=expected,
        seeds=[seed_input],
        max_len=4096,
        strategy=strategy,
        timeout=5.0,
    )
    with tempfile.TemporaryDirectory() as tmp:
        options = CampaignOptions(corpus_root=f"{tmp}/c", artifact_root=f"{tmp}/a", max_cases=cases, seed=seed)
        (outcome,) = run_campaign([target], options).targets
    return outcome.edges + outcome.lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {args.cases} cases per run, median of {args.seeds} seeds")
    print(f"{'subject':<28} {'strategy':>9} {'bytes':>7} {'ratio':>6}   (edges + lines reached)")
    for label, fn, sources, expected, strategy, seed_input in SUBJECTS:
        with_s, without = [], []
        for seed in range(1, args.seeds + 1):
            with_s.append(measure(fn, sources, expected, strategy, seed_input, args.cases, seed))
            without.append(measure(fn, sources, expected, None, seed_input, args.cases, seed))
        a, b = statistics.median(with_s), statistics.median(without)
        print(f"{label:<28} {a:>9.0f} {b:>7.0f} {a / b if b else float('inf'):>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
