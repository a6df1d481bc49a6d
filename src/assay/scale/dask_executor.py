"""``assay fuzz --executor dask``: one Dask task per (target, shard).

Without ``--scheduler`` a ``distributed.LocalCluster`` uses every core of this
machine (:data:`LOCAL_CLUSTER`: a thread per core, each task forking its own
campaign worker); with it, an existing
scheduler runs the tasks (started with dask-kubernetes, dask-jobqueue for
Slurm/PBS, or by hand).  Workers need the project's code at the same path (the
targets are imported by path), but no shared filesystem: the corpus snapshot
travels in each task and the results come back as data, which this client writes
into its content-addressed stores as they arrive.  Dask reruns a task whose worker
was lost; applying a result twice writes nothing twice.

Dask is an optional extra (assay's ``dask`` extra: ``pip install 'dask[distributed]>=2024'``), imported only here.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from assay.core.errors import ConfigError
from assay.core.target import Target
from assay.engine.campaign import CampaignOptions, CampaignResult, merge_outcomes
from assay.engine.seeds import new_master_seed, target_seed
from assay.engine.supervisor import TargetOutcome
from assay.feedback.sysmon import monitoring
from assay.scale.shard import HASH_SEED, Applied, ShardResult, ShardSpec, apply_result, plan_shards, run_shard
from assay.store.corpus import Corpus, check_all

#: Times Dask retries a task that raised (a lost worker is rescheduled regardless).
TASK_RETRIES = 2
#: The default LocalCluster: one in-process worker with a thread per core.  Each task
#: forks its own campaign worker, so every core fuzzes; worker processes add a spawn
#: and an import of assay and the targets per worker (measured in bench/scale.py).
#: Pass ``processes=True`` to :func:`dask_client` for process workers.
LOCAL_CLUSTER = {"n_workers": 1, "processes": False, "dashboard_address": None}
#: Dask settings of our own LocalCluster.  The statistical profiler samples every
#: thread's stack every 10 ms for a dashboard we do not start; in the process that
#: also runs the shards' supervisors it competes for the GIL (bench/scale.py).
LOCAL_CLUSTER_CONFIG = {"distributed.worker.profile.enabled": False}


def import_distributed() -> Any:
    """The ``dask.distributed`` module, or a :class:`ConfigError` saying how to install it."""
    try:
        import dask.distributed as distributed
    except ImportError as exc:
        raise ConfigError(
            f"--executor dask needs Dask's distributed scheduler, which is not installed ({exc.name} is missing); "
            "install it with: pip install 'dask[distributed]>=2024' (assay's dask extra), or use --executor local"
        ) from None
    return distributed


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, **cluster: Any) -> Iterator[Any]:
    """A connected Dask client; a LocalCluster (closed on exit) when ``scheduler`` is None.

    ``cluster`` overrides the LocalCluster's settings (default :data:`LOCAL_CLUSTER`,
    with a thread per core).  Process workers (``processes=True``) start under this
    interpreter's ``PYTHONHASHSEED``, so they run shards in-process.
    """
    distributed = import_distributed()
    with contextlib.ExitStack() as stack:
        if scheduler:
            try:
                client = stack.enter_context(distributed.Client(scheduler, timeout="30s"))
            except OSError as exc:
                raise ConfigError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({exc})") from None
        else:
            import dask

            settings = {**LOCAL_CLUSTER, "threads_per_worker": os.cpu_count() or 1, **cluster}
            if settings["processes"] and HASH_SEED and "worker_class" not in settings:
                settings["worker_class"] = _same_hash_seed_nanny()
            stack.enter_context(dask.config.set(LOCAL_CLUSTER_CONFIG))
            local = stack.enter_context(distributed.LocalCluster(**settings))
            client = stack.enter_context(distributed.Client(local))
        yield client


def _same_hash_seed_nanny() -> type:
    """A Nanny that starts its worker process under this interpreter's ``PYTHONHASHSEED``.

    Dask's nanny replaces an unset or ``0`` seed by 6640 (one seed for all its
    workers, which ours also is); a worker under another seed than the client's
    would run each shard in a fresh interpreter (:func:`assay.scale.shard.run_shard`).
    """
    from distributed import Nanny

    class SameHashSeedNanny(Nanny):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.pre_spawn_env["PYTHONHASHSEED"] = HASH_SEED  # the worker interpreter's seed
            self.env["PYTHONHASHSEED"] = HASH_SEED  # its os.environ, set again after it started

    return SameHashSeedNanny


def run_specs(client: Any, specs: list[ShardSpec], on_result: Callable[[ShardResult], None]) -> None:
    """Submit one task per spec; call ``on_result`` for each result as it arrives."""
    distributed = import_distributed()
    futures = [client.submit(run_shard, spec, key=spec.key, retries=TASK_RETRIES, pure=False) for spec in specs]
    try:
        for future in distributed.as_completed(futures):
            on_result(future.result())
    finally:
        client.cancel([f for f in futures if not f.done()])


def run_campaign_dask(
    targets: list[Target],
    options: CampaignOptions,
    *,
    shards: int = 1,
    scheduler: str | None = None,
    client: Any = None,
    cluster: dict[str, Any] | None = None,
    progress: Callable[[ShardResult, int, int], None] | None = None,
) -> tuple[CampaignResult, Applied]:
    """Run ``shards`` seeded shards of every target on Dask; merge as ``--jobs`` does.

    The corpus is checked here, before any task is submitted.  With ``client`` the
    caller's client is used (and left open).  ``progress(result, done, total)`` is
    called as each task's result has been written.
    """
    if options.project_root is None:
        raise ConfigError("--executor dask needs a project folder (workers import the targets from it)")
    if not targets:
        raise ConfigError("no target selected; nothing to fuzz (check --fuzz-target and [tool.assay] targets)")
    monitoring()
    check_all([Corpus(options.corpus_root, t.name, t.max_len) for t in targets])  # before anything runs
    master = options.seed if options.seed is not None else new_master_seed()
    specs = plan_shards(options.project_root, targets, options, master, shards)
    max_lens = {t.name: t.max_len for t in targets}
    results: dict[tuple[str, int], TargetOutcome] = {}
    total = Applied()

    def on_result(result: ShardResult) -> None:
        outcome, applied = apply_result(result, options.corpus_root, options.artifact_root, max_lens[result.target])
        total.corpus_written += applied.corpus_written
        total.artifacts_written += applied.artifacts_written
        results.setdefault((result.target, result.index), outcome)
        if progress is not None:
            progress(result, len(results), len(specs))

    started = time.monotonic()
    if client is not None:
        run_specs(client, specs, on_result)
    else:
        with dask_client(scheduler, **(cluster or {})) as own:
            run_specs(own, specs, on_result)
    outcomes = []
    for t in targets:
        parts = [results[(t.name, s.index)] for s in specs if s.target == t.name]
        merged = merge_outcomes(parts, target_seed(master, t.name))
        fresh = {f.signature for p in parts for f in p.findings if f.new}
        for f in merged.findings:
            f.new = f.signature in fresh  # whichever shard's copy was written first
        outcomes.append(merged)
    return CampaignResult(master, outcomes, started, time.monotonic() - started), total
