"""``assay replay`` of a differential finding: the input on the original and on the mutant."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import ArtifactError
from assay.core.target import Target
from assay.mutant.apply import Patch
from assay.mutant.model import Mutant
from assay.store.artifacts import Artifact


@dataclass(frozen=True)
class MutantReplay:
    """One input run once on the original and once on the mutant: what ``assay replay`` shows."""

    mutant_id: str
    diff: str
    input: bytes
    #: ``describe(original, mutated)`` while the two sides differ; ``None`` once they agree.
    difference: str | None


def replay_mutant_artifact(target: Target, artifact: Artifact, project_root: Path) -> MutantReplay:
    """Run the artifact's input once on each side, each in a fresh child.

    The mutant is rebuilt by assay's own operators from the project's file as it is
    now, and looked up by the id the metadata records: the metadata's edit is never
    compiled (it is source text, and artifacts are data).  If the file or its
    function changed since, the mutant no longer exists and that is said.
    """
    from assay.mutant.differential import compare_in_children
    from assay.mutant.outcome import describe, same

    mutant = rebuild_mutant(artifact, project_root)
    patch = Patch.build(mutant, Path(mutant.path).read_text("utf-8"))
    original, mutated = compare_in_children(target, patch, artifact.input)
    difference = None if same(original, mutated) else describe(original, mutated)
    return MutantReplay(mutant.id, str(artifact.metadata.get("mutant_diff", "")), artifact.input, difference)


def rebuild_mutant(artifact: Artifact, project_root: Path) -> Mutant:
    """The project's own mutant with the id the artifact records (its file must lie inside ``project_root``)."""
    from assay.mutant.discover import mutants_in_file

    recorded = artifact.metadata.get("mutant") or {}
    mutant_id, relpath = artifact.metadata.get("mutant_id"), recorded.get("relpath")
    if not isinstance(mutant_id, str) or not isinstance(relpath, str) or not relpath:
        raise ArtifactError(f"{artifact.path}: the metadata lacks a string 'mutant_id' and 'mutant.relpath'")
    root = project_root.resolve()
    path = (root / relpath).resolve()
    if not path.is_relative_to(root) or path.suffix != ".py" or not path.is_file():
        raise ArtifactError(
            f"{artifact.path}: the mutant's file {relpath!r} is not a Python file inside the project {root}"
        )
    try:
        text = path.read_text("utf-8")
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{artifact.path}: the mutant's file {path} cannot be read ({exc})") from None
    namespace = None  # the module's names, when it is loaded, let namespace-aware operators make their mutants
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and Path(file).resolve() == path:
            namespace = vars(module)
            break
    for mutant in mutants_in_file(path, root, namespace, text):
        if mutant.id == mutant_id:
            return mutant
    raise ArtifactError(
        f"{artifact.path}: assay's operators make no mutant {mutant_id!r} of {relpath} now "
        "(the function changed since, or the metadata was not written by assay); the mutant no longer applies"
    )
