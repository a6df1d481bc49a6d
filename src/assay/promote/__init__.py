"""The promoter: turns every real failure into a named pytest regression test.

Sources (fuzz artifacts, failing Hypothesis tests, failing state machines) become
:class:`~assay.promote.rubric.Candidate` objects; the
:class:`~assay.promote.rubric.Promoter` dedups them against the
:class:`~assay.promote.buckets.BucketStore`, replays each K times (the flake
guard), quarantines what does not reproduce identically, and emits
``test_<target>_<exception>_<bug id>.py`` for the rest (one per bug, see
:mod:`assay.findings.identity`).

Layer: may import reports and everything below; other backends' findings reach it through
:mod:`assay.promote.backends`, filled by the package root, so it never imports them.
"""

import importlib
from typing import Any

#: The names this package hands on, by the module that defines them.  Loaded on first use:
#: ``assay.replay`` (in :mod:`assay.promote.regression`) must not pull the promoter and the
#: engine into every ``import assay``.
_EXPORTS = {
    "BucketStore": "assay.promote.buckets",
    "Candidate": "assay.promote.rubric",
    "Outcome": "assay.promote.summary",
    "PromoteSummary": "assay.promote.summary",
    "Promoter": "assay.promote.rubric",
    "QuarantineLog": "assay.promote.quarantine",
    "format_summary": "assay.promote.summary",
    "promote_artifacts": "assay.promote.from_fuzz",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """The exported name ``name``, imported from its module on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'assay.promote' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
