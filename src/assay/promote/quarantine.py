"""The quarantine log: one JSON line per failure the flake guard refused to promote.

A quarantined failure is never written as a test; the log is where a person finds
it (and how many replays it survived) to investigate the flakiness.  The file is
rewritten atomically with the new line appended, so a killed run never leaves a
half line behind.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

from assay.core.version import __version__
from assay.store.atomic import write_bytes


class QuarantineLog:
    """Append-only JSON-lines log at ``path``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def append(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Add ``entry`` (stamped with the time and assay version); returns what was written."""
        record = {
            "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "assay_version": __version__,
            **entry,
        }
        line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
        try:
            old = self.path.read_bytes()
        except FileNotFoundError:
            old = b""
        if old and not old.endswith(b"\n"):
            old += b"\n"
        write_bytes(self.path, old + line.encode("utf-8"))
        return record

    def read(self) -> list[dict[str, Any]]:
        """Every entry, oldest first (lines that do not parse are skipped)."""
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return []
        entries = []
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                entries.append(value)
        return entries
