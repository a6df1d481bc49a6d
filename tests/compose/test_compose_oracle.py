"""The oracle on single inputs: F, R, the family, levels, witnesses and signatures."""

from __future__ import annotations

import random

import pytest
from compose_helpers import (
    DENIED_LEAVES,
    LEAVES,
    deny_and,
    first_segment,
    is_allowed_level,
    leveled,
    leveled_first_only,
    reference,
    substitution_blind,
)

from assay.compose import composition_target
from assay.compose.tree import Embedded, Leaf, Node, Redir, Wrap
from assay.core.errors import ConfigError
from assay.core.observe import OracleFailure
from assay.core.target import Target
from assay.core.verdict import classify

_TEXTS = composition_target(reference, LEAVES).composition.pool.view.texts  # shortest first
A0, A1, A2 = (_TEXTS.index(t) for t in ("ls -la", "cat README.md", "echo hello"))  # allowed leaves
D0 = _TEXTS.index("rm -rf /")  # denied


def op(target, name: str) -> int:
    return [o.name for o in target.composition.table.binary].index(name)


def failure(target, case) -> OracleFailure | None:
    data = target.composition.encode(case)
    try:
        target(data)
    except OracleFailure as exc:
        return exc
    return None


def signature(exc: OracleFailure) -> str:
    return classify(exc, ()).signature


def test_target_is_an_ordinary_assay_target() -> None:
    t = composition_target(reference, LEAVES, name="compose_ref")
    assert isinstance(t.assay_target, Target) and t.assay_target.name == "compose_ref"
    assert t.assay_target.seeds and t.assay_target.extra["compose"]["pool"]["admitted"] == len(LEAVES)
    assert t.assay_target.sources and t.assay_target.sources[0].endswith("compose_helpers.py")


def test_a_correct_classifier_never_fails() -> None:
    t = composition_target(reference, LEAVES)
    rng = random.Random(5)
    for _ in range(3000):
        t(rng.randbytes(rng.randint(0, 48)))
    for seed in t.assay_target.seeds:
        t(seed)


def test_first_segment_classifier_fails_open_with_a_stable_signature() -> None:
    t = composition_target(first_segment, LEAVES)
    exc = failure(t, Node(Leaf(A0), op(t, "and"), Leaf(D0)))
    assert exc is not None and exc.oracle == "fail-open"
    assert signature(exc) == "fail-open:and/rm"
    assert exc.data["command"] == "ls -la && rm -rf /"
    assert exc.data["culprit"]["text"] == "rm -rf /"
    assert exc.data["case"] == {
        "op": "and",
        "left": {"leaf": A0, "text": "ls -la"},
        "right": {"leaf": D0, "text": "rm -rf /"},
    }
    assert {e["text"]: e["verdict"]["allowed"] for e in exc.data["leaves"]} == {"ls -la": True, "rm -rf /": False}
    # the same bug through another pair of leaves is the same finding
    other = failure(t, Node(Leaf(A2), op(t, "and"), Leaf(D0)))
    assert other is not None and signature(other) == signature(exc)


def test_the_witness_is_the_smallest_violating_subtree() -> None:
    t = composition_target(first_segment, LEAVES)
    seq, and_ = op(t, "seq"), op(t, "and")
    big = Node(Node(Leaf(A0), seq, Leaf(A1)), and_, Node(Leaf(A2), seq, Leaf(D0)))
    exc = failure(t, big)
    assert exc is not None
    assert exc.data["witness"] == "echo hello; rm -rf /"
    assert signature(exc) == "fail-open:seq/rm"
    assert exc.data["command"] == "ls -la; cat README.md && echo hello; rm -rf /"


def test_r_fires_on_over_denial_of_sequencing_only() -> None:
    t = composition_target(deny_and, LEAVES)
    exc = failure(t, Node(Leaf(A0), op(t, "and"), Leaf(A1)))
    assert exc is not None and exc.oracle == "over-denial" and signature(exc) == "over-denial:and"
    assert exc.data["culprit"]["parts"] == ["ls -la", "cat README.md"]
    # a pipe or a substitution may correctly deny a whole of allowed parts: no claim
    assert failure(t, Node(Node(Leaf(A0), op(t, "and"), Leaf(A1)), op(t, "pipe"), Leaf(A2))) is None


def test_r_respects_the_bound_and_the_configured_families() -> None:
    and_ = Node(Leaf(A0), 0, Leaf(A1))
    five = Node(Node(Node(Leaf(A0), 4, Leaf(A1)), 4, Node(Leaf(A2), 4, Leaf(A0))), 4, Node(Leaf(A1), 0, Leaf(A2)))
    bounded = composition_target(deny_and, LEAVES, bound=4)
    assert failure(bounded, five) is None  # 6 leaves > bound 4
    assert failure(composition_target(deny_and, LEAVES, bound=6), five) is not None
    no_and = composition_target(deny_and, LEAVES, r_families={"seq", "or"})
    assert failure(no_and, and_) is None
    with pytest.raises(ConfigError, match="not in table"):
        composition_target(reference, LEAVES, r_families={"nonsense"})


def test_substitution_blind_classifier_trips_the_substitution_checks() -> None:
    t = composition_target(substitution_blind, LEAVES)
    exc = failure(t, Node(Leaf(A0), op(t, "subst"), Leaf(D0)))
    assert exc is not None and signature(exc) == "fail-open:subst/rm"
    embed = [e.name for e in t.composition.table.embeds].index("arg-subst")
    exc = failure(t, Embedded(embed, A1, 0, D0))
    assert exc is not None and signature(exc) == "fail-open:embed-arg-subst/rm"
    assert exc.data["command"] == "cat $(rm -rf /) README.md"
    # backticks are still seen by this classifier
    assert failure(t, Node(Leaf(A0), op(t, "backtick"), Leaf(D0))) is None


def test_wrapper_and_redirect_members() -> None:
    def ignores_wrapped(cmd: str) -> bool:
        return cmd.startswith(("xargs ", "sudo ")) or reference(cmd)

    t = composition_target(ignores_wrapped, LEAVES)
    names = [w.name for w in t.composition.table.wrappers]
    exc = failure(t, Wrap(names.index("xargs"), Leaf(D0)))
    assert exc is not None and signature(exc) == "fail-open:wrap-xargs/rm"
    assert exc.data["group"] == {"family": "wrapper:xargs", "leaf": "rm -rf /"}
    sudo_user = failure(t, Wrap(names.index("sudo-user"), Leaf(D0)))
    assert sudo_user is None or sudo_user.data["group"]["family"] == "wrapper:sudo"
    assert failure(t, Wrap(names.index("env"), Leaf(D0))) is None
    assert failure(t, Wrap(names.index("xargs"), Leaf(A0))) is None  # wrapping an allowed command: no claim

    def no_redirect_check(cmd: str) -> bool:
        return reference(cmd.replace(">", " "))

    t = composition_target(no_redirect_check, LEAVES, protected_paths=["/etc/passwd", "~/.bashrc"])
    exc = failure(t, Redir(0, 1, A0))
    # a write to a protected path is its own bug class, not a laundered denied part
    assert exc is not None and exc.oracle == "protected-write"
    assert signature(exc) == "protected-write:redirect-write/tilde_.bashrc"
    assert exc.data["command"] == "ls -la > ~/.bashrc"
    assert exc.data["group"] == {"family": "redirect:write", "leaf": "~/.bashrc"}
    append = [r.name for r in t.composition.table.redirects].index("append")  # another spelling, one family
    assert failure(t, Redir(append, 1, A0)).data["group"] == {"family": "redirect:write", "leaf": "~/.bashrc"}


def test_compound_wrapper_reports_the_tree_when_the_tree_alone_launders() -> None:
    t = composition_target(first_segment, LEAVES)
    sh_c = [w.name for w in t.composition.table.wrappers].index("sh-c")
    exc = failure(t, Wrap(sh_c, Node(Leaf(A0), op(t, "and"), Leaf(D0))))
    assert exc is not None and signature(exc) == "fail-open:and/rm"


def test_ordered_levels_check_that_the_whole_is_at_least_its_highest_part() -> None:
    good = composition_target(leveled, LEAVES, allowed=is_allowed_level)
    rng = random.Random(3)
    for _ in range(1500):
        good(rng.randbytes(rng.randint(0, 40)))
    bad = composition_target(leveled_first_only, LEAVES, allowed=is_allowed_level)
    exc = failure(bad, Node(Leaf(A2), op(bad, "seq"), Leaf(A0)))  # echo (INERT); ls (READ)
    assert exc is not None and signature(exc) == "fail-open:level-seq/ls"
    assert exc.data["verdict"] == {"allowed": True, "level": 0, "rank": 0}
    off = composition_target(leveled_first_only, LEAVES, allowed=is_allowed_level, check_levels=False)
    assert failure(off, Node(Leaf(A2), op(off, "seq"), Leaf(A0))) is None


def test_a_level_classifier_without_a_predicate_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="allowed"):
        composition_target(leveled, LEAVES)


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="bound"):
        composition_target(reference, LEAVES, bound=0)
    with pytest.raises(ConfigError, match="families"):
        composition_target(reference, LEAVES, families=["wrapper", "teleport"])


def test_features_report_shape_and_verdict() -> None:
    from assay.core import observe

    t = composition_target(reference, LEAVES)
    sink = observe.FeatureSink()
    previous = observe.activate(sink)
    try:
        t(t.composition.encode(Node(Leaf(A0), op(t, "pipe"), Leaf(A1))))
    finally:
        observe.activate(previous)
    assert sink.keys == [("f", "compose.shape", repr("pipe:allow"))]


def test_denied_leaves_only_pool_still_runs() -> None:
    t = composition_target(reference, [f"deny: {d}" for d in DENIED_LEAVES])
    assert t.composition.pool.summary.allowed == 0
    assert any("no leaf is allowed" in line for line in t.composition.pool.summary.lines())
    for seed in t.assay_target.seeds:
        t(seed)
