"""Findings that explain themselves, grouped into bugs, and the tests the promoter emits for them.

One capped campaign (real stdlib parsers: ``urllib.parse``, ``json``; a Hypothesis
``@given`` target) runs through the command line; each test reads its console
output, its artifacts, or a copy of its project.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.campaign  # one capped campaign (200 cases a target) shared by the module

TARGETS = """
import json
import urllib.parse

import assay
from hypothesis import given, strategies as st


@assay.target(sources=["urllib.parse"], seeds=[b"ahttp://[x", b"http://[x"])
def url_parts(data: bytes):
    text = data.decode("latin-1")
    if text.startswith("a"):
        urllib.parse.urlparse(text)  # two call paths, one raise site: two signatures, one bug
    else:
        urllib.parse.urlsplit(text)


@assay.target(sources=["json"], expected=(ValueError,), seeds=[b"[]"])
def json_key(data: bytes):
    return json.loads(data)["key"]  # the harness's own mistake on a list


@assay.target(expected=(ValueError, UnicodeDecodeError), seeds=[b"-1", b"5000"])
def bounded(data: bytes):
    n = int(data.decode("ascii"))
    assert n >= 0
    assert n < 1000


@assay.target(seeds=[b"a", b"b"])
def short(data: bytes):
    if len(data) >= 3:
        raise OverflowError(len(data))


def mean(xs):
    return sum(xs) // len(xs)


@assay.target(seeds=[b"\\x00"])
@given(st.lists(st.integers()))
def mean_of_lists(xs):
    mean(xs)
"""

STEM = "findings_subject"


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def pytest_child(cwd: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:assay", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def fuzz(root: Path) -> subprocess.CompletedProcess[str]:
    return assay(
        "fuzz", "--project", str(root), "--fuzz-cases", "200", "--fuzz-seed", "3", "--report", str(root / "report.json")
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("findings") / "proj"
    (root / "fuzz").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.assay]\ntargets = ["fuzz"]\n')
    (root / "fuzz" / f"{STEM}.py").write_text(TARGETS)
    r = fuzz(root)
    assert r.returncode == 1, r.stdout + r.stderr
    return root, r.stdout


@pytest.fixture
def project(run, tmp_path):
    """A private copy of the campaign's project (tests that promote or edit it)."""
    copy = tmp_path / "proj"
    shutil.copytree(run[0], copy)
    return copy


def artifacts(root: Path, target: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / ".assay" / "artifacts" / target).glob("*/metadata.json"))]


def block(stdout: str, target: str) -> str:
    """The summary lines of one target."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {target}: "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("    ")), len(lines))
    return "\n".join(lines[start:end])


# -- item 4 and 6: the console summary ------------------------------------------------------------
def test_two_signatures_of_one_raise_site_are_one_bug_in_the_summary(run):
    root, out = run
    sigs = {m["signature"] for m in artifacts(root, "url_parts")}
    assert len(sigs) == 2  # distinct keys are kept
    text = block(out, "url_parts")
    assert "2 finding(s) in 1 bug(s)" in text and text.count("    bug ") == 1
    assert "[panic] ValueError: Invalid IPv6 URL" in text
    assert "raised at " in text and "urllib/parse.py:" in text and " in urlsplit" in text
    assert "seen 2x this run under 2 signatures" in text
    assert "input: b'" in text and " bytes)" in text
    assert not any(sig in text for sig in sigs)  # no 190-character signature lines


def test_the_reproduce_command_works_when_pasted(run):
    root, out = run
    command = next(
        line.split("reproduce: ", 1)[1] for line in block(out, "url_parts").splitlines() if "reproduce:" in line
    )
    words = shlex.split(command)
    assert words[:2] == ["assay", "replay"] and words[2].startswith(str(root))  # absolute: pasted anywhere
    r = subprocess.run([sys.executable, "-m", "assay", *words[1:]], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: panic" in r.stdout and "Invalid IPv6 URL" in r.stdout


def test_from_the_project_folder_the_command_is_absolute_and_works(project):
    out = assay("fuzz", "--fuzz-replay-only", "--fuzz-target", "url_parts", cwd=project).stdout
    command = next(
        line.split("reproduce: ", 1)[1] for line in block(out, "url_parts").splitlines() if "reproduce:" in line
    )
    words = shlex.split(command)
    assert words[2].startswith(str(project / ".assay" / "artifacts" / "url_parts")) and "--project" not in words
    r = assay(*words[1:], cwd=project)
    assert r.returncode == 1 and "verdict: panic" in r.stdout, r.stdout + r.stderr


def test_harness_findings_are_labelled_harness(run):
    _, out = run
    text = block(out, "json_key")
    assert "[panic, harness] TypeError: list indices must be integers" in text
    assert "the harness: fix the fuzz target" in text


def test_two_bare_asserts_of_one_target_are_two_bugs(run):
    root, out = run
    text = block(out, "bounded")
    assert "2 finding(s) in 2 bug(s)" in text
    assert "AssertionError: assert n >= 0" in text and "AssertionError: assert n < 1000" in text
    assert len({m["signature"] for m in artifacts(root, "bounded")}) == 2


def test_hypothesis_targets_show_the_falsifying_example(run):
    root, out = run
    text = block(out, "mean_of_lists")
    assert "example: mean_of_lists(xs=[])" in text and "Hypothesis choices" in text
    (meta,) = artifacts(root, "mean_of_lists")
    assert meta["verdict"]["data"]["example"] == {
        "test": "mean_of_lists",
        "arguments": {"xs": "[]"},
        "replayable": True,
    }


def test_metadata_counts_the_first_hit_as_the_report_counts_cases(run):
    root, _ = run
    report = json.loads((root / "report.json").read_text())
    by_input = {m["minimized_size"]: m for m in artifacts(root, "url_parts")}
    firsts = sorted(m["first_seen_case"] for m in by_input.values())
    assert firsts == [1, 2]  # the two seeds, 1-based, seeds counted
    (generated,) = artifacts(root, "short")
    # Two seeds ran first: a generated case's place is the old case_index (generated only, 0-based) + 2 + 1.
    assert generated["first_seen_case"] == generated["case_index"] + 3
    assert generated["first_seen_case"] <= report["targets"]["short"]["cases"]
    for m in artifacts(root, "short") + artifacts(root, "url_parts"):
        assert 0 <= m["first_seen_seconds"] <= report["elapsed"] and m["first_seen"].endswith("Z")


# -- item 4: replay and findings -------------------------------------------------------------------
def test_replay_takes_an_artifact_without_the_target_name(run):
    root, _ = run
    art = next((root / ".assay" / "artifacts" / "mean_of_lists").iterdir())
    r = assay("replay", str(art), "--project", str(root))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "verdict: panic" in r.stdout and "falsifying example: mean_of_lists(xs=[])" in r.stdout
    assert "raised at fuzz/findings_subject.py:" in r.stdout  # the explanation, relative to the project
    old = assay("replay", "short", str(art / "input"), "--project", str(root))  # TARGET INPUT still works
    assert old.returncode == 0 and "verdict: pass" in old.stdout
    bad = assay("replay", str(art / "input"), "--project", str(root))
    assert bad.returncode == 2 and "not an artifact folder" in bad.stderr and "TARGET INPUT" in bad.stderr


def test_findings_lists_bugs_and_shows_one(project):
    r = assay("findings", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert "6 bug(s), 7 signature(s), 7 artifact(s)" in r.stdout
    listing = assay("findings", "--json", "--project", str(project))
    bugs = json.loads(listing.stdout)
    url = next(b for b in bugs if any(f["target"] == "url_parts" for f in b["findings"]))
    assert len(url["findings"]) == 2 and url["exception"] == "builtins.ValueError"
    assert next(b for b in bugs if any(f["target"] == "json_key" for f in b["findings"]))["harness"] is True
    shown = assay("findings", "show", url["id"][:6], "--project", str(project))
    assert shown.returncode == 0 and shown.stdout.count("signature: panic:builtins.ValueError@") == 2
    assert "Traceback" in shown.stdout and "reproduce: assay replay" in shown.stdout
    missing = assay("findings", "show", "ffffffffff", "--project", str(project))
    assert missing.returncode == 2 and "no bug 'ffffffffff'" in missing.stderr


def test_last_seen_and_runs_follow_later_runs(project):
    (first,) = list((project / ".assay" / "artifacts" / "short").glob("*/seen.json"))
    before = json.loads(first.read_text())
    assert before["runs"] == 1 and before["occurrences"] >= 1
    r = fuzz(project)
    assert r.returncode == 1
    after = json.loads(first.read_text())
    assert after["runs"] == 2 and after["occurrences"] > before["occurrences"]
    assert after["last_seen"] >= before["last_seen"]
    meta = artifacts(project, "short")
    assert len(meta) >= 1 and all(m["first_seen"] <= after["last_seen"] for m in meta)


# -- item 6 and 7: the promoter ----------------------------------------------------------------------
def test_harness_findings_are_not_staged_unless_asked(project):
    r = assay(
        "promote",
        "--project",
        str(project),
        "--replays",
        "2",
        str(next((project / ".assay/artifacts/json_key").iterdir())),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 harness finding(s) not staged" in r.stdout and "--include-harness" in r.stdout
    assert not (project / ".assay" / "staging").exists() or not list((project / ".assay" / "staging").iterdir())
    r = assay(
        "promote",
        "--project",
        str(project),
        "--replays",
        "2",
        "--include-harness",
        str(next((project / ".assay/artifacts/json_key").iterdir())),
    )
    assert r.returncode == 1 and [p.name.rsplit("_", 1)[0] for p in (project / ".assay" / "staging").glob("*.py")] == [
        "test_json_key_TypeError"
    ]


def test_emitted_tests_are_named_per_bug_and_fail_while_the_bug_is_there(project):
    r = assay("promote", "--project", str(project), "--replays", "2", "--write", "--xfail")
    assert r.returncode == 1, r.stdout + r.stderr
    regressions = project / "tests" / "fuzz_regressions"
    names = sorted(p.name.rsplit("_", 1)[0] for p in regressions.glob("test_*.py"))
    assert names == [
        "test_bounded_AssertionError",
        "test_bounded_AssertionError",
        "test_mean_of_lists_ZeroDivisionError",
        "test_short_OverflowError",
        "test_url_parts_ValueError",
    ]  # no harness finding, one file per bug
    buckets = json.loads((regressions / "buckets.json").read_text())
    url_tests = {v for k, v in buckets.items() if "url_parts" in k}
    assert len([k for k in buckets if "url_parts" in k]) == 2 and len(url_tests) == 1  # both signatures, one test
    (url_test,) = regressions.glob("test_url_parts_ValueError_*.py")
    assert (
        "@pytest.mark.xfail(strict=True, reason='bug in third-party code (urllib.parse:urlsplit)"
        in url_test.read_text()
    )
    (bounded_a, bounded_b) = sorted(regressions.glob("test_bounded_*.py"))
    assert "xfail" not in bounded_a.read_text()  # the project's own code: a plain regression test
    for path in regressions.glob("test_*.py"):
        text = path.read_text()
        assert "import assay\n" in text and "from assay." not in text and "assay.engine" not in text

    result = pytest_child(project, regressions)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "4 failed, 1 xfailed" in result.stdout, result.stdout
    again = assay("promote", "--project", str(project), "--replays", "2", "--write")
    assert again.returncode == 0 and "0 promoted" in again.stdout


def test_a_hypothesis_finding_becomes_an_example_test(project):
    r = assay(
        "promote",
        "--project",
        str(project),
        "--replays",
        "2",
        str(next((project / ".assay/artifacts/mean_of_lists").iterdir())),
    )
    assert r.returncode == 1, r.stdout + r.stderr
    (test,) = (project / ".assay" / "staging").glob("test_mean_of_lists_ZeroDivisionError_*.py")
    text = test.read_text()
    assert "from hypothesis import example\n" in text and "EXAMPLE = example(xs=[])\n" in text
    assert "INPUT" not in text  # no choice bytes
    assert "assay.replay_example(TARGET, EXAMPLE, project=PROJECT_ROOT)" in text
    buggy = pytest_child(project, test)
    assert buggy.returncode == 1 and "ZeroDivisionError" in buggy.stdout, buggy.stdout
    target_file = project / "fuzz" / f"{STEM}.py"
    target_file.write_text(TARGETS.replace("return sum(xs) // len(xs)", "return sum(xs) // len(xs) if xs else 0"))
    fixed = pytest_child(project, test)
    assert fixed.returncode == 0 and "1 passed" in fixed.stdout, fixed.stdout + fixed.stderr
