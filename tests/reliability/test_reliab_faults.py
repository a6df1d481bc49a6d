"""Fault injection (issue 14, items 1-4): SIGKILL the ``assay fuzz`` parent at seeded random points.

After each kill: no process of the run survives (found by session id and pid,
never by name), every corpus entry and artifact is valid, the stale temp files
of the dead writers are removed by the next run, which then runs normally.
"""

from __future__ import annotations

import os
import random
import signal

import pytest
from reliab_helpers import HOSTILE, kill_session, run_assay, start_assay, wait_for, wait_gone

#: Seed of the kill points (change it to explore other moments; failures print it).
FAULT_SEED = 14
#: (target, --jobs) of each kill.
KILLS = [("hostile_grow", 1), ("hostile_findings", 1), ("hostile_findings", 2), ("hostile_grow", 2)]


def _entries(folder) -> int:
    try:
        return sum(1 for n in os.listdir(folder) if n.endswith(".input"))
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("n", range(len(KILLS)))
def test_parent_sigkill_leaves_no_process_and_valid_files(tmp_path, n):
    from assay.store.artifacts import iter_artifacts
    from assay.store.corpus import Corpus

    rng = random.Random(f"{FAULT_SEED}:{n}")
    target, jobs = KILLS[n]
    after_entries = rng.randint(1, 12)
    extra_delay = rng.uniform(0.0, 0.8)
    corpus, artifacts = tmp_path / "c", tmp_path / "a"
    folder = corpus / target
    proc = start_assay(
        "fuzz",
        "--project",
        str(HOSTILE),
        "--fuzz-target",
        target,
        "--fuzz-budget",
        "200",
        "--jobs",
        str(jobs),
        "--fuzz-corpus",
        str(corpus),
        "--fuzz-artifacts",
        str(artifacts),
    )
    point = f"seed {FAULT_SEED}:{n}: kill after {after_entries} entries + {extra_delay:.2f}s"
    try:
        assert wait_for(lambda: _entries(folder) >= after_entries), f"{point}: the corpus never grew"
        if extra_delay:
            wait_for(lambda: False, wait=extra_delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        left = wait_gone(proc.pid)
        assert left == [], f"{point}: processes {left} outlived the SIGKILLed parent"
    finally:
        kill_session(proc.pid)
    store = Corpus(corpus, target, 64)
    stale = store.remove_stale()
    assert store.check() == [], point
    for path in stale:
        assert not os.path.exists(path)
    for art in iter_artifacts(artifacts):  # raises on a half-written artifact
        assert art.target == target
    # The next run is not blocked by anything the killed run left.
    r = run_assay(
        "fuzz",
        "--project",
        str(HOSTILE),
        "--fuzz-target",
        target,
        "--fuzz-replay-only",
        "--fuzz-corpus",
        str(corpus),
        "--fuzz-artifacts",
        str(artifacts),
    )
    assert r.returncode in (0, 1), f"{point}: {r.stderr}"
