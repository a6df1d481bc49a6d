#!/usr/bin/env python
"""Where a real harness' time per case goes, under assay and under atheris (issue 43 item 2).

Run from the repository root with the project's venv (the ``bench`` extra installed)::

    python bench/per_case_profile.py                      # the three round-three harnesses
    python bench/per_case_profile.py --harness sqlparse --cases 20000 --rounds 3

For each harness of ``bench/harnesses/`` (OSS-Fuzz shapes: email-validator's
``fuzz_validator.py``, sqlparse's ``fuzz_parse.py``, tomlkit's ``fuzz_parser.py``; and
``fuzz_two_providers.py``, issue 43's benchmark shape: a target of about 10 us, two
providers a case, a few hundred bytes of text; its ``exec/s`` row is the >= 1.0x goal):

1. ``total``: steady time per case: the wall time of a capped assay campaign
   (``--cases``, ``--seed``, ``--max-len``) minus that of one of a fifth of the cases,
   over the cases between (start-up and the first cases' work cancel out); for atheris'
   libFuzzer loop (``-runs``, same ``-max_len``, in a subprocess, started from the
   campaign's first corpus entry), its callback's clock from its fifth of the runs on.
2. The inputs: those the campaign ran (recorded by a first run of the same schedule,
   with the counting child's few calls among them), ``--inputs`` of them evenly spread.
   ``mutation`` is assay's generator making ``--inputs`` children of the campaign's
   corpus (atheris' mutation is inside libFuzzer and is not measured apart).
3. Over those inputs, each step alone, in this process (fastest of ``--rounds``):
   ``provider`` (building the harness' providers and consuming from them: assay's
   ``assay.harness.fdp`` against atheris' C++ ``FuzzedDataProvider``), ``target`` (the
   library call on the consumed values, no coverage), ``feedback`` (the harness under
   coverage minus without: assay's ``sys.monitoring`` feedback over the harness and its
   library, in this process; atheris' bytecode instrumentation after ``instrument_all()``
   as the harness files call it, in subprocesses).
4. ``bookkeeping``: what the total leaves (assay: journal, digest, judging, corpus;
   atheris: libFuzzer's mutation and bookkeeping, together).

Times are microseconds per case.  The last column is assay over atheris.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from bare_ratio import recording, worker_inputs  # noqa: E402 - its recorder: the worker's sandbox opens no files

from assay.engine.campaign import CampaignOptions, run_campaign  # noqa: E402
from assay.engine.generate import InputSource  # noqa: E402
from assay.engine.seeds import case_stream  # noqa: E402
from assay.feedback.scope import Scope  # noqa: E402
from assay.feedback.sysmon import SysmonFeedback  # noqa: E402
from assay.harness.define import make_target  # noqa: E402
from assay.harness.discovery import import_file  # noqa: E402
from assay.harness.fdp import FuzzedDataProvider as AssayFDP  # noqa: E402

HARNESSES = HERE / "harnesses"


def _text_all(fdp_cls: type, data: bytes) -> tuple:
    return (fdp_cls(data).ConsumeUnicodeNoSurrogates(sys.maxsize),)


def _raw(fdp_cls: type, data: bytes) -> tuple:  # noqa: ARG001 - a harness without a provider
    return (data,)


def _two(fdp_cls: type, data: bytes) -> tuple:
    options = fdp_cls(data)
    smtputf8, display_name = options.ConsumeBool(), options.PickValueInList([True, False])
    return (fdp_cls(data).ConsumeUnicodeNoSurrogates(sys.maxsize), smtputf8, display_name)


def _email_options(address: str, smtputf8: bool, display_name: bool) -> None:
    from email_validator import EmailNotValidError, validate_email

    try:
        validate_email(address, allow_smtputf8=smtputf8, allow_display_name=display_name, check_deliverability=False)
    except EmailNotValidError:
        pass


def _email(value: Any) -> None:
    from email_validator import EmailSyntaxError, EmailUndeliverableError, validate_email

    try:
        validate_email(value, check_deliverability=False)
    except (EmailSyntaxError, EmailUndeliverableError):
        pass


def _sql(value: str) -> None:
    import sqlparse

    sqlparse.parse(value)


def _toml(value: str) -> None:
    import tomlkit

    try:
        tomlkit.parser.Parser(value).parse()
    except (tomlkit.exceptions.TOMLKitError, RecursionError):
        pass


#: name -> (harness file, library package, the harness' provider calls, its library call)
SPLITS: dict[str, tuple[str, str, Callable, Callable]] = {
    "email-validator": ("fuzz_validator.py", "email_validator", _raw, _email),
    "sqlparse": ("fuzz_parse.py", "sqlparse", _text_all, _sql),
    "tomlkit": ("fuzz_parser.py", "tomlkit", _text_all, _toml),
    # Issue 43's benchmark shape (~10 us target, two providers a case, a few hundred bytes of text).
    "two-providers": ("fuzz_two_providers.py", "email_validator", _two, _email_options),
}


def _best(fn: Callable[[], None], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _loop(call: Callable, items: list) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            try:
                call(*item) if isinstance(item, tuple) else call(item)
            except Exception:  # noqa: BLE001 - a harness' crash is not what is timed here
                pass

    return run


def assay_campaign(
    name: str, cases: int, seed: int, max_len: int, workdir: Path
) -> tuple[float, list[bytes], list[bytes], Any]:
    """(steady seconds per case of a capped campaign, the inputs it ran, its corpus, the target).

    The inputs come from a first, recording run of the same schedule (a campaign is a
    function of its seed and case cap); the time from two that record nothing, of a
    fifth of the cases and of all: their difference over the cases between.
    """
    file, package, _, _ = SPLITS[name]
    module = import_file(HARNESSES / file)
    library = Path(importlib.import_module(package).__file__).parent  # type: ignore[arg-type]
    sources = [str(HARNESSES / file), str(library)]
    log = workdir / "inputs.bin"

    def run(fn: Callable[[bytes], Any], sub: str, cap: int) -> tuple[float, Any]:
        target = make_target(fn, name=name, sources=sources, max_len=max_len)
        options = CampaignOptions(
            corpus_root=str(workdir / sub / "corpus"),
            artifact_root=str(workdir / sub / "artifacts"),
            max_cases=cap,
            seed=seed,
        )
        t0 = time.perf_counter()
        run_campaign([target], options)
        return time.perf_counter() - t0, target

    run(recording(module.TestOneInput, str(log)), "recorded", cases)
    short, _ = run(module.TestOneInput, "short", cases // 5)
    full, target = run(module.TestOneInput, "timed", cases)
    per_case = (full - short) / (cases - cases // 5)  # steady: start-up and the first cases' work cancel out
    corpus_dir = workdir / "timed" / "corpus" / name
    corpus = [p.read_bytes() for p in sorted(corpus_dir.glob("*")) if p.is_file()] if corpus_dir.exists() else []
    return per_case, worker_inputs(str(log)), corpus, target


def assay_mutation(corpus: list[bytes], n: int, max_len: int, seed: int, rounds: int) -> tuple[float, list[bytes]]:
    """(seconds per child of assay's generator, the children)."""
    made: list[bytes] = []

    def run() -> None:
        source = InputSource(max_len, [], None)
        for entry in corpus or [b""]:
            source.add(entry)
        stream = case_stream(seed)  # the byte-mode case generators the worker uses (C when built)
        made.clear()
        for i in range(n):
            made.append(source.next(stream.rng(i))[0])

    return _best(run, rounds) / n, list(made)


def assay_feedback(target: Any, inputs: list[bytes], rounds: int) -> float:
    """Seconds per case of the harness under assay's coverage feedback, minus without it."""
    plain = _best(_loop(target.fn, inputs), rounds)
    feedback = SysmonFeedback(Scope(target.source_paths()))
    feedback.start()
    try:
        covered = _best(_loop(target.fn, inputs), rounds)
    finally:
        feedback.stop()
    return max(0.0, covered - plain) / len(inputs)


_ATHERIS_RUN = r"""
import os, sys, time
sys.path.insert(0, {harnesses!r})
import atheris
import {package}
import {module} as h
atheris.instrument_all()  # as the harness files (and OSS-Fuzz's) do
fd = os.open({marks!r}, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
calls = 0
def TestOneInput(data):
    global calls
    calls += 1
    if calls % {every} == 0:  # unbuffered: libFuzzer leaves with exit(), past Python's clean-up
        os.write(fd, b"%d %.9f\n" % (calls, time.perf_counter()))
    return h.TestOneInput(data)
atheris.Setup([sys.argv[0], "-runs={runs}", "-seed={seed}", "-max_len={max_len}", {corpus!r}], TestOneInput)
atheris.Fuzz()
"""

_ATHERIS_FEEDBACK = r"""
import json, sys, time
sys.path.insert(0, {harnesses!r})
inputs = [bytes.fromhex(h) for h in json.load(open({inputs!r}))]
import atheris
import {package}
import {module} as h
if {instrument}:
    atheris.instrument_all()  # as in the fuzzing run
atheris.Setup([sys.argv[0]], h.TestOneInput)
times = []
for _ in range({rounds}):
    t0 = time.perf_counter()
    for d in inputs:
        try:
            h.TestOneInput(d)
        except Exception:
            pass
    times.append(time.perf_counter() - t0)
print(min(times))
"""


def atheris_total(name: str, runs: int, seed: int, max_len: int, corpus: list[bytes], workdir: Path) -> float | None:
    """Steady seconds per run of atheris' own loop: from its callback's clock, between its
    ``runs // 5``-th call and its last mark (start-up and the first runs left out)."""
    file, package, _, _ = SPLITS[name]
    seeds = workdir / "atheris-corpus"
    seeds.mkdir(exist_ok=True)
    for k, entry in enumerate(corpus[:1]):  # a start as assay's: its first corpus entry (the campaign's first find)
        (seeds / f"seed{k}").write_bytes(entry)
    marks = workdir / "atheris-marks"
    code = _ATHERIS_RUN.format(
        harnesses=str(HARNESSES),
        package=package,
        module=file[:-3],
        runs=runs,
        seed=seed,
        max_len=max_len,
        corpus=str(seeds),
        marks=str(marks),
        every=max(1, runs // 5),
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=workdir, check=False)
    points = [tuple(map(float, line.split())) for line in marks.read_text().splitlines()] if marks.exists() else []
    if len(points) < 2:
        print(f"  atheris did not run ({name}): {proc.stderr[-400:]}", file=sys.stderr)
        return None
    (c0, t0), (c1, t1) = points[0], points[-1]
    return (t1 - t0) / (c1 - c0)


def atheris_feedback(name: str, inputs: list[bytes], rounds: int, workdir: Path) -> float | None:
    """Seconds per case of the harness after atheris' ``instrument_all()``, minus without (two subprocesses)."""
    file, package, _, _ = SPLITS[name]
    path = workdir / "inputs.json"
    path.write_text(json.dumps([d.hex() for d in inputs]))
    times = []
    for instrument in (False, True):
        code = _ATHERIS_FEEDBACK.format(
            harnesses=str(HARNESSES),
            inputs=str(path),
            module=file[:-3],
            package=package,
            rounds=rounds,
            instrument=instrument,
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=workdir, check=False)
        try:
            times.append(float(proc.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            print(f"  atheris feedback not measured ({name}): {proc.stderr[-400:]}", file=sys.stderr)
            return None
    return max(0.0, times[1] - times[0]) / len(inputs)


def profile(name: str, args: argparse.Namespace) -> dict[str, tuple[float | None, float | None]]:
    import atheris

    _, _, provide, call = SPLITS[name]
    with tempfile.TemporaryDirectory(prefix="assay-profile-") as tmp:
        work = Path(tmp)
        total, ran, corpus, target = assay_campaign(name, args.cases, args.seed, args.max_len, work)
        mutation, _ = assay_mutation(corpus, args.inputs, args.max_len, args.seed, args.rounds)
        inputs = ran[:: max(1, len(ran) // args.inputs)]  # the campaign's own inputs, evenly sampled
        n = len(inputs)
        provider = {
            "assay": _best(_loop(lambda d: provide(AssayFDP, d), inputs), args.rounds) / n,
            "atheris": _best(_loop(lambda d: provide(atheris.FuzzedDataProvider, d), inputs), args.rounds) / n,
        }
        values = []
        for d in inputs:
            try:
                values.append(provide(atheris.FuzzedDataProvider, d))
            except Exception:  # noqa: BLE001 - an input the provider refuses is not run
                continue
        in_target = _best(_loop(call, values), args.rounds) / max(1, len(values))
        feedback = assay_feedback(target, inputs, args.rounds)
        a_total = atheris_total(name, args.cases, args.seed, args.max_len, corpus, work)
        a_feedback = atheris_feedback(name, inputs, args.rounds, work)
    rows: dict[str, tuple[float | None, float | None]] = {
        "mutation": (mutation, None),
        "provider": (provider["assay"], provider["atheris"]),
        "target": (in_target, in_target),
        "feedback": (feedback, a_feedback),
    }
    known = sum(v for v, _ in rows.values() if v is not None)
    a_known = sum(v for _, v in rows.values() if v is not None)
    rows["bookkeeping"] = (
        max(0.0, total - known),
        None if a_total is None else max(0.0, a_total - a_known),  # libFuzzer's mutation and bookkeeping
    )
    rows["total"] = (total, a_total)
    rows["exec/s"] = (1 / total, None if a_total is None else 1 / a_total)
    rows["input bytes (mean)"] = (sum(map(len, inputs)) / n, None)
    return rows


def _cell(v: float | None, scale: float) -> str:
    return "-" if v is None else f"{v * scale:,.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", action="append", choices=sorted(SPLITS), help="(repeatable) default: all")
    parser.add_argument("--cases", type=int, default=5000, help="cases of each campaign and atheris run")
    parser.add_argument("--inputs", type=int, default=1000, help="children timed step by step")
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--max-len", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3, help="repeats of each step timing (the fastest is kept)")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    for name in args.harness or sorted(SPLITS):
        rows = profile(name, args)
        print(f"\n{name} (seed {args.seed}, {args.cases} cases, -max_len {args.max_len}; us per case)")
        print(f"  {'step':<20}{'assay':>12}{'atheris':>12}{'ratio':>8}")
        for step, (mine, theirs) in rows.items():
            scale = 1.0 if step in ("exec/s", "input bytes (mean)") else 1e6
            ratio = f"{mine / theirs:.2f}x" if mine and theirs else ""
            if step == "exec/s" and mine and theirs:
                ratio = f"{mine / theirs:.2f}x"
            print(f"  {step:<20}{_cell(mine, scale):>12}{_cell(theirs, scale):>12}{ratio:>8}")


if __name__ == "__main__":
    main()
