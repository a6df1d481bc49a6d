#!/usr/bin/env python
"""Input length and exec/s of the whole command, assay against atheris (issue 40 item 1).

Run from the repository root with the project's venv (the ``bench`` extra installed)::

    python bench/len_control.py --harness sqlparse --runs 20000 --rounds 3

Each round runs ``assay fuzz HARNESS -runs=N -seed=S`` and ``python HARNESS -runs=N
-seed=S`` (atheris' libFuzzer), in turn, in a fresh folder, on a copy of the harness
of ``bench/harnesses/`` that appends every input's length to a log (opened before
either tool forks: a 4-byte write per case).  exec/s is runs over the command's
wall time (start-up included, the same for both); the mean length is over every input
the target ran.  Medians of ``--rounds`` rounds, the tools interleaved (the machine
is shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESSES = {"sqlparse": "fuzz_parse", "tomlkit": "fuzz_parser", "email-validator": "fuzz_validator"}

WRAPPER = """\
import os, struct, sys
sys.path.insert(0, {harnesses!r})
import atheris
import {module} as inner
_LOG = os.open({log!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
def TestOneInput(data):
    os.write(_LOG, struct.pack("<I", len(data)))
    return inner.TestOneInput(data)
if __name__ == "__main__":
    atheris.instrument_all()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
"""


def one(tool: str, module: str, runs: int, seed: int, max_len: int | None) -> tuple[float, float, int]:
    """(exec/s, mean input length, inputs logged) of one run of ``tool``."""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "lengths.bin")
        harness = os.path.join(tmp, f"wrapped_{module}.py")
        Path(harness).write_text(WRAPPER.format(harnesses=str(HERE / "harnesses"), module=module, log=log))
        flags = [f"-runs={runs}", f"-seed={seed}"] + ([f"-max_len={max_len}"] if max_len else [])
        if tool == "assay":
            cmd = [sys.executable, "-m", "assay", "fuzz", harness, *flags]
        else:
            corpus = os.path.join(tmp, "corpus")
            os.mkdir(corpus)
            cmd = [sys.executable, harness, corpus, *flags]
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - t0
        raw = Path(log).read_bytes() if os.path.exists(log) else b""
        lengths = [n for (n,) in struct.iter_unpack("<I", raw)]
        return runs / wall, (statistics.fmean(lengths) if lengths else 0.0), len(lengths)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--harness", action="append", choices=sorted(HARNESSES), help="(repeatable) default: sqlparse, tomlkit"
    )
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1, help="seed of the first round (then +1 a round)")
    ap.add_argument("--max-len", type=int, default=None)
    ap.add_argument("--tools", default="assay,atheris")
    args = ap.parse_args()
    tools = args.tools.split(",")
    for name in args.harness or ["sqlparse", "tomlkit"]:
        got: dict[str, list[tuple[float, float, int]]] = {t: [] for t in tools}
        for r in range(args.rounds):
            order = tools if r % 2 == 0 else tools[::-1]
            for tool in order:
                got[tool].append(one(tool, HARNESSES[name], args.runs, args.seed + r, args.max_len))
        for tool in tools:
            rows = got[tool]
            rate = statistics.median(x[0] for x in rows)
            mean = statistics.median(x[1] for x in rows)
            detail = " ".join(f"{x[0]:.0f}/s,{x[1]:.0f}B" for x in rows)
            print(f"{name:16} {tool:8} exec/s {rate:8.0f}  mean len {mean:7.1f} B   rounds: {detail}")


if __name__ == "__main__":
    main()
