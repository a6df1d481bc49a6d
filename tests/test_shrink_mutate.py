"""The byte mutators and the shrinker, as pure functions."""

from __future__ import annotations

import random

from assay.engine.seeds import case_rng, target_seed
from assay.engine.shrink import shrink
from assay.gen.mutators import MUTATIONS, UNICODE_CHARS, ByteMutator, tokens_from


def test_every_output_is_clamped_to_max_len():
    m = ByteMutator(16, [b"A" * 40])
    rng = random.Random(0)
    data = b"x" * 16
    for _ in range(3000):
        out, ops = m.mutate(data, rng, b"y" * 200)
        assert len(out) <= 16
        assert ops and all(op in MUTATIONS for op in ops)


def test_same_case_rng_same_mutation():
    m = ByteMutator(64, [b"GET", b"HTTP/1.1"])
    seed = target_seed(7, "t")
    a = [m.mutate(b"hello world", case_rng(seed, i), b"other")[0] for i in range(200)]
    b = [m.mutate(b"hello world", case_rng(seed, i), b"other")[0] for i in range(200)]
    assert a == b
    c = [m.mutate(b"hello world", case_rng(target_seed(8, "t"), i), b"other")[0] for i in range(200)]
    assert a != c


def _applied(name: str, data: bytes, times: int, seed: int, max_len: int) -> list[bytes]:
    """One mutation applied ``times`` times to ``data``, each on a fresh copy."""
    m, mutation, rng = ByteMutator(max_len, []), MUTATIONS[name], random.Random(seed)
    return [bytes(mutation(m, bytearray(data), rng, b"")) for _ in range(times)]


def test_repeat_chunk_pumps_and_sometimes_cuts_the_suffix():
    # prefix + pump with the closing part gone is what catastrophic backtracking needs.
    data = b"a='\\x';"
    outs = _applied("repeat-chunk", data, 400, seed=5, max_len=4096)
    cut = [o for o in outs if not o.endswith(b";")]
    kept = [o for o in outs if o.endswith(b";") and len(o) > len(data)]
    assert 100 < len(cut) < 300 and kept, "about half the pumps drop the suffix"
    assert any(o.startswith(b"a='") and set(o[3:]) == {0x5C} and len(o) > 20 for o in cut), "a backslash run to the end"


def test_unicode_char_writes_whole_characters_in_place_or_between():
    data = b"http://host/"
    outs = _applied("unicode-char", data, 600, seed=3, max_len=64)
    for o in outs:
        o.decode("utf-8")  # a whole character every time: still valid UTF-8
    added = [next(ch for ch in UNICODE_CHARS if ch in o) for o in outs]
    assert set(added) == set(UNICODE_CHARS), "every character is drawn"
    inserted = [o for o, ch in zip(outs, added) if o.replace(ch, b"", 1) == data]
    assert 200 < len(inserted) < 400, "about half insert, the rest write over one byte"
    assert _applied("unicode-char", b"", 1, seed=3, max_len=64)[0] in UNICODE_CHARS, "applies to an empty input"


def test_dictionary_tokens_are_used():
    m = ByteMutator(64, [b"MAGICTOKEN"])
    rng = random.Random(1)
    hits = sum(b"MAGICTOKEN" in m.mutate(b"abc", rng)[0] for _ in range(500))
    assert hits > 20


def test_tokens_from_seeds():
    toks = tokens_from([b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"])
    assert b"GET" in toks and b"HTTP" in toks and b"\r\n" in toks and b"Host" in toks


def test_case_rng_independent_of_order():
    seed = target_seed(1, "x")
    forward = [case_rng(seed, i).random() for i in range(10)]
    backward = [case_rng(seed, i).random() for i in reversed(range(10))]
    assert forward == list(reversed(backward))


def test_case_rng_draws_are_uniform_and_in_range():
    # The per-case generator replaces the Twister's bits with a hash pool: every
    # random.Random method must still stay in range and be close to uniform.
    import collections

    seed = target_seed(3, "u")
    counts = collections.Counter(case_rng(seed, i).randrange(6) for i in range(6000))
    assert set(counts) == set(range(6)) and all(800 < n < 1200 for n in counts.values())
    rng = case_rng(seed, 0)
    floats = [rng.random() for _ in range(2000)]
    assert all(0.0 <= f < 1.0 for f in floats) and 0.45 < sum(floats) / len(floats) < 0.55
    assert all(3 <= rng.randint(3, 5) <= 5 for _ in range(200))
    assert all(rng.randrange(10, 20, 5) in (10, 15) for _ in range(100))  # a step takes the general path
    assert len(rng.randbytes(300)) == 300 and rng.getrandbits(700) < 1 << 700
    items = list(range(50))
    rng.shuffle(items)
    assert sorted(items) == list(range(50)) and items != list(range(50))
    assert len(set(rng.sample(range(100), 30))) == 30
    try:
        rng.randrange(0)
    except ValueError:
        pass
    else:
        raise AssertionError("an empty range must raise")


def test_shrink_to_the_essential_bytes():
    data = b"aaaaBUGbbbbbbbbbbbbbbbbbbbbbbbbb"
    result = shrink(data, lambda d: b"BUG" in d)
    assert result.data == b"BUG"


def test_shrink_simplifies_bytes():
    result = shrink(b"zzzz9", lambda d: len(d) >= 3)
    assert result.data == b"\x00\x00\x00"


def test_shrink_is_bounded():
    calls = []

    def pred(d):
        calls.append(d)
        return len(d) > 10

    result = shrink(bytes(range(256)) * 4, pred, max_cases=10)
    assert len(calls) == 10 and result.exhausted


def test_shrink_keeps_only_failing_candidates():
    result = shrink(b"xxAxxBxx", lambda d: b"A" in d and b"B" in d)
    assert b"A" in result.data and b"B" in result.data and len(result.data) == 2


def test_shrink_uses_structural_candidates_first():
    seen = []

    def structural(d):
        seen.append(d)
        yield d[: len(d) // 2]

    result = shrink(b"B" * 64, lambda d: d.startswith(b"B"), structural=structural)
    assert seen and result.data == b"B"


def test_ascii_int_reads_a_run_longer_than_int_allows_as_several_numbers():
    # int() refuses more than 4,300 digits: a 5,000-digit run used to raise out of the
    # mutation (and so out of the worker); it is read as runs of MAX_DIGITS now.
    from assay.gen.mutators import MAX_DIGITS

    ascii_int = MUTATIONS["ascii-int"]
    rng = random.Random(3)
    for _ in range(50):
        out = ascii_int(ByteMutator(8192), bytearray(b"x" + b"9" * 5000), rng, None)
        assert out is not None and out[:1] == b"x"
        assert len(out) >= 5000 - MAX_DIGITS
