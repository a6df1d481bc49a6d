"""Default coverage sources are the packages a target imports; a scope that sees nothing says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assay.core.platform_check import problem
from assay.harness.imported import default_scope, imported_packages


def assay(*args, cwd, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


H11_TARGET = """\
import json

import assay
import h11
import hypothesis
from _helper import helper_value  # a harness helper beside the target: not the code under test


@assay.target(expected=(h11.RemoteProtocolError,))
def h11_server(data: bytes):
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    while conn.next_event() not in (h11.NEED_DATA, h11.PAUSED):
        pass
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.assay]\ntargets = ["fuzz"]\n')
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "fuzz_h11_default.py").write_text(H11_TARGET)
    (tmp_path / "fuzz" / "_helper.py").write_text("helper_value = 1\n")
    return tmp_path


def test_default_sources_are_the_imported_packages(tmp_path):
    project = _project(tmp_path)
    r = assay("targets", "--json", cwd=project)
    assert r.returncode == 0, r.stderr
    [listed] = json.loads(r.stdout)
    assert listed["sources"] == ["h11"] and listed["sources_from"] == "imports"  # not json, assay, hypothesis, _helper
    assert "h11  (imported by the target)" in assay("targets", cwd=project).stdout


def test_default_sources_give_the_library_coverage(tmp_path):
    """The same target and seed: the default scope sees h11's edges, the harness file alone almost none."""
    project = _project(tmp_path)
    runs = {}
    for label, extra in (("default", []), ("harness only", ["--sources", "fuzz/fuzz_h11_default.py"])):
        report = tmp_path / f"{label}.json"
        r = assay(
            "fuzz",
            "--fuzz-cases",
            "300",
            "--fuzz-seed",
            "3",
            "--fuzz-corpus",
            str(tmp_path / label),
            "--report",
            str(report),
            *extra,
            cwd=project,
        )
        assert r.returncode in (0, 1), r.stderr
        runs[label] = (json.loads(report.read_text())["targets"]["h11_server"], r.stderr)
    default, harness_only = runs["default"][0], runs["harness only"][0]
    assert default["coverage"]["edges"] >= 10 * max(1, harness_only["coverage"]["edges"])
    assert any(s.endswith("/h11") for s in default["sources"])
    assert "in h11 (" in runs["harness only"][1] and "--sources h11" in runs["harness only"][1]  # names the package
    assert "coverage scope" not in runs["default"][1]


def test_scope_hint_names_the_fix_for_stdlib_only_targets(tmp_path):
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "crc.py").write_text(
        "import zlib\n\nimport assay\n\n\n@assay.target\ndef crc(data: bytes):\n    zlib.crc32(data)\n"
    )
    r = assay("fuzz", "--fuzz-cases", "50", "--fuzz-seed", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "crc: only" in r.stderr and "--sources PKG" in r.stderr and "imports no package" in r.stderr


def test_imported_packages_rules(tmp_path):
    import types

    import h11

    module = types.ModuleType("harness_under_test")
    module.__file__ = str(tmp_path / "fuzz" / "harness_under_test.py")
    module.__dict__.update(h11=h11, json=json, Path=Path, conn=h11.Connection(h11.CLIENT), sys=sys, problem=problem)
    assert imported_packages(module, tmp_path) == ("h11",)  # stdlib, assay and the module itself left out


def test_project_packages_come_first_and_big_libraries_are_watched(tmp_path):
    import types

    import dask
    import h11

    local = tmp_path / "mylib"
    local.mkdir()
    (local / "__init__.py").write_text("")
    mylib = types.ModuleType("mylib")
    mylib.__file__ = str(local / "__init__.py")
    mylib.Connection = h11.Connection  # the project's package uses h11: the library it wraps
    module = types.ModuleType("fuzz_mine")
    module.__file__ = str(tmp_path / "fuzz" / "fuzz_mine.py")
    module.__dict__.update(dask=dask)
    saved = sys.modules.get("mylib")
    sys.modules["mylib"] = mylib
    try:
        assert default_scope(module, tmp_path) == {"dask": "imported by the target"}  # over 150 files: watched
        module.mylib = mylib
        assert default_scope(module, tmp_path) == {
            "mylib": "project package",
            "dask": "imported by the target",
            "h11": "imported by mylib",
        }
        assert imported_packages(module, tmp_path) == ("mylib", "dask", "h11")
    finally:
        if saved is None:
            del sys.modules["mylib"]
        else:
            sys.modules["mylib"] = saved


def test_platform_check():
    assert problem("linux", "cpython", (3, 12)) is None and problem("darwin", "cpython", (3, 13)) is None
    assert "WSL" in problem("win32", "cpython", (3, 12))
    assert "3.12+" in problem("linux", "cpython", (3, 11)) and "CPython" in problem("linux", "pypy", (3, 12))
    assert problem() is None  # the interpreter running these tests is supported
