"""Processes a target forks that return into assay's loop instead of exiting.

Such a process is a copy of the worker: left alone it would run the rest of the
schedule a second time, writing to the same pipe and journal.  :func:`returned`
records it in the worker's journal (the supervisor turns that into a ``safety``
finding) and ends it with ``os._exit`` at once.
"""

from __future__ import annotations

import os
from typing import Any

from assay.core.verdict import Verdict

_state: dict[str, Any] = {"journal": None}


def arm(journal: Any) -> None:
    """In a worker: strays report to ``journal`` (its shared memory survives their fork)."""
    _state["journal"] = journal


def returned(target: Any, data: bytes) -> None:
    """End a stray process that came back from ``target`` (never returns)."""
    try:
        journal = _state["journal"]
        if journal is not None:
            fn = getattr(target.fn, "__wrapped__", target.fn)
            key = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"
            journal.add_stray(data, key)
    finally:
        os._exit(0)


def stray_verdict(key: str) -> Verdict:
    """The ``safety`` verdict of a forked process that returned from the target ``key``."""
    detail = f"a process forked by {key} returned into assay's loop instead of exiting (os._exit) or exec-ing"
    return Verdict("safety", f"fork-returned@{key}", detail)
