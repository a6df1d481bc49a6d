"""The schedule digest (``assay.engine.journal``): what it is, and that a campaign's is it.

The digest is defined over the scheduled inputs alone: records ``len(input).to_bytes(4,
"big") + input`` gathered in a pending buffer of ``RING`` bytes and folded into a SHA-256
chain when the next record does not fit.  :func:`reference` restates that definition on
its own; the journal must agree with it record by record, across a worker that dies
between a fold and the case that caused it, and a whole campaign (C loop and Python loop,
workers dying along the way, a buffer small enough to fold every few cases and to see
records that do not fit at all) must report the reference digest of the inputs it ran.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from assay.engine import journal as jr, worker
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.gen.accelerated import cmutate
from assay.harness.define import make_target
from hot_loop_targets import RECORD, make_recorder


def reference(inputs: list[bytes], ring: int) -> bytes:
    chain, pending = bytes(32), b""
    for data in inputs:
        rec = len(data).to_bytes(4, "big") + data
        if len(pending) + len(rec) > ring:
            chain = hashlib.sha256(chain + pending + (rec if len(rec) > ring else b"")).digest()
            pending = b""
            if len(rec) > ring:
                continue
        pending += rec
    return hashlib.sha256(chain + pending).digest() if pending else chain


def _inputs(n: int, longest: int, seed: int = 3) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice((0, 1, rng.randrange(longest), rng.randrange(longest // 4)))) for _ in range(n)]


def _journal(ring: int) -> jr.Journal:
    j = jr.Journal(256, ring=ring)
    j.start_chain(bytes(32), b"")
    return j


def test_the_journal_digest_is_the_definition_record_by_record():
    ring = 100
    inputs = _inputs(300, 3 * ring)
    assert any(len(d) + 4 > ring for d in inputs) and any(len(d) == 0 for d in inputs)
    j = _journal(ring)
    for k, data in enumerate(inputs):
        j.record(data)
        j.begin(jr.GENERATED, k, jr.CASE, data)
        assert jr.digest(*j.chain_state()) == reference(inputs[: k + 1], ring), k
    assert jr.digest(*j.chain_state()) != reference(inputs[:-1], ring)


def test_derived_runs_do_not_change_the_digest():
    j = _journal(64)
    for k, data in enumerate(_inputs(20, 100)):
        j.record(data)
        j.begin(jr.GENERATED, k, jr.CASE, data)
    before = j.chain_state()
    j.begin(jr.GENERATED, 19, jr.DERIVED, b"a shrink candidate")
    assert j.chain_state() == before


@pytest.mark.parametrize("cut", range(0, 40, 3))
def test_a_worker_dying_between_a_record_and_its_case_loses_nothing(cut):
    """The parent reads what the last begin() published; a fold after it is not seen,
    and the next worker, started from what the parent read, records that case again."""
    ring = 80
    inputs = _inputs(40, 2 * ring, seed=cut)
    j = _journal(ring)
    for k, data in enumerate(inputs[:cut]):
        j.record(data)
        j.begin(jr.GENERATED, k, jr.CASE, data)
    j.record(inputs[cut])  # dies here: no begin() for this case
    chain, pending = j.chain_state()
    assert jr.digest(chain, pending) == reference(inputs[:cut], ring)
    j.reset()
    j.start_chain(chain, pending)  # the next worker (WorkerPlan.chain, WorkerPlan.pending)
    for k, data in enumerate(inputs[cut:], cut):
        j.record(data)
        j.begin(jr.GENERATED, k, jr.CASE, data)
    assert jr.digest(*j.chain_state()) == reference(inputs, ring)


def _scheduled(path: Path) -> list[bytes]:
    """The recorder's scheduled inputs in schedule order, each case once."""
    raw, at, cases = path.read_bytes(), 0, {}
    while at < len(raw):
        phase, position, n = RECORD.unpack_from(raw, at)
        at += RECORD.size
        cases.setdefault((phase, position), raw[at : at + n])
        at += n
    return [cases[k] for k in sorted(cases)]


@pytest.mark.campaign
@pytest.mark.parametrize("loop", ["c", "python"])
def test_a_campaign_reports_the_digest_of_the_inputs_it_ran(tmp_path, monkeypatch, loop):
    if loop == "c" and cmutate is None:
        pytest.skip("assay.gen._cmutate is not built (no C compiler)")
    ring, max_len, cases = 256, 600, 4000
    monkeypatch.setattr(jr, "RING", ring)
    monkeypatch.setattr(worker, "COST_EVERY", 0)  # no counting child: only the worker runs cases
    if loop == "python":
        monkeypatch.setattr(worker.Worker, "_hot_loop", lambda self, stream: None)
    target = make_target(
        make_recorder(tmp_path / "ran", max_len),
        name="recorder",
        max_len=max_len,
        seeds=[b"hello", b"x" * 400, b"!boom"],
    )
    options = CampaignOptions(
        corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=cases, seed=2
    )
    (out,) = run_campaign([target], options).targets
    ran = _scheduled(tmp_path / "ran")
    assert out.worker_restarts >= 2, "workers died along the way"
    assert len(ran) == out.schedule_count == cases + 3
    assert sum(len(d) + 4 > ring for d in ran) > 1, "records that do not fit the buffer"
    assert out.schedule_digest == reference(ran, ring).hex()


def test_the_journal_tells_a_scheduled_case_from_a_rerun_of_one():
    # A survivor campaign's comparing target reads this to keep only a kill's class in its reruns.
    j = jr.Journal(64)
    try:
        j.begin(jr.GENERATED, 3, jr.DERIVED, b"abc")
        assert j.sub() == jr.DERIVED
        j.begin(jr.GENERATED, 4, jr.CASE, b"abcd")
        assert j.sub() == jr.CASE
        j.begin(jr.GENERATED, 5, jr.DERIVED, b"x")
        jr.HEADER.pack_into(j.mem, 0, jr.IDLE, jr.GENERATED, 6, jr.CASE, 0.0, 1, 0.0, j.used, j.sel)  # the hot loop's
        assert j.sub() == jr.CASE
    finally:
        j.close()
