#!/usr/bin/env python
"""``assay mutant`` locally and with ``--executor dask``, side by side, on a real project.

Run from the repository root after ``python examples/mutation/setup.py``::

    python bench/mutant_dask.py                                  # parse, 3 interleaved rounds
    python bench/mutant_dask.py --project examples/mutation/.work/inflection --rounds 1

Each round runs ``assay mutant --no-history --jobs N`` (local: N forks at once) and
the same with ``--executor dask`` (a LocalCluster of N single-threaded worker
processes, each judging batches of mutants with pytest in-process), and prints wall
times, their ratio, and whether every mutant id got the same verdict.  Timeouts are
CPU-time limits, so a loaded machine rarely flips them; any id whose verdict differs
is listed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(project: Path, jobs: int, executor: str, report: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "mutant",
            "--project",
            str(project),
            "--no-history",
            "--jobs",
            str(jobs),
            "--executor",
            executor,
            "--report",
            str(report),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{executor} run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", default=str(ROOT / "examples" / "mutation" / ".work" / "parse"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    project = Path(args.project).resolve()
    walls: dict[str, list[float]] = {"local": [], "dask": []}
    verdicts: dict[str, list[dict[str, str]]] = {"local": [], "dask": []}
    print(f"{project.name}: {args.rounds} round(s), --jobs {args.jobs}; load before {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="assay-bench-mutant-dask-") as tmp:
        for r in range(args.rounds):
            for executor in walls:
                report = Path(tmp) / f"{executor}-{r}.json"
                walls[executor].append(run(project, args.jobs, executor, report))
                data = json.loads(report.read_text())
                verdicts[executor].append({m["id"]: m["verdict"] for m in data["mutants"]})
                print(
                    f"  round {r + 1} {executor:<6} {walls[executor][-1]:7.1f}s  {data['counts']}  "
                    f"load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    ratios = [d / loc for d, loc in zip(walls["dask"], walls["local"])]
    print(
        f"\nmedian wall: local {statistics.median(walls['local']):.1f}s, dask {statistics.median(walls['dask']):.1f}s; "
        f"dask / local per round {', '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})"
    )
    for r, (a, b) in enumerate(zip(verdicts["local"], verdicts["dask"])):
        differ = sorted(i for i in a.keys() | b.keys() if a.get(i) != b.get(i))
        print(
            f"round {r + 1}: {len(a)} mutants, {len(a) - len(differ)} same verdict"
            + (f"; differ: {', '.join(f'{i} ({a.get(i)} / {b.get(i)})' for i in differ)}" if differ else "")
        )
    print(f"load after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
