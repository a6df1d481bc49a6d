"""A campaign over several targets: validate everything, then run each in turn."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from assay.engine.seeds import new_master_seed, target_seed
from assay.engine.shrink import DEFAULT_MAX_CASES
from assay.engine.supervisor import Progress, Supervisor, TargetOutcome
from assay.errors import ConfigError
from assay.feedback.sysmon import monitoring
from assay.gen.constants import harvest
from assay.gen.mutators import MAX_DICTIONARY, tokens_from
from assay.gen.strategy import get_strategy
from assay.store.corpus import Corpus, check_all
from assay.target import Target


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
    check_all(corpora)
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
        harvested = [tok for tok in harvest(sources) if tok not in set(given)] if options.harvest else []
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
        supervisor = Supervisor(
            p.target,
            tseed=target_seed(master, p.target.name),
            master_seed=master,
            initial=p.initial,
            initial_manifest=p.manifest,
            corpus=p.corpus,
            artifact_root=options.artifact_root,
            sources=p.sources,
            max_cases=options.max_cases,
            budget=budget,
            replay_only=options.replay_only,
            shrink_cases=options.shrink_cases,
            strategy=p.strategy,
            dictionary=p.dictionary,
            progress=progress,
            cmplog=options.cmplog,
            slow=options.slow,
        )
        outcome = supervisor.run()
        outcomes.append(outcome)
        if outcome.status == "interrupted":
            break
    return CampaignResult(master, outcomes, started, time.monotonic() - started)
