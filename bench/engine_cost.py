"""The engine's own cost per case, end to end (issue 13 item 4).

Runs the whole ``run_campaign`` (forked worker, journal, pipe, feedback) on the
trivial target of ``end_to_end.py`` for two case caps and reports the marginal wall
time per case (the difference of the two runs over the difference of their caps, so
start-up cancels out), in three configurations, interleaved, medians of ``--runs``:

* ``c``: as installed (the C hot loop and generator when they are built);
* ``c-generator``: the Python hot loop around the C generator (the hot loop's
  C twin turned off);
* ``python``: ``ASSAY_PURE_PYTHON=1`` (the Python reference; the same inputs);
* ``floor``: the Python hot loop with generation replaced by a constant input:
  what the Python loop around the call costs by itself.

    python bench/engine_cost.py [--runs 3] [--small 200000] [--large 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, tempfile, time
sys.path[:0] = [{here!r}, {src!r}]
from end_to_end import trivial
from assay.engine import generate, worker
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target
if {python_loop!r}:
    worker.Worker._hot_loop = lambda self, stream: None
if {floor!r}:
    def constant(self, rng, grow=False):
        self.repair_guards = None
        self.last_pair = None
        return b"hello", ["constant"]
    generate.InputSource.next = constant
target = make_target(trivial, name="trivial", sources=({here!r} + "/end_to_end.py",), seeds=(b"hello",),
                     max_len=4096, timeout=10.0)
root = tempfile.mkdtemp()
started = time.perf_counter()
run_campaign([target], CampaignOptions(corpus_root=root, artifact_root=root + "-a", max_cases={cases}, seed=1))
print(json.dumps(time.perf_counter() - started))
"""


def one(config: str, cases: int) -> float:
    env = {**os.environ, "ASSAY_PURE_PYTHON": "1" if config == "python" else "0"}
    code = CHILD.format(
        here=str(HERE),
        src=str(HERE.parent / "src"),
        floor=config == "floor",
        cases=cases,
        python_loop=config in ("c-generator", "floor"),
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900, cwd=tempfile.gettempdir()
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small", type=int, default=200_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    configs = ("c", "c-generator", "python", "floor")
    per_case: dict[str, list[float]] = {c: [] for c in configs}
    for _ in range(args.runs):
        for config in configs:  # interleaved: a load change hits every configuration alike
            small, large = one(config, args.small), one(config, args.large)
            per_case[config].append((large - small) / (args.large - args.small))
    print(
        f"trivial target, run_campaign, marginal wall time per case ({args.small:,} vs {args.large:,} cases),"
        f" medians of {args.runs} interleaved runs, load {os.getloadavg()[0]:.1f}"
    )
    print()
    print("| configuration | µs per case (runs) | cases/s |")
    print("|---|---|---|")
    for config in configs:
        med = statistics.median(per_case[config])
        runs = ", ".join(f"{x * 1e6:.2f}" for x in per_case[config])
        print(f"| {config} | **{med * 1e6:.2f}** ({runs}) | {1 / med:,.0f} |")
    c, python = statistics.median(per_case["c"]), statistics.median(per_case["python"])
    print()
    print(f"C twin against the Python reference: {python / c:.2f}x fewer µs per case")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
