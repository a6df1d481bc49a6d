"""The command line as a user meets it: exit codes, messages, reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PLANTED


def assay(*args, cwd=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def _project(tmp_path: Path, body: str, toml: str = '[tool.assay]\ntargets = ["fuzz"]\n') -> Path:
    (tmp_path / "pyproject.toml").write_text(toml)
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / f"cli_{tmp_path.name[-8:].replace('-', '_')}.py").write_text(body)
    return tmp_path


def test_findings_exit_1_with_report(tmp_path):
    report = tmp_path / "report.json"
    r = assay(
        "fuzz",
        "--project",
        str(PLANTED),
        "--fuzz-target",
        "planted_two_bugs",
        "--fuzz-cases",
        "3000",
        "--fuzz-seed",
        "4",
        "--fuzz-corpus",
        str(tmp_path / "c"),
        "--fuzz-artifacts",
        str(tmp_path / "a"),
        "--report",
        str(report),
    )
    assert r.returncode == 1, r.stderr
    assert "finding" in r.stdout
    data = json.loads(report.read_text())
    t = data["targets"]["planted_two_bugs"]
    assert data["master_seed"] == 4 and data["status"] == "findings"
    assert t["findings"] and t["schedule_digest"] and t["schedule_count"] == 3000 + 1
    assert isinstance(t["seed"], int) and "initial_corpus" in t and "corpus_additions" in t


def test_clean_run_exit_0(tmp_path):
    r = assay(
        "fuzz",
        "--project",
        str(PLANTED),
        "--fuzz-target",
        "planted_clean",
        "--fuzz-cases",
        "500",
        "--fuzz-corpus",
        str(tmp_path / "c"),
        "--fuzz-artifacts",
        str(tmp_path / "a"),
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "no findings" in r.stdout


def test_unknown_target_exit_2():
    r = assay("fuzz", "--project", str(PLANTED), "--fuzz-target", "no_such_target", "--fuzz-cases", "1")
    assert r.returncode == 2
    assert "no target named 'no_such_target'" in r.stderr


def test_bad_flag_exit_2():
    r = assay("fuzz", "--fuzz-cases", "many")
    assert r.returncode == 2 and "not a whole number" in r.stderr


def test_import_failure_names_the_file(tmp_path):
    project = _project(tmp_path, "import assay\nimport no_such_module_here\n")
    r = assay("targets", "--project", str(project))
    assert r.returncode == 2
    assert "failed to import" in r.stderr and "no_such_module_here" in r.stderr and "fuzz/" in r.stderr


def test_files_without_targets_exit_2(tmp_path):
    project = _project(tmp_path, "x = 1\n")
    r = assay("fuzz", "--project", str(project), "--fuzz-cases", "1")
    assert r.returncode == 2 and "no fuzz target found" in r.stderr


def test_broken_config_exit_2(tmp_path):
    project = _project(tmp_path, "x = 1\n", toml="[tool.assay\ntargets = 3\n")
    r = assay("targets", "--project", str(project))
    assert r.returncode == 2 and "not valid TOML" in r.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.assay]\ntargetz = ['fuzz']\n")
    r = assay("targets", "--project", str(project))
    assert r.returncode == 2 and "unknown key(s) targetz" in r.stderr


def test_malformed_corpus_exit_2_names_offender(tmp_path):
    bad = tmp_path / "c" / "planted_clean"
    bad.mkdir(parents=True)
    (bad / "oops.bin").write_bytes(b"x")
    r = assay(
        "fuzz",
        "--project",
        str(PLANTED),
        "--fuzz-target",
        "planted_clean",
        "--fuzz-cases",
        "5",
        "--fuzz-corpus",
        str(tmp_path / "c"),
        "--fuzz-artifacts",
        str(tmp_path / "a"),
    )
    assert r.returncode == 2 and "oops.bin" in r.stderr
    assert not (tmp_path / "a").exists()


def test_targets_lists_settings():
    r = assay("targets", "--project", str(PLANTED), "--json")
    assert r.returncode == 0, r.stderr
    names = {t["name"]: t for t in json.loads(r.stdout)}
    assert "planted_hang" in names and names["planted_hang"]["timeout"] == 0.5


def test_shard_selecting_nothing_and_native_backend_exit_2(tmp_path):
    r = assay(
        "fuzz", "--project", str(PLANTED), "--fuzz-target", "planted_clean", "--shard", "2/2", "--fuzz-cases", "1"
    )
    assert r.returncode == 2 and "holds no target" in r.stderr
    r = assay("fuzz", "--project", str(PLANTED), "--fuzz-backend", "native", "--fuzz-cases", "1")
    assert r.returncode == 2 and "native" in r.stderr


def test_replay_prints_verdict(tmp_path):
    inp = tmp_path / "in.bin"
    inp.write_bytes(b"A")
    r = assay("replay", "--project", str(PLANTED), "planted_two_bugs", str(inp))
    assert r.returncode == 1
    assert "panic:builtins.IndexError" in r.stdout and "Traceback" in r.stdout
    inp.write_bytes(b"hello")
    r = assay("replay", "--project", str(PLANTED), "planted_two_bugs", str(inp))
    assert r.returncode == 0 and "pass" in r.stdout


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_interrupted_run_loses_nothing(tmp_path, signum):
    import signal
    import time

    from assay.store.artifacts import iter_artifacts
    from assay.store.corpus import Corpus

    report = tmp_path / "r.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(PLANTED),
            "--fuzz-target",
            "planted_feature_only",
            "--fuzz-budget",
            "120",
            "--fuzz-corpus",
            str(tmp_path / "c"),
            "--fuzz-artifacts",
            str(tmp_path / "a"),
            "--report",
            str(report),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    folder = tmp_path / "c" / "planted_feature_only"
    while time.monotonic() < deadline and len(list(folder.glob("*.input"))) < 3:
        time.sleep(0.1)
    proc.send_signal(getattr(signal, signum))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert Corpus(tmp_path / "c", "planted_feature_only", 64).check() == [], "no half-written corpus entry"
    list(iter_artifacts(tmp_path / "a"))  # every artifact loads (raises on a broken one)
    data = json.loads(report.read_text())
    assert data["status"] == "interrupted"
    assert data["targets"]["planted_feature_only"]["corpus_additions"]


def test_an_interrupt_while_the_parser_imports_the_commands_is_exit_130(monkeypatch, capsys):
    """Ctrl-C at start-up (build_parser imports every command's module) ends like any interrupt: no traceback."""
    import signal

    from assay.cli import main as cli
    from assay.core import interrupts

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setenv("PYTHONHASHSEED", "0")  # no re-exec
    monkeypatch.setattr(cli, "build_parser", interrupted)
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert cli.main(["fuzz", "--fuzz-cases", "1"]) == 130
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        interrupts._state.update(mode="unknown", requested=False)
    assert capsys.readouterr().err == "assay: interrupted\n"


def test_a_reader_that_stops_early_ends_the_command_quietly():
    """`assay targets | head -1`: a closed pipe is the reader's choice, not an internal error."""
    examples = Path(__file__).resolve().parents[1] / "examples"
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "targets", "--project", str(examples)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the only reader is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "internal error" not in err and "Traceback" not in err and "BrokenPipe" not in err, err
