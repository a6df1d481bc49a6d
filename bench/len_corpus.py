#!/usr/bin/env python
"""Kept corpus length and edges at a fixed case count, two source trees side by side (issue 40 item 1).

Run from the repository root with the project's venv::

    python bench/len_corpus.py --tree main=/path/to/main/src --tree new=src --cases 10000 --seeds 1,2,3

Each (harness, seed) runs ``assay fuzz HARNESS -runs=N -seed=S --report r.json`` once per
tree, the trees in turn, in a fresh folder, with ``PYTHONPATH`` set to the tree.  It reports
the edges of the report and the mean and median length of the corpus the campaign kept
(every file under ``.assay/corpus``).  Both are functions of the seed and the case count, so
the machine's load changes only the wall time (printed for reference, not compared).
The harnesses: the three of ``bench/harnesses/`` and the jinja2 lexer one of
``tests/harnesses/wild/``.
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

ROOT = Path(__file__).resolve().parents[1]
HARNESSES = {
    "sqlparse": ROOT / "bench" / "harnesses" / "fuzz_parse.py",
    "tomlkit": ROOT / "bench" / "harnesses" / "fuzz_parser.py",
    "email-validator": ROOT / "bench" / "harnesses" / "fuzz_validator.py",
    "jinja2-lexer": ROOT / "tests" / "harnesses" / "wild" / "jinja2" / "fuzz_env_jinja_lexer.py",
}


def one(src: str, harness: Path, cases: int, seed: int) -> tuple[int, list[int], float]:
    """(edges, kept corpus lengths, wall seconds) of one campaign with ``src`` on the path."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
        cmd = [sys.executable, "-m", "assay", "fuzz", str(harness), f"-runs={cases}", f"-seed={seed}"]
        t0 = time.perf_counter()
        subprocess.run([*cmd, "--report", "r.json"], cwd=tmp, env=env, capture_output=True, check=False)
        wall = time.perf_counter() - t0
        (outcome,) = json.loads(Path(tmp, "r.json").read_text())["targets"].values()
        lengths = [f.stat().st_size for f in Path(tmp, ".assay", "corpus").rglob("*") if f.is_file()]
        return outcome["coverage"]["edges"], lengths, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="NAME=SRC_DIR (repeatable, in the order shown)")
    ap.add_argument("--harness", action="append", choices=sorted(HARNESSES), help="(repeatable) default: all four")
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seeds", default="1,2,3")
    args = ap.parse_args()
    trees = [t.split("=", 1) for t in args.tree]
    seeds = [int(s) for s in args.seeds.split(",")]
    for name in args.harness or list(HARNESSES):
        rows: dict[str, list[tuple[int, list[int], float]]] = {t: [] for t, _ in trees}
        for seed in seeds:
            for tree, src in trees:
                rows[tree].append(one(src, HARNESSES[name], args.cases, seed))
        for tree, _ in trees:
            got = rows[tree]
            edges = " ".join(f"{e:4}" for e, _, _ in got)
            means = " ".join(f"{statistics.fmean(ls) if ls else 0:6.1f}" for _, ls, _ in got)
            medians = " ".join(f"{statistics.median(ls) if ls else 0:5.1f}" for _, ls, _ in got)
            total = sum(e for e, _, _ in got)
            print(f"{name:16} {tree:8} edges {edges} (sum {total:5})  mean B {means}  median B {medians}")


if __name__ == "__main__":
    main()
