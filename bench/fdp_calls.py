#!/usr/bin/env python
"""Per call, atheris' ``FuzzedDataProvider`` against assay's C one (issue 43 item 1's 1.5x goal).

Run from the repository root with the project's venv (atheris installed: the dev extra)::

    python bench/fdp_calls.py                     # every call at 20, 387 and 4,096 bytes
    python bench/fdp_calls.py --rounds 15 --python  # more rounds; the pure-Python reference too

For each call and input size: the same seeded bytes (the text calls once per width
mode: the first byte makes atheris pick ASCII, UTF-16 or UTF-32), providers built
ahead, then a compiled loop that makes the call on each (``x 20``: twenty calls on one
provider).  Only the calls are timed, never the construction.  Each round times atheris
and assay (and with ``--python`` the reference) in turn in this one process, who goes
first alternating, for about 2 ms each; a row
is the median over ``--rounds`` rounds, in microseconds per call (per twenty for
``x 20``), and ``ratio`` is assay's median over atheris'.  ``goal`` marks rows over 1.5x.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

SIZES = (20, 387, 4096)
#: Seconds a round of one provider spends on one call at least (more calls when fast).
ROUND_SECONDS = 0.002
#: The calls: (label, statement run on provider ``f``, first byte forced or None).
CALLS: tuple[tuple[str, str, int | None], ...] = (
    ("ConsumeUnicodeNoSurrogates(big) ascii", "f.ConsumeUnicodeNoSurrogates(BIG)", 0x01),
    ("ConsumeUnicodeNoSurrogates(big) utf-16", "f.ConsumeUnicodeNoSurrogates(BIG)", 0x02),
    ("ConsumeUnicodeNoSurrogates(big) utf-32", "f.ConsumeUnicodeNoSurrogates(BIG)", 0x00),
    ("ConsumeUnicode(big) ascii", "f.ConsumeUnicode(BIG)", 0x01),
    ("ConsumeUnicode(big) utf-16", "f.ConsumeUnicode(BIG)", 0x02),
    ("ConsumeUnicode(big) utf-32", "f.ConsumeUnicode(BIG)", 0x00),
    ("ConsumeString(50) utf-16", "f.ConsumeString(50)", 0x02),
    ("ConsumeString(50) utf-32", "f.ConsumeString(50)", 0x00),
    ("ConsumeBytes(50)", "f.ConsumeBytes(50)", None),
    ("ConsumeBytes(big)", "f.ConsumeBytes(BIG)", None),
    ("ConsumeInt(4)", "f.ConsumeInt(4)", None),
    ("ConsumeInt(16)", "f.ConsumeInt(16)", None),
    ("ConsumeUInt(8)", "f.ConsumeUInt(8)", None),
    ("ConsumeIntInRange(1, 32) x 20", "f.ConsumeIntInRange(1, 32)\n" * 20, None),
    ("ConsumeIntInRange(-2**100, 2**100)", "f.ConsumeIntInRange(HUGE_LO, HUGE_HI)", None),
    ("ConsumeIntList(50, 4)", "f.ConsumeIntList(50, 4)", None),
    ("ConsumeIntListInRange(50, 0, 1000)", "f.ConsumeIntListInRange(50, 0, 1000)", None),
    ("ConsumeBool() x 20", "f.ConsumeBool()\n" * 20, None),
    ("ConsumeProbability()", "f.ConsumeProbability()", None),
    ("ConsumeFloat()", "f.ConsumeFloat()", 0x80),
    ("ConsumeRegularFloat()", "f.ConsumeRegularFloat()", None),
    ("ConsumeFloatInRange(0, 1)", "f.ConsumeFloatInRange(0.0, 1.0)", None),
    ("ConsumeFloatList(20)", "f.ConsumeFloatList(20)", None),
    ("ConsumeRegularFloatList(20)", "f.ConsumeRegularFloatList(20)", None),
    ("ConsumeProbabilityList(20)", "f.ConsumeProbabilityList(20)", None),
    ("ConsumeFloatListInRange(20, 0, 1)", "f.ConsumeFloatListInRange(20, 0.0, 1.0)", None),
    ("PickValueInList(10 items) x 20", "f.PickValueInList(TEN)\n" * 20, None),
    ("remaining_bytes()", "f.remaining_bytes()", None),
    ("buffer()", "f.buffer()", None),
)
NAMES = {"BIG": sys.maxsize, "HUGE_LO": -(2**100), "HUGE_HI": 2**100, "TEN": list(range(10))}


def _loop(statement: str) -> Any:
    """A function running ``statement`` once per provider in a list: no per-call Python overhead beyond the call."""
    body = "\n".join("        " + line for line in statement.strip().splitlines())
    source = f"def run(providers):\n    for f in providers:\n{body}\n"
    namespace: dict[str, Any] = dict(NAMES)
    exec(compile(source, "<fdp_calls>", "exec"), namespace)  # noqa: S102 - the bench's own source
    return namespace["run"]


def _time(provider_type: Any, data: bytes, run: Any, n: int) -> float:
    providers = [provider_type(data) for _ in range(n)]
    start = time.perf_counter()
    run(providers)
    return (time.perf_counter() - start) / n * 1e6


def _calibrate(provider_type: Any, data: bytes, run: Any) -> int:
    n = 16
    while n < 200_000:
        if _time(provider_type, data, run, n) * n / 1e6 >= ROUND_SECONDS:
            return n
        n *= 2
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21, help="rounds per call and size (median; default 21)")
    parser.add_argument("--python", action="store_true", help="also time the pure-Python reference")
    parser.add_argument("--only", default="", help="only the calls whose label contains this text")
    args = parser.parse_args()
    try:
        import atheris
    except ImportError:
        print("atheris is not installed (pip install -e '.[dev]'): nothing to compare against", file=sys.stderr)
        return 2
    from assay.gen.accelerated import cmutate
    from assay.harness.fdp import PythonFuzzedDataProvider

    if cmutate is None:
        print("assay's C twin is not built (or ASSAY_PURE_PYTHON is set): nothing to time", file=sys.stderr)
        return 2
    providers: list[tuple[str, Any]] = [("atheris", atheris.FuzzedDataProvider), ("assay", cmutate.FuzzedDataProvider)]
    if args.python:
        providers.append(("python", PythonFuzzedDataProvider))
    header = f"{'call':40} {'bytes':>5} " + " ".join(f"{name + ' us':>11}" for name, _ in providers)
    print(header + f" {'ratio':>6} goal")
    worst = 0.0
    rng = random.Random(43)
    for label, statement, first in CALLS:
        if args.only not in label:
            continue
        run = _loop(statement)
        for size in SIZES:
            data = bytearray(rng.randbytes(size))
            if first is not None:
                data[0] = first
            data_bytes = bytes(data)
            n = _calibrate(atheris.FuzzedDataProvider, data_bytes, run)
            times: dict[str, list[float]] = {name: [] for name, _ in providers}
            for round_no in range(args.rounds):
                for name, provider_type in providers[:: 1 if round_no % 2 else -1]:  # who goes first alternates
                    times[name].append(_time(provider_type, data_bytes, run, n))
            medians = {name: statistics.median(values) for name, values in times.items()}
            ratio = medians["assay"] / medians["atheris"]
            worst = max(worst, ratio)
            cells = " ".join(f"{medians[name]:11.3f}" for name, _ in providers)
            print(f"{label:40} {size:5} {cells} {ratio:6.2f} {'MISS' if ratio > 1.5 else 'ok'}", flush=True)
    print(f"worst ratio: {worst:.2f} (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
