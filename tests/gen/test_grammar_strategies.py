"""The http1@1, xml@1 and json@1 strategies: round trips, determinism, bounds, acceptance by real parsers."""

from __future__ import annotations

import importlib.util
import random
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from assay.gen import http1 as http1_mod, json as json_mod, xml as xml_mod
from assay.gen.strategy import Strategy, get_strategy, registered

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "acceptance.py"
_spec = importlib.util.spec_from_file_location("assay_bench_acceptance", _BENCH)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

SPECS = ("http1@1", "http1-request@1", "http1-response@1", "xml@1", "json@1")
BOUNDS = {
    "http1": http1_mod.MAX_BYTES,
    "http1-request": http1_mod.MAX_BYTES,
    "http1-response": http1_mod.MAX_BYTES,
    "xml": xml_mod.MAX_BYTES,
    "json": json_mod.MAX_BYTES,
}
ACCEPTS = {
    "http1@1": bench.h11_accepts,
    "http1-request@1": bench.h11_accepts_requests,
    "http1-response@1": bench.h11_accepts_responses,
    "xml@1": bench.etree_accepts,
    "json@1": bench.json_accepts,
}


def _case(seed: int, i: int) -> random.Random:
    return random.Random(seed * 1_000_003 + i)


@pytest.fixture(params=SPECS)
def spec(request: pytest.FixtureRequest) -> str:
    return request.param


def test_registered_under_versioned_names() -> None:
    names = registered()
    for spec_name in SPECS:
        assert spec_name in names
        strategy = get_strategy(spec_name)
        assert isinstance(strategy, Strategy)
        assert f"{strategy.name}@{strategy.version}" == spec_name
    assert get_strategy("xml").version == 1


def test_round_trip_generated_mutated_and_crossed(spec: str) -> None:
    strategy = get_strategy(spec)
    for i in range(300):
        rng = _case(1, i)
        value = strategy.generate(rng)
        data = strategy.render(value)
        parsed = strategy.parse(data)
        assert parsed is not None, data[:300]
        assert strategy.render(parsed) == data
        for other in (strategy.mutate(value, rng), strategy.crossover(value, strategy.generate(rng), rng)):
            other_data = strategy.render(other)
            reparsed = strategy.parse(other_data)
            # Adjacent-invalid values may be unreadable; whatever parses renders back byte for byte.
            if reparsed is not None:
                assert strategy.render(reparsed) == other_data


def test_parse_rejects_what_it_cannot_read(spec: str) -> None:
    strategy = get_strategy(spec)
    for data in (b"", b"\xff\xfe\x00garbage", b"<<<<", b'{"a":', b"GET\r\n"):
        value = strategy.parse(data)
        if value is not None:
            assert strategy.render(value) == data


def test_same_seed_same_schedule(spec: str) -> None:
    def schedule(seed: int) -> list[bytes]:
        strategy = get_strategy(spec)
        out: list[bytes] = []
        for i in range(60):
            rng = _case(seed, i)
            value = strategy.generate(rng)
            out.append(strategy.render(value))
            mutated = strategy.mutate(value, rng)
            out.append(strategy.render(mutated))
            out.append(strategy.render(strategy.crossover(value, mutated, rng)))
            out.extend(strategy.tokens(value))
            out.extend(strategy.render(c) for c in strategy.shrink_candidates(value))
        return out

    first = schedule(7)
    assert first == schedule(7)
    assert first != schedule(8)


def test_hooks_draw_only_from_the_given_rng(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a strategy hook used global random or the clock")

    strategy = get_strategy(spec)
    for name in ("random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "getrandbits", "seed"):
        monkeypatch.setattr(random, name, forbidden)
    monkeypatch.setattr(time, "time", forbidden)
    monkeypatch.setattr(time, "perf_counter", forbidden)
    for i in range(40):
        rng = _case(3, i)
        value = strategy.generate(rng)
        strategy.crossover(strategy.mutate(value, rng), value, rng)


def test_outputs_stay_within_bounds(spec: str) -> None:
    strategy = get_strategy(spec)
    bound = BOUNDS[strategy.name]
    for seed in range(40):
        rng = _case(5, seed)
        value = strategy.generate(rng)
        assert len(strategy.render(value)) <= bound
        for _ in range(25):
            value = strategy.crossover(strategy.mutate(value, rng), strategy.generate(rng), rng)
            assert len(strategy.render(value)) <= bound
        candidates = list(strategy.shrink_candidates(value))
        assert len(candidates) <= 64
        size = len(strategy.render(value))
        assert all(len(strategy.render(c)) <= size for c in candidates)
        tokens = strategy.tokens(value)
        assert len(tokens) <= 64 and all(isinstance(t, bytes) and t for t in tokens)


@pytest.mark.parametrize("spec_name", SPECS)
def test_acceptance_floors(spec_name: str) -> None:
    strategy = get_strategy(spec_name)
    accepts = ACCEPTS[spec_name]
    generated = mutated = 0
    n = 500
    for i in range(n):
        rng = _case(11, i)
        value = strategy.generate(rng)
        generated += accepts(strategy.render(value))
        mutated += accepts(strategy.render(strategy.mutate(value, rng)))
    assert generated / n >= 0.90
    assert mutated / n >= 0.60
    # Mutation also produces adjacent-invalid inputs on purpose: not every one is accepted.
    assert mutated < n


def test_byte_baseline_is_worse_than_structure() -> None:
    _, byte_mutate = bench._byte_mutator()
    ratios = bench.measure("xml@1", bench.etree_accepts, seed=2, cases=200, byte_mutate=byte_mutate)
    assert ratios["mutated"] > ratios["bytes"] + 0.3


# -------------------------------------------------------------- HTTP/1 specifics


def _generated(spec_name: str, n: int = 400) -> list:
    strategy = get_strategy(spec_name)
    return [strategy.generate(_case(21, i)) for i in range(n)]


def test_http1_covers_the_grammar() -> None:
    requests = [m for s in _generated("http1-request@1") for m in s.messages]
    responses = [m for s in _generated("http1-response@1") for m in s.messages]
    targets = {m.target[:1] for m in requests}
    assert {b"/", b"*", b"h"} <= targets or {b"/", b"*", b"H"} <= targets  # origin, asterisk, absolute
    assert any(m.method == b"CONNECT" and b":" in m.target and not m.target.startswith(b"/") for m in requests)
    headers = [h for m in requests + responses for h in m.headers]
    assert any(b"\r\n " in h.value or b"\r\n\t" in h.value for h in headers)  # obsolete line folding
    assert any(h.name != h.name.lower() and h.name != h.name.title() for h in headers)  # odd case
    assert any(h.sep in (b"", b"\t", b"  ", b" \t") for h in headers)  # whitespace oddities
    chunked = [m for m in requests + responses if m.framing == "chunked"]
    assert chunked and any(c.ext for m in chunked for c in m.chunks) and any(m.trailers for m in chunked)
    assert any(m.framing == "length" for m in requests) and any(m.framing == "close" for m in responses)
    assert any(len(s.messages) > 1 for s in _generated("http1-request@1"))  # pipelining
    assert {m.version for m in requests} >= {b"HTTP/1.1", b"HTTP/1.0"}
    assert any(m.status[:1] == b"1" for m in responses)
    for m in requests + responses:
        names = [h.name.lower() for h in m.headers]
        assert names.count(b"content-length") <= 1 and names.count(b"transfer-encoding") <= 1
        if m.kind == "request" and m.version == b"HTTP/1.1":
            assert names.count(b"host") == 1


def test_http1_mutation_reaches_smuggling_corners() -> None:
    strategy = get_strategy("http1-request@1")
    seen = set()
    for i in range(1500):
        rng = _case(31, i)
        value = strategy.generate(rng)
        for m in strategy.mutate(value, rng).messages:
            lengths = [h.value for h in m.headers if h.name.lower() == b"content-length"]
            chunked = any(h.name.lower() == b"transfer-encoding" for h in m.headers)
            if len(lengths) > 1:
                seen.add("duplicate content-length")
            if lengths and m.framing == "length" and lengths[0].isdigit() and int(lengths[0]) != len(m.body):
                seen.add("content-length disagrees")
            if lengths and chunked:
                seen.add("content-length with chunked")
            if any(
                c.size.isalnum()
                and all(x in b"0123456789abcdefABCDEF" for x in c.size)
                and int(c.size, 16) != len(c.data)
                for c in m.chunks
            ):
                seen.add("chunk size lies")
    assert seen == {
        "duplicate content-length",
        "content-length disagrees",
        "content-length with chunked",
        "chunk size lies",
    }


def test_http1_parse_is_lossless_on_foreign_input() -> None:
    data = (
        b"POST /upload?x=1 HTTP/1.1\r\nhost:  example.com \r\nX-Long: a\r\n  b\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nTrailer: t\r\n\r\n"
        b"GET / HTTP/1.0\n\n"
    )
    value = get_strategy("http1@1").parse(data)
    assert value is not None and len(value.messages) == 2
    assert value.messages[0].chunks[0].ext == b";ext=1"
    assert get_strategy("http1@1").render(value) == data
    assert get_strategy("http1-response@1").parse(data) is None


# ----------------------------------------------------------------- XML specifics


def test_xml_covers_the_grammar() -> None:
    docs = _generated("xml@1")
    rendered = [get_strategy("xml@1").render(d) for d in docs]
    for needle in (
        b"<!DOCTYPE",
        b"<!ENTITY",
        b"<!ELEMENT",
        b"<!ATTLIST",
        b"<![CDATA[",
        b"<!--",
        b"<?",
        b"xmlns:",
        b'xmlns="',
        b"&#x",
        b"&amp;",
        b'<?xml version="1.0"',
        b"standalone=",
    ):
        assert any(needle in r for r in rendered), needle
    assert any(b"&e" in r and b"<!ENTITY" in r for r in rendered)  # declared entities referenced


def test_xml_entity_expansion_is_bounded() -> None:
    for i in range(400):
        rng = _case(41, i)
        doc = get_strategy("xml@1").generate(rng)
        for _ in range(3):
            doc = get_strategy("xml@1").mutate(doc, rng)
        data = get_strategy("xml@1").render(doc)
        try:
            tree = ET.fromstring(data)
        except (ET.ParseError, LookupError):
            continue
        assert len(ET.tostring(tree)) <= 16 * len(data) + 4096


# ---------------------------------------------------------------- JSON specifics


def test_json_keeps_lexical_corners() -> None:
    rendered = b"".join(get_strategy("json@1").render(v) for v in _generated("json@1"))
    for needle in (b"\\ud8", b"\\u", b"e+", b"E", b"-0", b"\\n", b"true", b"null", b"[]"):
        assert needle in rendered, needle
    assert max(len(t) for t in rendered.split(b",")) > 20  # big integers and long strings appear
