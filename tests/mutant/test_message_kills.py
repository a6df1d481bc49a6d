"""A message kill does not end a survivor's campaign: a behaviour kill the same budget finds is the verdict.

The subject (``subjects/tagged.py``) names what it reads in its error messages and
in its return value.  A mutant of that name differs by message on the seed (case 1)
and by behaviour only once the input carries the known version, which the campaign
finds later.  (A mutant of one message alone: ``test_differential.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path

from subject_loader import load_subject

from assay.harness.define import make_target
from assay.mutant import differential
from assay.mutant.apply import Patch
from assay.mutant.differential import KILLED_BY_FUZZ, FuzzOptions, fuzz_survivor
from assay.mutant.discover import mutants_in_file
from assay.mutant.model import Mutant, unified_diff

SUBJECT = Path(__file__).resolve().parent / "subjects" / "tagged.py"
CASES = 400


tagged = load_subject(SUBJECT)
SEEDS = [b"v2:abc"]  # an unknown version: only an error message tells the name's mutant apart

TARGET = make_target(
    tagged.read_tagged,
    name="tagged",
    sources=[str(SUBJECT)],
    seeds=SEEDS,
    expected=(tagged.TagError,),
    max_len=64,
    timeout=0.5,
)


def discovered(operator: str, replacement: str, source: str) -> Mutant:
    """The mutant discovery makes of ``read_tagged`` on the line holding ``source``."""
    lines = SUBJECT.read_text().splitlines()
    found = [
        m
        for m in mutants_in_file(SUBJECT, SUBJECT.parents[3])
        if m.operator == operator and m.edit.replacement == replacement and source in lines[m.edit.line - 1]
    ]
    assert len(found) == 1, [(m.operator, m.edit.replacement, m.edit.line) for m in found]
    return found[0]


#: The name in the messages and in the returned value, emptied.
NAME = ("constant.empty", "''", 'kind = "tagged value"')


def fuzz(mutant: Mutant, tmp_path: Path, messages: bool = True, root: str = "artifacts"):
    text = SUBJECT.read_text()
    options = FuzzOptions(artifact_root=str(tmp_path / root), seed=3, cases=CASES, replays=3, messages=messages)
    return fuzz_survivor(mutant, Patch.build(mutant, text), [TARGET], options, diff=unified_diff(text, mutant))


def test_a_behaviour_kill_after_a_message_kill_is_the_verdict(tmp_path):
    evidence = fuzz(discovered(*NAME), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.kill_kind == "behaviour", evidence.detail
    assert evidence.original["kind"] == evidence.mutated["kind"] == "return"
    assert evidence.input.startswith(b"v1:")
    meta = json.loads((Path(evidence.artifact) / "metadata.json").read_text())
    assert meta["kill_kind"] == "behaviour" and meta["oracle"] == "differential"
    assert meta["determinism"]["reproduced"] == 3
    # The message kill the schedule met first was not published beside it.
    assert [p.name for p in Path(evidence.artifact).parent.iterdir()] == [Path(evidence.artifact).name]


def test_the_behaviour_kill_after_a_message_kill_is_deterministic(tmp_path):
    first = fuzz(discovered(*NAME), tmp_path, root="one")
    second = fuzz(discovered(*NAME), tmp_path, root="two")
    assert (first.input, first.cases, first.kill_kind) == (second.input, second.cases, second.kill_kind)


def test_with_compare_no_messages_the_name_mutant_is_a_behaviour_kill_as_before(tmp_path):
    evidence = fuzz(discovered(*NAME), tmp_path, messages=False)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.kill_kind == "behaviour"
    assert evidence.input.startswith(b"v1:")


def test_without_go_on_the_message_kills_input_is_lost_as_a_parent_and_the_behaviour_kill_with_it(
    tmp_path, monkeypatch
):
    # Non-vacuity of the engine's go_on: a finding's input is otherwise a crash parent at best (the seed
    # here is not even that), and the search never meets the known version within the budget.
    monkeypatch.setattr(differential, "GO_ON", frozenset())
    evidence = fuzz(discovered(*NAME), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.kill_kind == "message"
