"""Native campaign speed against the same binary run bare by libFuzzer.

For each repeat, the same harness binary does the same work twice, in alternating
order: once as an assay native campaign (``run_native_target``: build check,
supervision, corpus sync) and once bare (``fuzzer <same flags> corpus/``, with the
same sanitizer environment, seeds, dictionary and ``-seed``).  By default the work is
a case cap (``-runs=N``), so both runs execute the very same inputs and only their
speed differs; ``--seconds`` runs both for the same whole seconds instead (then the
exploration, and so the speed, also differs).  exec/s is executed units over the
libFuzzer process's wall time; the ratio assay/bare is printed per repeat and as the
ratio of the medians.  The issue asks for at least 0.9.

    examples/native/setup.sh            # the llhttp sources (once)
    .venv/bin/python bench/native_speed.py --project examples/native --target llhttp --cases 300000 --repeats 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from assay.core.config import load_project
from assay.native.build import ensure_build
from assay.native.campaign import NativeOptions, dictionary_text, libfuzzer_seed, run_native_target
from assay.native.findings import harness_flags
from assay.native.run import run_fuzzer, sanitizer_env
from assay.native.toolchain import find_toolchain
from assay.store.corpus import digest


def bare(project, target, build, env, seconds: int | None, cases: int | None, seed: int, work: Path) -> float:
    """exec/s of the binary run directly by libFuzzer with the campaign's flags."""
    corpus = work / "corpus"
    corpus.mkdir()
    for data in target.seed_inputs(project.root):
        (corpus / digest(data)).write_bytes(data)
    (work / "found").mkdir()
    args = [
        f"-seed={libfuzzer_seed(seed, 0)}",
        f"-max_len={target.max_len}",
        *harness_flags(target),
        f"-artifact_prefix={work / 'found'}/",
        "-print_final_stats=1",
    ]
    text = dictionary_text(target, project.root, project.dictionary)
    if text:
        (work / "assay.dict").write_text(text)
        args.append(f"-dict={work / 'assay.dict'}")
    args += [f"-max_total_time={seconds}"] if seconds else [f"-runs={cases}"]  # the campaign's order
    result = run_fuzzer(
        build.binary, [*args, str(corpus)], env=env, log_path=work / "bare.log", deadline=(seconds or 3600) + 120
    )
    return result.units / result.elapsed


def campaign(project, target, seconds: int | None, cases: int | None, seed: int, work: Path) -> tuple[float, float]:
    """(exec/s over libFuzzer's wall time, exec/s over the whole campaign call) of an assay campaign."""
    options = NativeOptions(
        corpus_root=str(work / "corpus"),
        artifact_root=str(work / "artifacts"),
        project_root=str(project.root),
        budget=seconds,
        max_cases=None if seconds else cases,
    )
    started = time.monotonic()
    outcome = run_native_target(target, options, master_seed=seed, tseed=seed, budget=seconds)
    total = time.monotonic() - started
    if outcome.findings:
        print(f"  (the campaign found {len(outcome.findings)} bug(s); its rate includes the restarts)", file=sys.stderr)
    return outcome.execs_per_sec, outcome.cases / total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="examples/native")
    parser.add_argument("--target", default="llhttp")
    parser.add_argument("--cases", type=int, default=300_000, help="case cap of every run (default)")
    parser.add_argument("--seconds", type=int, default=None, help="run for whole seconds instead of a case cap")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    project = load_project(args.project)
    if args.target not in project.native:
        parser.error(f"no native target {args.target!r} in {project.root} (run examples/native/setup.sh first?)")
    target = project.native[args.target]
    tc = find_toolchain()
    build = ensure_build(target, project.root, tc=tc)
    env = sanitizer_env(embed_python=target.embed_python, symbolizer=tc.symbolizer)
    work = f"{args.seconds} s" if args.seconds else f"{args.cases} cases"
    print(f"target {args.target}, build {build.identity[:16]}, {work} per run, {args.repeats} repeats")
    assay_rates, bare_rates, whole_rates = [], [], []
    for k in range(args.repeats):
        seed = k + 1
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            if k % 2 == 0:
                rate, whole = campaign(project, target, args.seconds, args.cases, seed, Path(a))
                base = bare(project, target, build, env, args.seconds, args.cases, seed, Path(b))
            else:
                base = bare(project, target, build, env, args.seconds, args.cases, seed, Path(b))
                rate, whole = campaign(project, target, args.seconds, args.cases, seed, Path(a))
        assay_rates.append(rate)
        bare_rates.append(base)
        whole_rates.append(whole)
        print(
            f"  repeat {k + 1}: assay {rate:,.0f}/s (whole call {whole:,.0f}/s), bare {base:,.0f}/s, "
            f"ratio {rate / base:.3f}"
        )
    ratio = statistics.median(assay_rates) / statistics.median(bare_rates)
    print(
        f"median: assay {statistics.median(assay_rates):,.0f}/s, bare {statistics.median(bare_rates):,.0f}/s, "
        f"assay/bare = {ratio:.3f} (whole campaign call: {statistics.median(whole_rates) / statistics.median(bare_rates):.3f})"
    )
    return 0 if ratio >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
