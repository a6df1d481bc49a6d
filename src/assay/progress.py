"""A progress line for long runs: redrawn in place on a terminal, logged now and then in CI."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, TextIO

#: Seconds between redraws of the live line on a terminal.
REDRAW_EVERY = 0.25


class ProgressLine:
    """Call with whatever ``render`` turns into one line of text.

    On a terminal the line is redrawn in place at most every :data:`REDRAW_EVERY`
    seconds; elsewhere (a CI log) a line is written every ``log_every`` seconds,
    or never when ``log_every`` is None.
    """

    def __init__(self, stream: TextIO, render: Callable[..., str], log_every: float | None = None) -> None:
        self.stream = stream
        self.render = render
        self.live = stream.isatty()
        self.every = REDRAW_EVERY if self.live else log_every
        self.last = time.monotonic() if not self.live else 0.0
        self.drawn = False

    def __call__(self, *state: Any) -> None:
        now = time.monotonic()
        if self.every is None or now - self.last < self.every:
            return
        self.last = now
        line = self.render(*state)
        if self.live:
            width = os.get_terminal_size(self.stream.fileno()).columns
            self.stream.write("\r" + line[: width - 1].ljust(width - 1))
            self.drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
