"""Items 3, 4 and 7 of issue 14: stale temp files, exit codes and validation, permissions."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from reliab_helpers import HOSTILE, run_assay


def _fuzz(tmp_path, *extra):
    return run_assay(
        "fuzz",
        "--project",
        str(HOSTILE),
        "--fuzz-target",
        "hostile_grow",
        "--fuzz-cases",
        "20",
        "--fuzz-seed",
        "1",
        "--fuzz-corpus",
        str(tmp_path / "c"),
        "--fuzz-artifacts",
        str(tmp_path / "a"),
        *extra,
    )


# -- item 3: temp files ------------------------------------------------------------------------------
def test_temp_names_carry_the_writer_pid(tmp_path, monkeypatch):
    from assay.store import atomic

    seen = []
    real = os.open

    def spy(path, *args, **kw):
        seen.append(os.path.basename(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(atomic.os, "open", spy)
    atomic.write_bytes(tmp_path / "x", b"1")
    assert seen and atomic.writer_pid(seen[0]) == os.getpid()


def test_stale_temp_file_is_removed_and_reported(tmp_path, dead_pid):
    folder = tmp_path / "c" / "hostile_grow"
    folder.mkdir(parents=True)
    stale = folder / f".tmp-{dead_pid}-abc123"
    stale.write_bytes(b"half")
    r = _fuzz(tmp_path)
    assert r.returncode == 0, r.stderr
    assert not stale.exists()
    assert f"removed {stale}" in r.stderr


def test_temp_file_of_a_live_writer_is_left_alone(tmp_path):
    from assay.store.corpus import Corpus, check_all

    folder = tmp_path / "t"
    folder.mkdir()
    live = folder / f".tmp-{os.getpid()}-abc"
    live.write_bytes(b"being written")
    check_all([Corpus(tmp_path, "t", 64)])  # no refusal: someone is writing it right now
    assert live.exists()


@pytest.mark.parametrize("name", [".tmp-abc", "junk.txt"])
def test_other_unexpected_files_still_refused(tmp_path, name):
    folder = tmp_path / "c" / "hostile_grow"
    folder.mkdir(parents=True)
    (folder / name).write_bytes(b"?")
    r = _fuzz(tmp_path)
    assert r.returncode == 2 and name in r.stderr
    assert (folder / name).exists()


# -- item 4: exit codes and validation ---------------------------------------------------------------
@pytest.fixture
def cli_main(monkeypatch):
    """``assay.cli.main.main`` in this process, with the signal handlers and notice sink it installs undone."""
    from assay.cli import main as cli
    from assay.core import notices

    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield cli
    for s, h in old.items():
        signal.signal(s, h)
    notices.set_sink(None)


def test_internal_error_exits_3_with_one_line_and_a_traceback_file(cli_main, monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("boom in assay's own code")

    from assay.cli import targets as cli_targets

    monkeypatch.setattr(cli_targets, "cmd_targets", broken)
    assert cli_main.main(["targets", "--project", str(HOSTILE)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("assay: internal error: RuntimeError: boom")
    path = err[0].rsplit("full traceback in ", 1)[1].rstrip(")")
    text = Path(path).read_text()
    os.unlink(path)
    assert "Traceback" in text and "broken" in text


def test_worker_error_is_internal_not_a_finding(tmp_path, monkeypatch):
    """assay's own failure in a worker is exit 3, never a crash:exit:70 finding."""
    from assay.core.errors import InternalError
    from assay.engine import worker as worker_mod
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.harness.define import make_target

    def explode(self):
        raise RuntimeError("assay bug")

    monkeypatch.setattr(worker_mod.Worker, "run", explode)
    options = CampaignOptions(corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=5, seed=1)
    with pytest.raises(InternalError, match="assay bug"):
        run_campaign([make_target(lambda d: None, name="fine")], options)
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize(
    "flags,needle",
    [
        (["--fuzz-seed", str(2**160)], "64 bits"),
        (["--fuzz-budget", "nan"], "finite"),
        (["--fuzz-budget", "inf"], "finite"),
    ],
)
def test_bad_flags_exit_2_before_work(tmp_path, flags, needle):
    r = run_assay("fuzz", "--project", str(HOSTILE), "--fuzz-corpus", str(tmp_path / "c"), *flags)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "c").exists()


def test_report_pointing_at_a_folder_fails_before_the_run(tmp_path):
    (tmp_path / "r").mkdir()
    r = _fuzz(tmp_path, "--report", str(tmp_path / "r"))
    assert r.returncode == 2 and "is a folder" in r.stderr
    assert not (tmp_path / "c").exists(), "the run started although its report could not be written"


def test_top_level_tool_not_a_table_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text("tool = 5\n")
    r = run_assay("targets", "--project", str(tmp_path))
    assert r.returncode == 2 and "'tool' must be a table" in r.stderr


@pytest.mark.parametrize(
    "setting,value",
    [
        ("rss_limit_mb", "'lots'"),
        ("timeout", "'2'"),
        ("timeout", "float('nan')"),
        ("replays", "'5'"),
        ("max_len", "True"),
    ],
)
def test_bad_target_settings_name_the_setting(tmp_path, setting, value):
    (tmp_path / "pyproject.toml").write_text('[tool.assay]\ntargets = ["t.py"]\n')
    (tmp_path / "t.py").write_text(f"import assay\n@assay.target({setting}={value})\ndef t(data):\n    pass\n")
    r = run_assay("fuzz", "--project", str(tmp_path), "--fuzz-cases", "1", "--fuzz-corpus", str(tmp_path / "c"))
    assert r.returncode == 2 and setting in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize(
    "metadata", ["7", '{"target": "t", "signature": "s", "verdict": "panic", "input_sha256": "x"}']
)
def test_malformed_metadata_is_an_artifact_error(tmp_path, metadata):
    from assay.core.errors import ArtifactError
    from assay.store.artifacts import load_artifact

    (tmp_path / "input").write_bytes(b"")
    (tmp_path / "metadata.json").write_text(metadata)
    with pytest.raises(ArtifactError):
        load_artifact(tmp_path)


def test_corpus_check_reads_size_before_bytes(tmp_path, monkeypatch):
    from assay.store import corpus as corpus_mod
    from assay.store.corpus import Corpus

    folder = tmp_path / "t"
    folder.mkdir()
    big = b"z" * 5000
    (folder / (corpus_mod.digest(big) + ".input")).write_bytes(big)
    reads = []
    real_open = open

    def spy_open(path, mode="r", *a, **kw):
        fh = real_open(path, mode, *a, **kw)
        if "b" in mode:
            reads.append(path)
        return fh

    monkeypatch.setattr("builtins.open", spy_open)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read a whole corpus file"))
    (offence,) = Corpus(tmp_path, "t", 100).check()
    assert "exceeds" in offence.problem and reads == []


def test_unreadable_corpus_entry_is_an_offence(tmp_path):
    from assay.store.corpus import Corpus, digest

    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    folder = tmp_path / "t"
    folder.mkdir()
    path = folder / (digest(b"a") + ".input")
    path.write_bytes(b"a")
    path.chmod(0)
    (offence,) = Corpus(tmp_path, "t", 100).check()
    assert "cannot be read" in offence.problem


def test_failed_writes_keep_going_and_are_reported(tmp_path, monkeypatch):
    """A full disk (every corpus write fails with ENOSPC): the run finishes and says what it lost."""
    import errno

    from reliab_helpers import hostile_registry

    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.store import corpus as corpus_mod

    def full(path, data, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(corpus_mod, "write_bytes", full)
    options = CampaignOptions(corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=50, seed=1)
    result = run_campaign([hostile_registry().get("hostile_grow")], options)
    (outcome,) = result.targets
    assert outcome.cases == 50 and outcome.corpus_additions == []
    assert outcome.write_errors and "No space left" in outcome.write_errors[0]


def test_full_tmpfs_run_still_reports(tmp_path):
    """On a real 64 KiB tmpfs, where this machine lets us mount one."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        report = mnt / "r.json"  # on the full disk too: it goes to stdout instead
        r = run_assay(
            "fuzz",
            "--project",
            str(HOSTILE),
            "--fuzz-target",
            "hostile_grow",
            "--fuzz-cases",
            "500",
            "--fuzz-seed",
            "1",
            "--fuzz-corpus",
            str(mnt / "c"),
            "--fuzz-artifacts",
            str(mnt / "a"),
            "--report",
            str(report),
        )
        assert r.returncode == 0, r.stderr
        assert "could not write" in r.stdout  # the summary lists what was not saved
        if report.exists():
            data = json.loads(report.read_text())
        else:
            assert "could not write the report" in r.stderr
            data = json.loads(r.stdout[r.stdout.index("\n{") + 1 :])
        assert data["targets"]["hostile_grow"]["write_errors"]
        from assay.store.corpus import Corpus

        assert Corpus(mnt / "c", "hostile_grow", 64).check() == []
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


# -- item 7: permissions -----------------------------------------------------------------------------
@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_written_files_follow_the_umask(tmp_path, mask):
    from assay.core.verdict import Verdict
    from assay.store.artifacts import Finding, build_metadata, write_artifact
    from assay.store.atomic import write_bytes

    old = os.umask(mask)
    try:
        write_bytes(tmp_path / "plain", b"x")
        finding = Finding("t", Verdict("panic", "k"), b"in", b"in", {}, diagnostic="captured output")
        path, _ = write_artifact(
            tmp_path / "a", finding, build_metadata(finding, campaign_seed=1, target_seed=1, sources=[])
        )
    finally:
        os.umask(old)
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(tmp_path / "plain") == 0o666 & ~mask
    assert mode(path) == 0o777 & ~mask
    assert mode(path / "input") == mode(path / "metadata.json") == 0o666 & ~mask
    assert mode(path / "diagnostic.log") == 0o600  # captured target output may hold secrets
