"""assay's own failures: the full traceback goes to a file, the user gets one line.

An internal error (exit 3) is never the user's configuration nor the target's
bug; the one line says what happened and where the traceback was written, so it
can be attached to a bug report without scrolling through it.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback


def write_traceback(exc: BaseException) -> str | None:
    """Write ``exc``'s traceback to a fresh file in the temp folder; its path, or ``None`` if that failed."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        fd, path = tempfile.mkstemp(prefix=f"assay-internal-{time.strftime('%Y%m%dT%H%M%S')}-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
        return path
    except OSError:
        return None


def one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (at most 300 characters)."""
    try:
        first = (str(exc).strip().splitlines() or [""])[0]
    except BaseException:  # noqa: BLE001 - a message that cannot be printed still gets its type named
        first = ""
    text = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
