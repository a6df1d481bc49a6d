"""Non-vacuity: each oracle, on a relation broken on purpose, fires within a case cap.

Every case runs a real capped campaign (fixed seed, case cap, no wall clock) on a
target whose seeds do *not* trigger the bug, so the engine has to find it, and
runs the correct version in the same budget, which must stay clean.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import oracle_subjects as subj
import pytest

from assay.harness.define import make_target
from assay.oracles import (
    Allow,
    AllowList,
    differential,
    error_shape,
    idempotent,
    monotonic_sequence,
    rechunk,
    round_trip,
)
from assay.store.artifacts import load_artifact

SUBJECTS = str(Path(subj.__file__).resolve())
#: Generated cases per campaign: enough for every planted bug at these seeds, with room.
CASES = 2500


# --------------------------------------------------------------------------- targets


def rt_broken(data: bytes) -> None:
    round_trip(subj.unescape_drops_byte, subj.escape, data, name="escape-codec")


def rt_correct(data: bytes) -> None:
    round_trip(subj.unescape, subj.escape, data, name="escape-codec")


def rc_broken(data: bytes) -> None:
    rechunk(subj.split_lines_forgetful, data, name="crlf-lines")


def rc_correct(data: bytes) -> None:
    rechunk(subj.split_lines, data, name="crlf-lines")


def es_broken(data: bytes) -> None:
    error_shape(subj.validate_person_lax, subj.Person, subj.load_record(data), name="person")


def es_correct(data: bytes) -> None:
    error_shape(subj.validate_person, subj.Person, subj.load_record(data), name="person")


HEX_ALLOW = AllowList(
    Allow(
        "binascii-error-class",
        "binascii.unhexlify reports bad input as binascii.Error (a ValueError subclass); "
        "the pure-Python decoder raises ValueError itself: both reject, only the class differs",
        lambda data, a, b: (
            a.is_error and b.is_error and issubclass(a.error, ValueError) and issubclass(b.error, ValueError)
        ),
    ),
)


def _unhexlify(text: str) -> bytes:
    import binascii

    return binascii.unhexlify(text.encode("latin-1"))


def diff_broken(data: bytes) -> None:
    text = data.decode("latin-1")
    differential({"strict": subj.hex_decode, "lowercase": subj.hex_decode_lowercase_only}, text, name="hex")


def diff_correct(data: bytes) -> None:
    text = data.decode("latin-1")
    differential({"strict": subj.hex_decode, "binascii": _unhexlify}, text, name="hex", allow=HEX_ALLOW)


def idem_broken(data: bytes) -> None:
    idempotent(subj.collapse_slashes_once, data.decode("latin-1"), name="collapse-slashes")


def idem_correct(data: bytes) -> None:
    idempotent(subj.collapse_slashes, data.decode("latin-1"), name="collapse-slashes")


def mono_broken(data: bytes) -> None:
    monotonic_sequence(subj.session_states(data, reset_reverts=True), name="session-state")


def mono_correct(data: bytes) -> None:
    monotonic_sequence(subj.session_states(data), name="session-state")


CASES_TABLE = [
    # (broken, correct, expected, seeds, expected signature)
    (rt_broken, rt_correct, (ValueError,), [b'say \\"hi\\"\\n', b"plain text"], "invariant:escape-codec/mismatch"),
    (rc_broken, rc_correct, (), [b"GET / HTTP/1.1\nHost: x\n\n", b"a b c"], "invariant:crlf-lines/mismatch"),
    (
        es_broken,
        es_correct,
        (ValueError,),
        [b'{"name": "ann", "age": 37, "email": "a@b.c"}'],
        "error-shape:person/valid-rejected",
    ),
    (diff_broken, diff_correct, (), [b"00ff10", b"deadbeef"], "differential:hex:strict~lowercase/value-vs-value"),
    (idem_broken, idem_correct, (), [b"/usr/local/bin", b"a//b"], "invariant:collapse-slashes/mismatch"),
    (mono_broken, mono_correct, (), [b"IDDQ", b"DDD"], "invariant:session-state/order"),
]


def _target(fn: Callable[[bytes], None], expected: tuple, seeds: list[bytes]):
    return make_target(fn, name=fn.__name__, expected=expected, seeds=seeds, max_len=64, sources=[SUBJECTS])


@pytest.mark.parametrize(
    "broken, correct, expected, seeds, signature", CASES_TABLE, ids=lambda v: getattr(v, "__name__", None)
)
def test_broken_relation_fires_and_correct_one_stays_clean(
    campaign, tmp_path, broken, correct, expected, seeds, signature
):
    for fn in (broken, correct):
        for seed in seeds:  # the engine, not the seeds, must find the bug
            assert _verdict(fn, expected, seed) is None, (fn.__name__, seed)

    found = campaign(
        [_target(broken, expected, seeds)], cases=CASES, seed=1, corpus=tmp_path / "c1", artifacts=tmp_path / "a1"
    )
    (outcome,) = found.targets
    signatures = [f.signature for f in outcome.findings]
    assert signature in signatures
    relation = signature.rsplit("/", 1)[0]
    # A broken relation may fail in more than one way (a decoder that drops a byte
    # can also produce text it cannot re-read), but only ever this relation.
    assert all(s.rsplit("/", 1)[0] == relation for s in signatures), signatures
    art = load_artifact(next(f for f in outcome.findings if f.signature == signature).artifact)
    assert art.metadata["oracle"] == signature.split(":", 1)[0]
    assert _verdict(broken, expected, art.input).signature == signature
    assert _verdict(correct, expected, art.input) is None

    clean = campaign(
        [_target(correct, expected, seeds)], cases=CASES, seed=1, corpus=tmp_path / "c2", artifacts=tmp_path / "a2"
    )
    (outcome,) = clean.targets
    assert outcome.findings == []
    assert outcome.cases >= CASES


def _verdict(fn, expected, data):
    from assay.engine.execute import run_input

    return run_input(_target(fn, expected, []), data)


def test_differential_without_the_allow_list_reports_the_error_class_difference():
    from assay.engine.execute import run_input

    def bare(data: bytes) -> None:
        differential({"strict": subj.hex_decode, "binascii": _unhexlify}, data.decode("latin-1"), name="hex")

    verdict = run_input(make_target(bare, name="bare"), b"zz")
    assert verdict.signature == "differential:hex:strict~binascii/error-class-vs-error-class"
    assert run_input(make_target(diff_correct, name="allowed"), b"zz") is None


def test_allow_list_hits_are_features(campaign, tmp_path):
    from assay.engine.execute import run

    result = run(make_target(diff_correct, name="diff_correct"), b"zz")
    assert result.verdict is None
    keys = {k[1]: k[2] for k in result.features}
    assert keys["hex.allow"] == "'binascii-error-class'"
    assert keys["hex.allow-hits"] == "1"
    assert keys["hex.shape"] == "'ee'"
    # features are plain, reportable data: every key survives a JSON round trip unchanged
    assert [tuple(k) for k in json.loads(json.dumps(result.features))] == list(result.features)
