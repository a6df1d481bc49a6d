"""The worked example (examples/compose): the first classifier's findings, and the fix."""

from __future__ import annotations

import argparse
import codecs
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from assay.cli.compose import register, run
from assay.compose.classifier import load_object
from assay.harness.discovery import import_file, targets_in

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compose"
V1 = f"{EXAMPLE / 'shell_classifier_v1.py'}:is_allowed"
FIXED = f"{EXAMPLE / 'shell_classifier.py'}:is_allowed"

ROOT = Path(__file__).resolve().parents[2]
README = EXAMPLE / "README.md"
#: The output block of the README, between these markers.
BEGIN, END = "<!-- compose-output: begin -->", "<!-- compose-output: end -->"


def documented_command() -> list[str]:
    """The ``assay compose`` command of the README's "Running it" section, as argv."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index("## Running it") :].split("```")[1]
    return shlex.split(block.replace("\\\n", " "))


def documented_output() -> list[str]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    return block.strip().strip("`").strip("\n").splitlines()


def _normal(lines: list[str]) -> list[str]:
    """Output lines without artifact paths and with the seconds masked (the only parts that vary)."""
    return [re.sub(r" in \d+\.\ds,", " in Xs,", line) for line in lines if not line.lstrip().startswith("artifact:")]


def unquote(printed: str) -> str:
    """A command as ``quote_command`` printed it, read back as the shell would."""
    if printed.startswith("$'"):
        return codecs.decode(printed[2:-1].replace("\\'", "'"), "unicode_escape")
    (word,) = shlex.split(printed)
    return word


def found() -> list[str]:
    """Every example command the README's output block shows."""
    return [unquote(line.split("example:", 1)[1].strip()) for line in documented_output() if "example:" in line]


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="assay")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["compose", *argv])


@pytest.mark.campaign
def test_the_documented_output_is_what_the_documented_command_prints(tmp_path) -> None:
    argv = documented_command()
    assert argv[:2] == ["assay", "compose"] and "--fuzz-cases" in argv and "--fuzz-seed" in argv
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            *argv[1:],
            "--fuzz-corpus",
            str(tmp_path / "c"),
            "--fuzz-artifacts",
            str(tmp_path / "a"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert proc.returncode == 1, proc.stderr
    # on a mismatch, paste the actual output (without artifact lines) between the README's markers
    assert _normal(proc.stdout.splitlines()) == _normal(documented_output()), proc.stdout


def test_the_readme_prose_agrees_with_the_documented_pool() -> None:
    pool = next(line for line in documented_output() if line.startswith("leaf pool:"))
    admitted, candidates, allowed, denied = map(int, re.findall(r"\d+", pool)[:4])
    prose = re.search(r"holds (\d+) safe and (\d+) denied commands, plus (\d+)", README.read_text()).groups()
    assert (allowed, denied, candidates - admitted) == tuple(map(int, prose))


def test_the_readme_shows_examples_of_every_cause() -> None:
    commands = found()
    assert len(commands) >= 10
    for needle in ("xargs ", "find . -exec ", "| tee ", ">$HOME/.bashrc", "`"):
        assert any(needle in c for c in commands), needle
    # bashlex's cut-short substitution, rendered tight or spaced: $(ls\n...) or $(ls \n ...)
    assert any(re.search(r"\$\(ls ?\n", c) for c in commands)


@pytest.mark.parametrize("command", found())
def test_the_first_version_allowed_each_finding_and_the_fix_denies_it(command: str) -> None:
    assert load_object(V1)(command) is True
    assert load_object(FIXED)(command) is False


def test_the_fix_still_allows_what_it_should() -> None:
    fixed = load_object(FIXED)
    for command in [
        "ls -la && git status",
        "cat README.md | grep -n TODO",
        'echo "$(date)"',
        "find . -name '*.py' | xargs grep -n TODO",
        "ls | tee listing.txt",
        "ls > out.txt",
        'echo "`ls\nwc -l README.md`"',
        "X=$(pwd) ls",
    ]:
        assert fixed(command) is True, command


def run_example(tmp_path, classifier: str, cases: int) -> int:
    return run(
        args(
            "--classifier",
            classifier,
            "--leaves",
            str(EXAMPLE / "leaves.txt"),
            "--fuzz-cases",
            str(cases),
            "--fuzz-seed",
            "1",
            "--fuzz-corpus",
            str(tmp_path / "c"),
            "--fuzz-artifacts",
            str(tmp_path / "a"),
        )
    )


def test_the_run_finds_the_first_versions_fail_opens(tmp_path, capsys) -> None:
    assert run_example(tmp_path, V1, 800) == 1
    out = capsys.readouterr().out
    assert "[fail-open] wrapper:" in out and "[protected-write] redirect:tee" in out


def test_the_fixed_classifier_is_clean_in_the_same_budget(tmp_path, capsys) -> None:
    run_example(tmp_path, FIXED, 800)
    out = capsys.readouterr().out
    assert "[fail-open]" not in out and "[over-denial]" not in out


def test_the_example_target_is_discovered() -> None:
    module = import_file(EXAMPLE / "fuzz_shell_compose.py")
    (target,) = targets_in(module)
    assert target.name == "shell_compose" and target.sources[0].endswith("shell_classifier.py")
