"""The interface every feedback collector offers the engine."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

#: A name in ``co_names`` of code that only ever runs while the feedback is paused
#: (the comparison twins of :mod:`assay.feedback.cmplog`): a collector decides it
#: at its first call, as it does out-of-scope code, instead of at an unpaused one.
TWIN_MARK = "__assay_twin__"


class RecordingCut(BaseException):
    """Ends a recorded run of the comparison twins early (see :data:`assay.feedback.cmplog.MAX_COMPARED`).

    Not an error, and a ``BaseException`` (as Hypothesis' ``StopTest`` is) so that a
    target's ``except Exception`` lets it through; the runner re-raises it unjudged.
    """


class Feedback(Protocol):
    """Records coverage items; reports only the ones never seen before."""

    #: Items first seen since the last :meth:`take_new` (read to skip the call).
    new: list[Hashable]

    def start(self) -> None:
        """Begin recording (claims any process-wide resources)."""

    def stop(self) -> None:
        """Stop recording and release everything :meth:`start` claimed."""

    def take_new(self) -> list[Hashable]:
        """Items first seen since the last call, in the order they were seen."""

    def pause(self, paused: bool) -> None:
        """While paused nothing is recorded (used while shrinking)."""

    def mark_seen(self, keys: list[Hashable]) -> None:
        """Treat ``keys`` as already seen (a restarted worker inherits them)."""

    def maybe_restart(self, case_index: int) -> None:
        """Give retired items a chance to fire again, on a schedule of case indices."""

    def counts(self) -> dict[str, int]:
        """How many items of each kind have been seen."""
