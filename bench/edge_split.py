#!/usr/bin/env python
"""How many branch directions into a join edge splitting gives an instruction of their own.

Run from the repository root with the project's venv (3.12/3.13; 3.14+ needs no split)::

    python bench/edge_split.py                       # the static count, a second
    python bench/edge_split.py --cases 20000 --seeds 3   # also campaigns, split against not

For the code objects of real stdlib parsers it counts the branch directions that
only a ``BRANCH`` event could report (:mod:`assay.feedback.branches`) before and
after :func:`assay.feedback.edgesplit.split_code`, and says why each left over stays
on ``BRANCH`` (with its ``JOIN_CAP`` retirement and re-arm on news).

With ``--cases N`` it also runs ``assay`` campaigns of N cases on the end-to-end
benchmark's parsers (bench/end_to_end.py), with the split and with
``ASSAY_NO_EDGE_SPLIT=1``, and replays each corpus through one exact measurement
(``FullFeedback``, which never retires a site): the lines + edges each corpus
reaches, per seed.  Case caps, not time: the numbers do not depend on load.
"""

from __future__ import annotations

import argparse
import dis
import importlib
import os
import subprocess
import sys
import tempfile
from collections import Counter
from types import CodeType

from assay.feedback import edgesplit
from assay.feedback.branches import branch_layout

MODULES = (
    "tomllib._parser",
    "json.decoder",
    "json.scanner",
    "urllib.parse",
    "email.feedparser",
    "email._header_value_parser",
    "html.parser",
    "ipaddress",
    "configparser",
    "csv",
)


def _codes(code: CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _why(code: CodeType, src: int, dst: int) -> str:
    instrs = {i.offset: i for i in dis.get_instructions(code)}
    jump = instrs[src]
    if jump.opname == "FOR_ITER":
        return "FOR_ITER"
    return "fall-through" if dst != jump.argval else "jump"


def survey(name: str) -> tuple[int, int, Counter[str]]:
    module = importlib.import_module(name)
    with open(module.__file__, encoding="utf-8") as fh:
        top = compile(fh.read(), module.__file__, "exec")
    before = after = 0
    why: Counter[str] = Counter()
    for code in _codes(top):
        before += sum(len(d) for d in branch_layout(code).joins.values())
        split = edgesplit.split_code(code)
        for src, dsts in branch_layout(split).joins.items():
            for dst in dsts:
                after += 1
                why[_why(split, src, dst)] += 1
    return before, after, why


MEASURE_CHILD = r"""
import json, os, sys
sys.path[:0] = {paths!r}
import end_to_end as e2e
from assay.engine.features import FullFeedback
from assay.feedback.scope import Scope
spec = e2e.specs()[{name!r}]
fb = FullFeedback(Scope(e2e._resolve_sources(spec["sources"])))
fb.start()
seen = set()
for path in {files!r}:
    fb.forget()
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        spec["fn"](data)
    except Exception:
        pass
    seen.update(fb.take_new())
print(json.dumps(len(seen)))
"""


def reached(name: str, corpus_dir: str) -> int:
    """Lines + edges the corpus reaches, measured exactly (every site armed for every input)."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = sorted(os.path.join(corpus_dir, f) for f in os.listdir(corpus_dir))
    code = MEASURE_CHILD.format(paths=[here, os.path.join(here, "..", "src")], name=name, files=files)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return int(proc.stdout.strip().splitlines()[-1])


def campaigns(cases: int, seeds: int) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import end_to_end as e2e

    print(f"\nassay campaigns of {cases} cases; lines + edges of each corpus, one exact measurement")
    print(f"  {'target':16} {'split':>24} {'ASSAY_NO_EDGE_SPLIT=1':>24}")
    for name, spec in e2e.specs().items():
        if name == "trivial":
            continue
        row = {}
        for mode in ("", "1"):
            os.environ["ASSAY_NO_EDGE_SPLIT"] = mode
            got = []
            for seed in range(1, seeds + 1):
                with tempfile.TemporaryDirectory() as tmp:
                    res = e2e.run_assay(
                        name,
                        spec,
                        os.path.join(tmp, "counters"),
                        os.path.join(tmp, "corpus"),
                        cases=cases,
                        budget=None,
                        seed=seed,
                    )
                    os.environ["ASSAY_NO_EDGE_SPLIT"] = ""
                    got.append(reached(name, res["corpus_dir"]))
                    os.environ["ASSAY_NO_EDGE_SPLIT"] = mode
            row[mode] = got
        os.environ.pop("ASSAY_NO_EDGE_SPLIT", None)
        fmt = lambda xs: ", ".join(map(str, xs))  # noqa: E731
        print(f"  {name:16} {fmt(row['']):>24} {fmt(row['1']):>24}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=0, help="also run campaigns of this many cases (0: skip)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per campaign mode")
    args = ap.parse_args(argv)
    if not edgesplit.supported():
        print(f"Python {sys.version.split()[0]}: no edge splitting here (3.14+ reports each direction itself)")
        return 0
    print(f"Python {sys.version.split()[0]}: branch directions only BRANCH can report, before and after the split")
    total_b = total_a = 0
    reasons: Counter[str] = Counter()
    for name in MODULES:
        b, a, why = survey(name)
        total_b, total_a = total_b + b, total_a + a
        reasons += why
        print(f"  {name:28} {b:4} -> {a:4}   {dict(why)}")
    print(f"  {'total':28} {total_b:4} -> {total_a:4}   {dict(reasons)}")
    if args.cases:
        campaigns(args.cases, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
