#!/usr/bin/env python
"""assay against assay on real harnesses: two source trees, interleaved per seed (issue 40 item 1).

Run from the repository root with the project's venv::

    python bench/real_ab.py --harness-root OSS_FUZZ --tree base=/path/to/base/src --tree new=src \\
        --harness tomlkit --harness sqlparse --seeds 1,2,3 --seconds 60

Each (harness, seed) runs ``assay fuzz`` once per tree, the trees in turn (their order alternating
with the seed), through :func:`real_harnesses.one`: the same command, corpus replay and coverage
as ``bench/real_harnesses.py``, without atheris.  One line per run, with the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_harnesses as rh


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--harness-root", type=Path, required=True, help="a checkout of google/oss-fuzz")
    ap.add_argument("--tree", action="append", required=True, help="NAME=SRC_DIR (repeatable)")
    ap.add_argument("--harness", action="append", choices=sorted(rh.HARNESSES), required=True)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    trees = [t.split("=", 1) for t in args.tree]
    for name in args.harness:
        path, _, packages = rh.HARNESSES[name]
        harness = (args.harness_root / path).resolve()
        for i, seed in enumerate(int(s) for s in args.seeds.split(",")):
            for tree, src in trees if i % 2 == 0 else trees[::-1]:
                os.environ["PYTHONPATH"] = os.path.abspath(src)
                run = rh.one("assay", sys.executable, harness, packages, args.seconds, seed)
                print(f"{tree:8} load {os.getloadavg()[0]:4.1f} {rh._line(name, seed, 'assay', run)}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
