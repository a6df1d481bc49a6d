"""Things a run did on its own that the user should hear about (a stale file removed, say).

Library code calls :func:`notify`; the command line sets a sink that prints each
notice to stderr.  Without a sink, notices are only kept in :data:`messages`.
"""

from __future__ import annotations

from collections.abc import Callable

#: Every notice of this process, oldest first (most recent :data:`MAX_KEPT`).
messages: list[str] = []
#: Most notices kept in :data:`messages`.
MAX_KEPT = 1000

_sink: list[Callable[[str], None]] = []


def set_sink(sink: Callable[[str], None] | None) -> None:
    """Where notices go as they happen (``None``: only :data:`messages`)."""
    _sink.clear()
    if sink is not None:
        _sink.append(sink)


def notify(message: str) -> None:
    """Tell the user ``message`` (one line, no trailing period needed)."""
    messages.append(message)
    del messages[:-MAX_KEPT]
    for sink in _sink:
        sink(message)
