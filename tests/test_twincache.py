"""The cache of compiled comparison twins: hits give the compiled twins, and nothing else changes."""

from __future__ import annotations

import importlib
import json
import os
import sys
import textwrap

import pytest

from assay.feedback import cmplog, twincache
from assay.feedback.cmplog import CmpLog
from assay.feedback.scope import Scope
from assay.feedback.twincache import TwinCache

JSON_FILES = sorted(
    os.path.join(os.path.dirname(json.__file__), f) for f in ("__init__.py", "decoder.py", "scanner.py")
)
#: A document whose parse compares a key, a number and a keyword constant.
DOC = '{"mode": "purgx", "n": 7, "ok": trux}'


def _attached(cache: TwinCache, files=JSON_FILES) -> CmpLog:
    log = CmpLog(Scope(files).contains)
    log.twin_cache = cache
    log.attach()
    return log


def _same_twins(a: CmpLog, b: CmpLog) -> None:
    assert [fn for fn, _o, _t in a.swaps] == [fn for fn, _o, _t in b.swaps]
    for (_f, _o, ta), (_g, _p, tb) in zip(a.swaps, b.swaps):
        assert ta == tb and list(ta.co_positions()) == list(tb.co_positions())


def _recorded(log: CmpLog):
    def parse():
        try:
            json.loads(DOC)
        except ValueError:
            pass

    records, guards = log.record(parse)
    return records, guards, list(log.last_values)


def test_a_hit_gives_the_twins_compiling_gives_and_they_record_the_same(tmp_path):
    cold = _attached(TwinCache(tmp_path))
    assert cold.twin_cache.misses == 3 and cold.twin_cache.hits == 0
    assert len(list(tmp_path.glob("*.twin"))) == 3
    warm = _attached(TwinCache(tmp_path))
    assert warm.twin_cache.hits == 3 and warm.twin_cache.misses == 0
    uncached = _attached(TwinCache(None))
    _same_twins(cold, warm)
    _same_twins(uncached, warm)
    got = _recorded(warm)
    assert got == _recorded(uncached)
    assert got[0], "the parse recorded comparisons"


def test_a_hit_compiles_nothing(tmp_path, monkeypatch):
    _attached(TwinCache(tmp_path))

    def refuse(*args, **kwargs):
        raise AssertionError("compiled on a hit")

    monkeypatch.setattr(cmplog, "compile", refuse, raising=False)  # shadows the builtin in cmplog only
    warm = _attached(TwinCache(tmp_path))
    assert warm.swaps and warm.twin_cache.hits == 3
    with pytest.raises(AssertionError, match="compiled on a hit"):  # non-vacuity: without the cache it compiles
        _attached(TwinCache(None))


def test_site_numbers_continue_across_cached_and_compiled_files(tmp_path):
    """The rewriter numbers sites across files: a hit must move the numbering on as compiling would."""
    _attached(TwinCache(tmp_path), JSON_FILES[:1])  # only the first file cached
    mixed = _attached(TwinCache(tmp_path))
    assert mixed.twin_cache.hits == 1 and mixed.twin_cache.misses == 2
    _same_twins(mixed, _attached(TwinCache(None)))


def _subject(path, literal: int):
    path.write_text(
        textwrap.dedent(f"""
        def gate(x):
            if x == {literal}:
                return "open"
            return "shut"
    """)
    )


def test_an_edited_source_is_compiled_again(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    module_path = src / "twin_cache_subject.py"
    _subject(module_path, 41)
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    module = importlib.import_module("twin_cache_subject")
    try:
        cache_dir = tmp_path / "cache"
        log = _attached(TwinCache(cache_dir), [str(module_path)])
        assert (3, 41) in log.record(lambda: module.gate(3))[0]
        _subject(module_path, 4242)
        importlib.reload(module)
        log = _attached(TwinCache(cache_dir), [str(module_path)])
        assert log.twin_cache.misses == 1 and log.twin_cache.hits == 0
        records = log.record(lambda: module.gate(3))[0]
        assert (3, 4242) in records and (3, 41) not in records
        assert len(list(cache_dir.glob("*.twin"))) == 2
    finally:
        sys.modules.pop("twin_cache_subject", None)


def test_a_garbled_entry_is_a_miss_and_is_replaced(tmp_path):
    _attached(TwinCache(tmp_path))
    entries = sorted(tmp_path.glob("*.twin"))
    entries[0].write_bytes(b"not marshal data")
    entries[1].write_bytes(b"")
    import marshal

    entries[2].write_bytes(marshal.dumps(("a tuple", "of the wrong", "things")))
    log = _attached(TwinCache(tmp_path))
    assert log.twin_cache.misses == 3 and log.twin_cache.hits == 0
    _same_twins(log, _attached(TwinCache(None)))
    assert _attached(TwinCache(tmp_path)).twin_cache.hits == 3, "the garbled entries were written again"


def test_a_folder_that_cannot_be_written_leaves_every_lookup_a_miss(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    cache = TwinCache(blocker / "twins")  # under a regular file: nothing can be created
    log = _attached(cache)
    assert log.swaps and cache.misses == 3
    again = _attached(TwinCache(blocker / "twins"))
    assert again.twin_cache.misses == 3 and again.twin_cache.hits == 0
    _same_twins(log, again)


def test_the_environment_moves_or_turns_off_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "here"))
    assert twincache.default_root() == tmp_path / "here" / "twins"
    monkeypatch.setenv("ASSAY_CACHE_DIR", "")
    assert twincache.default_root() is None
    log = CmpLog(Scope(JSON_FILES).contains)
    log.attach()
    assert log.swaps and log.twin_cache.root is None and log.twin_cache.hits == 0
    monkeypatch.delenv("ASSAY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert twincache.default_root() == tmp_path / "xdg" / "assay" / "twins"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert twincache.default_root() == tmp_path / "home" / ".cache" / "assay" / "twins"


def test_pruning_keeps_the_most_recently_used_entries(tmp_path, monkeypatch, dead_pid):
    monkeypatch.setattr(twincache, "MAX_ENTRIES", 3)
    cache = TwinCache(tmp_path)
    code = compile("x = 1", "<t>", "exec")
    for k in range(5):
        cache.store(f"entry{k}", code, 0, 0)
        os.utime(tmp_path / f"entry{k}.twin", (1_000_000 + k, 1_000_000 + k))
    assert cache.load("entry0") is not None  # a hit makes entry0 the most recently used
    stale = tmp_path / f".tmp-{dead_pid}-abc"
    stale.write_bytes(b"half an entry")
    cache.prune()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry0.twin", "entry3.twin", "entry4.twin"]


def test_a_campaign_runs_the_same_schedule_from_a_cold_and_a_warm_cache(tmp_path, monkeypatch, planted):
    from assay.engine.campaign import CampaignOptions, run_campaign

    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    target = planted.get("planted_nested_compares")

    def run(k):
        return run_campaign(
            [target],
            CampaignOptions(
                corpus_root=str(tmp_path / f"c{k}"), artifact_root=str(tmp_path / f"a{k}"), max_cases=400, seed=3
            ),
        )

    cold = run(0)
    entries = sorted(p.name for p in (tmp_path / "cache" / "twins").glob("*.twin"))
    assert entries, "the campaign kept its twins"
    warm = run(1)
    assert [t.schedule_digest for t in warm.targets] == [t.schedule_digest for t in cold.targets]
    assert [t.corpus_additions for t in warm.targets] == [t.corpus_additions for t in cold.targets]
    assert [[f.signature for f in t.findings] for t in warm.targets] == [
        [f.signature for f in t.findings] for t in cold.targets
    ]
    assert sorted(p.name for p in (tmp_path / "cache" / "twins").glob("*.twin")) == entries
