"""Native findings: replay, minimize, check determinism, publish the artifact.

The input libFuzzer wrote is replayed against the same binary.  Crashes found by
a sanitizer are minimized with ``-minimize_crash=1``; the minimized input is kept
only if a replay still fails with the same signature, else the original is kept.
One more replay records whether the failure is deterministic.  Timeouts and
out-of-memory inputs keep their input as found (minimizing them costs a limit's
worth of time per attempt).

Artifacts: ``<artifacts>/<target>/<build sha256>/<failure sha256>/<input sha256>/``
holding ``input``, ``metadata.json`` and ``diagnostic.log``, where the failure
hash is the SHA-256 of the signature.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.native_target import NativeTarget
from assay.native.build import Build
from assay.native.run import DEADLINE_GRACE, run_fuzzer
from assay.native.signature import NativeFailure, parse_report, project_predicate
from assay.store.artifacts import MAX_DIAGNOSTIC, SCHEMA_VERSION, runtime_identity
from assay.store.atomic import publish_dir
from assay.store.corpus import digest

#: Seconds libFuzzer may spend minimizing one crash.
MINIMIZE_TIME = 20
#: Attempts (``-runs``) of libFuzzer's crash minimizer.
MINIMIZE_RUNS = 4096
#: Sanitizers whose findings are minimized.
MINIMIZED = frozenset({"asan", "ubsan", "lsan", "crash"})


@dataclass
class NativeFinding:
    """A failure ready to be published."""

    target: str
    failure: NativeFailure
    input: bytes
    original: bytes
    determinism: dict[str, Any]
    log: str


def harness_flags(target: NativeTarget) -> list[str]:
    """libFuzzer flags that judge one input the way the campaign did."""
    flags = [f"-timeout={target.timeout}", f"-rss_limit_mb={target.rss_limit_mb}"]
    if target.embed_python:
        flags.append("-detect_leaks=0")
    return flags


class Replayer:
    """Runs single inputs through one build and reads their failure."""

    def __init__(
        self,
        build: Build,
        target: NativeTarget,
        root: str | os.PathLike[str],
        env: dict[str, str],
        workdir: str | os.PathLike[str],
    ) -> None:
        self.build = build
        self.target = target
        self.env = env
        self.workdir = Path(workdir)
        self.in_project = project_predicate(root, build.manifest.get("inputs", {}))
        self.count = 0

    def run(self, data: bytes) -> tuple[NativeFailure | None, str]:
        """(failure or None, libFuzzer's output) of one run of ``data``."""
        self.count += 1
        path = self.workdir / f"replay-{self.count}"
        path.write_bytes(data)
        result = run_fuzzer(
            self.build.binary,
            [*harness_flags(self.target), str(path)],
            env=self.env,
            log_path=self.workdir / f"replay-{self.count}.log",
            deadline=self.target.timeout * 2 + DEADLINE_GRACE,
        )
        if result.killed:
            return None, result.log + "\n[assay] replay killed past its supervising deadline\n"
        return parse_report(result.log, self.in_project), result.log

    def minimize(self, data: bytes, seed: int) -> bytes | None:
        """libFuzzer's minimized version of crashing ``data`` (None if it produced none)."""
        self.count += 1
        src = self.workdir / f"minimize-{self.count}.in"
        out = self.workdir / f"minimize-{self.count}.out"
        src.write_bytes(data)
        args = [
            *harness_flags(self.target),
            "-minimize_crash=1",
            f"-exact_artifact_path={out}",
            f"-runs={MINIMIZE_RUNS}",
            f"-max_total_time={MINIMIZE_TIME}",
            f"-seed={seed}",
            str(src),
        ]
        run_fuzzer(
            self.build.binary,
            args,
            env=self.env,
            log_path=self.workdir / f"minimize-{self.count}.log",
            deadline=MINIMIZE_TIME * 2 + DEADLINE_GRACE,
        )
        return out.read_bytes() if out.is_file() and out.stat().st_size < len(data) else None


def confirm(replayer: Replayer, failure: NativeFailure, data: bytes, log: str, seed: int) -> NativeFinding:
    """Replay, minimize, and check the determinism of a failure found on ``data``."""
    first, first_log = replayer.run(data)
    observed = [first.signature if first else None]
    kept = data
    if first is not None and first.signature == failure.signature and failure.sanitizer in MINIMIZED:
        smaller = replayer.minimize(data, seed)
        if smaller is not None:
            again, _ = replayer.run(smaller)
            if again is not None and again.signature == failure.signature:
                kept = smaller
    final, final_log = replayer.run(kept)
    observed.append(final.signature if final else None)
    determinism = {
        "replays": len(observed),
        "observed": observed,
        "same_signature": all(s == failure.signature for s in observed),
        "minimized": kept is not data,
    }
    report = final if final is not None and final.signature == failure.signature else failure
    return NativeFinding(replayer.target.name, report, kept, data, determinism, log + "\n" + final_log)


def artifact_dir(root: str | os.PathLike[str], target: str, build_identity: str, signature: str, data: bytes) -> Path:
    """``<root>/<target>/<build sha256>/<failure sha256>/<input sha256>``."""
    return Path(root) / target / build_identity / digest(signature.encode("utf-8")) / digest(data)


def native_metadata(
    finding: NativeFinding,
    build: Build,
    target: NativeTarget,
    *,
    campaign_seed: int | None,
    target_seed: int | None,
    libfuzzer_args: list[str],
) -> dict[str, Any]:
    """The ``metadata.json`` of a native finding (loadable by :func:`assay.store.artifacts.load_artifact`)."""
    f = finding.failure
    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "backend": "native",
        "campaign_seed": campaign_seed,
        "target_seed": target_seed,
        "target": finding.target,
        "input_sha256": digest(finding.input),
        "original_sha256": digest(finding.original),
        "original_size": len(finding.original),
        "minimized_size": len(finding.input),
        "oracle": f.oracle,
        "signature": f.signature,
        "failure_sha256": digest(f.signature.encode("utf-8")),
        "verdict": f.verdict().to_json(),
        "exception": None,
        "determinism": finding.determinism,
        "sources": [target.harness, *target.sources],
        "mutation_operators": [],
        "case_index": None,
        "sanitizer_report": f.report,
        "build": {"identity": build.identity, "manifest": build.manifest, "binary": str(build.binary)},
        "clang": build.manifest.get("compiler"),
        "libfuzzer_args": libfuzzer_args,
    }
    meta.update(runtime_identity())
    return meta


def publish(
    root: str | os.PathLike[str], finding: NativeFinding, metadata: dict[str, Any], build: Build
) -> tuple[Path, bool]:
    """Write the artifact folder at once; (folder, newly written?)."""
    final = artifact_dir(root, finding.target, build.identity, finding.failure.signature, finding.input)
    files = {
        "input": finding.input,
        "metadata.json": (json.dumps(metadata, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode(),
        "diagnostic.log": finding.log[-MAX_DIAGNOSTIC:].encode("utf-8", "replace"),
    }
    return final, publish_dir(final, files)
