"""The C twin of the byte-mode generator computes what the Python reference computes.

``assay.gen._cmutate`` is an optional accelerator: a campaign's schedule must not
depend on whether it was built.  These tests run both on the same draws, inputs and
campaigns and compare them exactly; a C mutation that drew once more, or wrote one
byte elsewhere, fails them.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from assay.engine import seeds
from assay.engine.seeds import CaseStream, FastRandom, case_stream
from assay.gen.accelerated import cmutate
from assay.gen.mutators import MUTATIONS, ByteMutator

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _compiler() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


def _openssl_headers() -> bool:
    dirs = [sysconfig.get_config_var("INCLUDEDIR") or "", "/usr/include", "/usr/local/include"]
    return any(os.path.exists(os.path.join(d, "openssl", "evp.h")) for d in dirs if d)


def test_the_accelerator_is_built_wherever_a_compiler_is() -> None:
    if _compiler() is None or not _openssl_headers():
        pytest.skip("no C compiler or no OpenSSL headers here: the install falls back to the Python reference")
    if os.environ.get("ASSAY_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("ASSAY_PURE_PYTHON turns the accelerator off")
    assert cmutate is not None, "a C compiler is here but assay.gen._cmutate was not built: reinstall assay"
    assert cmutate.NAMES == tuple(MUTATIONS)
    assert type(case_stream(1)) is cmutate.Stream
    assert ByteMutator(64)._c is cmutate
    assert cmutate.HotLoop is not None


needs_c = pytest.mark.skipif(cmutate is None, reason="assay.gen._cmutate is not built (no C compiler)")


def _draw(rng, meta: random.Random):
    """One random call on ``rng``; ``meta`` chooses which, identically for both generators."""
    op = meta.randrange(8)
    if op == 0:
        n = meta.choice([1, 2, 3, 10, 255, 1 << 20, (1 << 48) - 1, 1 << 48, 10 << 32, (1 << 64) - 1, 1 << 64, 1 << 90])
        return rng.randrange(n)
    if op == 1:
        return rng.random()
    if op == 2:
        low = meta.randrange(-5, 5)
        return rng.randint(low, low + meta.randrange(0, 1000))
    if op == 3:
        return rng.getrandbits(meta.choice([0, 1, 8, 48, 64, 65, 200, 512]))
    if op == 4:
        return rng.randbytes(meta.randrange(0, 70))
    if op == 5:
        items = list(range(meta.randrange(0, 10)))
        rng.shuffle(items)
        return items
    if op == 6:
        return rng.choice("abcdefg"[: meta.randrange(1, 8)])
    low = meta.randrange(-3, 3)
    return rng.randrange(low, low + meta.randrange(1, 5000))


@needs_c
def test_the_c_generator_draws_what_fast_random_draws() -> None:
    """Every method, every bound (past 2**48, 2**64), the pool refilled many times."""
    reference, twin = CaseStream(77), cmutate.Stream((77).to_bytes(8, "big"))
    meta = random.Random(1)
    for i in range(0, 5000, 3):
        a, b = reference.rng(i), twin.rng(i)
        assert a._pool == b._pool, i
        for _ in range(60):  # past the case's 384-bit slice: the hashed refills must agree too
            state = meta.getstate()
            x = _draw(a, meta)
            meta.setstate(state)
            y = _draw(b, meta)
            assert x == y, (i, x, y)
        assert (a._pool, a._more) == (b._pool, b._more), i
    assert a._more > 0, "the draws never reached the refill path"


@needs_c
def test_the_c_generator_refuses_what_the_reference_refuses() -> None:
    a, b = FastRandom(1 << 200, b"k" * 8, 3), cmutate.Random(1 << 200, b"k" * 8, 3)
    for call in (lambda r: r.randrange(0), lambda r: r.randrange(5, 5), lambda r: r.randint(3, 1)):
        with pytest.raises(ValueError):
            call(a)
        with pytest.raises(ValueError):
            call(b)
    with pytest.raises(ZeroDivisionError):
        a.choice([])
    with pytest.raises(ZeroDivisionError):
        b.choice([])
    assert a._pool == b._pool


def _parents() -> list[bytes]:
    """Real inputs of several shapes: the bundled examples' seeds, binary, long digit runs."""
    sys.path.insert(0, str(EXAMPLES / "fuzz"))
    try:
        import fuzz_json
        import fuzz_tomllib
    finally:
        sys.path.remove(str(EXAMPLES / "fuzz"))
    found = [*fuzz_tomllib._SEEDS, *fuzz_json._SEEDS]
    return [b"", b"a", b"\x00\xff" * 40, b"9" * 2500, b"-" * 10 + b"7-8--9", b"((a)[b]{c}<d>)" * 3, *found]


@needs_c
@pytest.mark.parametrize("max_len", [64, 4096])
def test_the_c_mutator_makes_the_same_children(max_len: int) -> None:
    """ByteMutator.mutate through C and through Python: the same bytes and operator names."""
    parents = _parents()
    dictionary = [b"key", b"=", b"[table]", b"\r\n", b'"\\u0041"']
    python, c = ByteMutator(max_len, dictionary), ByteMutator(max_len, dictionary)
    python._c = python.mutate_c = None
    reference, twin = CaseStream(5), cmutate.Stream((5).to_bytes(8, "big"))
    meta = random.Random(max_len)
    used = set()
    for i in range(20_000):
        parent = parents[meta.randrange(len(parents))]
        limit = meta.choice([None, 8, 64, 1000])
        other = meta.choice([None, parents, [], b"xyz"])
        if i % 50 == 0:
            python.wins[:] = c.wins[:] = [meta.randrange(len(MUTATIONS)) for _ in range(meta.randrange(5))]
        a, b = reference.rng(i), twin.rng(i)
        expected = python.mutate(parent, a, other, limit)
        assert c.mutate(parent, b, other, limit) == expected, (i, parent, limit)
        assert (a._pool, a._more) == (b._pool, b._more), i
        used.update(expected[1])
    assert used == set(MUTATIONS), "every mutation ran"


@needs_c
def test_the_c_replace_one_replaces_what_the_reference_replaces() -> None:
    """cmplog.replace_one through C and through Python: the same bytes or None, for
    overlapping, missing and empty patterns and any pick (negative, past 2**63)."""
    from assay.feedback.cmplog import replace_one

    meta = random.Random(7)
    for _ in range(50_000):
        data = bytes(meta.choice(b"ab=\n") for _ in range(meta.randrange(0, 90)))
        pattern = bytes(meta.choice(b"ab=\n") for _ in range(meta.randrange(0, 4)))
        replacement = bytes(meta.choice(b"xyz") for _ in range(meta.randrange(0, 5)))
        pick = meta.choice([0, meta.randrange(64), -meta.randrange(1, 100), 2**70 + meta.randrange(99)])
        expected = replace_one(data, pattern, replacement, pick)
        assert cmutate.replace_one(data, pattern, replacement, pick) == expected, (data, pattern, replacement, pick)
    # Only the first 64 occurrences count; occurrences overlap.
    for args in (
        (b"a" * 100, b"a", b"X", 70),
        (b"aaa", b"aa", b"X", 1),
        (b"ab", b"", b"X", 2),
        (b"ab", b"abc", b"X", 0),
    ):
        assert cmutate.replace_one(*args) == replace_one(*args)
    assert cmutate.replace_one(b"a" * 100, b"a", b"X", 70) == b"a" * 6 + b"X" + b"a" * 93
    with pytest.raises(TypeError):
        cmutate.replace_one("text", b"t", b"x", 0)


def _campaign(tmp_path: Path, pure: bool) -> dict:
    out = tmp_path / ("pure" if pure else "c")
    env = {**os.environ, "ASSAY_PURE_PYTHON": "1" if pure else "0"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(EXAMPLES),
            "--fuzz-target",
            "toml_roundtrip",
            "--fuzz-cases",
            "3000",
            "--fuzz-seed",
            "5",
            "--fuzz-corpus",
            str(out / "corpus"),
            "--fuzz-artifacts",
            str(out / "artifacts"),
            "--report",
            str(out / "report.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr
    return json.loads((out / "report.json").read_text())["targets"]["toml_roundtrip"]


@needs_c
def test_a_campaign_runs_the_same_schedule_with_and_without_c(tmp_path: Path) -> None:
    """``assay fuzz`` on tomllib: the same inputs in the same order (the schedule digest
    chains every input), the same corpus."""
    pure, fast = _campaign(tmp_path, pure=True), _campaign(tmp_path, pure=False)
    assert pure["schedule_count"] == fast["schedule_count"] > 3000  # the seeds, then 3,000 generated cases
    assert fast["schedule_digest"] == pure["schedule_digest"]
    corpus = sorted(p.name for p in (tmp_path / "pure" / "corpus").rglob("*") if p.is_file())
    assert len(corpus) > 10
    assert sorted(p.name for p in (tmp_path / "c" / "corpus").rglob("*") if p.is_file()) == corpus


def test_case_stream_falls_back_to_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.gen import accelerated

    monkeypatch.setattr(accelerated, "cmutate", None)
    assert type(case_stream(1)) is CaseStream


@needs_c
def test_a_changed_tunable_turns_the_c_twin_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests switch mechanisms off through module constants; the C twin has them compiled
    in, so it must step aside rather than ignore the change."""
    from assay.gen import mutators

    assert ByteMutator(64)._c is cmutate
    monkeypatch.setattr(mutators, "LONG_SHARE", 0.0)
    assert ByteMutator(64)._c is None
    monkeypatch.undo()
    monkeypatch.setattr(mutators, "MUTATIONS", {k: v for k, v in mutators.MUTATIONS.items() if k != "nest"})
    assert ByteMutator(64)._c is None
    monkeypatch.undo()
    monkeypatch.setattr(seeds, "STREAM_BYTES", 40)
    assert type(case_stream(1)) is CaseStream
