"""Reference targets for cronplan: what a round-two ``assay init`` should write (issue 42).

One target per function re-exported from ``cronplan/__init__`` (defined in
``cronplan.schedule``); the contract is ``ScheduleError`` only, so a raw ``ValueError``
from croniter is a finding even though ``ScheduleError`` subclasses ``ValueError``.
"""

import cronplan
from cronplan import ScheduleError

import assay

SEEDS = [b"*/5 1-3 * * mon-fri", b"0 0 L * *", b"0 12 1,15 */2 0", b"30 4 1-7 * 1#2"]


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


@assay.target(expected=(), seeds=SEEDS)
def is_valid_schedule(data: bytes) -> None:
    cronplan.is_valid_schedule(text(data))


@assay.target(expected=(ScheduleError,), seeds=SEEDS)
def next_runs(data: bytes) -> None:
    cronplan.next_runs(text(data), 2)


@assay.target(expected=(ScheduleError,), seeds=[s + b"\x002024-03-04T01:05" for s in SEEDS])
def matches(data: bytes) -> None:
    expr, _, when = text(data).partition("\x00")
    cronplan.matches(expr, when)
