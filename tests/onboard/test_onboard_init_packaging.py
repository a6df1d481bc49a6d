"""`assay init` keeps a flat-layout project buildable: its fuzz/ folder is not a second package.

setuptools' automatic discovery refuses a flat layout with two top-level folders of
Python files, so `pip install -e .` (and the install step of the CI workflows init
writes) failed as soon as init had written fuzz/; beside a single module, it packaged
fuzz/ and left the module out.  Each test builds the project for
real with pip and setuptools (offline: --no-build-isolation, --no-index).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

PARSER = "def parse(text):\n    return text.split(',')\n"


def _init(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", "init"], cwd=project, capture_output=True, text=True, timeout=120
    )


def _wheel(project: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(out),
            ".",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _files_in_wheel(out: Path) -> set[str]:
    [wheel] = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        return {name for name in z.namelist() if ".dist-info/" not in name}


@pytest.mark.parametrize("shape", ["package", "module"])
def test_a_flat_project_still_builds_after_init(tmp_path, shape):
    project = tmp_path / "flatcsv"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "flatcsv"\nversion = "0.1"\n')
    if shape == "package":
        (project / "flatcsv").mkdir()
        (project / "flatcsv" / "__init__.py").write_text(PARSER)
        expected = {"flatcsv/__init__.py"}
    else:
        (project / "flatcsv.py").write_text(PARSER)
        expected = {"flatcsv.py"}
    r = _init(project)
    assert r.returncode == 0, r.stderr
    assert (project / "fuzz" / "fuzz_flatcsv.py").is_file()
    assert "named flatcsv in [tool.setuptools]" in r.stdout, r.stdout
    r = _wheel(project, tmp_path / "dist")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _files_in_wheel(tmp_path / "dist") == expected

    # Non-vacuity: without the entry init wrote, a package project cannot be built, and a module
    # project's wheel ships fuzz/ as a package.
    doc = (project / "pyproject.toml").read_text()
    head, _, _ = doc.partition("# Written by assay init: setuptools")
    (project / "pyproject.toml").write_text(head)
    assert "setuptools" not in tomllib.loads(head).get("tool", {})
    r = _wheel(project, tmp_path / "dist-without")
    if shape == "package":
        assert r.returncode != 0 and "flat-layout" in r.stdout + r.stderr, r.stdout + r.stderr
    else:
        assert r.returncode == 0 and "fuzz/fuzz_flatcsv.py" in _files_in_wheel(tmp_path / "dist-without")


def test_src_layouts_and_other_backends_are_left_alone(tmp_path):
    src = tmp_path / "srcproj"
    (src / "src" / "srcproj").mkdir(parents=True)
    (src / "src" / "srcproj" / "__init__.py").write_text(PARSER)
    (src / "pyproject.toml").write_text('[project]\nname = "srcproj"\nversion = "0.1"\n')
    hatch = tmp_path / "hatchproj"
    (hatch / "hatchproj").mkdir(parents=True)
    (hatch / "hatchproj" / "__init__.py").write_text(PARSER)
    (hatch / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "hatchproj"\nversion = "0.1"\n'
    )
    for project in (src, hatch):
        r = _init(project)
        assert r.returncode == 0, r.stderr
        assert "[tool.setuptools]" not in r.stdout
        assert "setuptools" not in tomllib.loads((project / "pyproject.toml").read_text()).get("tool", {})
    r = _wheel(src, tmp_path / "dist")
    assert r.returncode == 0, r.stdout + r.stderr
    assert _files_in_wheel(tmp_path / "dist") == {"srcproj/__init__.py"}
