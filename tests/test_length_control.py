"""Length control (issue 40 item 1): a long corpus entry does not make every child long.

Children of a parent longer than LONG_PARENT times the length limit are cut to the
limit, except the LONG_SHARE of children that may grow to max_len (how long inputs stay
reachable for super-linear bugs).  Deterministic: the case RNG is seeded.
"""

from __future__ import annotations

import random

from assay.engine.seeds import case_stream
from assay.gen import mutators
from assay.gen.mutators import LONG_SHARE, ByteMutator

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
