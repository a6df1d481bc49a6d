#!/usr/bin/env python
"""What a target loses when other work runs between its calls (issue 13 item 4).

Run from the repository root with the project's venv::

    python bench/interleave.py                        # json.loads, tomllib.loads, urllib.parse
    python bench/interleave.py --target json.loads --rounds 9

``bench/bare_ratio.py`` compares a campaign with a bare loop over the inputs the
campaign ran.  This one splits the difference.  For each target it records a
``--cases`` campaign's inputs (seed 1, as ``bare_ratio.py`` does) and times, each in
a fork of this process, over the inputs from case ``--cases / 5`` on:

``calls``        the bare loop: the target, through ``bench/end_to_end.py``'s wrapper;
``generator``    the C generator alone: for case ``i``, the case stream's generator ``i``
                 and one ``ByteMutator`` child of input ``i`` (the hot loop's
                 mutation and random draws, called from Python);
``interleaved``  one generation, then one call, per input;
``in worker``    the bare loop run inside a campaign's worker, from the target's
                 wrapper at the worker's 50,000th call (the feedback is on there).

``extra`` is ``interleaved - (calls + generator)``: what the target's calls lose when
the generator runs between them (the same calls, the same inputs).  A control row
interleaves a call of ``len`` instead (nearly no work: ``extra`` is noise there).
Each round times the four loops in one fork, segment by segment (every loop over
2,000 inputs, in an order rotated from segment to segment), so that a change in the
shared machine's speed falls on all of them alike; medians of ``--rounds`` rounds.
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

import bare_ratio as br  # noqa: E402
import end_to_end as e2e  # noqa: E402

TARGETS = ("json.loads", "tomllib.loads", "urllib.parse")
#: The worker's call at which the in-worker loop runs (well past start-up).
PROBE_AT = 50_000
#: Inputs per segment: each fork runs every loop over one segment, then the next segment.
SEGMENT = 2_000


def in_fork(made: list[tuple[str, Callable[[int, int], None]]], n: int) -> dict[str, float]:
    """µs per input of each loop, timed in one fork: every loop over a segment of the
    inputs, in an order rotated from segment to segment, then the next segment (so a
    change in the machine's speed falls on all loops alike), after a warm-up pass."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the timed child
        try:
            took = [0.0] * len(made)
            for _, loop in made:
                loop(0, min(n, SEGMENT))
            for k, at in enumerate(range(0, n, SEGMENT)):
                for j in range(len(made)):
                    m = (j + k) % len(made)
                    t0 = time.perf_counter()
                    made[m][1](at, min(n, at + SEGMENT))
                    took[m] += time.perf_counter() - t0
            os.write(write_end, struct.pack(f"<{len(made)}d", *took))
        finally:
            os._exit(0)
    os.close(write_end)
    got = b""
    while len(got) < 8 * len(made):
        chunk = os.read(read_end, 8 * len(made) - len(got))
        if not chunk:
            break
        got += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    return {label: t / n * 1e6 for (label, _), t in zip(made, struct.unpack(f"<{len(made)}d", got))}


def loops(fn: Callable[[bytes], Any], inputs: list[bytes]) -> list[tuple[str, Callable[[int, int], None]]]:
    from assay.gen import accelerated
    from assay.gen.mutators import ByteMutator

    mutate = ByteMutator(e2e.MAX_LEN).mutate_c
    stream = accelerated.cmutate.Stream((1).to_bytes(8, "big"))
    limit = e2e.MAX_LEN

    def calls(a: int, b: int) -> None:
        for data in inputs[a:b]:
            fn(data)

    def generator(a: int, b: int) -> None:
        for i in range(a, b):
            mutate(stream.rng(i), inputs[i], None, limit)

    def interleaved(a: int, b: int) -> None:
        for i in range(a, b):
            mutate(stream.rng(i), inputs[i], None, limit)
            fn(inputs[i])

    def with_len(a: int, b: int) -> None:
        for i in range(a, b):
            len(inputs[i])
            fn(inputs[i])

    return [("calls", calls), ("generator", generator), ("interleaved", interleaved), ("len, then call", with_len)]


def in_worker(name: str, spec: dict, fn: Callable[[bytes], Any], inputs: list[bytes], tmp: str) -> float:
    """µs per input of the bare loop, run inside a campaign's worker at its PROBE_AT-th call."""
    out = os.path.join(tmp, "probe")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # before the fork: the sandbox refuses it later
    seen = [0]

    def probe(data: bytes) -> Any:
        seen[0] += 1
        if seen[0] == PROBE_AT:
            fn(inputs[0])
            t0 = time.perf_counter()
            for d in inputs:
                fn(d)
            os.write(fd, struct.pack("<d", time.perf_counter() - t0))
        return fn(data)

    probe.__name__ = fn.__name__
    try:
        br.campaign(name, spec, probe, tmp, PROBE_AT + 1_000, 1)
    finally:
        os.close(fd)
    raw = Path(out).read_bytes()
    return struct.unpack("<d", raw)[0] / len(inputs) * 1e6 if len(raw) == 8 else float("nan")


def one(name: str, spec: dict, cases: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="assay-interleave-") as tmp:
        counters = e2e.Counters(os.path.join(tmp, "rec.counters"))
        br.campaign(name, spec, br.recording(counters.wrap(spec["fn"]), os.path.join(tmp, "rec")), tmp, cases, 1)
        inputs = br.worker_inputs(os.path.join(tmp, "rec"))[cases // 5 :]
        fn = e2e.Counters(os.path.join(tmp, "loop.counters")).wrap(spec["fn"])
        timed: dict[str, list[float]] = {}
        made = loops(fn, inputs)
        for _ in range(rounds):
            for label, us in in_fork(made, len(inputs)).items():
                timed.setdefault(label, []).append(us)
            timed.setdefault("in worker", []).append(in_worker(name, spec, fn, inputs, tmp))
    return {label: statistics.median(v) for label, v in timed.items()} | {"inputs": len(inputs)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", default=None)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    specs = e2e.specs()
    print(
        f"# the target's calls with the generator between them ({os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; the inputs of a {args.cases:,}-case campaign from case "
        f"{args.cases // 5:,}; medians of {args.rounds} rounds; us per input)\n"
    )
    print("| target | calls | generator | interleaved | extra | len, then call | in worker |")
    print("|---|---|---|---|---|---|---|")
    for name in args.target or TARGETS:
        m = one(name, specs[name], args.cases, args.rounds)
        extra = m["interleaved"] - m["calls"] - m["generator"]
        print(
            f"| {name} | {m['calls']:.2f} | {m['generator']:.2f} | {m['interleaved']:.2f} | **{extra:+.2f}** "
            f"| {m['len, then call']:.2f} | {m['in worker']:.2f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
