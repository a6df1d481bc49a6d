"""``[project]`` tables (PEP 621) generated from the real schema, read by the real ``pyproject-metadata``.

The schema is the one ``validate-pyproject`` ships (``project_metadata.schema.json``,
draft 7, the PyPA's ``pyproject.toml`` specification); the consumer is
``pyproject-metadata``'s ``StandardMetadata.from_pyproject`` (what meson-python and
scikit-build-core build core metadata with) followed by ``as_rfc822()``.  Its
documented rejection is ``ConfigurationError``: any other exception on a table the
schema accepts, or on one a single keyword away from it, is a bug.  Two real ones
in pyproject-metadata 0.12.1 on CPython 3.12.1 (see ``../README.md``):

* valid table, ``license-files = [""]``: ``ValueError: Unacceptable pattern: ''``
  from ``pathlib.Path.glob``;
* adjacent table, ``dynamic = ""`` (a string, not an array): ``AttributeError: 'str'
  object has no attribute '__name__'`` while it builds the error message.

The command in ``../README.md`` finds both (its case numbers are there).

``project_card`` adds one planted bug on top, in the kind of code that trusts a
table pyproject-metadata accepted: it takes the first line of the description,
which the schema (and pyproject-metadata) allow to be empty.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path

import validate_pyproject
from pyproject_metadata import ConfigurationError, StandardMetadata

import assay

#: The real schema, as installed with validate-pyproject.
SCHEMA = Path(validate_pyproject.__file__).parent / "project_metadata.schema.json"

#: A table pyproject-metadata accepts (the PyPA specification's own example, with the readme inline).
SEED = {
    "name": "spam-eggs",
    "version": "2020.0.0",
    "description": "Lovely Spam! Wonderful Spam!",
    "readme": {"text": "# Spam", "content-type": "text/markdown"},
    "requires-python": ">=3.8",
    "license": "MIT",
    "keywords": ["egg", "bacon"],
    "authors": [{"name": "Pradyun Gedam", "email": "pradyun@example.com"}],
    "classifiers": ["Development Status :: 4 - Beta"],
    "dependencies": ["httpx", "gidgethub[httpx]>4.0.0"],
    "optional-dependencies": {"gui": ["PyQt5"]},
    "urls": {"Homepage": "https://example.com"},
    "scripts": {"spam-cli": "spam:main_cli"},
    "entry-points": {"spam.magical": {"tomatoes": "spam:main_tomatoes"}},
}

_EMPTY_DIR = tempfile.mkdtemp(prefix="assay-schema-example-")  # readme/license files resolve here: none exist


def _table(data: bytes) -> object | None:
    """The JSON value, or None for bytes that are not JSON (byte mutations make some: not the consumer's input).

    Nesting deeper than the interpreter's recursion limit is not JSON ``json.loads``
    can read either: it raises ``RecursionError``.
    """
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _metadata(project: object) -> StandardMetadata:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # extra keys in adjacent tables warn; the error is what counts
        metadata = StandardMetadata.from_pyproject({"project": project}, project_dir=_EMPTY_DIR)
        metadata.as_rfc822()
    return metadata


@assay.target(
    schema=SCHEMA,
    schema_mode="both",
    expected=(ConfigurationError,),
    sources=["pyproject_metadata"],
    seeds=[json.dumps(SEED)],
    max_len=8192,
)
def pyproject_metadata_project(data: bytes) -> None:
    """Valid and adjacent ``[project]`` tables through pyproject-metadata."""
    project = _table(data)
    if project is not None:
        _metadata(project)


@assay.target(
    schema=SCHEMA, schema_mode="valid", expected=(ConfigurationError,), seeds=[json.dumps(SEED)], max_len=8192
)
def project_card(data: bytes) -> str:
    """A one-line card for a project pyproject-metadata accepted (planted bug: an empty description)."""
    project = _table(data)
    if project is None:
        return ""
    metadata = _metadata(project)
    summary = project["description"].splitlines()[0] if "description" in project else "(no description)"
    return f"{metadata.name} {metadata.version}: {summary}"
