"""A native campaign: build, run libFuzzer under supervision, keep corpus and findings.

Four independent bounds hold: the campaign time (``-max_total_time``, whole seconds,
rounded down; under 1 s is refused), the build time (:data:`assay.native.build.BUILD_TIMEOUT`),
the per-input time (``-timeout``, the target's ``timeout``) and the supervising
deadline (campaign time + :data:`~assay.native.run.DEADLINE_GRACE`) past which the
process group is killed and the target reports an infrastructure failure.  Memory is
bounded by ``-rss_limit_mb`` (which is also libFuzzer's single-malloc limit).

libFuzzer stops at its first failure; the campaign then confirms it (replay,
minimize, determinism), drops the failing input from the working corpus and starts
libFuzzer again on what is left of the time and case cap.  A new bug allows at most
:data:`MAX_RESTARTS` such restarts; a known bug found again (libFuzzer re-finds a
shallow crash from the corpus within a few hundred cases) is counted and libFuzzer is
started again without using up that cap, so a second bug can still be found in the
budget (the way libFuzzer's own ``-fork`` mode with ``-ignore_crashes`` goes on past
crashes, but with one process and a case cap, so a seed still repeats a run).  When a
campaign ends before its budget or case cap, the outcome says why
(:attr:`NativeOutcome.stopped_early`).  libFuzzer does not expose its input schedule,
so there is no schedule digest; the report says so.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import NativeError
from assay.core.native_target import NativeTarget
from assay.engine.supervisor import FindingRecord, TargetOutcome
from assay.native.build import BUILD_TIMEOUT, Build, ensure_build
from assay.native.findings import Replayer, confirm, harness_flags, native_metadata, publish
from assay.native.run import CASES_DEADLINE, DEADLINE_GRACE, NativeInterrupted, RunResult, run_fuzzer, sanitizer_env
from assay.native.signature import parse_report, project_predicate, raw_crash_key, symbolize_report
from assay.native.toolchain import find_toolchain
from assay.store.artifacts import record_seen
from assay.store.corpus import Corpus, check_all, digest

#: libFuzzer restarts after a new bug within one target's campaign (each new bug costs a minimization).
MAX_RESTARTS = 8
#: libFuzzer restarts after a known bug was found again; only a guard (the budget or case cap ends a
#: campaign first), since each such restart spends cases or time on what is left of the budget.
MAX_REFOUND_RESTARTS = 100_000
#: Whether libFuzzer's own runs symbolize their reports.  Off: a known bug found again is then known
#: by its stack offsets at no symbolizing cost (measured: bench/native_refound.py), and a new one
#: is symbolized once by assay (:func:`assay.native.signature.symbolize_report`).
SYMBOLIZE_CAMPAIGN_RUNS = False
#: What the report says instead of a schedule digest.
NO_SCHEDULE = "libFuzzer does not expose its input schedule; no schedule digest is recorded"


@dataclass
class NativeOptions:
    """How to run native targets (the CLI's ``--fuzz-*`` flags, as data)."""

    corpus_root: str
    artifact_root: str
    project_root: str
    max_cases: int | None = None
    budget: float | None = None
    replay_only: bool = False
    dictionary: list[bytes] = field(default_factory=list)
    build_timeout: float = BUILD_TIMEOUT
    #: Supervising deadline of each libFuzzer run (default: its time limit + grace).
    deadline: float | None = None
    #: Called with (target name, libFuzzer's latest status line) while a run goes on.
    progress: Callable[[str, str], None] | None = None


@dataclass
class NativeOutcome(TargetOutcome):
    """A native target's outcome: the common fields plus the build and libFuzzer's numbers."""

    backend: str = "native"
    build: dict[str, Any] = field(default_factory=dict)
    libfuzzer_execs_per_sec: float = 0.0
    restarts: int = 0
    #: Restarts after a known bug was found again (not counted against :data:`MAX_RESTARTS`).
    refound_restarts: int = 0
    #: libFuzzer's ``-seed`` of the first run (restart ``k`` uses this + ``k``).
    libfuzzer_seed: int = 0
    #: Why the campaign ended before its budget or case cap, or None when it ran to its end.
    stopped_early: str | None = None
    error: str | None = None

    def native_report(self) -> dict[str, Any]:
        """Report fields only native targets have."""
        return {
            "backend": "native",
            "schedule_digest": None,
            "schedule_count": None,
            "schedule_note": NO_SCHEDULE,
            "build": self.build,
            "libfuzzer_execs_per_sec": round(self.libfuzzer_execs_per_sec, 1),
            "libfuzzer_seed": self.libfuzzer_seed,
            "libfuzzer_restarts": self.restarts,
            "libfuzzer_refound_restarts": self.refound_restarts,
            "stopped_early": self.stopped_early,
            "error": self.error,
        }


def libfuzzer_seed(master_seed: int, run: int) -> int:
    """libFuzzer's ``-seed`` for the ``run``-th start: ``--fuzz-seed N`` is ``-seed=N``, then N+1, ...

    libFuzzer takes 1 .. 2**31-1 (0 would mean a random seed); other master seeds are
    folded into that range.
    """
    return (master_seed - 1 + run) % (2**31 - 1) + 1


def whole_seconds(budget: float) -> int:
    """A campaign time in whole seconds (rounded down); under 1 s is refused."""
    seconds = math.floor(budget)
    if seconds < 1:
        raise NativeError(
            f"a native campaign needs at least 1 whole second (libFuzzer's -max_total_time), and got {budget:g} s; "
            "raise --fuzz-budget"
        )
    return seconds


def dictionary_text(target: NativeTarget, root: str | os.PathLike[str], extra: list[bytes]) -> str:
    """A libFuzzer dictionary: the target's file or tokens, then the project's tokens."""
    lines: list[str] = []
    if isinstance(target.dictionary, str):
        lines.append(target.path(root, target.dictionary).read_text("utf-8", "replace"))
    tokens = [t.encode("utf-8") for t in target.dictionary] if isinstance(target.dictionary, tuple) else []
    for tok in tokens + list(extra):
        lines.append('"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\x{b:02x}" for b in tok) + '"')
    return "\n".join(lines) + ("\n" if lines else "")


def check_corpora(targets: list[NativeTarget], corpus_root: str) -> None:
    """Refuse (listing every offender) before anything runs, as for Python targets."""
    check_all([Corpus(corpus_root, t.name, t.max_len) for t in targets])


def run_native_target(
    target: NativeTarget, options: NativeOptions, *, master_seed: int, tseed: int, budget: float | None
) -> NativeOutcome:
    """Build ``target`` and fuzz it within ``budget`` seconds and/or ``options.max_cases`` cases."""
    root = Path(options.project_root)
    corpus = Corpus(options.corpus_root, target.name, target.max_len)
    entries = corpus.load()
    outcome = NativeOutcome(
        name=target.name,
        seed=tseed,
        sources=[target.harness, *target.sources],
        strategy=None,
        initial_manifest=[d for d, _ in entries],
    )
    outcome.schedule_digest = ""
    seconds = whole_seconds(budget) if budget is not None else None
    tc = find_toolchain()
    build = ensure_build(target, root, timeout=options.build_timeout, tc=tc)
    outcome.build = build.summary()
    env = sanitizer_env(embed_python=target.embed_python, symbolizer=tc.symbolizer)
    fuzz_env = sanitizer_env(
        embed_python=target.embed_python, symbolizer=tc.symbolizer, symbolize=SYMBOLIZE_CAMPAIGN_RUNS
    )
    work = Path(tempfile.mkdtemp(prefix=f"assay-native-{target.name}-"))
    try:
        _campaign(
            target,
            options,
            build,
            (env, fuzz_env),
            tc.symbolizer,
            work,
            corpus,
            entries,
            outcome,
            master_seed,
            tseed,
            seconds,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return outcome


def _campaign(
    target: NativeTarget,
    options: NativeOptions,
    build: Build,
    envs: tuple[dict[str, str], dict[str, str]],
    symbolizer: str | None,
    work: Path,
    corpus: Corpus,
    entries: list[tuple[str, bytes]],
    outcome: NativeOutcome,
    master_seed: int,
    tseed: int,
    seconds: int | None,
) -> None:
    root = Path(options.project_root)
    live = work / "corpus"
    found = work / "found"
    scratch = work / "scratch"
    d: Any  # a folder, then a digest
    for d in (live, found, scratch):
        d.mkdir()
    initial: set[str] = set()
    for data in target.seed_inputs(root) + [d for _, d in entries]:
        name = digest(data)
        if name not in initial:
            initial.add(name)
            (live / name).write_bytes(data)
    dict_args: list[str] = []
    text = dictionary_text(target, root, options.dictionary)
    if text:
        (work / "assay.dict").write_text(text, "utf-8")
        dict_args = [f"-dict={work / 'assay.dict'}"]
    in_project = project_predicate(root, build.manifest.get("inputs", {}))
    env, fuzz_env = envs  # replays symbolize their reports; campaign runs do not (see below)
    replayer = Replayer(build, target, root, env, scratch)
    known_raw: dict[str, str] = {}  # raw_crash_key -> signature
    cases_left = options.max_cases
    started = time.monotonic()
    fuzz_time = 0.0
    rates: list[tuple[int, float]] = []
    by_signature: dict[str, FindingRecord] = {}
    outcome.libfuzzer_seed = libfuzzer_seed(master_seed, 0)
    run = 0
    while True:
        seed = libfuzzer_seed(master_seed, run)
        args = [
            f"-seed={seed}",
            f"-max_len={target.max_len}",
            *harness_flags(target),
            f"-artifact_prefix={found}/",
            "-print_final_stats=1",
            *dict_args,
        ]
        limit: float | None = None
        if options.replay_only:
            args.append("-runs=0")
        else:
            if seconds is not None:
                left = seconds if run == 0 else math.floor(seconds - (time.monotonic() - started))
                if left < 1:
                    break
                args.append(f"-max_total_time={left}")
                limit = left
            if cases_left is not None:
                if cases_left <= 0:
                    break
                args.append(f"-runs={cases_left}")
        deadline = (
            options.deadline
            if options.deadline is not None
            else ((limit if limit is not None else CASES_DEADLINE) + target.timeout + DEADLINE_GRACE)
        )
        try:
            report = (lambda line: options.progress(target.name, line)) if options.progress else None  # type: ignore[misc]  # set
            result = run_fuzzer(
                build.binary,
                [*args, str(live)],
                env=fuzz_env,
                log_path=work / f"run-{run}.log",
                deadline=deadline,
                progress=report,
            )
        except NativeInterrupted as stop:
            _account(outcome, stop.result, rates)
            outcome.status = "interrupted"
            break
        cases_before = outcome.cases
        fuzz_time += result.elapsed
        _account(outcome, result, rates)
        if cases_left is not None:
            cases_left -= result.units
        if result.killed:
            outcome.status = "infrastructure"
            outcome.error = (
                f"libFuzzer ran past the supervising deadline ({deadline:g} s) and its process group "
                "was killed; this is an infrastructure failure, not a finding"
            )
            break
        failure = parse_report(result.log, in_project) if result.returncode != 0 else None
        if failure is None:
            if result.returncode not in (0, None):
                outcome.status = "infrastructure"
                outcome.error = f"libFuzzer exited {result.returncode} without a failure report:\n" + result.log[-2000:]
            break
        crash = result.written if result.written and result.written.is_file() else None
        if crash is None:
            outcome.status = "infrastructure"
            outcome.error = f"libFuzzer reported {failure.signature} but wrote no input for it"
            break
        data = crash.read_bytes()
        crash.unlink()
        (live / digest(data)).unlink(missing_ok=True)  # start again past the failing input
        # Campaign runs do not symbolize (ASan's symbolizer costs most of a restart when a known bug
        # keeps coming back): a report whose class and stack offsets were seen before is that bug;
        # any other is symbolized here, once, and read for its signature.
        raw = raw_crash_key(result.log)
        if raw is None or raw not in known_raw:
            log = symbolize_report(result.log, symbolizer)
            failure = parse_report(log, in_project) or failure
            if raw is not None:
                known_raw[raw] = failure.signature
        else:
            log = result.log
        known = by_signature.get(known_raw[raw] if raw is not None else failure.signature)
        if known is not None:  # a known bug found again: counted, not confirmed again, and fuzzing goes on
            known.occurrences += 1
            if outcome.refound_restarts >= MAX_REFOUND_RESTARTS:
                outcome.stopped_early = f"known bugs were found again {MAX_REFOUND_RESTARTS} times (a guard)"
                break
            outcome.refound_restarts += 1
            run += 1
            continue
        first_seen = (round(fuzz_time, 3), cases_before + result.units)
        finding = confirm(replayer, failure, data, log, seed)
        meta = native_metadata(
            finding, build, target, campaign_seed=master_seed, target_seed=tseed, libfuzzer_args=[*args, "<corpus>"]
        )
        meta.update(
            first_seen=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            first_seen_seconds=first_seen[0],
            first_seen_case=first_seen[1],
        )
        path, new = publish(options.artifact_root, finding, meta, build)
        record = FindingRecord(
            failure.signature,
            finding.failure.oracle,
            str(path),
            new,
            first_seen_seconds=first_seen[0],
            first_seen_case=first_seen[1],
        )
        by_signature[failure.signature] = record
        if not options.replay_only and outcome.restarts >= MAX_RESTARTS:  # replay-only runs every failing entry
            outcome.stopped_early = (
                f"{len(by_signature)} bugs found, and libFuzzer is restarted after at most {MAX_RESTARTS} new bugs"
            )
            break
        outcome.restarts += 1
        run += 1
    if outcome.stopped_early:
        outcome.stopped_early += _what_was_left(options.max_cases, cases_left, seconds, time.monotonic() - started)
    outcome.findings = list(by_signature.values())
    for record in outcome.findings:  # last seen, runs and occurrences, as for Python artifacts
        try:
            record_seen(record.artifact, record.occurrences)
        except OSError as exc:
            outcome.write_errors.append(f"seen.json of {record.signature}: {exc.strerror or exc}")
    if not options.replay_only:
        for entry in sorted(os.listdir(live)):
            data = (live / entry).read_bytes()
            d = digest(data)
            if d not in initial and len(data) <= target.max_len and d not in outcome.corpus_additions:
                corpus.add(data)
                outcome.corpus_additions.append(d)
    outcome.corpus_size = len(initial) + len(outcome.corpus_additions)
    outcome.elapsed = fuzz_time
    total_units = sum(u for u, _ in rates)
    total_time = sum(t for _, t in rates)
    outcome.libfuzzer_execs_per_sec = total_units / total_time if total_time else 0.0
    if outcome.status == "clean" and outcome.findings:
        outcome.status = "findings"


def _what_was_left(max_cases: int | None, cases_left: int | None, seconds: int | None, spent: float) -> str:
    """``", with ... left"``: the part of the case cap and budget a campaign that stopped early did not use."""
    parts = []
    if max_cases is not None and cases_left is not None:
        parts.append(f"{max(cases_left, 0):,} of {max_cases:,} cases")
    if seconds is not None:
        parts.append(f"{max(seconds - spent, 0.0):.0f} of {seconds} s")
    return f", with {' and '.join(parts)} left" if parts else ""


def _account(outcome: NativeOutcome, result: RunResult, rates: list[tuple[int, float]]) -> None:
    outcome.cases += result.units
    cov, ft = result.coverage
    outcome.edges = max(outcome.edges, cov)
    outcome.features = max(outcome.features, ft)
    rate = result.stats.get("average_exec_per_sec", 0)
    if rate and result.units:
        rates.append((result.units, result.units / rate))


def run_native_campaign(
    targets: list[NativeTarget], options: NativeOptions, *, master_seed: int
) -> list[NativeOutcome]:
    """Fuzz native ``targets`` one after another, sharing ``options.budget``.

    Everything that can be refused (corpus rules, a budget under 1 s per target,
    a missing clang) is refused before the first build.
    """
    from assay.engine.seeds import target_seed

    if options.budget is not None and not options.replay_only:
        whole_seconds(options.budget / len(targets))
    check_corpora(targets, options.corpus_root)
    for t in targets:
        t.check_paths(options.project_root)
        t.seed_inputs(options.project_root)
    find_toolchain()
    started = time.monotonic()
    outcomes: list[NativeOutcome] = []
    for n, target in enumerate(targets):
        budget = None
        if options.budget is not None and not options.replay_only:
            remaining = options.budget - (time.monotonic() - started)
            budget = max(1.0, remaining / (len(targets) - n))
        outcome = run_native_target(
            target, options, master_seed=master_seed, tseed=target_seed(master_seed, target.name), budget=budget
        )
        outcomes.append(outcome)
        if outcome.status == "interrupted":
            break
    return outcomes
