"""Docs that run: the site builds, the snippets run, the recipes parse.

What runs: every fenced block of ``docs/**/*.md`` and ``README.md`` whose language is
``python``, ``sh``, ``bash`` or ``console`` runs, unless the HTML comment on the line
right before its fence says ``<!-- docs-test: skip: REASON -->`` (a fragment that needs
the reader's own code, an install, a cluster; the reason is required).
``<!-- docs-test: exit N -->`` expects exit status N instead of 0. Blocks of any other
language (``text``, ``yaml``, ``toml``) are never run; the Kubernetes YAML and the Slurm
script are checked by :func:`test_recipes`.

* ``python`` blocks run with this interpreter in a fresh temp directory.
* ``sh``/``bash`` blocks run as one ``bash -e`` script; ``console`` blocks run their
  ``$ `` lines. Both run in a fresh temp directory holding a copy of ``examples/``, with
  an ``assay`` on ``PATH`` that is this interpreter's ``python -m assay`` (so the tree
  under test is what runs).

The README's tour runs in your own project, so :func:`test_tour` walks the same five
commands on the tour's toy project.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
RUN_LANGS = {"python", "sh", "bash", "console"}
MARK = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->")


def blocks(path: Path) -> list[tuple[int, str, str, str]]:
    """(line, language, marker, body) of every fenced block in ``path``."""
    found = []
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^( *)```(\S*)", lines[i])  # a fence inside a list item is indented
        if m:
            indent, lang = m.group(1), m.group(2)
            start = i
            j = i + 1
            while j < len(lines) and lines[j] != indent + "```":
                j += 1
            mark = MARK.fullmatch(lines[start - 1].strip()) if start else None
            body = "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines[start + 1 : j])
            found.append((start + 1, lang, mark.group(1) if mark else "", body))
            i = j + 1
        else:
            i += 1
    return found


def runnable() -> list[tuple[str, str, str, str]]:
    cases = []
    for page in PAGES:
        for line, lang, mark, body in blocks(page):
            if lang in RUN_LANGS and not mark.startswith("skip"):
                cases.append((f"{page.relative_to(ROOT)}:{line}", lang, mark, body))
    return cases


def expected_status(mark: str) -> int:
    m = re.fullmatch(r"exit (\d+)", mark)
    return int(m.group(1)) if m else 0


def test_markers_are_well_formed():
    """Every docs-test marker is ``skip: REASON`` or ``exit N``, and sits before a fence."""
    bad = []
    for page in PAGES:
        lines = page.read_text().split("\n")
        for n, text in enumerate(lines):
            m = MARK.search(text)
            if not m:
                continue
            mark = m.group(1)
            ok = (
                re.fullmatch(r"skip: \S.*|exit \d+", mark)
                and n + 1 < len(lines)
                and lines[n + 1].lstrip(" ").startswith("```")
            )
            if not ok:
                bad.append(f"{page.relative_to(ROOT)}:{n + 1}: {text.strip()}")
    assert not bad, "malformed docs-test markers:\n" + "\n".join(bad)


def test_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": _pythonpath()}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    for command in ("fuzz", "targets", "replay", "promote", "mutant", "merge-corpus", "init", "findings", "compose"):
        assert f"assay {command}" in cli, f"the generated command reference lacks `assay {command}`"


def _pythonpath() -> str:
    return os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))


@pytest.fixture
def shell_dir(tmp_path):
    """A temp folder with a copy of examples/ and an ``assay`` that runs this tree."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns(".assay", "__pycache__"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "assay"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m assay "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": _pythonpath()}
    env.pop("ASSAY_PULSE_EVERY", None)
    return tmp_path, env


@pytest.mark.parametrize("where,lang,mark,body", runnable(), ids=[c[0] for c in runnable()])
def test_snippet_runs(where, lang, mark, body, tmp_path, shell_dir):
    if lang == "python":
        script = tmp_path / "snippet.py"
        script.write_text(body)
        cmd, cwd, env = [sys.executable, str(script)], tmp_path, {**os.environ, "PYTHONPATH": _pythonpath()}
    else:
        cwd, env = shell_dir
        if lang == "console":
            body = "\n".join(line[2:] for line in body.split("\n") if line.startswith("$ "))
        cmd = ["bash", "-e", "-c", body]
    # A bound, not a speed test: the example campaigns take seconds idle, several times that on a busy machine.
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    want = expected_status(mark)
    assert proc.returncode == want, (
        f"{where}: exit {proc.returncode}, expected {want}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    )


def _recipes(lang: str) -> list[str]:
    page = ROOT / "docs" / "guides" / "scale-out.md"
    return [body for _, block_lang, _, body in blocks(page) if block_lang == lang]


def test_recipes():
    """The Kubernetes Job parses as YAML with the expected kind; the Slurm script passes ``bash -n``."""
    yaml = pytest.importorskip("yaml", reason="pyyaml is not installed")
    docs = [doc for body in _recipes("yaml") for doc in yaml.safe_load_all(body)]
    kinds = [(d.get("apiVersion"), d.get("kind")) for d in docs]
    assert ("batch/v1", "Job") in kinds, kinds
    job = next(d for d in docs if d.get("kind") == "Job")
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    args = " ".join(job["spec"]["template"]["spec"]["containers"][0]["args"])
    assert "--shard auto/4" in args

    scripts = [body for body in _recipes("sh") if "#SBATCH" in body]
    assert scripts, "the Slurm array script is missing from docs/guides/scale-out.md"
    for body in scripts:
        assert "--shard auto/4" in body
        proc = subprocess.run(["bash", "-n"], input=body, capture_output=True, text=True, timeout=10)
        assert proc.returncode == 0, proc.stderr


TOY = '''def parse(text):
    """Parse 'key=value;key=value' into a dict."""
    return dict(_pair(part) for part in text.split(";") if part)


def _pair(part):
    key, value = part.split("=")
    if key[0] == "#":
        raise ValueError("a comment is not a pair")
    return key.strip(), value.strip()
'''


def test_tour(shell_dir):
    """The README's tour on its toy project: init, fuzz, findings, promote, fix, mutant."""
    readme = (ROOT / "README.md").read_text()
    assert TOY in readme, "the README's tour parser changed: update TOY here"
    tmp, env = shell_dir
    proj = tmp / "tour"
    (proj / "src" / "tinyparse").mkdir(parents=True)
    (proj / "tests").mkdir()
    (proj / "pyproject.toml").write_text(
        '[project]\nname = "tinyparse"\nversion = "0.1"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'
    )
    (proj / "src" / "tinyparse" / "__init__.py").write_text(TOY)
    (proj / "tests" / "test_parse.py").write_text(
        'from tinyparse import parse\n\n\ndef test_parse():\n    assert parse("a=1; b = 2") == {"a": "1", "b": "2"}\n'
    )

    def assay(*args: str, status: int) -> str:
        proc = subprocess.run(["assay", *args], cwd=proj, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == status, (
            f"assay {' '.join(args)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
        )
        return proc.stdout

    assay("init", status=0)
    assert (proj / "fuzz" / "fuzz_tinyparse.py").is_file()
    out = assay("fuzz", "--fuzz-cases", "2000", "--fuzz-seed", "1", status=1)
    assert "IndexError" in out and "in _pair" in out
    assert "IndexError" in assay("findings", status=0)
    out = assay("promote", "--write", status=1)
    assert "1 promoted" in out, out
    assert list((proj / "tests" / "fuzz_regressions").glob("test_tinyparse_parse_IndexError_*.py"))
    init = proj / "src" / "tinyparse" / "__init__.py"
    init.write_text(TOY.replace('if key[0] == "#":', 'if key.startswith("#"):'))
    out = assay("mutant", "--jobs", "1", status=1)
    assert "survived" in out and "mutants:" in out, out
