"""Run every worked example with a capped campaign and print what each found.

    python examples/oracles/run_examples.py [--cases N] [--seed S] [--out DIR] [TARGET ...]

Each target gets a fresh corpus and artifact folder under ``--out`` (default a
temporary folder), so runs are repeatable: same seed, same cases, same findings
(up to findings that depend on timing, such as wedges).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from assay.core.config import load_project
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.discovery import load_targets
from assay.store.artifacts import load_artifact

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*")
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    registry = load_targets(load_project(HERE))
    names = args.targets or registry.names()
    out = Path(args.out or tempfile.mkdtemp(prefix="assay-oracle-examples-"))
    for name in names:
        options = CampaignOptions(
            corpus_root=str(out / "corpus"),
            artifact_root=str(out / "artifacts"),
            max_cases=args.cases,
            seed=args.seed,
            project_root=str(HERE),
        )
        (t,) = run_campaign([registry.get(name)], options).targets
        print(f"{name}: {t.cases} cases, {t.elapsed:.1f}s, {len(t.findings)} finding(s)")
        for f in t.findings:
            art = load_artifact(f.artifact)
            meta = art.metadata
            print(f"  {f.signature}")
            print(f"    input ({meta['original_size']} -> {meta['minimized_size']} bytes): {art.input!r}")
            detail = (meta.get("verdict") or {}).get("detail", "")
            if detail:
                print(f"    detail: {detail[:300]}")
            det = meta.get("determinism") or {}
            if not det.get("same_signature", True):
                print(f"    NOT reproduced: {json.dumps(det)}")
    print(f"artifacts: {out / 'artifacts'}")


if __name__ == "__main__":
    main()
