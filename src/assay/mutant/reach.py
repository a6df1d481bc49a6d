"""Which test reaches which mutated line: ``sys.monitoring`` LINE events during the baseline.

The recorder follows the feedback layer's rule for the hot path: decide once per
code object and return ``DISABLE`` wherever possible.  ``PY_START`` turns on local
``LINE`` events only for code objects of the mutated files; every other code
object costs one callback per test.  A ``LINE`` callback records the line when it
is a mutated line and disables itself either way, so a line costs one callback
per test.  Between tests ``restart_events()`` re-arms everything, which is what
makes the record per test.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from assay.feedback.sysmon import claim_tool_id, monitoring, release_tool_id

_TOOL_NAME = "assay-mutant"
#: The line number recorded for "the test ran some function of this file"; module-
#: and class-level mutants (executed at import, before any test) are reached by it.
FILE_TOUCHED = 0


class ReachRecorder:
    """Records, per test, the mutated lines it executed.

    ``lines`` maps a real file path to the set of line numbers of interest.
    Call :meth:`begin` before each test and :meth:`end` after it; :meth:`end`
    returns the ``(path, line)`` pairs the test reached.
    """

    def __init__(self, lines: dict[str, set[int]]) -> None:
        self.lines = {os.path.realpath(p): set(v) for p, v in lines.items()}
        self.files = set(self.lines)
        self.hit: set[tuple[str, int]] = set()
        self.tool_id: int | None = None
        self._decided: dict[int, str | None] = {}
        self._refs: list[Any] = []

    def start(self) -> None:
        mon = monitoring()
        self.tool_id = claim_tool_id(_TOOL_NAME)
        mon.register_callback(self.tool_id, mon.events.PY_START, self._on_start)
        mon.register_callback(self.tool_id, mon.events.LINE, self._on_line)
        mon.set_events(self.tool_id, mon.events.PY_START)

    def stop(self) -> None:
        if self.tool_id is None:
            return
        mon = monitoring()
        tool, self.tool_id = self.tool_id, None
        release_tool_id(tool, self._refs, (mon.events.PY_START, mon.events.LINE))

    def begin(self) -> None:
        self.hit = set()
        if self.tool_id is not None:
            monitoring().restart_events()

    def end(self) -> set[tuple[str, int]]:
        hit, self.hit = self.hit, set()
        return hit

    # -- callbacks --------------------------------------------------------------------
    def _on_start(self, code: Any, offset: int) -> Any:
        key = id(code)
        if key in self._decided:
            path = self._decided[key]
        else:
            filename = code.co_filename
            real = os.path.realpath(filename) if not filename.startswith("<") else filename
            path = real if real in self.files else None
            self._decided[key] = path
            if path is not None:
                self._refs.append(code)  # keeps the id from being reused
                sys.monitoring.set_local_events(self.tool_id, code, sys.monitoring.events.LINE)  # type: ignore[arg-type]  # installed
        if path is not None:
            self.hit.add((path, FILE_TOUCHED))
        return sys.monitoring.DISABLE

    def _on_line(self, code: Any, line: int) -> Any:
        path = self._decided.get(id(code))
        if path is not None and line in self.lines[path]:
            self.hit.add((path, line))
        return sys.monitoring.DISABLE


def reached_by(mutant_lines: Iterable[int], path: str, per_test: dict[str, set[tuple[str, int]]]) -> list[str]:
    """Tests whose recorded lines include any of ``mutant_lines`` of ``path``."""
    real = os.path.realpath(path)
    wanted = {(real, line) for line in mutant_lines}
    return [test for test, hits in per_test.items() if hits & wanted]
