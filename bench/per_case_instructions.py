#!/usr/bin/env python
"""Instructions per case of a real harness' campaign, split by where they go (issue 43).

Run from the repository root with the project's venv and valgrind installed::

    python bench/per_case_instructions.py --harness tomlkit            # 1,000 and 3,000 cases
    python bench/per_case_instructions.py --harness email-validator --cases 500 1500
    python bench/per_case_instructions.py --src /path/to/other/tree/src  # another build, same harness

Wall-clock time on a shared machine swings by factors; instruction counts do not.  The
campaign (``bench/harnesses/``, ``--seed``, ``--max-len``, a timeout far beyond any case
so that valgrind's slowness makes no slow-input analysis) runs twice under
``valgrind --tool=callgrind``, with ``--cases`` A and B; a campaign is a function of its
seed and case cap, so the worker's instructions of the second minus those of the first,
over B - A, are the cost of one case from A on (start-up cancels out).  The worker is
the forked process whose profile holds the C hot loop.  Rows (instructions per case):

* ``worker total``: everything the worker ran;
* ``target call``: the hot loop's calls of the harness (the harness, its provider, the
  library, and the coverage callbacks and audit events they raise);
* ``  coverage callbacks``: ``sys.monitoring`` callbacks (the target's and any other);
* ``  audit events``: audit events with the sandbox's hook installed;
* ``hot loop (C)``: the C hot loop's own work (mutation, digest, journal, judging);
* ``  mutation``: making children (``cm_source_next``);
* ``rest (Python path)``: what the total leaves: cases judged in Python (new coverage,
  counted cases, comparison analyses, corpus messages);
* ``compile (anywhere)``: ``compile()`` (lazy imports, twins missing from the cache),
  and ``gc (anywhere)``: the cyclic garbage collector, inside the rows above.

The counting child (line counts every few dozen cases) is a process of its own, not in
these rows.  Atheris' loop is not measured here: its start-up (``instrument_all()``)
takes minutes under valgrind; ``bench/per_case_profile.py`` times it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: harness name -> (file in bench/harnesses, its library package)
HARNESSES = {
    "tomlkit": ("fuzz_parser.py", "tomlkit"),
    "email-validator": ("fuzz_validator.py", "email_validator"),
    "sqlparse": ("fuzz_parse.py", "sqlparse"),
    "two-providers": ("fuzz_two_providers.py", "email_validator"),
}

_CAMPAIGN = r"""
import importlib, sys
from pathlib import Path
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.harness.define import make_target
from assay.harness.discovery import import_file
harness, package, cases, seed, max_len, work = {harness!r}, {package!r}, {cases}, {seed}, {max_len}, Path({work!r})
module = import_file(Path(harness))
library = Path(importlib.import_module(package).__file__).parent
target = make_target(module.TestOneInput, name="t", sources=[harness, str(library)], max_len=max_len, timeout=600.0)
run_campaign([target], CampaignOptions(corpus_root=str(work / "corpus"), artifact_root=str(work / "art"),
                                        max_cases=cases, seed=seed))
"""

#: row -> the function whose inclusive instructions it is (callgrind_annotate's names)
_INCLUSIVE = {
    "hot loop": r"cmutate_loop\.c:HotLoop_run( \[|$)",
    "coverage callbacks": r"instrumentation\.c:call_instrumentation_vector[^ ']*( \[|$)",
    "audit events": r"sysmodule\.c:PySys_Audit( \[|$)",
    "mutation": r"cmutate_source\.c:cm_source_next( \[|$)",
    "compile": r"bltinmodule\.c(\.h)?:builtin_compile( \[|$)",
    "gc": r"gcmodule\.c:gc_collect_main( \[|$)",
}


def _profile(src: Path, harness: str, cases: int, seed: int, max_len: int, out: Path, cli: bool = False) -> Path:
    """Run one campaign under callgrind; the worker's profile.

    ``cli``: the campaign is the ``assay fuzz HARNESS`` command, as a user runs it (its target
    name, and so its schedule, and its default scope are the command's), not a target made here.
    """
    file, package = HARNESSES[harness]
    out.mkdir(parents=True, exist_ok=True)
    if cli:
        (out / "corpus").mkdir(exist_ok=True)
        command = ["-m", "assay", "fuzz", str(HERE / "harnesses" / file), str(out / "corpus")]
        command += [f"-runs={cases}", f"-seed={seed}", f"-max_len={max_len}", "-timeout=600"]
        command += ["--fuzz-artifacts", str(out / "art")]
    else:
        code = _CAMPAIGN.format(
            harness=str(HERE / "harnesses" / file),
            package=package,
            cases=cases,
            seed=seed,
            max_len=max_len,
            work=str(out),
        )
        command = ["-c", code]
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p", sys.executable, *command],
        env=env,
        cwd=out,
        capture_output=True,
        check=True,
    )
    for path in sorted(out.glob("cg.*")):
        if "HotLoop_run" in path.read_text(errors="replace"):
            return path
    raise SystemExit(f"no worker profile with the C hot loop in {out} (is the extension built in {src}?)")


def _annotate(path: Path) -> tuple[int, dict[str, int]]:
    """(total instructions, inclusive instructions of each row's function)."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--tree=calling", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    total = int(re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))  # type: ignore[union-attr]
    rows = dict.fromkeys([*_INCLUSIVE, "target call"], 0)
    # the hot loop's calls of the target: its callee PyObject_CallOneArg, in its block of the call tree
    block = re.search(r"\* [^\n]*cmutate_loop\.c:HotLoop_run \[[^\n]*\n((?:[^\n]+\n)*)", text)
    for line in block.group(1).splitlines() if block else ():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+>\s+\S*call\.c:PyObject_CallOneArg ", line)
        if m:
            rows["target call"] += int(m.group(1).replace(",", ""))
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S.*)$", line)
        if not m or m.group(2).startswith(("=>", "<", ">")):
            continue
        for row, pattern in _INCLUSIVE.items():
            if re.search(pattern, m.group(2)) and "'" not in m.group(2).split(" [")[0]:  # outermost frames only
                rows[row] = max(rows[row], int(m.group(1).replace(",", "")))
    return total, rows


def per_case(
    src: Path, harness: str, cases: tuple[int, int], seed: int, max_len: int, cli: bool = False
) -> dict[str, float]:
    """Instructions per case between the two case caps, by row."""
    tmp = Path(tempfile.mkdtemp(prefix="assay-instr-"))
    try:
        (t0, r0), (t1, r1) = (_annotate(_profile(src, harness, n, seed, max_len, tmp / str(n), cli)) for n in cases)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = cases[1] - cases[0]
    d = {k: (r1[k] - r0[k]) / n for k in r0}
    rows = {
        "worker total": (t1 - t0) / n,
        "target call": d["target call"],
        "  coverage callbacks": d["coverage callbacks"],
        "  audit events": d["audit events"],
        "hot loop (C)": d["hot loop"] - d["target call"],
        "  mutation": d["mutation"],
        "rest (Python path)": (t1 - t0) / n - d["hot loop"],
        "  compile (anywhere)": d["compile"],
        "  gc (anywhere)": d["gc"],
    }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", choices=sorted(HARNESSES), default="tomlkit")
    parser.add_argument("--cases", type=int, nargs=2, default=(1000, 3000), metavar=("A", "B"))
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--max-len", type=int, default=64)
    parser.add_argument("--src", type=Path, default=HERE.parent / "src", help="the tree whose assay is measured")
    parser.add_argument("--base", type=Path, help="a second tree (say main's) measured side by side")
    parser.add_argument("--cli", action="store_true", help="the 'assay fuzz HARNESS' command's campaign")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        raise SystemExit("valgrind (with callgrind_annotate) is needed")
    trees = [("this", args.src)] + ([("base", args.base)] if args.base else [])
    results = {
        name: per_case(src, args.harness, tuple(args.cases), args.seed, args.max_len, args.cli) for name, src in trees
    }
    print(
        f"{args.harness}: instructions per case, cases {args.cases[0]}..{args.cases[1]}, seed {args.seed}, -max_len {args.max_len}"
    )
    head = "".join(f"{name:>14}" for name, _ in trees) + ("   this/base" if args.base else "")
    print(f"  {'':<24}{head}")
    for row in results["this"]:
        cells = "".join(f"{results[name][row]:>14,.0f}" for name, _ in trees)
        ratio = ""
        if args.base and results["base"][row]:
            ratio = f"{results['this'][row] / results['base'][row]:>11.2f}x"
        print(f"  {row:<24}{cells}{ratio}")


if __name__ == "__main__":
    main()
