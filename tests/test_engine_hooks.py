"""The engine's two hooks for directed, stop-at-first campaigns (survivor fuzzing uses both).

``stop_on`` ends the schedule at the first finding of the named oracles; ``aim`` is
asked once per new corpus entry and may favour it and stage replacements on it.
Unused, neither changes a campaign (the schedule digest tests cover that).
"""

from __future__ import annotations

import hashlib

from assay.core.observe import OracleFailure
from assay.engine.supervisor import Supervisor
from assay.harness.define import make_target

CASES = 300


def _stopper(data: bytes):
    if data.startswith(b"!"):
        raise OracleFailure("bang", oracle="stopper")
    if len(data) > 3:
        raise OracleFailure("long", oracle="other")
    return len(data)


#: The digest of the magic word: the target never compares the word itself, so the comparison log cannot find it.
MAGIC = hashlib.sha256(b"MAGIC").hexdigest()


def _magic(data: bytes):
    if hashlib.sha256(data).hexdigest() == MAGIC:
        raise ValueError("found the magic word")


def _supervise(fn, seeds, tmp_path, **hooks):
    target = make_target(fn, name=fn.__name__.strip("_"), seeds=seeds, max_len=32, timeout=1.0)
    return Supervisor(
        target,
        tseed=5,
        master_seed=5,
        initial=list(seeds),
        initial_manifest=[],
        corpus=None,
        artifact_root=str(tmp_path / "artifacts"),
        sources=[__file__],
        max_cases=CASES,
        budget=None,
        replay_only=False,
        shrink_cases=16,
        strategy=None,
        dictionary=[],
        **hooks,
    ).run()


def test_stop_on_ends_the_schedule_at_the_first_such_finding(tmp_path):
    stopped = _supervise(_stopper, [b"a", b"!b", b"c"], tmp_path, stop_on=frozenset({"stopper"}))
    assert stopped.cases == 2  # the second initial input: nothing after it ran
    assert [f.oracle for f in stopped.findings] == ["stopper"]
    # Without it (non-vacuity) the schedule runs to its end and finds the other oracle's failure too.
    full = _supervise(_stopper, [b"a", b"!b", b"c"], tmp_path / "full")
    assert full.cases == 3 + CASES
    assert {f.oracle for f in full.findings} == {"stopper", "other"}


def test_stop_on_other_oracles_does_not_stop(tmp_path):
    outcome = _supervise(_stopper, [b"a", b"!b"], tmp_path, stop_on=frozenset({"nothing-like-it"}))
    assert outcome.cases == 2 + CASES


def test_aim_stages_its_replacements_and_is_asked_once_per_new_entry(tmp_path):
    log = tmp_path / "asked.log"  # the aim runs in the forked worker: it leaves its calls in a file

    def aim(data: bytes, new: list) -> tuple[int, list[tuple[bytes, bytes]]]:
        with open(log, "ab") as fh:
            fh.write(data.hex().encode() + b"\n")
        return 8, [(b"a", b"MAGIC")] if data == b"a" else []

    aimed = _supervise(_magic, [b"a"], tmp_path, aim=aim)
    assert [f.signature.split("@")[0] for f in aimed.findings] == ["panic:builtins.ValueError"]
    asked = [bytes.fromhex(line) for line in log.read_text().split()]
    assert asked[0] == b"a"
    assert aimed.corpus_size == len(asked)  # once per new entry, never per case
    plain = _supervise(_magic, [b"a"], tmp_path / "plain")
    assert not plain.findings  # random mutation of b"a" does not spell MAGIC in these cases
