"""Trees from bytes: total, deterministic, invertible, and shrink-friendly."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from assay.compose.operators import SHELL
from assay.compose.tree import (
    MAX_LEAVES,
    Embedded,
    Leaf,
    Node,
    Pool,
    Redir,
    Wrap,
    count_leaves,
    decode,
    encode,
    executed_leaves,
    render,
)

POOL_SIZE = 7
POOL = Pool(tuple(f"cmd{i} arg{i}" for i in range(POOL_SIZE)), tuple((4, 9) for _ in range(POOL_SIZE)))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_every_input_decodes_and_renders(data: bytes) -> None:
    case = decode(data, POOL_SIZE, SHELL)
    assert decode(data, POOL_SIZE, SHELL) == case  # deterministic
    text = render(case, POOL, SHELL)
    assert text
    for i in executed_leaves(case):
        assert 0 <= i < POOL_SIZE
    if isinstance(case, (Leaf, Node)):
        assert count_leaves(case) <= MAX_LEAVES


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_encode_inverts_decode(data: bytes) -> None:
    case = decode(data, POOL_SIZE, SHELL)
    assert decode(encode(case, POOL_SIZE, SHELL), POOL_SIZE, SHELL) == case


def test_empty_and_zero_inputs_are_the_simplest_case() -> None:
    assert decode(b"", POOL_SIZE, SHELL) == Leaf(0)
    assert decode(b"\x00" * 10, POOL_SIZE, SHELL) == Leaf(0)


def subtrees(tree):
    if isinstance(tree, Node):
        yield tree
        yield from subtrees(tree.left)
        yield from subtrees(tree.right)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120))
def test_every_subtree_is_a_contiguous_run_of_its_input(data: bytes) -> None:
    """So deleting bytes (what the shrinker does) can cut any subtree out whole."""
    tree = decode(b"\x00" + data, POOL_SIZE, SHELL)
    whole = encode(tree, POOL_SIZE, SHELL)
    for sub in subtrees(tree):
        part = encode(sub, POOL_SIZE, SHELL)[1:]
        assert part in whole
        assert decode(b"\x00" + part, POOL_SIZE, SHELL) == sub


def test_the_shrinker_ends_at_two_leaves() -> None:
    """Violating inputs of the first-segment bug shrink to a two-leaf tree (as the engine shrinks)."""
    import random

    from compose_helpers import LEAVES, first_segment

    from assay.compose import composition_target
    from assay.core.observe import OracleFailure
    from assay.core.verdict import classify
    from assay.engine.shrink import shrink
    from assay.gen.strategy import get_strategy

    target = composition_target(first_segment, LEAVES, families=())
    strategy = get_strategy(target.assay_target.strategy)

    def verdict(candidate: bytes):
        try:
            target(candidate)
        except OracleFailure as exc:
            return classify(exc, ()).signature
        return None

    def structural(d: bytes):
        return (strategy.render(v) for v in strategy.shrink_candidates(strategy.parse(d)))

    rng, shrunk = random.Random(11), 0
    while shrunk < 40:
        data = b"\x00" + rng.randbytes(rng.randint(4, 40))
        sig = verdict(data)
        if sig is None:
            continue
        shrunk += 1
        small = shrink(data, lambda c: verdict(c) == sig, max_cases=2000, structural=structural).data  # noqa: B023 - shrink runs now
        case = target.composition.case(small)
        assert isinstance(case, Node) and count_leaves(case) == 2, (sig, target.composition.render(case))
        assert len(small) == 4


def test_a_two_leaf_case_encodes_in_a_few_bytes() -> None:
    case = Node(Leaf(0), 0, Leaf(4))
    data = encode(case, POOL_SIZE, SHELL)
    assert data == bytes([0, 0, 4, 128]) and decode(data, POOL_SIZE, SHELL) == case
    assert render(case, POOL, SHELL) == "cmd0 arg0 && cmd4 arg4"


def test_family_members_round_trip_and_render() -> None:
    sh_c = [w.name for w in SHELL.wrappers].index("sh-c")
    cases = [
        Wrap(0, Leaf(3)),
        Wrap(sh_c, Node(Leaf(1), 2, Leaf(2))),
        Redir(2, 1, 5),
        Embedded(0, 1, 0, 6),
        Embedded(len(SHELL.embeds) - 1, 1, 1, 6),
    ]
    for case in cases:
        assert decode(encode(case, POOL_SIZE, SHELL), POOL_SIZE, SHELL) == case
    assert render(cases[0], POOL, SHELL) == "xargs cmd3 arg3"
    assert render(cases[1], POOL, SHELL) == "sh -c 'cmd1 arg1 || cmd2 arg2'"
    assert render(cases[2], POOL, SHELL) == f"cmd5 arg5 >> {SHELL.protected_paths[1]}"
    assert render(cases[3], POOL, SHELL) == "cmd1 $(cmd6 arg6) arg1"
    assert render(cases[4], POOL, SHELL) == 'X="$(cmd6 arg6)" cmd1 arg1'
    assert executed_leaves(cases[1]) == [1, 2] and executed_leaves(cases[3]) == [1, 6]


def test_families_can_be_turned_off() -> None:
    for head in range(256):
        case = decode(bytes([head, 1, 2, 3]), POOL_SIZE, SHELL, enabled=())
        assert isinstance(case, (Leaf, Node))
    seen = {type(decode(bytes([h, b, 2, 200]), POOL_SIZE, SHELL)).__name__ for h in range(256) for b in (1, 200)}
    assert seen == {"Leaf", "Node", "Wrap", "Redir", "Embedded"}


def test_leaf_budget_bounds_the_tree() -> None:
    data = b"\x00" + b"\x00" * 5 + b"\x80" * 5
    tree = decode(data, POOL_SIZE, SHELL, max_leaves=3)
    assert isinstance(tree, Node) and count_leaves(tree) == 3
