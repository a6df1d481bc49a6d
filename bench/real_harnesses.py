#!/usr/bin/env python
"""Ten and more real atheris harnesses written by others, run unchanged by assay and by atheris (issue 40 item 2).

Run from the repository root with the project's venv (the ``bench`` extra installed)::

    python bench/real_harnesses.py --harness-root ~/src/oss-fuzz
    python bench/real_harnesses.py --harness-root ~/src/oss-fuzz --harness sqlparse --seconds 10 --seeds 1

The harnesses are not part of this repository (they are their authors' files): the bench
reads them from ``--harness-root``, a checkout of the public google/oss-fuzz repository,
whose ``projects/<name>/`` folders hold them.  ``HARNESSES`` below lists, for each, its
path under that root, the PyPI requirements it needs (pinned: the versions measured) and
the library's packages whose files count for coverage.

For every harness, seed and tool (the two tools in turn, never at once; which goes first
alternates with the seed), in a fresh folder with an empty corpus folder:

- assay: ``python -m assay fuzz HARNESS CORPUS -max_total_time=S -seed=N``;
- atheris: ``python HARNESS CORPUS -max_total_time=S -seed=N``, the harness' own
  ``atheris.Fuzz()`` (libFuzzer).  libFuzzer stops at its first crash; as a fuzzing
  service would, the bench starts it again on the corpus it kept until the ``S`` seconds
  are spent, and counts each distinct crash once.

Columns, the same measure for both tools:

- ``exec/s``: inputs run over the wall time of the command(s), start-up included (assay's
  report's ``cases``; libFuzzer's ``stat::number_of_executed_units`` summed over restarts);
- ``cov``: library coverage of the corpus the tool kept, replayed through the same
  harness (its own callback, caught by a stand-in ``atheris.Setup``/``atheris.Fuzz``)
  under coverage.py in a fresh process, counting only the library's files: covered lines
  over statements, in percent (and the covered line count);
- ``corpus``: entries kept and their mean length in bytes;
- ``analysis``: assay's seconds analysing findings and slow suspects (its report's), part
  of its time;
- ``findings``: distinct crashes (assay: bugs of its report; atheris: distinct exception
  type and raising line of the uncaught-exception tracebacks it printed, or libFuzzer's
  timeout / out-of-memory).

The summary gives the medians over seeds and the goal: on every harness, median coverage
>= atheris' and median exec/s >= 0.8x atheris'.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: name -> (path under --harness-root, pinned PyPI requirements, packages counted for coverage)
HARNESSES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "email-validator": (
        "projects/python-email-validator/fuzz_validator.py",
        ("email-validator==2.4.0",),
        ("email_validator",),
    ),
    "sqlparse": ("projects/sqlparse/fuzz_parse.py", ("sqlparse==0.6.1",), ("sqlparse",)),
    "tomlkit": ("projects/tomlkit/fuzz_parser.py", ("tomlkit==0.15.3",), ("tomlkit",)),
    "xmltodict": ("projects/xmltodict/unparse_parse_fuzzer.py", ("xmltodict==1.0.4",), ("xmltodict",)),
    "idna": ("projects/idna/fuzz_encode_decode.py", ("idna==3.21",), ("idna",)),
    "isodate": ("projects/isodate/fuzz_parse.py", ("isodate==0.7.2",), ("isodate",)),
    "markdown": ("projects/python-markdown/fuzz_convert.py", ("Markdown==3.11.4",), ("markdown",)),
    "mdurl": ("projects/mdurl/fuzz_mdurl.py", ("mdurl==0.1.2",), ("mdurl",)),
    "packaging": ("projects/packaging/fuzz_packaging.py", ("packaging==26.4",), ("packaging",)),
    "iniconfig": ("projects/iniconfig/fuzz_parse.py", ("iniconfig==2.3.1",), ("iniconfig",)),
    "pathspec": ("projects/python-pathspec/fuzz_pathspec.py", ("pathspec==1.1.1",), ("pathspec",)),
    "asn1crypto": ("projects/asn1crypto/fuzz_parse.py", ("asn1crypto==1.5.1",), ("asn1crypto",)),
    "toml": ("projects/toml/fuzz_load.py", ("toml==0.10.2",), ("toml",)),
}

TOOLS = ("assay", "atheris")

#: how much longer than its budget a command may run before the bench ends it (start-up, shrinking)
GRACE_S = 120.0

# Replays a corpus through the harness' own callback under coverage.py: the harness runs as
# its own __main__, with atheris' Setup/Fuzz standing in (Setup keeps the callback, Fuzz
# replays) and instrument_all a no-op (coverage.py is the only measurement).
_REPLAY = r"""
import json, os, runpy, sys
import coverage
import atheris

corpus, harness, out = sys.argv[1], sys.argv[2], sys.argv[3]
packages = sys.argv[4:]
files = sorted(os.path.join(corpus, n) for n in os.listdir(corpus))
inputs = [open(f, "rb").read() for f in files if os.path.isfile(f)]
callback = []
def setup(argv, fn, **kwargs):
    callback.append(fn)
    return argv
def fuzz():
    for data in inputs:
        try:
            callback[0](data)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
atheris.Setup = setup
atheris.Fuzz = fuzz
atheris.instrument_all = lambda *a, **k: None
sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
cov = coverage.Coverage(source_pkgs=packages, data_file=None)
cov.start()
sys.argv = [harness]
sys.path.insert(0, os.path.dirname(harness))
try:
    runpy.run_path(harness, run_name="__main__")
except SystemExit:
    pass
finally:
    cov.stop()
cov.json_report(outfile=out + ".cov")
totals = json.load(open(out + ".cov"))["totals"]
json.dump({
    "covered": totals["covered_lines"],
    "statements": totals["num_statements"],
    "entries": len(inputs),
    "mean_len": (sum(map(len, inputs)) / len(inputs)) if inputs else 0.0,
    "ran": bool(callback),
}, open(out, "w"))
"""

_UNCAUGHT = "=== Uncaught Python exception: ==="


@dataclass
class Run:
    """One tool's run on one harness and seed."""

    execs: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    covered: int = 0
    statements: int = 0
    entries: int = 0
    mean_len: float = 0.0
    findings: set[str] = field(default_factory=set)
    restarts: int = 0
    analysis: float = 0.0
    error: str = ""

    @property
    def rate(self) -> float:
        return self.execs / self.wall if self.wall else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.execs / self.cpu if self.cpu else 0.0

    @property
    def cov(self) -> float:
        return 100.0 * self.covered / self.statements if self.statements else 0.0


def _atheris_findings(stderr: str) -> set[str]:
    """Distinct crashes in libFuzzer's output: exception type and raising line, or its own kind."""
    found = set()
    for block in stderr.split(_UNCAUGHT)[1:]:
        lines = []
        for ln in block.splitlines():
            if ln.startswith(("Exception ignored", "==")):  # the exception's report has ended
                break
            if ln.strip():
                lines.append(ln)
        where = [ln.strip() for ln in lines if ln.strip().startswith('File "')]
        exc = next((ln.split(":")[0].strip() for ln in lines if not ln.startswith(" ") and "Traceback" not in ln), "?")
        found.add(f"{exc} @ {_short(where[-1]) if where else '?'}")
    for kind in ("timeout", "out-of-memory"):
        if f"ERROR: libFuzzer: {kind}" in stderr:
            found.add(kind)
    return found


def _short(file_line: str) -> str:
    m = re.match(r'File "([^"]+)", line (\d+)', file_line)
    if not m:
        return file_line
    parts = Path(m.group(1)).parts
    return f"{'/'.join(parts[-2:])}:{m.group(2)}"


def run_assay(python: str, harness: Path, work: Path, seconds: float, seed: int) -> Run:
    corpus, report = work / "corpus", work / "report.json"
    cmd = [python, "-m", "assay", "fuzz", str(harness), str(corpus), f"-max_total_time={seconds:g}", f"-seed={seed}"]
    cmd += ["--report", str(report)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=seconds + GRACE_S, check=False)
        tail = proc.stderr[-600:] + proc.stdout[-600:]
    except subprocess.TimeoutExpired:
        tail = "timed out"
    run = Run(wall=time.perf_counter() - t0)
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        run.error = "no report: " + tail.replace("\n", " | ")
        return run
    run.execs = sum(t.get("cases", 0) for t in data.get("targets", {}).values())
    run.analysis = sum((t.get("analysis") or {}).get("seconds", 0.0) for t in data.get("targets", {}).values())
    run.findings = {f"{str(b.get('exception')).removeprefix('builtins.')} @ {_loc(b)}" for b in data.get("bugs", [])}
    if not data.get("targets"):
        run.error = f"no target ran: {data.get('error') or data.get('skipped')}"
    return run


def _loc(bug: dict) -> str:
    loc = bug.get("location") or {}
    parts = Path(loc.get("file") or "?").parts
    return f"{'/'.join(parts[-2:])}:{loc.get('line')}"


def run_atheris(python: str, harness: Path, work: Path, seconds: float, seed: int) -> Run:
    corpus, artifacts = work / "corpus", work / "artifacts"
    artifacts.mkdir()
    run = Run()
    t0 = time.perf_counter()
    k = 0
    while (left := seconds - (time.perf_counter() - t0)) >= 1.0:
        cmd = [python, str(harness), str(corpus), f"-max_total_time={int(left)}", f"-seed={seed + 1000 * k}"]
        cmd += ["-print_final_stats=1", f"-artifact_prefix={artifacts}/"]
        try:
            proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=left + GRACE_S, check=False)
        except subprocess.TimeoutExpired:
            run.error = "timed out"
            break
        output = proc.stdout + proc.stderr  # atheris prints the Python traceback on stdout
        stats = re.findall(r"stat::number_of_executed_units:\s*(\d+)", output)
        run.execs += int(stats[-1]) if stats else 0
        run.findings |= _atheris_findings(output)
        if proc.returncode == 0:
            break
        if not stats:  # it did not reach its loop: nothing a restart would change
            run.error = "atheris failed: " + proc.stderr[-600:].replace("\n", " | ")
            break
        k += 1
    run.restarts = k
    run.wall = time.perf_counter() - t0
    return run


def replay(python: str, harness: Path, corpus: Path, packages: tuple[str, ...], work: Path, run: Run) -> None:
    """Fill ``run``'s coverage and corpus columns from its corpus folder."""
    out = work / "replay.json"
    script = work / "replay.py"
    script.write_text(_REPLAY)
    cmd = [python, str(script), str(corpus), str(harness), str(out), *packages]
    try:
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600, check=False)
        data = json.loads(out.read_text())
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        err = getattr(locals().get("proc"), "stderr", "") or str(exc)
        run.error = (run.error + "; " if run.error else "") + "replay failed: " + err[-400:].replace("\n", " | ")
        return
    run.covered, run.statements = data["covered"], data["statements"]
    run.entries, run.mean_len = data["entries"], data["mean_len"]
    if not data["ran"]:
        run.error = (run.error + "; " if run.error else "") + "replay: the harness never called atheris.Setup"


def one(tool: str, python: str, harness: Path, packages: tuple[str, ...], seconds: float, seed: int) -> Run:
    with tempfile.TemporaryDirectory(prefix=f"realbench-{tool}-") as tmp:
        work = Path(tmp)
        (work / "corpus").mkdir()
        runner = run_assay if tool == "assay" else run_atheris
        before = _children_cpu()
        run = runner(python, harness, work, seconds, seed)
        run.cpu = _children_cpu() - before
        replay(python, harness, work / "corpus", packages, work, run)
        return run


def _children_cpu() -> float:
    """CPU seconds of the finished child processes (and theirs, once waited for) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _line(name: str, seed: int, tool: str, r: Run) -> str:
    found = len(r.findings)
    extra = f" restarts {r.restarts}" if r.restarts else ""
    extra += f" analysis {r.analysis:.1f} s" if r.analysis else ""
    text = (
        f"{name:16} seed {seed} {tool:8} exec/s {r.rate:7.0f} per cpu-s {r.cpu_rate:7.0f}  cov {r.cov:5.1f}% ({r.covered:4d}/{r.statements:4d})"
        f"  corpus {r.entries:4d} x {r.mean_len:7.1f} B  findings {found}{extra}"
    )
    if r.findings:
        text += "\n" + "\n".join(f"{'':27}- {f}" for f in sorted(r.findings))
    if r.error:
        text += f"\n{'':27}! {r.error}"
    return text


def summary(results: dict[str, dict[str, list[Run]]]) -> list[str]:
    """Medians over seeds, side by side, and the goal."""
    head = (
        f"{'harness':16}{'exec/s assay':>13}{'atheris':>9}{'ratio':>7}{'per-cpu ratio':>14}"
        f"{'cov assay':>10}{'atheris':>9}{'mean B assay':>13}{'atheris':>9}{'finds a/t':>10}  goal"
    )
    lines = [head, "-" * len(head)]
    met = 0
    for name, by_tool in results.items():
        a, t = by_tool["assay"], by_tool["atheris"]
        if not a or not t:
            continue
        med = statistics.median
        ar, tr = med(r.rate for r in a), med(r.rate for r in t)
        ac, tc = med(r.cov for r in a), med(r.cov for r in t)
        al, tl = med(r.mean_len for r in a), med(r.mean_len for r in t)
        af, tf = med(len(r.findings) for r in a), med(len(r.findings) for r in t)
        cpu_a, cpu_t = med(r.cpu_rate for r in a), med(r.cpu_rate for r in t)
        ratio = ar / tr if tr else float("inf")
        cpu_ratio = cpu_a / cpu_t if cpu_t else float("inf")
        misses = [what for what, ok in (("exec/s", ratio >= 0.8), ("coverage", ac >= tc)) if not ok]
        met += not misses
        lines.append(
            f"{name:16}{ar:13.0f}{tr:9.0f}{ratio:7.2f}{cpu_ratio:14.2f}{ac:9.1f}%{tc:8.1f}%{al:13.1f}{tl:9.1f}"
            f"{af:6g}/{tf:<3g}  {'met' if not misses else 'MISSED: ' + ', '.join(misses)}"
        )
    lines.append(
        f"goal (median coverage >= atheris' and median exec/s >= 0.8x atheris'): met on {met} of {len(lines) - 2}"
    )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--harness-root", type=Path, required=True, help="a checkout of google/oss-fuzz (or the same layout)"
    )
    ap.add_argument("--harness", action="append", choices=sorted(HARNESSES), help="(repeatable) default: all")
    ap.add_argument("--seconds", type=float, default=60.0, help="each tool's time on each harness and seed")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--python", default=sys.executable, help="the interpreter both tools run under")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    names = args.harness or list(HARNESSES)
    print(f"{len(names)} harnesses, {args.seconds:g} s per tool, seeds {args.seeds}; {time.strftime('%Y-%m-%d %H:%M')}")
    results: dict[str, dict[str, list[Run]]] = {}
    for name in names:
        path, requirements, packages = HARNESSES[name]
        harness = (args.harness_root / path).resolve()
        if not harness.is_file():
            print(f"{name:16} skipped: {harness} not found", flush=True)
            continue
        print(f"{name}: {path} (needs {', '.join(requirements)}; coverage of {', '.join(packages)})", flush=True)
        results[name] = {tool: [] for tool in TOOLS}
        for i, seed in enumerate(seeds):
            for tool in TOOLS if i % 2 == 0 else TOOLS[::-1]:
                run = one(tool, args.python, harness, packages, args.seconds, seed)
                results[name][tool].append(run)
                print(_line(name, seed, tool, run), flush=True)
        print("\n".join(summary({name: results[name]})[2:-1]), flush=True)  # this harness' medians so far
    print()
    print("\n".join(summary(results)))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
