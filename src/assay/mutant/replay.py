"""``assay replay`` of a differential finding: the input on the original and on the mutant."""

from __future__ import annotations

from pathlib import Path

from assay.core.errors import ArtifactError
from assay.core.target import Target
from assay.store.artifacts import Artifact


def replay_mutant_artifact(target: Target, artifact: Artifact) -> int:
    """Run the artifact's input once on each side, each in a fresh child; 1 while they still differ.

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
    print(f"mutant: {mutant.id}\n{meta.get('mutant_diff', '').rstrip()}")
    print(f"input: {len(artifact.input)} bytes {artifact.input[:200]!r}{'...' if len(artifact.input) > 200 else ''}")
    if same(original, mutated):
        print("verdict: the original and the mutant agree on this input now (the difference is gone)")
        return 0
    print(f"verdict: differential\n{describe(original, mutated)}")
    return 1
