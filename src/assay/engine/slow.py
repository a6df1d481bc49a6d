"""Slow-input hunting: confirm that an input's cost grows super-linearly.

Design
------
Branch coverage cannot see algorithmic-complexity bugs (a catastrophic regex runs
inside the C ``re`` engine), so when a target sets a ``slow`` threshold the worker
times every case and keeps inputs that reach a new *cost bucket* (log2 of the
median time), which makes the search climb towards slow inputs.  A timing is
noise until proven otherwise: an input is reported as a ``slow`` finding only if

1. the median of several replays exceeds the target's threshold, and
2. growing it (pumping its longest run of a repeated unit to 2x and 4x the
   repetitions, or else repeating the whole input) makes the median cost grow
   super-linearly: each doubling costs at least :data:`SUPERLINEAR` times more.
   The cost is the median time, or, when the caller can count them, the Python
   line events and loop turns of a run (:mod:`assay.engine.traced`): counts are
   exact, so a quadratic loop in Python is confirmed even on a machine so loaded
   that its timings are noise, while a catastrophic regex (no Python lines) is
   still confirmed by its timings.  A count saturates at the counter's cap, so
   the inputs counted are grown by smaller factors (halved until the biggest
   count fits) than the inputs timed.

A linear parser that is merely slow on a big input therefore never fires; a
quadratic or exponential one does.  The finding reports the *growth exponent* (the
cost's log2 growth per doubling of the repeated part: 1 linear, 2 quadratic), and a
confirmed input is then grown further (:func:`cross_steps`), its size predicted from
that exponent, until one run crosses the target's hang limit (its ``timeout``): the
artifact holds that grown input, a hang anyone can replay.  The key is the innermost frames of the code
under test that dominate the slow run (:func:`dominant_frames`), so two different
slow paths get two signatures and one slow path one: stacks at fixed fractions of
its Python line events (:data:`KEY_POINTS`) when it runs enough of them (the same on
every machine; see :mod:`assay.engine.traced`), otherwise stacks sampled by a timer
at those fractions of its median time (a regex runs no Python lines).  The work is
made of steps (:func:`confirm_steps`) so the worker can spread it over the
campaign within its analysis budget (:mod:`assay.engine.budget`).
"""

from __future__ import annotations

import math
import signal
import statistics
import time
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from assay.core.verdict import ExceptionInfo, Frame, Verdict, frames_key
from assay.engine.execute import WedgeTimeout, in_target_call
from assay.engine.traced import frames_from

#: Replays whose median is a timing.
REPLAYS = 3
#: Cost growth per doubling of the repeated part that counts as super-linear
#: (linear is 2, n log n about 2.2, quadratic 4).
SUPERLINEAR = 2.8
#: Timings below this are too small to compare (seconds).
MIN_MEASURABLE = 0.002
#: Longest repeated unit looked for.
MAX_UNIT = 8


def median_time(run: Callable[[bytes], Any], data: bytes, replays: int = REPLAYS) -> float:
    times = []
    for _ in range(replays):
        t0 = time.perf_counter()
        run(data)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def repeated_part(data: bytes) -> tuple[int, int, int]:
    """(start, unit length, repetitions) of the longest run of a repeated unit."""
    best = (len(data) // 3, max(1, len(data) // 3), 1)
    best_span = 0
    for unit in range(1, MAX_UNIT + 1):
        i = 0
        while i + unit <= len(data):
            chunk = data[i : i + unit]
            reps = 1
            while data[i + reps * unit : i + (reps + 1) * unit] == chunk:
                reps += 1
            if reps >= 3 and reps * unit > best_span:
                best, best_span = (i, unit, reps), reps * unit
            i += max(1, (reps - 1) * unit) if reps > 1 else 1
    return best


def pump(data: bytes, start: int, unit: int, reps: int, factor: float) -> bytes:
    chunk = data[start : start + unit]
    return data[:start] + chunk * max(1, int(reps * factor)) + data[start + unit * reps :]


#: Line counts below this are too small to compare.
MIN_COUNTABLE = 1000
#: Times the growth factors are halved when the biggest grown input's count saturates.
COUNT_HALVINGS = 4


@dataclass
class SlowEvidence:
    median: float
    sizes: list[int]
    times: list[float]
    lines: list[int] | None = None  # Python line events and loop turns per size, when counted
    counted_sizes: list[int] | None = None  # the sizes counted (smaller than ``sizes`` when a count saturated)
    grow: Callable[[float], bytes] | None = field(default=None, repr=False)  # the input pumped by a factor
    factors: tuple[float, ...] = ()  # the factors of ``sizes``
    crossed: tuple[bytes, float] | None = field(
        default=None, repr=False
    )  # grown input past the hang limit, its seconds

    @property
    def growth(self) -> list[float]:
        return _growth(self.times)

    @property
    def line_growth(self) -> list[float]:
        return _growth(self.lines or [])

    @property
    def exponent(self) -> float:
        """log2 of the cost's growth per doubling of the repeated part (1: linear, 2: quadratic).

        From the line counts when they confirmed it (exact), else from the times; over
        the last doubling measured, the biggest inputs (at the smallest, the parts that
        are not repeated still weigh).
        """
        costs = self.lines if self.lines and _superlinear(self.line_growth) else self.times
        return _exponent(costs[-2:])


def _exponent(costs: list) -> float:
    if len(costs) < 2 or costs[0] <= 0 or costs[-1] <= 0:
        return 0.0
    return math.log2(costs[-1] / costs[0]) / (len(costs) - 1)


def _superlinear(growth: list[float]) -> bool:
    return bool(growth) and all(g >= SUPERLINEAR for g in growth)


def _growth(costs: list) -> list[float]:
    return [b / a for a, b in zip(costs, costs[1:]) if a > 0]


#: A traced (counted) run costs about this many plain runs of the same input.
TRACE_SLOWDOWN = 8.0


class _Estimate:
    """Predicts a run's seconds from the last one measured, as if cost were quadratic in size.

    Quadratic, not linear: the inputs grown here are suspected super-linear, and a
    prediction that is too high only makes the work wait for more allowance.
    """

    def __init__(self, size: int, seconds: float) -> None:
        self.size, self.seconds = max(1, size), seconds

    def observe(self, size: int, seconds: float) -> None:
        self.size, self.seconds = max(1, size), seconds

    def predict(self, size: int) -> float:
        return self.seconds * (max(1, size) / self.size) ** 2


def _timed(run: Callable[[bytes], Any], data: bytes) -> float:
    t0 = time.perf_counter()
    run(data)
    return time.perf_counter() - t0


def median_steps(
    run: Callable[[bytes], Any], data: bytes, estimate: _Estimate, replays: int = REPLAYS
) -> Generator[float, None, float]:
    """:func:`median_time`, one run a step: yields each run's predicted seconds before making it."""
    times = []
    for _ in range(replays):
        yield estimate.predict(len(data))
        times.append(_timed(run, data))
    med = statistics.median(times)
    estimate.observe(len(data), med)
    return med


def confirm(
    run: Callable[[bytes], Any], data: bytes, threshold: float, count: Callable[[bytes], int | None] | None = None
) -> SlowEvidence | None:
    """Evidence that ``data`` is slow and super-linear, or ``None`` (:func:`confirm_steps` run through)."""
    steps = confirm_steps(run, data, threshold, count)
    try:
        while True:
            next(steps)
    except StopIteration as stop:
        return stop.value


def confirm_steps(
    run: Callable[[bytes], Any],
    data: bytes,
    threshold: float,
    count: Callable[[bytes], int | None] | None = None,
    first: float | None = None,
    on_slow: Callable[[float], Any] | None = None,
) -> Generator[float, None, SlowEvidence | None]:
    """Evidence that ``data`` is slow and super-linear, or ``None``, one run a step.

    Before each run it yields the run's predicted seconds (``first``: the time of
    the case that made ``data`` a suspect), so the caller can make it wait until
    the analysis budget affords it (:mod:`assay.engine.budget`).  Two ways of
    growing the input are tried: pumping its longest run of a repeated unit, then
    repeating the whole input (1, 2 and 4 times, or a quarter, a half and all of
    it when ``data`` is already far past ``threshold``).  ``count`` (optional) gives the Python line events
    and loop turns of one run, or ``None`` when it could not count them all (the
    count saturated, or the run died).  ``on_slow`` (optional) is called with the median
    once the replays show ``data`` past ``threshold``, before its growth is measured: a
    suspect they refute (a loaded moment timed, not the input) never reaches it.
    """
    estimate = _Estimate(len(data), threshold if first is None else first)
    med = yield from median_steps(run, data, estimate)
    if med < threshold:
        return None
    if on_slow is not None:
        on_slow(med)
    start, unit, reps = repeated_part(data)
    # An input that is already very slow grows from a quarter of its repeated part.
    factors = (1, 2, 4) if med < 4 * threshold else (0.25, 0.5, 1)
    growers = [
        lambda f: pump(data, start, unit, reps, f),
        lambda f: data * max(1, int(f)) if f >= 1 else data[: max(1, int(len(data) * f))],
    ]
    for grow in growers:
        candidates = [grow(f) for f in factors]
        sizes = [len(c) for c in candidates]
        if len(set(sizes)) != len(sizes):
            continue
        times = []
        for candidate in candidates:
            times.append((yield from median_steps(run, candidate, estimate)))
        evidence = SlowEvidence(med, sizes, times, grow=grow, factors=factors)
        timed_superlinear = times[-1] >= MIN_MEASURABLE and _superlinear(evidence.growth)
        # Counted even when the times already confirm it: the exponent reported (and the
        # growth toward the hang limit it predicts) comes from the exact counts when they
        # confirm it too, since a few millisecond-long medians on a loaded machine give 2
        # one time and 7 the next.  Counts that don't (the work is in C, or a saturated
        # count left only small sizes) are left out of evidence the times confirmed.
        counted = (yield from _count_steps(count, grow, factors, estimate)) if count is not None else None
        counted_superlinear = counted is not None and _superlinear(_growth(counted[1]))
        if counted is not None and (counted_superlinear or not timed_superlinear):
            evidence.counted_sizes, evidence.lines = counted
        if timed_superlinear or counted_superlinear:
            return evidence
    return None


def _count_steps(
    count: Callable[[bytes], int | None],
    grow: Callable[[float], bytes],
    factors: tuple[float, ...],
    estimate: _Estimate,
) -> Generator[float, None, tuple[list[int], list[int]] | None]:
    """(sizes, counts) of the inputs ``grow`` makes, or ``None`` when they cannot be compared.

    While the biggest input's count saturates, every factor is halved (at most
    :data:`COUNT_HALVINGS` times); counting starts from the biggest, so a saturated
    round costs one count.  One count a step, its predicted seconds yielded first.
    """
    for _ in range(COUNT_HALVINGS + 1):
        candidates = [grow(f) for f in factors]
        sizes = [len(c) for c in candidates]
        if len(set(sizes)) != len(sizes):
            return None
        lines: list[int] = []
        for candidate in reversed(candidates):
            yield TRACE_SLOWDOWN * estimate.predict(len(candidate))
            n = count(candidate)
            if n is None:
                break
            lines.insert(0, n)
        else:
            return (sizes, lines) if lines[0] >= MIN_COUNTABLE else None
        factors = tuple(f / 2 for f in factors)
    return None


#: A confirmed input is grown until one run takes at least the target's timeout: each
#: try aims at this many times it (the prediction from the exponent is rough)...
CROSS_AIM = 1.25
#: ...with at most this many tries...
CROSS_TRIES = 4
#: ...each growing the input at most this many times over (the times measured so
#: far may be too small to predict from)...
CROSS_STEP = 64.0
#: ...and never past this many bytes (the finding then says it did not cross).
MAX_GROWN = 1 << 20
#: A grown run is stopped (by an alarm, in Python code) once it takes the timeout; the
#: parent allows it this many times the timeout before it interrupts it (code that holds
#: the interpreter, a regex, cannot be stopped sooner).
CROSS_LIMIT = 2.0


def _timed_within(run: Callable[[bytes], Any], data: bytes, limit: float) -> float:
    """Seconds of ``run(data)``, stopped at ``limit`` (then at least ``limit``).

    ``run`` calls the target through :func:`assay.engine.execute.run`.  The alarm stops
    it as a replay's timeout does (:func:`assay.engine.execute.run_timed`): a
    :class:`~assay.engine.execute.WedgeTimeout`, which the target cannot catch as an
    ``Exception``, raised only inside the target; an alarm that lands once the target
    has returned (its result being judged) raises nothing, and the run took ``limit``.
    """
    fired: list[bool] = []

    def on_alarm(signum, frame):  # noqa: ARG001
        if not fired:
            fired.append(True)
            if in_target_call(frame):
                raise WedgeTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0 = time.perf_counter()
    try:
        run(data)  # the target's run judges the timeout (a wedge): nothing is reported
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    elapsed = time.perf_counter() - t0
    return max(elapsed, limit) if fired else elapsed


def cross_steps(
    run: Callable[[bytes], Any], evidence: SlowEvidence, timeout: float
) -> Generator[float, None, tuple[bytes, float] | None]:
    """``(input, seconds)``: ``evidence``'s input grown until one run of it takes at least
    ``timeout`` (the hang limit; the run is stopped there), or ``None`` if it did not within :data:`CROSS_TRIES`
    tries and :data:`MAX_GROWN` bytes.  One run a step, its predicted seconds yielded first.

    The next factor is predicted as if cost grew as factor ** k, k the growth exponent
    (:attr:`SlowEvidence.exponent`, of the last doubling).  ``run`` must allow a run
    :data:`CROSS_LIMIT` times ``timeout``.
    """
    if evidence.grow is None or not evidence.factors:
        return None
    k = max(1.0, evidence.exponent)
    factor, seconds = evidence.factors[-1], max(evidence.times[-1], 1e-6)
    for _ in range(CROSS_TRIES):
        step = min(CROSS_STEP, max(1.25, (CROSS_AIM * timeout / seconds) ** (1 / k)))
        factor *= step
        grown = evidence.grow(factor)
        if len(grown) > MAX_GROWN:
            return None
        yield min(timeout, seconds * step**k)
        seconds = max(_timed_within(run, grown, timeout), 1e-6)
        if seconds >= timeout:
            return grown, seconds
    return None


#: Runs :func:`sample_stack` may make to catch the input in the act.
SAMPLE_ATTEMPTS = 3


def sample_stack(run: Callable[[bytes], Any], data: bytes, after: float) -> list[Frame]:
    """The innermost frames (not assay's) of ``run(data)`` about ``after`` seconds in.

    A run that ends before the sample (on a busy machine the timings that chose
    ``after`` can be inflated) is repeated with the sample at half its own
    duration, so the finding's signature never depends on a missed alarm.
    """
    for _ in range(SAMPLE_ATTEMPTS):
        started = time.perf_counter()
        captured = _sample_once(run, data, after)
        if captured:
            break
        after = (time.perf_counter() - started) / 2
    return captured


def _sample_once(run: Callable[[bytes], Any], data: bytes, after: float) -> list[Frame]:
    captured: list[Frame] = []

    def on_alarm(signum, frame):  # noqa: ARG001
        captured.extend(frames_from(frame))

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(after, 0.001))
    try:
        run(data)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return captured


#: Stacks taken of a slow run to find the frame that dominates it: at these
#: fractions of its count of line events and loop turns (at most twice its line
#: events, so the run gets to each), or of its median time when it is sampled.
KEY_POINTS = (0.1, 0.2, 0.3, 0.4, 0.5)


def dominant_frames(stacks: list[list[Frame]]) -> list[Frame]:
    """The frames of a slow run, from the innermost frame that the most ``stacks`` hold.

    One stack lands wherever the run happened to be (a helper the slow loop calls,
    one of two branches of its body), so keying by it made one slow input two bugs.
    The innermost frame held by the most stacks is the loop that spends the time:
    the key starts there, the same for every stack of that loop.  Ties go to the
    innermost frame of the earliest stack (the order of ``stacks`` is fixed).
    """
    taken = [s for s in stacks if s]
    if not taken:
        return []
    held = Counter(identity for s in taken for identity in {f.identity for f in s})
    most = max(held.values())
    for s in taken:
        for i, f in enumerate(s):
            if held[f.identity] == most:
                return s[i:]
    return taken[0]  # unreachable: the most-held identity is in some stack


def slow_verdict(frames: list[Frame], evidence: SlowEvidence, threshold: float) -> Verdict:
    growth = ", ".join(f"{g:.1f}x" for g in evidence.growth)
    why = f"threshold {threshold * 1000:.0f} ms" if threshold > 0 else "a new highest count of Python line events"
    detail = (
        f"median {evidence.median * 1000:.1f} ms ({why}); pumping the repeated part "
        f"to {evidence.sizes} bytes took {[round(t * 1000, 1) for t in evidence.times]} ms (growth {growth} per doubling)"
    )
    if evidence.lines:
        detail += (
            f"; at {evidence.counted_sizes} bytes, Python line events and loop turns {evidence.lines} "
            f"(growth {', '.join(f'{g:.1f}x' for g in evidence.line_growth)})"
        )
    detail += f"; growth exponent {evidence.exponent:.2f} (1 linear, 2 quadratic)"
    if evidence.crossed is not None:
        grown, seconds = evidence.crossed
        detail += f"; grown to {len(grown)} bytes it ran {seconds:.2f} s, into the hang limit (stopped there)"
    info = ExceptionInfo(type="slow", message=detail, frames=tuple(frames))
    data: dict[str, Any] = {
        "median": evidence.median,
        "sizes": evidence.sizes,
        "times": evidence.times,
        "exponent": round(evidence.exponent, 3),
    }
    if evidence.lines:
        data["lines"] = evidence.lines
        data["counted_sizes"] = evidence.counted_sizes
    if evidence.crossed is not None:
        data["crossed"] = {"size": len(evidence.crossed[0]), "seconds": evidence.crossed[1]}
    return Verdict("slow", f"superlinear@{frames_key(frames)}", detail, info, data)
