"""The share of a campaign's time that work done for findings may take.

Design
------
Work done for a finding (confirming a slow input by replays and growth, keying
it, replaying and shrinking a failure) runs in the worker, between cases, so
while it runs nothing is fuzzed.  A slow input can cost a second a run, and its
confirmation many runs: unbounded, it stood a campaign still for most of its
budget.  So that work is *earned*: it may take at most :data:`ANALYSIS_SHARE`
of the time the loop has spent fuzzing so far (a tenth: the loop keeps at
least 10/11 of its rate whatever it finds).  A slow suspect's analysis that
cannot be afforded now waits (:mod:`assay.engine.worker` keeps it and advances
it, one predicted run at a time, at clock boundaries as the loop earns time), so
the share is overshot by at most one run whose cost was under-predicted; a
failure's shrinking stops once the allowance is spent (after a few seconds that
are always allowed, ``SHRINK_FREE_SECONDS``).

The accounting is the engine's own: seconds of analysis and seconds of loop,
carried across worker restarts by the plan and reported in the outcome.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

#: Analysis time allowed per second of fuzzing (0.10: a tenth of the loop's time).
ANALYSIS_SHARE = 0.10


class AnalysisBudget:
    """Seconds spent on analysis and on the loop, and what analysis may still spend.

    ``share`` ``None`` switches the bound off (analysis always affordable; still
    accounted).  ``spent`` and ``loop`` carry the totals of earlier workers.
    """

    def __init__(self, share: float | None, spent: float = 0.0, loop: float = 0.0) -> None:
        self.share = share
        self._closed = spent  # analysis seconds of closed spending contexts (and earlier workers)
        self._spent_before = spent
        self._loop_before = loop
        self._started = time.monotonic()
        self._depth = 0
        self._since = 0.0  # when the outermost open spending context began

    @property
    def spent(self) -> float:
        """Seconds spent on analysis so far, the one under way included."""
        return self._closed + (time.monotonic() - self._since if self._depth else 0.0)

    @property
    def loop(self) -> float:
        """Seconds this campaign's workers spent fuzzing (not analysing) so far."""
        own_analysis = self.spent - self._spent_before
        return self._loop_before + max(0.0, time.monotonic() - self._started - own_analysis)

    def allowance(self) -> float:
        """Seconds of analysis affordable now (negative after an overshoot)."""
        if self.share is None:
            return float("inf")
        return self.share * self.loop - self.spent

    def affords(self, predicted: float) -> bool:
        """Whether work predicted to take ``predicted`` seconds fits the allowance now."""
        return self.allowance() >= predicted

    @contextmanager
    def spending(self) -> Iterator[None]:
        """A context whose time counts as analysis (nested contexts count once)."""
        if self._depth == 0:
            self._since = time.monotonic()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._closed += time.monotonic() - self._since
