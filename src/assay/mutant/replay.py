"""``assay replay`` of a differential finding: the input on the original and on the mutant."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import ArtifactError
from assay.core.target import Target
from assay.store.artifacts import Artifact


@dataclass(frozen=True)
class MutantReplay:
    """One input run once on the original and once on the mutant: what ``assay replay`` shows."""

    mutant_id: str
    diff: str
    input: bytes
    #: ``describe(original, mutated)`` while the two sides differ; ``None`` once they agree.
    difference: str | None


def replay_mutant_artifact(target: Target, artifact: Artifact) -> MutantReplay:
    """Run the artifact's input once on each side, each in a fresh child.

    The mutant is rebuilt from the artifact's metadata against the file as it is now;
    if its function changed since, the mutant no longer applies and that is said.
    """
    from assay.mutant.apply import Patch
    from assay.mutant.differential import compare_in_children
    from assay.mutant.model import Mutant
    from assay.mutant.outcome import describe, same

    meta = artifact.metadata
    try:
        mutant = Mutant.from_json(meta["mutant"])
        text = Path(mutant.path).read_text("utf-8")
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise ArtifactError(f"{artifact.path}: the mutant cannot be rebuilt from its metadata ({exc})") from None
    patch = Patch.build(mutant, text)
    original, mutated = compare_in_children(target, patch, artifact.input)
    difference = None if same(original, mutated) else describe(original, mutated)
    return MutantReplay(mutant.id, str(meta.get("mutant_diff", "")), artifact.input, difference)
