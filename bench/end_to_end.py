#!/usr/bin/env python
"""End to end: ``assay fuzz`` against ``atheris.Fuzz`` on the same targets and seeds.

Run from the repository root with the project's venv (atheris installed)::

    python bench/end_to_end.py              # 3 runs of 200k/20k executions, then 60 s each
    python bench/end_to_end.py --quick      # 1 run, fewer executions, 20 s each
    python bench/throughput.py --end-to-end # the same, from the throughput benchmark
    python bench/end_to_end.py --skip-executions --time-runs 3   # the wall-time table, medians of seeds 1-3

Two measurements per target, each tool in its own process tree:

``fixed executions``  both tools run N generated inputs (assay ``max_cases=N``,
                      libFuzzer ``-runs=N``); exec/s is N over the wall time of the run
                      (startup included for both); medians of ``--runs`` interleaved runs.
``fixed wall time``   both run T seconds (assay ``budget``, libFuzzer
                      ``-max_total_time``) writing their corpus; afterwards every corpus
                      entry is replayed, in the order it was written, through ONE
                      coverage measurement (assay's ``sys.monitoring`` feedback on the
                      target's sources: lines + branch edges), so the edge counts at
                      T/6, T/2 and T are in the same units for both tools.

Both tools call the target through the same wrapper, which counts every executed
input's length in log2 buckets and the time spent inside the target, in a shared
file (so the counts survive the forked worker and the libFuzzer process).  The
wrapper catches every exception: this benchmark measures speed and coverage, not
what each tool does with a crash.  ``in-target`` is the share of the wall time spent
inside the target: the engine's throughput relative to a bare loop over the same
inputs (an upper bound: feedback callbacks count as target time).
"""

from __future__ import annotations

import argparse
import mmap
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

#: Length buckets: [0], [1], [2-3], [4-7], ... [2**15, ...).
BUCKETS = 17
#: Shared counters: the buckets, then executed count, then nanoseconds inside the target.
_SLOTS = BUCKETS + 2
MAX_LEN = 4096


def trivial(data: bytes) -> int:
    if len(data) > 3 and data[0] == 1:
        return 1
    return 0


def specs() -> dict[str, dict[str, Any]]:
    from stdlib_targets import SPECS

    out = {"trivial": {"fn": trivial, "sources": (str(Path(__file__).resolve()),), "seeds": (b"hello",), "n": 200_000}}
    for s in SPECS:
        if s.name in ("json.loads", "tomllib.loads", "urllib.parse"):
            out[s.name] = {"fn": s.fn, "sources": s.sources, "seeds": s.seeds, "n": 20_000}
    return out


class Counters:
    """The wrapper's shared counters (a file-backed mmap of 64-bit slots)."""

    def __init__(self, path: str) -> None:
        self.path = path
        if not os.path.exists(path):
            with open(path, "wb") as fh:
                fh.write(bytes(8 * _SLOTS))
        self._fh = open(path, "r+b")
        self.mem = mmap.mmap(self._fh.fileno(), 8 * _SLOTS)
        self.slots = memoryview(self.mem).cast("Q")

    def wrap(self, fn: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
        slots, clock = self.slots, time.perf_counter_ns
        last = BUCKETS - 1

        def wrapped(data: bytes) -> Any:
            b = len(data).bit_length()
            slots[b if b < last else last] += 1
            t0 = clock()
            try:
                return fn(data)
            except Exception:  # noqa: BLE001 - speed and coverage, not crash handling
                return None
            finally:
                slots[BUCKETS + 1] += clock() - t0
                slots[BUCKETS] += 1

        wrapped.__name__ = getattr(fn, "__name__", "target").replace(".", "_")
        return wrapped

    def read(self) -> tuple[list[int], int, float]:
        s = list(self.slots)
        return s[:BUCKETS], s[BUCKETS], s[BUCKETS + 1] / 1e9


def _resolve_sources(sources) -> list[str]:
    from assay.core.target import resolve_source
    from assay.harness.define import make_target

    t = make_target(trivial, name="x")
    return [resolve_source(s, t, None) for s in sources]


# -- the two tools ----------------------------------------------------------------------------


def run_assay(
    name: str, spec: dict, counters: str, corpus: str, *, cases: int | None, budget: float | None, seed: int
) -> dict:
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.harness.define import make_target

    fn = Counters(counters).wrap(spec["fn"])
    target = make_target(
        fn, name=name.replace(".", "_"), sources=spec["sources"], seeds=spec["seeds"], max_len=MAX_LEN, timeout=10.0
    )
    t0 = time.perf_counter()
    result = run_campaign(
        [target],
        CampaignOptions(corpus_root=corpus, artifact_root=corpus + "-art", max_cases=cases, budget=budget, seed=seed),
    )
    wall = time.perf_counter() - t0
    out = result.targets[0]
    return {"execs": out.cases, "wall": wall, "start": t0, "corpus_dir": os.path.join(corpus, target.name)}


ATHERIS_CHILD = r"""
import sys, time
sys.path[:0] = {paths!r}
import atheris, gc, types
import end_to_end as e2e
from assay.feedback.scope import Scope
spec = e2e.specs()[{name!r}]
scope = Scope(e2e._resolve_sources(spec["sources"]))
for f in [o for o in gc.get_objects() if isinstance(o, types.FunctionType) and scope.contains(o.__code__.co_filename)]:
    try:
        atheris.instrument_func(f)
    except Exception:
        pass
fn = e2e.Counters({counters!r}).wrap(spec["fn"])
def TestOneInput(data):
    fn(data)
atheris.Setup([sys.argv[0], *{argv!r}], TestOneInput)
atheris.Fuzz()
"""


def run_atheris(
    name: str, counters: str, corpus: str, seeds_dir: str, *, cases: int | None, budget: float | None, seed: int
) -> dict:
    os.makedirs(corpus, exist_ok=True)
    argv = [corpus, seeds_dir, f"-seed={seed}", f"-max_len={MAX_LEN}", "-timeout=10", "-print_final_stats=1"]
    argv.append(f"-runs={cases}" if cases is not None else f"-max_total_time={int(budget)}")
    code = ATHERIS_CHILD.format(paths=[str(HERE), str(HERE.parent / "src")], name=name, counters=counters, argv=argv)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=(budget or 600) + 120)
    wall = time.perf_counter() - t0
    execs = None
    for line in proc.stderr.splitlines():
        if line.startswith("stat::number_of_executed_units:"):
            execs = int(line.split(":")[-1])
    if execs is None:
        raise RuntimeError(f"atheris run failed:\n{proc.stderr[-2000:]}")
    return {"execs": execs, "wall": wall, "start": t0, "corpus_dir": corpus}


# -- the common coverage measurement -----------------------------------------------------------


MEASURE_CHILD = r"""
import sys, os, json
sys.path[:0] = {paths!r}
import end_to_end as e2e
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
spec = e2e.specs()[{name!r}]
fb = SysmonFeedback(Scope(e2e._resolve_sources(spec["sources"])))
fb.start()
fn = spec["fn"]
def run(data):
    try:
        fn(data)
    except BaseException:
        pass
for s in spec["seeds"]:
    run(s)
files = sorted((os.path.getmtime(p), p) for p in {files!r})
out = []
cutoffs = {cutoffs!r}
i = 0
for cut in cutoffs:
    while i < len(files) and files[i][0] - {start!r} <= cut:
        with open(files[i][1], "rb") as fh:
            run(fh.read())
        i += 1
    c = fb.counts()
    out.append(c["edges"] + c["lines"])
print(json.dumps(out))
"""


def measure(name: str, corpus_dir: str, start_wall: float, cutoffs: list[float]) -> list[int]:
    """Lines + edges reached by the corpus entries written within each cutoff (seconds)."""
    import json

    files = [os.path.join(corpus_dir, f) for f in os.listdir(corpus_dir)] if os.path.isdir(corpus_dir) else []
    code = MEASURE_CHILD.format(
        paths=[str(HERE), str(HERE.parent / "src")], name=name, files=files, cutoffs=cutoffs, start=start_wall
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the tables -------------------------------------------------------------------------------------


def length_summary(hist: list[int]) -> str:
    total = sum(hist) or 1
    acc, median = 0, 0
    for b, n in enumerate(hist):
        acc += n
        if acc * 2 >= total:
            median = b
            break
    long_share = sum(hist[11:]) / total  # >= 1024 bytes
    top = (1 << median) - 1 if median else 0
    return f"median <= {top} B, >=1 KB {100 * long_share:.1f}%"


def one(tool: str, name: str, spec: dict, tmp: str, k: int, **kw) -> dict:
    counters = os.path.join(tmp, f"{tool}-{k}.counters")
    corpus = os.path.join(tmp, f"{tool}-{k}-corpus")
    if tool == "assay":
        res = run_assay(name, spec, counters, corpus, **kw)
    else:
        seeds_dir = os.path.join(tmp, "seeds")
        os.makedirs(seeds_dir, exist_ok=True)
        for i, s in enumerate(spec["seeds"]):
            Path(seeds_dir, f"seed{i}").write_bytes(s)
        res = run_atheris(name, counters, corpus, seeds_dir, **kw)
    hist, count, in_target = Counters(counters).read()
    res.update(hist=hist, count=count, in_target=in_target)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--target", action="append", default=None)
    ap.add_argument("--skip-time", action="store_true", help="only the fixed-executions table")
    ap.add_argument("--skip-executions", action="store_true", help="only the fixed-wall-time table")
    ap.add_argument(
        "--time-runs", type=int, default=1, help="seeds per tool in the fixed-wall-time table (medians; default 1)"
    )
    args = ap.parse_args(argv)
    runs = args.runs or (1 if args.quick else 3)
    seconds = args.seconds or (20.0 if args.quick else 60.0)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed (pip install atheris): nothing to compare with", file=sys.stderr)
        return 2
    all_specs = specs()
    names = args.target or list(all_specs)
    print(f"# assay fuzz vs atheris.Fuzz, end to end ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})\n")
    if not args.skip_executions:
        fixed_executions(names, all_specs, runs, args.quick)
    if not args.skip_time:
        fixed_time(names, all_specs, seconds, args.time_runs)
    return 0


def fixed_executions(names: list[str], all_specs: dict, runs: int, quick: bool) -> None:
    print("## fixed executions (medians of %d runs, interleaved)\n" % runs)
    print(
        "| target | N | assay exec/s | atheris exec/s | assay/atheris | assay in-target | atheris in-target | assay lengths | atheris lengths |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        spec = all_specs[name]
        n = spec["n"] // (4 if quick else 1)
        got: dict[str, list[dict]] = {"assay": [], "atheris": []}
        with tempfile.TemporaryDirectory(prefix="assay-e2e-") as tmp:
            for k in range(runs):
                for tool in ("assay", "atheris"):
                    got[tool].append(one(tool, name, spec, tmp, k, cases=n, budget=None, seed=k + 1))
        rate = {t: statistics.median(r["execs"] / r["wall"] for r in got[t]) for t in got}
        share = {t: statistics.median(r["in_target"] / r["wall"] for r in got[t]) for t in got}
        hist = {t: [sum(h) for h in zip(*(r["hist"] for r in got[t]))] for t in got}
        print(
            f"| {name} | {n:,} | {rate['assay']:,.0f} | {rate['atheris']:,.0f} | {rate['assay'] / rate['atheris']:.2f} "
            f"| {100 * share['assay']:.0f}% | {100 * share['atheris']:.0f}% "
            f"| {length_summary(hist['assay'])} | {length_summary(hist['atheris'])} |",
            flush=True,
        )


def fixed_time(names: list[str], all_specs: dict, seconds: float, time_runs: int) -> None:
    cuts = [seconds / 6, seconds / 2, seconds]
    what = "one run" if time_runs == 1 else f"medians of seeds 1-{time_runs}, tools interleaved"
    print(f"\n## fixed wall time ({seconds:.0f} s each, {what}): lines + edges of each corpus, one measurement\n")
    print(
        "| target | tool | execs | exec/s | " + " | ".join(f"@{c:.0f}s" for c in cuts) + " | lengths | per seed @end |"
    )
    print("|---|---|---|---|" + "---|" * len(cuts) + "---|---|")
    for name in names:
        spec = all_specs[name]
        got: dict[str, list[tuple[dict, list[int]]]] = {"assay": [], "atheris": []}
        for k in range(time_runs):
            with tempfile.TemporaryDirectory(prefix="assay-e2e-") as tmp:
                for tool in ("assay", "atheris"):
                    res = one(tool, name, spec, tmp, k, cases=None, budget=seconds, seed=k + 1)
                    # Corpus files carry wall-clock mtimes; the run started at res["start"] on perf_counter.
                    start_wall = time.time() - (time.perf_counter() - res["start"])
                    got[tool].append((res, measure(name, res["corpus_dir"], start_wall, cuts)))
        for tool, runs in got.items():
            execs = statistics.median(r["execs"] for r, _ in runs)
            rate = statistics.median(r["execs"] / r["wall"] for r, _ in runs)
            cov = [statistics.median(c[i] for _, c in runs) for i in range(len(cuts))]
            hist = [sum(h) for h in zip(*(r["hist"] for r, _ in runs))]
            print(
                f"| {name} | {tool} | {execs:,.0f} | {rate:,.0f} | "
                + " | ".join(f"{c:g}" for c in cov)
                + f" | {length_summary(hist)} | {', '.join(str(c[-1]) for _, c in runs)} |",
                flush=True,
            )


if __name__ == "__main__":
    raise SystemExit(main())
