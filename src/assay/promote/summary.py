"""What one promotion run did, and the text the CLI and the pytest plugin print."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

#: Outcome statuses: a new regression test (staged or written), a signature the bucket
#: store already has, and a failure the flake guard refused.
PROMOTED = "promoted"
KNOWN = "known"
#: The reason of a known outcome whose existing test ``--xfail --write`` re-emitted with the marker.
XFAIL_CONVERTED = "its test now carries a strict xfail marker (--xfail)"
QUARANTINED = "quarantined"
#: A finding raised in the harness file itself: not promoted unless asked (--include-harness).
HARNESS = "harness"


@dataclass
class Outcome:
    """The fate of one failure.

    ``status`` is ``promoted``, ``known`` or ``quarantined``.  For ``promoted``,
    ``path`` is the emitted test and ``written`` says whether it went into the
    regressions folder (and the bucket store) or only into staging; for ``known``
    it is the test the bucket store names; for ``quarantined`` it is the log.
    """

    status: str
    signature: str | None
    target: str
    oracle: str
    origin: str
    path: Path | None = None
    written: bool = False
    replays: int = 0
    survived: int = 0
    reason: str = ""
    bug: str | None = None
    harness: bool = False
    xfail: bool = False


@dataclass
class PromoteSummary:
    """Every outcome of one run, in the order the failures were considered."""

    root: Path
    outcomes: list[Outcome] = field(default_factory=list)
    #: Regressions folder (for the hint that tells how to promote staged tests).
    regressions: Path | None = None

    def _with(self, status: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def promoted(self) -> list[Outcome]:
        return self._with(PROMOTED)

    @property
    def known(self) -> list[Outcome]:
        return self._with(KNOWN)

    @property
    def quarantined(self) -> list[Outcome]:
        return self._with(QUARANTINED)

    @property
    def harness(self) -> list[Outcome]:
        return self._with(HARNESS)

    @property
    def new_bugs(self) -> int:
        """How many failures became (staged or written) regression tests."""
        return len(self.promoted)

    @property
    def exit_code(self) -> int:
        """1 when a new bug was promoted, 0 otherwise."""
        return 1 if self.promoted else 0


def _rel(path: Path | None, root: Path) -> str:
    if path is None:
        return "?"
    try:
        return Path(os.path.relpath(path, root)).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:  # another drive
        return str(path)


def format_summary(summary: PromoteSummary) -> str:
    """A few lines: counts, then per bug one line per failure (where it went, or why not)."""
    staged = [o for o in summary.promoted if not o.written]
    head = f"assay promote: {len(summary.promoted)} promoted"
    if staged:
        head += f" ({len(staged)} staged for review)"
    head += f", {len(summary.known)} already known, {len(summary.quarantined)} quarantined"
    if summary.harness:
        head += f", {len(summary.harness)} harness finding(s) not staged"
    lines = [head]
    groups: dict[str, list[Outcome]] = {}
    for o in summary.outcomes:
        groups.setdefault(o.bug or f"signature {o.signature or o.origin}", []).append(o)
    for key, members in groups.items():
        indent = "  "
        if members[0].bug and (len(groups) > 1 or len(members) > 1):
            count = f": {len(members)} signatures" if len(members) > 1 else ""
            lines.append(f"  bug {key}{' (harness)' if members[0].harness else ''}{count}")
            indent = "    "
        for o in members:
            lines.extend(indent + line for line in _outcome_lines(o, summary.root))
    if summary.quarantined:
        log = _rel(summary.quarantined[0].path, summary.root)
        lines.append(f"quarantined failures are never written as tests; see {log}")
    if summary.harness:
        lines.append(
            "harness findings are mistakes of the fuzz target itself; fix the target, or promote them "
            "with --include-harness"
        )
    if staged:
        dest = _rel(summary.regressions, summary.root) if summary.regressions else "the regressions folder"
        lines.append(f"review the staged tests, then promote again with --write to add them to {dest}")
    return "\n".join(lines)


def _outcome_lines(o: Outcome, root: Path) -> list[str]:
    sig = o.signature or f"{o.oracle}:?"
    if o.status == PROMOTED:
        label = ("promoted" if o.written else "staged") + (" xfail" if o.xfail else "")
        return [f"{label:<12} {sig}", f"{'':<12} from {o.origin}", f"{'':<12} -> {_rel(o.path, root)}"]
    if o.status == KNOWN:
        where = _rel(o.path, root) if o.path else "earlier in this run"
        missing = " (file missing)" if o.path is not None and not (root / o.path).exists() else ""
        converted = [f"{'':<12} {o.reason}"] if o.reason == XFAIL_CONVERTED else []
        return [f"{'known':<12} {sig} -> {where}{missing}", *converted]
    if o.status == HARNESS:
        return [f"{'harness':<12} {sig}", f"{'':<12} from {o.origin}", f"{'':<12} not staged: {o.reason}"]
    return [
        f"{'quarantined':<12} {sig}",
        f"{'':<12} from {o.origin}",
        f"{'':<12} survived {o.survived} of {o.replays} replays: {o.reason}",
    ]
