"""``--fuzz on``: differential fuzzing of the mutants no test killed (survived or unreached).

Runs in the warm parent after the mutant phase.  Each survivor gets the targets
whose ``sources`` hold its file (every selected target when none does) and a
share of ``--fuzz-budget``; a stable difference upgrades it to
``killed-by-fuzz``.  ``assay test --fuzz on`` with no survivor that maps to a
target runs an ordinary campaign over every selected target instead, so the
command never reports success over an empty selection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.core.config import Project
from assay.core.errors import ConfigError
from assay.core.target import Registry, Target
from assay.mutant.execute import KILLED_BY_FUZZ, SURVIVED, UNREACHED, MutantResult

#: Generated cases per survivor and target when neither --fuzz-cases nor a budget is given.
DEFAULT_CASES = 2000
#: Seconds of the ordinary campaign run when no survivor maps to a target and neither
#: --fuzz-cases nor --fuzz-budget is given (as ``assay fuzz``'s default).
FALLBACK_BUDGET = 60.0


def load_fuzz_targets(project: Project, names: list[str], log: Callable[[str], None] | None = None) -> list[Target]:
    """The targets ``--fuzz on`` may use (all, or the ``--fuzz-target`` ones); exit 2 when there are none.

    When ``[tool.assay] targets`` is not set, the default folder ``fuzz/`` may hold a
    project's own scripts that are no assay targets (another fuzzer's runners, a
    corpus tool): each of its files is imported alone, a file that does not import
    here or defines no target is skipped, and ``log`` gets one line naming the files
    used and skipped and why.
    """
    from assay.harness.discovery import load_targets, select

    if _default_folder(project):
        registry = _default_folder_targets(project, log)
    else:
        registry = load_targets(project)
    if not len(registry):
        raise ConfigError(
            f"--fuzz on, but the project registers no fuzz target (looked in [tool.assay] targets = {project.targets}); "
            "add an @assay.target or run with --fuzz off"
        )
    return select(registry, names)


def _default_folder(project: Project) -> bool:
    """Whether targets come from the default ``fuzz/`` folder alone (no targets setting, no target tables)."""
    from assay.harness.tables import TABLE_LOADERS

    return (
        "targets" not in project.raw
        and (project.root / "fuzz").is_dir()
        and not any(project.raw.get(t) for t in TABLE_LOADERS)
    )


def _default_folder_targets(project: Project, log: Callable[[str], None] | None) -> Registry:
    from assay.core.errors import AssayError
    from assay.harness.discovery import import_entry, targets_in

    registry = Registry()
    used: list[str] = []
    skipped: list[str] = []
    for path in sorted(p for p in (project.root / "fuzz").glob("*.py") if not p.name.startswith("_")):
        rel = path.relative_to(project.root).as_posix()
        try:
            found = [t for module in import_entry(project.root, str(path)) for t in targets_in(module)]
        except AssayError as exc:
            skipped.append(f"{rel} (does not import here: {str(exc).splitlines()[0][:160]})")
            continue
        if not found:
            skipped.append(f"{rel} (defines no target)")
            continue
        for tgt in found:
            registry.add(tgt)
        used.append(f"{rel} ({', '.join(t.name for t in found)})")
    if log is not None:
        log(
            "assay: [tool.assay] targets is not set, so fuzz targets come from the default folder fuzz/: "
            f"using {'; '.join(used) or 'none'}"
            + (f"; skipped {'; '.join(skipped)}" if skipped else "")
            + "; set [tool.assay] targets to choose the files"
        )
    return registry


def fuzz_survivors(
    results: list[MutantResult],
    texts: dict[str, str],
    targets: list[Target],
    project: Project,
    *,
    cases: int | None,
    budget: float | None,
    seed: int | None,
    corpus: str | None,
    artifacts: str | None,
    log: Callable[[str], None],
    progress: Callable[[int, int, int], None] | None = None,
    max_len: int | None = None,
    messages: bool = True,
) -> dict[str, Any]:
    """Fuzz every survivor in ``results`` (updated in place); returns the run's summary.

    ``progress(done, total, killed)`` is called before each survivor.  ``max_len``
    replaces each target's in the survivors' campaigns; without ``messages`` a
    difference in an exception's message alone does not kill.  The summary splits
    ``killed_by_fuzz`` into ``killed_by_fuzz_behaviour`` and ``killed_by_fuzz_message``.
    """
    from assay.engine.seeds import new_master_seed
    from assay.mutant.apply import FunctionIndex, MutantError, Patch
    from assay.mutant.differential import BEHAVIOUR_KILL, FuzzOptions, fuzz_survivor, targets_for
    from assay.mutant.model import unified_diff

    master = seed if seed is not None else new_master_seed()
    started = time.monotonic()
    # Unreached mutants are fuzzed too: no test ran their code, so no test could notice.
    # Import-time code cannot change after import, so fuzzing could never tell those apart.
    pending = [
        r for r in results if r.verdict in (SURVIVED, UNREACHED) and not r.import_time and not (r.cached and r.fuzz)
    ]
    index = FunctionIndex(texts)
    summary: dict[str, Any] = {
        "seed": master,
        "survivors": len(pending),
        "killed_by_fuzz": 0,
        "killed_by_fuzz_behaviour": 0,  # told apart by a return value, state, features or an exception type
        "killed_by_fuzz_message": 0,  # told apart by an exception's message alone
        "compare": "messages" if messages else "no-messages",
        "infrastructure": 0,
        "cases": 0,
        "mapped": 0,
    }
    root = str(project.root)
    if pending:
        log(f"fuzzing {len(pending)} mutant(s) no test killed, through {', '.join(t.name for t in targets)}")
    for n, result in enumerate(pending):
        if progress is not None:
            progress(n, len(pending), summary["killed_by_fuzz"])
        mutant = result.mutant
        chosen = targets_for(mutant.path, targets, root)
        summary["mapped"] += _covered(mutant.path, targets, root)
        share = None
        if budget is not None:
            left = budget - (time.monotonic() - started)
            if left <= 0:
                break
            share = left / (len(pending) - n)
        try:
            patch = Patch.build(mutant, texts[mutant.path], index)
        except MutantError as exc:
            result.fuzz = {"status": "not-run", "detail": str(exc)}
            continue
        options = FuzzOptions(
            artifact_root=artifacts or str(project.artifacts),
            corpus_root=corpus or str(project.corpus),
            # With a budget and no case cap, the budget alone ends each campaign.
            seed=master,
            cases=cases or (DEFAULT_CASES if share is None else 10**9),
            budget=share,
            project_root=root,
            max_len=max_len,
            messages=messages,
        )
        evidence = fuzz_survivor(mutant, patch, chosen, options, diff=unified_diff(texts[mutant.path], mutant))
        result.fuzz = evidence.to_json()
        summary["cases"] += evidence.cases
        if evidence.status == KILLED_BY_FUZZ:
            result.verdict = KILLED_BY_FUZZ
            summary["killed_by_fuzz"] += 1
            summary[f"killed_by_fuzz_{evidence.kill_kind or BEHAVIOUR_KILL}"] += 1
            log(f"killed by fuzzing: {mutant.id} on {evidence.target} (artifact {evidence.artifact})")
        elif evidence.status == "infrastructure":
            summary["infrastructure"] += 1
    summary["elapsed"] = round(time.monotonic() - started, 3)
    return summary


def _covered(path: str, targets: list[Target], root: str) -> bool:
    """True when some target's sources hold ``path`` (not merely every target by default)."""
    real = Path(path).resolve()
    for t in targets:
        for source in t.source_paths(root):
            s = Path(source)
            if real == s or (s.is_dir() and s in real.parents):
                return True
    return False


def replay_targets(
    targets: list[Target],
    project: Project,
    *,
    cases: int | None,
    budget: float | None,
    seed: int | None,
    corpus: str | None,
    artifacts: str | None,
    progress: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """An ordinary campaign over ``targets`` (``assay test --fuzz on`` when no survivor maps to one).

    ``progress`` receives the campaign's progress records (:class:`assay.engine.supervisor.Progress`).
    """
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.reports.campaign import build_report

    options = CampaignOptions(
        corpus_root=corpus or str(project.corpus),
        artifact_root=artifacts or str(project.artifacts),
        max_cases=cases,
        budget=budget if (budget or cases) else FALLBACK_BUDGET,
        seed=seed,
        project_root=str(project.root),
        dictionary=project.dictionary,
    )
    result = run_campaign(targets, options, progress=progress)
    return build_report(result, arguments={})
