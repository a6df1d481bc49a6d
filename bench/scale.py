#!/usr/bin/env python
"""Scale-out on one machine: 4 targets x 4 seeded shards, three ways.

Run from the repository root with the project's venv (needs the dask extra)::

    python bench/scale.py                 # 3 interleaved rounds, 8000 cases per shard (~10 min)
    python bench/scale.py --quick         # 1 round, 2000 cases per shard (smoke test)

``one-by-one``  the 16 shards (:func:`assay.scale.shard.run_shard`) run one after
                another in this process (each forks its own campaign worker);
``ideal``       the same 16 shards split between one plain process per core (shard
                i in process i mod cores), each running its share one by one: what
                the cores give at all, with no coordination, right now;
``jobs``        ``run_campaign`` with ``--jobs 4`` and the same total case cap per
                target: 4 forked jobs at once per target, sharing its corpus folder;
``dask``        ``run_campaign_dask`` with 4 shards per target on the default
                ``distributed.LocalCluster`` (one in-process worker, a thread per
                core, each task forking its campaign worker), cluster start-up and
                shutdown included in the wall time;
``dask-procs``  the same on a LocalCluster of one single-threaded worker process
                per core (Dask's nanny gives those another hash seed, so each task
                runs in a fresh interpreter with the client's).

For each: wall time, total exec/s (all cases of all shards / wall time) and the size
of the corpus that ``assay merge-corpus`` makes of what the run produced.  Rounds
are interleaved (a b c, a b c, ...) and the table shows medians.  It also prints the
fixed costs a shard pays besides its campaign (project load, corpus snapshot, fork,
temporary folders), and the LocalCluster's start-up, which is what a larger cluster
amortises or multiplies.  The machine's load average is printed before and after:
on a shared machine it decides the result.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "examples"
#: The four targets (real stdlib parsers from examples/fuzz).
TARGETS = ("json_roundtrip", "toml_roundtrip", "url_split_roundtrip", "html_parser_rechunk")
#: Shards per target.
SHARDS = 4
#: Master seed of every run.
SEED = 12


def _targets():
    from assay.core.config import load_project
    from assay.harness.discovery import load_targets

    registry = load_targets(load_project(PROJECT))
    return [registry.get(n) for n in TARGETS]


def _options(work: Path, cases: int):
    from assay.engine.campaign import CampaignOptions

    return CampaignOptions(
        corpus_root=str(work / "corpus"),
        artifact_root=str(work / "artifacts"),
        max_cases=cases,
        seed=SEED,
        project_root=str(PROJECT),
        shrink_cases=64,
    )


def one_by_one(work: Path, cases: int) -> dict:
    from assay.engine.campaign import prepare
    from assay.scale.shard import apply_result, plan_shards, run_shard

    targets = _targets()
    options = _options(work, cases * SHARDS)
    prepare(targets, options)
    specs = plan_shards(str(PROJECT), targets, options, SEED, SHARDS)
    started = time.monotonic()
    total, overheads = 0, []
    max_lens = {t.name: t.max_len for t in targets}
    for spec in specs:
        t0 = time.monotonic()
        result = run_shard(spec)
        overheads.append(time.monotonic() - t0 - result.outcome["elapsed"])
        apply_result(result, options.corpus_root, options.artifact_root, max_lens[spec.target])
        total += result.outcome["cases"]
    return {"wall": time.monotonic() - started, "cases": total, "overhead": statistics.median(overheads)}


def ideal(work: Path, cases: int) -> dict:
    from assay.engine.campaign import prepare
    from assay.scale.shard import apply_result, plan_shards

    targets = _targets()
    options = _options(work, cases * SHARDS)
    prepare(targets, options)
    specs = plan_shards(str(PROJECT), targets, options, SEED, SHARDS)
    lanes = os.cpu_count() or 1
    started = time.monotonic()
    procs = []
    for k in range(lanes):
        given, taken = work / f"lane-{k}.in", work / f"lane-{k}.out"
        given.write_bytes(pickle.dumps(specs[k::lanes]))
        procs.append((subprocess.Popen([sys.executable, __file__, "--lane", str(given), str(taken)]), taken))
    results = []
    for proc, taken in procs:
        if proc.wait() != 0:
            raise SystemExit(f"lane failed (exit {proc.returncode})")
        results += pickle.loads(taken.read_bytes())
    wall = time.monotonic() - started
    max_lens = {t.name: t.max_len for t in targets}
    for result in results:
        apply_result(result, options.corpus_root, options.artifact_root, max_lens[result.target])
    return {"wall": wall, "cases": sum(r.outcome["cases"] for r in results)}


def lane(given: str, taken: str) -> int:
    """One ``ideal`` process: run the pickled specs one after another."""
    from assay.scale.shard import run_shard

    Path(taken).write_bytes(pickle.dumps([run_shard(spec) for spec in pickle.loads(Path(given).read_bytes())]))
    return 0


def jobs(work: Path, cases: int) -> dict:
    from assay.engine.campaign import run_campaign

    options = _options(work, cases * SHARDS)
    options.jobs = SHARDS
    started = time.monotonic()
    result = run_campaign(_targets(), options)
    return {"wall": time.monotonic() - started, "cases": sum(t.cases for t in result.targets)}


def dask(work: Path, cases: int, **cluster) -> dict:
    from assay.scale.dask_executor import dask_client, run_campaign_dask

    started = time.monotonic()
    with dask_client(None, **cluster) as client:
        up = time.monotonic() - started
        result, _ = run_campaign_dask(_targets(), _options(work, cases * SHARDS), shards=SHARDS, client=client)
        done = time.monotonic()
    return {
        "wall": time.monotonic() - started,
        "cases": sum(t.cases for t in result.targets),
        "startup": up,
        "close": time.monotonic() - done,
    }


def merged_size(work: Path) -> tuple[int, int, float]:
    from assay.scale.merge import merge_corpora

    t0 = time.monotonic()
    result = merge_corpora(work / "merged", [work / "corpus"], _targets())
    return (
        sum(t.entries_in for t in result.targets),
        sum(t.entries_out for t in result.targets),
        time.monotonic() - t0,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=8000, help="case cap per shard")
    parser.add_argument("--quick", action="store_true", help="1 round of 2000 cases per shard")
    parser.add_argument("--modes", help="comma-separated subset of the modes (one-by-one always runs)")
    parser.add_argument("--lane", nargs=2, metavar=("SPECS", "RESULTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.lane:
        return lane(*args.lane)
    if args.quick:
        args.rounds, args.cases = 1, 2000
    if os.environ.get("PYTHONHASHSEED") != "0":
        # As `assay fuzz` does: the same hash seed here and in the Dask workers, so the
        # three ways run exactly the same 16 schedules.
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    procs = {"processes": True, "n_workers": os.cpu_count() or 1, "threads_per_worker": 1}
    modes = {
        "one-by-one": one_by_one,
        "ideal": ideal,
        "jobs": jobs,
        "dask": dask,
        "dask-procs": lambda work, cases: dask(work, cases, **procs),
    }
    if args.modes:
        chosen = {"one-by-one", *args.modes.split(",")}
        modes = {m: fn for m, fn in modes.items() if m in chosen}
    rows: dict[str, list[dict]] = {m: [] for m in modes}
    load_before = os.getloadavg()
    print(
        f"{len(TARGETS)} targets x {SHARDS} shards, {args.cases} cases per shard, {args.rounds} round(s), "
        f"{os.cpu_count()} cores; load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}"
    )
    for r in range(args.rounds):
        for name, fn in modes.items():
            work = Path(tempfile.mkdtemp(prefix=f"assay-bench-scale-{name}-"))
            try:
                row = fn(work, args.cases)
                row["in"], row["out"], row["merge"] = merged_size(work)
                row["load"] = os.getloadavg()[0]
            finally:
                shutil.rmtree(work, ignore_errors=True)
            rows[name].append(row)
            print(
                f"  round {r + 1} {name:<10} wall {row['wall']:7.1f}s  {row['cases'] / row['wall']:8.0f} exec/s  "
                f"corpus {row['in']} -> merged {row['out']} ({row['merge']:.1f}s)  load {row['load']:.2f}",
                flush=True,
            )
    med = {
        m: {k: statistics.median(x[k] for x in rs) for k in ("wall", "cases", "in", "out", "merge")}
        for m, rs in rows.items()
    }
    # Ratios per round (each mode against the one-by-one run of the same round, minutes
    # apart at most), then their median: the load on a shared machine moves between rounds.
    ratio = {
        m: statistics.median(x["cases"] / x["wall"] / (b["cases"] / b["wall"]) for x, b in zip(rs, rows["one-by-one"]))
        for m, rs in rows.items()
    }
    of_ideal = "ideal" in rows
    print(f"\n{'mode':<12}{'wall s':>9}{'exec/s':>10}{'x (a)':>8}{'of ideal':>10}{'corpus':>8}{'merged':>8}")
    for m, v in med.items():
        rate = v["cases"] / v["wall"]
        share = f"{ratio[m] / ratio['ideal']:10.0%}" if of_ideal else f"{'':10}"
        print(f"{m:<12}{v['wall']:9.1f}{rate:10.0f}{ratio[m]:8.2f}{share}{v['in']:8.0f}{v['out']:8.0f}")
    d = rows.get("dask", []) + rows.get("dask-procs", [])
    print(
        f"\nfixed costs: per shard besides its campaign {statistics.median(x['overhead'] for x in rows['one-by-one']):.3f}s "
        "(project load, corpus snapshot, temp folders, fork)"
    )
    if d:
        print(
            f"LocalCluster start {statistics.median(x['startup'] for x in d):.2f}s, "
            f"close {statistics.median(x['close'] for x in d):.2f}s"
        )
    load_after = os.getloadavg()
    print(f"load average after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
