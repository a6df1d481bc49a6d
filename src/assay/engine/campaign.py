"""A campaign over several targets: validate everything, then run each in turn."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from assay.core import notices
from assay.core.errors import ConfigError
from assay.core.target import Target
from assay.core.timeline import merge as merge_timelines
from assay.engine import isolate, jobwait
from assay.engine.budget import ANALYSIS_SHARE
from assay.engine.isolate import fork_with_pipe
from assay.engine.seeds import new_master_seed, target_seed
from assay.engine.shrink import DEFAULT_MAX_CASES
from assay.engine.supervisor import MAX_WRITE_ERRORS, FindingRecord, Progress, Supervisor, TargetOutcome, WorkerError
from assay.feedback.scope import Scope
from assay.feedback.sysmon import monitoring
from assay.gen.constants import harvest
from assay.gen.mutators import MAX_DICTIONARY, tokens_from
from assay.gen.strategy import get_strategy
from assay.store.corpus import Corpus, check_all


@dataclass
class CampaignOptions:
    """How to run a campaign (the CLI's ``--fuzz-*`` flags, as data)."""

    corpus_root: str
    artifact_root: str
    max_cases: int | None = None
    budget: float | None = None
    seed: int | None = None
    replay_only: bool = False
    shrink_cases: int = DEFAULT_MAX_CASES
    dictionary: list[bytes] = field(default_factory=list)
    project_root: str | None = None
    harvest: bool = True
    cmplog: bool = True
    slow: float | None = None
    jobs: int = 1
    #: Share of the loop's time that work for findings may take (assay.engine.budget; None: unbounded).
    analysis_share: float | None = ANALYSIS_SHARE


@dataclass
class CampaignResult:
    master_seed: int
    targets: list[TargetOutcome]
    started: float
    elapsed: float

    @property
    def interrupted(self) -> bool:
        return any(t.status == "interrupted" for t in self.targets)

    @property
    def findings(self) -> int:
        return sum(len(t.findings) for t in self.targets)


@dataclass
class _Prepared:
    target: Target
    corpus: Corpus
    sources: list[str]
    strategy: object
    initial: list[bytes]
    manifest: list[str]
    dictionary: list[bytes]


def prepare(targets: list[Target], options: CampaignOptions) -> list[_Prepared]:
    """Check everything that can be wrong before any input runs."""
    if not targets:
        raise ConfigError("no target selected; nothing to fuzz (check --fuzz-target and [tool.assay] targets)")
    monitoring()
    corpora = [Corpus(options.corpus_root, t.name, t.max_len) for t in targets]
    check_all(corpora, replay_only=options.replay_only)
    for path in isolate.remove_stale_temps():
        notices.notify(f"removed {path}: left in the temp folder by an assay run that is gone")
    prepared = []
    for t, corpus in zip(targets, corpora):
        sources = t.source_paths(options.project_root)
        strategy = get_strategy(t.strategy) if t.strategy else None
        entries = corpus.load()
        initial: list[bytes] = []
        seen: set[bytes] = set()
        for data in list(t.seeds) + [d for _, d in entries]:
            if data not in seen:
                seen.add(data)
                initial.append(data)
        given = sorted(set(t.dictionary) | set(options.dictionary) | set(tokens_from(t.seeds)))
        mined = Scope(sources).eager().entries  # parsing every file of a big library takes seconds
        harvested = [tok for tok in harvest(mined) if tok not in set(given)] if options.harvest else []
        dictionary = (given + harvested)[:MAX_DICTIONARY]
        prepared.append(_Prepared(t, corpus, sources, strategy, initial, [d for d, _ in entries], dictionary))
    return prepared


def run_campaign(
    targets: list[Target],
    options: CampaignOptions,
    progress: Callable[[Progress], None] | None = None,
) -> CampaignResult:
    """Fuzz ``targets`` one after another, sharing one budget; see :class:`CampaignOptions`.

    With a budget, each target gets the remaining time divided by the number of
    targets still to run, so time a target leaves unused goes to the next.
    """
    prepared = prepare(targets, options)
    master = options.seed if options.seed is not None else new_master_seed()
    started = time.monotonic()
    outcomes = []
    for n, p in enumerate(prepared):
        budget = None
        if options.budget is not None:
            remaining = options.budget - (time.monotonic() - started)
            budget = max(0.0, remaining / (len(prepared) - n))
        tseed = target_seed(master, p.target.name)
        if options.jobs > 1 and not options.replay_only:
            outcome = _run_jobs(p, options, master, tseed, budget, progress)
        else:
            outcome = _supervisor(p, options, master, tseed, budget, options.max_cases, progress).run()
        outcomes.append(outcome)
        if outcome.status == "interrupted":
            break
    return CampaignResult(master, outcomes, started, time.monotonic() - started)


def _supervisor(
    p: _Prepared,
    options: CampaignOptions,
    master: int,
    tseed: int,
    budget: float | None,
    max_cases: int | None,
    progress=None,
    reload_dir: str | None = None,
) -> Supervisor:
    return Supervisor(
        p.target,
        tseed=tseed,
        master_seed=master,
        initial=p.initial,
        initial_manifest=p.manifest,
        corpus=p.corpus,
        artifact_root=options.artifact_root,
        sources=p.sources,
        max_cases=max_cases,
        budget=budget,
        replay_only=options.replay_only,
        shrink_cases=options.shrink_cases,
        strategy=p.strategy,
        dictionary=p.dictionary,
        progress=progress,
        cmplog=options.cmplog,
        slow=options.slow,
        reload_dir=reload_dir,
        analysis_share=options.analysis_share,
    )


def run_prepared(
    p: _Prepared, options: CampaignOptions, master: int, seed: int, budget: float | None, max_cases: int | None
) -> TargetOutcome:
    """One stateless supervisor run of a prepared target with ``seed`` (a scale-out shard)."""
    return _supervisor(p, options, master, seed, budget, max_cases).run()


def merge_outcomes(outcomes: list[TargetOutcome], tseed: int) -> TargetOutcome:
    """One target's outcome from its jobs' or shards' outcomes (in job order)."""
    return _merge(outcomes, tseed)


def job_seed(tseed: int, job: int) -> int:
    """Seed of job ``job`` of a target (job 0 keeps the target seed)."""
    if job == 0:
        return tseed
    digest = hashlib.blake2b(tseed.to_bytes(8, "big") + job.to_bytes(4, "big"), digest_size=8, person=b"assay-job")
    return int.from_bytes(digest.digest(), "big")


def _job_progress(progress, k: int, jobs: int):
    """Job ``k``'s progress callback, labelled ``target[k/jobs]``; only one safe in a forked job (pulse lines)."""
    if progress is None or not getattr(progress, "forkable", False):
        return None
    return lambda pr: progress(replace(pr, target=f"{pr.target}[{k + 1}/{jobs}]"))


def _run_jobs(
    p: _Prepared, options: CampaignOptions, master: int, tseed: int, budget: float | None, progress=None
) -> TargetOutcome:
    """Run ``options.jobs`` supervisors of one target at once, sharing its corpus folder.

    Each job has its own seed (:func:`job_seed`) and share of the case cap, writes
    its new entries to the shared corpus and imports the others' entries from it
    about once a second.  The merged outcome lists every job's schedule digest.
    """
    jobs = options.jobs
    channels: list[tuple[int, Any]] = []
    for k in range(jobs):
        cases = None if options.max_cases is None else options.max_cases // jobs + (k < options.max_cases % jobs)

        def job(writer, k=k, cases=cases) -> None:
            p.corpus.dir.mkdir(parents=True, exist_ok=True)
            sup = _supervisor(
                p,
                options,
                master,
                job_seed(tseed, k),
                budget,
                cases,
                _job_progress(progress, k, jobs),
                reload_dir=str(p.corpus.dir),
            )
            writer.send(sup.run())

        try:
            pid, reader = fork_with_pipe(job)
        except BaseException:
            jobwait.abandon(channels)
            raise
        channels.append((pid, reader))
    outcomes, errors = jobwait.collect(channels)
    if errors:
        raise WorkerError(f"target {p.target.name!r}: {len(errors)} of {jobs} jobs failed: {errors[0]}")
    return _merge(outcomes, tseed)


def _merge(outcomes: list[TargetOutcome], tseed: int) -> TargetOutcome:
    first = outcomes[0]
    merged = TargetOutcome(
        name=first.name,
        seed=tseed,
        sources=first.sources,
        strategy=first.strategy,
        initial_manifest=first.initial_manifest,
        analysis_bound=first.analysis_bound,
    )
    seen_additions: set[str] = set()
    findings: dict[str, FindingRecord] = {}
    for o in outcomes:
        for d in o.corpus_additions:
            if d not in seen_additions:
                seen_additions.add(d)
                merged.corpus_additions.append(d)
        for f in o.findings:
            if f.signature in findings:
                findings[f.signature].occurrences += f.occurrences
            else:
                findings[f.signature] = f
        merged.cases += o.cases
        merged.schedule_count += o.schedule_count
        merged.elapsed = max(merged.elapsed, o.elapsed)
        merged.edges = max(merged.edges, o.edges)
        merged.lines = max(merged.lines, o.lines)
        merged.features = max(merged.features, o.features)
        merged.corpus_size = max(merged.corpus_size, o.corpus_size)
        merged.worker_restarts += o.worker_restarts
        merged.analysis_seconds += o.analysis_seconds
        merged.analysis_after += o.analysis_after
        merged.loop_seconds += o.loop_seconds
        merged.analysis_unfinished += o.analysis_unfinished
        merged.write_errors_dropped += o.write_errors_dropped
        for err in o.write_errors:
            if len(merged.write_errors) < MAX_WRITE_ERRORS:
                merged.write_errors.append(err)
            else:
                merged.write_errors_dropped += 1
    merged.schedule_digest = ",".join(o.schedule_digest for o in outcomes)
    merged.findings = list(findings.values())
    merged.jobs = len(outcomes)
    merged.timeline = [list(p) for p in merge_timelines([o.timeline for o in outcomes])]
    statuses = {o.status for o in outcomes}
    merged.status = "interrupted" if "interrupted" in statuses else ("findings" if merged.findings else "clean")
    return merged
