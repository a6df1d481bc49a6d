"""``assay compose`` with a classifier that is a bridge to another process.

The classifier below is real: it judges each command by running a shell script
through ``subprocess`` (as a Python bridge to a Node or Go classifier does).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from assay.cli.compose import main

#: Enough cases to judge composed commands, few enough for a second or two.
CASES = "60"

BRIDGE = textwrap.dedent(
    '''
    """A classifier that asks a separate process for each verdict."""
    import subprocess

    SCRIPT = 'case "$1" in *rm*|*curl*|*">"*|*tee*) exit 1;; esac; exit 0'


    def judge(command):
        return subprocess.run(["sh", "-c", SCRIPT, "sh", command], check=False).returncode == 0
    '''
)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "bridge.py").write_text(BRIDGE, encoding="utf-8")
    (tmp_path / "leaves.txt").write_text("allow: ls -la\nallow: echo hi\ndeny: rm -rf /\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def compose(*extra: str) -> int:
    return main(
        [
            "compose",
            "--classifier",
            "bridge.py:judge",
            "--leaves",
            "leaves.txt",
            "--fuzz-cases",
            CASES,
            "--fuzz-seed",
            "1",
            "--families",
            "none",
            *extra,
        ]
    )


def test_every_case_refused_is_one_error_line_naming_the_flag(project, capsys) -> None:
    status = compose()
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1
    assert "refused subprocess on every case" in err[0]
    assert "--allow subprocess" in err[0]
    assert "[tool.assay.compose]" in err[0]


def test_allow_subprocess_lets_the_bridge_judge(project, capsys) -> None:
    status = compose("--allow", "subprocess")
    out = capsys.readouterr().out
    assert status == 0, out
    assert "sandbox: the classifier may use subprocess" in out
    assert "safety" not in out
    assert "no findings" in out


def test_config_key_allows_it_too(project, capsys) -> None:
    (project / "pyproject.toml").write_text('[tool.assay.compose]\nallow = ["subprocess"]\n', encoding="utf-8")
    assert compose() == 0
    assert "may use subprocess" in capsys.readouterr().out


def test_allow_rejects_an_unknown_class_before_any_work(project, capsys) -> None:
    assert compose("--allow", "everything") == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing judged or fuzzed
    assert captured.err.strip() == (
        "assay: error: --allow 'everything' is not a side-effect class; use subprocess, network or write:PATH"
    )


def test_a_real_finding_next_to_refusals_is_not_called_a_setup_error(project, capsys) -> None:
    """Non-vacuity of the check: only a run where *every* case was refused is an error."""
    (project / "bridge.py").write_text(
        BRIDGE
        + "\n\ndef sometimes(command):\n"
        + "    return judge(command) if '&&' in command else not any(w in command for w in ('rm', '>'))\n",
        encoding="utf-8",
    )
    status = main(
        ["compose", "--classifier", "bridge.py:sometimes", "--leaves", "leaves.txt", "--fuzz-cases", CASES]
        + ["--fuzz-seed", "1", "--families", "none"]
    )
    assert status == 1
    out = capsys.readouterr().out
    assert "[safety]" in out
    assert "pass --allow subprocess|network|write:PATH" in out  # the flag compose takes, not allow=[...]
