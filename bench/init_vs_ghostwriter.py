#!/usr/bin/env python
"""``assay init`` + ``assay fuzz`` against Hypothesis' ghostwriter on three small projects (issue 42).

Run from the repository root with the project's venv (toml 0.10.2, croniter 1.0.1 and
asn1crypto 1.5.1 installed, and ``black`` for ``hypothesis write``)::

    python bench/init_vs_ghostwriter.py                      # seeds 1-3, 120 s budget runs
    python bench/init_vs_ghostwriter.py --seeds 1 --budget 60 --projects tomlcfg
    python bench/init_vs_ghostwriter.py --modes suggested,default --no-ghostwriter

The projects are ``tests/onboard/init_projects/`` (a flat package, a src layout whose
functions are defined in a submodule and re-exported, a single module); each wraps a
real library pinned at a version with known bugs reachable through the project's public
functions, listed with their exception type and raising frame in ``known_bugs.json``.

For each project and seed, in a fresh copy:

* ``assay init``, then ``assay fuzz`` in up to three modes: ``suggested`` (the command
  init prints after ``next:``), ``default`` (``assay fuzz`` with no stop given) and
  ``budget`` (``--fuzz-budget S``).  Each mode has its own corpus, so runs do not feed
  each other;
* ``hypothesis write MODULE`` (``gw``) and ``hypothesis write MODULE --except ERROR``
  (``gw-except``, the project's documented error), each test run by pytest at
  ``--examples`` examples (a conftest profile; the test files are not edited).

Per tool it reports: public input functions a target or test calls (found by reading the
written files), targets/tests that run unedited, known bugs found (a finding's exception
type and innermost frame against the list; a round-trip bug by a failed equality in a
target or test naming both functions), the project's documented errors reported as a bug,
and other findings.  ``--json FILE`` keeps every figure.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "tests" / "onboard" / "init_projects"
KNOWN = json.loads((PROJECTS / "known_bugs.json").read_text())
#: Hand-written targets of the shape issue 42 asks init for (every function, typed, the documented contract).
REFERENCE = Path(__file__).resolve().parent / "init_reference"
#: Seconds a ghostwriter test file may run: Hypothesis has no per-example timeout, and croniter can hang.
GW_TIMEOUT = 900

#: Records, per test, the exceptions it failed with (innermost frame as module:qualname).
PYTEST_PLUGIN = """
import json, os, traceback

_RESULTS = {}


def _frames(exc):
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _frames(inner)
        return
    tb = exc.__traceback__
    where, line = "?", 0
    while tb is not None:
        code = tb.tb_frame.f_code
        where = f"{tb.tb_frame.f_globals.get('__name__', '?')}:{code.co_qualname}"
        line = tb.tb_lineno
        tb = tb.tb_next
    yield {"exception": type(exc).__qualname__, "module": type(exc).__module__, "where": where, "line": line}


def pytest_runtest_makereport(item, call):
    entry = _RESULTS.setdefault(item.nodeid, {"outcome": "passed", "errors": []})
    if call.excinfo is None:
        return
    entry["outcome"] = "failed" if call.when == "call" else "error"
    entry["errors"].extend(_frames(call.excinfo.value))


def pytest_collectreport(report):
    if report.failed:
        _RESULTS[report.nodeid or "<collection>"] = {"outcome": "collection-error", "errors": []}


def pytest_sessionfinish(session):
    with open(os.environ["GW_RESULTS"], "w") as f:
        json.dump(_RESULTS, f)
"""

CONFTEST = """
from hypothesis import settings

settings.register_profile("bench", max_examples={examples}, deadline=None)
settings.load_profile("bench")
"""


@dataclass
class Finding:
    """One bug a tool reported: its exception and where it was raised."""

    exception: str
    where: str
    line: int
    label: str  # target or test name
    oracle: str = "panic"


@dataclass
class Outcome:
    """One tool's run on one project and seed."""

    tool: str
    project: str
    seed: int
    functions_covered: list[str] = field(default_factory=list)
    runnable: int = 0
    written: int = 0
    known_found: list[str] = field(default_factory=list)
    documented_as_bug: int = 0
    other_findings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: known bug id -> [case number, seconds into the run] of its first hit (assay runs)
    first_hit: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def project_env(project_dir: Path) -> dict[str, str]:
    """The environment that makes the copied project importable (its root, and src/ when present)."""
    paths = [str(project_dir / "src"), str(project_dir)]
    inherited = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths + ([inherited] if inherited else [])),
        "PYTHONHASHSEED": "0",
    }


def functions_called(files: list[Path], functions: list[str]) -> list[str]:
    """The project's public functions that the written files reference by name."""
    names: set[str] = set()
    for path in files:
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.rpartition(".")[2])
    return [f for f in functions if f in names]


def classify(project: str, findings: list[Finding], outcome: Outcome) -> None:
    """Sort findings into known bugs, documented errors reported as bugs, and others."""
    spec = KNOWN[project]
    documented = {name.rpartition(".")[2] for name in spec["documented_errors"]}
    misreported = set()
    for f in findings:
        if f.exception in documented:
            misreported.add((f.label, f.where, f.line))
            continue
        bug = match(spec["bugs"], f)
        if bug is None:
            outcome.other_findings.append(f"{f.exception}@{f.where}:{f.line} ({f.label})")
        elif bug not in outcome.known_found:
            outcome.known_found.append(bug)
    outcome.documented_as_bug += len(misreported)


def match(bugs: list[dict], f: Finding) -> str | None:
    """The id of the known bug a finding is, if any."""
    for bug in bugs:
        if "roundtrip" in bug:
            label = f.label.lower()
            named = "round" in label or all(name.lower() in label for name in bug["roundtrip"])
            if named and (f.exception == "AssertionError" or f.oracle != "panic"):
                return bug["id"]
            continue
        wheres = bug["where"] if isinstance(bug["where"], list) else [bug["where"]]
        if f.exception == bug["exception"] and f.where in wheres and bug.get("line", f.line) == f.line:
            return bug["id"]
    return None


def run_assay(
    project: str, work: Path, seed: int, modes: list[str], reference_modes: list[str], budget: int, log
) -> list[Outcome]:
    """``assay init`` in a fresh copy, then ``assay fuzz`` once per mode."""
    spec = KNOWN[project]
    copy = work / f"assay-{project}-{seed}"
    shutil.copytree(PROJECTS / project, copy)
    env = project_env(copy)
    started = time.monotonic()
    init = subprocess.run(
        [sys.executable, "-m", "assay", "init", "--project", str(copy)],
        capture_output=True,
        text=True,
        env=env,
        cwd=copy,
    )
    init_seconds = time.monotonic() - started
    log(f"[{project} seed {seed}] assay init rc={init.returncode}\n{init.stdout}{init.stderr}")
    written = sorted((copy / "fuzz").glob("*.py")) if (copy / "fuzz").is_dir() else []
    covered = functions_called(written, spec["functions"])
    suggested = next((line.split("next:", 1)[1] for line in init.stdout.splitlines() if "next:" in line), "")
    suggested_args = shlex.split(suggested.split("  ")[0].strip())[2:] if suggested.strip() else []
    commands = {
        "suggested": suggested_args,
        "default": [],
        "budget": ["--fuzz-budget", str(budget)],
    }
    outcomes = []
    for mode in modes:
        outcome = Outcome(f"assay {mode}", project, seed, functions_covered=covered)
        outcome.notes.append(f"init {init_seconds:.1f}s rc={init.returncode}")
        if init.returncode != 0:
            outcome.notes.append("init failed")
        else:
            fuzz_once(project, copy, env, mode, commands[mode], seed, outcome, log)
        outcomes.append(outcome)
    if "reference" in reference_modes:
        harness = copy / f"reference_{project}.py"
        shutil.copy(REFERENCE / f"fuzz_{project}.py", harness)
        outcome = Outcome("reference", project, seed)
        outcome.functions_covered = functions_called([harness], spec["functions"])
        fuzz_once(project, copy, env, "reference", [str(harness), "--fuzz-budget", str(budget)], seed, outcome, log)
        outcomes.append(outcome)
    return outcomes


def fuzz_once(
    project: str, copy: Path, env: dict, mode: str, given: list[str], seed: int, outcome: Outcome, log
) -> None:
    """One ``assay fuzz`` run with its own corpus; fills ``outcome`` from its report and output."""
    report = copy / f"report-{mode}.json"
    args = [
        *given,
        "--fuzz-seed",
        str(seed),
        "--report",
        str(report),
        "--fuzz-corpus",
        str(copy / f".corpus-{mode}"),
        "--fuzz-artifacts",
        str(copy / f".artifacts-{mode}"),
    ]
    started = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "assay", "fuzz", *args], capture_output=True, text=True, env=env, cwd=copy
    )
    outcome.seconds = time.monotonic() - started
    outcome.notes.append(f"fuzz {' '.join(given) or '(no stop given)'}: rc={r.returncode}")
    log(
        f"[{project} seed {seed} {mode}] assay fuzz {' '.join(args)} rc={r.returncode}\n{r.stdout[-4000:]}{r.stderr[-6000:]}"
    )
    if not report.is_file():
        outcome.notes.append("no report")
        return
    data = json.loads(report.read_text())
    targets = data.get("targets", {})
    outcome.written = len(targets)
    outcome.runnable = sum(1 for t in targets.values() if t.get("cases", 0) > 0 and t.get("status") != "error")
    outcome.notes.append(
        "cases/edges " + ", ".join(f"{n}={t.get('cases', 0)}/{t['coverage']['edges']}" for n, t in targets.items())
    )
    hits = first_hits(r.stdout + r.stderr)
    findings = []
    for b in data.get("bugs", []):
        location = b.get("location") or b.get("project_location") or {}  # a wedge may have neither
        finding = Finding(
            exception=(b.get("exception") or b.get("oracle") or "?").rpartition(".")[2],
            where=location.get("function") or "?",
            line=location.get("line") or 0,
            label=",".join(b.get("targets", [])),
            oracle=b.get("oracle", "panic"),
        )
        findings.append(finding)
        known = match(KNOWN[project]["bugs"], finding)
        if known and b["id"] in hits:
            best = outcome.first_hit.get(known)
            if best is None or hits[b["id"]][1] < best[1]:
                outcome.first_hit[known] = hits[b["id"]]
    classify(project, findings, outcome)


def first_hits(output: str) -> dict[str, list[float]]:
    """bug id -> [case, seconds] from the run's summary ("bug ID ... first hit at case N, Xs into the run")."""
    hits: dict[str, list[float]] = {}
    current = None
    for line in output.splitlines():
        words = line.split()
        if len(words) > 1 and words[0] == "bug":
            current = words[1]
        elif current and "first hit at case" in line:
            tail = line.split("first hit at case", 1)[1].split(",")
            hits[current] = [float(tail[0]), float(tail[1].split("s into")[0])]
    return hits


def run_ghostwriter(project: str, work: Path, seed: int, examples: int, with_except: bool, log) -> Outcome:
    """``hypothesis write`` the project's module, then pytest the file as written."""
    spec = KNOWN[project]
    tool = "gw-except" if with_except else "gw"
    outcome = Outcome(tool, project, seed)
    folder = work / f"{tool}-{project}-{seed}"
    folder.mkdir()
    env = project_env(PROJECTS / project)
    command = [str(Path(sys.executable).with_name("hypothesis")), "write", spec["module"]]
    if with_except:
        command += ["--except", spec["documented_errors"][0]]
    w = subprocess.run(command, capture_output=True, text=True, env=env, cwd=folder)
    if w.returncode != 0:
        outcome.notes.append(f"hypothesis write failed: {w.stderr.strip()[-300:]}")
        return outcome
    test_file = folder / f"test_gw_{spec['module']}.py"
    test_file.write_text(w.stdout)
    (folder / "conftest.py").write_text(CONFTEST.format(examples=examples))
    (folder / "gw_plugin.py").write_text(PYTEST_PLUGIN)
    outcome.functions_covered = functions_called([test_file], spec["functions"])
    results = folder / "results.json"
    started = time.monotonic()
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "gw_plugin",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:xdist",
                "-q",
                f"--hypothesis-seed={seed}",
                "-o",
                "addopts=",
                str(test_file),
            ],
            capture_output=True,
            text=True,
            cwd=folder,
            env={**env, "GW_RESULTS": str(results), "PYTHONPATH": f"{folder}{os.pathsep}{env['PYTHONPATH']}"},
            timeout=GW_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        outcome.seconds = time.monotonic() - started
        outcome.notes.append(f"pytest still running after {GW_TIMEOUT} s (a hang in the code under test): stopped")
        return outcome
    outcome.seconds = time.monotonic() - started
    log(f"[{project} seed {seed} {tool}] pytest rc={r.returncode}\n{r.stdout[-6000:]}{r.stderr[-2000:]}")
    if not results.is_file():
        outcome.notes.append(f"pytest wrote no results (rc={r.returncode})")
        return outcome
    tests = json.loads(results.read_text())
    outcome.written = len(tests)
    outcome.runnable = sum(1 for t in tests.values() if t["outcome"] in ("passed", "failed"))
    findings = []
    health: list[str] = []
    for name, t in tests.items():
        for e in t["errors"]:
            if e["module"].startswith("hypothesis"):
                health.append(e["exception"])
                continue
            findings.append(Finding(e["exception"], e["where"], e["line"], name.rpartition("::")[2]))
    outcome.notes.append(
        f"{sum(t['outcome'] == 'passed' for t in tests.values())} passed, "
        f"{sum(t['outcome'] == 'failed' for t in tests.values())} failed; Hypothesis' own errors: {health or 'none'}"
    )
    classify(project, findings, outcome)
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", default=",".join(KNOWN), help="comma-separated (default: all three)")
    parser.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (default 1,2,3)")
    parser.add_argument(
        "--modes",
        default="suggested,default,budget,reference",
        help="assay fuzz runs: suggested, default, budget (after assay init), reference (bench/init_reference/)",
    )
    parser.add_argument("--budget", type=int, default=120, help="--fuzz-budget seconds of the budget mode")
    parser.add_argument("--examples", type=int, default=10_000, help="Hypothesis examples per ghostwriter test")
    parser.add_argument("--no-ghostwriter", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="write every outcome here")
    parser.add_argument("--log", metavar="FILE", help="write each command's output here")
    args = parser.parse_args()
    projects = args.projects.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    modes = [m for m in args.modes.split(",") if m and m != "reference"]
    reference = [m for m in args.modes.split(",") if m == "reference"]
    log_file = open(args.log, "w") if args.log else None

    def log(text: str) -> None:
        if log_file:
            log_file.write(text + "\n")
            log_file.flush()

    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for seed in seeds:
            for project in projects:
                outcomes += run_assay(project, work, seed, modes, reference, args.budget, log)
                if not args.no_ghostwriter:
                    outcomes.append(run_ghostwriter(project, work, seed, args.examples, False, log))
                    outcomes.append(run_ghostwriter(project, work, seed, args.examples, True, log))
                if args.json:  # after each project, so that an interrupted run keeps what it measured
                    Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], indent=1))
    print_table(outcomes, projects, seeds)


def print_table(outcomes: list[Outcome], projects: list[str], seeds: list[int]) -> None:
    """Per project and tool: coverage, runnable, bugs per seed and their union, misreports."""
    print(f"seeds {seeds}; known bugs: " + ", ".join(f"{p} {len(KNOWN[p]['bugs'])}" for p in projects))
    header = (
        f"{'project':<9} {'tool':<16} {'funcs':>6} {'run/written':>11} {'bugs/seed':>12} {'union':>5} "
        f"{'doc-as-bug':>10} {'other':>5} {'secs':>6}"
    )
    print(header)
    totals: dict[str, set[str]] = {}
    for project in projects:
        tools = list(dict.fromkeys(o.tool for o in outcomes if o.project == project))
        for tool in tools:
            rows = [o for o in outcomes if o.project == project and o.tool == tool]
            union = sorted({b for o in rows for b in o.known_found})
            totals.setdefault(tool, set()).update(f"{project}:{b}" for b in union)
            first = rows[0]
            print(
                f"{project:<9} {tool:<16} {len(first.functions_covered):>2}/{len(KNOWN[project]['functions']):<3} "
                f"{first.runnable:>5}/{first.written:<5} {'/'.join(str(len(o.known_found)) for o in rows):>12} "
                f"{len(union):>5} {'/'.join(str(o.documented_as_bug) for o in rows):>10} "
                f"{max(len(o.other_findings) for o in rows):>5} {max(o.seconds for o in rows):>6.0f}"
            )
    total = sum(len(KNOWN[p]["bugs"]) for p in projects)
    print(
        "known bugs found across the projects (union over seeds): "
        + ", ".join(f"{tool} {len(found)}/{total}" for tool, found in totals.items())
    )


if __name__ == "__main__":
    main()
