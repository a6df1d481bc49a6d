"""Coverage over time: a bounded series of (cases, seconds, edges, corpus) samples per target.

Samples come in as often as the supervisor polls (every few milliseconds); the
series keeps at most :data:`MAX_POINTS`, evenly spread in time: a sample closer
than ``step`` seconds to the last kept one replaces the newest point instead of
adding one, and when the series is full every other point is dropped and ``step``
doubles.  The first and the newest sample are always kept, so a plot starts at the
origin and ends at the target's final numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: Most points kept per target (the report and the HTML plot carry them all).
MAX_POINTS = 240
#: Seconds between kept samples before the first thinning.
FIRST_STEP = 0.05

Point = tuple[int, float, int, int]  # cases, seconds, edges, corpus
FIELDS = ("cases", "seconds", "edges", "corpus")


class Timeline:
    """A bounded, thinned series of :data:`Point` (see the module docstring)."""

    def __init__(self, max_points: int = MAX_POINTS, first_step: float = FIRST_STEP) -> None:
        if max_points < 3:
            raise ValueError("a timeline needs room for at least 3 points")
        self.max_points = max_points
        self.step = first_step
        self.points: list[Point] = []
        self._tail_is_pending = False  # the newest point may be replaced by a later sample

    def add(self, cases: float, seconds: float, edges: float, corpus: float) -> None:
        """Record the state at ``seconds`` since the target started."""
        point = (int(cases), round(float(seconds), 3), int(edges), int(corpus))
        if self.points and point == self.points[-1]:
            return
        if self._tail_is_pending:
            self.points.pop()
        self._tail_is_pending = bool(self.points) and point[1] - self.points[-1][1] < self.step
        self.points.append(point)
        if not self._tail_is_pending:
            self._thin()

    def _thin(self) -> None:
        # Leaves room for one pending point, so the series never exceeds max_points.
        while len(self.points) >= self.max_points:
            newest = self.points[-1]
            self.points = self.points[:-1:2] + [newest]
            self.step *= 2

    def as_json(self) -> list[list[float]]:
        """The points as ``[cases, seconds, edges, corpus]`` lists (the report's layout)."""
        return [list(p) for p in self.points]


def merge(series: Sequence[Iterable[Sequence[float]]], max_points: int = MAX_POINTS) -> list[Point]:
    """One series for jobs that ran side by side: cases add up, edges and corpus take the largest.

    Each job's series is a step function of time; at every time any job sampled,
    the merged point sums the jobs' latest cases and takes the maximum of their
    latest edges and corpus sizes (jobs share one corpus folder).
    """
    tracks = [[tuple(p) for p in s] for s in series]
    times = sorted({p[1] for track in tracks for p in track})
    latest: list[tuple[float, ...]] = [(0, 0.0, 0, 0)] * len(tracks)
    cursor = [0] * len(tracks)
    out = Timeline(max_points)
    for t in times:
        for i, track in enumerate(tracks):
            while cursor[i] < len(track) and track[cursor[i]][1] <= t:
                latest[i] = track[cursor[i]]
                cursor[i] += 1
        out.add(sum(p[0] for p in latest), t, max(p[2] for p in latest), max(p[3] for p in latest))
    return out.points
