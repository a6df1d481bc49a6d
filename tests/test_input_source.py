"""InputSource: the input-to-state stage and cost-only parents."""

from __future__ import annotations

import random

from assay.engine.generate import STAGE_EVERY, InputSource


def _source() -> InputSource:
    source = InputSource(max_len=64, dictionary=[])
    source.add(b"GET /index HTTP/1.0", pairs=[(b"GET", b"PUT"), (b"1.0", b"1.1"), (b"zzz", b"never")])
    return source


def test_each_new_pair_is_tried_once_in_order_one_case_in_two():
    source, staged = _source(), []
    for i in range(12):
        data, ops = source.next(random.Random(i))
        if ops == ["cmp-stage"]:
            staged.append((source.cases, data))
    # every STAGE_EVERY-th case while pairs wait; a pair whose pattern is not in the entry is skipped
    assert [case % STAGE_EVERY for case, _ in staged] == [0, 0]
    assert [data for _, data in staged] == [b"PUT /index HTTP/1.0", b"GET /index HTTP/1.1"]


def test_a_pair_dropped_after_a_known_failure_is_not_staged_again():
    source = _source()
    source.cmp_pairs[0].remove((b"GET", b"PUT"))  # what InputSource.failed does
    got = [source.next(random.Random(i)) for i in range(6)]
    assert [d for d, ops in got if ops == ["cmp-stage"]] == [b"GET /index HTTP/1.1"]


def test_cost_only_entries_are_not_staged_and_parent_only_growing_cases():
    source = InputSource(max_len=4096, dictionary=[])
    source.add(b"seed")
    source.add(b"x" * 4000, pairs=[(b"xx", b"yy")], quiet=True)
    assert not source.staged
    picks = {False: 0, True: 0}
    for grow in (False, True):
        for i in range(400):
            source.next(random.Random(i), grow=grow)
            picks[grow] += source.last_parent == 1
    # drawn again once when not growing: about a quarter of the growing cases' share
    assert picks[False] < picks[True] / 2, picks


def test_an_entry_of_the_cost_climb_stays_cost_only_beside_value_profile_news():
    """The long inputs of the cost climb meet new operand values on the way (urllib
    seed 1: a 3.6 KB entry kept as an ordinary parent made its campaign 3x slower);
    value-profile news alone, or cost beside new coverage, is an ordinary entry."""
    from assay.engine.worker import _cost_only

    cost, vp, edge = ("f", "cost-lines", "12"), ("vp", 3, "0"), (7, 10, 14)
    assert _cost_only([cost]) and _cost_only([cost, vp])
    assert not _cost_only([vp])  # a comparison replacement that advanced a state machine
    assert not _cost_only([cost, edge])
    assert not _cost_only([])


def test_an_entrys_comparisons_are_staged_before_the_guesses_still_waiting():
    from assay.feedback.cmplog import Sample

    def stage_order(source: InputSource) -> list[bytes]:
        out = []
        for i in range(40):
            data, ops = source.next(random.Random(i))
            if ops == ["cmp-stage"]:
                out.append(data)
        return out

    source = InputSource(max_len=64, dictionary=[])
    source.add(b"at 07:32 ok", pairs=[(b"at", b"on"), Sample((b"07:32", b"23:00Z"))])
    source.add(b"by 08:15 ok", pairs=[Sample((b"08:15", b"00:00")), (b"ok", b"no")])
    assert stage_order(source) == [b"on 07:32 ok", b"by 08:15 no", b"at 23:00Z ok", b"by 00:00 ok"]
    # A comparison arriving while guesses wait (the one queued before them already tried) goes before them.
    source.add(b"at 07:32 ok", pairs=[(b"at", b"on"), Sample((b"07:32", b"23:00Z"))])
    source.add(b"by 08:15 ok", pairs=[Sample((b"08:15", b"00:00")), Sample((b"by", b"up"))])
    tried: list[bytes] = []
    while not tried:
        data, ops = source.next(random.Random(0))
        if ops == ["cmp-stage"]:
            tried.append(data)
    source.add(b"to 09:00 ok", pairs=[(b"to", b"in")])
    assert tried + stage_order(source) == [
        b"on 07:32 ok",
        b"in 09:00 ok",
        b"at 23:00Z ok",
        b"by 00:00 ok",
        b"up 08:15 ok",
    ]
