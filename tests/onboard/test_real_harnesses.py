"""Thirteen real OSS-Fuzz atheris harnesses (tests/harnesses/real/) run unchanged under `assay fuzz FILE`.

Each run must end as a fuzz run ends (exit 0, or 1 with findings), never with "defines no
fuzz target", an import error or an infrastructure failure, and must watch the harnessed
library by default and reach edges inside it.  The floors are about 60% of what a
300-case run with seed 1 reached when this was written; the harness file alone gives at
most 15 edges (xmltodict's, which builds its input itself) and 0 to 6 for the others, so
each floor is met only with the library's code in view.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REAL = Path(__file__).resolve().parents[1] / "harnesses" / "real"

#: harness (relative to tests/harnesses/real) -> (target name, the library's module or package, edge floor).
HARNESSES = {
    "xmltodict/unparse_parse_fuzzer.py": ("unparse_parse_fuzzer:test_one_input", "xmltodict", 60),
    "sqlparse/fuzz_parse.py": ("fuzz_parse:TestOneInput", "sqlparse", 150),
    "tomlkit/fuzz_parser.py": ("fuzz_parser:TestOneInput", "tomlkit", 55),
    "python-email-validator/fuzz_validator.py": ("fuzz_validator:TestOneInput", "email_validator", 9),
    "idna/fuzz_encode_decode.py": ("fuzz_encode_decode:TestOneInput", "idna", 60),
    "urllib3/fuzz_urlparse.py": ("fuzz_urlparse:TestOneInput", "urllib3", 65),
    "jinja2/fuzz_env_jinja_lexer.py": ("fuzz_env_jinja_lexer:TestOneInput", "jinja2", 90),
    "isodate/fuzz_parse.py": ("fuzz_parse:TestOneInput", "isodate", 6),
    "ftfy/fuzz_fix.py": ("fuzz_fix:TestInput", "ftfy", 40),
    "decorator/fuzz_decorator.py": ("fuzz_decorator:TestInput", "decorator", 40),
    "mutagen/fuzz_parser.py": ("fuzz_parser:TestOneInput", "mutagen", 50),
    "packaging/fuzz_packaging.py": ("fuzz_packaging:TestOneInput", "packaging", 9),
    "python-markdown/fuzz_convert.py": ("fuzz_convert:TestOneInput", "markdown", 250),
}
#: Cases per harness in the default suite (about a second each) and in the slow version.
CASES, SLOW_CASES = 300, 3000
_BROKEN = ("defines no fuzz target", "failed to import", "Traceback", "infrastructure", "internal error")


def _run(harness: str, cases: int, folder: Path) -> tuple[subprocess.CompletedProcess, dict]:
    report = folder / "report.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            str(REAL / harness),
            f"-runs={cases}",
            "-seed=1",
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        cwd=folder,  # ftfy's harness writes temp.txt into the working folder
        timeout=600,
    )
    assert r.returncode in (0, 1), f"{harness}: exit {r.returncode}\n{r.stderr}\n{r.stdout}"
    assert not [word for word in _BROKEN if word in r.stderr], r.stderr
    data = json.loads(report.read_text())
    assert data["status"] in ("clean", "findings") and data["error"] is None, data["error"]
    assert all(t["status"] in ("clean", "findings") for t in data["targets"].values()), data["targets"]
    return r, data


def test_corpus_holds_at_least_ten_harnesses_and_each_is_listed():
    on_disk = sorted(str(p.relative_to(REAL)) for p in REAL.glob("*/*.py"))
    assert len(on_disk) >= 10 and on_disk == sorted(HARNESSES)
    readme = (REAL / "README.md").read_text()
    assert all(f"`{name}`" in readme for name in on_disk)


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_real_harness_runs_unchanged(harness, tmp_path):
    name, library, floor = HARNESSES[harness]
    before = (REAL / harness).read_bytes()
    _, report = _run(harness, CASES, tmp_path)
    outcome = report["targets"][name]
    assert outcome["cases"] >= CASES
    assert any(Path(source).stem == library for source in outcome["sources"]), outcome["sources"]
    assert outcome["coverage"]["edges"] >= floor, outcome["coverage"]
    assert (REAL / harness).read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_real_harness_longer_run_keeps_finding_edges(harness, tmp_path):
    name, _, floor = HARNESSES[harness]
    _, report = _run(harness, SLOW_CASES, tmp_path)
    outcome = report["targets"][name]
    assert outcome["cases"] >= SLOW_CASES and outcome["coverage"]["edges"] >= floor
