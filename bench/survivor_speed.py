#!/usr/bin/env python
"""Survivor fuzzing's cost per case against a plain campaign of the same target (issue 37's speed).

Run from the repository root with the project's venv::

    python bench/survivor_speed.py                  # 2,000 cases, seeds 1-3
    python bench/survivor_speed.py --cases 500 --seeds 1

The target is ``shlex.split`` on the decoded input (the standard library's own
tokenizer, pure Python).  The survivor is an *equivalent* mutant of
``shlex.shlex.read_token``: a real mutant of it whose replacement is the text it
replaces, compiled and swapped in the twin as any mutant is.  No input tells it
apart, so every campaign runs its whole case cap and the time is the differential
loop's alone: the original in the engine's worker, the mutant in its twin (watching
the mutated function's lines), compared per case.

Per seed, interleaved: a plain campaign of the target (``run_campaign``, as ``assay
fuzz``) and the survivor's campaign (``fuzz_survivor``, as ``assay mutant --fuzz
on``), both with ``--cases`` generated cases after the seeds, each timed by wall
clock and by the CPU of this process and its children.  The table shows the
medians per case and the ratio survivor / plain; ``start`` is a campaign with one
generated case (the start-up both pay per campaign: forks, the seeds, their
analysis).  Wall time on a shared machine is noisy: the CPU columns are the steadier
ones.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

SEEDS = [b"a b c", b"'quoted arg' \"double\" plain", b"x\\ y # comment", b"echo $HOME > out.txt", b"a'b'c\"d\"e"]


def split(data: bytes) -> list[str]:
    """The target: ``shlex.split`` of the decoded input (an unclosed quote raises ValueError)."""
    return shlex.split(data.decode("utf-8", "replace"))


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def equivalent_mutant():
    """A mutant of ``shlex.shlex.read_token`` whose replacement is its own text, and its patch."""
    from assay.mutant.apply import Patch
    from assay.mutant.discover import mutants_in_file

    path = Path(shlex.__file__)
    text = path.read_text("utf-8")
    lines = text.splitlines(keepends=True)
    for m in mutants_in_file(path, path.parent, vars(shlex), text):
        e = m.edit
        if m.unit == "shlex.read_token" and e.line == e.end_line:
            same = lines[e.line - 1].encode()[e.col : e.end_col].decode()
            mutant = replace(m, edit=replace(e, replacement=same, description=f"{same} -> {same}"))
            return mutant, Patch.build(mutant, text)
    raise SystemExit("no single-line mutant of shlex.read_token found")


def plain(target, cases: int, seed: int, tmp: str) -> tuple[float, float, int]:
    from assay.engine.campaign import CampaignOptions, run_campaign

    root = tempfile.mkdtemp(dir=tmp)
    c0, t0 = _cpu(), time.perf_counter()
    result = run_campaign(
        [target], CampaignOptions(corpus_root=root + "/corpus", artifact_root=root + "/art", max_cases=cases, seed=seed)
    )
    return time.perf_counter() - t0, _cpu() - c0, result.targets[0].cases


def survivor(target, mutant, patch, cases: int, seed: int, tmp: str) -> tuple[float, float, int]:
    from assay.mutant.differential import SURVIVED, FuzzOptions, fuzz_survivor

    root = tempfile.mkdtemp(dir=tmp)
    options = FuzzOptions(artifact_root=root + "/art", seed=seed, cases=cases)
    c0, t0 = _cpu(), time.perf_counter()
    evidence = fuzz_survivor(mutant, patch, [target], options)
    took, cpu = time.perf_counter() - t0, _cpu() - c0
    if evidence.status != SURVIVED:
        raise SystemExit(f"the equivalent mutant did not survive: {evidence.status} {evidence.detail}")
    return took, cpu, evidence.cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000, help="generated cases per campaign (default 2000)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N, one round each (default 3)")
    args = ap.parse_args(argv)

    from assay.harness.define import make_target

    target = make_target(
        split, name="shlex_split", sources=[shlex.__file__], seeds=SEEDS, expected=(ValueError,), max_len=256
    )
    mutant, patch = equivalent_mutant()
    rows: dict[str, list[tuple[float, float]]] = {k: [] for k in ("plain", "survivor", "plain start", "survivor start")}
    with tempfile.TemporaryDirectory(prefix="assay-survivor-speed-") as tmp:
        for seed in range(1, args.seeds + 1):
            for name, run in (
                ("plain", lambda n, seed=seed: plain(target, n, seed, tmp)),
                ("survivor", lambda n, seed=seed: survivor(target, mutant, patch, n, seed, tmp)),
            ):
                took, cpu, ran = run(args.cases)
                rows[name].append((1000 * took / ran, 1000 * cpu / ran))
                took, cpu, _ = run(1)
                rows[f"{name} start"].append((took, cpu))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
    print(
        f"# survivor fuzzing against a plain campaign: shlex.split, {mutant.description!r} in shlex.read_token "
        f"(equivalent); {args.cases:,} cases, seeds 1-{args.seeds}, medians; {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print("| | plain | survivor | survivor / plain |")
    print("|---|---|---|---|")
    for label, key, unit in (("ms per case, wall", 0, ""), ("ms per case, CPU", 1, "")):
        p, s = med["plain"][key], med["survivor"][key]
        print(f"| {label} | {p:.3f}{unit} | {s:.3f}{unit} | {s / p:.2f} |")
    for label, key in (("start-up s, wall", 0), ("start-up s, CPU", 1)):
        p, s = med["plain start"][key], med["survivor start"][key]
        print(f"| {label} | {p:.2f} | {s:.2f} | {s / p:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
