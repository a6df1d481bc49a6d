"""Native campaigns past a known crash that keeps coming back: what a restart costs.

The planted target ``two`` (tests/native/planted) has a shallow bug libFuzzer hits within a
few hundred cases of every start and a second one behind a magic.  Each repeat runs the
same case-capped campaign (same seed, fresh corpus, so the very same inputs) twice, in
alternating order: with libFuzzer's runs symbolizing their reports (how campaigns ran
before) and without (a known bug is then known by its stack offsets; see
``assay.native.campaign.SYMBOLIZE_CAMPAIGN_RUNS``).  Printed per repeat and as medians:
wall seconds, restarts after a known bug, and the bugs found.  ``--seconds S`` runs a
time-bounded campaign instead and prints how many cases it ran (cases then differ).

    .venv/bin/python bench/native_refound.py --cases 20000 --repeats 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import assay.native.campaign as campaign
from assay.core.config import load_project
from assay.native.build import ensure_build

PLANTED = Path(__file__).resolve().parents[1] / "tests" / "native" / "planted"


def once(project, symbolize: bool, cases: int | None, seconds: float | None, seed: int, work: Path):
    campaign.SYMBOLIZE_CAMPAIGN_RUNS = symbolize
    options = campaign.NativeOptions(
        corpus_root=str(work / "corpus"),
        artifact_root=str(work / "artifacts"),
        project_root=str(project.root),
        max_cases=cases,
    )
    started = time.monotonic()
    outcome = campaign.run_native_target(project.native["two"], options, master_seed=seed, tseed=seed, budget=seconds)
    return time.monotonic() - started, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=None, help="a time budget instead of the case cap")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cases = None if args.seconds else args.cases
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "planted"
        shutil.copytree(PLANTED, root, ignore=shutil.ignore_patterns(".assay"))
        project = load_project(root)
        ensure_build(project.native["two"], root)
        walls: dict[bool, list[float]] = {True: [], False: []}
        for n in range(args.repeats):
            for symbolize in (True, False) if n % 2 == 0 else (False, True):
                work = Path(tempfile.mkdtemp(dir=tmp))
                wall, o = once(project, symbolize, cases, args.seconds, args.seed, work)
                walls[symbolize].append(wall)
                bugs = sorted(f.signature.split("@")[1].split("<")[0] for f in o.findings)
                print(
                    f"repeat {n + 1} symbolize={int(symbolize)}: {wall:6.1f} s wall, {o.cases} cases, "
                    f"{o.refound_restarts} restarts after a known bug, {o.restarts} after a new one, bugs {bugs}",
                    flush=True,
                )
        for symbolize in (True, False):
            print(f"median symbolize={int(symbolize)}: {statistics.median(walls[symbolize]):.1f} s wall")


if __name__ == "__main__":
    main()
