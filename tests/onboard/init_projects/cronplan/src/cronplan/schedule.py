"""Cron lines users type into a job form: check them, list the next runs, test a moment."""

from __future__ import annotations

from datetime import datetime

from croniter import CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError, croniter

#: The moment schedules are computed from, so that results do not depend on the clock.
EPOCH = datetime(2024, 1, 1)
#: What croniter documents raising for a bad cron line.
CRON_ERRORS = (CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError)


class ScheduleError(ValueError):
    """The cron line (or the moment given with it) is not valid."""


def is_valid_schedule(expr: str) -> bool:
    """Whether ``expr`` is a cron line this module accepts; never raises for any text."""
    return croniter.is_valid(expr)


def next_runs(expr: str, count: int = 3) -> list[datetime]:
    """The next ``count`` (1 to 50) runs of the cron line after the module's fixed start.

    Raises:
        ScheduleError: the cron line is not valid, or ``count`` is out of range.
    """
    if not 1 <= count <= 50:
        raise ScheduleError(f"count must be 1 to 50, not {count}")
    try:
        it = croniter(expr, EPOCH)
        return [it.get_next(datetime) for _ in range(count)]
    except CRON_ERRORS as e:
        raise ScheduleError(f"bad cron line {expr!r}: {e}") from e


def matches(expr: str, when: str) -> bool:
    """Whether the cron line fires at the ISO 8601 moment ``when`` (to the minute).

    Raises:
        ScheduleError: the cron line or the moment is not valid.
    """
    try:
        moment = datetime.fromisoformat(when)
    except ValueError as e:
        raise ScheduleError(f"bad moment {when!r}: {e}") from e
    try:
        return croniter.match(expr, moment)
    except CRON_ERRORS as e:
        raise ScheduleError(f"bad cron line {expr!r}: {e}") from e
