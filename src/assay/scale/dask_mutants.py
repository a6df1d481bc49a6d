"""``assay mutant --executor dask``: batches of mutants as Dask tasks.

The planning run keeps everything that decides *what* runs (collection, the
baseline with test selection, the history); only the forks move.  Each task is a
:class:`~assay.mutant.batch.MutantBatch` that a worker judges with pytest
in-process (:func:`~assay.mutant.batch.run_batch`); its verdicts come back as data
and enter the planning run's report and history as local ones do.  A task is
pure (the same plans give the same verdicts), so rerunning it after a lost worker
changes nothing.

Without ``--scheduler`` a LocalCluster runs one single-threaded worker process
per core (:data:`MUTANT_CLUSTER`): a pytest session is process-wide, so a
worker runs one batch at a time; workers of an existing cluster are best
started with ``--nthreads 1`` for the same reason.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from assay.mutant.batch import make_batches, result_from_json, run_batch
from assay.mutant.execute import MutantResult, MutantRunPlan
from assay.mutant.model import Mutant
from assay.scale.dask_executor import dask_client, import_distributed

#: Most mutants per task: enough to pay for the worker's pytest collection and its
#: baseline of the batch's tests...
BATCH_SIZE = 32
#: ...and at least this many tasks per worker thread, so that a slow batch does not
#: leave the other workers idle at the end.
TASKS_PER_THREAD = 2
#: The LocalCluster of a mutation run: one single-threaded worker process per core.  A
#: batch that fails comes back as its exception (one message from the CLI); Dask's
#: workers would also log it, with a traceback, below CRITICAL.
MUTANT_CLUSTER = {"processes": True, "threads_per_worker": 1, "silence_logs": logging.CRITICAL}


def dask_mutant_runner(
    root: Path,
    pytest_args: list[str],
    scheduler: str | None = None,
    batch_size: int = BATCH_SIZE,
    cluster: dict[str, Any] | None = None,
) -> Callable[[list[MutantRunPlan], dict[str, str]], Iterator[MutantResult]]:
    """A :attr:`MutationOptions.remote <assay.mutant.session.MutationOptions.remote>` that runs the plans on Dask.

    The cluster (or the connection to ``scheduler``) opens when the first plans
    arrive, after the baseline, and closes when the last result is in.
    """
    import_distributed()  # a missing extra fails before pytest starts

    def remote(plans: list[MutantRunPlan], texts: dict[str, str]) -> Iterator[MutantResult]:
        if not plans:
            return
        mutants = {p.mutant.id: p.mutant for p in plans}
        settings = {**MUTANT_CLUSTER, "n_workers": os.cpu_count() or 1, **(cluster or {})}
        with dask_client(scheduler, **settings) as client:
            threads = max(1, sum(client.nthreads().values()))
            size = max(1, min(batch_size, math.ceil(len(plans) / (TASKS_PER_THREAD * threads))))
            yield from _results(client, make_batches(plans, texts, root, pytest_args, size), mutants)

    return remote


def _results(client: Any, batches: list, mutants: dict[str, Mutant]) -> Iterator[MutantResult]:
    distributed = import_distributed()
    # No retries of a batch that raised: its errors (a differing file, a failing test)
    # would only repeat.  A batch whose worker was lost is rescheduled by Dask anyway.
    futures = [client.submit(run_batch, b, key=b.key, pure=True) for b in batches]
    try:
        for future in distributed.as_completed(futures):
            for data in future.result():
                yield result_from_json(mutants[data["id"]], data)
    finally:
        client.cancel([f for f in futures if not f.done()])
