"""The workflows `assay init --ci github` writes install assay from a place that exists.

assay is not on the package index, so ``pip install assay`` cannot work.  The workflows
carry ``ASSAY_SOURCE`` (where the assay that ran ``init`` came from) and each Install step
runs ``python -m pip install -e . "$ASSAY_SOURCE"``.  The test runs that very step, as
written in the YAML, in a fresh venv: offline (``--no-index --no-build-isolation`` added
to its pip command, setuptools linked in from the test runner's environment), against a
copy of this checkout, and then uses the assay it installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest

from assay.scaffold.install_source import install_source

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
#: The build backend the offline, non-isolated build needs inside the fresh venv.
BUILD_PACKAGES = ("setuptools", "pkg_resources", "_distutils_hack")


def _run(args, cwd, env, timeout=600):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _checkout_copy(tmp_path: Path) -> Path:
    """This checkout's sources, copied (a build writes build/ and *.egg-info beside them)."""
    copy = tmp_path / "assay-checkout"
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    return copy


def _user_project(root: Path) -> Path:
    (root / "src" / "demo").mkdir(parents=True)  # src layout: init's fuzz/ beside it is no package
    (root / "src" / "demo" / "__init__.py").write_text("def parse(text):\n    return text.split('=')\n")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "demo"\nversion = "0.1"\n'
    )
    return root


def _fresh_venv(path: Path) -> Path:
    """A venv with pip and nothing else but the build backend, linked from this environment."""
    r = _run([sys.executable, "-m", "venv", str(path)], path.parent, os.environ)
    assert r.returncode == 0, r.stderr
    python = path / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], path, {}).stdout.strip()
    )
    links = path / "build-backend"
    links.mkdir()
    here = Path(sysconfig.get_paths()["purelib"])
    for name in BUILD_PACKAGES:
        if (here / name).exists():
            (links / name).symlink_to(here / name)
    for info in here.glob("setuptools-*.dist-info"):  # its entry points register the build commands
        (links / info.name).symlink_to(info)
    (site / "build_backend.pth").write_text(f"{links}\n")
    return python


def _install_steps(workflow: dict) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if step.get("name") == "Install"]


@pytest.mark.slow
def test_the_workflow_install_step_installs_assay_in_a_fresh_venv(tmp_path):
    checkout = _checkout_copy(tmp_path)
    project = _user_project(tmp_path / "demo-project")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    # `assay init --ci github` run by the assay of the checkout copy.
    r = _run(
        [sys.executable, "-m", "assay", "init", "--ci", "github"],
        project,
        {**clean, "PYTHONPATH": str(checkout / "src")},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    workflows = [yaml.safe_load(p.read_text()) for p in sorted((project / ".github" / "workflows").glob("*.yml"))]
    assert len(workflows) == 2
    sources = {w["env"]["ASSAY_SOURCE"] for w in workflows}
    assert sources == {str(checkout)}, sources
    steps = {step for w in workflows for step in _install_steps(w)}
    assert len(steps) == 1 and all("pip install" in s and "$ASSAY_SOURCE" in s for s in steps), steps
    (step,) = steps

    # The step, as written, in a fresh venv (offline: no index, the linked setuptools builds).
    python = _fresh_venv(tmp_path / "venv")
    offline = step.replace("pip install", "pip install --no-index --no-build-isolation --no-deps", 1)
    env = {**clean, "PATH": f"{python.parent}{os.pathsep}{clean.get('PATH', '')}", "ASSAY_SOURCE": str(checkout)}
    r = _run(["bash", "-e", "-c", offline], project, env)
    assert r.returncode == 0, r.stdout + r.stderr

    # The installed assay is the venv's own copy, and it works.
    where = _run([str(python), "-c", "import assay, demo; print(assay.__file__)"], tmp_path, env)
    assert where.returncode == 0 and where.stdout.startswith(str(tmp_path / "venv")), where.stdout + where.stderr
    r = _run(["assay", "targets"], project, env)
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr, r.stdout + r.stderr
    # That assay, installed from the folder, writes the same source into a new project's workflows.
    again = _user_project(tmp_path / "second-project")
    r = _run(["assay", "init", "--ci", "github"], again, env)
    assert r.returncode == 0, r.stdout + r.stderr
    written = yaml.safe_load((again / ".github" / "workflows" / "assay-pr.yml").read_text())
    assert written["env"]["ASSAY_SOURCE"] == str(checkout)


def test_the_source_follows_what_pip_recorded():
    """PEP 610 records: a git install gives a git URL at its commit; an index install a pin."""
    from assay.scaffold.install_source import _checkout_of, _from_direct_url

    git = {"url": "https://github.com/o/assay.git", "vcs_info": {"vcs": "git", "commit_id": "ab12cd"}}
    assert _from_direct_url(json.dumps(git)) == "git+https://github.com/o/assay.git@ab12cd"
    wheel = {"url": "file:///opt/wheels/assay-0.1.0-cp312-cp312-linux_x86_64.whl", "archive_info": {}}
    assert _from_direct_url(json.dumps(wheel)) == "/opt/wheels/assay-0.1.0-cp312-cp312-linux_x86_64.whl"
    assert _from_direct_url(json.dumps({"url": "file:///src/my%20assay", "dir_info": {"editable": True}})) == (
        "/src/my assay"
    )
    assert _from_direct_url(None) is None and _from_direct_url("not json") is None
    # Run from this checkout's src/, the source is the checkout itself.
    assert install_source(ROOT / "src" / "assay" / "__init__.py") == str(ROOT)
    # An installed copy is no checkout: its source is what pip recorded (here, whatever installed
    # the test venv's assay), never the folder the copy happens to sit in.
    installed = Path(sys.prefix) / "lib" / "site-packages" / "assay" / "__init__.py"
    assert _checkout_of(installed) is None
    recorded = _from_direct_url(metadata.distribution("assay").read_text("direct_url.json"))
    assert install_source(installed) == (recorded or f"assay=={metadata.version('assay')}")
