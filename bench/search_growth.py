#!/usr/bin/env python
"""Corpus growth and coverage of the search features on the real example targets.

Run from the repository root with the project's venv::

    PYTHONPATH=src .venv/bin/python bench/search_growth.py                 # 5,000 cases, seed 1
    PYTHONPATH=src .venv/bin/python bench/search_growth.py --cases 20000 --seeds 1,2,3

For every target of ``examples/fuzz`` it runs the same capped campaign (same seed,
same cases) in four configurations and prints, per target, the corpus entries
added, the edges, lines and features reached, and cases per second:

``default``   as shipped: instruction-split branch feedback, value profile on;
``no-vp``     the value profile off (``CmpLog.value_profile = False``);
``no-split``  the branch feedback as before the instruction split (one-way
              sites retired after ``ONE_WAY_CAP`` hits, no re-arm on news);
``neither``   both off.

The value profile is on by default only if its bounds hold here: the corpus it
adds stays a small fraction of what coverage adds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from assay.core.config import load_project  # noqa: E402
from assay.engine.campaign import CampaignOptions, run_campaign  # noqa: E402
from assay.feedback.cmplog import CmpLog  # noqa: E402
from assay.feedback.sysmon import SysmonFeedback  # noqa: E402
from assay.harness.discovery import load_targets  # noqa: E402

CONFIGS = {
    "default": (True, True),
    "no-vp": (False, True),
    "no-split": (True, False),
    "neither": (False, False),
}


def run_one(target, cases: int, seed: int, vp: bool, split: bool) -> dict:
    CmpLog.value_profile = vp
    SysmonFeedback.split_by_instruction = split
    SysmonFeedback.rearm_on_news = split
    try:
        with tempfile.TemporaryDirectory() as tmp:
            options = CampaignOptions(
                corpus_root=f"{tmp}/c", artifact_root=f"{tmp}/a", max_cases=cases, seed=seed, shrink_cases=64
            )
            t = run_campaign([target], options).targets[0]
    finally:
        CmpLog.value_profile = True
        SysmonFeedback.split_by_instruction = SysmonFeedback.rearm_on_news = True
    return {
        "corpus": len(t.corpus_additions),
        "edges": t.edges,
        "lines": t.lines,
        "features": t.features,
        "rate": t.execs_per_sec,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--targets", default="", help="comma-separated target names (default: all of examples/fuzz)")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    args = ap.parse_args(argv)
    registry = load_targets(load_project(ROOT / "examples"))
    names = [n for n in args.targets.split(",") if n] or sorted(t.name for t in registry.all())
    configs = [c for c in args.configs.split(",") if c]
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"search_growth: {args.cases:,} cases, seeds {seeds}; medians over seeds")
    print(f"{'target':<24} " + "  ".join(f"{c + ' corpus/edges/lines/feat':>34} {'c/s':>6}" for c in configs))
    for name in names:
        target = registry.get(name)
        cells = []
        for c in configs:
            vp, split = CONFIGS[c]
            rows = [run_one(target, args.cases, s, vp, split) for s in seeds]
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            cells.append(
                f"{med['corpus']:>7.0f}/{med['edges']:>6.0f}/{med['lines']:>6.0f}/{med['features']:>5.0f}"
                f"{'':>10} {med['rate']:>6.0f}"
            )
        print(f"{name:<24} " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
