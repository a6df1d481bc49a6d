"""A target for tests/test_trim.py (planted) whose shortest forms end the process."""

from __future__ import annotations

import os


def dies_when_short(data: bytes) -> int:
    """A mark whose forms under eight bytes end the process: the trimming child dies on them."""
    if b"~" in data:
        if len(data) < 8:
            os._exit(3)
        return 1
    return 0
