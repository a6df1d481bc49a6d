"""Mutation testing on a project laid out as a real one: ``src/``, a fuzz target, promoted tests.

The first hour of a user: ``assay fuzz`` finds two bugs (one in the project's code,
one in ``urllib.parse``), ``assay promote --write`` turns them into regression tests
that fail until the bugs are fixed, and then ``assay mutant`` / ``assay test
--mutant sample --fuzz on`` must run anyway: the project has no ``pythonpath``
setting for pytest, as ``assay fuzz`` needs none.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.campaign

PACKAGE = """\
import urllib.parse

TABLE = {"k": 1}


def header_value(data):
    name, sep, value = data.partition(b":")
    if not sep:
        return b""
    if len(name) > 20:
        return b""
    return value.strip()


def parse_int(data):
    if data[:1] == b"@":
        return TABLE[data[1:2].decode("latin-1")]  # the project's own bug: KeyError
    text = data.decode("latin-1")
    return int(text) if text.isdigit() else 0


def host(data):
    return urllib.parse.urlsplit(data.decode("latin-1")).hostname  # ValueError inside urllib.parse
"""
TARGET = """\
import assay
import tinyhdr


# urllib.parse is watched too: its bug is a third-party one (--xfail), raised at urlsplit.
@assay.target(sources=["tinyhdr", "urllib.parse"], max_len=40, seeds=[b"Host: x", b"12", b"@:", b"http://[x"])
def hdr(data: bytes):
    tinyhdr.header_value(data)
    tinyhdr.parse_int(data[:3])
    if data.startswith(b"http"):
        tinyhdr.host(data)
"""
TESTS = """\
import tinyhdr


def test_value():
    assert tinyhdr.header_value(b"Host: example") == b"example"
"""


def assay(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], cwd=root, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory) -> Path:
    """The project after one capped campaign (both bugs found), before any promotion."""
    root = tmp_path_factory.mktemp("real") / "tinyhdr"
    (root / "src" / "tinyhdr").mkdir(parents=True)
    (root / "fuzz").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "tinyhdr" / "__init__.py").write_text(PACKAGE)
    (root / "fuzz" / "fuzz_hdr.py").write_text(TARGET)
    (root / "tests" / "test_hdr.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[project]\nname = "tinyhdr"\nversion = "0"\n\n[tool.assay]\n')
    r = assay(root, "fuzz", "--fuzz-cases", "300", "--fuzz-seed", "1")
    assert r.returncode == 1 and "2 bug(s)" in r.stdout, r.stdout + r.stderr
    return root


@pytest.fixture
def project(fuzzed, tmp_path) -> Path:
    root = tmp_path / "tinyhdr"
    shutil.copytree(fuzzed, root)
    return root


def promoted_tests(root: Path) -> dict[str, Path]:
    return {p.name.split("_")[2]: p for p in (root / "tests" / "fuzz_regressions").glob("test_*.py")}


def test_mutant_runs_over_unfixed_promoted_tests_and_imports_src(project) -> None:
    r = assay(project, "promote", "--write", "--replays", "2")
    assert r.returncode == 1, r.stdout + r.stderr
    tests = promoted_tests(project)
    assert sorted(tests) == ["KeyError", "ValueError"]
    report = project / "m.json"
    r = assay(project, "mutant", "--jobs", "2", "--no-history", "--report", str(report))
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "baseline is not green" not in r.stderr
    assert "2 promoted regression test(s) fail for the bug they were promoted for" in r.stderr
    for path in tests.values():
        assert f"tests/fuzz_regressions/{path.name}::{path.stem}" in r.stderr
    data = json.loads(report.read_text())
    assert sorted(data["baseline"]["unfixed"]) == sorted(
        f"tests/fuzz_regressions/{p.name}::{p.stem}" for p in tests.values()
    )
    assert data["baseline"]["passed"] == 1
    # Unreached mutants are listed, not only counted: in the terminal and in the JSON.
    unreached = [m["id"] for m in data["mutants"] if m["verdict"] == "unreached"]
    assert unreached and data["unreached"] == unreached
    assert "no test runs lines" in r.stdout and "add a test that calls parse_int" in r.stdout
    assert "unreached      line" in r.stdout and unreached[0] in r.stdout


def test_a_promoted_test_failing_otherwise_still_stops_the_baseline(project) -> None:
    """Non-vacuity: only a failure *for the recorded bug* is tolerated."""
    assert assay(project, "promote", "--write", "--replays", "2").returncode == 1
    path = promoted_tests(project)["KeyError"]
    path.write_text(path.read_text().replace("\nSIGNATURE = '", "\nSIGNATURE = 'other:"))
    r = assay(project, "mutant", "--jobs", "2", "--no-history")
    assert r.returncode == 2
    assert "the baseline is not green: 1 test(s) fail" in r.stderr and path.name in r.stderr
    assert "--deselect" in r.stderr


def test_promote_xfail_write_converts_existing_tests_of_third_party_bugs(project) -> None:
    assert assay(project, "promote", "--write", "--replays", "2").returncode == 1
    tests = promoted_tests(project)
    assert all("xfail" not in p.read_text() for p in tests.values())
    r = assay(project, "promote", "--write", "--xfail", "--replays", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "its test now carries a strict xfail marker (--xfail)" in r.stdout
    third_party = tests["ValueError"].read_text()
    assert "@pytest.mark.xfail(strict=True, reason='bug in third-party code (urllib.parse:" in third_party
    assert "import pytest\n" in third_party
    assert "xfail" not in tests["KeyError"].read_text()  # the project's own bug stays a plain test
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests["ValueError"])],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0 and "1 xfailed" in ran.stdout, ran.stdout + ran.stderr
    again = assay(project, "promote", "--write", "--xfail", "--replays", "2")
    assert again.returncode == 0 and "now carries" not in again.stdout  # converted once


def test_assay_test_fuzzes_survivors_of_a_src_package_with_progress(project) -> None:
    r = assay(project, "test", "--mutant", "sample", "--fuzz", "on", "--fuzz-cases", "100", "--jobs", "2")
    assert "no survivor maps" not in r.stdout and "fuzzing every target" not in r.stdout, r.stdout
    assert "mutant(s) no test killed, through hdr" in r.stdout
    assert "killed-by-fuzz" in r.stdout
    # Again: every survivor's fuzzing evidence is reused, so nothing is left to fuzz; it says so
    # (not "no survivor maps to a fuzz target") and how long the campaign over every target runs.
    again = assay(project, "test", "--mutant", "sample", "--fuzz", "on", "--fuzz-cases", "100", "--jobs", "2")
    assert "assay: no mutant is left for fuzzing" in again.stdout, again.stdout
    assert "fuzzing every target (hdr) for 100 cases" in again.stdout
