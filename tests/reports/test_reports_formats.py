"""--report, --junit, --sarif and --html from one real run, each checked against its published schema.

The run fuzzes three examples on the standard library (email's address header
parser and html.parser, which have real bugs, and urllib.parse's query round trip,
which is clean) with a case cap and a fixed seed.  The JSON report is validated
against docs/report-schema.json, the SARIF log against the official OASIS 2.1.0
schema, the JUnit file against the Jenkins/Surefire junit-10.xsd (both vendored in
tests/reports/data with their origin), and the HTML page in Debian's chromium.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT

DATA = Path(__file__).parent / "data"
EXAMPLES = ROOT / "examples"
TARGETS = ("email_address_header", "html_parser_rechunk", "url_query_roundtrip")
#: Set to a file name to keep the browser test's screenshot of the page, for people to look at.
SCREENSHOT_ENV = "ASSAY_REPORT_SCREENSHOT"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("formats")
    files = {name: out / name for name in ("report.json", "junit.xml", "run.sarif", "run.html")}
    args = [
        sys.executable,
        "-m",
        "assay",
        "fuzz",
        "--project",
        str(EXAMPLES),
        "--fuzz-cases",
        "200",
        "--fuzz-seed",
        "1",
        "--fuzz-corpus",
        str(out / "corpus"),
        "--fuzz-artifacts",
        str(out / "artifacts"),
        "--report",
        str(files["report.json"]),
        "--junit",
        str(files["junit.xml"]),
        "--sarif",
        str(files["run.sarif"]),
        "--html",
        str(files["run.html"]),
    ]
    for t in TARGETS:
        args += ["--fuzz-target", t]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stderr + r.stdout
    for flag, name in (("report", "report.json"), ("junit", "junit.xml"), ("sarif", "run.sarif"), ("html", "run.html")):
        assert f"{flag}: {files[name]}" in r.stdout
    return out, files, json.loads(files["report.json"].read_text())


# -- JSON ----------------------------------------------------------------------------------------
def test_json_report_matches_its_documented_schema(run):
    _, _, report = run
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(report)
    assert report["report_version"] == 2 and report["project_root"] == str(EXAMPLES)


def test_schema_rejects_what_a_consumer_could_not_read(run):
    _, _, report = run
    validator = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "report-schema.json").read_text()))
    broken = []
    for damage in (
        lambda r: r.pop("bugs"),
        lambda r: r["bugs"][0].pop("replay"),
        lambda r: r["targets"]["email_address_header"]["timeline"].append([1, 2.0, 3]),
        lambda r: r.__setitem__("report_version", 1),
    ):
        bad = copy.deepcopy(report)
        damage(bad)
        broken.append(not validator.is_valid(bad))
    assert broken == [True, True, True, True]


def test_bugs_group_findings_and_every_finding_names_its_bug(run):
    _, _, report = run
    bugs = {b["id"]: b for b in report["bugs"]}
    findings = [(name, f) for name, t in report["targets"].items() for f in t["findings"]]
    assert 0 < len(bugs) <= len(findings)
    assert {f["bug"] for _, f in findings} == set(bugs)
    for name, f in findings:
        bug = bugs[f["bug"]]
        assert f["signature"] in bug["signatures"] and name in bug["targets"]
    for bug in bugs.values():
        assert bug["occurrences"] >= len(bug["signatures"])
        assert bug["replay"].startswith(f"assay replay --project {EXAMPLES} ") and bug["artifacts"][0] in bug["replay"]
        here = bug["project_location"]
        # email and html.parser are stdlib: the project's code is the harness that called into them.
        assert here and (EXAMPLES / here["path"]).is_file() and here["path"].startswith("fuzz/")
        assert bug["traceback"] and bug["input_size"] is not None
    assert not report["targets"]["url_query_roundtrip"]["findings"]


def test_timeline_is_bounded_ordered_and_ends_at_the_final_numbers(run):
    from assay.core.timeline import MAX_POINTS

    _, _, report = run
    for name, t in report["targets"].items():
        points = t["timeline"]
        assert 2 <= len(points) <= MAX_POINTS, name
        assert points[0] == [0, 0.0, 0, 0]
        for a, b in zip(points, points[1:]):
            assert a[0] <= b[0] and a[1] <= b[1] and a[2] <= b[2] and a[3] <= b[3], (name, a, b)
        assert points[-1][0] == t["cases"] and points[-1][2] == t["coverage"]["edges"]
        assert points[-1][3] == t["corpus_size"]


# -- JUnit ---------------------------------------------------------------------------------------
def test_junit_validates_against_the_surefire_schema(run):
    xmlschema = pytest.importorskip("xmlschema")
    _, files, report = run
    xmlschema.XMLSchema(str(DATA / "junit-10.xsd")).validate(str(files["junit.xml"]))
    suite = ET.parse(files["junit.xml"]).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == set(TARGETS)
    bugs = {b["id"]: b for b in report["bugs"]}
    for name, case in cases.items():
        expected = {f["bug"] for f in report["targets"][name]["findings"]}
        failures = case.findall("failure")
        assert len(failures) == len(expected), name
        for failure in failures:
            bug = next(bugs[i] for i in expected if f"(bug {i})" in failure.get("message"))
            assert failure.get("type") == bug["oracle"] and bug["replay"] in failure.text
    assert suite.get("tests") == "3" and suite.get("failures") == "2"


def test_junit_keeps_xml_valid_when_a_message_echoes_control_bytes():
    from assay.reports.junit import junit_xml

    bug = {
        "id": "0123456789",
        "key": "panic:ValueError@m:f",
        "oracle": "panic",
        "exception": "builtins.ValueError",
        "message": "bad byte \x00\x1b[31m in input",
        "harness": False,
        "location": None,
        "project_location": None,
        "signatures": ["panic:x"],
        "occurrences": 1,
        "replay": "assay replay t a",
        "traceback": "tb \x07",
    }
    target = {
        "elapsed": 1.0,
        "findings": [{"bug": "0123456789"}],
        "status": "findings",
        "seed": 1,
        "cases": 5,
        "execs_per_sec": 5.0,
        "coverage": {"edges": 1},
        "corpus_size": 1,
    }
    doc = junit_xml({"bugs": [bug], "targets": {"t": target}, "skipped": {"other": "not in shard 2/2"}, "elapsed": 1.0})
    root = ET.fromstring(doc)  # a raw NUL or ESC would make this raise
    failure = root.find("testsuite/testcase/failure")
    assert "\\x00\\x1b[31m" in failure.get("message") and "tb \\x07" in failure.text
    assert root.find("testsuite/testcase[@name='other']/skipped").get("message") == "not in shard 2/2"


# -- SARIF ---------------------------------------------------------------------------------------
def test_sarif_validates_against_the_official_2_1_0_schema(run):
    _, files, report = run
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
    log = json.loads(files["run.sarif"].read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["version"] == "2.1.0"
    (sarif_run,) = log["runs"]
    results = sarif_run["results"]
    assert len(results) == len(report["bugs"])  # one result per bug, not per signature
    rules = [r["id"] for r in sarif_run["tool"]["driver"]["rules"]]
    # The checkout is a git repository: paths are from its root, where code scanning resolves them.
    assert sarif_run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
    fingerprints = set()
    for result, bug in zip(results, report["bugs"]):
        assert rules[result["ruleIndex"]] == result["ruleId"] == bug["oracle"]
        (loc,) = result["locations"]
        art = loc["physicalLocation"]["artifactLocation"]
        assert art["uriBaseId"] == "%SRCROOT%" and art["uri"].startswith("examples/fuzz/")
        assert (ROOT / art["uri"]).is_file()
        assert loc["physicalLocation"]["region"]["startLine"] == bug["project_location"]["line"]
        fingerprints.add(result["partialFingerprints"]["assayBugKey/v1"])
        assert bug["replay"] in result["message"]["text"]
    assert len(fingerprints) == len(results)


def test_sarif_points_a_bug_without_traceback_at_its_harness():
    from assay.reports.sarif import sarif_log

    bug = {
        "id": "0123456789",
        "key": "wedge:timeout",
        "oracle": "wedge",
        "exception": None,
        "message": "",
        "harness": False,
        "location": None,
        "project_location": None,
        "harness_file": "fuzz/t.py",
        "targets": ["t"],
        "signatures": ["wedge:timeout"],
        "occurrences": 2,
        "artifacts": ["a"],
        "replay": None,
    }
    (result,) = sarif_log({"bugs": [bug], "assay_version": "0", "status": "findings"})["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "fuzz/t.py"


def test_sarif_paths_are_from_the_repository_root(tmp_path):
    from assay.reports.sarif import source_root

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub" / "proj").mkdir(parents=True)
    (tmp_path / "plain").mkdir()
    assert source_root(str(tmp_path / "repo" / "sub" / "proj")) == (str(tmp_path / "repo"), "sub/proj/")
    assert source_root(str(tmp_path / "repo")) == (str(tmp_path / "repo"), "")
    assert source_root(str(tmp_path / "plain"))[1] == ""


# -- HTML in a real browser ----------------------------------------------------------------------
def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it; apt-get install chromium)")
    return found


def _browse(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=3000",  # let the page settle (fonts painted) before the screenshot or dump
        *extra,
        page.as_uri(),
    ]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, "LANG": "C.UTF-8"})


def _console(stderr: str) -> list[str]:
    """Messages the page wrote to the console (chromium logs each as INFO:CONSOLE)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_console_check_sees_a_script_error(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><script>notDefinedAnywhere();</script></body></html>")
    r = _browse(page, tmp_path / "profile", "--dump-dom")
    assert any("notDefinedAnywhere" in line for line in _console(r.stderr)), r.stderr[-2000:]


def test_html_page_renders_in_chromium_with_no_console_output(run, tmp_path):
    _, files, report = run
    page = files["run.html"]
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
    shot = tmp_path / "report.png"
    r = _browse(page, tmp_path / "profile", "--window-size=1280,2400", f"--screenshot={shot}")
    assert r.returncode == 0, r.stderr[-2000:]
    assert _console(r.stderr) == []
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1280 and len(png) > 20_000
    if os.environ.get(SCREENSHOT_ENV):
        shutil.copyfile(shot, os.environ[SCREENSHOT_ENV])
    dom = _browse(page, tmp_path / "profile2", "--dump-dom")
    assert _console(dom.stderr) == []
    series = 2 * 2 * len(TARGETS)  # edges and corpus, against cases and against seconds, per target
    assert f'data-plots-drawn="{series}"' in dom.stdout  # the script ran and the browser laid out every line
    for bug in report["bugs"]:
        assert f'id="bug-{bug["id"]}"' in dom.stdout
    assert "00000000  " in dom.stdout  # an input hexdump
    assert f"--fuzz-seed {report['master_seed']}" in dom.stdout


# -- flags ---------------------------------------------------------------------------------------
def test_bad_output_paths_are_refused_before_anything_runs(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for flag in ("--junit", "--sarif", "--html"):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "assay",
                "fuzz",
                "--project",
                str(EXAMPLES),
                "--fuzz-target",
                "url_query_roundtrip",
                "--fuzz-cases",
                "10",
                "--fuzz-corpus",
                str(tmp_path / "c"),
                flag,
                str(blocker / "out"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 2 and f"{flag} {blocker / 'out'}: {blocker} is a file" in r.stderr, r.stderr
        assert not (tmp_path / "c").exists()  # nothing ran


def test_html_without_jinja2_says_what_to_install(monkeypatch):
    from assay.core.errors import ConfigError
    from assay.reports.html import require_jinja2

    monkeypatch.setitem(sys.modules, "jinja2", None)  # what an install without the html extra sees
    with pytest.raises(ConfigError, match=r"pip install 'jinja2>=3.1'"):
        require_jinja2()


def test_html_page_of_a_clean_run_without_timeline():
    from assay.reports.html import hexdump, html_page

    target = {
        "seed": 7,
        "cases": 0,
        "elapsed": 0.0,
        "execs_per_sec": 0.0,
        "coverage": {"edges": 0, "lines": 0},
        "features": 0,
        "corpus_size": 0,
        "corpus_additions": [],
        "findings": [],
        "status": "clean",
        "timeline": [],
        "backend": "native",
        "schedule_digest": None,
        "strategy": None,
    }
    report = {
        "report_version": 2,
        "assay_version": "0",
        "created": "now",
        "status": "clean",
        "master_seed": 7,
        "elapsed": 0.0,
        "error": None,
        "targets": {"<b>t</b>": target},
        "bugs": [],
        "skipped": {},
        "arguments": {"fuzz_cases": 5},
        "project_root": None,
        "runtime": {"python": {"implementation": "cpython", "version": "3.12"}, "platform": "Linux"},
    }
    page = html_page(report)
    assert "No findings." in page and "libFuzzer runs it" in page and "<svg" not in page
    assert "&lt;b&gt;t&lt;/b&gt;" in page and "<b>t</b>" not in page  # names are escaped
    assert hexdump(b"GET /\x00\xff" * 3).splitlines()[0] == (
        "00000000  47 45 54 20 2f 00 ff 47 45 54 20 2f 00 ff 47 45  GET /..GET /..GE"
    )
