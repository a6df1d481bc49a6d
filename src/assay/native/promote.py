"""Native findings in the promoter, and the replay behind the one their emitted tests call.

The flake guard and the emitted test (through the public ``assay.replay_native``,
:mod:`assay.native.regression`) use the same :func:`replay_input`: the
project's native target is rebuilt if its build identity changed (a fix in the C
source is a new identity), the input runs once through the harness binary, and the
sanitizer report, if any, is judged into a signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.config import load_project
from assay.core.verdict import Verdict
from assay.native.replay import replay_native
from assay.promote.emit import header, input_assignment, relative_posix, root_expression
from assay.promote.rubric import Candidate
from assay.store.artifacts import Artifact


def replay_input(project_root: str | Path, target: str, data: bytes) -> Verdict | None:
    """Run ``data`` through native ``target`` of the project at ``project_root``; its verdict or None."""
    verdict, report = replay_native(load_project(project_root), target, data)
    if verdict is None:
        return None
    return Verdict(verdict.oracle, verdict.key, report, None, verdict.data)


class NativeCandidate(Candidate):
    """A native artifact offered for promotion."""

    source = "native"

    def __init__(self, artifact: Artifact, project_root: Path, problem: str | None = None) -> None:
        meta = artifact.metadata
        self.artifact = artifact
        self.project_root = project_root
        self.target = artifact.target
        self.oracle = str(meta.get("oracle"))
        self.signature = artifact.signature
        self.origin = relative_posix(artifact.path.resolve(), project_root)
        self.problem = problem
        seed = meta.get("campaign_seed")
        self.seed = "none" if seed is None else str(seed)

    def replay(self) -> Verdict | None:
        return replay_input(self.project_root, self.target, self.artifact.input)

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        assert self.signature is not None
        return render_native_test(
            test_path,
            project_root,
            origin=self.origin,
            target=self.target,
            oracle=self.oracle,
            signature=self.signature,
            seed=self.seed,
            data=self.artifact.input,
        )

    def log_fields(self) -> dict[str, Any]:
        return {
            "artifact": self.origin,
            "input_sha256": self.artifact.metadata.get("input_sha256"),
            "build_identity": (self.artifact.metadata.get("build") or {}).get("identity"),
        }


def render_native_test(
    test_path: Path,
    project_root: Path,
    *,
    origin: str,
    target: str,
    oracle: str,
    signature: str,
    seed: str,
    data: bytes,
) -> dict[Path, bytes]:
    """A test running the native harness on the minimized input (rebuilt when its identity changed)."""
    files: dict[Path, bytes] = {}
    input_code = input_assignment(test_path, data, files)
    text = (
        header(origin, target, oracle, signature, seed)
        + f'"""Regression test for native target {target!r}: runs the minimized input through\n'
        "the libFuzzer harness binary (ASan + UBSan), rebuilt first if its build identity changed.\n\n"
        'It fails while the bug is present and passes once it is fixed.\n"""\n\n'
        "from pathlib import Path\n\n"
        "import assay\n\n"
        f"PROJECT_ROOT = {root_expression(test_path, project_root)}\n"
        f"TARGET = {target!r}\n"
        f"SIGNATURE = {signature!r}\n" + input_code + "\n\n"
        f"def {test_path.stem}() -> None:\n"
        "    failure = assay.replay_native(TARGET, INPUT, project=PROJECT_ROOT)\n"
        "    assert failure is None, failure.report(SIGNATURE)\n"
    )
    files[test_path] = text.encode("utf-8")
    return files
