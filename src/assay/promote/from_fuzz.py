"""Fuzz artifacts as promotion candidates, and the library entry point for them.

An artifact is replayed through the project's real target, exactly as its emitted
test will: in this process with the target's timeout, or in a forked child for
``crash`` and ``wedge`` findings (which kill or hang their process).  The replay
only compares signatures, so every oracle tag goes through the same path (a wedge
keyed by its timeout matches any such wedge: :func:`assay.engine.wedges.reproduces`).

A finding of a Hypothesis target (its metadata holds the falsifying example, see
:mod:`assay.harness.given`) is replayed and emitted as that example through ``@example``,
never as choice bytes: :class:`ExampleCandidate`.  Its replay runs the test body
outside ``fuzz_one_input``, so its signature differs in Hypothesis's own frames;
it is the same failure when its bug (exception type and innermost project
frame) is the artifact's.
"""

from __future__ import annotations

import keyword
import os
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from assay.core.config import Project
from assay.core.errors import ArtifactError, ConfigError, TargetError
from assay.core.target import Registry, Target
from assay.core.verdict import Verdict
from assay.engine import wedges
from assay.engine.execute import recorded_room, run_input
from assay.engine.isolate import run_isolated
from assay.findings.identity import identify, identify_metadata, is_third_party
from assay.promote.backends import BACKEND_CANDIDATES
from assay.promote.emit import ISOLATED_ORACLES, name_label, relative_posix, render_artifact_test, render_example_test
from assay.promote.rubric import Candidate, Promoter
from assay.promote.summary import PromoteSummary
from assay.store.artifacts import Artifact, iter_artifacts, load_artifact


class ArtifactCandidate(Candidate):
    """One fuzz artifact (its input is already minimized by the engine)."""

    source = "fuzz"

    def __init__(
        self, artifact: Artifact, target: Target | None, project_root: Path, problem: str | None = None
    ) -> None:
        meta = artifact.metadata
        self.artifact = artifact
        self.target_obj = target
        self.target = artifact.target
        self.oracle = str(meta.get("oracle") or artifact.verdict.oracle)
        self.signature = artifact.signature
        self.origin = relative_posix(artifact.path.resolve(), project_root)
        self.problem = problem
        #: The harness file of a target given on the command line (not in [tool.assay]), for the emitted test.
        self.harness_file: str | None = None
        self.replays = target.replays if target is not None else None
        seed = meta.get("campaign_seed")
        self.seed = "none" if seed is None else str(seed)
        self._describe(project_root)

    def _describe(self, project_root: Path) -> None:
        """Bug id, name label, harness flag, third-party location and headline, from the metadata."""
        from assay.findings.explain import headline

        meta = self.artifact.metadata
        try:
            ident = identify_metadata(meta)
        except (KeyError, TypeError, ValueError):
            return
        self.ident = ident
        self.bug = ident.id
        self.label = name_label(ident.exception, self.oracle, str((meta.get("verdict") or {}).get("key", "")))
        self.harness = ident.harness
        if ident.frame is not None and is_third_party(ident.frame.file):
            self.third_party = ident.frame.identity  # no path or line: they differ between machines
        self.summary = headline(meta, ident)

    @property
    def isolated(self) -> bool:
        return self.oracle in ISOLATED_ORACLES

    def replay(self) -> Verdict | None:
        assert self.target_obj is not None
        room = recorded_room(self.artifact.verdict)
        if self.isolated:
            return run_isolated(self.target_obj, self.artifact.input, room=room).verdict
        return run_input(self.target_obj, self.artifact.input, timeout=self.target_obj.timeout, room=room)

    def same_failure(self, verdict: Verdict | None) -> bool:
        """The artifact's signature; for a wedge keyed by its timeout, any such wedge: where
        a replay's timeout catches a hang is chance (:mod:`assay.engine.wedges`)."""
        return wedges.reproduces(verdict, self.artifact.verdict)

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        assert self.signature is not None
        return render_artifact_test(
            test_path,
            project_root,
            origin=self.origin,
            target=self.target,
            oracle=self.oracle,
            signature=self.signature,
            seed=self.seed,
            data=self.artifact.input,
            bug=self.bug,
            summary=self.summary,
            xfail=self.xfail_reason,
            harness=self.harness_file,
            headroom=recorded_room(self.artifact.verdict),
        )

    def log_fields(self) -> dict[str, Any]:
        return {"artifact": self.origin, "input_sha256": self.artifact.metadata.get("input_sha256")}


class ExampleCandidate(ArtifactCandidate):
    """A Hypothesis target's finding, replayed as its falsifying example through ``@example``."""

    source = "hypothesis"

    def __init__(self, artifact: Artifact, target: Target | None, project_root: Path, example: dict[str, Any]) -> None:
        super().__init__(artifact, target, project_root)
        self.example = example
        self.replayed_as: str | None = None
        unsafe = _unsafe_arguments(example.get("arguments"))
        if unsafe is not None:  # metadata is data: never evaluated, never written into a test
            self.problem = (
                f"the falsifying example in its metadata is not assay's: {unsafe}; the artifact is damaged or crafted"
            )
        elif not example.get("replayable", False):
            self.problem = (
                "the falsifying example has arguments without a literal form ("
                + ", ".join(f"{k}={v}" for k, v in example.get("arguments", {}).items())
                + "), so it cannot be written into a test"
            )

    @property
    def isolated(self) -> bool:
        return False

    def replay(self) -> Verdict | None:
        from hypothesis import example

        from assay.core.literals import evaluate
        from assay.promote.regression import given_test, run_example

        assert self.target_obj is not None
        arguments = {name: evaluate(src) for name, src in self.example["arguments"].items()}
        verdict = run_example(given_test(self.target_obj).hypothesis.inner_test, example(**arguments))
        if verdict is not None and self.replayed_as is None:
            self.replayed_as = verdict.signature
        return verdict

    def same_failure(self, verdict: Verdict | None) -> bool:
        meta = self.artifact.metadata
        ident = getattr(self, "ident", None)
        if verdict is None or ident is None:
            return False
        return identify(verdict, meta.get("sources") or (), meta.get("harness")).key == ident.key

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        assert self.signature is not None
        return render_example_test(
            test_path,
            project_root,
            origin=self.origin,
            target=self.target,
            oracle=self.oracle,
            signature=self.replayed_as or self.signature,
            seed=self.seed,
            arguments=self.example["arguments"],
            bug=self.bug,
            summary=self.summary,
            xfail=self.xfail_reason,
        )

    def log_fields(self) -> dict[str, Any]:
        return {**super().log_fields(), "example": self.example}


def _unsafe_arguments(arguments: Any) -> str | None:
    """What makes a recorded example's arguments unfit to evaluate or emit (None: plain literals by name)."""
    from assay.core.literals import literal_problem

    if not isinstance(arguments, dict):
        return "its arguments are not an object"
    for name, source in arguments.items():
        if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            return f"argument name {name!r} is not an identifier"
        problem = literal_problem(source)
        if problem is not None:
            return f"argument {name} is {problem}"
    return None


def candidate_for(artifact: Artifact, registry: Registry, project_root: Path) -> Candidate:
    """The candidate for ``artifact``; a problem (not an error) when it cannot be replayed."""
    meta = artifact.metadata
    backend = BACKEND_CANDIDATES.get(meta.get("backend") or "python")
    if backend is not None:  # replayed by its own backend (a harness binary), not in Python
        return backend(artifact, project_root)
    if artifact.target not in registry:
        recorded = meta.get("harness")
        if recorded:
            from assay.harness.paths import unregistered_message

            command = shlex.join(["assay", "promote", relative_posix(artifact.path.resolve(), project_root)])
            problem = unregistered_message(artifact.target, recorded, command)
        else:
            problem = (
                f"no target named {artifact.target!r} is registered any more (registered: "
                f"{', '.join(registry.names()) or 'none'})"
            )
        return ArtifactCandidate(artifact, None, project_root, problem=problem)
    target = registry.get(artifact.target)
    if meta.get("mutant_id"):
        return ArtifactCandidate(
            artifact, target, project_root, f"found on mutant {meta['mutant_id']!r}, not on the real code"
        )
    example = ((meta.get("verdict") or {}).get("data") or {}).get("example")
    if isinstance(example, dict) and isinstance(example.get("arguments"), dict):
        return ExampleCandidate(artifact, target, project_root, example)
    candidate = ArtifactCandidate(artifact, target, project_root)
    candidate.harness_file = registry.harness_files.get(artifact.target)
    return candidate


def pending_artifacts(project: Project) -> list[Artifact]:
    """Every artifact under the project's artifact root, except those found on mutants."""
    return [a for a in iter_artifacts(project.artifacts) if not a.metadata.get("mutant_id")]


def _load(item: Artifact | str | os.PathLike[str]) -> Artifact:
    if isinstance(item, Artifact):
        return item
    path = Path(item)
    if not path.exists():
        raise ArtifactError(
            f"artifact {path} does not exist; pass an artifact folder (holding input and metadata.json)"
        )
    return load_artifact(path)


def promote_artifacts(
    project: Project,
    artifacts: Iterable[Artifact | str | os.PathLike[str]] | None = None,
    *,
    write: bool = False,
    replays: int | None = None,
    include_harness: bool = False,
    xfail: bool = False,
    harnesses: Sequence[str | os.PathLike[str]] = (),
) -> PromoteSummary:
    """Run the promoter over fuzz ``artifacts`` (default: :func:`pending_artifacts`).

    Emit-only unless ``write``: tests go to the staging folder, and only ``write``
    puts them into the regressions folder and records their buckets.  ``replays``
    overrides every target's ``replays`` setting for the flake guard.  Findings
    raised in the harness file are skipped unless ``include_harness``; ``xfail``
    emits bugs raised outside the project as strict ``xfail`` tests.  ``harnesses`` are
    harness files (targets given on the command line, not in ``[tool.assay]``) the user
    names; a harness file recorded in an artifact's metadata is never imported.
    """
    if replays is not None and (isinstance(replays, bool) or not isinstance(replays, int) or replays < 1):
        raise ConfigError(f"--replays must be a whole number of at least 1, not {replays!r}")
    chosen = [_load(a) for a in artifacts] if artifacts is not None else pending_artifacts(project)
    promoter = Promoter(project, write=write, replays=replays, include_harness=include_harness, xfail=xfail)
    if not chosen:
        return promoter.summary
    python = [a for a in chosen if a.metadata.get("backend") != "native"]
    if python:
        from assay.harness.paths import registry_for

        try:
            registry = registry_for(project, list(harnesses))  # never a path from metadata: artifacts are data
        except TargetError:
            if harnesses or not any(a.metadata.get("harness") for a in python):
                raise
            registry = Registry()  # no configured targets: each candidate says how to name its harness file
    else:
        registry = Registry()
    for artifact in chosen:
        promoter.promote(candidate_for(artifact, registry, project.root))
    return promoter.summary
