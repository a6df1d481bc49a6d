"""Digests of generated outputs for fixed seeds, to show a refactoring of gen/ changed nothing.

Covers assay.gen.schema (``generate`` in every mode, ``from_bytes``) on the real
schemas of tests/gen/real_schemas.py, and the xml and http1 strategies'
generate, mutate, crossover, parse, render, tokens and shrink candidates.  Run
it before and after a change and diff the output:

    PYTHONPATH=src .venv/bin/python bench/gen_digests.py > before.txt
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gen"))

from real_schemas import azure_openai, metaschemas, schemastore

from assay.gen import schema as schemagen
from assay.gen.strategy import get_strategy

SEEDS = 2  #: seeds per schema and mode
STRATEGY_SEEDS = 150  #: seeds per grammar strategy


def _digest(obj: Any) -> str:
    return hashlib.sha256(repr(obj).encode()).hexdigest()[:16]


def _schema_digests() -> dict[str, str]:
    targets = metaschemas() + schemastore()[:60] + azure_openai()[:80]
    out = {}
    for mode in ("valid", "adjacent", "mixed"):
        made: list[Any] = []
        for t in targets:
            for seed in range(SEEDS):
                try:
                    g = schemagen.generate(
                        t.schema, random.Random(seed), mode, root=t.document, draft=t.draft, resources=t.resources
                    )
                    made.append((t.name, seed, g.value, g.mode, g.violation, g.path))
                except Exception as exc:  # the failure is part of the output
                    made.append((t.name, seed, type(exc).__name__))
        out[f"schema.{mode}"] = _digest(made)
    made = []
    for t in targets[:120]:
        for seed in range(SEEDS):
            data = random.Random(seed).randbytes(64)
            try:
                g = schemagen.from_bytes(t.schema, data, "mixed", root=t.document, draft=t.draft, resources=t.resources)
                made.append((g.value, g.mode, g.violation, g.path))
            except Exception as exc:
                made.append(type(exc).__name__)
    out["schema.from_bytes"] = _digest(made)
    return out


def _strategy_digest(name: str) -> str:
    s = get_strategy(name)
    made = []
    for seed in range(STRATEGY_SEEDS):
        rng = random.Random(seed)
        a, b = s.generate(rng), s.generate(rng)
        m, c = s.mutate(a, rng), s.crossover(a, b, rng)
        parsed = s.parse(s.render(m))
        made.append(
            (
                s.render(a),
                s.render(m),
                s.render(c),
                parsed is None,
                s.render(parsed) if parsed is not None else None,
                s.tokens(a),
                [s.render(x) for x in list(s.shrink_candidates(a))[:10]],
            )
        )
    return _digest(made)


def main() -> int:
    digests = _schema_digests()
    for name in ("xml", "http1", "http1-request", "http1-response"):
        digests[name] = _strategy_digest(name)
    for name, value in digests.items():
        print(name, value)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
