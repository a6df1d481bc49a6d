"""A runaway recursion is one signature and one bug, wherever in its cycle the limit struck."""

from __future__ import annotations

import json
import os
import random
import tomllib

import pytest

from assay.core.verdict import ExceptionInfo, Verdict, classify, code_frames, frames_key
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.findings.identity import group, identify
from assay.harness.define import make_target
from test_bugs import _raise_in as _module  # a module compiled from source in tmp_path

CYCLE = "panic:builtins.RecursionError@cycle:tomllib._parser:parse_array,parse_inline_table,parse_key_value_pair,parse_value"

#: Nesting shapes of one recursion: arrays, inline tables, both interleaved, comments between levels.
SHAPES = {
    "arrays": "a=" + "[" * 3000,
    "spaced arrays": "a=" + "[ " * 2000,
    "commented arrays": "a=" + "[#c\n" * 1500,
    "inline tables": "a=" + "{a=" * 2000,
    "tables in arrays": "a=" + "[{a=" * 1000,
    "irregular": "a=" + "".join(random.Random(1).choice(("[", "{a=", "[ ", "{ b = [")) for _ in range(1200)),
    "under a table header": "[t]\nx=" + "{y=[" * 800,
}


def _nested(depth: int, fn, *args):
    """Call ``fn`` ``depth`` frames deeper, so the recursion limit strikes at another point of the cycle."""
    if depth:
        return _nested(depth - 1, fn, *args)
    return fn(*args)


def _raised(fn, *args, depth: int = 0) -> BaseException:
    try:
        _nested(depth, fn, *args)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("did not raise")


def test_tomllib_nesting_shapes_and_depths_are_one_signature():
    verdicts, innermost, functions = [], set(), {}
    for shape, text in SHAPES.items():
        for depth in range(4):
            exc = _raised(tomllib.loads, text, depth=depth)
            assert isinstance(exc, RecursionError), shape
            frames = code_frames(exc.__traceback__)
            innermost.add(frames_key(frames))
            functions[shape] = {f.qualname for f in frames}
            verdicts.append(classify(exc, ()))
    # Not vacuous: the limit struck at different points, and the shapes recursed through different functions.
    assert len(innermost) >= 4, innermost
    assert "parse_inline_table" not in functions["arrays"] and "parse_array" not in functions["inline tables"]
    assert {v.signature for v in verdicts} == {CYCLE}
    assert len(group(verdicts, identify)) == 1
    v = verdicts[0]
    assert v.exception.cycle == tuple(
        f"tomllib._parser:{n}" for n in ("parse_array", "parse_inline_table", "parse_key_value_pair", "parse_value")
    )
    assert len(v.exception.frames) <= 12  # the cycle was found in the whole stack, not the frames kept


def test_the_cycle_survives_the_artifact_round_trip():
    v = classify(_raised(tomllib.loads, SHAPES["arrays"]), ())
    again = Verdict.from_json(json.loads(json.dumps(v.to_json())))
    assert again.exception.cycle == v.exception.cycle and again.signature == v.signature
    assert identify(again).key == identify(v).key == CYCLE
    plain = classify(_raised(int, "x"), ())
    assert "cycle" not in plain.exception.to_json()  # other artifacts' metadata is unchanged


def test_a_recursion_bug_is_placed_inside_its_cycle():
    sources = [os.path.dirname(tomllib.__file__)]
    verdicts = [classify(_raised(tomllib.loads, SHAPES["commented arrays"], depth=d), ()) for d in range(4)]
    struck = {v.exception.frames[0].qualname for v in verdicts}
    assert struck - {"parse_array", "parse_value"}  # some struck in a helper the cycle called (skip_comment...)
    assert {identify(v, sources).frame.qualname for v in verdicts} <= {"parse_array", "parse_value"}


def test_a_different_recursion_is_a_different_signature_and_bug(tmp_path):
    lib, ns = _module(
        tmp_path,
        "parity",
        """
        def is_even(n):
            return True if n == 0 else is_odd(n - 1)
        def is_odd(n):
            return False if n == 0 else is_even(n - 1)
    """,
    )
    even, odd = (classify(_raised(ns["is_even"], 10**5, depth=d), ()) for d in (0, 1))
    assert frames_key(even.exception.frames) != frames_key(odd.exception.frames)
    assert even.signature == odd.signature == "panic:builtins.RecursionError@cycle:parity:is_even,is_odd"
    toml = classify(_raised(tomllib.loads, SHAPES["arrays"]), ())
    assert toml.signature != even.signature
    assert len(group([even, odd, toml], lambda v: identify(v, [lib]))) == 2
    assert identify(even, [lib]).frame.file == lib


def test_methods_of_a_recursive_descent_class_are_one_cycle(tmp_path):
    _, ns = _module(
        tmp_path,
        "descent",
        """
        class Parser:
            def __init__(self, text):
                self.text, self.pos = text, 0
            def value(self):
                c = self.text[self.pos]
                self.pos += 1
                if c == "[":
                    return self.array()
                if c == "{":
                    return self.obj()
                return c
            def array(self):
                return [self.value()]
            def obj(self):
                return {"k": self.pair()}
            def pair(self):
                return self.value()
    """,
    )
    arrays, objects = (classify(_raised(lambda t: ns["Parser"](t).value(), c * 3000), ()) for c in "[{")
    expected = "panic:builtins.RecursionError@cycle:descent:Parser.array,Parser.obj,Parser.pair,Parser.value"
    assert arrays.signature == objects.signature == expected


def test_recursion_error_without_a_visible_cycle_keeps_its_key(tmp_path):
    deep = _raised(json.loads, "[" * 100_000)  # the C scanner recurses; the Python stack is shallow
    v = classify(deep, ())
    assert isinstance(deep, RecursionError) and v.exception.cycle == ()
    assert v.signature == f"panic:builtins.RecursionError@{frames_key(code_frames(deep.__traceback__))}"
    _, ns = _module(
        tmp_path,
        "byhand",
        """
        def guard(n):
            raise RecursionError("too deep")
    """,
    )
    by_hand = classify(_raised(ns["guard"], 1), ())
    assert (
        by_hand.signature
        == "panic:builtins.RecursionError@byhand:guard<test_recursion_key:_nested<test_recursion_key:_raised"
    )


def test_other_exceptions_inside_a_recursion_keep_frame_keys(tmp_path):
    lib, ns = _module(
        tmp_path,
        "walk",
        """
        def down(n):
            if n == 0:
                raise ValueError("bottom")
            return down(n - 1)
    """,
    )
    v = classify(_raised(ns["down"], 50), ())
    assert v.signature == "panic:builtins.ValueError@walk:down<walk:down<walk:down"
    assert identify(v, [lib]).key == "panic:builtins.ValueError@walk:down"
    info = ExceptionInfo.from_json(v.exception.to_json())
    assert info.cycle == ()


def toml_nested(data: bytes) -> object:
    return tomllib.loads(data.decode("utf-8", "surrogateescape"))


def _toml_campaign(tmp_path, seed):
    target = make_target(
        toml_nested,
        seeds=[b"a = [[1], {b = [2]}]\n", b"t = {x = {y = [1]}}\n"],
        expected=(tomllib.TOMLDecodeError,),
        max_len=4096,
    )
    options = CampaignOptions(
        corpus_root=str(tmp_path / "corpus"),
        artifact_root=str(tmp_path / "artifacts"),
        max_cases=6000,
        seed=seed,
        shrink_cases=64,
    )
    (outcome,) = run_campaign([target], options).targets
    return sorted({f.signature for f in outcome.findings if "RecursionError" in f.signature})


@pytest.mark.campaign
def test_a_tomllib_campaign_finds_one_recursion_signature(tmp_path):
    # Seed 1 at 6,000 cases reached the limit through arrays and through inline tables,
    # struck at three different innermost frames (three signatures before cycle keys).
    assert _toml_campaign(tmp_path, seed=1) == [CYCLE]


def _toml_recursion_key(text: str) -> str:
    try:
        tomllib.loads(text)
    except RecursionError as exc:
        return classify(exc, ()).signature
    raise AssertionError("no RecursionError")


def test_the_observed_cycle_alone_splits_two_nesting_shapes(monkeypatch):
    # Non-vacuity of the static widening: without it the array-only and the
    # table-bearing stacks are two cycles (a campaign reaches either, depending on its seed).
    from assay.core import recursion

    arrays, tables = "a = " + "[" * 5000, "a = " + "{b = [" * 2000
    assert (
        _toml_recursion_key(arrays)
        == _toml_recursion_key(tables)
        == f"panic:builtins.RecursionError@{CYCLE.split('@', 1)[1]}"
    )
    monkeypatch.setattr(recursion, "_static_calls", lambda live: {})
    assert _toml_recursion_key(arrays) != _toml_recursion_key(tables)


def test_a_long_cycle_key_counts_and_hashes_the_rest():
    from assay.core.recursion import SHOWN, cycle_key

    names = [f"m:f{i}" for i in range(SHOWN + 2)]
    key = cycle_key(list(reversed(names)))
    assert key.startswith("cycle:m:f0,f1,") and ";+2#" in key
    assert cycle_key(names[:-1] + ["m:other"]) != key  # the hidden functions still tell sets apart
    assert cycle_key(["b:g", "a:f", "a.x:h"]) == "cycle:a.x:h;a:f;b:g"
