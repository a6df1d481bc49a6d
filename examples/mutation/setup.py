"""Lay out the mutation examples: real libraries, their own tests, our fuzz targets.

    python examples/mutation/setup.py            # all libraries
    python examples/mutation/setup.py parse      # one

For each pinned library this downloads its source distribution with
``pip download --no-binary :all: --no-deps NAME==VERSION`` into
``.work/cache/`` (skipped when the file is already there), unpacks it into
``.work/src/``, and builds a project folder ``.work/<name>/`` holding only:

* the library's code, as shipped in the sdist (this is what ``assay mutant``
  mutates: ``[tool.assay] mutate``);
* the library's own tests, as shipped in the sdist;
* the fuzz target files kept in this repository under ``targets/<name>/``, copied
  to the top of the project folder (see ``README.md`` for why not ``fuzz/``);
* a ``pyproject.toml`` with ``[tool.assay]`` (and, for pytest, only the test
  paths: the sdists' own pytest options need plugins this venv does not have).

Nothing downloaded is committed: ``.work/`` is git-ignored.  The project folder
is rebuilt from scratch on every run except ``.assay/`` (mutation history,
corpus, artifacts), which is kept unless ``--clean`` is given.  Standard library
only; the ``pip`` used is the one of the interpreter running this script.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"

#: name -> (pinned version, paths to copy out of the sdist, [tool.assay] mutate, pytest testpaths)
LIBRARIES: dict[str, dict] = {
    "parse": {
        "version": "1.22.4",
        "copy": ["parse/__init__.py", "tests"],
        "mutate": ["parse/__init__.py"],
        "testpaths": ["tests"],
    },
    "inflection": {
        "version": "0.5.1",
        "copy": ["inflection/__init__.py", "test_inflection.py"],
        "mutate": ["inflection/__init__.py"],
        "testpaths": ["test_inflection.py"],
    },
}

PYPROJECT = """\
# Written by examples/mutation/setup.py; {name}=={version} from its sdist.
[tool.assay]
mutate = {mutate}
targets = {targets}
corpus = ".assay/corpus"
artifacts = ".assay/artifacts"

[tool.pytest.ini_options]
testpaths = {testpaths}
"""


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def download(name: str, version: str) -> Path:
    cache = WORK / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{name}-{version}.tar.gz"))
    if found:
        return found[0]
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-binary",
        ":all:",
        "--no-deps",
        f"{name}=={version}",
        "-d",
        str(cache),
    ]
    print("+", " ".join(cmd))
    subprocess.run(cmd, check=True)
    found = sorted(cache.glob(f"{name}-{version}.tar.gz"))
    if not found:
        sys.exit(f"setup.py: pip saved no {name}-{version}.tar.gz in {cache}")
    return found[0]


def unpack(archive: Path, name: str, version: str) -> Path:
    dest = WORK / "src"
    top = dest / f"{name}-{version}"
    if top.is_dir():
        shutil.rmtree(top)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    if not top.is_dir():
        sys.exit(f"setup.py: {archive.name} did not unpack to {top}")
    return top


def lay_out(name: str, spec: dict, clean: bool) -> Path:
    version = spec["version"]
    top = unpack(download(name, version), name, version)
    project = WORK / name
    keep = project / ".assay"
    if clean and project.exists():
        shutil.rmtree(project)
    project.mkdir(parents=True, exist_ok=True)
    for child in project.iterdir():  # rebuild everything but the history/corpus/artifacts
        if child != keep:
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for rel in spec["copy"]:
        src, dst = top / rel, project / rel
        if not src.exists():
            sys.exit(f"setup.py: {name}-{version} has no {rel}")
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dst)
    # The target files go to the project's top folder, next to the library: assay puts a target
    # file's own folder on sys.path when it imports it, and that is what lets `import parse` work.
    targets = sorted(p.name for p in (HERE / "targets" / name).glob("*.py"))
    for t in targets:
        shutil.copy2(HERE / "targets" / name / t, project / t)
    (project / "pyproject.toml").write_text(
        PYPROJECT.format(
            name=name,
            version=version,
            mutate=_toml_list(spec["mutate"]),
            testpaths=_toml_list(spec["testpaths"]),
            targets=_toml_list(targets),
        )
    )
    print(f"{name}=={version}: {project}")
    return project


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"libraries (default: all of {', '.join(LIBRARIES)})")
    parser.add_argument("--clean", action="store_true", help="also drop .assay/ (history, corpus, artifacts)")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in LIBRARIES]
    if unknown:
        parser.error(f"unknown library {unknown[0]!r}; choose from {', '.join(LIBRARIES)}")
    for name in args.names or list(LIBRARIES):
        lay_out(name, LIBRARIES[name], args.clean)
    return 0


if __name__ == "__main__":
    sys.exit(main())
