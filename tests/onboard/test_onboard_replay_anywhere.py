"""Every printed replay command works when pasted, as printed, in another folder.

A project whose target imports the project's own package from ``src/`` (not installed):
the terminal summary, ``assay findings``, ``assay findings --json``, the JSON report and
the HTML report each print a command; each is run from an unrelated folder and must
replay the finding.  Artifacts kept outside the project (``--fuzz-artifacts``) print
``--project``; the project an artifact lies in is found from its location only.
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

PARSER = """\
def parse(text):
    if text[:1] == "x" and len(text) > 3:
        raise KeyError("planted: x and three more")
    return len(text)
"""
TARGET = """\
import assay

import tinykv


@assay.target(expected=(ValueError,))
def fuzz_tinykv(data: bytes) -> None:
    tinykv.parse(data.decode("utf-8", errors="replace"))
"""
HARNESS = """\
import sys

import atheris

with atheris.instrument_imports():
    import tinykv


def TestOneInput(data):
    tinykv.parse(data.decode("utf-8", errors="replace"))


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
"""


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "tinykv").mkdir(parents=True)
    (root / "src" / "tinykv" / "__init__.py").write_text(PARSER)
    (root / "fuzz").mkdir()
    (root / "fuzz" / "fuzz_tinykv.py").write_text(TARGET)
    (root / "harnesses").mkdir()
    (root / "harnesses" / "fuzz_kv_atheris.py").write_text(HARNESS)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "tinykv"\nversion = "0"\n\n[tool.assay]\ntargets = ["fuzz"]\n'
    )
    return root


def _replays(command: str, cwd: Path) -> None:
    words = shlex.split(command)
    assert words[:2] == ["assay", "replay"], command
    r = assay(*words[1:], cwd=cwd)
    assert r.returncode == 1, f"{command}\n{r.stdout}{r.stderr}"
    assert "verdict: panic" in r.stdout and "planted: x and three more" in r.stdout, r.stdout


def _reproduce_lines(text: str) -> list[str]:
    return [line.split("reproduce: ", 1)[1] for line in text.splitlines() if "reproduce: " in line]


@pytest.mark.parametrize("artifacts", ["in the project", "outside the project"])
def test_every_printed_replay_command_works_from_another_folder(project, tmp_path, artifacts):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    flags = ["--fuzz-cases", "2000", "--fuzz-seed", "1", "--report", "r.json", "--html", "r.html"]
    if artifacts == "outside the project":
        flags += ["--fuzz-artifacts", str(tmp_path / "ci-artifacts")]
    pytest.importorskip("jinja2")
    run = assay("fuzz", *flags, cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr

    commands = {"summary": _reproduce_lines(run.stdout)}
    report = json.loads((project / "r.json").read_text())
    commands["json report"] = [bug["replay"] for bug in report["bugs"]]
    page = (project / "r.html").read_text()
    commands["html report"] = sorted({html.unescape(m) for m in re.findall(r'data-copy="([^"]+)"', page)})
    root = [str(tmp_path / "ci-artifacts")] if artifacts == "outside the project" else []  # findings' ROOT
    listed = assay("findings", *root, cwd=project)
    bug = next(line.split()[0] for line in listed.stdout.splitlines()[1:] if line.startswith("  "))
    hint = next(line for line in listed.stdout.splitlines() if line.startswith("explain one: "))
    shown = assay(*shlex.split(hint.removeprefix("explain one: ").replace(" ID ", f" {bug} "))[1:], cwd=elsewhere)
    assert shown.returncode == 0, shown.stdout + shown.stderr  # the listing's hint, pasted in another folder
    commands["findings show"] = _reproduce_lines(shown.stdout)
    as_json = json.loads(assay("findings", *root, "--json", cwd=project).stdout)
    commands["findings --json"] = [f["reproduce"] for b in as_json for f in b["findings"]]
    for where, printed in commands.items():
        assert printed, f"{where} printed no replay command"
        for command in printed:
            _replays(command, elsewhere)
        if artifacts == "outside the project":
            assert all("--project" in c for c in printed), (where, printed)


def test_a_harness_file_finding_replays_from_another_folder(project, tmp_path):
    """An atheris harness given on the command line, importing the project's src/ package."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = assay("fuzz", "harnesses/fuzz_kv_atheris.py", "-runs=2000", "-seed=1", cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr
    (command,) = _reproduce_lines(run.stdout)
    assert "--harness" in shlex.split(command)
    _replays(command, elsewhere)


def test_the_project_comes_from_where_the_artifact_lies_not_from_its_metadata(project, tmp_path):
    """A copied artifact whose metadata names another project's files still replays in the
    project that holds it (its metadata is data: no path in it decides what is imported)."""
    run = assay("fuzz", "--fuzz-cases", "2000", "--fuzz-seed", "1", cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr
    (artifact,) = [p.parent for p in (project / ".assay" / "artifacts").rglob("metadata.json")]
    meta = json.loads((artifact / "metadata.json").read_text())
    meta["harness"] = str(tmp_path / "somewhere" / "else.py")
    (artifact / "metadata.json").write_text(json.dumps(meta))
    _replays(f"assay replay {shlex.quote(str(artifact))}", tmp_path)
