"""Traced runs in a forked child: line counts and the stack at a line event are exact."""

from __future__ import annotations

import os
import sys
import time

import pytest

from assay.engine import traced


def _inner(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _outer(n: int) -> int:
    return sum(_inner(k) for k in range(n))


def _run_input(data: bytes) -> None:
    """What a counted run does with its input: here, ``data`` names the work."""
    if data == b"forever":
        while True:
            pass
    if data == b"sleep":
        time.sleep(30)
    if data == b"die":
        os._exit(3)
    _outer(int(data))


@pytest.fixture
def counting():
    child = traced.CountingChild(_run_input, 1 << 20)
    yield child
    child.close(kill=True)


def _alive(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return False


def test_line_counts_are_exact_and_grow_with_the_work(counting):
    small = counting.count(b"10", 10.0)
    pid = counting.pid
    assert small == counting.count(b"10", 10.0) > 0
    big = counting.count(b"40", 10.0)
    assert big > 10 * small  # quadratic work, quadratic count
    assert counting.pid == pid, "one child served every count"


def test_a_count_stops_at_its_cap_without_finishing_the_run():
    child = traced.CountingChild(_run_input, 5000)
    try:
        # The child reports the cap as soon as it reaches it: no timeout is needed.
        started = time.monotonic()
        assert child.count(b"forever", timeout=30.0) == 5000
        assert time.monotonic() - started < 25
        assert child.pid is None  # it left at the cap...
        assert child.count(b"3", 10.0) > 0  # ...and a new one serves the next count
    finally:
        child.close(kill=True)


def test_a_child_past_its_deadline_counts_as_the_cap_and_is_killed_by_its_pid(counting):
    counting.count(b"1", 10.0)
    pid = counting.pid
    assert counting.count(b"sleep", timeout=0.5) == 1 << 20
    assert counting.pid is None and not _alive(pid)
    assert counting.count(b"10", 10.0) > 0 and counting.pid != pid


def test_a_child_that_dies_counts_zero_and_is_replaced(counting):
    assert counting.count(b"die", 10.0) == 0
    assert counting.pid is None
    assert counting.count(b"10", 10.0) > 0


def test_closing_ends_the_child(counting):
    counting.count(b"1", 10.0)
    pid = counting.pid
    counting.close()
    assert counting.pid is None and not _alive(pid)


def test_a_submitted_count_runs_beside_the_caller_and_is_collected_later(counting):
    expected = counting.count(b"30", 10.0)
    counting.submit(b"30", 10.0)
    assert counting.pending
    with pytest.raises(RuntimeError):
        counting.submit(b"1", 10.0)  # one count at a time
    _outer(30)  # the caller's own work meanwhile: the child counts on its own
    assert counting.collect() == expected and not counting.pending
    with pytest.raises(RuntimeError):
        counting.collect()
    counting.submit(b"sleep", 0.5)  # the deadline runs from the submission
    time.sleep(0.6)
    assert counting.collect() == 1 << 20 and counting.pid is None


def test_under_the_sandbox_the_child_works_in_a_folder_of_its_own(tmp_path):
    """Its runs overlap the worker's: a file the target writes in its cwd must not be the worker's."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked test body
        code = 1
        try:
            from assay.engine import sandbox

            sandbox.enter(str(tmp_path))

            def writes_in_cwd(data: bytes) -> None:
                with open("scratch", "wb") as fh:
                    fh.write(data)

            child = traced.CountingChild(writes_in_cwd, 1 << 20)
            lines = child.count(b"x", 10.0)
            child.close()
            mine = sorted(os.listdir(tmp_path))
            theirs = [p for p in mine if p.startswith("count-")]
            ok = (
                lines > 0
                and "scratch" not in mine
                and len(theirs) == 1
                and os.listdir(tmp_path / theirs[0]) == ["scratch"]
            )
            os.write(write_end, repr((ok, lines, mine)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    report = os.read(read_end, 4096).decode()
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert status == 0 and report.startswith("(True"), report


def _one_line_loops(n: int) -> int:
    kept = sum(1 if b % 3 else 0 for b in range(n))  # a forward jump on most turns: not counted
    squares = [b * b for b in range(n)]
    i = 0
    while i < n: i += 1  # noqa: E701 - the loop on one line is the point  # fmt: skip
    return kept + len(squares) + i


@pytest.mark.parametrize("tally", ["c", "python"])
def test_a_loop_on_one_line_counts_each_turn(tally, monkeypatch):
    """A comprehension runs no new line per turn: its backward jumps are what count.

    Counting LINE events alone, these three loops cost the same at any ``n``, and a
    quadratic scan written as a generator expression looked linear to the slow oracle.
    """
    from assay.gen.accelerated import cmutate

    if tally == "c" and cmutate is None:
        pytest.skip("assay.gen._cmutate is not built (no C compiler)")
    if tally == "python":
        monkeypatch.setattr(traced, "cmutate", None)
    child = traced.CountingChild(lambda data: _one_line_loops(int(data)), 1 << 20)
    try:
        counts = [child.count(str(n).encode(), 10.0) for n in (100, 200, 400)]
    finally:
        child.close(kill=True)
    assert counts[1] - counts[0] == 3 * 100 and counts[2] - counts[1] == 3 * 200, counts


def test_the_c_tally_counts_the_events_the_python_one_counts(monkeypatch):
    from assay.gen.accelerated import cmutate

    if cmutate is None:
        pytest.skip("assay.gen._cmutate is not built (no C compiler)")

    def counts() -> list[int]:
        child = traced.CountingChild(_run_input, 5000)
        try:
            return [child.count(work, 10.0) for work in (b"3", b"10", b"25", b"forever")]
        finally:
            child.close(kill=True)

    with_c = counts()
    monkeypatch.setattr(traced, "cmutate", None)
    assert counts() == with_c
    assert with_c[0] < with_c[1] < with_c[2] < with_c[3] == 5000


def test_the_stack_at_a_line_is_the_same_every_time(counting):
    def run() -> int:
        return _outer(30)

    n = counting.count(b"30", 10.0)
    first = traced.stack_at_line(run, n // 2, 10.0)
    assert first == traced.stack_at_line(run, n // 2, 10.0)
    assert [f.qualname for f in first[:3]] == ["_inner", "_outer.<locals>.<genexpr>", "_outer"]
    assert traced.stack_at_line(lambda: _outer(2), 10 * n, 10.0) == []  # the run ends first


def _count_everything(tool: int):
    """The counting before assay's own lines were left out: every code object counted."""
    mon = sys.monitoring

    def started(code, offset):  # noqa: ARG001 - the PY_START signature
        mon.set_local_events(tool, code, mon.events.LINE | mon.events.JUMP)
        return mon.DISABLE

    return started


@pytest.mark.parametrize("tally", ["c", "python"])
def test_a_count_is_the_target_lines_alone(tally, monkeypatch):
    """Run through ``execute.run`` (the worker's way) or called directly, a target's count
    is the same: assay's frames around it are not counted, so how assay's code is written
    (two more lines in ``execute.run``) cannot move a cost class, nor the schedule with it."""
    from assay.engine import execute
    from assay.gen.accelerated import cmutate
    from assay.harness.define import make_target

    if tally == "c" and cmutate is None:
        pytest.skip("assay.gen._cmutate is not built (no C compiler)")
    if tally == "python":
        monkeypatch.setattr(traced, "cmutate", None)
    target = make_target(lambda data: _outer(int(data)), name="outer")

    def counts() -> tuple[int, int]:
        direct = traced.CountingChild(lambda data: target.fn(data), 1 << 20)
        through = traced.CountingChild(lambda data: execute.run(target, data), 1 << 20)
        try:
            return direct.count(b"12", 10.0), through.count(b"12", 10.0)
        finally:
            direct.close(kill=True)
            through.close(kill=True)

    direct, through = counts()
    assert direct == through > 0
    monkeypatch.setattr(traced, "counted_code", _count_everything)
    everything_direct, everything_through = counts()
    assert everything_direct == direct and everything_through > direct
