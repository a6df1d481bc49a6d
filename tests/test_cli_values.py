"""Every path and value a command takes is checked before any work: one line, exit 2.

One row per (command, flag, bad value).  A row passes only when the command exits 2
with exactly one line on stderr that names the flag, prints no argparse usage, and has
done no work: the project's target file (which leaves a marker when imported) was not
imported and no corpus or artifact folder was created.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TARGETS = textwrap.dedent("""
    from pathlib import Path

    Path(__file__).with_name("IMPORTED").write_text("the target file was imported")

    import assay

    @assay.target
    def parse(data: bytes) -> None:
        pass
""")
CLASSIFIER = "def classify(command):\n    return 'allow'\n"

#: (argv after ``assay``, what the one line must name).  FILE is a file, DIR a folder,
#: MISSING a path that does not exist, all in the project folder.
ROWS = [
    # assay fuzz: the cases first
    (["fuzz", "--fuzz-corpus", "FILE", "--fuzz-cases", "10"], "--fuzz-corpus"),
    (["fuzz", "--fuzz-artifacts", "FILE", "--fuzz-cases", "10"], "--fuzz-artifacts"),
    (["fuzz", "--project", "FILE"], "--project"),
    (["fuzz", "--fuzz-cases", "-1"], "--fuzz-cases"),
    (["fuzz", "--fuzz-cases", "0"], "--fuzz-cases"),
    (["fuzz", "--fuzz-cases", "abc"], "--fuzz-cases"),
    (["fuzz", "--fuzz-budget", "0"], "--fuzz-budget"),
    (["fuzz", "--fuzz-budget", "nan"], "--fuzz-budget"),
    (["fuzz", "--fuzz-corpus", "FILE/sub", "--fuzz-cases", "10"], "--fuzz-corpus"),
    (["fuzz", "--project", "MISSING"], "--project"),
    (["fuzz", "--report", "DIR", "--fuzz-cases", "10"], "--report"),
    (["fuzz", "--junit", "DIR", "--fuzz-cases", "10"], "--junit"),
    (["fuzz", "--sarif", "FILE/x.sarif", "--fuzz-cases", "10"], "--sarif"),
    (["fuzz", "--html", "DIR", "--fuzz-cases", "10"], "--html"),
    (["fuzz", "--dict", "MISSING", "--fuzz-cases", "10"], "--dict"),
    (["fuzz", "--dict", "DIR", "--fuzz-cases", "10"], "--dict"),
    (["fuzz", "--fuzz-seed", "abc"], "--fuzz-seed"),
    (["fuzz", "--jobs", "0"], "--jobs"),
    (["fuzz", "--shard", "3/2"], "--shard"),
    (["fuzz", "--shrink-cases", "0"], "--shrink-cases"),
    (["fuzz", "--max-len", "0"], "--max-len"),
    (["fuzz", "--timeout", "0"], "--timeout"),
    (["fuzz", "--rss-limit-mb", "-1"], "--rss-limit-mb"),
    (["fuzz", "--fuzz-backend", "java"], "--fuzz-backend"),
    (["fuzz", "--scheduler", "tcp://x:1", "--fuzz-cases", "10"], "--scheduler"),
    (["fuzz", "MISSING.py", "--fuzz-cases", "10"], "MISSING.py"),
    # assay targets, findings, replay, promote
    (["targets", "--project", "FILE"], "--project"),
    (["findings", "--project", "FILE"], "--project"),
    (["replay", "--project", "FILE", "MISSING"], "--project"),
    (["replay", "MISSING"], "MISSING"),
    (["promote", "--project", "FILE"], "--project"),
    (["promote", "--replays", "0"], "--replays"),
    (["promote", "MISSING"], "MISSING"),
    # assay compose
    (["compose", "--classifier", "cls:classify", "--leaves", "MISSING"], "--leaves"),
    (["compose", "--classifier", "cls:classify", "--leaves", "DIR"], "--leaves"),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--operators", "MISSING"], "--operators"),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--fuzz-cases", "-1"], "--fuzz-cases"),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--fuzz-budget", "0"], "--fuzz-budget"),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--fuzz-seed", "x"], "--fuzz-seed"),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--bound", "0"], "--bound"),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--max-leaves", "0"], "--max-leaves"),
    (
        ["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--classifier-timeout", "0"],
        "--classifier-timeout",
    ),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--fuzz-corpus", "FILE"], "--fuzz-corpus"),
    (
        ["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--fuzz-artifacts", "FILE"],
        "--fuzz-artifacts",
    ),
    (["compose", "--classifier", "cls:classify", "--leaves", "leaves.txt", "--report", "DIR"], "--report"),
    # assay mutant and assay test
    *[
        row
        for command in ("mutant", "test")
        for row in [
            ([command, "--project", "FILE"], "--project"),
            ([command, "--jobs", "0"], "--jobs"),
            ([command, "--mutant-fail-under", "101"], "--mutant-fail-under"),
            ([command, "--mutant-fail-under", "abc"], "--mutant-fail-under"),
            ([command, "--report", "DIR"], "--report"),
            ([command, "--fuzz-corpus", "FILE"], "--fuzz-corpus"),
            ([command, "--fuzz-artifacts", "FILE"], "--fuzz-artifacts"),
            ([command, "--fuzz-cases", "0"], "--fuzz-cases"),
            ([command, "--mutant-budget", "0"], "--mutant-budget"),
            ([command, "--paths", "MISSING"], "--paths"),
        ]
    ],
    (["mutant", "--sample", "0"], "--sample"),
    (["test", "--mutant-samples", "0"], "--mutant-samples"),
    # assay merge-corpus
    (["merge-corpus", "FILE", "corpus"], "OUT"),
    (["merge-corpus", "out", "corpus", "--aside", "FILE"], "--aside"),
    (["merge-corpus", "out", "corpus", "--report", "DIR"], "--report"),
    (["merge-corpus", "--project", "FILE", "out", "corpus"], "--project"),
    # assay init
    (["init", "--project", "FILE"], "--project"),
    (["init", "--project", "MISSING"], "--project"),
    (["init", "--shards", "0"], "--shards"),
    (["init", "--budget", "0"], "--budget"),
    (["init", "--ci", "gitlab"], "--ci"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("values")
    (root / "pyproject.toml").write_text('[tool.assay]\ntargets = ["targets.py"]\n')
    (root / "targets.py").write_text(TARGETS)
    (root / "cls.py").write_text(CLASSIFIER)
    (root / "leaves.txt").write_text("echo hi\n")
    (root / "FILE").write_text("a file, not a folder\n")
    (root / "DIR").mkdir()
    (root / "corpus" / "parse").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    return root


@pytest.mark.parametrize(("argv", "names"), ROWS, ids=[" ".join(a) for a, _ in ROWS])
def test_a_bad_path_or_value_is_one_line_and_exit_2_before_any_work(project, argv, names):
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    r = subprocess.run(
        [sys.executable, "-m", "assay", *argv],
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and names in lines[0], r.stderr
    assert "usage:" not in r.stderr and "Traceback" not in r.stderr
    assert not (project / "IMPORTED").exists(), f"{lines[0]!r} came after the target file was imported"
    assert not (project / ".assay").exists(), "a corpus or artifact folder was created"
    assert not (project / "out").exists()
