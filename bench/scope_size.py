#!/usr/bin/env python
"""Does a big library in the coverage scope slow the fuzzing loop? (issue 39 item 1, issue 42 item 6)

Run from the repository root with the project's venv::

    python bench/scope_size.py                 # 5 rounds of 20,000 cases, seed 1
    python bench/scope_size.py --rounds 3 --cases 5000

One harness imports dask, distributed and schemathesis (over 900 Python files, a few
hundred of them imported) and fuzzes ``dask.utils.parse_bytes`` and
``parse_timedelta``.  The same campaign (same seed, same case cap) runs under two
scopes, interleaved round by round:

* ``unwatched``: ``--sources`` the harness file alone (the libraries out of scope);
* ``narrow``: ``--sources`` the one file the target runs (``dask/utils.py``);
* ``default``: the default scope, every imported package watched (dask, distributed,
  schemathesis).

Scope is decided once per code object (``PY_START``, then ``DISABLE``), so the
modules the inputs never run cost nothing in the loop; the work done ahead of a
run for every live in-scope function (edge splitting, comparison twins, constants)
is held to the scope's leading entries (:meth:`assay.feedback.scope.Scope.eager`).
Printed: how many modules of the watched libraries the harness's imports load and how
many Python files they install; per scope, the median exec/s the campaign reports and
the median wall time of the whole command (start-up and the scope check after the run
included); and default against the others, as a ratio of medians and as the median of
per-round ratios.
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

HARNESS = """\
import dask
import dask.utils
import distributed
import schemathesis

import assay


@assay.target(expected=(ValueError, TypeError, KeyError))
def sizes(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    dask.utils.parse_bytes(text)
    dask.utils.parse_timedelta(text)
"""


def run(folder: Path, label: str, cases: int, seed: int, extra: list[str]) -> tuple[float, float, int]:
    """(exec/s the report gives, wall seconds of the command, edges) of one campaign."""
    report = folder / f"{label}.json"
    corpus = folder / f"corpus-{label}-{time.monotonic_ns()}"
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "assay", "fuzz", str(folder / "fuzz_sizes.py"), "--fuzz-cases", str(cases)]
        + ["--fuzz-seed", str(seed), "--fuzz-corpus", str(corpus), "--report", str(report), *extra],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    wall = time.monotonic() - started
    if r.returncode not in (0, 1):
        raise SystemExit(f"{label}: assay fuzz failed:\n{r.stderr}")
    [outcome] = json.loads(report.read_text())["targets"].values()
    return outcome["execs_per_sec"], wall, outcome["coverage"]["edges"]


LIBRARIES = ("dask", "distributed", "schemathesis")


def library_size() -> tuple[int, int]:
    """(modules of the watched libraries the harness's imports load, their Python files installed)."""
    probe = (
        "import importlib, pathlib, sys\n"
        f"libs = {LIBRARIES!r}\n"
        "import dask.utils\n"
        "for name in libs: importlib.import_module(name)\n"
        "loaded = sum(1 for m in list(sys.modules) if m.split('.')[0] in libs)\n"
        "files = sum(len(list(pathlib.Path(sys.modules[n].__file__).parent.rglob('*.py'))) for n in libs)\n"
        "print(loaded, files)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    import dask.utils

    narrow = ["--sources", dask.utils.__file__]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "fuzz_sizes.py").write_text(HARNESS)
        scopes = {"unwatched": ["--sources", str(folder / "fuzz_sizes.py")], "narrow": narrow, "default": []}
        results: dict[str, list[tuple[float, float, int]]] = {label: [] for label in scopes}
        for _ in range(args.rounds):
            for label, extra in scopes.items():
                results[label].append(run(folder, label, args.cases, args.seed, extra))
    loaded, files = library_size()
    print(f"watched libraries {', '.join(LIBRARIES)}: {loaded} modules imported, {files} Python files installed")
    print(f"{args.cases} cases, seed {args.seed}, {args.rounds} rounds (medians)")
    for label, rows in results.items():
        execs = statistics.median(r[0] for r in rows)
        wall = statistics.median(r[1] for r in rows)
        print(f"  {label:<9} {execs:>9,.0f} exec/s   {wall:6.2f} s wall   edges {sorted({r[2] for r in rows})}")
    for other in ("unwatched", "narrow"):
        ratio = statistics.median(r[0] for r in results["default"]) / statistics.median(r[0] for r in results[other])
        # Rounds run back to back, so a round's pair shares the machine's load: the median of the per-round
        # ratios is the steadier figure on a shared machine.
        paired = statistics.median(d[0] / o[0] for d, o in zip(results["default"], results[other], strict=True))
        print(f"  default/{other} exec/s: {ratio:.2f} (ratio of medians), {paired:.2f} (median of per-round ratios)")


if __name__ == "__main__":
    main()
