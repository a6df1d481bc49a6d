"""Which Python code ran at all, in or out of a target's coverage scope.

The coverage feedback sees only in-scope code, so it cannot tell that a target
spends its time in a library left out of scope.  :class:`ExecutedCode` asks
``sys.monitoring`` for ``PY_START`` alone and returns ``DISABLE`` from it: each code
object costs one callback, however often it runs, and its lines (``co_lines``) are
taken as the lines it ran.  That over-counts lines a called function skipped, in
scope and out of it alike, which is enough to say where most of the work happens.
"""

from __future__ import annotations

import sys
from typing import Any

from assay.feedback.sysmon import claim_tool_id, monitoring, release_tool_id

_TOOL_NAME = "assay-executed"


class ExecutedCode:
    """Records every code object that starts between :meth:`start` and :meth:`stop`."""

    def __init__(self) -> None:
        self.codes: dict[int, Any] = {}
        self.tool_id: int | None = None

    def start(self) -> None:
        mon = monitoring()
        self.tool_id = claim_tool_id(_TOOL_NAME)
        mon.register_callback(self.tool_id, mon.events.PY_START, self._on_start)
        mon.set_events(self.tool_id, mon.events.PY_START)

    def stop(self) -> None:
        if self.tool_id is not None:
            tool, self.tool_id = self.tool_id, None
            release_tool_id(tool, (), [monitoring().events.PY_START])

    def _on_start(self, code: Any, offset: int) -> Any:  # noqa: ARG002 - sys.monitoring callback
        self.codes[id(code)] = code
        return sys.monitoring.DISABLE

    def lines_by_file(self) -> dict[str, int]:
        """File name -> how many distinct lines the code objects that started there hold."""
        lines: dict[str, set[int]] = {}
        for code in self.codes.values():
            lines.setdefault(code.co_filename, set()).update(line for _, _, line in code.co_lines() if line)
        return {file: len(found) for file, found in lines.items()}
