"""Slowness oracle shared by the ReDoS / quadratic-blow-up targets.

The bug in these targets is "one call takes longer than ``threshold`` seconds".
The target times the call with ``time.perf_counter``; when it is over the
threshold it runs the same input once more and raises :class:`SlowInput` only if
that second run is over the threshold too, so a descheduled process on a busy
machine does not make a false finding.  Thresholds are generous (at least 100x
the time of a normal call on the seeds, see each target's ``HISTORY``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class SlowInput(RuntimeError):
    """A single call took longer than the target's threshold, twice in a row."""


def _timed(call: Callable[[Any], Any], arg: Any) -> tuple[float, Any, Exception | None]:
    start = time.perf_counter()
    try:
        result, exc = call(arg), None
    except Exception as e:  # an expected rejection can be slow too (idna)
        result, exc = None, e
    return time.perf_counter() - start, result, exc


def slow_guard(call: Callable[[Any], Any], arg: Any, threshold: float) -> Any:
    """``call(arg)``; raise :class:`SlowInput` if it takes over ``threshold`` s twice."""
    took, result, exc = _timed(call, arg)
    if took > threshold:
        again, _, _ = _timed(call, arg)
        if again > threshold:
            raise SlowInput(f"one call took {min(took, again) * 1e3:.0f} ms (threshold {threshold * 1e3:.0f} ms)")
    if exc is not None:
        raise exc
    return result
