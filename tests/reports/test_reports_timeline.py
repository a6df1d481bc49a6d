"""The coverage timeline: bounded, evenly thinned, first and newest points kept; jobs merged."""

from __future__ import annotations

from assay.core.timeline import Timeline, merge


def test_a_long_run_keeps_at_most_max_points_spread_over_the_whole_run():
    tl = Timeline(max_points=50, first_step=0.01)
    for i in range(20_000):
        tl.add(i * 10, i * 0.005, i // 100, i // 400)
    points = tl.points
    assert len(points) <= 50
    assert points[0] == (0, 0.0, 0, 0) and points[-1] == (199_990, 99.995, 199, 49)
    gaps = [b[1] - a[1] for a, b in zip(points, points[1:-1])]
    assert max(gaps) <= 2.5 * min(gaps)  # evenly spread, not crowded at the start


def test_samples_closer_than_the_step_replace_the_newest_point():
    tl = Timeline(max_points=10, first_step=1.0)
    tl.add(0, 0.0, 0, 0)
    tl.add(5, 0.2, 3, 1)
    tl.add(9, 0.4, 4, 1)
    assert tl.points == [(0, 0.0, 0, 0), (9, 0.4, 4, 1)]
    tl.add(20, 1.5, 6, 2)
    tl.add(21, 1.6, 6, 2)
    assert tl.points == [(0, 0.0, 0, 0), (20, 1.5, 6, 2), (21, 1.6, 6, 2)]


def test_jobs_merge_sums_cases_and_takes_the_largest_coverage():
    a = [[0, 0.0, 0, 0], [100, 1.0, 10, 2], [200, 2.0, 12, 3]]
    b = [[0, 0.0, 0, 0], [50, 1.5, 20, 4]]
    merged = merge([a, b])
    assert merged == [(0, 0.0, 0, 0), (100, 1.0, 10, 2), (150, 1.5, 20, 4), (250, 2.0, 20, 4)]
