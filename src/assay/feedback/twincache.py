"""A cache of comparison feedback's compiled twins, kept across processes.

:class:`assay.feedback.cmplog.CmpLog` compiles every in-scope source file a second
time, its comparisons rewritten into recorder calls.  Parsing, rewriting and
compiling cost 20-30 ms for json's files, tomllib's or urllib.parse's, and 160 ms
for the email package's 19, at the start of every campaign (every target,
``--jobs`` job and shard).  The result is a pure function of the file's bytes, its
path, the first site numbers the rewriter hands out, the rewriter and the Python
version, so it is kept on disk under a digest of all of them: a later campaign loads
the marshalled code instead (1 ms for json's files, 7 ms for email's).

Entries hold code, as ``__pycache__`` does: the folder is as trusted as the user's
own files.

The caller names its rewriter (:meth:`TwinCache.key`'s ``rewriter``: CmpLog passes a
digest of its own module's source), so this module needs nothing from
:mod:`assay.feedback.cmplog` and the two do not import each other.

Where: ``$ASSAY_CACHE_DIR/twins`` (an empty ``ASSAY_CACHE_DIR`` turns the cache off),
else ``$XDG_CACHE_HOME/assay/twins``, else ``~/.cache/assay/twins``.  Entries are
written atomically (:mod:`assay.store.atomic`); past :data:`MAX_ENTRIES` the least
recently used go.  The cache only saves time: an entry that cannot be read or
unmarshalled is a miss (and is replaced), and a folder that cannot be written leaves
every lookup a miss.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import sys
from pathlib import Path
from types import CodeType

from assay.core.version import __version__
from assay.store import atomic

#: The environment variable that moves the cache (its ``twins`` folder); empty: no cache.
ENV = "ASSAY_CACHE_DIR"
#: Entries kept; each is one source file's twin module (tens of KB).
MAX_ENTRIES = 512
#: Bumped when the entry layout changes.
_FORMAT = 1
_SUFFIX = ".twin"


def default_root() -> Path | None:
    """The cache folder this environment names, or None when the cache is off."""
    env = os.environ.get(ENV)
    if env is not None:
        return Path(env) / "twins" if env else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "assay" / "twins"


@functools.cache
def _salt() -> bytes:
    """What else the twins depend on: the entry layout, the Python build and assay."""
    return hashlib.sha256(
        b"\0".join([str(_FORMAT).encode(), sys.version.encode(), str(marshal.version).encode(), __version__.encode()])
    ).digest()


class TwinCache:
    """Compiled twin modules by (source bytes, path, first sites), in ``root``.

    ``root=None`` is a cache that never hits and never writes.
    """

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = Path(root) if root is not None else None
        self.hits = 0
        self.misses = 0
        self._written = False

    @classmethod
    def default(cls) -> TwinCache:
        """The cache at :func:`default_root`."""
        return cls(default_root())

    def key(self, source: bytes, path: str, first_site: int, first_vsite: int, rewriter: bytes) -> str:
        """The entry name of ``path``'s twin, compiled from ``source`` with these first sites.

        ``rewriter`` identifies the code that rewrote it (a digest of its source), so a changed rewriter misses.
        """
        if self.root is None:
            return ""
        h = hashlib.sha256(_salt())
        h.update(rewriter)
        h.update(f"\0{path}\0{first_site}\0{first_vsite}\0".encode("utf-8", "surrogateescape"))
        h.update(source)
        return h.hexdigest()[:40]

    def load(self, key: str) -> tuple[CodeType, int, int] | None:
        """``(module code, sites used, value sites used)`` of entry ``key``, or None."""
        if self.root is None:
            return None
        path = self.root / (key + _SUFFIX)
        try:
            entry = marshal.loads(path.read_bytes())
            code, sites, vsites = entry
            if not isinstance(code, CodeType) or not isinstance(sites, int) or not isinstance(vsites, int):
                raise ValueError("not a twin entry")
        except (OSError, EOFError, ValueError, TypeError):  # none yet, unreadable or garbled: compiled (again)
            self.misses += 1
            return None
        self.hits += 1
        try:
            os.utime(path)  # recently used: kept by the pruning
        except OSError:
            pass
        return code, sites, vsites

    def store(self, key: str, code: CodeType, sites: int, vsites: int) -> None:
        """Keep ``code`` as entry ``key``; a folder that cannot be written is left alone."""
        if self.root is None:
            return
        try:
            atomic.write_bytes(self.root / (key + _SUFFIX), marshal.dumps((code, sites, vsites)))
            self._written = True
        except OSError:
            return

    def prune(self) -> None:
        """Drop the least recently used entries past :data:`MAX_ENTRIES` (after this process wrote)."""
        if self.root is None or not self._written:
            return
        self._written = False
        atomic.remove_stale(self.root)
        try:
            entries = [e for e in os.scandir(self.root) if e.name.endswith(_SUFFIX)]
            entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
        except OSError:
            return
        for entry in entries[MAX_ENTRIES:]:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
