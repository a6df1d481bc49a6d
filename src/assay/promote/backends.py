"""Backends other than Python whose findings the promoter offers, and how.

A native artifact is replayed through its harness binary, not in Python; the native
package registers its candidate here (the package root does, lazily), so the promoter,
below it, never imports it. Kept apart from :mod:`assay.promote.from_fuzz` so that
registering costs ``import assay`` nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.promote.rubric import Candidate
    from assay.store.artifacts import Artifact

#: Makes the candidate of an artifact that another backend found: (artifact, project root) -> candidate.
BackendCandidate = Callable[["Artifact", Path], "Candidate"]
#: Backends other than Python whose artifacts the promoter offers, by the ``backend`` their metadata
#: names.  Filled through :func:`register_backend` from the package root (``native``), so that the
#: promoter, below the backends, never imports them.
BACKEND_CANDIDATES: dict[str, BackendCandidate] = {}


def register_backend(name: str, make: BackendCandidate) -> None:
    """Offer artifacts whose metadata names ``backend = name`` for promotion through ``make``."""
    BACKEND_CANDIDATES[name] = make
