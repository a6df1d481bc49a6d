#!/usr/bin/env python
"""Time to bug: executions (and seconds) each fuzzer needs to find a planted or real bug.

Run from the repository root with the project's venv::

    .venv/bin/python bench/time_to_bug.py            # full run, ~10 min on 2 shared cores
    .venv/bin/python bench/time_to_bug.py --quick    # 1 seed, small caps, ~1-3 min
    .venv/bin/python bench/time_to_bug.py --verify   # only check each historical bug reproduces
                                                     # on its old version and not on the fixed one

Two tables:

**Search mazes** (``examples/planted``: ``planted_nested_compares`` and the
``maze_*`` targets), the exact same functions for every tool, median over seeds
of the executions until the first input that raises the maze's ``RuntimeError``,
within a fixed case cap (a run that reaches the cap counts as not found; the
median of a column is "not found" when more than half its seeds are):

``assay cmp``     ``run_campaign`` with comparison feedback (``cmplog=True``);
``assay no-cmp``  the same with ``cmplog=False`` (byte mutation + harvested constants);
``atheris``       libFuzzer through atheris, the maze function and its module's
                  other functions instrumented with ``atheris.instrument_func``,
                  ``-runs=CAP -seed=S``, started from the target's seeds, executions read from libFuzzer's
                  ``stat::number_of_executed_units`` (it exits on the first crash);
``hypothesis``    ``@given(st.binary(max_size=max_len))`` driven through
                  ``fuzz_one_input`` with random buffers from ``random.Random(S)``;
``hypofuzz``      HypoFuzz's own ``FuzzTarget.run_one`` loop on the same property, headless,
                  in its own venv (``bench/historical/.venvs/hypofuzz``).

**Historical bugs** (``bench/historical/*.py``): old releases of real packages with
a published crash, ReDoS, quadratic blow-up or hang, each in its own venv made by
``bench/historical/setup.sh`` (run automatically when a venv is missing; it also
makes venvs of the fixing releases).  assay and atheris (``atheris.instrument_imports``
on the package) run the same target function; found = the specific bug of
``HISTORY["bug"]`` (an exception type, or a ``SlowInput``/``wedge`` for the slowness
targets) within the cap.  The input assay found is then replayed on the fixing
release (last column): "ok" there means it is the advisory's bug, not some other
slowness or crash that the fix left in place.  atheris gets a smaller cap there by
default (it runs sqlparse at ~150 execs/s); ``--atheris-hist-cap 100000`` for the
full one.  See ``bench/TIME_TO_BUG.md`` for measured tables and discussion.

Executions are counted the same way for every tool: inputs run through the
target by the search, the seeds included, up to and including the first one that
hits the bug.  assay's count is its schedule position (seeds + ``case_index`` +
1); it does not count the one extra comparison-logging run assay makes of each
new corpus entry, nor replays and shrinking of findings.  Seconds are wall-clock
from the start of the search to that first hit, measured inside the job (so
interpreter start-up and imports are excluded); they are only indicative on a
shared machine.  Whether a bug counts as found never depends on time, except for
the slowness threshold inside the ReDoS targets (see ``bench/historical/_slow.py``).

Every (tool, target, seed) runs in its own subprocess; ``--jobs`` of them at once.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PLANTED = ROOT / "examples" / "planted"
HIST = ROOT / "bench" / "historical"
VENVS = HIST / ".venvs"
HYPOFUZZ_VENV = VENVS / "hypofuzz"

MAZES = [
    "planted_nested_compares",
    "maze_magic_slice",
    "maze_magic_startswith",
    "maze_keyword_str",
    "maze_int_field",
    "maze_computed_magic",
    "maze_checksum",
    # search round two (examples/planted/search_mazes.py)
    "maze_branch_ternary",
    "maze_branch_mixed",
    "maze_branch_joins",
    "maze_protocol_state",
    "maze_decoded_fields",
    "maze_decoded_json",
    "maze_regex_compound",
    "maze_transform_xor",
    "maze_unicode_netloc",
    "maze_memoized",
    "maze_regex_alternative",
    # structure that comparisons cannot see (examples/planted/structure_mazes.py)
    "maze_tlv_chunks",
    "maze_tlv_fields",
    "maze_tlv_der",
    "maze_hex_text",
]
MAZE_TOOLS = ["assay-cmp", "assay-nocmp", "atheris", "hypothesis", "hypofuzz"]
HIST_TOOLS = ["assay-cmp", "atheris"]
HEADERS = {
    "assay-cmp": "assay cmp",
    "assay-nocmp": "assay no-cmp",
    "atheris": "atheris",
    "hypothesis": "hypothesis",
    "hypofuzz": "hypofuzz",
}

# Default caps (generated executions) and seeds; --quick shrinks them.
FULL = {
    "cap": 100_000,
    "slow_cap": 10_000,
    "hist_cap": 100_000,
    "atheris_hist_cap": 25_000,
    "seeds": 3,
    "hist_seeds": 1,
}
QUICK = {"cap": 20_000, "slow_cap": 2_000, "hist_cap": 10_000, "atheris_hist_cap": 5_000, "seeds": 1, "hist_seeds": 1}
# atheris instruments every line of the old package: on sqlparse it runs ~150 execs/s,
# so 100,000 cases take ~10 min per target; the default gives it a smaller cap
# (--atheris-hist-cap 100000 for the full one; TIME_TO_BUG.md shows both).
SLOW_TOOLS = {"hypothesis", "hypofuzz"}  # ~1,500 and ~700 execs/s: their own (smaller) cap


# =========================================================================================
# Loading targets (inside a job process)
# =========================================================================================


def load_target(spec: dict[str, Any], *, instrument: bool = False):
    """The ``assay.Target`` named by ``spec`` (a maze or a historical target file)."""
    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    if spec["kind"] == "maze":
        from assay.core.config import load_project
        from assay.harness.discovery import load_targets

        return load_targets(load_project(PLANTED)).get(spec["name"])
    from assay.harness.discovery import import_file, targets_in

    if instrument:  # atheris: instrument the package before the target file imports it
        import importlib

        import atheris

        with atheris.instrument_imports(include=[spec["module"]]):
            importlib.import_module(spec["module"])
    module = import_file(Path(spec["file"]))
    for t in targets_in(module):
        if t.name == spec["name"]:
            return t
    raise SystemExit(f"no target {spec['name']!r} in {spec['file']}")


def exc_matches(exc: BaseException, bug: list[str], expected: tuple) -> bool:
    """Is ``exc`` the bug we are looking for?"""
    name = type(exc).__name__
    if name == "WedgeTimeout":
        return "wedge" in bug
    if expected and isinstance(exc, expected):
        return False
    return name in bug or ("*" in bug and isinstance(exc, Exception))


def meta_matches(meta: dict[str, Any], bug: list[str]) -> bool:
    oracle = meta.get("oracle")
    if oracle == "wedge":
        return "wedge" in bug
    if oracle == "slow":  # assay's own slowness oracle: over the threshold and super-linear
        return "SlowInput" in bug
    if oracle != "panic":
        return False
    typ = ((meta.get("exception") or {}).get("type") or "").rsplit(".", 1)[-1]
    return typ in bug or "*" in bug


# =========================================================================================
# Jobs: each prints one JSON line (the last line of its stdout)
# =========================================================================================


def _result(found: bool, execs: int | None = None, seconds: float | None = None, **extra: Any) -> dict[str, Any]:
    return {"found": found, "execs": execs, "seconds": seconds, **extra}


def job_assay(spec: dict[str, Any], seed: int, cap: int, cmplog: bool) -> dict[str, Any]:
    import _thread
    import dataclasses
    import re

    from assay.engine.campaign import CampaignOptions, run_campaign

    target = load_target(spec)
    bug = spec["bug"]
    tmp = Path(tempfile.mkdtemp(prefix="ttb-assay-"))
    arts = tmp / "artifacts" / target.name
    hitfile = tmp / "hit"
    inner = target.fn

    # Opened here: the worker's sandbox refuses opening files for writing inside
    # the target, and a write to an inherited descriptor is no side effect it audits.
    hit_fd = os.open(hitfile, os.O_RDWR | os.O_CREAT, 0o600)

    def probe(data: bytes):
        # Notes the wall-clock time of the first execution that hits the bug (the
        # artifact appears only after assay's replays and shrinking).
        try:
            return inner(data)
        except BaseException as exc:
            if os.fstat(hit_fd).st_size == 0 and exc_matches(exc, bug, target.expected):
                os.pwrite(hit_fd, repr(time.time()).encode(), 0)
            raise

    target = dataclasses.replace(target, fn=probe)
    n_initial = len(dict.fromkeys(target.seeds))
    lock = threading.Lock()
    stop = threading.Event()
    seen: dict[str, Any] = {}

    def scan() -> list[dict[str, Any]]:
        found = []
        for meta_path in arts.glob("*/metadata.json") if arts.exists() else []:
            if not re.fullmatch(r"[0-9a-f]{64}", meta_path.parent.name):
                continue  # a directory still being written (published by one rename)
            try:
                meta = json.loads(meta_path.read_text())
                meta["_input"] = (meta_path.parent / "input").read_bytes()
            except (OSError, ValueError):
                continue
            found.append(meta)
        return found

    def watch() -> None:
        # Stop the campaign once the bug's artifact exists: the rest of the cap
        # would not change the answer.
        while not stop.wait(0.05):
            if any(meta_matches(m, bug) for m in scan()):
                with lock:
                    if not stop.is_set():
                        seen["at"] = time.time()
                        stop.set()
                        _thread.interrupt_main()
                return

    started = time.time()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    outcome = None
    try:
        try:
            options = CampaignOptions(
                corpus_root=str(tmp / "corpus"),
                artifact_root=str(tmp / "artifacts"),
                max_cases=cap,
                seed=seed,
                cmplog=cmplog,
                shrink_cases=spec.get("shrink_cases", 1024),
            )
            outcome = run_campaign([target], options).targets[0]
        finally:
            with lock:
                stop.set()
    except KeyboardInterrupt:
        pass
    total = time.time() - started
    hits = [m for m in scan() if meta_matches(m, bug)]
    others = sorted(
        {
            f"{m.get('oracle')}:{((m.get('exception') or {}).get('type') or '')}"
            for m in scan()
            if not meta_matches(m, bug)
        }
    )
    if not hits:
        return _result(
            False, total_execs=outcome.cases if outcome else None, total_seconds=total, other_findings=others
        )

    def execs_of(m: dict[str, Any]) -> int:
        if m.get("mutation_operators") == ["initial"]:
            return m["case_index"] + 1
        return n_initial + m["case_index"] + 1

    first = min(hits, key=execs_of)
    hit_text = hitfile.read_text() if hitfile.exists() else ""
    hit_at = float(hit_text) if hit_text else seen.get("at", time.time())
    return _result(
        True,
        execs_of(first),
        hit_at - started,
        total_seconds=total,
        other_findings=others,
        input=first["_input"].hex(),
        original_size=first.get("original_size"),
        exception=((first.get("exception") or {}).get("type")),
        oracle=first.get("oracle"),
        message=((first.get("exception") or {}).get("message") or "")[:200],
    )


def atheris_child(spec: dict[str, Any], out: str, argv: list[str]) -> None:
    """Runs inside the atheris process: never returns (libFuzzer exits)."""
    import atheris

    target = load_target(spec, instrument=spec["kind"] != "maze")
    fn = target.fn
    if spec["kind"] == "maze":
        fn = atheris.instrument_func(fn)
        # Its module's helpers too (those behind functools.lru_cache included), as assay's scope has them.
        from assay.feedback.livecode import functions_of

        for helper in functions_of(sys.modules[fn.__module__]):
            if helper is not fn:
                atheris.instrument_func(helper)
    expected = tuple(target.expected)
    bug = spec["bug"]
    state = {"n": 0, "t0": None}

    def record(kind: str, exc: BaseException) -> None:
        with open(out, "w") as f:
            json.dump(
                {
                    "kind": kind,
                    "n": state["n"],
                    "t": time.perf_counter() - state["t0"],
                    "type": type(exc).__name__,
                    "message": str(exc)[:200],
                },
                f,
            )

    def TestOneInput(data: bytes) -> None:  # noqa: N802 - atheris' name
        if state["t0"] is None:
            state["t0"] = time.perf_counter()
        state["n"] += 1
        try:
            fn(data)
        except expected:
            pass
        except BaseException as exc:
            record("bug" if exc_matches(exc, bug, expected) else "other", exc)
            raise

    atheris.Setup([sys.argv[0], *argv], TestOneInput)
    atheris.Fuzz()


def job_atheris(spec: dict[str, Any], seed: int, cap: int) -> dict[str, Any]:
    import re

    # Load once here (uninstrumented) just to read seeds / max_len / timeout.
    target = load_target(spec)
    tmp = Path(tempfile.mkdtemp(prefix="ttb-atheris-"))
    corpus = tmp / "corpus"
    corpus.mkdir()
    for i, s in enumerate(dict.fromkeys(target.seeds)):
        (corpus / f"seed{i}").write_bytes(s)
    out = tmp / "hit.json"
    argv = [
        f"-runs={cap}",
        f"-seed={seed}",
        f"-max_len={target.max_len}",
        "-print_final_stats=1",
        f"-artifact_prefix={tmp}/",
        f"-timeout={max(1, round(target.timeout))}",
        "-rss_limit_mb=4096",
        str(corpus),
    ]
    cmd = [sys.executable, str(Path(__file__).resolve()), "--atheris-child", json.dumps(spec), str(out), "--", *argv]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=tmp, timeout=3600)
    total = time.perf_counter() - started
    log = proc.stderr + proc.stdout
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    executed = int(m.group(1)) if m else None
    if executed is None:
        pounds = re.findall(r"^#(\d+)\s", log, re.M)
        executed = int(pounds[-1]) if pounds else None
    timeout_hit = "libFuzzer: timeout" in log
    hit = json.loads(out.read_text()) if out.exists() else None
    if hit is None and timeout_hit and "wedge" in spec["bug"]:
        return _result(
            True, executed, None, total_seconds=total, exception="libFuzzer timeout", note="hang; seconds not measured"
        )
    if hit and hit["kind"] == "bug":
        return _result(
            True,
            executed or hit["n"],
            hit["t"],
            total_seconds=total,
            exception=hit["type"],
            counted=hit["n"],
            message=hit["message"],
        )
    other = None
    if hit:
        other = f"stopped at another crash: {hit['type']} after {executed or hit['n']} execs"
    elif proc.returncode not in (0,):
        tail = "\n".join(log.strip().splitlines()[-5:])
        other = f"exit {proc.returncode}: {tail[-300:]}"
    return _result(False, total_execs=executed, total_seconds=total, note=other)


class _Found(KeyboardInterrupt):
    """Stops Hypothesis/HypoFuzz at the first failing execution (like libFuzzer does)."""


def _property(target, bug: list[str], counter: dict[str, int]):
    from hypothesis import given, strategies as st

    expected = tuple(target.expected)

    @given(st.binary(max_size=target.max_len))
    def prop(data: bytes) -> None:
        counter["n"] += 1
        try:
            target.fn(data)
        except expected:
            pass
        except Exception as exc:
            if exc_matches(exc, bug, expected):
                raise _Found(counter["n"], data, type(exc).__name__) from None
            raise

    return prop


def job_hypothesis(spec: dict[str, Any], seed: int, cap: int) -> dict[str, Any]:
    from hypothesis import HealthCheck, settings

    target = load_target(spec)
    counter = {"n": 0}
    prop = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))(
        _property(target, spec["bug"], counter)
    )
    rng = random.Random(seed)
    size = 2 * target.max_len + 16  # comfortably enough bytes for a max_len binary
    started = time.perf_counter()
    try:
        while counter["n"] < cap:
            prop.hypothesis.fuzz_one_input(rng.randbytes(rng.randint(1, size)))
    except _Found as f:
        n, data, typ = f.args
        return _result(True, n, time.perf_counter() - started, input=data.hex(), exception=typ)
    return _result(False, total_execs=counter["n"], total_seconds=time.perf_counter() - started)


def job_hypofuzz(spec: dict[str, Any], seed: int, cap: int) -> dict[str, Any]:
    from hypothesis import settings
    from hypothesis.database import InMemoryExampleDatabase

    settings.register_profile("time-to-bug", database=InMemoryExampleDatabase())
    settings.load_profile("time-to-bug")
    from hypofuzz.database import HypofuzzDatabase
    from hypofuzz.hypofuzz import FuzzTarget

    target = load_target(spec)
    counter = {"n": 0}
    prop = _property(target, spec["bug"], counter)
    ft = FuzzTarget.from_hypothesis_test(prop, database=HypofuzzDatabase(settings().database))
    ft.random.seed(seed)
    ft.provider.random.seed(seed)
    ft._enter_fixtures()
    started = time.perf_counter()
    try:
        while counter["n"] < cap:
            ft.run_one()
    except _Found as f:
        n, data, typ = f.args
        return _result(True, n, time.perf_counter() - started, input=data.hex(), exception=typ)
    return _result(False, total_execs=counter["n"], total_seconds=time.perf_counter() - started)


class _Hang(BaseException):
    """Raised by the alarm in :func:`job_poc` (a BaseException: targets catch Exception)."""


def job_poc(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the advisory's reproducer once through the target: does it hit the bug?"""
    target = load_target(spec)
    poc = bytes.fromhex(spec["poc_hex"]) if spec.get("poc_hex") else spec["poc"]
    started = time.perf_counter()
    if "wedge" in spec["bug"]:
        import signal

        def on_alarm(signum, frame):  # noqa: ARG001
            raise _Hang("hang")

        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, max(2.0, target.timeout))
    try:
        target.fn(poc)
        outcome, hit = "returned", False
    except _Hang:
        outcome, hit = f"hang (> {max(2.0, target.timeout):.0f} s)", True
    except BaseException as exc:  # noqa: BLE001
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
        hit = exc_matches(exc, spec["bug"], tuple(target.expected))
    finally:
        if "wedge" in spec["bug"]:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
    return {"hit": bool(hit), "outcome": outcome, "seconds": time.perf_counter() - started}


def run_job_inline(job: dict[str, Any]) -> dict[str, Any]:
    spec, tool = job["spec"], job["tool"]
    if tool == "assay-cmp":
        return job_assay(spec, job["seed"], job["cap"], True)
    if tool == "assay-nocmp":
        return job_assay(spec, job["seed"], job["cap"], False)
    if tool == "atheris":
        return job_atheris(spec, job["seed"], job["cap"])
    if tool == "hypothesis":
        return job_hypothesis(spec, job["seed"], job["cap"])
    if tool == "hypofuzz":
        return job_hypofuzz(spec, job["seed"], job["cap"])
    if tool == "poc":
        return job_poc(spec)
    raise SystemExit(f"unknown tool {tool}")


# =========================================================================================
# The orchestrator
# =========================================================================================


def historical_specs() -> list[dict[str, Any]]:
    """Each ``bench/historical/*.py`` target, read with ``ast`` (no import: the
    package it needs lives in its own venv)."""
    specs = []
    for path in sorted(HIST.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        history: dict[str, Any] = {}
        name = None
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "HISTORY" for t in node.targets):
                for k, v in zip(node.value.keys, node.value.values):  # type: ignore[attr-defined]
                    try:
                        history[ast.literal_eval(k)] = ast.literal_eval(v)
                    except ValueError:
                        history[ast.literal_eval(k)] = None  # computed (poc): read in the job
            if isinstance(node, ast.FunctionDef):
                for dec in node.decorator_list:
                    if isinstance(dec, ast.Call):
                        for kw in dec.keywords:
                            if kw.arg == "name":
                                name = ast.literal_eval(kw.value)
        if not history or not name:
            continue
        history.pop("poc", None)  # bytes (or an expression): the poc job reads it from the file
        specs.append(
            {
                "kind": "hist",
                "file": str(path),
                "name": name,
                "bug": history["bug"],
                "module": history["module"],
                "venv": history["venv"],
                "history": history,
                # Each shrink candidate of a slow or deep input costs up to ~0.5 s: a smaller budget.
                "shrink_cases": 256,
            }
        )
    return specs


def maze_spec(name: str) -> dict[str, Any]:
    return {"kind": "maze", "name": name, "bug": ["RuntimeError"]}


def venv_python(name: str) -> Path:
    return VENVS / name / "bin" / "python"


def fixed_venv(requirement: str) -> str:
    pkg, version = requirement.split("==")
    return f"{pkg}-{version}"


def ensure_venvs(names: set[str], allow_setup: bool) -> dict[str, str]:
    """Missing venvs -> reason.  Runs setup.sh once if something is missing."""
    missing = {n for n in names if not venv_python(n).exists()}
    if missing and allow_setup:
        print(f"[setup] making venvs: {', '.join(sorted(missing))} (bench/historical/setup.sh)", file=sys.stderr)
        args = ["bash", str(HIST / "setup.sh")]
        if any(n in FIXED_VENVS for n in missing):
            args.append("--fixed")
        subprocess.run(args, check=False)
        missing = {n for n in names if not venv_python(n).exists()}
    return dict.fromkeys(missing, "venv missing (run bench/historical/setup.sh)")


FIXED_VENVS: set[str] = set()


def run_subprocess_job(job: dict[str, Any], python: str, env_extra: dict[str, str], timeout: float) -> dict[str, Any]:
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env_extra.get("PYTHONPATH_PRE")])]) + (
        os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""
    )
    env.pop("PYTHONPATH_PRE", None)
    cmd = [python, str(Path(__file__).resolve()), "--job", json.dumps(job)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, errors="replace", env=env, cwd=str(ROOT), timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"found": False, "error": f"job exceeded {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.strip().splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-6:])
        return {"found": False, "error": f"exit {proc.returncode}: {tail[-400:]}"}
    return json.loads(lines[-1])


def site_packages(venv: str) -> str:
    lib = VENVS / venv / "lib"
    found = sorted(lib.glob("python3*/site-packages"))
    return str(found[0]) if found else ""


def plan_job(tool: str, spec: dict[str, Any], seed: int, cap: int) -> tuple[dict[str, Any], str, dict[str, str]]:
    """(job, python, env) for one run."""
    job = {"tool": tool, "spec": spec, "seed": seed, "cap": cap}
    main_python = sys.executable
    if spec["kind"] == "maze":
        if tool == "hypofuzz":
            return job, str(venv_python("hypofuzz")), {}
        return job, main_python, {}
    if tool == "atheris":
        # atheris lives in the project venv; the old package comes first on the path.
        return job, main_python, {"PYTHONPATH_PRE": site_packages(spec["venv"])}
    return job, str(venv_python(spec["venv"])), {}


def fmt_int(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def summarize(results: list[dict[str, Any]], cap: int) -> str:
    """Median over seeds (``median_high``); a not-found run counts as +infinity."""
    if not results:
        return "-"
    errors = [r for r in results if r.get("error")]
    if errors and len(errors) == len(results):
        return f"error ({errors[0]['error'][:60]})"
    n = len(results)
    found = [r for r in results if r.get("found")]
    execs = [r["execs"] if r.get("found") and r.get("execs") is not None else float("inf") for r in results]
    med = statistics.median_high(execs)  # the middle run; the upper one of two for an even count
    if med == float("inf"):
        return f"not found ≤{cap:,} ({len(found)}/{n})"
    secs = sorted(r["seconds"] for r in found if r.get("seconds") is not None)
    sec = f", {statistics.median(secs):.1f} s" if secs else ""
    return f"{int(med):,}{sec} ({len(found)}/{n})"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    return "\n".join([line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="1 seed, small caps (~3 min)")
    ap.add_argument("--cap", type=int, help="case cap for assay and atheris on the mazes")
    ap.add_argument("--slow-cap", type=int, help="case cap for hypothesis and hypofuzz (slower per execution)")
    ap.add_argument("--hist-cap", type=int, help="case cap for assay on the historical targets")
    ap.add_argument("--atheris-hist-cap", type=int, help="case cap for atheris on the historical targets")
    ap.add_argument("--seeds", type=int, help="seeds per maze and tool (median reported)")
    ap.add_argument("--hist-seeds", type=int, help="seeds per historical target and tool")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    ap.add_argument("--only", default="", help="comma-separated target names (mazes or historical) to run")
    ap.add_argument("--tools", default="", help="comma-separated subset of " + ",".join(MAZE_TOOLS))
    ap.add_argument("--no-mazes", action="store_true")
    ap.add_argument("--no-historical", action="store_true")
    ap.add_argument("--no-setup", action="store_true", help="do not run setup.sh for missing venvs")
    ap.add_argument(
        "--verify", action="store_true", help="only check each historical reproducer (old: bug, fixed: none)"
    )
    ap.add_argument("--json", help="write every run's raw result to this file")
    # internal
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--atheris-child", nargs=2, help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args(argv)

    if args.job:
        print(json.dumps(run_job_inline(json.loads(args.job))))
        return 0
    if args.atheris_child:
        rest = rest[1:] if rest[:1] == ["--"] else rest
        atheris_child(json.loads(args.atheris_child[0]), args.atheris_child[1], rest)
        return 0

    conf = dict(QUICK if args.quick else FULL)
    for key in ("cap", "slow_cap", "hist_cap", "atheris_hist_cap", "seeds", "hist_seeds"):
        if getattr(args, key) is not None:
            conf[key] = getattr(args, key)
    only = {s for s in args.only.split(",") if s}
    unknown = only - set(MAZES) - {s["name"] for s in historical_specs()}
    if unknown:
        ap.error(f"--only: no maze or historical bug named {', '.join(sorted(unknown))}")
    tools = [t for t in args.tools.split(",") if t] or MAZE_TOOLS
    hist = [] if args.no_historical else [s for s in historical_specs() if not only or s["name"] in only]
    mazes = [] if args.no_mazes or args.verify else [m for m in MAZES if not only or m in only]

    if args.verify:
        return verify(hist, not args.no_setup)

    need = {s["venv"] for s in hist}
    for s in hist:  # the fixing versions: assay's inputs are replayed there
        FIXED_VENVS.add(fixed_venv(s["history"]["fixed"]))
    need |= FIXED_VENVS
    if mazes and "hypofuzz" in tools:
        need.add("hypofuzz")
    missing = ensure_venvs(need, not args.no_setup)

    planned: list[tuple[str, str, int, tuple]] = []  # (table, target, seed, plan)
    for m in mazes:
        spec = maze_spec(m)
        for tool in tools:
            cap = conf["slow_cap"] if tool in SLOW_TOOLS else conf["cap"]
            for seed in range(1, conf["seeds"] + 1):
                planned.append(("maze", m, tool, plan_job(tool, spec, seed, cap)))
    for spec in hist:
        for tool in HIST_TOOLS:
            if tool not in tools and not (tool == "assay-cmp" and "assay-cmp" in tools):
                continue
            for seed in range(1, conf["hist_seeds"] + 1):
                cap = conf["atheris_hist_cap"] if tool == "atheris" else conf["hist_cap"]
                planned.append(("hist", spec["name"], tool, plan_job(tool, spec, seed, cap)))

    # Longest jobs first (the historical ones), so two workers finish together.
    planned.sort(key=lambda item: item[0] != "hist")
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    raw: list[dict[str, Any]] = []
    started = time.perf_counter()
    done = [0]

    def run(item):
        kind, name, tool, (job, python, env) = item
        if kind == "hist" and job["spec"]["venv"] in missing:
            res = {"found": False, "error": missing[job["spec"]["venv"]]}
        elif tool == "hypofuzz" and "hypofuzz" in missing:
            res = {"found": False, "error": "n/a (" + missing["hypofuzz"] + ")"}
        else:
            t0 = time.perf_counter()
            res = run_subprocess_job(job, python, env, timeout=1800)
            res["wall"] = time.perf_counter() - t0
        done[0] += 1
        status = (
            "found " + fmt_int(res.get("execs"))
            if res.get("found")
            else ("ERROR " + res["error"][:80] if res.get("error") else "not found")
        )
        print(
            f"[{done[0]}/{len(planned)} {time.perf_counter() - started:6.0f}s] {tool:<11} {name:<32} seed {job['seed']}: {status}",
            file=sys.stderr,
            flush=True,
        )
        return kind, name, tool, job, res

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for kind, name, tool, job, res in pool.map(run, planned):
            results.setdefault((name, tool), []).append(res)
            raw.append({"table": kind, "target": name, "tool": tool, "seed": job["seed"], "cap": job["cap"], **res})

    print()
    print(
        f"time_to_bug: caps {conf['cap']:,} (assay, atheris), {conf['slow_cap']:,} (hypothesis, hypofuzz), "
        f"{conf['hist_cap']:,} / {conf['atheris_hist_cap']:,} (historical: assay / atheris); seeds {conf['seeds']} (mazes), {conf['hist_seeds']} (historical); "
        f"python {sys.version.split()[0]}; {time.perf_counter() - started:.0f} s total"
    )
    if mazes:
        print()
        print("Search mazes: median executions to the bug (median seconds) (seeds that found it / seeds)")
        print()
        rows = []
        for m in mazes:
            row = [m]
            for tool in tools:
                cap = conf["slow_cap"] if tool in SLOW_TOOLS else conf["cap"]
                rs = results.get((m, tool), [])
                cell = summarize(rs, cap)
                if tool == "hypofuzz" and rs and all(str(r.get("error", "")).startswith("n/a") for r in rs):
                    cell = rs[0]["error"]
                row.append(cell)
            rows.append(row)
        print(
            table(
                ["maze"]
                + [HEADERS[t] + (f" (cap {conf['slow_cap'] // 1000}k)" if t in SLOW_TOOLS else "") for t in tools],
                rows,
            )
        )
    if hist:
        print()
        print("Historical bugs: executions to the bug (seconds) (found / seeds); minimized input assay found")
        print()
        rows = []
        for spec in hist:
            h = spec["history"]
            row = [spec["name"], h["requirement"].split("==")[1] + " → " + h["fixed"].split("==")[1], h["kind"]]
            for tool in HIST_TOOLS:
                cap = conf["atheris_hist_cap"] if tool == "atheris" else conf["hist_cap"]
                row.append(summarize(results.get((spec["name"], tool), []), cap))
            hits = [r for r in results.get((spec["name"], "assay-cmp"), []) if r.get("found") and r.get("input")]
            if hits:
                first = min(hits, key=lambda r: r["execs"])
                data = bytes.fromhex(first["input"])
                shown = repr(data) if len(data) <= 40 else f"{data[:24]!r}… ({len(data)} bytes)"
                row.append(shown)
                row.append(replay_fixed(spec, first["input"], missing))
                raw.append({"table": "replay", "target": spec["name"], "input": first["input"], "fixed": row[-1]})
            else:
                row += ["-", "-"]
            rows.append(row)
        print(
            table(
                [
                    "target",
                    "old → fixed",
                    "kind",
                    "assay",
                    f"atheris (cap {conf['atheris_hist_cap'] // 1000}k)",
                    "assay's input (minimized)",
                    "that input on the fixed version",
                ],
                rows,
            )
        )
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1))
    return 0


def replay_fixed(spec: dict[str, Any], input_hex: str, missing: dict[str, str]) -> str:
    """What the fixing release does with the input assay found (is it the advisory's bug?)."""
    venv = fixed_venv(spec["history"]["fixed"])
    if venv in missing:
        return "n/a (" + missing[venv] + ")"
    res = run_subprocess_job({"tool": "poc", "spec": {**spec, "poc_hex": input_hex}}, str(venv_python(venv)), {}, 120)
    if res.get("error"):
        return "error: " + res["error"][:60]
    verdict = "still the bug" if res.get("hit") else "ok"
    return f"{verdict}: {res['outcome'][:48]} ({res['seconds'] * 1e3:.0f} ms)"


def verify(hist: list[dict[str, Any]], allow_setup: bool) -> int:
    """Each reproducer must hit the bug on the old version and not on the fixed one."""
    for spec in hist:
        FIXED_VENVS.add(fixed_venv(spec["history"]["fixed"]))
    need = {s["venv"] for s in hist} | FIXED_VENVS
    missing = ensure_venvs(need, allow_setup)
    rows, bad = [], 0
    for spec in hist:
        h = spec["history"]
        cells = [spec["name"]]
        outcomes = []
        for venv in (spec["venv"], fixed_venv(h["fixed"])):
            if venv in missing:
                cells.append(f"{venv}: {missing[venv]}")
                outcomes.append(None)
                continue
            job = {"tool": "poc", "spec": {**spec, "poc": None}}
            res = run_subprocess_job_poc(job, str(venv_python(venv)))
            outcomes.append(res.get("hit"))
            cells.append(
                f"{'BUG' if res.get('hit') else 'ok'}: {res.get('outcome', res.get('error', ''))[:70]} "
                f"({res.get('seconds', 0):.2f} s)"
            )
        bad += outcomes != [True, False]
        rows.append(cells)
    print(table(["target", "old version", "fixed version"], rows))
    return 1 if bad else 0


def run_subprocess_job_poc(job: dict[str, Any], python: str) -> dict[str, Any]:
    # The reproducer may be computed (b"[" * 1000 ...): the job reads it from the file.
    return run_subprocess_job({**job, "read_poc": True}, python, {}, timeout=120)


if __name__ == "__main__":
    # A job reading its reproducer from the target file (HISTORY["poc"] may be an expression).
    if "--job" in sys.argv:
        _job = json.loads(sys.argv[sys.argv.index("--job") + 1])
        if _job.get("read_poc"):
            sys.path.insert(0, str(SRC))
            from assay.harness.discovery import import_file as _import_file

            _mod = _import_file(Path(_job["spec"]["file"]))
            _job["spec"]["poc"] = _mod.HISTORY["poc"]
            print(json.dumps(job_poc(_job["spec"])))
            sys.exit(0)
    sys.exit(main())


# ---------------------------------------------------------------------------------------
# Search power, round two (issue 13, item 5): bugs that need long or deeply nested
# inputs, an unrelated hang in front of a deeper bug, a shallow frequent crash in
# front of a deeper one.  Run with ``python bench/search_power.py`` (this section is
# imported from there, so it stays apart from the maze table above).  Each case runs
# assay as shipped and with the one mechanism it needs switched off; the targets are
# tests/search_power_targets.py (the recursion one is the real tomllib).
# ---------------------------------------------------------------------------------------

SEARCH_POWER_CAP = 8000


def search_power_cases() -> list[dict[str, Any]]:
    """(name, target kwargs, what counts as found, the mechanism and how to switch it off)."""
    return [
        {
            "name": "quadratic_runs",
            "kw": {"seeds": [b"<a"], "max_len": 8192, "timeout": 0.25},
            "found": ["wedge:", "slow:"],
            "off": "long children, deep nestings and cost counting",
            "patch": [
                ("assay.gen.mutators", "LONG_SHARE", 0.0),
                ("assay.gen.mutators", "NEST_DEEP", 0.0),
                ("assay.engine.worker", "COST_EVERY", 0),
            ],
        },
        {
            "name": "toml_nesting",
            "kw": {"seeds": [b"a = [1]\n", b"[t]\nx = {y = 1}\n"], "max_len": 4096, "expected": "tomllib"},
            "found": ["panic:builtins.RecursionError"],
            "off": "the nest mutation",
            "drop": "nest",
        },
        {
            "name": "hang_then_deep",
            "kw": {"seeds": [b"hello"], "max_len": 64, "timeout": 0.2},
            "found": ["panic:builtins.RuntimeError"],
            "off": "passing over parents of hangs",
            "patch": [("assay.engine.generate", "MAX_SKIP", 0.0)],
        },
        {
            "name": "shallow_then_deep",
            "kw": {"seeds": [b"hello"], "max_len": 64},
            "found": ["panic:builtins.ZeroDivisionError"],
            "off": "passing over parents of known crashes",
            "patch": [("assay.engine.generate", "MAX_SKIP", 0.0)],
        },
    ]


def search_power_job(case: dict[str, Any], seed: int, cap: int, off: bool) -> dict[str, Any]:
    """One capped campaign in a child process; the case index of the first wanted finding."""
    import importlib

    sys.path[:0] = [str(SRC), str(ROOT / "tests")]
    if off:
        for module, name, value in case.get("patch", []):
            setattr(importlib.import_module(module), name, value)
        if case.get("drop"):
            del importlib.import_module("assay.gen.mutators").MUTATIONS[case["drop"]]
    import search_power_targets as spt
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.harness.define import make_target
    from assay.store.artifacts import load_artifact

    kw = dict(case["kw"])
    if kw.pop("expected", None) == "tomllib":
        import tomllib

        kw["expected"] = (tomllib.TOMLDecodeError,)
    target = make_target(getattr(spt, case["name"]), **kw)
    with tempfile.TemporaryDirectory(prefix="assay-power-") as tmp:
        t0 = time.perf_counter()
        (out,) = run_campaign(
            [target],
            CampaignOptions(
                corpus_root=f"{tmp}/c", artifact_root=f"{tmp}/a", max_cases=cap, seed=seed, shrink_cases=64
            ),
        ).targets
        seconds = time.perf_counter() - t0
        hits = [
            load_artifact(f.artifact).metadata.get("case_index")
            for f in out.findings
            if any(f.signature.startswith(p) for p in case["found"])
        ]
        wedges = sum(f.occurrences for f in out.findings if f.oracle == "wedge")
    return {"found": bool(hits), "case": min(hits) if hits else None, "seconds": seconds, "wedges": wedges}


def search_power_main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="item 5 of issue 13: long inputs, hangs, shallow crashes, nesting")
    ap.add_argument("--cap", type=int, default=SEARCH_POWER_CAP)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.job:
        job = json.loads(args.job)
        case = next(c for c in search_power_cases() if c["name"] == job["case"])
        print(json.dumps(search_power_job(case, job["seed"], job["cap"], job["off"])))
        return 0
    rows = []
    for case in search_power_cases():
        cells = [case["name"]]
        for off in (False, True):
            results = []
            for seed in range(1, args.seeds + 1):
                job = json.dumps({"case": case["name"], "seed": seed, "cap": args.cap, "off": off})
                proc = subprocess.run(
                    [sys.executable, str(Path(__file__).with_name("search_power.py")), "--job", job],
                    capture_output=True,
                    text=True,
                    timeout=1800,
                )
                results.append(
                    json.loads(proc.stdout.strip().splitlines()[-1])
                    if proc.returncode == 0
                    else {"found": False, "case": None, "seconds": 0.0, "wedges": 0, "error": proc.stderr[-300:]}
                )
            found = [r["case"] for r in results if r["found"]]
            med = int(statistics.median(found)) if len(found) == len(results) else None
            cells.append(
                f"{len(found)}/{len(results)} found, median case {fmt_int(med)}, "
                f"{statistics.median(r['seconds'] for r in results):.1f} s, "
                f"{sum(r['wedges'] for r in results)} wedges"
            )
        cells.append(case["off"])
        rows.append(cells)
    print(f"Cap {args.cap:,} generated cases, seeds 1..{args.seeds}.\n")
    print(table(["case", "assay", "assay, mechanism off", "mechanism"], rows))
    return 0
