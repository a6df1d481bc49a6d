"""``--shard K/N`` and ``--shard auto/N``: which slice of the sorted targets this process runs.

``auto`` takes K from the batch system that started the process, so one command line
serves every index of a Kubernetes Indexed Job or a Slurm job array:

* ``JOB_COMPLETION_INDEX`` (Kubernetes Indexed Job, 0-based): K = index + 1.
* ``SLURM_ARRAY_TASK_ID`` (Slurm array, any base and step the user chose):
  K = (ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP + 1, with MIN 0 and STEP 1
  when Slurm did not set them.  So ``--array=0-3`` and ``--array=1-4`` both give K 1..4.

Kubernetes wins when both are set.  K outside 1..N is an error (exit 2), as is
``auto`` with neither variable set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from assay.core.errors import ConfigError

#: The Kubernetes Indexed Job variable (0-based completion index).
K8S_INDEX = "JOB_COMPLETION_INDEX"
#: The Slurm job-array variables.
SLURM_ID, SLURM_MIN, SLURM_STEP, SLURM_COUNT = (
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
)


def resolve_shard(shard: tuple[int | None, int], environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """``(K, N)`` with K 1-based; a K of ``None`` (``auto``) is read from ``environ``."""
    k, n = shard
    if k is not None:
        return k, n
    env = os.environ if environ is None else environ
    if K8S_INDEX in env:
        k = _int(env, K8S_INDEX) + 1
        source = f"{K8S_INDEX}={env[K8S_INDEX]}"
    elif SLURM_ID in env:
        task, low = _int(env, SLURM_ID), _int(env, SLURM_MIN, 0)
        step = _int(env, SLURM_STEP, 1) or 1
        if (task - low) % step:
            raise ConfigError(
                f"--shard auto/{n}: {SLURM_ID}={task} is not on the array's grid (min {low}, step {step})"
            )
        k = (task - low) // step + 1
        source = f"{SLURM_ID}={task} ({SLURM_MIN}={low})"
        if SLURM_COUNT in env and _int(env, SLURM_COUNT) != n:
            raise ConfigError(
                f"--shard auto/{n}: the Slurm array has {env[SLURM_COUNT]} tasks but N is {n}; "
                f"submit with --array holding exactly {n} indices, or pass --shard auto/{env[SLURM_COUNT]}"
            )
    else:
        raise ConfigError(
            f"--shard auto/{n} needs the shard index from the batch system, but neither {K8S_INDEX} "
            f"(Kubernetes Indexed Job) nor {SLURM_ID} (Slurm array) is set; pass --shard K/{n} instead"
        )
    if not 1 <= k <= n:
        raise ConfigError(f"--shard auto/{n}: {source} gives shard {k}, outside 1..{n}; make N match the job's size")
    return k, n


def _int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    if name not in env and default is not None:
        return default
    try:
        return int(env[name])
    except ValueError:
        raise ConfigError(f"{name}={env[name]!r} is not a whole number") from None


def in_shard(index: int, k: int, n: int) -> bool:
    """Whether the ``index``-th (0-based) of the sorted targets belongs to shard ``k`` of ``n``."""
    return index % n == k - 1
