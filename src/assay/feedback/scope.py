"""Which code objects are in feedback scope: decided once per file name.

Every in-scope code object gets line and branch feedback, decided at its first
start, so a module no input runs costs nothing however big its package.  Some work
is done *ahead* of a run for every live in-scope function, though: edge splitting
(:mod:`assay.feedback.edgesplit`), the comparison twins
(:mod:`assay.feedback.cmplog`) and constant harvesting.  Its cost grows with the
scope, not with what runs (some milliseconds a function, and a recorded run swaps
every twin), so :meth:`Scope.eager` gives it to the code that is not installed (the
target's file, the project's packages, a standard-library module named on purpose)
and to installed packages, in the scope's order, up to :data:`EAGER_FILES` Python
files of them.  The rest, a big library among them, is watched all the same: lines,
and branch directions through ``BRANCH`` events as before edge splitting.  The
choice depends on the entries and the files on disk only, so every process of a
campaign makes the same one and measures the same keys.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

#: Python files of installed packages in scope that get the per-function work done ahead of a
#: run: about a thousand functions, a few seconds of start-up once, and a recorded run's twin
#: swaps well under a millisecond.  A package is taken whole or not at all, in the scope's order.
EAGER_FILES = 100
#: Folder names that mark installed code.
INSTALLED = frozenset({"site-packages", "dist-packages"})


class Scope:
    """Files and directories whose code gives coverage feedback."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files: set[str] = set()
        self.dirs: list[str] = []
        self.entries: list[str] = []  # in the order given: the leading ones get the eager work
        for p in paths:
            p = os.path.realpath(p)
            self.entries.append(p)
            if os.path.isdir(p):
                self.dirs.append(p.rstrip(os.sep) + os.sep)
            else:
                self.files.add(p)
        self._cache: dict[str, bool] = {}
        self._eager: Scope | None = None

    def contains(self, filename: str) -> bool:
        hit = self._cache.get(filename)
        if hit is None:
            real = os.path.realpath(filename) if filename and not filename.startswith("<") else filename
            hit = real in self.files or any(real.startswith(d) for d in self.dirs)
            self._cache[filename] = hit
        return hit

    def describe(self) -> list[str]:
        return sorted(self.files) + sorted(self.dirs)

    def eager(self) -> Scope:
        """The part of the scope whose live functions get the work done ahead of a run (see the module docstring)."""
        if self._eager is None:
            entries = list(dict.fromkeys(self.entries))
            chosen: list[str] = []
            count = 0
            for entry in entries:
                if INSTALLED & set(entry.split(os.sep)):
                    files = _python_files(entry)
                    if count + files > EAGER_FILES:
                        continue  # watched without the work ahead; a smaller package after it may still fit
                    count += files
                chosen.append(entry)
            self._eager = self if len(chosen) == len(entries) else Scope(chosen)
        return self._eager


def _python_files(path: str) -> int:
    if not os.path.isdir(path):
        return 1
    return sum(sum(name.endswith(".py") for name in files) for _, _, files in os.walk(path))
