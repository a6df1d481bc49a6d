"""The promoter: minimize -> dedup -> flake guard -> emit, for any source of failures.

A source (fuzz artifacts, a failing Hypothesis test, a failing state machine)
implements :class:`Candidate`: its signature, one replay, and the files of its
regression test.  Everything else is generic and lives here:

1. **Minimize** is a passthrough: the engine and Hypothesis have already shrunk.
2. **Dedup** against the bucket store, and against what this run already promoted:
   a known signature is reported as already known and never promoted again.
3. **Flake guard**: replay K times; promote only if every replay fails with the
   candidate's own signature.  The first replay that passes or fails differently
   stops the guard and the failure is quarantined (logged with how many replays
   it survived), never written as a test.
4. **Emit** into staging (default) or, with ``write``, into the regressions folder,
   recording the bucket only after the test file is on disk.

Findings are grouped into bugs (:mod:`assay.findings.identity`): the test is named
``test_<target>_<exception>_<bug id>``, a second signature of a bug already
promoted (in this run, or whose test is in the regressions folder) is reported
as known and, with ``write``, recorded in the bucket store against that test.
A finding raised in the harness file itself is not staged unless
``include_harness``; with ``xfail``, a bug raised outside the project (in
third-party code) gets a strict ``xfail`` test, and with ``write`` too, the plain
test promoted earlier for such a bug is re-emitted with the marker.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from assay.core.config import Project
from assay.core.errors import ConfigError
from assay.core.target import DEFAULT_REPLAYS
from assay.core.verdict import Verdict
from assay.promote.buckets import BUCKETS_FILE, BucketStore
from assay.promote.emit import XFAIL_MARK, hash12, regression_file_name
from assay.promote.quarantine import QuarantineLog
from assay.promote.summary import HARNESS, KNOWN, PROMOTED, QUARANTINED, XFAIL_CONVERTED, Outcome, PromoteSummary
from assay.promote.unfixed import recorded_signature
from assay.store.atomic import write_bytes


class Candidate(ABC):
    """One failure offered for promotion.

    ``target`` names the file (``test_<target>_<label>_<bug>.py``, see :meth:`file_name`);
    ``origin`` says where the failure came from (an artifact path, a test node id);
    ``problem``, when set, is why the failure cannot be replayed faithfully, and
    makes the promoter quarantine it without replaying.
    """

    source: str = "?"
    #: Set by the promoter before :meth:`render`: the reason of a strict xfail marker, or ``None``.
    xfail_reason: str | None = None
    target: str = "?"
    oracle: str = "?"
    signature: str | None = None
    origin: str = "?"
    problem: str | None = None
    #: Flake-guard replays this candidate asks for (``None``: the promoter's default).
    replays: int | None = None
    #: The bug (:mod:`assay.findings.identity` id) this failure belongs to, and the test name's exception part.
    bug: str | None = None
    label: str | None = None
    #: Raised in the harness file itself (not promoted unless asked).
    harness: bool = False
    #: Where a bug outside the project was raised (``file:line``), for ``xfail`` tests.
    third_party: str | None = None
    #: The finding's one-line headline, for the emitted test's docstring.
    summary: str | None = None

    def minimize(self) -> Candidate:
        """Passthrough: what reaches the promoter is already shrunk."""
        return self

    @abstractmethod
    def replay(self) -> Verdict | None:
        """Run the failure once more, exactly as the emitted test will."""

    @abstractmethod
    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        """The files of the regression test whose main file is ``test_path``."""

    def log_fields(self) -> dict[str, Any]:
        """Extra fields for this candidate's quarantine log entry."""
        return {}

    def same_failure(self, verdict: Verdict | None) -> bool:
        """Whether a replay's ``verdict`` is this failure (by default: the same signature)."""
        return verdict is not None and verdict.signature == self.signature

    def file_name(self) -> str:
        """``test_<target>_<exception>_<short id>.py``: the bug's id, else the signature's hash."""
        assert self.signature is not None
        return regression_file_name(self.target, self.label or self.oracle, self.bug or hash12(self.signature)[:10])


class Promoter:
    """Runs the rubric for one project; collects a :class:`PromoteSummary`."""

    def __init__(
        self,
        project: Project,
        *,
        write: bool = False,
        replays: int | None = None,
        store: BucketStore | None = None,
        quarantine: QuarantineLog | None = None,
        include_harness: bool = False,
        xfail: bool = False,
    ) -> None:
        if replays is not None and (isinstance(replays, bool) or not isinstance(replays, int) or replays < 1):
            raise ConfigError(f"replays must be a whole number of at least 1, not {replays!r}")
        self.project = project
        self.write = write
        self.replays = replays
        self.store = store or BucketStore(project.regressions / BUCKETS_FILE)
        self.quarantine = quarantine or QuarantineLog(project.quarantine)
        self.summary = PromoteSummary(root=project.root, regressions=project.regressions)
        self.include_harness = include_harness
        self.xfail = xfail
        self._seen: dict[str, Path | None] = {}
        self._bugs: dict[str, Path] = {}  # bug id -> its test, promoted in this run

    def promote(self, candidate: Candidate) -> Outcome:
        """Run the rubric on ``candidate``; the outcome is also added to :attr:`summary`."""
        outcome = self._promote(candidate.minimize())
        self.summary.outcomes.append(outcome)
        return outcome

    def _promote(self, cand: Candidate) -> Outcome:
        sig = cand.signature
        base: dict[str, Any] = dict(
            signature=sig,
            target=cand.target,
            oracle=cand.oracle,
            origin=cand.origin,
            bug=cand.bug,
            harness=cand.harness,
        )
        if sig is not None:
            known = self.store.get(sig)
            if known is not None:
                converted = self._convert_to_xfail(cand, self.project.root / known)
                return Outcome(
                    KNOWN, path=Path(known), xfail=converted, reason=XFAIL_CONVERTED if converted else "", **base
                )
            if sig in self._seen:
                return Outcome(KNOWN, path=self._seen[sig], **base)
            same_bug = self._test_of_bug(cand)
            if same_bug is not None:
                if self.write and same_bug.exists():
                    self.store.add(sig, _relative(same_bug, self.project.root))
                return Outcome(KNOWN, path=same_bug, reason="another signature of a bug that has a test", **base)
        if cand.harness and not self.include_harness:
            return Outcome(
                HARNESS,
                reason="raised in the harness file, not in the target's sources: fix the fuzz "
                "target (or pass --include-harness to promote it anyway)",
                **base,
            )
        k = self.replays or cand.replays or DEFAULT_REPLAYS
        if cand.problem or sig is None:
            reason = cand.problem or "the failure has no signature to compare replays against"
            return self._quarantine(cand, base, k, 0, [], f"not replayable: {reason}")
        observed: list[str | None] = []
        for i in range(k):
            try:
                verdict = cand.replay()
            except Exception as exc:  # noqa: BLE001 - a replay that cannot run is a quarantine reason
                observed.append(f"error:{type(exc).__name__}")
                return self._quarantine(
                    cand, base, k, i, observed, f"replay {i + 1} could not run: {type(exc).__name__}: {exc}"
                )
            got = verdict.signature if verdict is not None else None
            observed.append(got)
            if not cand.same_failure(verdict):
                what = "passed" if got is None else f"failed with another signature ({got})"
                return self._quarantine(cand, base, k, i, observed, f"replay {i + 1} of {k} {what}")
        return self._emit(cand, base, k)

    def _quarantine(
        self, cand: Candidate, base: dict[str, Any], k: int, survived: int, observed: list[str | None], reason: str
    ) -> Outcome:
        self.quarantine.append(
            {
                **base,
                "source": cand.source,
                "replays": k,
                "survived": survived,
                "observed": observed,
                "reason": reason,
                **cand.log_fields(),
            }
        )
        return Outcome(QUARANTINED, path=self.quarantine.path, replays=k, survived=survived, reason=reason, **base)

    def _emit(self, cand: Candidate, base: dict[str, Any], k: int) -> Outcome:
        assert cand.signature is not None
        folder = self.project.regressions if self.write else self.project.staging
        test_path = folder / cand.file_name()
        cand.xfail_reason = self._xfail_reason(cand)
        files = cand.render(test_path, self.project.root)
        # Companion files first, the test last: a reader never sees a test without its input.
        for path in sorted(files, key=lambda p: p == test_path):
            write_bytes(path, files[path])
        if self.write:
            self.store.add(cand.signature, _relative(test_path, self.project.root))
        self._seen[cand.signature] = test_path
        if cand.bug:
            self._bugs[cand.bug] = test_path
        return Outcome(
            PROMOTED, path=test_path, written=self.write, replays=k, survived=k, xfail=bool(cand.xfail_reason), **base
        )

    def _xfail_reason(self, cand: Candidate) -> str | None:
        """The reason of a strict xfail marker for ``cand`` (``--xfail`` and a third-party bug), else None."""
        if self.xfail and cand.third_party:
            return f"bug in third-party code ({cand.third_party}); passes once fixed upstream"
        return None

    def _convert_to_xfail(self, cand: Candidate, test_path: Path) -> bool:
        """With ``--xfail --write``, re-emit the existing plain test of a third-party bug with the marker.

        Only the test promoted for this very signature is rewritten (a second signature
        of a bug shares its bug's test, promoted for another); a test that already
        carries a marker is left alone.  True when the file was rewritten.
        """
        reason = self._xfail_reason(cand)
        if not (self.write and reason and cand.signature) or recorded_signature(test_path) != cand.signature:
            return False
        if XFAIL_MARK in test_path.read_text("utf-8", errors="replace"):
            return False
        cand.xfail_reason = reason
        files = cand.render(test_path, self.project.root)
        for path in sorted(files, key=lambda p: p == test_path):
            write_bytes(path, files[path])
        return True

    def _test_of_bug(self, cand: Candidate) -> Path | None:
        """The test of ``cand``'s bug: promoted earlier in this run, or already in the regressions folder."""
        if not cand.bug or cand.signature is None:
            return None
        if cand.bug in self._bugs:
            return self._bugs[cand.bug]
        existing = self.project.regressions / cand.file_name()
        return existing if existing.exists() else None


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:
        return path.as_posix()
