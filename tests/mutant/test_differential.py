"""Differential fuzzing of surviving mutants: kills, equivalents, infrastructure, determinism."""

from __future__ import annotations

import ast
import hashlib
import json
import os
from multiprocessing.connection import Pipe
from pathlib import Path

import pytest
from subject_loader import load_subject

from assay.engine import isolate, journal as jr, procs
from assay.harness.define import make_target
from assay.mutant import diffrun, outcome as oc
from assay.mutant.apply import Patch
from assay.mutant.differential import (
    INFRASTRUCTURE,
    KILLED_BY_FUZZ,
    SURVIVED,
    FuzzOptions,
    compare_in_children,
    fuzz_survivor,
    targets_for,
)
from assay.mutant.model import EXPRESSION, STATEMENT, Edit, Mutant, function_digest, unified_diff

SUBJECT = Path(__file__).resolve().parent / "subjects" / "records.py"
CASES = 400


records = load_subject(SUBJECT)


def _record_target(data: bytes):
    return {
        "checksum": records.checksum(data),
        "fields": records.count_fields(data),
        "length": records.cached_length(data),
        "record": records.parse_record(data),
    }


TARGET = make_target(
    _record_target,
    name="records",
    sources=[str(SUBJECT)],
    seeds=[b"a=1;b=two", b"k=v"],
    expected=(records.RecordError,),
    max_len=64,
    timeout=0.5,
)


def make_mutant(func: str, old: str, new: str, operator: str, kind: str = EXPRESSION, index: int = 0) -> Mutant:
    """A mutant replacing the first ``old`` inside ``func`` of the subject by ``new``."""
    text = SUBJECT.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == func)
    lines = text.splitlines(keepends=True)
    for line in range(node.lineno, node.end_lineno + 1):
        col = lines[line - 1].find(old)
        if col >= 0:
            break
    else:
        raise AssertionError(f"{old!r} not in {func}")
    start = len(lines[line - 1][:col].encode())
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    edit = Edit(operator, line, start, line, start + len(old.encode()), new, f"{old} -> {new}", kind)
    return Mutant(
        path=str(SUBJECT),
        relpath="tests/mutant/subjects/records.py",
        qualname=func,
        operator=operator,
        index=index,
        digest=function_digest("".join(lines[first - 1 : node.end_lineno])),
        edit=edit,
        unit=func,
        unit_line=first,
        unit_end_line=node.end_lineno,
    )


def fuzz(mutant: Mutant, tmp_path: Path, *, cases: int = CASES, seed: int = 7, root: str = "artifacts"):
    text = SUBJECT.read_text()
    patch = Patch.build(mutant, text)
    assert patch.reachable
    options = FuzzOptions(artifact_root=str(tmp_path / root), seed=seed, cases=cases, replays=3)
    return fuzz_survivor(mutant, patch, [TARGET], options, diff=unified_diff(text, mutant)), patch


#: The planted control: the value-length cap dropped (no unit test sends a long value).
CONTROL = ("parse_record", "value = value[:MAX_VALUE]", "pass", "statement-drop", STATEMENT)


def test_control_only_fuzzing_kills_is_upgraded_with_an_artifact(tmp_path):
    mutant = make_mutant(*CONTROL)
    code = records.parse_record.__code__
    with Patch.build(mutant, SUBJECT.read_text()):  # the unit tests' inputs: a survivor
        assert records.parse_record(b"a=1;b=two") == {"a": "1", "b": "two"}
        assert records.parse_record(b"K = v;;") == {"k": " v"}
        with pytest.raises(records.RecordError):
            records.parse_record(b"novalue")
    assert records.parse_record.__code__ is code
    evidence, patch = fuzz(mutant, tmp_path)
    assert records.parse_record.__code__ is code and not patch.applied  # never applied in the parent
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.target == "records" and evidence.cases > 0
    data = evidence.input
    art = Path(evidence.artifact)
    id_dir = hashlib.sha256(mutant.id.encode()).hexdigest()
    assert art == tmp_path / "artifacts" / "mutants" / id_dir / "records" / hashlib.sha256(data).hexdigest()
    assert (art / "input").read_bytes() == data
    meta = json.loads((art / "metadata.json").read_text())
    assert meta["mutant_id"] == mutant.id and meta["oracle"] == "differential"
    assert meta["mutant_diff"].startswith("--- a/tests/mutant/subjects/records.py")
    assert meta["mutant_operator"] == "statement-drop"
    assert Mutant.from_json(meta["mutant"]) == mutant
    assert meta["original_outcome"]["kind"] == "return" and meta["mutant_outcome"]["kind"] == "return"
    assert meta["original_outcome"]["digest"] != meta["mutant_outcome"]["digest"]
    assert meta["signature"].startswith("differential:" + id_dir[:16])
    assert meta["determinism"]["reproduced"] == 3
    # The shrunk input still tells them apart, in fresh children.
    original, mutated = compare_in_children(TARGET, patch, data)
    assert oc.comparable(original) and not oc.same(original, mutated)
    assert original["digest"] == evidence.original["digest"]
    assert records.parse_record.__code__ is code


def test_a_kill_whose_artifact_cannot_be_saved_keeps_its_verdict_and_input(tmp_path, capsys):
    """A full disk (here: the artifact root lies under a file) loses no differential finding."""
    from assay.core import notices

    (tmp_path / "file").write_bytes(b"not a folder")
    heard: list[str] = []
    notices.set_sink(heard.append)
    try:
        evidence, _ = fuzz(make_mutant(*CONTROL), tmp_path, root="file/below")
    finally:
        notices.set_sink(None)
    assert evidence.status == KILLED_BY_FUZZ and evidence.artifact is None, evidence
    assert evidence.input and evidence.to_json()["input"] == evidence.input.hex()
    assert "could not be saved" in evidence.detail
    assert any("could not save" in h and "base64" in h for h in heard), heard


def test_equivalent_mutant_stays_survived_with_bounded_evidence(tmp_path):
    mutant = make_mutant("checksum", "total * 2", "total + total", "arith")
    code = records.checksum.__code__
    evidence, _ = fuzz(mutant, tmp_path, cases=300)
    assert evidence.status == SURVIVED, evidence.detail
    assert evidence.cases >= 300 and evidence.edges > 0
    assert evidence.artifact is None and evidence.input is None
    assert records.checksum.__code__ is code
    assert not (tmp_path / "artifacts").exists()
    assert json.loads(json.dumps(evidence.to_json()))["status"] == SURVIVED


@pytest.mark.parametrize(
    ("old", "new", "oracle"),
    [
        ("i += 1", "pass", "wedge"),  # loops forever
        ("n += 1", "__import__('os')._exit(3)", "crash"),  # ends the process
    ],
)
def test_a_mutant_that_hangs_or_exits_is_infrastructure_never_a_kill(tmp_path, old, new, oracle):
    mutant = make_mutant("count_fields", old, new, "statement", STATEMENT)
    code = records.count_fields.__code__
    evidence, _ = fuzz(mutant, tmp_path)
    assert evidence.status == INFRASTRUCTURE, evidence.detail
    assert records.count_fields.__code__ is code
    meta = json.loads((Path(evidence.artifact) / "metadata.json").read_text())
    assert meta["oracle"] == oracle and meta["infrastructure"] is True and meta["mutant_id"] == mutant.id
    assert meta["original_outcome"]["kind"] in ("return", "raise")
    assert meta["mutant_outcome"]["kind"] == ("wedge" if oracle == "wedge" else "crash")
    assert (Path(evidence.artifact) / "input").read_bytes() == evidence.input
    assert Path(evidence.artifact).parent.parent.name == hashlib.sha256(mutant.id.encode()).hexdigest()
    # The parent goes on: the next survivor is fuzzed as usual.
    after, _ = fuzz(make_mutant(*CONTROL), tmp_path, root="next")
    assert after.status == KILLED_BY_FUZZ


def test_a_mutant_that_ignores_its_soft_timeout_is_killed_by_pid_and_is_infrastructure(tmp_path):
    block = "__import__('signal').pthread_sigmask(__import__('signal').SIG_BLOCK, {__import__('signal').SIGALRM})"
    mutant = make_mutant("count_fields", "i += 1", block, "statement", STATEMENT)
    evidence, _ = fuzz(mutant, tmp_path)
    assert evidence.status == INFRASTRUCTURE, evidence.detail
    meta = json.loads((Path(evidence.artifact) / "metadata.json").read_text())
    assert meta["oracle"] == "wedge" and meta["mutant_outcome"]["kind"] == "wedge"
    assert (Path(evidence.artifact) / "input").read_bytes() == evidence.input == b"a=1;b=two"  # from the journal


def test_a_mutant_that_cannot_even_be_applied_is_infrastructure(tmp_path):
    # MAX_VALUE = 8 -> 1 // 0: re-executing the assignment in the twin raises.
    text = SUBJECT.read_text()
    line = text.splitlines().index("MAX_VALUE = 8") + 1
    edit = Edit("constant", line, 12, line, 13, "1 // 0", "8 -> 1 // 0")
    mutant = Mutant(
        path=str(SUBJECT),
        relpath="tests/mutant/subjects/records.py",
        qualname="<module>",
        operator="constant",
        index=0,
        digest="0" * 64,
        edit=edit,
        unit="",
        unit_line=line,
        unit_end_line=line,
    )
    evidence, _ = fuzz(mutant, tmp_path)
    assert evidence.status == INFRASTRUCTURE, evidence.detail
    assert records.MAX_VALUE == 8
    meta = json.loads((Path(evidence.artifact) / "metadata.json").read_text())
    assert meta["signature"] == "crash:apply:ZeroDivisionError"


def test_an_original_that_dies_is_survived_by_the_campaign_without_blaming_the_mutant(tmp_path):
    # The engine's crash isolation: the worker that died is replaced and the schedule goes on
    # (the input that killed it is steered away from); the original's own bug is not the mutant's.
    def explosive(data: bytes):
        if data.startswith(b"k"):
            os._exit(5)
        return records.checksum(data)

    target = make_target(explosive, name="explosive", sources=[str(SUBJECT)], seeds=[b"a=1", b"k=v"], timeout=0.5)
    mutant = make_mutant("checksum", "total * 2", "total + total", "arith")
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=1, cases=50, replays=2)
    evidence = fuzz_survivor(mutant, Patch.build(mutant, SUBJECT.read_text()), [target], options)
    assert evidence.status == SURVIVED
    assert evidence.cases == 2 + 50 and "the original itself failed" in evidence.detail
    assert "crash:exit:5" in evidence.detail
    assert not (tmp_path / "artifacts").exists()


def test_the_twin_answers_inputs_asked_ahead_by_tag_and_a_ping_tells_whether_it_is_there():
    # The worker asks the twin before it runs the original and takes the answer after: an
    # answer nobody took (its asker died in the middle of the case) is skipped by its tag, and
    # before a replacement worker a ping tells a twin that died with the original from a ready one.
    mutant = make_mutant(*CONTROL)
    patch = Patch.build(mutant, SUBJECT.read_text())
    journal, capture = jr.Journal(TARGET.max_len), isolate.new_capture()
    pid, conn = diffrun.spawn_twin(TARGET, patch, journal, capture)
    alive = True
    try:
        twin = diffrun.Twin(conn, wait=10.0)
        short, long = b"k=v", b"k=" + b"v" * 40  # the control mutant keeps a long value whole
        twin.ask(jr.GENERATED, 0, short)
        mutated, _, _ = twin.answer(twin.ask(jr.GENERATED, 1, long))
        assert oc.compared(mutated) == oc.compared(diffrun.replay_side(TARGET, patch, long))
        assert oc.compared(mutated) != oc.compared(diffrun.replay_side(TARGET, None, long))
        assert twin.ping()
        procs.reap_group(pid)
        alive = False
        assert not twin.ping()
    finally:
        conn.close()
        if alive:
            procs.reap_group(pid)
        journal.close()
        os.unlink(capture)


def test_a_guard_answer_its_asker_never_read_is_not_taken_for_the_next_request():
    # A worker interrupted while it waits for the flake guard (a soft timeout, its death) leaves
    # the answer in the pipe; the campaign's closing report must not read it as its own.
    patch = Patch.build(make_mutant(*CONTROL), SUBJECT.read_text())
    client, served = Pipe(duplex=True)

    def child(writer) -> None:
        writer.close()
        client.close()
        diffrun.guard_child(TARGET, patch, 1, True, served)

    pid, reader = isolate.fork_with_pipe(child)
    reader.close()
    served.close()
    try:
        client.send(((0, 0), "first", ("kill", b"k=v", None, None, None)))  # asked, never read
        assert diffrun.ask_guard(client, "report") == (0, 0, ("kill", b"k=v", None, None, None), None)
    finally:
        client.close()
        procs.reap_group(pid)


def test_a_difference_that_needs_state_from_earlier_cases_does_not_kill(tmp_path):
    # Once its cache holds anything the mutant looks up every input there (KeyError):
    # in the campaign that is from the second input on; alone in a fresh child, never.
    mutant = make_mutant("cached_length", "data in _lengths", "_lengths", "expr")
    evidence, _ = fuzz(mutant, tmp_path, cases=100)
    assert evidence.status == SURVIVED, evidence.detail
    assert "did not replay stably" in evidence.detail
    assert not (tmp_path / "artifacts").exists()


def test_a_cache_filled_by_the_original_does_not_hide_the_mutant(tmp_path):
    # normalize_key is lru_cached: had the original's run filled the cache the
    # mutant's run reads, the mutant's code would never run on a key it was given.
    mutant = make_mutant("normalize_key", "key.strip().lower()", "key.strip()", "call.drop")
    # Emptied first: keys earlier tests of this process left in it would change what the
    # campaign's workers (forked from here) see, and so its schedule.
    records.normalize_key.cache_clear()
    evidence, _ = fuzz(mutant, tmp_path, cases=2000)  # the engine's schedule meets an upper-case key at case 1,437
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail


def test_same_seed_same_evidence(tmp_path):
    first, _ = fuzz(make_mutant(*CONTROL), tmp_path, root="one")
    second, _ = fuzz(make_mutant(*CONTROL), tmp_path, root="two")
    assert first.status == second.status == KILLED_BY_FUZZ
    assert (first.input, first.cases, first.original, first.mutated) == (
        second.input,
        second.cases,
        second.original,
        second.mutated,
    )


def test_a_mutant_changing_only_an_exception_message_shape_is_killed(tmp_path):
    mutant = make_mutant("parse_record", '"bad record"', '"XXbad recordXX"', "string")
    evidence, _ = fuzz(mutant, tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.original["kind"] == evidence.mutated["kind"] == "raise"
    assert evidence.original["type"] == evidence.mutated["type"]
    assert "exception-shape" in evidence.detail
    assert evidence.kill_kind == "message"
    # No behaviour kill to find: the search for one went on to the case cap, the message kill stands.
    assert evidence.cases == len(TARGET.seeds) + CASES
    assert len(evidence.input) == 1  # shrunk while the schedule went on: a rerun keeps the message kill's class


def test_with_compare_no_messages_a_message_only_mutant_survives(tmp_path):
    mutant = make_mutant("parse_record", '"bad record"', '"XXbad recordXX"', "string")
    text = SUBJECT.read_text()
    options = FuzzOptions(artifact_root=str(tmp_path / "artifacts"), seed=7, cases=CASES, replays=3, messages=False)
    evidence = fuzz_survivor(mutant, Patch.build(mutant, text), [TARGET], options)
    assert evidence.status == SURVIVED, evidence.detail
    assert evidence.cases == len(TARGET.seeds) + CASES


def test_a_behaviour_kill_is_told_from_a_message_kill(tmp_path):
    evidence, _ = fuzz(make_mutant(*CONTROL), tmp_path)
    assert evidence.status == KILLED_BY_FUZZ
    assert evidence.kill_kind == "behaviour"
    meta = json.loads((Path(evidence.artifact) / "metadata.json").read_text())
    assert meta["kill_kind"] == "behaviour"


def test_a_mutant_changing_only_a_semantic_feature_is_killed(tmp_path):
    mutant = make_mutant("parse_record", '"small"', '"tiny"', "string", index=1)
    evidence, _ = fuzz(mutant, tmp_path)
    assert evidence.status == KILLED_BY_FUZZ, evidence.detail
    assert evidence.original["digest"] == evidence.mutated["digest"]
    assert evidence.original["features"] != evidence.mutated["features"]


def test_targets_for_picks_covering_targets_else_all(tmp_path):
    other_file = tmp_path / "other.py"
    other_file.write_text("x = 1\n")
    other = make_target(lambda d: None, name="other", sources=[str(other_file)])
    assert [t.name for t in targets_for(str(SUBJECT), [other, TARGET], None)] == ["records"]
    assert [t.name for t in targets_for(str(tmp_path / "nowhere.py"), [other, TARGET], None)] == ["other", "records"]


class _Plain:
    def __init__(self, n):
        self.n = n
        self.fn = len


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


def test_outcome_identity_is_stable_and_discriminating():
    assert oc.message_shape("expected 3 got 4") == oc.message_shape("expected 51 got 6")
    assert oc.message_shape("expected 3 got 4") != oc.message_shape("bad header")
    assert oc.message_shape("unexpected 'x' at 0x7f00ab") == oc.message_shape("unexpected 'y' at 0x1")
    assert oc.message_shape("unexpected 'x'") != oc.message_shape("unexpected 'xyz'")
    assert oc.stable_repr({"b": 1, "a": {2, 1}}) == oc.stable_repr({"a": {1, 2}, "b": 1})
    assert oc.stable_repr(_Plain(1)) == oc.stable_repr(_Plain(1)) != oc.stable_repr(_Plain(2))
    assert oc.stable_repr(object()) == oc.stable_repr(object())
    assert oc.stable_repr(_Slotted(1)) == oc.stable_repr(_Slotted(1)) != oc.stable_repr(_Slotted(2))
    assert oc.stable_repr(lambda: 1) == oc.stable_repr(lambda: 2) == "<builtins.function>"
    assert " at 0x" not in oc.stable_repr([lambda: 1, iter([]), (x for x in ())])
    loop: list = []
    loop.append(loop)
    assert "<cycle>" in oc.stable_repr(loop)
    assert oc.same(oc.returned([1], [("f", "k", "1")]), oc.returned([1], [("f", "k", "1")]))
    assert not oc.same(oc.returned([1], [("f", "k", "1")]), oc.returned([1], []))


def _discovered(suffix: str) -> Mutant:
    from assay.mutant.discover import mutants_in_file

    found = [m for m in mutants_in_file(SUBJECT, SUBJECT.parents[3]) if m.id.split("@")[0].endswith(suffix)]
    assert len(found) == 1, [m.id for m in mutants_in_file(SUBJECT, SUBJECT.parents[3])]
    return found[0]


def test_discovered_mutants_module_rebinding_killed_and_a_real_equivalent_survives(tmp_path):
    # MAX_VALUE = 8 -> 9 is applied by rebinding the module global, in the child only.
    rebound, _ = fuzz(_discovered("<module>::constant.adjust#0"), tmp_path, root="rebound")
    assert records.MAX_VALUE == 8
    assert rebound.status == KILLED_BY_FUZZ, rebound.detail
    assert len(rebound.mutated["repr"]) > len(rebound.original["repr"])
    # `len(value) > MAX_VALUE` -> `>=`: cutting a value of exactly MAX_VALUE changes nothing.
    boundary, _ = fuzz(_discovered("parse_record::compare.boundary#0"), tmp_path, cases=300, root="boundary")
    assert boundary.status == SURVIVED, boundary.detail
    assert boundary.cases > 300 and boundary.edges > 0
