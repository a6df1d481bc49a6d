"""Which code objects are in feedback scope: decided once per file name."""

from __future__ import annotations

import os
from collections.abc import Iterable


class Scope:
    """Files and directories whose code gives coverage feedback."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files: set[str] = set()
        self.dirs: list[str] = []
        for p in paths:
            p = os.path.realpath(p)
            if os.path.isdir(p):
                self.dirs.append(p.rstrip(os.sep) + os.sep)
            else:
                self.files.add(p)
        self._cache: dict[str, bool] = {}

    def contains(self, filename: str) -> bool:
        hit = self._cache.get(filename)
        if hit is None:
            real = os.path.realpath(filename) if filename and not filename.startswith("<") else filename
            hit = real in self.files or any(real.startswith(d) for d in self.dirs)
            self._cache[filename] = hit
        return hit

    def describe(self) -> list[str]:
        return sorted(self.files) + sorted(self.dirs)
