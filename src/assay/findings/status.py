"""A bug's status: the one word every output uses for it.

Every output (the end-of-run summary, ``assay findings``, the JSON report, the
HTML page, SARIF and JUnit) says the same word for a bug, decided here:

``new``
    No artifact of the bug (any finding with its bug id, for its target) existed
    before this run, and no regression test was promoted for it.
``known``
    An artifact of the bug was already on disk before this run (an earlier run
    found it), and no regression test was promoted for it yet.
``promoted``
    ``assay promote --write`` recorded a regression test for it: the regressions
    folder's ``buckets.json`` names one of its signatures, or a test file there
    ends with its bug id.  It is still a bug: a run that hits it again still
    reports it, as ``promoted``.
``fixed``
    Promoted, and its input no longer fails: ``assay findings --replay`` replayed
    an artifact of it and it passed.  A run never reports a bug it hit as fixed.

"New" is about the bug, never about one artifact: a known bug reached through a
new input (a new artifact folder) is still ``known``.  Counts go with the words:
``occurrences`` of a run are the times the run hit the bug (all its signatures),
and ``assay findings`` shows the same number for the last run that hit each
artifact beside the total over every run; ``signatures`` are distinct
signatures, ``artifacts`` the artifact folders (one signature may have several).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NEW = "new"
KNOWN = "known"
PROMOTED = "promoted"
FIXED = "fixed"
#: Every status, in the order a reader meets them.
STATUSES = (NEW, KNOWN, PROMOTED, FIXED)
#: One phrase per status, for pages that explain the word (the HTML report, the docs).
MEANING = {
    NEW: "first found in this run",
    KNOWN: "found by an earlier run, no regression test yet",
    PROMOTED: "has a regression test (assay promote --write); not fixed yet",
    FIXED: "has a regression test, and its input passes now",
}
#: The file in the regressions folder mapping signatures to promoted tests (written by assay promote).
BUCKETS_FILE = "buckets.json"


@dataclass
class Promotions:
    """What the regressions folder says was promoted: signatures, and bug ids of test files."""

    signatures: set[str] = field(default_factory=set)
    bug_ids: set[str] = field(default_factory=set)

    def covers(self, bug_id: str, signatures: Iterable[str]) -> bool:
        """Whether a regression test was promoted for this bug."""
        return bug_id in self.bug_ids or any(s in self.signatures for s in signatures)


def read_promotions(regressions: str | Path | None) -> Promotions:
    """The promotions recorded under ``regressions`` (empty when the folder or its store is missing)."""
    found = Promotions()
    if regressions is None:
        return found
    folder = Path(regressions)
    try:
        data = json.loads((folder / BUCKETS_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        data = {}
    if isinstance(data, dict):
        found.signatures = {k for k in data if isinstance(k, str)}
    if folder.is_dir():
        found.bug_ids = {p.stem.rpartition("_")[2] for p in folder.glob("test_*.py")}
    return found


def promotions_of_project(project_root: str | Path | None) -> Promotions:
    """:func:`read_promotions` of the project's ``[tool.assay] regressions`` folder."""
    if project_root is None:
        return Promotions()
    from assay.core.config import load_project
    from assay.core.errors import ConfigError

    try:
        return read_promotions(load_project(project_root).regressions)
    except ConfigError:
        return Promotions()


def status_of(
    bug_id: str, signatures: Iterable[str], promotions: Promotions, *, seen_before: bool, passes: bool = False
) -> str:
    """The status word of one bug (see the module docstring)."""
    if promotions.covers(bug_id, list(signatures)):
        return FIXED if passes else PROMOTED
    return KNOWN if seen_before else NEW


@functools.lru_cache(maxsize=64)
def _bug_ids_in(folder: str, stamp: float) -> tuple[tuple[str, frozenset[str]], ...]:
    """(artifact folder, its bug ids: recorded and recomputed) for every artifact in ``folder``.

    Cached by the folder's modification time: a run's summary and its report read it once.
    """
    from assay.findings.identity import identify_metadata

    out = []
    for meta_file in sorted(Path(folder).glob("*/metadata.json")):
        try:
            meta = json.loads(meta_file.read_text("utf-8"))
            ids = frozenset(i for i in (meta.get("bug"), identify_metadata(meta).id) if isinstance(i, str))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        out.append((str(meta_file.parent.resolve()), ids))
    return tuple(out)


def earlier_artifacts(folders: Iterable[str | Path], bug_id: str, written: set[str]) -> bool:
    """Whether an artifact of bug ``bug_id`` in ``folders`` (its targets' artifact folders) is not
    among ``written`` (the artifacts this run wrote): then an earlier run found the bug."""
    mine = {str(Path(w).resolve()) for w in written}
    for folder in {Path(f).resolve() for f in folders}:
        try:
            stamp = folder.stat().st_mtime
        except OSError:
            continue
        for path, ids in _bug_ids_in(str(folder), stamp):
            if path not in mine and bug_id in ids:
                return True
    return False


def status_in_run(bug_id: str, records: Iterable[Any], promotions: Promotions, written: set[str]) -> str:
    """The status of a bug a run hit, from the run's finding records (``signature``, ``artifact``,
    ``new``: whether the run wrote that artifact) and ``written``, every artifact the run wrote."""
    records = list(records)
    folders = [Path(r.artifact).parent for r in records if r.artifact]
    seen = any(not r.new for r in records if r.artifact) or earlier_artifacts(folders, bug_id, written)
    return status_of(bug_id, [r.signature for r in records], promotions, seen_before=seen)
