"""``assay init`` on three small projects of the issue-42 kind: every public input function, promises kept.

The projects (``init_projects/``: a flat package wrapping toml 0.10.2, a src layout
re-exporting from a submodule wrapping croniter 1.0.1, a single module wrapping
asn1crypto 1.5.1) are described with their public input functions, documented errors
and known library bugs in ``init_projects/known_bugs.json``.  After ``assay init`` a
target must call each public input function, and ``assay fuzz`` over those targets must
report none of the project's documented errors as a bug (the project working as
documented).  The checks themselves are shown to pass on hand-written targets of the
wanted shape (``bench/init_reference/``) and to fail on a placeholder target and on a
target without the project's contract.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROJECTS = HERE / "init_projects"
REFERENCE = HERE.parent.parent / "bench" / "init_reference"
KNOWN: dict[str, dict] = json.loads((PROJECTS / "known_bugs.json").read_text())
#: The library each project wraps (in the dev extra); a project whose library is absent is skipped.
LIBRARIES = {"tomlcfg": "toml", "cronplan": "croniter", "certpeek": "asn1crypto"}
#: Cases per target in the default run: enough for each target to meet its documented error many times.
CASES = 300
#: Cases per target in the slow run.
SLOW_CASES = 5000


def copy_project(tmp_path: Path, name: str) -> tuple[Path, dict[str, str]]:
    """A fresh copy of the project and an environment that imports it (root and src/) and this tree."""
    pytest.importorskip(LIBRARIES[name], reason=f"{name} wraps {KNOWN[name]['library']} (dev extra)")
    folder = tmp_path / name
    shutil.copytree(PROJECTS / name, folder)
    paths = [str(folder / "src"), str(folder)]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return folder, {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONHASHSEED": "0"}


def assay(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m assay ARGS`` run in the project folder."""
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=900
    )


def functions_without_target(folder: Path, name: str) -> list[str]:
    """The project's public input functions that no file under fuzz/ calls."""
    called: set[str] = set()
    for path in (folder / "fuzz").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                called.add(node.attr)
            elif isinstance(node, ast.Name):
                called.add(node.id)
    return [f for f in KNOWN[name]["functions"] if f not in called]


def fuzz_report(folder: Path, env: dict[str, str], cases: int) -> dict:
    """The JSON report of ``assay fuzz`` over the project's fuzz/ targets, seed 1."""
    report = folder / "report.json"
    r = assay(folder, env, "fuzz", "--fuzz-cases", str(cases), "--fuzz-seed", "1", "--report", str(report))
    assert r.returncode in (0, 1), r.stderr[-3000:]
    return json.loads(report.read_text())


def documented_errors_reported(report: dict, name: str) -> list[str]:
    """The bugs in the report whose exception is one of the project's documented errors."""
    documented = set(KNOWN[name]["documented_errors"])
    return [f"{b['exception']} in {b['targets']}" for b in report["bugs"] if b["exception"] in documented]


def check_init(tmp_path: Path, name: str, cases: int) -> None:
    folder, env = copy_project(tmp_path, name)
    r = assay(folder, env, "init", "--project", str(folder))
    assert r.returncode == 0, r.stderr
    assert functions_without_target(folder, name) == []
    report = fuzz_report(folder, env, cases)
    idle = [t for t, outcome in report["targets"].items() if outcome["cases"] < cases]
    assert idle == [], f"targets that did not run their cases: {idle}"
    assert documented_errors_reported(report, name) == []


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_init_targets_every_public_input_function_and_keeps_its_promises(tmp_path: Path, name: str) -> None:
    check_init(tmp_path, name, CASES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KNOWN))
def test_init_keeps_its_promises_over_a_long_run(tmp_path: Path, name: str) -> None:
    check_init(tmp_path, name, SLOW_CASES)


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_checks_pass_on_targets_of_the_wanted_shape(tmp_path: Path, name: str) -> None:
    """The reference targets call every function and keep every contract: the checks can pass."""
    folder, env = copy_project(tmp_path, name)
    (folder / "fuzz").mkdir()
    shutil.copy(REFERENCE / f"fuzz_{name}.py", folder / "fuzz" / f"fuzz_{name}.py")
    assert functions_without_target(folder, name) == []
    report = fuzz_report(folder, env, 100)
    assert sorted(report["targets"]) != []
    assert documented_errors_reported(report, name) == []


def test_checks_fail_on_a_placeholder_and_on_a_missing_contract(tmp_path: Path) -> None:
    """A placeholder misses every function; a target without the contract reports the documented error."""
    folder, env = copy_project(tmp_path, "certpeek")
    (folder / "fuzz").mkdir()
    target = folder / "fuzz" / "fuzz_certpeek.py"
    target.write_text(
        "import json\n\nimport assay\n\n\n@assay.target\ndef fuzz(data: bytes) -> None:\n    json.loads(data)\n"
    )
    assert functions_without_target(folder, "certpeek") == KNOWN["certpeek"]["functions"]
    target.write_text(
        "import assay\nimport certpeek\n\n\n@assay.target(expected=(ValueError,))\n"
        "def fuzz(data: bytes) -> None:\n    certpeek.key_algorithm(data)\n"
    )
    assert documented_errors_reported(fuzz_report(folder, env, 20), "certpeek") == [
        "certpeek.CertificateError in ['fuzz']"
    ]
