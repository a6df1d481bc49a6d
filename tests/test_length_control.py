"""Length control (issue 40 item 1): inputs start short and stay short where length does not pay.

Children of a parent longer than LONG_PARENT times the length limit are cut to the
limit, except the LONG_SHARE of children that may grow to max_len (how long inputs stay
reachable for super-linear bugs).  The limit rises when coverage stalls; a raise whose
room brought no new coverage doubles the wait before the next one (LEN_WAIT_MAX).
Deterministic: the case RNG is seeded, campaigns are capped by cases.
"""

from __future__ import annotations

import os
import random

import pytest

import length_control_targets as lct
from assay.engine import generate
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.engine.generate import LEN_WAIT_MAX, LengthControl
from assay.engine.seeds import case_stream
from assay.gen import mutators
from assay.gen.mutators import LONG_SHARE, ByteMutator
from assay.harness.define import make_target

LIMIT = 64
CHILDREN = 4000
#: A long entry, as a long child kept for its coverage leaves in the corpus.
LONG_PARENT_INPUT = b"SELECT a, b FROM t WHERE x = 1; " * 90


def _long_share(mutator: ByteMutator, rng_of) -> float:
    lengths = [len(mutator.mutate(LONG_PARENT_INPUT, rng_of(i), None, LIMIT)[0]) for i in range(CHILDREN)]
    return sum(n > LIMIT for n in lengths) / CHILDREN


def _rngs():
    stream = case_stream(7)  # the C twin's Random when it is built, else the Python reference
    return [lambda i: random.Random(i), stream.rng]


def test_a_long_parent_has_long_children_only_in_the_long_share():
    for rng_of in _rngs():
        share = _long_share(ByteMutator(4096), rng_of)
        assert 0 < share < 2 * LONG_SHARE, share  # long children still made, about one in 32


def test_without_the_cut_every_child_of_a_long_parent_is_long(monkeypatch):
    # Non-vacuity: a child may then be as long as its parent (the bloat on real harnesses).
    monkeypatch.setattr(mutators, "LONG_PARENT", 10**9)
    for rng_of in _rngs():
        assert _long_share(ByteMutator(4096), rng_of) > 0.9


def _stall_until_raise(lengths: LengthControl, start: int) -> int:
    """The first clock boundary (every 64 cases) past ``start`` at which ``lengths`` rises."""
    i = start - start % 64 + 64
    while not lengths.check(i):
        i += 64
    return i


def test_raises_whose_room_no_new_input_used_wait_longer_and_longer():
    lengths = LengthControl(4096, None, 0)
    first = lengths.stall()
    at = _stall_until_raise(lengths, 0)  # the first raise is free
    gaps = []
    for _ in range(LEN_WAIT_MAX + 2):
        lengths.new_coverage(at + 1, lengths.floor)  # news, but from an input the old limit allowed
        nxt = _stall_until_raise(lengths, at + 1)
        gaps.append(nxt - at)
        at = nxt
    assert lengths.wait == LEN_WAIT_MAX
    assert gaps[-1] >= (first << LEN_WAIT_MAX) > gaps[0] * 4


def test_a_raise_whose_room_paid_brings_the_wait_back():
    lengths = LengthControl(4096, 46, 0, more=(LEN_WAIT_MAX, 40, False))
    assert lengths.stall() == generate.LEN_STALL_PER_BIT * 6 << LEN_WAIT_MAX
    lengths.new_coverage(10, 40)  # news from an input the old limit allowed: no change
    assert lengths.wait == LEN_WAIT_MAX
    lengths.new_coverage(20, 44)  # an input longer than the limit before the raise
    assert lengths.wait == 0
    at = _stall_until_raise(lengths, 20)
    assert at - 20 <= generate.LEN_STALL_PER_BIT * 6 + 64 and lengths.wait == 0


def test_the_state_carries_over_to_a_restarted_worker():
    lengths = LengthControl(4096, None, 0)
    at = _stall_until_raise(lengths, 0)
    at = _stall_until_raise(lengths, at)
    again = LengthControl(4096, *lengths.state()[:2], 0, lengths.state()[2])
    assert again.state() == lengths.state() and again.stall() == lengths.stall()


def _late_lengths(tmp_path, cases: int = 8000, seed: int = 2) -> list[int]:
    """The lengths of the last 3,000 inputs a capped campaign on ``short_switch`` ran."""
    log = tmp_path / "lengths.bin"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    lct.LOG[:] = [fd]
    try:
        options = CampaignOptions(
            corpus_root=str(tmp_path / "corpus"),
            artifact_root=str(tmp_path / "artifacts"),
            max_cases=cases,
            seed=seed,
            shrink_cases=64,
        )
        run_campaign([make_target(lct.short_switch)], options)
    finally:
        lct.LOG.clear()
        os.close(fd)
    raw = log.read_bytes()
    return [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)][-3000:]


def _p95(lengths: list[int]) -> int:
    return sorted(lengths)[int(0.95 * len(lengths))]


@pytest.mark.campaign
def test_where_length_never_pays_the_inputs_stay_short(tmp_path):
    # The limit still rises on each stall, ever more slowly: 32 bytes to about 60 in 8,000 cases.
    assert _p95(_late_lengths(tmp_path)) <= 64


@pytest.mark.campaign
def test_without_the_longer_waits_the_inputs_grow_on_every_stall(tmp_path, monkeypatch):
    # Non-vacuity: libFuzzer's rule (a raise every stall) takes the limit to about 150.
    monkeypatch.setattr(generate, "LEN_WAIT_MAX", 0)
    assert _p95(_late_lengths(tmp_path)) > 80
