#!/usr/bin/env python
"""Throughput of assay's coverage feedback against an uninstrumented loop.

Run from the repository root with the project's venv::

    python bench/throughput.py              # 5 interleaved runs of 5 targets, a few minutes
    python bench/throughput.py --quick      # 3 runs, 500 inputs, 3 fast targets (< 30 s)
    python bench/throughput.py --callbacks  # also count feedback callbacks at saturation
    python bench/throughput.py --end-to-end # assay fuzz vs atheris.Fuzz end to end (bench/end_to_end.py)

See bench/README.md for what the columns mean and for measured numbers.

For each stdlib parser target it measures, in one process and one run:

``uninstr``     a bare loop calling the target over a fixed input list;
``assay``       the same loop under ``SysmonFeedback`` at saturation (one untimed
                warm-up pass first), with ``take_new()`` and ``maybe_restart(i)``
                per input as the engine worker calls them; each timed window spans
                whole multiples of ``RESTART_EVERY`` cases and starts at a restart,
                so the periodic re-arm cost is amortised exactly as in a campaign;
``cov-sysmon``  coverage.py with ``COVERAGE_CORE=sysmon`` (branch coverage if this
                Python and coverage.py can do it with sys.monitoring, else lines
                only: before 3.14 coverage.py silently falls back to ctrace for
                branch=True, so that would measure ctrace twice);
``cov-ctrace``  coverage.py, ``branch=True``, default C tracer core;
``atheris``     atheris bytecode instrumentation (``atheris.instrument_func``) of
                exactly the functions in the target's sources, swapped in and out
                of the function objects so it can be interleaved in-process;
``engine``      ``run_campaign`` end to end with a case cap (mutation, per-case
                RNG, journal, pipe, fork), its own ``execs_per_sec``.

Runs are interleaved (ABCDEF ABCDEF ...).  The table shows the median execs/s over
the runs and the median of the per-run ratios method/uninstr (each run's method
paired with the same run's uninstrumented loop).
"""

from __future__ import annotations

import argparse
import collections
import gc
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

from stdlib_targets import SPECS, Spec

from assay.core.target import Target
from assay.engine.campaign import CampaignOptions, run_campaign
from assay.feedback import sysmon as sysmon_mod
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from assay.harness.define import make_target

perf_counter = time.perf_counter
process_time = time.process_time


# ---------------------------------------------------------------------------------------
# Targets: real stdlib parsers, taking bytes (bench/stdlib_targets.py)
# ---------------------------------------------------------------------------------------

QUICK_TARGETS = ("json.loads", "tomllib.loads", "urllib.parse")


def make_inputs(spec: Spec, n: int, seed: int) -> list[bytes]:
    """``n`` inputs, deterministic: the seeds with 0-5 small random edits each."""
    rng = random.Random(f"{spec.name}:{seed}")
    alphabet = sorted(set(b"".join(spec.seeds)) | set(b"{}[]<>\"'\\:;,=&?#%@!-./ \t\r\n0123456789"))
    out = []
    for _ in range(n):
        data = bytearray(rng.choice(spec.seeds))
        for _ in range(rng.choice((0, 0, 1, 1, 1, 2, 3, 5))):
            op = rng.randrange(5)
            pos = rng.randrange(len(data) + 1)
            if op == 0 and data:
                data[min(pos, len(data) - 1)] = rng.choice(alphabet)
            elif op == 1:
                data[pos:pos] = bytes([rng.choice(alphabet)])
            elif op == 2:
                del data[pos : pos + rng.randint(1, 4)]
            elif op == 3:
                a = rng.randrange(len(data) + 1)
                data[pos:pos] = data[a : a + rng.randint(1, 16)]
            else:
                data[pos:pos] = bytes([rng.randrange(256)])
        out.append(bytes(data))
    return out


# ---------------------------------------------------------------------------------------
# Measured loops.  Each returns seconds for ``len(seq)`` calls.
# ---------------------------------------------------------------------------------------


def bare_loop(fn, seq, expected) -> tuple[float, float]:
    """(wall seconds, CPU seconds) for calling ``fn`` on every input of ``seq``."""
    c0, t0 = process_time(), perf_counter()
    for data in seq:
        try:
            fn(data)
        except expected:
            pass
    t1 = perf_counter()
    return t1 - t0, process_time() - c0


def feedback_loop(fn, seq, expected, fb: SysmonFeedback, first_index: int) -> tuple[float, float]:
    """The worker's per-case feedback calls around the target: maybe_restart, run, take_new."""
    maybe_restart, take_new = fb.maybe_restart, fb.take_new
    c0, t0 = process_time(), perf_counter()
    for i, data in enumerate(seq, first_index):
        maybe_restart(i)
        try:
            fn(data)
        except expected:
            pass
        take_new()
    t1 = perf_counter()
    return t1 - t0, process_time() - c0


def cycle(inputs: list[bytes], n: int) -> list[bytes]:
    return [inputs[i % len(inputs)] for i in range(n)]


@dataclass
class Bench:
    spec: Spec
    target: Target
    paths: list[str]
    inputs: list[bytes]
    window: list[bytes]  # the timed sequence of uninstr / coverage / atheris
    assay_window: list[bytes]  # whole multiples of RESTART_EVERY
    warm: list[bytes]  # short warm-up for methods without saturation
    rejects: int = 0
    assay_passes: int = 0  # timed assay windows so far (gives the restart indices)
    atheris_codes: dict | None = None
    atheris_note: str = ""
    samples: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    ratios: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    cpu_samples: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    cpu_ratios: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    engine_cases: int = 0
    info: dict[str, Any] = field(default_factory=dict)


def rates(n: int, times: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = times
    return n / wall, n / cpu if cpu > 0 else float("nan")


def record(b: Bench, method: str, measured: tuple[float, float] | None) -> None:
    if measured is None:
        return
    b.samples[method].append(measured[0])
    b.cpu_samples[method].append(measured[1])


def measure_bare(b: Bench) -> tuple[float, float]:
    fn, exp = b.spec.fn, b.spec.expected
    bare_loop(fn, b.warm, exp)
    gc.collect()
    return rates(len(b.window), bare_loop(fn, b.window, exp))


def measure_assay(b: Bench) -> tuple[float, float]:
    fn, exp = b.spec.fn, b.spec.expected
    fb = SysmonFeedback(Scope(b.paths))
    fb.start()
    try:
        # Warm-up: the whole input list once, so every line and edge the inputs reach
        # is seen and retired.  Its case indices start at 1, so (for input lists
        # shorter than RESTART_EVERY) it never restarts.
        feedback_loop(fn, b.inputs, exp, fb, 1)
        gc.collect()
        # Timed: indices k*RESTART_EVERY ... so the window begins with a restart and
        # holds exactly len(window)/RESTART_EVERY of them, as a campaign would.
        b.assay_passes += 1
        first = b.assay_passes * len(b.assay_window)
        times = feedback_loop(fn, b.assay_window, exp, fb, first)
        b.info["assay_counts"] = fb.counts()
    finally:
        fb.stop()
    return rates(len(b.assay_window), times)


def coverage_core_probe() -> tuple[bool, str]:
    """Can coverage.py do branch coverage with its sysmon core here?"""
    import coverage

    old = os.environ.get("COVERAGE_CORE")
    os.environ["COVERAGE_CORE"] = "sysmon"
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cov = coverage.Coverage(branch=True, data_file=None, config_file=False, include=["/nonexistent/*"])
            cov.start()
            cov.stop()
        core = dict(cov.sys_info()).get("core", "?")
        msgs = " ".join(str(w.message) for w in caught)
    finally:
        _restore_env("COVERAGE_CORE", old)
    if core == "SysMonitor":
        return True, ""
    return False, msgs.split(",")[0] if msgs else f"coverage used {core}"


def _restore_env(key: str, old: str | None) -> None:
    if old is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = old


def measure_coverage(b: Bench, core: str, branch: bool) -> tuple[float, float]:
    import coverage

    fn, exp = b.spec.fn, b.spec.expected
    include = [p.rstrip(os.sep) + os.sep + "*" if os.path.isdir(p) else p for p in b.paths]
    old = os.environ.get("COVERAGE_CORE")
    os.environ["COVERAGE_CORE"] = core  # read when the Coverage object is created
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cov = coverage.Coverage(branch=branch, include=include, data_file=None, config_file=False)
    finally:
        _restore_env("COVERAGE_CORE", old)
    cov.start()
    try:
        # sys.monitoring cores saturate like assay: give them the same full warm-up.
        bare_loop(fn, b.inputs if core == "sysmon" else b.warm, exp)
        gc.collect()
        times = bare_loop(fn, b.window, exp)
    finally:
        cov.stop()
    b.info[f"cov-{core}-core"] = dict(cov.sys_info()).get("core", "?")
    return rates(len(b.window), times)


def prepare_atheris(b: Bench, scope: Scope) -> None:
    """Instrument the in-scope functions once; keep both code objects to swap."""
    try:
        import atheris
    except Exception as exc:  # noqa: BLE001
        b.atheris_note = f"atheris not importable: {type(exc).__name__}: {exc}"
        return
    funcs = [
        o for o in gc.get_objects() if isinstance(o, types.FunctionType) and scope.contains(o.__code__.co_filename)
    ]
    original = {f: f.__code__ for f in funcs}
    instrumented: dict[types.FunctionType, types.CodeType] = {}
    failed = 0
    try:
        for f in funcs:
            try:
                atheris.instrument_func(f)
                instrumented[f] = f.__code__
            except Exception:  # noqa: BLE001
                failed += 1
    finally:
        for f, code in original.items():
            f.__code__ = code
    if not instrumented:
        b.atheris_note = "no function could be instrumented"
        return
    b.atheris_codes = {"original": original, "instrumented": instrumented}
    b.info["atheris_funcs"] = f"{len(instrumented)} functions instrumented" + (f", {failed} failed" if failed else "")


def measure_atheris(b: Bench) -> tuple[float, float] | None:
    if b.atheris_codes is None:
        return None
    fn, exp = b.spec.fn, b.spec.expected
    for f, code in b.atheris_codes["instrumented"].items():
        f.__code__ = code
    try:
        bare_loop(fn, b.warm, exp)
        gc.collect()
        times = bare_loop(fn, b.window, exp)
    finally:
        for f, code in b.atheris_codes["original"].items():
            f.__code__ = code
    return rates(len(b.window), times)


def measure_engine(b: Bench, cases: int, seed: int, cmplog: bool = True) -> tuple[float, float]:
    """``run_campaign``'s own execs/s, and cases per CPU second of parent plus workers."""
    before = os.times()
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        result = run_campaign(
            [b.target],
            CampaignOptions(
                corpus_root=os.path.join(tmp, "corpus"),
                artifact_root=os.path.join(tmp, "artifacts"),
                max_cases=cases,
                seed=seed,
                cmplog=cmplog,
            ),
        )
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])  # user+system of this process and its reaped workers
    out = result.targets[0]
    b.info["engine"] = (
        f"{out.cases} cases in {out.elapsed:.2f}s, {out.edges} edges, {out.lines} lines, "
        f"{len(out.findings)} findings, {out.worker_restarts} worker restarts"
    )
    if out.findings:
        b.info["engine"] += " (" + ", ".join(f.signature for f in out.findings) + ")"
    return out.execs_per_sec, out.cases / cpu if cpu > 0 else float("nan")


# ---------------------------------------------------------------------------------------
# Callback counting (--callbacks): which events keep firing at saturation
# ---------------------------------------------------------------------------------------


class CountingFeedback(SysmonFeedback):
    """SysmonFeedback that counts its callback invocations by event and by code."""

    def __init__(self, scope: Scope) -> None:
        super().__init__(scope)
        self.calls: collections.Counter[str] = collections.Counter()
        self.branch_sites: collections.Counter[tuple[str, int]] = collections.Counter()

    def _on_start(self, code, offset):
        self.calls["PY_START"] += 1
        return super()._on_start(code, offset)

    def _on_line(self, code, line):
        self.calls["LINE"] += 1
        return super()._on_line(code, line)

    def _on_branch(self, code, src, dst):
        self.calls["BRANCH"] += 1
        self.branch_sites[(f"{os.path.basename(code.co_filename)}:{code.co_qualname}", src)] += 1
        return super()._on_branch(code, src, dst)

    def _on_branch_split(self, code, src, dst):
        self.calls["BRANCH_LR"] += 1
        return super()._on_branch_split(code, src, dst)


def count_callbacks(b: Bench) -> dict[str, Any]:
    fn, exp = b.spec.fn, b.spec.expected
    fb = CountingFeedback(Scope(b.paths))
    fb.start()
    try:
        feedback_loop(fn, b.inputs, exp, fb, 1)
        warm = dict(fb.calls)
        fb.calls.clear()
        fb.branch_sites.clear()
        # Steady state without a restart (indices never a multiple of RESTART_EVERY).
        every = sysmon_mod.RESTART_EVERY
        n = min(len(b.inputs), every - 1)
        feedback_loop(fn, b.inputs[:n], exp, fb, 1)
        no_restart = dict(fb.calls)
        fb.calls.clear()
        fb.branch_sites.clear()
        # One full restart period, starting with the restart.
        feedback_loop(fn, cycle(b.inputs, every), exp, fb, every)
        period = dict(fb.calls)
        top = fb.branch_sites.most_common(5)
    finally:
        fb.stop()
    capped = sum(1 for k in fb.branch_sites.values() if k >= sysmon_mod.ONE_WAY_CAP)
    return {"warm": warm, "steady_n": n, "steady": no_restart, "period": period, "top_sites": top, "capped": capped}


def _spin(n: int) -> int:
    """A loop with a one-way branch (``x < 0`` is never true): the callback microbenchmark."""
    k = 0
    for x in range(n):
        if x < 0:
            k += 1
    return k


def _best(fn, *a, repeat: int = 9) -> float:
    best = float("inf")
    for _ in range(repeat):
        c0 = process_time()
        fn(*a)
        best = min(best, process_time() - c0)
    return best


def callback_costs(n: int = 200_000) -> dict[str, float]:
    """CPU microseconds of one BRANCH callback and of the per-case harness calls."""
    bare = _best(_spin, n)
    saved = sysmon_mod.ONE_WAY_CAP
    sysmon_mod.ONE_WAY_CAP = 1 << 62  # the one-way site then fires on every iteration
    fb = SysmonFeedback(Scope([os.path.abspath(__file__)]))
    fb.start()
    try:
        _spin(10)
        monitored = _best(_spin, n)
    finally:
        fb.stop()
        sysmon_mod.ONE_WAY_CAP = saved
    idle = SysmonFeedback(Scope([]))

    def harness(k):
        maybe_restart, take_new = idle.maybe_restart, idle.take_new
        for i in range(1, k + 1):
            maybe_restart(i)
            take_new()

    def empty(k):
        for _i in range(1, k + 1):
            pass

    return {
        "branch_cb_us": 1e6 * (monitored - bare) / n,
        "harness_us": 1e6 * (_best(harness, n) - _best(empty, n)) / n,
    }


def callback_cost_in_context(b: Bench, n: int = 500, reps: int = 5) -> tuple[float, float]:
    """CPU microseconds of one feedback callback inside this target's own code.

    The same saturated pass is timed twice: as shipped, and with ONE_WAY_CAP raised
    so high that every one-way branch site calls back on every execution.  The
    extra time over the extra callbacks (counted with CountingFeedback) is the cost
    of a callback where it really happens, cache misses and re-instrumented
    bytecode included; the tight-loop microbenchmark only gives a lower bound.
    Returns (microseconds per callback, extra callbacks per input).
    """
    fn, exp = b.spec.fn, b.spec.expected
    sub = b.inputs[:n]
    saved = sysmon_mod.ONE_WAY_CAP

    def timed(cap: int) -> float:
        sysmon_mod.ONE_WAY_CAP = cap
        fb = SysmonFeedback(Scope(b.paths))
        fb.start()
        try:
            feedback_loop(fn, b.inputs, exp, fb, 1)
            feedback_loop(fn, sub, exp, fb, 1)
            best = float("inf")
            for _ in range(reps):
                gc.collect()
                best = min(best, feedback_loop(fn, sub, exp, fb, 1)[1])
            return best
        finally:
            fb.stop()
            sysmon_mod.ONE_WAY_CAP = saved

    def counted(cap: int) -> int:
        sysmon_mod.ONE_WAY_CAP = cap
        fb = CountingFeedback(Scope(b.paths))
        fb.start()
        try:
            feedback_loop(fn, b.inputs, exp, fb, 1)
            feedback_loop(fn, sub, exp, fb, 1)
            fb.calls.clear()
            feedback_loop(fn, sub, exp, fb, 1)
            return sum(fb.calls.values())
        finally:
            fb.stop()
            sysmon_mod.ONE_WAY_CAP = saved

    huge = 1 << 62
    extra_calls = counted(huge) - counted(saved)
    if extra_calls <= 0:
        return float("nan"), 0.0
    delta = timed(huge) - timed(saved)
    return 1e6 * delta / extra_calls, extra_calls / len(sub)


# ---------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------

METHODS = ("uninstr", "assay", "cov-sysmon", "cov-ctrace", "atheris", "engine", "engine-nocmp")


def setup(spec: Spec, args) -> Bench:
    target = make_target(
        spec.fn,
        name="bench-" + spec.name.replace(".", "-"),
        sources=spec.sources,
        expected=spec.expected,
        seeds=spec.seeds,
        timeout=spec.timeout,
    )
    paths = target.source_paths()
    inputs = make_inputs(spec, max(50, args.inputs // spec.inputs_divisor), args.seed)
    # Untimed full pass: fills the parsers' caches, counts rejects, calibrates the window.
    rejects = 0
    t0 = perf_counter()
    for data in inputs:
        try:
            spec.fn(data)
        except spec.expected:
            rejects += 1
    rate = len(inputs) / (perf_counter() - t0)
    passes = max(1, math.ceil(rate * args.min_time / len(inputs)))
    window = cycle(inputs, passes * len(inputs))
    every = sysmon_mod.RESTART_EVERY
    assay_window = cycle(inputs, every * math.ceil(len(window) / every))
    warm = inputs[: max(50, len(inputs) // 10)]
    b = Bench(spec, target, paths, inputs, window, assay_window, warm, rejects=rejects)
    if args.engine_cases is None:
        b.engine_cases = min(spec.engine_cases, 5000) if args.quick else spec.engine_cases
    else:
        b.engine_cases = args.engine_cases
    return b


def run_all(args) -> tuple[list[Bench], dict[str, str]]:
    notes: dict[str, str] = {}
    specs = [s for s in SPECS if s.name in args.targets]
    benches = [setup(s, args) for s in specs]
    want = set(args.methods)

    have_cov = bool(want & {"cov-sysmon", "cov-ctrace"})
    if have_cov:
        try:
            import coverage  # noqa: F401
        except ImportError as exc:
            have_cov = False
            notes["cov-sysmon"] = notes["cov-ctrace"] = f"n/a (coverage not importable: {exc})"
    sysmon_branch = False
    if have_cov and "cov-sysmon" in want:
        sysmon_branch, why = coverage_core_probe()
        if not sysmon_branch:
            notes["cov-sysmon"] = f"LINES ONLY (branch=False): {why}; with branch=True coverage.py falls back to ctrace"

    for b in benches:
        if "atheris" not in want:
            break
        prepare_atheris(b, Scope(b.paths))
        if b.atheris_note:
            notes[f"atheris {b.spec.name}"] = f"n/a ({b.atheris_note})"

    for run in range(args.runs):
        for b in benches:
            t_run = perf_counter()
            base = measure_bare(b)
            record(b, "uninstr", base)
            if "assay" in want:
                record(b, "assay", measure_assay(b))
            if have_cov and "cov-sysmon" in want:
                record(b, "cov-sysmon", measure_coverage(b, "sysmon", branch=sysmon_branch))
            if have_cov and "cov-ctrace" in want:
                record(b, "cov-ctrace", measure_coverage(b, "ctrace", branch=True))
            if "atheris" in want:
                record(b, "atheris", measure_atheris(b))
            if b.engine_cases and "engine" in want:
                record(b, "engine", measure_engine(b, b.engine_cases, args.seed))
            if b.engine_cases and "engine-nocmp" in want:
                record(b, "engine-nocmp", measure_engine(b, b.engine_cases, args.seed, cmplog=False))
            for m in METHODS[1:]:
                if len(b.samples[m]) == run + 1:
                    b.ratios[m].append(b.samples[m][-1] / base[0])
                    b.cpu_ratios[m].append(b.cpu_samples[m][-1] / base[1])
            if args.verbose:
                cells = " ".join(f"{m}={b.samples[m][-1]:,.0f}" for m in METHODS if len(b.samples[m]) == run + 1)
                print(f"  run {run + 1} {b.spec.name:14} {cells}  ({perf_counter() - t_run:.1f}s)", file=sys.stderr)
    if args.engine_cases == 0:
        notes["engine"] = "n/a (--engine-cases 0)"
    return benches, notes


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def table(benches: list[Bench], methods: list[str]) -> str:
    head = ["target", "rejects", "uninstr/s"]
    for m in methods:
        head.append(f"{m}/s")
        head.append("ratio")
    rows = [head]
    for b in benches:
        row = [
            b.spec.name,
            f"{100 * b.rejects / len(b.inputs):.0f}%",
            fmt_rate(statistics.median(b.samples["uninstr"])),
        ]
        for m in methods:
            if b.samples[m]:
                row.append(fmt_rate(statistics.median(b.samples[m])))
                row.append(f"{statistics.median(b.ratios[m]):.2f}")
            else:
                row.extend(["n/a", "-"])
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for k, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def machine_facts(args) -> str:
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    versions = []
    for mod in ("coverage", "atheris"):
        try:
            from importlib.metadata import version

            versions.append(f"{mod} {version(mod)}")
        except Exception:  # noqa: BLE001
            versions.append(f"{mod} not installed")
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "\n".join(
        [
            f"python   {platform.python_implementation()} {sys.version.split()[0]} ({platform.platform()})",
            f"cpus     {os.cpu_count()} (usable {affinity}), {cpu}; load average at start {load}",
            f"tools    {', '.join(versions)}; assay RESTART_EVERY={sysmon_mod.RESTART_EVERY} ONE_WAY_CAP={sysmon_mod.ONE_WAY_CAP}",
            f"command  {' '.join([os.path.basename(sys.executable)] + sys.argv)}",
            f"settings runs={args.runs} inputs={args.inputs} min-time={args.min_time}s "
            f"engine-cases={'per target' if args.engine_cases is None else args.engine_cases} seed={args.seed} "
            f"methods={','.join(args.methods)}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--end-to-end" in argv:  # assay fuzz against atheris.Fuzz: bench/end_to_end.py
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import end_to_end

        return end_to_end.main([a for a in argv if a != "--end-to-end"])
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=None, help="interleaved repetitions (default 5, --quick 3)")
    ap.add_argument("--inputs", type=int, default=None, help="size of the fixed input list (default 2000, --quick 500)")
    ap.add_argument(
        "--engine-cases",
        type=int,
        default=None,
        help="run_campaign case cap for every target (default per target: 20000, html 10000, email 3000; --quick at most 5000; 0 skips)",
    )
    ap.add_argument(
        "--min-time",
        type=float,
        default=None,
        help="each timed window repeats the input list until the bare loop would take this long (default 0.25 s, --quick 0.1)",
    )
    ap.add_argument("--targets", default=None, help="comma-separated subset of: " + ", ".join(s.name for s in SPECS))
    ap.add_argument(
        "--methods",
        default=",".join(METHODS[1:]),
        help="comma-separated subset of the measured columns (uninstr always runs): " + ", ".join(METHODS[1:]),
    )
    ap.add_argument("--seed", type=int, default=1, help="seed of the input lists and the campaigns")
    ap.add_argument("--quick", action="store_true", help="3 runs, 500 inputs, 5000 engine cases, fast targets only")
    ap.add_argument("--callbacks", action="store_true", help="also count feedback callbacks at saturation")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run's numbers to stderr")
    args = ap.parse_args(argv)
    quick = args.quick
    args.runs = args.runs or (3 if quick else 5)
    args.inputs = args.inputs or (500 if quick else 2000)
    args.min_time = args.min_time if args.min_time is not None else (0.1 if quick else 0.25)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip() and m.strip() != "uninstr"]
    bad = [m for m in args.methods if m not in METHODS]
    if bad:
        ap.error(f"unknown method(s) {', '.join(bad)}; choose from {', '.join(METHODS[1:])}")
    names = [s.name for s in SPECS]
    if args.targets:
        args.targets = [t.strip() for t in args.targets.split(",") if t.strip()]
        unknown = [t for t in args.targets if t not in names]
        if unknown:
            ap.error(f"unknown target(s) {', '.join(unknown)}; choose from {', '.join(names)}")
    else:
        args.targets = list(QUICK_TARGETS) if quick else names

    print(machine_facts(args))
    print()
    t0 = perf_counter()
    benches, notes = run_all(args)
    shown = [m for m in METHODS[1:] if m in args.methods]
    print(table(benches, shown))
    print()
    print("execs/s: median over the runs; ratio: median of per-run method/uninstr (same run, same target).")
    print("rejects: inputs in the fixed list that raise an expected exception.")
    for key, note in notes.items():
        print(f"{key}: {note}")
    versus = [b for b in benches if b.ratios["assay"] and b.ratios["atheris"]]
    if versus:
        print("assay / atheris, against the ceiling uninstr / atheris that even zero-cost feedback could not pass:")
        for b in versus:
            ours = statistics.median(a / t for a, t in zip(b.ratios["assay"], b.ratios["atheris"]))
            ceiling = statistics.median(1 / t for t in b.ratios["atheris"])
            print(f"  {b.spec.name:14} {ours:.2f}x of a possible {ceiling:.2f}x")
    for b in benches:
        bits = [
            f"scope {', '.join(os.path.relpath(p, os.path.dirname(os.__file__)) for p in b.paths)}",
            f"{len(b.inputs)} inputs, timed window {len(b.window)} (assay {len(b.assay_window)})",
        ]
        if "assay_counts" in b.info:
            c = b.info["assay_counts"]
            bits.append(f"assay saw {c['lines']} lines {c['edges']} edges")
        for k in ("cov-sysmon-core", "cov-ctrace-core"):
            if k in b.info:
                bits.append(f"{k[:-5]}={b.info[k]}")
        if "atheris_funcs" in b.info:
            bits.append(f"atheris {b.info['atheris_funcs']}")
        if "engine" in b.info:
            bits.append(f"engine last run: {b.info['engine']}")
        print(f"  {b.spec.name}: " + "; ".join(bits))
    print()
    print("cross-checks against other processes' load, ratio to uninstr as  cpu / best:")
    print("  cpu  = median per-run ratio of CPU-time rates (time.process_time; engine: parent + reaped workers)")
    print("  best = fastest run of the method / fastest uninstrumented run (wall clock), the least disturbed pair")
    for b in benches:
        cells = []
        for m in METHODS[1:]:
            if b.cpu_ratios[m]:
                best = max(b.samples[m]) / max(b.samples["uninstr"])
                cells.append(f"{m} {statistics.median(b.cpu_ratios[m]):.2f}/{best:.2f}")
        cpu_us = 1e6 / statistics.median(b.cpu_samples["uninstr"])
        print(f"  {b.spec.name:14} uninstr {cpu_us:6.1f} us/input CPU;  " + "  ".join(cells))
    if args.callbacks:
        print()
        costs = callback_costs()
        print(
            f"feedback callbacks at saturation (CountingFeedback over the same inputs).  Tight-loop microbenchmark: "
            f"one BRANCH callback {costs['branch_cb_us']:.2f} us CPU, maybe_restart()+take_new() "
            f"{costs['harness_us']:.2f} us per case."
        )
        every = sysmon_mod.RESTART_EVERY
        for b in benches:
            c = count_callbacks(b)
            n = c["steady_n"]
            per_in = sum(c["period"].values()) / every
            cb_us, forced = callback_cost_in_context(b)
            cpu_us = 1e6 / statistics.median(b.cpu_samples["uninstr"])
            print(f"  {b.spec.name}: warm-up pass {c['warm']}")
            print(
                f"    next {n} inputs, no restart: {c['steady']} = {sum(c['steady'].values()) / n:.2f} callbacks/input"
            )
            print(
                f"    one restart period ({every} inputs, starting with restart_events()): {c['period']} "
                f"= {per_in:.2f} callbacks/input; {c['capped']} one-way branch sites ran to ONE_WAY_CAP"
            )
            print(
                f"    one callback in context: {cb_us:.2f} us CPU (ONE_WAY_CAP=inf forces {forced:.1f} more per input)"
            )
            for label, cost in (("microbenchmark", costs["branch_cb_us"]), ("in-context", cb_us)):
                extra = per_in * cost + costs["harness_us"]
                print(
                    f"    predicted assay/uninstr ({label} cost) = {cpu_us:.1f} / ({cpu_us:.1f} + {per_in:.2f} x "
                    f"{cost:.2f} + {costs['harness_us']:.2f}) = {cpu_us / (cpu_us + extra):.3f}"
                )
            if c["top_sites"]:
                print("    busiest branch sites: " + ", ".join(f"{s[0]}@{s[1]}={k}" for s, k in c["top_sites"]))
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(f"\ntotal {perf_counter() - t0:.1f}s; load average at end {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
