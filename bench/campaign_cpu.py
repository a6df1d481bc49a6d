#!/usr/bin/env python
"""CPU and wall time per case of whole ``assay fuzz`` commands on a real harness, trees side by side.

Run from the repository root with the project's venv::

    python bench/campaign_cpu.py --tree main=../main/src --tree new=src --harness fuzz_parser.py \\
        --runs 40000 --max-len 64 --rounds 3 --atheris

Each round runs, for every tree in turn (and atheris' own loop with ``--atheris``), the
same command twice: ``-runs=N`` and ``-runs=N/5`` (same ``-seed``, ``-max_len``, an empty
corpus each time).  The steady cost of a case is the difference of the two over the
``0.8 N`` cases between, so start-up (imports, the twins, atheris' ``instrument_all()``)
cancels out.  ``cpu`` is the CPU time (user + system) of the command and every process
it waited for (for assay: the supervisor, the worker and the counting child); ``wall``
is its wall time.  On a shared machine wall time moves with the load and CPU time
much less, so both are printed with the load average; the medians over rounds are
the result.  A campaign is a function of its seed and case cap, so every tree's
schedule digest is printed too: a change that should not move the schedule shows
the same digest in every column.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _run(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its waited-for children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _assay(src: str, harness: Path, runs: int, seed: int, max_len: int | None) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory(prefix="assay-cpu-") as work:
        os.mkdir(os.path.join(work, "corpus"))
        cmd = [sys.executable, "-m", "assay", "fuzz", str(harness), "corpus", f"-runs={runs}", f"-seed={seed}"]
        cmd += [] if max_len is None else [f"-max_len={max_len}"]
        cmd += ["--fuzz-artifacts", "artifacts", "--report", "report.json"]
        env = {**os.environ, "PYTHONPATH": src}
        wall, cpu = _run(cmd, env, work)
        try:
            with open(os.path.join(work, "report.json")) as fh:
                target = next(iter(json.load(fh)["targets"].values()))
            digest = target["schedule_digest"][:12]
        except (OSError, ValueError, KeyError, IndexError):
            digest = "failed"
        return wall, cpu, digest


def _atheris(harness: Path, runs: int, seed: int, max_len: int | None) -> tuple[float, float, str]:
    with tempfile.TemporaryDirectory(prefix="atheris-cpu-") as work:
        os.mkdir(os.path.join(work, "corpus"))
        cmd = [sys.executable, str(harness), "corpus", f"-runs={runs}", f"-seed={seed}"]
        cmd += [] if max_len is None else [f"-max_len={max_len}"]
        wall, cpu = _run(cmd, dict(os.environ), work)
        return wall, cpu, "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC (repeatable): a tree's src folder")
    parser.add_argument("--harness", default="fuzz_parser.py", help="a file of bench/harnesses, or a path")
    parser.add_argument("--runs", type=int, default=40000)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--max-len", type=int, default=None, help="default: the harness' own (assay's defaults)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--atheris", action="store_true", help="also atheris' own loop on the same harness")
    args = parser.parse_args()
    harness = Path(args.harness) if os.path.sep in args.harness else HERE / "harnesses" / args.harness
    tools = dict(t.split("=", 1) for t in args.tree)
    short = max(1, args.runs // 5)
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in tools}
    if args.atheris:
        rows["atheris"] = []
    for r in range(args.rounds):
        order = list(rows)
        order = order[r % len(order) :] + order[: r % len(order)]  # the first alternates with the round
        for name in order:
            one = (
                (lambda n: _atheris(harness, n, args.seed, args.max_len))
                if name == "atheris"
                else (lambda n, src=tools[name]: _assay(src, harness, n, args.seed, args.max_len))
            )
            load = os.getloadavg()[0]
            w_short, c_short, _ = one(short)
            w_full, c_full, digest = one(args.runs)
            cases = args.runs - short
            per = ((c_full - c_short) / cases, (w_full - w_short) / cases)
            rows[name].append(per)
            print(
                f"round {r + 1} {name:<10} cpu {per[0] * 1e6:7.1f} us/case  wall {per[1] * 1e6:7.1f} us/case  "
                f"digest {digest}  load {load:.1f}",
                flush=True,
            )
    print(
        f"\n{harness.name}, -runs={args.runs} (steady: minus -runs={short}), seed {args.seed}, -max_len {args.max_len}"
    )
    print(f"  {'tool':<10}{'cpu us/case':>14}{'wall us/case':>14}{'exec/s (wall)':>15}")
    for name, per in rows.items():
        cpu = statistics.median(p[0] for p in per)
        wall = statistics.median(p[1] for p in per)
        print(f"  {name:<10}{cpu * 1e6:>14.1f}{wall * 1e6:>14.1f}{(1 / wall if wall > 0 else 0):>15,.0f}")


if __name__ == "__main__":
    main()
