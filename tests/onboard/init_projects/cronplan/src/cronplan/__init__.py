"""Job schedules from cron lines."""

from cronplan.schedule import ScheduleError, is_valid_schedule, matches, next_runs

__all__ = ["ScheduleError", "is_valid_schedule", "matches", "next_runs"]
