"""Comparison feedback: twins record operands; input-to-state pairs."""

from __future__ import annotations

import re

import pytest

import feedback_subject as subject
from assay.feedback.cmplog import CmpLog, guards_of, input_to_state, repair, replace_one
from assay.feedback.scope import Scope


def _log():
    log = CmpLog(Scope([subject.__file__]).contains)
    log.attach()
    return log


def test_twins_record_and_originals_return():
    log = _log()
    assert log.swaps
    original = subject.branchy.__code__
    records, _ = log.record(lambda: subject.branchy(3))
    assert (3, 5) in records
    assert subject.branchy.__code__ is original, "originals are swapped back"
    assert log.record(lambda: None) == ([], [])


def test_twin_behaves_like_the_original():
    log = _log()
    out = []
    log.record(lambda: out.extend([subject.branchy(9), subject.looped(10), subject.gate(1)]))
    assert out == [subject.branchy(9), subject.looped(10), subject.gate(1)]


def test_character_class_check_gives_its_field_made_valid():
    log = _log()
    records, _ = log.record(lambda: subject.hex_escape("\\uZ1?x!"))
    assert ("Z1?x", "0100") in records  # each character outside the class becomes the least one in it
    assert subject.hex_escape("\\u0100") == "\u0100"
    pairs, _ = input_to_state(b'a = "\\uZ1?x"', records)
    assert (b"Z1?x", b"0100") in pairs
    records, _ = log.record(lambda: subject.hex_escape("\\u00e9"))
    assert not [r for r in records if r[0] == "00e9"], "a check that held records nothing"


def test_input_to_state_pairs_and_tokens():
    records = [(ord("h"), 0x46), (b"hell", b"\x7fELF"), (5, 48879), (None, "PROPFIND")]
    pairs, tokens = input_to_state(b"hello,5", records)
    assert (b"h", b"F") in pairs
    assert (b"hell", b"\x7fELF") in pairs
    assert (b"5", b"48879") in pairs
    assert b"PROPFIND" in tokens


def test_an_int_too_large_for_a_float_compared_with_a_float_gives_no_pair():
    """multipart 2.0.1: a 400-digit ``Content-Length`` compared with ``max_segment_size = float("inf")``."""
    huge = int("9" * 400)
    pairs, _ = input_to_state(b"Content-Length: " + b"9" * 400, [(huge, float("inf")), (1.5, huge)])
    assert pairs == []


def test_replace_one_picks_an_occurrence():
    assert replace_one(b"xaxa", b"a", b"B", 0) == b"xBxa"
    assert replace_one(b"xaxa", b"a", b"B", 1) == b"xaxB"
    assert replace_one(b"xx", b"a", b"B", 0) is None


def _frame(payload: bytes) -> bytes:
    import zlib

    return zlib.crc32(payload).to_bytes(4, "big") + payload


def test_guards_are_held_equalities_of_computed_values_found_in_the_input():
    log = _log()
    good = _frame(b"hello world")
    _, guard_records = log.record(lambda: subject.framed(good))
    guards = guards_of(good, guard_records)
    assert [(kind, at) for _site, kind, at in guards] == [("be4", 0)]
    # Literal comparisons (``x == 1``) are never guards, and nothing held for a bad frame.
    _, literal = log.record(lambda: subject.gate(1))
    assert literal == []
    bad = b"\0\0\0\0" + b"hello world"
    assert guards_of(bad, log.record(lambda: subject.framed(bad))[1]) == []


def test_a_run_that_keeps_only_guards_or_values_records_those_alone():
    log = _log()
    good = _frame(b"hello world")

    def both():
        subject.framed(good)
        subject.gate(2)  # the pair (2, 1)

    pairs, guards = log.record(both)
    values = log.last_values
    assert pairs and guards and values
    assert log.record(both, keep="guards") == ([], guards)
    assert log.last_values == []
    assert log.record(both, keep="values") == ([], [])
    assert log.last_values == values


def test_a_run_past_max_compared_is_cut_short_through_the_targets_except_and_unjudged():
    from assay.engine import execute
    from assay.feedback import cmplog
    from assay.harness.define import make_target

    log = _log()
    finished = []

    def target(data: bytes) -> None:
        try:
            subject.looped(2 * cmplog.MAX_COMPARED)  # one comparison per iteration
        except Exception:  # noqa: BLE001 - a target that swallows its own errors
            finished.append("swallowed")
        finished.append("ran to the end")

    known = dict(execute._KNOWN)
    live = subject.looped.__code__
    records, _ = log.record(lambda: execute.run(make_target(target, name="cut"), b""))
    assert finished == [], "the cut ends the run; the target's except Exception does not catch it"
    assert execute._KNOWN == known, "the cut is not judged as the target's failure"
    assert len(records) == cmplog.MAX_RECORDS  # what came before the cut is kept
    assert subject.looped.__code__ is live and subject.looped(10) == 145
    records, _ = log.record(lambda: subject.gate(2))
    assert (2, 1) in records, "the next recorded run starts its count afresh"
    log.record(lambda: target(b""))
    assert finished == [], "also outside the runner"


@pytest.mark.parametrize("keep", ["all", "values", "guards"])
def test_the_c_recorder_records_and_evaluates_as_the_python_one_does(monkeypatch, keep):
    from assay.feedback import cmplog
    from assay.gen.accelerated import cmutate

    if cmutate is None:
        pytest.skip("the C twin is not built (no compiler at install)")
    log = _log()

    def calls() -> list:
        out = [
            subject.branchy(9),
            subject.looped(12),
            subject.gate(1),
            subject.chained(5),
            subject.chained(70000),
            subject.hex_escape("\\u00e9"),
            subject.framed(_frame(b"hi")),
            subject.either(b"\x01\x02\x00\x04"),
            subject.counted(b"ab,c"),
            subject.scalar_escape("0041"),
        ]
        out += [subject.classified(t, 3) for t in ("GET", "a", "zz", "zzzz", "")]
        out += [subject.membership(t) for t in ("beta", "zz", 7, b"b", 2.5)]
        try:
            subject.classified("zz", "x")  # the ordering raises TypeError inside the twin
        except TypeError as exc:
            out.append(str(exc))
        return out

    seen = {}
    for native in (False, True, False):
        log.native = native
        subject.CALLS.clear()
        got: list = []
        records, guards = log.record(lambda: got.append(calls()), keep=keep)  # noqa: B023 - record calls it now
        seen[native] = (got, records, guards, log.last_values, list(subject.CALLS))
    assert seen[True] == seen[False]
    got, records, guards, values, _calls = seen[True]
    assert got == [calls()]  # both evaluate like the original code
    assert bool(records) == (keep == "all") and bool(guards) == (keep != "values")
    assert bool(values) == (keep != "guards")
    if keep == "all":  # every kind of record: pairs, an ordering's flips, a container's members
        assert (9, 5) in records and (65, 55296) in records and ("zz", "PUT") in records and (None, "zz") in records
        assert ("zz", "alpha") in records and ("zz", "k2") in records and (7, 2) in records
        assert not any(b == 4999 for _a, b in records), "a container past 4,096 is not recorded"
        monkeypatch.setattr(cmplog, "MAX_RECORDS", 7)  # full lists: the same first seven either way
        full = []
        for native in (False, True):
            log.native = native
            full.append(log.record(calls)[0])
        assert full[0] == full[1] and len(full[0]) == 7
    if keep != "guards":
        assert any(v[0] >= 0 for v in values) and len(values) > 20

    monkeypatch.setattr(cmplog, "MAX_COMPARED", 10)
    for native in (False, True):
        log.native = native
        finished = []
        log.record(lambda: finished.append(subject.looped(100)), keep=keep)  # noqa: B023 - record calls it now
        if keep != "guards":
            assert finished == [] and [v[1] for v in log.last_values] == list(range(10)), "cut after 10 alike"


def test_repair_restores_a_broken_checksum():
    log = _log()
    good = _frame(b"hello world")
    guards = guards_of(good, log.record(lambda: subject.framed(good))[1])
    child = good[:4] + b"HELLO world!"  # a mutated payload with the parent's stale checksum
    assert subject.framed(child) == "bad"
    fixed = repair(child, log.record(lambda: subject.framed(child))[1], guards)
    assert fixed == _frame(b"HELLO world!") and subject.framed(fixed) == "ok"
    # A child that still holds its guards needs no repair.
    assert repair(good, log.record(lambda: subject.framed(good))[1], guards) is None


@pytest.mark.parametrize(
    ("subject_fn", "good", "child", "fixed"),
    [
        ("framed", _frame(b"hello world"), _frame(b"hello world")[:4] + b"HELLO world!", _frame(b"HELLO world!")),
        ("paired", b"abcdabcd", b"abcdabXd", b"abXdabXd"),  # the guard sits in a generator nested in the function
    ],
    ids=["checksum", "nested"],
)
def test_a_repair_run_gives_twins_only_to_the_functions_of_its_guards(subject_fn, good, child, fixed):
    """A repair reads its guards' sites alone: the functions holding them get their twins,
    and no other (a big library's every function swapped in and out made a repair of a
    cheap child cost eight plain runs); the repair is the same as with every twin."""
    log = _log()
    fn = getattr(subject, subject_fn)
    guards = guards_of(good, log.record(lambda: fn(good))[1])
    assert guards
    sites = [site for site, _kind, _at in guards]
    originals = {name: getattr(subject, name).__code__ for name in (subject_fn, "branchy", "looped")}
    live: dict[str, bool] = {}

    def run():
        live.update({name: getattr(subject, name).__code__ is code for name, code in originals.items()})
        return fn(child)

    narrow = log.record(run, keep="guards", sites=sites)
    assert live == {subject_fn: False, "branchy": True, "looped": True}
    full = log.record(run, keep="guards")
    assert live == {subject_fn: False, "branchy": False, "looped": False}, "without sites every function has its twin"
    assert repair(child, narrow[1], guards) == repair(child, full[1], guards) == fixed
    assert fn(fixed) == "ok" and all(getattr(subject, n).__code__ is c for n, c in originals.items())


def test_a_chained_comparison_records_each_link_and_evaluates_like_the_original():
    log = _log()
    for x in (-1, 3, 12):
        subject.CALLS.clear()
        want = subject.chained(x)
        order = list(subject.CALLS)
        subject.CALLS.clear()
        got = []
        records, _ = log.record(lambda: got.append(subject.chained(x)))  # noqa: B023 - record calls it now
        # The same value, and each operand evaluated once, in order, only when reached.
        assert got == [want] and subject.CALLS == order
        assert (0, x) in records
        assert ((x, 10) in records) == (x > 0)  # the second link runs only when the first held
    assert order == ["a", "b", "c"]  # x = 12: 12 < 10 failed, so the right side never ran


def test_an_ordering_records_the_value_that_flips_it():
    """``0 <= cp <= 0xD7FF`` holding for ``\\u0041``: the pair that writes 0xD800 in the
    field's own form (hex, four digits) is what reaches the error branch."""
    log = _log()
    records, _ = log.record(lambda: subject.scalar_escape("0041"))
    assert (65, 55295) in records and (65, 55296) in records
    pairs, _ = input_to_state(b'a = "\\u0041"', records)
    assert (b"0041", b"d800") in pairs
    flipped = replace_one(b"0041", b"0041", b"d800", 0).decode()
    try:
        subject.scalar_escape(flipped)
    except ValueError:
        pass
    else:
        raise AssertionError("0xD800 is a surrogate: the other branch")
    # An all-digit run of fewer than four digits is read as decimal only.
    pairs, _ = input_to_state(b"x = 41", [(65, 55296)])
    assert not [p for p in pairs if p[0] == b"41"]


def test_one_character_operands_have_no_hex_form():
    """``c == "t"`` for the ``2`` of ``07:32`` must not pair the number 32 (hex of "2")
    with 74 (hex of "t"): a parser's per-character checks would fill the entry's
    pairs with such chance matches.  A longer operand keeps its hex form."""
    pairs, _ = input_to_state(b"when = 07:32:00", [("2", "t")])
    assert (b"32", b"74") not in pairs
    pairs, _ = input_to_state(b"key = 6869", [("hi", "ok")])
    assert (b"6869", b"6f6b") in pairs


def test_a_recorded_run_sees_the_comparisons_a_memo_cache_would_hide():
    log = _log()
    assert subject.offset("-05") == 5  # both caches now hold "-"
    before = (subject.memo_sign, subject.Signs.__dict__["sign"])
    hits = (subject.memo_sign.cache_info(), subject.Signs.__dict__["sign"].cache_info())
    records, _ = log.record(lambda: subject.offset("-05"))
    assert records.count(("-", "+")) == 2, "the function and the method, each run, not served from the cache"
    # The caches are bound again, untouched: the recorded run went around them.
    assert (subject.memo_sign, subject.Signs.__dict__["sign"]) == before
    assert (subject.memo_sign.cache_info(), subject.Signs.__dict__["sign"].cache_info()) == hits
    assert subject.offset("-05") == 5 and subject.memo_sign.cache_info().hits == hits[0].hits + 1


def test_a_regex_match_records_other_strings_the_expression_accepts():
    from assay.feedback import cmplog

    log = _log()
    records, _ = log.record(lambda: subject.stamp("x 07:32-08", 2))
    theirs = [(a, b) for a, b in records if a == "07:32-08"]
    assert len(theirs) == cmplog.REGEX_PAIRS, "what it matched, against samples drawn from it (a VERBOSE pattern)"
    assert all(subject.STAMP.fullmatch(b) and b != a for a, b in theirs)
    # A failed match: the text where it was tried, as long as each sample, at its position.
    records, _ = log.record(lambda: subject.stamp("ab:cd?"))
    tried = [(a, b) for a, b in records if subject.STAMP.fullmatch(b)]
    assert tried and all(a == "ab:cd?"[: len(b)] for a, b in tried)
    # ``re.fullmatch(pattern, text)`` too, with the module's pattern compiled.
    assert [b for a, b in records if a == "ab:cd?"[: len(b)] and re.fullmatch(r"[0-9a-f]{4}", b)]
    # One expression's records are bounded per run however often it matches.
    many = " ".join(f"{h:02d}:00" for h in range(20))
    records, _ = log.record(lambda: [subject.stamp(many, 6 * k) for k in range(20)])
    assert sum(1 for _a, b in records if subject.STAMP.fullmatch(b)) == cmplog.REGEX_RECORDS


def test_a_regex_samples_replacements_come_after_the_comparisons_with_a_budget_of_their_own():
    from assay.feedback.cmplog import PAIR_CANDIDATES, Sample

    data = b"key = 07:32 " + bytes(range(97, 123))
    records = [Sample(("07:32", "23:00Z")), ("key", "port")]
    pairs, _ = input_to_state(data, records)
    assert pairs[0] == (b"key", b"port"), "a comparison's replacement first, though recorded later"
    guess = pairs.index((b"07:32", b"23:00Z"))
    assert guess > 0 and type(pairs[guess]) is Sample and type(pairs[0]) is not Sample
    # A run whose one-byte comparisons fill every candidate (a parser's character
    # classes) still keeps the sample, ahead of them.
    flood = [(chr(97 + i % 26), chr(65 + i // 26)) for i in range(26 * 12)]
    assert len(flood) > PAIR_CANDIDATES
    pairs, _ = input_to_state(data, [*flood, Sample(("07:32", "23:00Z"))])
    assert pairs[0] == (b"07:32", b"23:00Z") and all(len(x) == 1 for x, _y in pairs[1:])


def test_a_record_limited_to_the_functions_that_ran_is_the_full_record_and_swaps_the_rest_never():
    log = _log()
    full = log.record(lambda: (subject.branchy(3), subject.gate(1)))
    ran = {id(subject.branchy.__code__), id(subject.gate.__code__)}
    assert log.record(lambda: (subject.branchy(3), subject.gate(1)), ran=ran) == full
    memo = {cache.__wrapped__ for _space, _name, cache in log.caches}
    swapped = set(log._swapped(ran)[0])
    assert swapped - memo == {subject.branchy, subject.gate}, "of the uncached functions, the two that ran get twins"
    assert len(swapped) < len(log.swaps)
    # Non-vacuity: a function left out of ``ran`` runs its live code, which records nothing.
    assert log.record(lambda: subject.branchy(3), ran={id(subject.gate.__code__)}) == ([], [])
    ran.add(id(subject.looped.__code__))  # ``ran`` grew: the choice is made again
    assert log.record(lambda: subject.looped(10), ran=ran)[0]


def _one() -> int:
    return 1


def _two() -> int:
    return 2


def _calls(fn, n: int = 64) -> list[int]:
    return [fn() for _ in range(n)]  # a hot call site: CPython specialises it for fn's version


@pytest.mark.parametrize("native", [True, False])
def test_code_swaps_take_effect_at_a_specialised_call_site_and_are_all_or_nothing(native):
    from assay.feedback import cmplog
    from assay.gen.accelerated import cmutate

    if native and getattr(cmutate, "swap_codes", None) is None:
        pytest.skip("assay.gen._cmutate is not built")
    swap = cmutate.swap_codes if native else cmplog._python_swap_codes
    one, two = _one.__code__, _two.__code__
    assert set(_calls(_one)) == {1}
    try:
        assert swap([_one], [two]) == [one]
        assert set(_calls(_one)) == {2}, "the specialised call runs the new code"
        assert swap([_one], [one]) == [two]
        assert set(_calls(_one)) == {1}

        def closure():
            return one

        if native:  # the C swap checks every pair before it returns: none or all are swapped
            with pytest.raises(ValueError, match="free vars"):
                swap([_one, closure], [two, two])
            assert _one.__code__ is one
    finally:
        _one.__code__ = one


def test_a_record_limited_to_what_ran_still_gives_memo_cached_functions_their_twins():
    log = _log()
    assert subject.offset("-05") == 5  # the caches hold "-": their functions need not run again
    ran = {id(subject.offset.__code__)}  # as if the cached functions had only run before the feedback started
    records, _ = log.record(lambda: subject.offset("-05"), ran=ran)
    assert records.count(("-", "+")) == 2, "the recorded run goes around the caches, into the twins"
