"""First-run errors are one message and exit 2; the project is found upward; `assay init` scaffolds."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest


def assay(*args, cwd, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "importlib" not in stderr and "<frozen" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


def test_no_fuzz_folder_says_run_init(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    r = assay("fuzz", "--fuzz-cases", "1", cwd=tmp_path)
    assert r.returncode == 2 and "no fuzz/ folder" in r.stderr and "assay init" in r.stderr
    _no_traceback(r.stderr)
    r = assay("targets", cwd=tmp_path / "..")  # nowhere near a project
    assert r.returncode == 2 and ("assay init" in r.stderr or "--project" in r.stderr)


def test_import_error_is_one_line_naming_the_module(tmp_path):
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "broken.py").write_text("import assay\nimport not_installed_anywhere_xyz\n")
    r = assay("fuzz", "--fuzz-cases", "1", cwd=tmp_path)
    assert r.returncode == 2 and "not_installed_anywhere_xyz" in r.stderr and "broken.py:2" in r.stderr
    assert "install 'not_installed_anywhere_xyz'" in r.stderr
    _no_traceback(r.stderr)
    (tmp_path / "fuzz" / "broken.py").write_text("import assay\ndef f(:\n")
    r = assay("fuzz", "--fuzz-cases", "1", cwd=tmp_path)
    assert r.returncode == 2 and "SyntaxError" in r.stderr and "broken.py:2" in r.stderr
    _no_traceback(r.stderr)


def test_subfolder_finds_the_project_and_the_root_is_importable(tmp_path):
    """A target importing a module beside pyproject.toml, run from two folders down, without PYTHONPATH."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rootmod"\n\n[tool.assay]\ntargets = ["fuzz"]\n')
    (tmp_path / "rootmod_helpers.py").write_text("def parse(data):\n    return data.split(b'=')\n")
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "fuzz_rootmod.py").write_text(
        "import assay\nimport rootmod_helpers\n\n\n@assay.target\ndef rootmod(data: bytes):\n"
        "    rootmod_helpers.parse(data)\n"
    )
    deep = tmp_path / "docs" / "sub"
    deep.mkdir(parents=True)
    (deep / "pyproject.toml.bak").write_text("not a pyproject")
    r = assay("fuzz", "--fuzz-cases", "20", "--fuzz-seed", "1", cwd=deep)
    assert r.returncode == 0, r.stderr
    assert "rootmod: 20 cases" in r.stdout and (tmp_path / ".assay" / "corpus" / "rootmod").is_dir()
    assert not (deep / ".assay").exists()
    r = assay("targets", "--json", cwd=deep)
    assert '"rootmod_helpers"' in r.stdout  # a root module is the user's code: in the default sources


def _package(root: Path) -> Path:
    (root / "pyproject.toml").write_text('[project]\nname = "kv-lines"\nversion = "0.1"\n')
    pkg = root / "src" / "kv_lines"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""key=value lines."""\nfrom .reader import loads\n\n__all__ = ["loads"]\n')
    (pkg / "reader.py").write_text(
        "def loads(text):\n"
        "    out = {}\n"
        "    for line in text.splitlines():\n"
        "        line = line.strip()\n"
        "        if not line or line.startswith('#'):\n"
        "            continue\n"
        "        if '=' not in line:\n"
        "            raise ValueError(f'no = in {line!r}')\n"
        "        key, value = line.split('=', 1)\n"
        "        if value.startswith('\"') and value.endswith('\"') and len(value) > 1:\n"
        "            value = value[1:-1]\n"
        "        out[key.strip()] = value.strip()\n"
        "    return out\n"
    )
    return root


def test_init_scaffolds_fuzz_folder_and_table_then_fuzz_runs(tmp_path):
    root = _package(tmp_path)
    r = assay("init", cwd=root)
    assert r.returncode == 0, r.stderr
    example = root / "fuzz" / "fuzz_kv_lines.py"
    assert example.is_file() and "kv_lines.loads(args.text(rest=True))" in example.read_text()
    table = tomllib.loads((root / "pyproject.toml").read_text())
    assert table["project"]["name"] == "kv-lines" and table["tool"]["assay"]["targets"] == ["fuzz"]
    r = assay("fuzz", "--fuzz-cases", "300", "--fuzz-seed", "1", cwd=root / "src")  # src/ layout, not installed
    assert r.returncode == 0, r.stderr + r.stdout
    assert "kv_lines_loads: 300 cases" in r.stdout and "nearly off" not in r.stderr
    # Run again: what exists is kept; --ci github adds the workflows to the same project.
    example.write_text(example.read_text() + "# edited\n")
    r = assay("init", "--ci", "github", cwd=root)
    assert r.returncode == 0, r.stderr
    assert "kept" in r.stdout and example.read_text().endswith("# edited\n")
    assert (root / ".github" / "workflows" / "assay-nightly.yml").is_file()
    assert (root / "pyproject.toml").read_text().count("[tool.assay]") == 1


def test_init_without_a_package_or_pyproject(tmp_path):
    r = assay("init", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "json.loads" in (tmp_path / "fuzz" / "fuzz_example.py").read_text()
    assert tomllib.loads((tmp_path / "pyproject.toml").read_text())["tool"]["assay"]["targets"] == ["fuzz"]
    r = assay("fuzz", "--fuzz-cases", "50", "--fuzz-seed", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_init_refuses_a_pyproject_it_cannot_extend(tmp_path):
    (tmp_path / "pyproject.toml").write_text("tool = { black = { line-length = 100 } }\n")
    r = assay("init", cwd=tmp_path)
    assert r.returncode == 2 and "[tool.assay]" in r.stderr and not (tmp_path / "fuzz").exists()


@pytest.mark.skipif(shutil.which("python3.11") is None, reason="no Python 3.11 on this machine")
def test_old_python_gets_one_clear_line():
    src = Path(__file__).resolve().parents[2] / "src"
    r = subprocess.run(
        ["python3.11", "-m", "assay", "fuzz"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert r.returncode == 2 and "assay needs CPython 3.12+" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
