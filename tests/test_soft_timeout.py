"""A per-case timeout raises only inside the target, never in assay's own code after it returned.

The parent's ``SIGUSR1`` (campaigns) or ``SIGALRM`` (replays) can land after the
target has returned, while its exception is being judged: formatting a deep
``RecursionError``'s traceback takes long enough.  Raised there, the
``WedgeTimeout`` broke the worker (exit 3, no report).  These tests send the
signal from the judging itself, through the ``isinstance`` check against the
target's ``expected`` classes.
"""

from __future__ import annotations

import os
import signal

import pytest

from assay.core.target import Target
from assay.engine import execute, journal as jr, slow
from assay.engine.worker import install_soft_timeout


class SignalOnCheck(type):
    """A metaclass whose ``isinstance`` check sends the signal: assay makes that check while judging."""

    def __instancecheck__(cls, instance) -> bool:
        os.kill(os.getpid(), signal.SIGUSR1)
        return False


class JudgedSlowly(Exception, metaclass=SignalOnCheck):
    """Named in the target's ``expected``: checking it is part of judging what the target raised."""


def raises_then_signalled(data: bytes) -> None:
    raise ValueError(data)


def signalled_while_running(data: bytes) -> None:
    os.kill(os.getpid(), signal.SIGUSR1)
    for _ in range(1000):  # the handler runs at the next bytecode boundary, still in here
        pass


@pytest.fixture
def soft_timeout():
    """The campaign worker's SIGUSR1 handler, with the journal asking to interrupt the running case."""
    journal = jr.Journal(64)
    started = journal.begin(jr.GENERATED, 7, jr.CASE, b"x")
    journal.request_interrupt(7, started)
    old = signal.getsignal(signal.SIGUSR1)
    install_soft_timeout(journal)
    yield
    signal.signal(signal.SIGUSR1, old)


def test_a_timeout_landing_while_the_result_is_judged_leaves_the_verdict_alone(soft_timeout):
    result = execute.run(Target("judged", raises_then_signalled, expected=(JudgedSlowly,)), b"x")
    assert result.verdict is not None
    assert result.verdict.oracle != "wedge"
    assert result.verdict.signature.startswith("panic:builtins.ValueError@")


def test_a_timeout_landing_inside_the_target_is_a_wedge(soft_timeout):
    result = execute.run(Target("running", signalled_while_running), b"x")
    assert result.verdict is not None and result.verdict.oracle == "wedge"


class AlarmOnCheck(type):
    """:class:`SignalOnCheck` with the alarm that stops a slow finding's grown run (assay.engine.slow)."""

    def __instancecheck__(cls, instance) -> bool:
        os.kill(os.getpid(), signal.SIGALRM)
        return False


class JudgedPastTheLimit(Exception, metaclass=AlarmOnCheck):
    """Named in the target's ``expected``: the alarm lands while what the target raised is judged."""


def alarmed_while_running(data: bytes) -> None:
    try:
        os.kill(os.getpid(), signal.SIGALRM)
        for _ in range(1000):
            pass
    except Exception:  # a target's catch-all must not swallow the stop and run on
        return


def test_the_hang_limits_alarm_landing_while_the_result_is_judged_leaves_the_verdict_alone():
    results: list = []
    target = Target("judged", raises_then_signalled, expected=(JudgedPastTheLimit,))
    slow._timed_within(lambda d: results.append(execute.run(target, d)), b"x", 60.0)
    (result,) = results
    assert result.verdict is not None and result.verdict.signature.startswith("panic:builtins.ValueError@")


def test_the_hang_limits_alarm_landing_inside_the_target_stops_it():
    results: list = []
    seconds = slow._timed_within(
        lambda d: results.append(execute.run(Target("running", alarmed_while_running), d)), b"x", 60.0
    )
    (result,) = results
    assert result.verdict is not None and result.verdict.oracle == "wedge"
    assert seconds >= 60.0, "stopped at the limit: the run took at least that long"
