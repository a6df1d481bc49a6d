"""Issue 38, data loss: a finding that cannot be saved, output folders checked before work, seen.json.

Each test injects the failure (a write that fails with ENOSPC, a folder that is a
file, two processes racing) and checks that nothing the user needs is lost.
"""

from __future__ import annotations

import base64
import errno
import json
import re
import signal
import subprocess
from pathlib import Path

import jsonschema
import pytest
from reliab_helpers import run_assay

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli_main():
    """``assay.cli.main.main`` in this process, with the signal handlers and notice sink it installs undone."""
    from assay.cli import main as cli
    from assay.core import notices

    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield cli
    for s, h in old.items():
        signal.signal(s, h)
    notices.set_sink(None)


def _project(root: Path) -> Path:
    """A project whose target raises KeyError in a helper module on inputs starting with b'b'."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[tool.assay]\ntargets = ["t.py"]\n')
    (root / "lib.py").write_text("def parse(data):\n    if data[:1] == b'b':\n        raise KeyError(data[:4])\n")
    (root / "t.py").write_text(
        "import assay\nimport lib\n\n"
        "@assay.target(max_len=64, seeds=[b'boom'], sources=['lib.py'])\n"
        "def explode(data: bytes) -> None:\n    lib.parse(data)\n"
    )
    return root


def _validate(report: dict) -> None:
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)


def _check_lost_finding_kept(report: dict, stdout: str, stderr: str) -> None:
    _validate(report)
    (bug,) = report["bugs"]
    (finding,) = report["targets"]["explode"]["findings"]
    data = base64.b64decode(finding["input_base64"])
    assert data.startswith(b"b") and finding["saved"] is False and finding["save_error"]
    assert bug["saved"] is False and base64.b64decode(bug["input_base64"]) == data
    assert bug["input_size"] == len(data) and "KeyError" in bug["traceback"] and bug["exception"]
    assert finding["bug"] == bug["id"]
    summary_ids = re.findall(r"^    bug (\S+) ", stdout, re.M)
    assert summary_ids == [bug["id"]], (summary_ids, bug["id"])
    assert re.search(r"^      input: ", stdout, re.M), stdout
    assert "could not save the finding" in stderr and finding["input_base64"] in stderr


# -- item 1: a finding that cannot be written ------------------------------------------------------
def test_a_finding_whose_artifact_cannot_be_written_is_reported_with_its_input(tmp_path, cli_main, monkeypatch, capsys):
    from assay.store import artifacts

    def full(final, files, private=frozenset()):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(artifacts, "publish_dir", full)
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # else main() re-executes itself, out of the monkeypatch's reach
    project = _project(tmp_path / "p")
    report = tmp_path / "r.json"
    code = cli_main.main(
        ["fuzz", "--project", str(project), "--fuzz-cases", "20", "--fuzz-seed", "1",
         "--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(tmp_path / "a"), "--report", str(report)]
    )  # fmt: skip
    out = capsys.readouterr()
    assert code == 1, out.err
    _check_lost_finding_kept(json.loads(report.read_text()), out.out, out.err)
    assert "WARNING: 1 finding(s) could not be saved" in out.err


def test_a_finding_on_a_full_tmpfs_is_reported_with_its_input(tmp_path):
    """The same on a real full tmpfs as --fuzz-artifacts, where this machine lets us mount one."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        (mnt / "fill").write_bytes(b"\0" * 256 * 1024)  # the disk is full before the run starts
    except OSError:
        pass
    try:
        project = _project(tmp_path / "p")
        report = tmp_path / "r.json"
        r = run_assay(
            "fuzz", "--project", str(project), "--fuzz-cases", "20", "--fuzz-seed", "1",
            "--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(mnt / "a"), "--report", str(report),
            timeout=120,
        )  # fmt: skip
        assert r.returncode == 1, r.stderr
        _check_lost_finding_kept(json.loads(report.read_text()), r.stdout, r.stderr)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


# -- item 2: output folders checked before any work -------------------------------------------------
def _fuzz(project: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_assay("fuzz", "--project", str(project), "--fuzz-cases", "5", "--fuzz-seed", "1", *extra, timeout=120)


@pytest.mark.parametrize(
    "flag,where,needle",
    [
        ("--fuzz-corpus", "file", "is a file, not a folder"),
        ("--fuzz-artifacts", "file", "is a file, not a folder"),
        ("--fuzz-corpus", "file/below", "is a file, not a folder"),
        ("--fuzz-artifacts", "file/below", "is a file, not a folder"),
    ],
)
def test_a_corpus_or_artifact_root_that_is_a_file_stops_the_run_before_any_work(tmp_path, flag, where, needle):
    project = _project(tmp_path / "p")
    (tmp_path / "file").write_bytes(b"not a folder")
    other = "--fuzz-artifacts" if flag == "--fuzz-corpus" else "--fuzz-corpus"
    r = _fuzz(project, flag, str(tmp_path / where), other, str(tmp_path / "other"))
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and needle in r.stderr and flag in r.stderr, r.stderr
    assert not (tmp_path / "other").exists() and r.stdout == "", "work started before the check"


def test_a_project_that_names_a_file_is_a_usage_error(tmp_path):
    project = _project(tmp_path / "p")
    r = _fuzz(project / "pyproject.toml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is a file, not a folder" in r.stderr, r.stderr


@pytest.mark.parametrize("key", ["corpus", "artifacts", "regressions", "staging", "quarantine"])
@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
def test_a_path_setting_outside_the_project_is_refused(tmp_path, key, how):
    project = _project(tmp_path / "p")
    outside = tmp_path / "outside"
    outside.mkdir()
    value = {"absolute": str(outside / "x"), "dotdot": "../outside/x", "symlink": "link/x"}[how]
    if how == "symlink":
        (project / "link").symlink_to(outside)
    (project / "pyproject.toml").write_text(f'[tool.assay]\ntargets = ["t.py"]\n{key} = {json.dumps(value)}\n')
    for r in (_fuzz(project, "--fuzz-corpus", str(tmp_path / "c")) if key != "corpus" else _fuzz(project),
              run_assay("targets", "--project", str(project), timeout=60)):  # fmt: skip
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert r.stderr.count("\n") == 1 and f"[tool.assay] {key}" in r.stderr and "outside the project" in r.stderr
    assert list(outside.iterdir()) == [], "assay wrote outside the project"


def test_a_corpus_outside_the_project_is_used_when_given_on_the_command_line(tmp_path):
    project = _project(tmp_path / "p")
    (project / "pyproject.toml").write_text('[tool.assay]\ntargets = ["t.py"]\ncorpus = "/etc"\n')
    r = _fuzz(project, "--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(tmp_path / "a"))
    assert r.returncode == 1, r.stderr  # the flag replaces the setting: the run goes on and finds the bug
    assert (tmp_path / "c" / "explode").is_dir()


# -- item 3: seen.json under concurrent runs, failed writes past the cap ----------------------------
_UPDATER = """
import os, sys, time
from assay.store.artifacts import record_seen
folder, go, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
while not os.path.exists(go):  # both processes start updating at once
    time.sleep(0.001)
for _ in range(n):
    record_seen(folder, 3)
"""


def test_two_processes_updating_seen_json_at_once_lose_no_update(tmp_path):
    import sys

    from assay.store.artifacts import read_seen

    folder, go, n = tmp_path / "artifact", tmp_path / "go", 150
    folder.mkdir()
    procs = [
        subprocess.Popen([sys.executable, "-c", _UPDATER, str(folder), str(go), str(n)], start_new_session=True)
        for _ in range(2)
    ]
    try:
        go.touch()
        codes = [p.wait(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert codes == [0, 0]
    seen = read_seen(folder)
    assert (seen["runs"], seen["occurrences"]) == (2 * n, 2 * n * 3), "an update was lost"


def test_failed_writes_past_the_cap_are_counted_and_reported(tmp_path, monkeypatch):
    """A full disk fails every corpus write: 20 are listed, the rest counted as '... and N more'."""
    from reliab_helpers import hostile_registry

    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.engine.supervisor import MAX_WRITE_ERRORS
    from assay.reports.campaign import build_report, summary
    from assay.store import corpus as corpus_mod

    calls = []

    def full(path, data, **kw):
        calls.append(path)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(corpus_mod, "write_bytes", full)
    options = CampaignOptions(corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=300, seed=1)
    result = run_campaign([hostile_registry().get("hostile_grow")], options)
    failed = len(calls)  # the supervisor (this process) writes the corpus: every write failed
    assert failed > MAX_WRITE_ERRORS, "the run found too few entries to pass the cap"
    report = build_report(result, arguments={})
    _validate(report)
    entry = report["targets"]["hostile_grow"]
    more = failed - MAX_WRITE_ERRORS
    assert entry["write_errors_more"] == more
    assert len(entry["write_errors"]) == MAX_WRITE_ERRORS + 1 and entry["write_errors"][-1] == f"... and {more} more"
    assert f"could not write ... and {more} more" in summary(result)


def test_compose_and_mutant_refuse_a_corpus_root_that_is_a_file_before_any_work(tmp_path):
    """The same check as `assay fuzz`'s, before compose's campaign and before mutant's baseline."""
    (tmp_path / "file").write_bytes(b"not a folder")
    example = ROOT / "examples" / "compose"
    compose = run_assay(
        "compose",
        "--classifier",
        f"{example / 'shell_classifier_v1.py'}:is_allowed",
        "--leaves",
        str(example / "leaves.txt"),
        "--fuzz-cases",
        "5",
        "--fuzz-corpus",
        str(tmp_path / "file"),
        "--fuzz-artifacts",
        str(tmp_path / "other"),
        timeout=120,
    )
    assert compose.returncode == 2, (compose.stdout, compose.stderr)
    assert compose.stderr.count("\n") == 1 and "--fuzz-corpus" in compose.stderr and "is a file" in compose.stderr
    assert not (tmp_path / "other").exists()

    project = _project(tmp_path / "p")
    (project / "pyproject.toml").write_text('[tool.assay]\ntargets = ["t.py"]\nmutate = ["lib.py"]\n')
    (project / "test_lib.py").write_text("import lib\n\ndef test_parse():\n    lib.parse(b'a')\n")
    mutant = run_assay(
        "mutant",
        "--project",
        str(project),
        "--fuzz",
        "on",
        "--fuzz-cases",
        "5",
        "--fuzz-artifacts",
        str(tmp_path / "file" / "below"),
        timeout=120,
    )
    assert mutant.returncode == 2, (mutant.stdout, mutant.stderr)
    assert "--fuzz-artifacts" in mutant.stderr and "is a file, not a folder" in mutant.stderr, mutant.stderr
    assert "baseline" not in mutant.stdout, "the tests ran before the check"
