"""The content-addressed corpus: refusal rules, atomic writes, nothing changed on refusal."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from assay.core.errors import CorpusError
from assay.store.corpus import Corpus, check_all


def _good(folder: Path, data: bytes) -> Path:
    path = folder / (hashlib.sha256(data).hexdigest() + ".input")
    path.write_bytes(data)
    return path


def _snapshot(folder: Path):
    return {p.name: (p.read_bytes() if p.is_file() else "dir") for p in folder.iterdir()}


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "t"
    d.mkdir()
    _good(d, b"fine")
    return d


def _refused(tmp_path, folder, max_len=100):
    before = _snapshot(folder)
    with pytest.raises(CorpusError) as err:
        check_all([Corpus(tmp_path, "t", max_len)])
    assert _snapshot(folder) == before, "a refused corpus is left exactly as it was"
    return str(err.value)


def test_good_corpus_loads_sorted(tmp_path, folder):
    _good(folder, b"another")
    corpus = Corpus(tmp_path, "t", 100)
    assert corpus.check() == []
    entries = corpus.load()
    assert [d for d, _ in entries] == sorted(d for d, _ in entries)
    assert {data for _, data in entries} == {b"fine", b"another"}


def test_mismatched_name_refused(tmp_path, folder):
    (folder / ("0" * 64 + ".input")).write_bytes(b"not zero")
    assert "does not match content" in _refused(tmp_path, folder)


def test_oversized_entry_refused(tmp_path, folder):
    _good(folder, b"x" * 101)
    assert "exceeds the target's max_len=100" in _refused(tmp_path, folder)


def test_temporary_file_refused(tmp_path, folder):
    (folder / ".tmp-abc123").write_bytes(b"half")
    assert "temporary file" in _refused(tmp_path, folder)


def test_unexpected_file_and_folder_refused(tmp_path, folder):
    (folder / "notes.txt").write_text("hi")
    (folder / "sub").mkdir()
    message = _refused(tmp_path, folder)
    assert "notes.txt" in message and "sub" in message


def test_every_offender_listed(tmp_path, folder):
    (folder / "a.txt").write_text("a")
    (folder / ".tmp-x").write_text("b")
    _good(folder, b"y" * 500)
    message = _refused(tmp_path, folder)
    assert "3 corpus entries" in message
    assert message.count("\n  ") == 3


def test_uppercase_digest_refused(tmp_path, folder):
    data = b"upper"
    (folder / (hashlib.sha256(data).hexdigest().upper() + ".input")).write_bytes(data)
    assert "unexpected file name" in _refused(tmp_path, folder)


def test_add_is_atomic_and_idempotent(tmp_path):
    corpus = Corpus(tmp_path, "t", 100)
    d1 = corpus.add(b"abc")
    d2 = corpus.add(b"abc")
    assert d1 == d2 == hashlib.sha256(b"abc").hexdigest()
    assert [p.name for p in (tmp_path / "t").iterdir()] == [d1 + ".input"]


@pytest.mark.parametrize("die_at", ["fsync", "replace"])
def test_writer_killed_mid_write_leaves_no_half_file(tmp_path, die_at):
    """SIGKILL the writer inside the write: no file under the real name, and the next run cleans up."""
    import os
    import signal

    from assay.core import notices
    from assay.store import atomic

    data = b"x" * 4096
    final = tmp_path / "t" / (hashlib.sha256(data).hexdigest() + ".input")
    pid = os.fork()
    if pid == 0:
        try:

            def die(*args, **kwargs):
                os.kill(os.getpid(), signal.SIGKILL)

            setattr(atomic.os, die_at, die)
            Corpus(tmp_path, "t", 8192).add(data)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert not final.exists(), "a killed writer left a file under the real name"
    (left,) = (tmp_path / "t").iterdir()
    assert atomic.writer_pid(left.name) == pid
    check_all([Corpus(tmp_path, "t", 8192)])
    assert not left.exists() and any(str(left) in m for m in notices.messages)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("at", ["file", "folder"])
def test_interrupt_right_after_the_temporary_is_created_leaves_nothing(tmp_path, monkeypatch, signum, at):
    """The signal lands the moment the temporary file (or folder) exists, before its creator returns.

    With ``tempfile.mkstemp``/``mkdtemp`` the ``KeyboardInterrupt`` escaped there, outside
    the ``try`` that removes the temporary, and a ``.tmp-`` entry stayed (the CI failure
    of stop 21).  Interrupted, a write leaves the old state or the whole new one.
    """
    import os
    import signal

    from assay.core import interrupts
    from assay.store import atomic

    monkeypatch.setattr(interrupts, "_state", {"mode": "unknown", "requested": False})
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    interrupts.install()
    name = "open" if at == "file" else "mkdir"
    real = getattr(os, name)
    fired = []

    def create_then_signal(path, *args, **kwargs):
        made = real(path, *args, **kwargs)
        if os.path.basename(path).startswith(atomic.TMP_PREFIX) and not fired:
            fired.append(path)
            signal.raise_signal(getattr(signal, signum))  # delivered to this thread, now
        return made

    monkeypatch.setattr(os, name, create_then_signal)
    try:
        with pytest.raises(KeyboardInterrupt):
            if at == "file":
                Corpus(tmp_path, "t", 100).add(b"entry")
            else:
                atomic.publish_dir(tmp_path / "t" / "finding", {"input": b"entry"})
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    assert fired, "the signal was sent while the temporary existed"
    assert list((tmp_path / "t").iterdir()) == []


def test_campaign_refuses_before_running(planted, campaign, tmp_path):
    target = planted.get("planted_clean")
    folder = tmp_path / "corpus" / target.name
    folder.mkdir(parents=True)
    (folder / "junk").write_text("x")
    with pytest.raises(CorpusError):
        campaign([target], cases=10)
    assert not (tmp_path / "artifacts").exists()
