#!/usr/bin/env python
"""``assay fuzz`` against a bare loop over the very inputs it ran (issue 13 item 4's 0.8 goal).

Run from the repository root with the project's venv::

    python bench/bare_ratio.py                    # json.loads, tomllib.loads, urllib.parse; seeds 1-3
    python bench/bare_ratio.py --target json.loads --seeds 1 --cases 100000

For each target and seed, three campaigns of the same schedule (a campaign is a
function of its seed and case cap) and one loop:

1. a recording run of ``--cases`` cases: every call the worker makes to the target
   appends the input to a file (the counting child's calls go to a file of their own
   and are left out);
2. timed runs of ``--cases / 5`` and ``--cases`` cases, nothing recorded: the wall time
   of ``run_campaign`` and the number of calls the worker made;
3. the bare loop: a Python ``for`` over the recorded inputs calling the same wrapped
   target, with no feedback, timed over as many calls as each timed run made, in a
   fork of this process (as the campaign's worker is a fork of it).

Steps 2 and 3 repeat ``--rounds`` times, interleaved, and each keeps its fastest time
(the least disturbed run on a shared machine).

Every call, in the campaign and in the loop, goes through the same wrapper as
``bench/end_to_end.py`` (it catches every exception and counts).  ``whole`` is the
bare loop's time over the campaign's wall time, start-up included; ``steady`` is
the same ratio over the cases between the two caps (start-up and the first cases'
new-coverage work cancel out).  ``in-target`` is end_to_end's share, for reference.

``--no-count`` turns off the worker's counted cases (``COST_EVERY = 0``: no line counts,
no counting child), to show what the cost feedback costs.  It is another schedule (the
counted cases are drawn differently and their counts add no entries), so the two
ratios compare campaigns over different inputs, each against its own bare loop.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import end_to_end as e2e  # noqa: E402

TARGETS = ("json.loads", "tomllib.loads", "urllib.parse")
_HEAD = struct.Struct("<II")


def recording(fn: Callable[[bytes], Any], path: str) -> Callable[[bytes], Any]:
    """``fn``, appending ``(pid, input)`` of every call to ``path``.

    The file is opened here, before the worker forks: the worker's sandbox refuses to
    open files, and it leaves with ``os._exit`` (so nothing may wait in a buffer).
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def rec(data: bytes) -> Any:
        os.write(fd, _HEAD.pack(os.getpid(), len(data)) + data)
        return fn(data)

    rec.__name__ = fn.__name__
    return rec


def worker_inputs(path: str) -> list[bytes]:
    """The inputs of the process that made the most calls (the worker), in order."""
    raw = Path(path).read_bytes()
    by_pid: dict[int, list[bytes]] = {}
    at = 0
    while at < len(raw):
        pid, n = _HEAD.unpack_from(raw, at)
        by_pid.setdefault(pid, []).append(raw[at + _HEAD.size : at + _HEAD.size + n])
        at += _HEAD.size + n
    return max(by_pid.values(), key=len)


def campaign(name: str, spec: dict, fn, tmp: str, cases: int, seed: int) -> float:
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.harness.define import make_target

    target = make_target(
        fn, name=name.replace(".", "_"), sources=spec["sources"], seeds=spec["seeds"], max_len=e2e.MAX_LEN, timeout=10.0
    )
    corpus = tempfile.mkdtemp(dir=tmp)
    t0 = time.perf_counter()
    run_campaign(
        [target], CampaignOptions(corpus_root=corpus, artifact_root=corpus + "-art", max_cases=cases, seed=seed)
    )
    return time.perf_counter() - t0


def bare(fn, inputs: list[bytes]) -> float:
    """Seconds for ``fn`` over ``inputs``, timed in a fork of this process, as the worker is.

    Timed in this long-lived process instead, the loop ran up to 1.5x slower per call
    than the same calls inside the campaign's worker (urllib.parse, seed 1: a ratio
    above 1), whatever this process had allocated by then.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the timed child
        try:
            t0 = time.perf_counter()
            for data in inputs:
                fn(data)
            os.write(write_end, struct.pack("<d", time.perf_counter() - t0))
        finally:
            os._exit(0)
    os.close(write_end)
    got = os.read(read_end, 8)
    os.close(read_end)
    os.waitpid(pid, 0)
    return struct.unpack("<d", got)[0]


def one(name: str, spec: dict, cases: int, seed: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="assay-bare-") as tmp:
        counters = e2e.Counters(os.path.join(tmp, "rec.counters"))
        campaign(name, spec, recording(counters.wrap(spec["fn"]), os.path.join(tmp, "rec")), tmp, cases, seed)
        # The worker made most of the calls; the parent's and the counting child's are others.
        inputs = worker_inputs(os.path.join(tmp, "rec"))
        loop = e2e.Counters(os.path.join(tmp, "bare.counters")).wrap(spec["fn"])
        # Rounds interleave campaign and loop; each keeps its fastest (least disturbed) time.
        runs: dict[int, tuple[float, int, float]] = {}
        bares: dict[int, float] = {}
        for k in range(rounds):
            for n in (cases // 5, cases):
                c = e2e.Counters(os.path.join(tmp, f"timed-{n}-{k}.counters"))
                wall = campaign(name, spec, c.wrap(spec["fn"]), tmp, n, seed)
                _hist, count, inside = c.read()
                if n not in runs or wall < runs[n][0]:
                    runs[n] = (wall, count, inside)
                took = bare(loop, inputs[:count])
                bares[n] = min(bares.get(n, took), took)
        small, big = runs[cases // 5], runs[cases]
        bare_small, bare_big = bares[cases // 5], bares[cases]
    return {
        "whole": bare_big / big[0],
        "steady": (bare_big - bare_small) / (big[0] - small[0]),
        "in_target": big[2] / big[0],
        "calls": big[1],
        "recorded": len(inputs),
        "per_case_us": big[0] / big[1] * 1e6,
        "bare_us": bare_big / big[1] * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", default=None)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds per seed; the fastest counts (default 3)")
    ap.add_argument("--no-count", action="store_true", help="no counted cases (line counts) in the campaigns")
    args = ap.parse_args(argv)
    if args.no_count:
        from assay.engine import worker

        worker.COST_EVERY = 0  # read when a worker starts; the forked workers inherit it
    all_specs = e2e.specs()
    print(
        f"# assay fuzz against a bare loop over its own inputs ({os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; {args.cases:,} cases, seeds 1-{args.seeds}, fastest of {args.rounds} rounds"
        f"{'; no counted cases' if args.no_count else ''})\n"
    )
    print(
        "| target | whole (per seed) | steady (per seed) | in-target | us per case: assay / bare loop | calls recorded/ran |"
    )
    print("|---|---|---|---|---|---|")
    for name in args.target or TARGETS:
        got = [one(name, all_specs[name], args.cases, seed, args.rounds) for seed in range(1, args.seeds + 1)]
        med = {
            k: statistics.median(g[k] for g in got) for k in ("whole", "steady", "in_target", "per_case_us", "bare_us")
        }
        print(
            f"| {name} | **{med['whole']:.2f}** ({', '.join(f'{g["whole"]:.2f}' for g in got)}) "
            f"| **{med['steady']:.2f}** ({', '.join(f'{g["steady"]:.2f}' for g in got)}) | {med['in_target']:.2f} "
            f"| {med['per_case_us']:.1f} / {med['bare_us']:.1f} "
            f"| {', '.join(f'{g["recorded"]:,}/{g["calls"]:,}' for g in got)} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
