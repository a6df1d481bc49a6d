"""The mutation history store: atomic, tolerant of a bad file, strict about reuse."""

from __future__ import annotations

import json

from assay.mutant.history import History, project_digest, selection_digest


def test_missing_or_broken_history_is_empty(tmp_path):
    assert History.load(tmp_path / "nope.json").records == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert History.load(bad).records == {}
    bad.write_text(json.dumps({"schema_version": 999, "mutants": {"a": {}}}))
    assert History.load(bad).records == {}


def test_round_trip_and_killers_follow_the_function_digest(tmp_path):
    path = tmp_path / "h" / "history.json"
    h = History(path)
    h.record("m1", "d1", "s1", "killed", ["tests/t.py::test_a"], {"verdict": "killed"})
    h.record("m2", "d2", "s2", "survived", [], {"verdict": "survived"})
    h.save("p1")
    assert not list(path.parent.glob(".tmp-*"))  # the atomic write left no temp file
    again = History.load(path)
    assert again.killers("m1", "d1") == ["tests/t.py::test_a"]
    assert again.killers("m1", "changed") == []  # the function changed: no gold replay
    assert again.killers("unknown", "d1") == []


def test_reuse_needs_everything_unchanged(tmp_path):
    h = History(tmp_path / "history.json")
    h.record("m", "d", "s", "survived", [], {"verdict": "survived"})
    h.record("k", "d", "s", "killed", ["t"], {"verdict": "killed"})
    h.save("project")
    h = History.load(tmp_path / "history.json")
    assert h.reusable("m", "d", "project", "s") == {"verdict": "survived"}
    assert h.reusable("m", "d", "other project", "s") is None
    assert h.reusable("m", "other digest", "project", "s") is None
    assert h.reusable("m", "d", "project", "other selection") is None
    assert h.reusable("k", "d", "project", "s") is None  # killed mutants are replayed, never reused


def test_digests_see_content_and_order_does_not_matter(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 2\n")
    first = project_digest([a, b])
    assert project_digest([b, a]) == first
    b.write_text("y = 3\n")
    assert project_digest([a, b]) != first
    assert selection_digest(["t2", "t1"]) == selection_digest(["t1", "t2"]) != selection_digest(["t1"])
