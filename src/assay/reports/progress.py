"""Progress for long runs: a live display on a terminal, a pulse line now and then in CI logs.

On a terminal, :class:`CampaignProgress` draws one row per target with ``rich``
(bar, cases, exec/s, edges, corpus, findings, time) when the ``rich`` extra is
installed, and a line redrawn in place otherwise.  Elsewhere (a CI log, a file)
it writes a libFuzzer-style pulse line every :data:`PULSE_EVERY` seconds::

    #12345 pulse  target: parse  cases: 12345  exec/s: 2469  edges: 812  corpus: 96  findings: 1  elapsed: 5s  left: 55s

:class:`ProgressLine` is the same split for any command that renders its own line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TextIO

#: Seconds between redraws of the live line on a terminal.
REDRAW_EVERY = 0.25
#: Seconds between pulse lines when the stream is not a terminal (CI logs).
PULSE_EVERY = 10.0
#: Width of the live display's progress bar, and the narrowest it gets on a narrow terminal.
BAR_WIDTH, BAR_MIN_WIDTH = 40, 8
#: Columns the spinner takes once a row is done (its finished text, ``done``).
_SPINNER_WIDTH = 4
#: Environment variable overriding :data:`PULSE_EVERY` (seconds; 0 turns pulse lines off).
PULSE_ENV = "ASSAY_PULSE_EVERY"

Clock = Callable[[], float]


def pulse_every(default: float | None = PULSE_EVERY) -> float | None:
    """Seconds between pulse lines: ``$ASSAY_PULSE_EVERY`` when set and valid, else ``default``."""
    raw = os.environ.get(PULSE_ENV, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        return default
    return None if value <= 0 else value


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or fake stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _rich_console(stream: TextIO):
    """A rich Console on ``stream``, or None without the ``rich`` extra."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=stream, stderr=False)


class ProgressLine:
    """Call with whatever ``render`` turns into one line of text.

    On a terminal the line is redrawn in place at most every :data:`REDRAW_EVERY`
    seconds; elsewhere (a CI log) a line is written every ``log_every`` seconds
    (default :func:`pulse_every`), or never when it is None.
    """

    def __init__(
        self,
        stream: TextIO,
        render: Callable[..., str],
        log_every: float | None = PULSE_EVERY,
        clock: Clock = time.monotonic,
        live: bool | None = None,
    ) -> None:
        self.stream = stream
        self.render = render
        self.clock = clock
        self.live = is_terminal(stream) if live is None else live
        self.every = REDRAW_EVERY if self.live else None if log_every is None else pulse_every(log_every)
        self.last = clock() if not self.live else float("-inf")
        self.drawn = False

    def __call__(self, *state: Any) -> None:
        now = self.clock()
        if self.every is None or now - self.last < self.every:
            return
        self.last = now
        line = self.render(*state)
        if self.live:
            try:
                width = os.get_terminal_size(self.stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                width = 100
            self.stream.write("\r" + line[: width - 1].ljust(width - 1))
            self.drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def pulse_line(p: Any, word: str = "pulse") -> str:
    """libFuzzer-style status of a campaign :class:`~assay.engine.supervisor.Progress`."""
    rate = p.cases / p.elapsed if p.elapsed > 0 else 0.0
    left = "" if p.time_left is None else f"  left: {p.time_left:.0f}s"
    return (
        f"#{p.cases} {word}  target: {p.target}  cases: {p.cases}  exec/s: {rate:.0f}  edges: {p.edges}  "
        f"corpus: {p.corpus}  findings: {p.findings}  elapsed: {p.elapsed:.0f}s{left}"
    )


class CampaignProgress:
    """The progress of ``assay fuzz``: call with each supervisor ``Progress``, then :meth:`finish`.

    Not a terminal: a :func:`pulse_line` every ``every`` seconds (default
    :func:`pulse_every`) and, for a target that pulsed, a ``done`` line with its
    final numbers when it ends (a ``Progress`` with ``done`` set).
    A terminal: a rich display with one row per target, or the plain line
    without ``rich``.  ``live`` and ``clock`` exist for tests.
    """

    def __init__(
        self, stream: TextIO, every: float | None = None, clock: Clock = time.monotonic, live: bool | None = None
    ) -> None:
        from assay.reports.campaign import progress_line

        self.stream = stream
        self.clock = clock
        self.live = is_terminal(stream) if live is None else live
        self.every = pulse_every() if every is None else every
        self.last_pulse = clock()
        self.pulsed: set[str] = set()  # targets that wrote a pulse line (they get a done line)
        self.forkable = not self.live  # pulse lines may come from forked --jobs workers; a live display may not
        self.display = _RichDisplay.create(stream) if self.live else None
        self.plain = (
            ProgressLine(stream, progress_line, clock=clock, live=True) if self.live and not self.display else None
        )

    def __call__(self, p: Any) -> None:
        if self.display is not None:
            self.display.update(p)
            return
        if self.plain is not None:
            if not getattr(p, "done", False):
                self.plain(p)
            return
        if getattr(p, "done", False):
            if p.target in self.pulsed:
                self._write(pulse_line(p, "done"))
            return
        now = self.clock()
        if self.every is not None and now - self.last_pulse >= self.every:
            self.last_pulse = now
            self.pulsed.add(p.target)
            self._write(pulse_line(p))

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the display (call once, after the campaign)."""
        if self.display is not None:
            self.display.stop()
        if self.plain is not None:
            self.plain.finish()


class _RichDisplay:
    """One rich progress row per target (only built when ``rich`` is importable)."""

    def __init__(self, progress: Any, bar: Any, clock: Clock = time.monotonic) -> None:
        self.progress = progress
        self.bar = bar
        self.clock = clock
        self.drawn = float("-inf")
        self.tasks: dict[str, Any] = {}
        self.totals: dict[str, float | None] = {}
        self.current: str | None = None

    @classmethod
    def create(cls, stream: TextIO) -> _RichDisplay | None:
        """A started display on ``stream``, or None without the ``rich`` extra."""
        console = _rich_console(stream)
        if console is None:
            return None
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn
        from rich.table import Column

        bar = BarColumn(bar_width=BAR_WIDTH)
        progress = Progress(
            SpinnerColumn(finished_text="[green]done[/]"),
            TextColumn("[bold]{task.fields[target]}[/]", table_column=Column(no_wrap=True)),
            bar,
            TextColumn("{task.fields[stats]}", table_column=Column(no_wrap=True, overflow="ellipsis")),
            # No refresh thread and no stdout/stderr proxies: the supervisor forks workers,
            # and a child must not inherit a lock another thread held (it redraws on updates).
            console=console,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
            transient=False,
        )
        progress.start()
        return cls(progress, bar)

    def update(self, p: Any) -> None:
        """Show ``p`` in its target's row (a new row for a new target; a full bar when done)."""
        if p.target not in self.tasks:
            if self.current is not None:
                self._complete(self.current)
            from rich.markup import escape

            self.tasks[p.target] = self.progress.add_task(p.target, total=None, target=escape(p.target), stats="")
            self.current = p.target
        done = getattr(p, "done", False)
        rate = p.cases / p.elapsed if p.elapsed > 0 else 0.0
        left = "" if p.time_left is None else f"  left {p.time_left:.0f}s" if p.time_left > 0 else "  finishing"
        stats = self._fit(
            p.target,
            [
                (f"{p.cases:,} cases", 0),
                (f"{rate:,.0f}/s", 4),
                (f"edges {p.edges}", 2),
                (f"corpus {p.corpus}", 5),
                (f"findings {p.findings}", 1),
                (f"{p.elapsed:.1f}s{left}", 3),
            ],
        )
        if p.findings:
            stats = stats.replace(f"findings {p.findings}", f"findings [red]{p.findings}[/]")
        if getattr(p, "planned", None):
            total, completed = float(p.planned), float(min(p.cases, p.planned))
        elif p.time_left is not None:
            total, completed = p.elapsed + p.time_left, p.elapsed
        else:
            total, completed = None, 0.0
        if total is not None and completed >= total and not done:
            completed = total * 0.999  # the schedule is spent but the target is still finishing (a shrink)
        self.totals[p.target] = total
        self.progress.update(self.tasks[p.target], total=total, completed=completed, stats=stats)
        if done:
            self._complete(p.target)
        now = self.clock()
        if done or now - self.drawn >= REDRAW_EVERY:
            self.drawn = now
            self.progress.refresh()

    def _fit(self, target: str, parts: list[tuple[str, int]]) -> str:
        """The stats that fit beside the whole target names (and a bar as narrow as needed).

        ``parts`` are (text, rank): when the row is too wide for the console, the bar
        shrinks to :data:`BAR_MIN_WIDTH` first, then parts go, highest rank first; the
        target names are never cut (a CI log at 80 columns must still name the target).
        """
        name_width = max(len(n) for n in [*self.tasks, target])
        room = self.progress.console.width - _SPINNER_WIDTH - name_width - 3  # three 1-column gaps
        full = "  ".join(text for text, _ in parts)
        self.bar.bar_width = max(BAR_MIN_WIDTH, min(BAR_WIDTH, room - len(full)))
        budget = room - self.bar.bar_width
        kept = list(parts)
        while kept and len("  ".join(text for text, _ in kept)) > budget:
            kept.remove(max(kept, key=lambda part: part[1]))
        return "  ".join(text for text, _ in kept)

    def _complete(self, name: str) -> None:
        total = self.totals.get(name) or 1.0
        self.progress.update(self.tasks[name], total=total, completed=total)

    def stop(self) -> None:
        if self.current is not None:
            self._complete(self.current)
        self.progress.refresh()
        self.progress.stop()
