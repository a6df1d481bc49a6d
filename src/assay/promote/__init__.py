"""The promoter: turns every real failure into a named pytest regression test.

Sources (fuzz artifacts, failing Hypothesis tests, failing state machines) become
:class:`~assay.promote.rubric.Candidate` objects; the
:class:`~assay.promote.rubric.Promoter` dedups them against the
:class:`~assay.promote.buckets.BucketStore`, replays each K times (the flake
guard), quarantines what does not reproduce identically, and emits
``test_<target>_<exception>_<bug id>.py`` for the rest (one per bug, see
:mod:`assay.findings.identity`).
"""

from assay.promote.buckets import BucketStore
from assay.promote.from_fuzz import promote_artifacts
from assay.promote.quarantine import QuarantineLog
from assay.promote.rubric import Candidate, Promoter
from assay.promote.summary import Outcome, PromoteSummary, format_summary

__all__ = [
    "BucketStore",
    "Candidate",
    "Outcome",
    "PromoteSummary",
    "Promoter",
    "QuarantineLog",
    "format_summary",
    "promote_artifacts",
]
