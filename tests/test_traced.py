"""Traced runs in a forked child: line counts and the stack at a line event are exact."""

from __future__ import annotations

from assay.engine import traced


def _inner(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _outer(n: int) -> int:
    return sum(_inner(k) for k in range(n))


def test_line_counts_are_exact_and_grow_with_the_work():
    small = traced.count_lines(lambda: _outer(10), 1 << 20, 10.0)
    assert small == traced.count_lines(lambda: _outer(10), 1 << 20, 10.0)
    big = traced.count_lines(lambda: _outer(40), 1 << 20, 10.0)
    assert big > 10 * small  # quadratic work, quadratic count


def test_a_count_stops_at_its_cap_without_finishing_the_run():
    def forever() -> None:
        while True:
            pass

    # The child reports the cap as soon as it reaches it: no timeout is needed.
    assert traced.count_lines(forever, 5000, timeout=30.0) == 5000


def test_a_child_past_its_deadline_counts_as_the_cap():
    import time

    assert traced.count_lines(lambda: time.sleep(30), 1000, timeout=0.5) == 1000


def test_the_stack_at_a_line_is_the_same_every_time():
    def run() -> int:
        return _outer(30)

    n = traced.count_lines(run, 1 << 20, 10.0)
    first = traced.stack_at_line(run, n // 2, 10.0)
    assert first == traced.stack_at_line(run, n // 2, 10.0)
    assert [f.qualname for f in first[:3]] == ["_inner", "_outer.<locals>.<genexpr>", "_outer"]
    assert traced.stack_at_line(lambda: _outer(2), 10 * n, 10.0) == []  # the run ends first
