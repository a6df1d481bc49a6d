"""One word per bug: new, known, promoted (and fixed), said alike by every output.

A project is fuzzed twice and then once more after ``assay promote --write``; after
each run the end-of-run summary, ``assay findings`` (text and JSON), the JSON
report, the HTML page, SARIF and JUnit must give the bug the same status and the
same count of hits.  The second run reaches the bug through a *new* input (a new
artifact, a second signature): that is still a known bug, not a new one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from assay.core.verdict import ExceptionInfo, Frame, Verdict
from assay.findings.identity import identify
from assay.findings.status import FIXED, KNOWN, NEW, PROMOTED, Promotions, read_promotions, status_of

pytestmark = pytest.mark.campaign

LIBRARY = """\
TABLE = {"k": 1}


def lookup(key):
    return TABLE[key]  # the bug: KeyError for any other key


def by_prefix(data):
    return lookup(data[1:2].decode("latin-1"))


def by_suffix(data):
    return lookup(data[-1:].decode("latin-1"))
"""
HARNESS = """\
import assay
import shelf


@assay.target(max_len=8, seeds=[b"@x", b"#x"])
def shelf_target(data: bytes):
    if data[:1] == b"@":
        shelf.by_prefix(data)
"""
#: The second run's harness also reaches the bug through another function.
SECOND_PATH = """\
    elif data[:1] == b"#":
        shelf.by_suffix(data)
"""


def assay(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], cwd=root, capture_output=True, text=True, timeout=300)


def fuzz(root: Path, run: int) -> tuple[str, dict[str, str]]:
    """One capped run with every report; (its stdout, report format -> path)."""
    out = {k: str(root / f"run{run}.{k}") for k in ("json", "html", "sarif", "xml")}
    r = assay(
        root,
        "fuzz",
        "--fuzz-cases",
        "200",
        "--fuzz-seed",
        str(run),
        "--report",
        out["json"],
        "--html",
        out["html"],
        "--sarif",
        out["sarif"],
        "--junit",
        out["xml"],
    )
    assert r.returncode == 1, r.stdout + r.stderr
    return r.stdout, out


def said(root: Path, stdout: str, files: dict[str, str]) -> dict[str, tuple[str, int]]:
    """What each output says of the one bug: (status, hits in the run)."""
    report = json.loads(Path(files["json"]).read_text())
    (bug,) = report["bugs"]
    words: dict[str, tuple[str, int]] = {"report": (bug["status"], bug["occurrences"])}
    m = re.search(r"bug (\w+) \((\w+)\) .*\n(?:.*\n)*?\s+seen (\d+)x this run", stdout)
    assert m, stdout
    assert m.group(1) == bug["id"]
    words["summary"] = (m.group(2), int(m.group(3)))
    listing = assay(root, "findings").stdout
    m = re.search(rf"{bug['id']}  \((\w+)\) .*\n(?:.*\n)*?.*seen (\d+)x in its last run", listing)
    assert m, listing
    words["findings"] = (m.group(1), int(m.group(2)))
    (entry,) = json.loads(assay(root, "findings", "--json").stdout)
    words["findings --json"] = (entry["status"], entry["last_run_occurrences"])
    page = Path(files["html"]).read_text()
    m = re.search(r"seen (\d+)× this run under \d+ signature\(s\) · <span class=\"tag status-(\w+)\"", page)
    assert m, page
    words["html"] = (m.group(2), int(m.group(1)))
    (result,) = json.loads(Path(files["sarif"]).read_text())["runs"][0]["results"]
    m = re.search(r"\((\w+); fuzz target .*; seen (\d+)x this run", result["message"]["text"])
    assert m and result["properties"]["status"] == m.group(1), result
    words["sarif"] = (m.group(1), int(m.group(2)))
    (failure,) = ET.parse(files["xml"]).getroot().iter("failure")
    m = re.search(r"^(\w+): seen (\d+)x this run", failure.text or "", re.M)
    assert m and f") [{m.group(1)}]" in failure.get("message", ""), failure.text
    words["junit"] = (m.group(1), int(m.group(2)))
    return words


def test_every_output_says_the_same_word_and_count(tmp_path) -> None:
    root = tmp_path / "shelf"
    (root / "fuzz").mkdir(parents=True)
    (root / "shelf.py").write_text(LIBRARY)
    (root / "pyproject.toml").write_text("[tool.assay]\n")
    (root / "fuzz" / "fuzz_shelf.py").write_text(HARNESS)

    stdout, files = fuzz(root, 1)
    first = said(root, stdout, files)
    assert {w for w, _ in first.values()} == {NEW}, first
    assert len({n for _, n in first.values()}) == 1, first

    # The same bug through another path: a new signature and a new artifact, not a new bug.
    (root / "fuzz" / "fuzz_shelf.py").write_text(HARNESS + SECOND_PATH)
    stdout, files = fuzz(root, 2)
    report = json.loads(Path(files["json"]).read_text())
    assert any(f["new"] for f in report["targets"]["shelf_target"]["findings"])  # a new artifact ...
    second = said(root, stdout, files)
    assert {w for w, _ in second.values()} == {KNOWN}, second  # ... of a known bug
    assert len({n for _, n in second.values()}) == 1, second

    r = assay(root, "promote", "--write", "--replays", "2")
    assert r.returncode == 1, r.stdout + r.stderr
    stdout, files = fuzz(root, 3)
    third = said(root, stdout, files)
    assert {w for w, _ in third.values()} == {PROMOTED}, third
    assert len({n for _, n in third.values()}) == 1, third

    # Fixed: the promoted bug's input passes once the code is fixed (told by findings --replay).
    (root / "shelf.py").write_text(LIBRARY.replace("return TABLE[key]", "return TABLE.get(key)"))
    assert "(promoted)" in assay(root, "findings").stdout  # nothing replayed: not known to be fixed
    assert "(fixed)" in assay(root, "findings", "--replay").stdout


def test_status_rules() -> None:
    none = Promotions()
    assert status_of("b1", ["s"], none, seen_before=False) == NEW
    assert status_of("b1", ["s"], none, seen_before=True) == KNOWN
    by_sig = Promotions(signatures={"s"})
    assert status_of("b1", ["t", "s"], by_sig, seen_before=False) == PROMOTED
    assert status_of("b1", ["t"], Promotions(bug_ids={"b1"}), seen_before=True) == PROMOTED
    assert status_of("b1", ["s"], by_sig, seen_before=True, passes=True) == FIXED
    assert status_of("b1", ["s"], none, seen_before=True, passes=True) == KNOWN  # no test: not "fixed"


def test_read_promotions_from_the_regressions_folder(tmp_path) -> None:
    (tmp_path / "buckets.json").write_text(json.dumps({"panic:x": "tests/fuzz_regressions/test_t_KeyError_abc123.py"}))
    (tmp_path / "test_t_KeyError_abc123.py").write_text("")
    found = read_promotions(tmp_path)
    assert found.signatures == {"panic:x"} and found.bug_ids == {"abc123"}
    assert read_promotions(tmp_path / "missing").signatures == set()


def test_bug_id_is_the_same_with_or_without_a_library_in_sources(tmp_path) -> None:
    """A bug raised in an installed package keeps its id when the package joins ``sources``."""
    site = Path(sysconfig.get_paths()["purelib"])
    library = Frame("isodate.isoduration", "parse_duration", str(site / "isodate" / "isoduration.py"), 120)
    project = Frame("tinyproj", "parse", str(tmp_path / "tinyproj" / "__init__.py"), 7)
    harness = Frame("fuzz_parse", "target", str(tmp_path / "fuzz" / "fuzz_parse.py"), 5)
    verdict = Verdict(
        "panic",
        "builtins.OverflowError@isodate.isoduration:parse_duration",
        exception=ExceptionInfo("builtins.OverflowError", "big", (library, project, harness)),
    )
    narrow = identify(verdict, [project.file, harness.file], harness.file)
    wide = identify(verdict, [project.file, harness.file, os.path.dirname(library.file)], harness.file)
    assert narrow.id == wide.id
    assert narrow.frame == library  # where it was raised, in both
    moved = Frame(library.module, library.qualname, library.file, 140)  # a line edit in the library
    edited = Verdict(
        verdict.oracle, verdict.key, exception=ExceptionInfo("builtins.OverflowError", "big", (moved, project, harness))
    )
    assert identify(edited, [project.file, harness.file], harness.file).id == narrow.id
