"""One seeded, stateless shard: (target, shard K of N, master seed, corpus snapshot, case cap).

:func:`run_shard` runs anywhere the project's code is importable (a Dask worker, a
CI job) and needs no shared filesystem: the corpus snapshot travels in the
:class:`ShardSpec`, the campaign runs in a temporary folder, and the corpus
additions and findings come back as bytes in the :class:`ShardResult`.
:func:`apply_result` writes them into the local content-addressed stores, where a
second copy of the same result (a retried task) finds everything already present
and writes nothing.

Shard ``k`` (0-based) of a target runs with seed ``job_seed(target seed, k)`` (shard
0 keeps the target seed, so a one-shard run is exactly ``assay fuzz``) and the same
share of the case cap as ``--jobs``' job ``k``, but it never imports other shards'
entries while it runs, so its schedule digest depends only on its spec.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core import forking, notices
from assay.core.errors import AssayError
from assay.engine.campaign import CampaignOptions, job_seed, prepare, run_prepared
from assay.engine.seeds import target_seed
from assay.engine.supervisor import FindingRecord, TargetOutcome
from assay.store.atomic import publish_dir
from assay.store.corpus import SUFFIX, Corpus, digest

#: This interpreter's PYTHONHASHSEED, read once at import: Dask's nanny later rewrites
#: ``os.environ`` of the process that hosts it (a LocalCluster's client) to 6640.
HASH_SEED = os.environ.get("PYTHONHASHSEED", "")
#: A string whose hash tells whether two interpreters hash alike: a worker's
#: ``os.environ`` need not say which seed its interpreter started with.
HASH_PROBE = "assay.scale.shard hash probe"


class ShardError(AssayError):
    """A shard could not run (its interpreter failed outside the campaign)."""


@dataclass(frozen=True)
class ShardSpec:
    """Everything one shard needs; plain data, cheap to ship to a remote worker."""

    project: str
    target: str
    index: int
    count: int
    master_seed: int
    max_cases: int | None
    budget: float | None
    corpus: tuple[tuple[str, bytes], ...] = ()
    replay_only: bool = False
    shrink_cases: int = 1024
    dictionary: tuple[bytes, ...] = ()
    hash_seed: str = ""  # the client's PYTHONHASHSEED ("" when random: nothing to match)
    hash_probe: int = 0  # the client's hash(HASH_PROBE)

    @property
    def seed(self) -> int:
        """This shard's seed: ``job_seed(target seed, index)``."""
        return job_seed(target_seed(self.master_seed, self.target), self.index)

    @property
    def key(self) -> str:
        """A stable task name (Dask key): the same spec always has the same key."""
        h = hashlib.sha256(repr(dataclasses.astuple(self)).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        return f"assay-shard-{self.target}-{self.index + 1}of{self.count}-{h}"


@dataclass
class ShardResult:
    """What a shard returns: its outcome as JSON-able data, and new bytes to store."""

    target: str
    index: int
    outcome: dict[str, Any]
    additions: dict[str, bytes] = field(default_factory=dict)
    findings: dict[str, dict[str, bytes]] = field(default_factory=dict)  # artifact dir (relative) -> files


@dataclass
class Applied:
    """What :func:`apply_result` wrote (all zero for a result applied before)."""

    corpus_written: int = 0
    artifacts_written: int = 0


def shard_cases(max_cases: int | None, index: int, count: int) -> int | None:
    """Shard ``index``'s share of a per-target case cap (as ``--jobs`` splits it)."""
    if max_cases is None:
        return None
    return max_cases // count + (index < max_cases % count)


def plan_shards(project: str, targets: list[Any], options: CampaignOptions, master: int, count: int) -> list[ShardSpec]:
    """One spec per (target, shard), with each target's corpus snapshot read once, here.

    Call ``assay.store.corpus.check_all`` (or ``prepare``) first: the corpus
    must have passed its checks.  A replay-only run needs one shard per target.
    """
    count = 1 if options.replay_only else count
    budget = None if options.budget is None else options.budget / max(1, len(targets))
    specs = []
    for t in targets:
        snapshot = tuple(Corpus(options.corpus_root, t.name, t.max_len).load())
        for k in range(count):
            specs.append(
                ShardSpec(
                    project=project,
                    target=t.name,
                    index=k,
                    count=count,
                    master_seed=master,
                    max_cases=shard_cases(options.max_cases, k, count),
                    budget=budget,
                    corpus=snapshot,
                    replay_only=options.replay_only,
                    shrink_cases=options.shrink_cases,
                    dictionary=tuple(options.dictionary),
                    hash_seed=HASH_SEED,
                    hash_probe=hash(HASH_PROBE),
                )
            )
    return specs


def run_shard(spec: ShardSpec) -> ShardResult:
    """Run one shard in a temporary folder; everything it produced, as data.

    Targets that iterate sets or dicts of strings behave differently under another
    hash seed, so a shard runs under the client's ``PYTHONHASHSEED``.  A worker started
    with another one (Dask's nanny sets 6640 for the workers it starts, unless
    :func:`assay.scale.dask_executor.dask_client` started them) runs the shard in a
    fresh interpreter that has it.
    """
    if spec.hash_seed and hash(HASH_PROBE) != spec.hash_probe:
        return _run_in_interpreter(spec)
    return run_shard_here(spec)


def _run_in_interpreter(spec: ShardSpec) -> ShardResult:
    with tempfile.TemporaryDirectory(prefix="assay-shard-io-") as tmp:
        given, taken = Path(tmp) / "spec.pickle", Path(tmp) / "result.pickle"
        given.write_bytes(pickle.dumps(spec))
        env = {**os.environ, "PYTHONHASHSEED": spec.hash_seed}
        forking.libc()  # loaded here: the preexec_fn only calls it
        proc = subprocess.run(
            [sys.executable, "-m", "assay.scale.subshard", str(given), str(taken)],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            preexec_fn=forking.die_with_parent,  # a shard never outlives the run that started it
        )
        if proc.returncode != 0 or not taken.exists():
            raise ShardError(
                f"shard {spec.index + 1}/{spec.count} of {spec.target!r} failed in its interpreter "
                f"(exit {proc.returncode}):\n{proc.stderr[-4000:]}"
            )
        return pickle.loads(taken.read_bytes())


def run_shard_here(spec: ShardSpec) -> ShardResult:
    """:func:`run_shard` in this interpreter, whatever its hash seed."""
    from assay.core.config import load_project
    from assay.harness.discovery import load_targets

    project = load_project(spec.project)
    target = load_targets(project).get(spec.target)
    with tempfile.TemporaryDirectory(prefix="assay-shard-") as tmp:
        corpus_root, artifact_root = Path(tmp) / "corpus", Path(tmp) / "artifacts"
        store = Corpus(corpus_root, target.name, target.max_len)
        data: Any  # an input, then the outcome as a dict
        for _, data in spec.corpus:
            store.add(data)
        options = CampaignOptions(
            corpus_root=str(corpus_root),
            artifact_root=str(artifact_root),
            max_cases=spec.max_cases,
            budget=spec.budget,
            seed=spec.master_seed,
            replay_only=spec.replay_only,
            shrink_cases=spec.shrink_cases,
            dictionary=list(spec.dictionary),
            project_root=spec.project,
        )
        [prepared] = prepare([target], options)
        outcome = run_prepared(prepared, options, spec.master_seed, spec.seed, spec.budget, spec.max_cases)
        additions = {d: (store.dir / (d + SUFFIX)).read_bytes() for d in outcome.corpus_additions}
        findings: dict[str, dict[str, bytes]] = {}
        for f in outcome.findings:
            folder = Path(f.artifact)
            rel = folder.relative_to(artifact_root).as_posix()
            findings[rel] = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
            f.artifact = rel
    data = dataclasses.asdict(outcome)
    return ShardResult(spec.target, spec.index, data, additions, findings)


def apply_result(
    result: ShardResult, corpus_root: str | os.PathLike[str], artifact_root: str | os.PathLike[str], max_len: int
) -> tuple[TargetOutcome, Applied]:
    """Write a shard's additions and findings into the local stores; its outcome, with local paths.

    Content addressing makes this idempotent: applying the same result twice (a
    retried task) writes nothing the second time.
    """
    applied = Applied()
    store = Corpus(corpus_root, result.target, max_len)
    data: Any  # an addition, then the outcome as a dict
    for d, data in sorted(result.additions.items()):
        if digest(data) != d:
            raise ValueError(f"shard result for {result.target!r}: addition {d} does not match its content")
        if not (store.dir / (d + SUFFIX)).exists():
            store.add(data)
            applied.corpus_written += 1
    published: dict[str, bool] = {}
    unsaved: dict[str, tuple[str, dict[str, bytes]]] = {}
    for rel, files in sorted(result.findings.items()):
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise ValueError(f"shard result for {result.target!r}: artifact path {rel!r} leaves the artifact root")
        try:
            published[rel] = publish_dir(Path(artifact_root) / rel, files)
        except OSError as exc:  # a full disk: the finding stays in the report, with its input
            unsaved[rel] = (exc.strerror or str(exc), files)
            notices.notify(
                f"could not save a finding of target {result.target} under {artifact_root} ({unsaved[rel][0]}); "
                f"it is kept in the report, its input (base64): "
                f"{base64.b64encode(files.get('input', b'')).decode('ascii')}"
            )
            continue
        applied.artifacts_written += published[rel]
    data = dict(result.outcome)
    findings = [FindingRecord(**f) for f in data.pop("findings")]
    for f in findings:
        if f.artifact in unsaved:  # as the supervisor keeps a finding it could not write
            f.save_error, files = unsaved[f.artifact]
            f.new, f.artifact = True, ""
            f.unsaved_input = files.get("input", b"")
            f.unsaved_metadata = json.loads(files["metadata.json"]) if "metadata.json" in files else None
            continue
        f.new = published.get(f.artifact, False)
        f.artifact = str(Path(artifact_root) / f.artifact)
    return TargetOutcome(**data, findings=findings), applied
