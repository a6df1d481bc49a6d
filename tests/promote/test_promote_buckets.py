"""The bucket store: a JSON file of signature -> test path, checked against a dict model."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from assay.core.errors import ConfigError
from assay.promote.buckets import BucketStore

signatures = st.text(alphabet="abcdefghijklmnopqrstuvwxyz:@<._-é", min_size=1, max_size=12)
paths = st.text(alphabet="abcdefghijklmnopqrstuvwxyz/_.", min_size=1, max_size=20)


class BucketStoreMachine(RuleBasedStateMachine):
    """Like Hypothesis's own database tests: every operation mirrored on a dict."""

    keys = Bundle("keys")

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="assay-buckets-"))
        self.path = self.dir / "sub" / "buckets.json"
        self.store = BucketStore(self.path)
        self.model: dict[str, str] = {}

    @rule(target=keys, sig=signatures)
    def new_signature(self, sig: str) -> str:
        return sig

    @rule(sig=keys, test=paths)
    def add(self, sig: str, test: str) -> None:
        self.store.add(sig, test)
        self.model[sig] = test

    @rule(sig=keys)
    def remove(self, sig: str) -> None:
        assert self.store.remove(sig) == (sig in self.model)
        self.model.pop(sig, None)

    @rule(sig=keys)
    def lookup(self, sig: str) -> None:
        assert self.store.get(sig) == self.model.get(sig)
        assert (sig in self.store) == (sig in self.model)

    @rule()
    def reopen(self) -> None:
        self.store = BucketStore(self.path)

    @rule()
    def truncate_to_empty(self) -> None:
        if self.path.exists():
            self.path.write_text("")
            self.model.clear()

    @rule()
    def delete_file(self) -> None:
        if self.path.exists():
            self.path.unlink()
        self.model.clear()

    @invariant()
    def matches_model(self) -> None:
        assert self.store.load() == self.model
        assert len(self.store) == len(self.model)
        assert list(self.store) == sorted(self.model)

    @invariant()
    def file_is_sorted_json_and_no_temp_files(self) -> None:
        if self.path.exists() and self.path.read_text():
            text = self.path.read_text("utf-8")
            assert text == json.dumps(self.model, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
            assert list(json.loads(text)) == sorted(self.model)
        if self.path.parent.exists():
            assert [p.name for p in self.path.parent.iterdir() if p.name != "buckets.json"] == []

    def teardown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


TestBucketStore = BucketStoreMachine.TestCase
TestBucketStore.settings = settings(max_examples=40, stateful_step_count=15, deadline=None)


def test_missing_and_empty_files_are_empty_stores(tmp_path):
    missing = BucketStore(tmp_path / "nope" / "buckets.json")
    assert missing.load() == {} and "x" not in missing and len(missing) == 0
    empty = tmp_path / "empty.json"
    empty.write_text("")
    assert BucketStore(empty).load() == {}
    blank = tmp_path / "blank.json"
    blank.write_text("  \n\n")
    assert BucketStore(blank).load() == {}
    assert not (tmp_path / "nope").exists()  # reading never creates anything


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"sig": 3}', '"text"'])
def test_a_broken_file_is_a_config_error(tmp_path, content):
    path = tmp_path / "buckets.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match="buckets.json"):
        BucketStore(path).load()


def test_writes_sorted_keys_for_reviewable_diffs(tmp_path):
    store = BucketStore(tmp_path / "buckets.json")
    for sig in ("panic:z", "invariant:a", "crash:m"):
        store.add(sig, f"tests/fuzz_regressions/{sig.split(':')[0]}.py")
    text = (tmp_path / "buckets.json").read_text()
    assert list(json.loads(text)) == ["crash:m", "invariant:a", "panic:z"]
    assert text.endswith("}\n") and text.count("\n") == 5  # one entry per line
