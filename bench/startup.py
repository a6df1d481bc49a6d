#!/usr/bin/env python
"""A campaign's start-up: ``assay fuzz`` with the twin cache off against a warm one.

Run from the repository root with the project's venv::

    python bench/startup.py                       # four example targets, 1 and 200 cases, 5 rounds
    python bench/startup.py --target email_address_header --cases 1 --rounds 9

Each run is the whole command a user types, in a fresh process, into fresh corpus
and artifact folders: ``assay fuzz --project examples --fuzz-target T --fuzz-cases N
--fuzz-seed 1``.  ``off`` runs it with ``ASSAY_CACHE_DIR=`` (comparison twins compiled
from source, as before the cache); ``warm`` with a cache folder one earlier run
filled; with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped), as
a user has it.  Rounds interleave the two; the table gives medians of the wall times and,
for reference, ``CmpLog.attach`` alone in this process (compiled, then from the cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

TARGETS = ("email_address_header", "json_roundtrip", "toml_roundtrip", "url_split_roundtrip")


def run_fuzz(target: str, cases: int, cache: str, work: str) -> float:
    """Wall seconds of one ``assay fuzz`` run of ``target`` with ``ASSAY_CACHE_DIR=cache``."""
    out = tempfile.mkdtemp(dir=work)
    cmd = [
        sys.executable,
        "-m",
        "assay",
        "fuzz",
        "--project",
        str(ROOT / "examples"),
        "--fuzz-target",
        target,
        "--fuzz-cases",
        str(cases),
        "--fuzz-seed",
        "1",
        "--fuzz-corpus",
        out + "/corpus",
        "--fuzz-artifacts",
        out + "/artifacts",
    ]
    t0 = time.perf_counter()
    # Bytecode caching on, as a user has it (some machines turn it off for every process).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    r = subprocess.run(cmd, capture_output=True, text=True, env={**env, "ASSAY_CACHE_DIR": cache}, timeout=600)
    took = time.perf_counter() - t0
    if r.returncode not in (0, 1):  # 1: the run found a bug, as the email targets do
        raise SystemExit(f"assay fuzz failed ({r.returncode}): {r.stderr[-2000:]}")
    return took


def attach_ms(target: str, cache_dir: str) -> tuple[float, float]:
    """``CmpLog.attach`` for ``target``'s sources in this process: compiled, then from a warm cache."""
    from assay.core.config import load_project
    from assay.core.target import resolve_source
    from assay.feedback.cmplog import CmpLog
    from assay.feedback.scope import Scope
    from assay.feedback.twincache import TwinCache
    from assay.harness.discovery import load_targets

    t = load_targets(load_project(ROOT / "examples")).get(target)
    contains = Scope([resolve_source(s, t, None) for s in t.sources]).contains
    times = []
    for cache in (TwinCache(None), TwinCache(cache_dir), TwinCache(cache_dir)):
        log = CmpLog(contains)
        log.twin_cache = cache
        t0 = time.perf_counter()
        log.attach()
        times.append(time.perf_counter() - t0)
    return times[0] * 1000, times[2] * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", action="append", default=None)
    ap.add_argument("--cases", type=int, action="append", default=None, help="cases per run (default: 1 and 200)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    print(
        f"# assay fuzz start-up, twin cache off against warm ({os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}; medians of {args.rounds} interleaved rounds)\n"
    )
    print("| target | cases | off ms | warm ms | saved ms | warm/off | attach ms: compiled / cached |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="assay-startup-") as work:
        for target in args.target or TARGETS:
            cache = tempfile.mkdtemp(dir=work)
            compiled, cached = attach_ms(target, tempfile.mkdtemp(dir=work))
            for cases in args.cases or (1, 200):
                run_fuzz(target, cases, cache, work)  # fills the cache (and warms the page cache for both)
                off, warm = [], []
                for _ in range(args.rounds):
                    off.append(run_fuzz(target, cases, "", work))
                    warm.append(run_fuzz(target, cases, cache, work))
                o, w = statistics.median(off) * 1000, statistics.median(warm) * 1000
                print(
                    f"| {target} | {cases:,} | {o:.0f} | {w:.0f} | {o - w:.0f} | {w / o:.2f} "
                    f"| {compiled:.1f} / {cached:.1f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
