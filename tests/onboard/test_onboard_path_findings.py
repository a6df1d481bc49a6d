"""A finding of a harness named on the command line (not in [tool.assay]) replays and promotes.

The harness is an atheris-style file outside the project's ``fuzz/`` folder; its target
exists only in that file, which the user names (``--harness FILE``: a path from an
artifact's metadata is never imported), and the emitted regression test names it too.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.campaign

HARNESS = textwrap.dedent("""
    import sys
    import atheris
    import plistlib

    def TestOneInput(data):
        fdp = atheris.FuzzedDataProvider(data)
        text = fdp.ConsumeBytes(64)
        try:
            plistlib.loads(text, fmt=plistlib.FMT_XML)
        except Exception:
            pass
        if text.startswith(b"PL"):
            raise RuntimeError("planted: a PL prefix")

    if __name__ == "__main__":
        atheris.Setup(sys.argv, TestOneInput)
        atheris.Fuzz()
""")


def assay(*args, cwd):
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_path_target_finding_replays_and_promotes(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "fuzz_plist.py").write_text(HARNESS)
    run = assay("fuzz", "harnesses/fuzz_plist.py", "-runs=3000", "-seed=1", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    artifacts = sorted((tmp_path / ".assay" / "artifacts").rglob("metadata.json"))
    assert artifacts, run.stdout
    artifact = artifacts[0].parent

    replay = assay("replay", str(artifact), "--harness", "harnesses/fuzz_plist.py", cwd=tmp_path)
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "planted: a PL prefix" in replay.stdout

    promote = assay("promote", "--write", "--harness", "harnesses/fuzz_plist.py", cwd=tmp_path)
    assert promote.returncode in (0, 1), promote.stdout + promote.stderr
    tests = sorted((tmp_path / "tests" / "fuzz_regressions").glob("test_*.py"))
    assert tests, promote.stdout + promote.stderr
    body = tests[0].read_text()
    assert "harness=HARNESS" in body and "PROJECT_ROOT / 'harnesses/fuzz_plist.py'" in body
    red = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests[0])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert red.returncode == 1 and "planted: a PL prefix" in red.stdout, red.stdout + red.stderr
    # Fix the bug: the same emitted test goes green.
    harness = tmp_path / "harnesses" / "fuzz_plist.py"
    harness.write_text(HARNESS.replace('raise RuntimeError("planted: a PL prefix")', "pass"))
    green = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests[0])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert green.returncode == 0, green.stdout + green.stderr


def test_the_reproduce_line_of_a_harness_file_finding_works_as_printed(tmp_path):
    """The run's summary names the harness file it was given; `assay findings show` names the
    file the artifact recorded on a line of its own, with a warning to check it (it is never
    imported on the artifact's word)."""
    import shlex

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (tmp_path / "harnesses").mkdir()
    (tmp_path / "harnesses" / "fuzz_plist.py").write_text(HARNESS)
    run = assay("fuzz", "harnesses/fuzz_plist.py", "-runs=3000", "-seed=1", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    (line,) = [x.strip() for x in run.stdout.splitlines() if x.strip().startswith("reproduce: ")]
    words = shlex.split(line.removeprefix("reproduce: "))
    assert words[:2] == ["assay", "replay"] and "--harness" in words, line
    replay = assay(*words[1:], cwd=tmp_path)
    assert replay.returncode == 1 and "planted: a PL prefix" in replay.stdout, replay.stdout + replay.stderr

    listed = assay("findings", cwd=tmp_path)
    bug = listed.stdout.split("\n")[1].split()[0]
    shown = assay("findings", "show", bug, cwd=tmp_path)
    assert "add --harness harnesses/fuzz_plist.py (check that file before you run it)" in shown.stdout, shown.stdout
