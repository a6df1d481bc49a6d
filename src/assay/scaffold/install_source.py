"""Where CI should install assay from: the place this copy of assay came from.

assay is not on the package index, so a workflow cannot ``pip install assay``.  The
source written into the workflows is, in order: the source checkout this assay is
imported from; else what pip recorded when it installed it (``direct_url.json``, PEP
610: a git URL at its commit, a local folder or a wheel file); else ``assay==VERSION``
(an install from a package index).  A local path works only where the runner can reach
it: the workflow says so beside the value, to be edited to a git URL.
"""

from __future__ import annotations

import json
import tomllib
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

#: The distribution name of assay (pyproject ``[project] name``).
DISTRIBUTION = "assay"


def install_source(module_file: str | Path | None = None) -> str:
    """A pip requirement that installs this assay: a path, a ``git+URL@COMMIT`` or ``assay==VERSION``.

    ``module_file`` is ``assay/__init__.py`` of the running copy (the default).
    """
    if module_file is None:
        module_file = Path(__file__).resolve().parent.parent / "__init__.py"
    checkout = _checkout_of(Path(module_file))
    if checkout is not None:
        return str(checkout)
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _pinned()
    return _from_direct_url(dist.read_text("direct_url.json")) or _pinned(dist.version)


def _checkout_of(module_file: Path) -> Path | None:
    """The source checkout holding ``src/assay/__init__.py``, or None for an installed copy."""
    package = module_file.resolve().parent
    root = package.parent.parent
    if package.name != "assay" or package.parent.name != "src" or not (root / "pyproject.toml").is_file():
        return None
    try:
        name = tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return root if name == DISTRIBUTION else None


def _from_direct_url(text: str | None) -> str | None:
    """A requirement from PEP 610's ``direct_url.json``, or None when it says nothing usable."""
    if not text:
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str):
        return None
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        commit = vcs.get("commit_id") or vcs.get("requested_revision")
        return f"{vcs['vcs']}+{url}" + (f"@{commit}" if commit else "")
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return url


def _pinned(version: str | None = None) -> str:
    if version is None:
        from assay.core.version import __version__

        version = __version__
    return f"{DISTRIBUTION}=={version}"
