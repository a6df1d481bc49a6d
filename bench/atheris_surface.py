#!/usr/bin/env python
"""Per case, the atheris surface a harness touches: real atheris against assay's stand-in (issue 43 item 3).

Run from the repository root with the project's venv (atheris installed: the dev extra)::

    python bench/atheris_surface.py               # 5 rounds
    python bench/atheris_surface.py --rounds 9

Each round runs one child process per side, atheris then assay (``import atheris``
is the real module in one, ``assay.harness.atheris_shim`` in the other, as a target
file sees it under ``assay fuzz``), and each child times, in microseconds per case:

``instrument_func call``   a small parser decorated with ``atheris.instrument_func``, called
``hooked re + str``        a target using ``re.match`` and ``str.startswith`` after
                           ``enabled_hooks.add("RegEx")`` and ``add("str")``
``instrument_imports``     entering and leaving ``with atheris.instrument_imports():``
``two providers``          ``FuzzedDataProvider(data)`` twice (387 bytes)
``Mutate(data, 4096)``     one call at a time from a custom mutator inside a real
                           ``atheris.Fuzz()`` run (atheris' cannot run outside one), the
                           median of 3,000 calls, for both
``enabled_hooks.add``      one ``add`` of a hook already enabled

A row is the median over the rounds of each child's median; ``ratio`` is assay over atheris.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
#: Calls per timing sample, and samples per child (the child reports their median).
CALLS = 20_000
SAMPLES = 5
#: Cases a custom mutator times atheris.Mutate over, inside atheris.Fuzz().
MUTATE_CASES = 3000

TARGET = """
def parse(data):
    if len(data) > 3 and data[0] == 0x41:
        total = 0
        for b in data[1:9]:
            if b & 1:
                total += b
        return total % 7
    return 0
"""


def _per_call(fn: Callable[[], Any], calls: int = CALLS) -> float:
    samples = []
    for _ in range(SAMPLES):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def _child(side: str) -> dict[str, float]:
    if side == "atheris":
        import atheris
    else:
        sys.path.insert(0, str(SRC))
        from assay.harness import atheris_shim as atheris
    data = bytes(range(256)) + bytes(131)
    out: dict[str, float] = {}
    namespace: dict[str, Any] = {}
    exec(compile(TARGET, "<target>", "exec"), namespace)  # noqa: S102 - the bench's own source
    parse = atheris.instrument_func(namespace["parse"])
    out["instrument_func call"] = _per_call(lambda: parse(data))

    atheris.enabled_hooks.add("RegEx")
    atheris.enabled_hooks.add("str")
    import re

    text = "abc123 defg"

    def hooked() -> object:
        return re.match(r"[a-z]+\d", text) and text.startswith("ab")

    out["hooked re + str"] = _per_call(hooked)
    out["enabled_hooks.add"] = _per_call(lambda: atheris.enabled_hooks.add("str"))

    def imports() -> None:
        with atheris.instrument_imports():
            pass

    out["instrument_imports"] = _per_call(imports, 2000)
    provider = atheris.FuzzedDataProvider
    out["two providers"] = _per_call(lambda: (provider(data), provider(data)))
    return out


def _mutate_child(side: str) -> None:
    """``Mutate`` (atheris' or the stand-in's) timed one call at a time from a custom mutator
    inside a real atheris.Fuzz(); prints the median and exits."""
    import atheris

    sys.path.insert(0, str(SRC))
    from assay.harness import atheris_shim

    samples: list[float] = []
    chosen: list[Any] = []

    def mutator(data: bytes, max_size: int, seed: int) -> bytes:
        if not chosen:  # atheris.Setup/Fuzz replace atheris.Mutate: look it up once fuzzing runs
            chosen.append(atheris.Mutate if side == "atheris" else atheris_shim.Mutate)
        mutate = chosen[0]
        start = time.perf_counter()
        out = mutate(data, max_size)
        samples.append((time.perf_counter() - start) * 1e6)
        if len(samples) >= MUTATE_CASES:
            print(json.dumps({"Mutate(data, 4096)": statistics.median(samples)}), flush=True)
            os._exit(0)
        return out

    atheris.Setup([sys.argv[0], "-max_len=4096", "-seed=1", "-runs=1000000"], lambda data: None, custom_mutator=mutator)
    atheris.Fuzz()


def _run_child(*args: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of one child per side (default 5)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child in ("mutate-atheris", "mutate-assay"):
        _mutate_child(args.child.removeprefix("mutate-"))
        return 0
    if args.child:
        print(json.dumps(_child(args.child)))
        return 0
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed (pip install -e '.[dev]'): nothing to compare against", file=sys.stderr)
        return 2
    results: dict[str, dict[str, list[float]]] = {"atheris": {}, "assay": {}}
    for _ in range(args.rounds):
        theirs = _run_child("--child", "atheris")
        theirs.update(_run_child("--child", "mutate-atheris"))
        ours = _run_child("--child", "assay")
        ours.update(_run_child("--child", "mutate-assay"))
        for side, got in (("atheris", theirs), ("assay", ours)):
            for name, value in got.items():
                results[side].setdefault(name, []).append(value)
    print(f"{'per case':24} {'atheris us':>11} {'assay us':>11} {'ratio':>6}")
    for name, values in results["atheris"].items():
        a, b = statistics.median(values), statistics.median(results["assay"][name])
        print(f"{name:24} {a:11.3f} {b:11.3f} {b / a:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
