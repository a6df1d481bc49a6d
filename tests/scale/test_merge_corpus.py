"""``assay merge-corpus``: validation first, union, feature-preserving minimization, set-aside inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.engine.features import record
from assay.scale.merge import cover, merge_corpora
from assay.store.corpus import Corpus, digest
from conftest import PLANTED


def assay(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=timeout)


def _put(root: Path, target: str, *inputs: bytes) -> None:
    for data in inputs:
        Corpus(root, target, 64).add(data)


def _entries(root: Path, target: str) -> dict[str, bytes]:
    return dict(Corpus(root, target, 1 << 20).load())


def _features(planted, target: str, inputs) -> frozenset:
    t = planted.get(target)
    replays = record(t, t.source_paths(str(PLANTED)), list(inputs))
    assert not any(r.failed for r in replays)
    return frozenset().union(*(r.features for r in replays))


def test_cover_is_deterministic_smallest_first_and_drops_redundant():
    features = {
        "b" * 64: frozenset({1, 2}),
        "a" * 64: frozenset({1, 2}),
        "c" * 64: frozenset({3}),
        "d" * 64: frozenset({1, 2, 3}),
    }
    sizes = {"a" * 64: 2, "b" * 64: 2, "c" * 64: 1, "d" * 64: 5}
    kept = cover(features, sizes)
    assert kept == ["c" * 64, "a" * 64]  # ties by digest; d adds nothing once a and c are kept
    assert cover(dict(reversed(list(features.items()))), sizes) == kept
    # A larger input that makes two small ones redundant wins only by being needed.
    features2 = {"1" * 64: frozenset({1}), "2" * 64: frozenset({2}), "3" * 64: frozenset({1, 2, 4})}
    assert cover(features2, {"1" * 64: 1, "2" * 64: 1, "3" * 64: 9}) == ["3" * 64]


def test_invalid_roots_are_refused_listing_every_offender_nothing_written(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    _put(a, "planted_nested_compares", b"hello")
    (a / "planted_nested_compares" / ("0" * 64 + ".input")).write_bytes(b"wrong")
    _put(b, "planted_feature_only", b"(a)")
    (b / "planted_feature_only" / ".tmp-x").write_bytes(b"")
    (b / "no_such_target").mkdir()
    (b / "no_such_target" / "x.input").write_bytes(b"")
    r = assay("merge-corpus", "--project", str(PLANTED), str(out), str(a), str(b), str(tmp_path / "missing"))
    assert r.returncode == 2, r.stderr
    for needle in ("0" * 64 + ".input", ".tmp-x", "no_such_target", "missing", "name does not match content"):
        assert needle in r.stderr
    assert "4 entries" in r.stderr and "nothing was written" in r.stderr
    assert not out.exists() and not (tmp_path / "out.aside").exists()


def test_merge_of_two_shard_corpora_preserves_every_feature(tmp_path, campaign, planted):
    roots = []
    for seed in (1, 2):
        root = tmp_path / f"shard{seed}"
        campaign(
            [planted.get("planted_nested_compares"), planted.get("planted_feature_only")],
            cases=600,
            seed=seed,
            corpus=root,
            artifacts=tmp_path / "art",
        )
        roots.append(root)
    out = tmp_path / "merged"
    report = tmp_path / "merge.json"
    r = assay("merge-corpus", "--project", str(PLANTED), "--report", str(report), str(out), *map(str, roots))
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(report.read_text())
    for name in ("planted_nested_compares", "planted_feature_only"):
        t = data["targets"][name]
        union = {}
        for root in roots:
            union.update(_entries(root, name))
        merged = _entries(out, name)
        assert t["entries_in"] == len(union) and t["entries_out"] == len(merged) <= len(union)
        assert sorted(merged) == sorted(t["kept"]) and set(merged) <= set(union)
        assert t["features"] == t["features_preserved"] > 0 and not t["aside"]
        # Independently replayed: the merged corpus reaches exactly what the union reaches.
        assert _features(planted, name, merged.values()) == _features(planted, name, union.values())
    assert len(_entries(out, "planted_feature_only")) < sum(len(_entries(r, "planted_feature_only")) for r in roots)
    # Deterministic: the same union in another order gives the same corpus; OUT may be an input.
    out2 = tmp_path / "merged2"
    result = merge_corpora(
        out2, list(reversed(roots)), [planted.get("planted_nested_compares"), planted.get("planted_feature_only")]
    )
    assert {t.name: t.kept for t in result.targets} == {n: t["kept"] for n, t in data["targets"].items()}
    again = merge_corpora(
        out, [out, roots[0]], [planted.get("planted_nested_compares"), planted.get("planted_feature_only")]
    )
    for t in again.targets:
        assert t.features == t.preserved and sorted(_entries(out, t.name)) == sorted(t.kept)
    assert not [p for p in out.rglob("*") if p.name.startswith(".tmp-")]


def test_crashing_and_hanging_inputs_are_set_aside_and_reported(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _put(a, "planted_segfault", b"hello", b"Xboom")
    _put(b, "planted_hang_swallow", b"hello", b"Sstuck", b"hello!")
    out, report = tmp_path / "out", tmp_path / "r.json"
    r = assay("merge-corpus", "--project", str(PLANTED), "--report", str(report), str(out), str(a), str(b))
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(report.read_text())
    seg, hang = data["targets"]["planted_segfault"], data["targets"]["planted_hang_swallow"]
    assert [x["oracle"] for x in seg["aside"]] == ["crash"] and "SIGSEGV" in seg["aside"][0]["signature"]
    assert [x["oracle"] for x in hang["aside"]] == ["wedge"]
    assert seg["aside"][0]["digest"] == digest(b"Xboom") and hang["aside"][0]["digest"] == digest(b"Sstuck")
    assert Path(seg["aside"][0]["path"]).read_bytes() == b"Xboom"
    assert Path(hang["aside"][0]["path"]).read_bytes() == b"Sstuck"
    assert b"Xboom" not in _entries(out, "planted_segfault").values()
    assert b"Sstuck" not in _entries(out, "planted_hang_swallow").values()
    assert hang["entries_in"] == 3 and hang["entries_out"] >= 1 and seg["entries_out"] == 1
    assert "set aside" in r.stdout and "SIGSEGV" in r.stdout
    assert "merge: planted_segfault: 2 in, 1 out, 1 set aside" in r.stderr  # progress, one line per target
    assert (tmp_path / "out.aside" / "planted_segfault").is_dir()


def test_native_target_without_libfuzzer_merge_keeps_its_union_with_a_note(tmp_path, monkeypatch, planted):
    import types

    import assay.scale.merge as merge

    fake = types.SimpleNamespace(name="native_thing", max_len=16)
    monkeypatch.setattr(merge, "native_targets", lambda project: {"native_thing": fake})
    monkeypatch.setattr(merge, "native_selection", lambda project, target, entries: None)
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    Corpus(a, "native_thing", 16).add(b"one")
    Corpus(b, "native_thing", 16).add(b"two")
    _put(b, "planted_feature_only", b"(a)")
    project = types.SimpleNamespace(root=PLANTED)
    result = merge.merge_corpora(out, [a, b], [planted.get("planted_feature_only")], project=project)
    native = {t.name: t for t in result.targets}["native_thing"]
    assert native.entries_in == native.entries_out == 2 and "union is kept whole" in native.note
    assert sorted(_entries(out, "native_thing").values()) == [b"one", b"two"]
    assert "note: native target" in merge.summary(result)
    Corpus(a, "native_thing", 16).add(b"x" * 17)  # over the native target's max_len: refused like any other
    with pytest.raises(Exception, match="exceeds the target's max_len=16"):
        merge.merge_corpora(out, [a, b], [planted.get("planted_feature_only")], project=project)
