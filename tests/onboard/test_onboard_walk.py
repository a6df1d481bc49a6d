"""A new user's walk, scripted: wheel, fresh venv, `assay init`, `assay fuzz`, existing harnesses unchanged.

The venv is genuinely fresh (``python -m venv --without-pip``, no system site
packages); assay goes in from the wheel built here (offline: ``--no-build-isolation``
with the dev extra's setuptools, and ``--no-deps`` since the core has no
dependencies).  The third-party libraries the walk's harnesses exercise (hypothesis,
jsonschema, h11, and tomli-w for the README's example) are linked in from the test runner's
environment, one folder per imported top-level package, instead of being downloaded:
a test must not depend on a package registry.  atheris is *not* linked in: the walk
proves harnesses written for it run without it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = Path(__file__).resolve().parent / "harnesses"
#: Libraries the walk's harnesses and tests import (with their own dependencies).
LIBRARIES = ("hypothesis", "jsonschema", "h11", "tomli_w", "pytest", "jinja2")

PARSER = '''\
"""A small INI reader: [sections], key = value lines and \\\\n escapes."""


def parse(text):
    out, section = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            if not line.endswith("]"):
                raise ValueError(f"unclosed section {line!r}")
            section = out.setdefault(line[1:-1].strip(), {})
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"no '=' in {line!r}")
        value = value.strip()
        if "\\\\" in value:  # \\n and \\t escapes
            i = value.index("\\\\")
            value = value[:i] + {"n": "\\n", "t": "\\t"}.get(value[i + 1:i + 2], "") + value[i + 2:]
        section[key.strip()] = value  # the planted bug: a key before any [section]
    return out
'''
GIVEN_TEST = """\
from hypothesis import given, settings, strategies as st

import tinyini


@settings(deadline=None)  # a loaded CI machine must not fail the baseline on time
@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.from_regex(r"[a-z0-9 ]{0,8}", fullmatch=True)))
def test_roundtrip(pairs):
    text = "[s]\\n" + "".join(f"{k} = {v}\\n" for k, v in pairs.items())
    assert tinyini.parse(text) == {"s": {k: v.strip() for k, v in pairs.items()}}
"""


def _run(args, cwd, env, timeout=300):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _wheel(tmp_path: Path) -> Path:
    """Build assay's wheel from a copy of the sources (the build leaves build/ and *.egg-info behind)."""
    source = tmp_path / "assay-src"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    dist = tmp_path / "dist"
    r = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-v",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(dist),
            str(source),
        ],
        tmp_path,
        os.environ,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Warning" not in r.stderr + r.stdout, r.stderr  # builds cleanly: no deprecation warnings
    [wheel] = dist.glob("assay-*.whl")
    return wheel


def _link_libraries(into: Path) -> None:
    """Link each top-level module the libraries import from site-packages into ``into``."""
    code = (
        "import importlib, json, sys\n[importlib.import_module(n) for n in sys.argv[1:]]\n"
        "print(json.dumps({n: getattr(m, '__file__', None) for n, m in sys.modules.items() if '.' not in n}))"
    )
    r = _run([sys.executable, "-c", code, *LIBRARIES], into.parent, {**os.environ, "PYTHONPATH": ""})
    assert r.returncode == 0, r.stderr
    sites = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    into.mkdir()
    for name, file in json.loads(r.stdout).items():
        if not file or not any(file.startswith(site + os.sep) for site in sites) or name in ("assay", "atheris"):
            continue
        path = Path(file)
        home = path.parent if path.name.startswith("__init__.") else path
        if not (into / home.name).exists():
            (into / home.name).symlink_to(home)


@pytest.mark.slow
def test_new_user_walk(tmp_path):
    wheel = _wheel(tmp_path)
    venv = tmp_path / "venv"
    r = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, os.environ)
    assert r.returncode == 0, r.stderr
    python = venv / "bin" / "python"
    r = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        tmp_path,
        os.environ,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    _link_libraries(tmp_path / "libraries")
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, {}
        ).stdout.strip()
    )
    (site / "walk_libraries.pth").write_text(str(tmp_path / "libraries") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PYTEST", "COV_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    def assay(*args, cwd):
        return _run(["assay", *args], cwd, env)

    # The installed assay is the wheel's, and atheris is not installed.
    where = _run([str(python), "-c", "import assay; print(assay.__file__)"], tmp_path, env).stdout
    assert where.startswith(str(venv)), where
    assert _run([str(python), "-c", "import atheris"], tmp_path, env).returncode == 1

    # The README's first command, with only the examples' own extras (h11, tomli-w) beside assay.
    r = assay(
        "fuzz",
        "--project",
        str(ROOT / "examples"),
        "--fuzz-target",
        "email_address_header",
        "--fuzz-cases",
        "200",
        "--fuzz-seed",
        "2",
        "--fuzz-corpus",
        str(tmp_path / "ex-corpus"),
        "--fuzz-artifacts",
        str(tmp_path / "ex-artifacts"),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1) and "email_address_header: " in r.stdout, r.stdout + r.stderr

    # A fresh package, not installed: nothing configured yet says what to do.
    project = tmp_path / "tinyini-project"
    (project / "tinyini").mkdir(parents=True)
    (project / "tinyini" / "__init__.py").write_text("from tinyini.reader import parse\n\n__all__ = ['parse']\n")
    (project / "tinyini" / "reader.py").write_text(PARSER)
    (project / "pyproject.toml").write_text('[project]\nname = "tinyini"\nversion = "0.1"\n')
    r = assay("fuzz", cwd=project)
    assert r.returncode == 2 and "assay init" in r.stderr and "Traceback" not in r.stderr

    # assay init, then assay fuzz from a subfolder: the planted bug is found in the package's code.
    r = assay("init", cwd=project)
    assert r.returncode == 0 and "tinyini.parse" in r.stdout, r.stderr
    r = assay("targets", cwd=project / "tinyini")
    assert r.returncode == 0 and "tinyini  (project package)" in r.stdout, r.stderr
    r = assay("fuzz", "--fuzz-cases", "2000", "--fuzz-seed", "1", cwd=project / "tinyini")
    assert r.returncode == 1, r.stdout + r.stderr
    first_run = r.stdout
    assert "[panic] TypeError: " in r.stdout and re.search(r"raised at \S*tinyini/reader\.py:\d+ in parse", r.stdout)
    assert (project / ".assay" / "artifacts" / "tinyini_parse").is_dir()

    # A Hypothesis test, unchanged, from the tests folder.
    (project / "tests").mkdir()
    (project / "tests" / "test_tinyini.py").write_text(GIVEN_TEST)
    r = assay(
        "fuzz", "test_tinyini.py::test_roundtrip", "--fuzz-cases", "200", "--fuzz-seed", "1", cwd=project / "tests"
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test_tinyini:test_roundtrip: 200 cases" in r.stdout

    # The rest of the first hour: the findings, the printed reproduce command pasted as printed in
    # another folder, the reports, promote, then mutation testing over the promoted (failing) test.
    r = assay("findings", "--project", str(project), cwd=tmp_path)
    assert r.returncode == 0 and "(new) [panic] TypeError" in r.stdout, r.stdout + r.stderr
    [bug_id] = re.findall(r"^  ([0-9a-f]{10})  \(new\)", r.stdout, re.M)
    [reproduce] = re.findall(r"reproduce: (.+)$", first_run, re.M)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = _run(shlex.split(reproduce), elsewhere, env)
    assert r.returncode == 1 and "verdict: panic" in r.stdout, r.stdout + r.stderr
    reports = {kind: tmp_path / f"run.{kind}" for kind in ("json", "html", "sarif", "xml")}
    r = assay(
        "fuzz",
        "--fuzz-cases",
        "2000",
        "--fuzz-seed",
        "1",
        "--report",
        str(reports["json"]),
        "--html",
        str(reports["html"]),
        "--sarif",
        str(reports["sarif"]),
        "--junit",
        str(reports["xml"]),
        cwd=project,
    )
    assert r.returncode == 1 and f"bug {bug_id} (known)" in r.stdout, r.stdout + r.stderr
    [bug] = json.loads(reports["json"].read_text())["bugs"]
    assert bug["id"] == bug_id and bug["status"] == "known", bug
    assert bug_id in reports["html"].read_text() and bug_id in reports["sarif"].read_text()
    assert f"(bug {bug_id}) [known]" in reports["xml"].read_text()
    r = assay("promote", "--write", cwd=project)
    assert r.returncode == 1 and "1 promoted" in r.stdout, r.stdout + r.stderr
    [regression] = (project / "tests" / "fuzz_regressions").glob(f"test_*{bug_id}.py")
    r = assay("findings", cwd=project)
    assert f"{bug_id}  (promoted)" in r.stdout, r.stdout
    r = assay("mutant", "--fuzz", "off", "--report", str(tmp_path / "mutants.json"), cwd=project)
    assert r.returncode in (0, 1), r.stdout + r.stderr  # 1: a mutant survived
    assert regression.name in r.stdout + r.stderr  # left out of the baseline, and said
    counts = json.loads((tmp_path / "mutants.json").read_text())
    assert counts["baseline"]["files"] == ["tinyini/__init__.py", "tinyini/reader.py"]  # not fuzz/
    assert re.search(r"mutants: \d+ \(\d+ killed", r.stdout) and counts["mutants"], r.stdout

    # atheris harnesses, unchanged: jsonschema's own OSS-Fuzz harness, and one using FuzzedDataProvider,
    # with libFuzzer flags and a corpus folder.
    harness = tmp_path / "libraries" / "jsonschema" / "tests" / "fuzz_validate.py"
    r = assay("fuzz", str(harness), "-runs=100", "-seed=1", cwd=project)
    assert r.returncode in (0, 1) and "fuzz_validate:test_schemas: " in r.stdout, r.stdout + r.stderr
    shutil.copy(HARNESSES / "atheris_h11.py", project / "fuzz_h11_atheris.py")
    (project / "h11-corpus").mkdir()
    r = assay("fuzz", "fuzz_h11_atheris.py", "-runs=300", "-seed=1", "-max_len=128", "h11-corpus", cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fuzz_h11_atheris:TestOneInput: " in r.stdout and any((project / "h11-corpus").iterdir())
