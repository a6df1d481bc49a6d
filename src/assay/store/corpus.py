"""The content-addressed corpus: ``<root>/<target>/<sha256>.input``.

Before a campaign the directory of every selected target is checked; any entry
that breaks a rule makes the whole run refuse, listing every offender, with
nothing changed.  Writes are atomic.  Replay-only campaigns never write.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from assay.core import notices
from assay.core.errors import CorpusError
from assay.store.atomic import TMP_PREFIX, remove_stale, write_bytes, writer_alive, writer_pid

SUFFIX = ".input"
_NAME = re.compile(r"^[0-9a-f]{64}\.input$")


def digest(data: bytes) -> str:
    """The lowercase SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Offence:
    path: str
    problem: str


class Corpus:
    """One target's corpus directory."""

    def __init__(self, root: str | os.PathLike[str], target: str, max_len: int) -> None:
        self.dir = Path(root) / target
        self.target = target
        self.max_len = max_len

    def check(self) -> list[Offence]:
        """Every entry breaking a rule (a missing directory is an empty corpus)."""
        if not self.dir.exists():
            return []
        if not self.dir.is_dir():
            return [Offence(str(self.dir), "is not a directory")]
        offences = []
        for entry in sorted(os.scandir(self.dir), key=lambda e: e.name):
            path = entry.path
            pid = writer_pid(entry.name)
            if pid is not None and writer_alive(pid):
                continue  # another assay process is writing it right now
            if entry.name.startswith(TMP_PREFIX):
                offences.append(Offence(path, "temporary file left by an interrupted write; delete it"))
            elif entry.is_symlink() or not entry.is_file():
                offences.append(Offence(path, "unexpected entry (only <sha256>.input files belong here)"))
            elif not _NAME.match(entry.name):
                offences.append(
                    Offence(path, "unexpected file name (must be the lowercase SHA-256 of the content + .input)")
                )
            else:
                offences.extend(self._check_entry(path, entry.name))
        return offences

    def _check_entry(self, path: str, name: str) -> list[Offence]:
        """One well-named entry: its size first (never read a huge file), then its content."""
        try:
            size = os.stat(path).st_size
            if size > self.max_len:
                return [Offence(path, f"{size} bytes exceeds the target's max_len={self.max_len}")]
            with open(path, "rb") as fh:
                data = fh.read(self.max_len + 1)
        except OSError as exc:
            return [Offence(path, f"cannot be read ({exc.strerror or exc})")]
        if len(data) > self.max_len:
            return [Offence(path, f"more than {self.max_len} bytes exceeds the target's max_len={self.max_len}")]
        if digest(data) + SUFFIX != name:
            return [Offence(path, f"name does not match content (content SHA-256 is {digest(data)})")]
        return []

    def remove_stale(self) -> list[str]:
        """Delete temporary files whose writer (by the pid in their name) is gone; their paths."""
        return remove_stale(self.dir)

    def load(self) -> list[tuple[str, bytes]]:
        """``(digest, bytes)`` of every entry, sorted by digest.  Call :meth:`check` first."""
        if not self.dir.is_dir():
            return []
        out = []
        for name in sorted(os.listdir(self.dir)):
            if _NAME.match(name):
                out.append((name[: -len(SUFFIX)], (self.dir / name).read_bytes()))
        return out

    def add(self, data: bytes) -> str:
        """Store ``data`` (idempotent) and return its digest."""
        d = digest(data)
        path = self.dir / (d + SUFFIX)
        if not path.exists():
            write_bytes(path, data)
        return d


def check_all(corpora: list[Corpus], *, replay_only: bool = False) -> None:
    """Remove stale temporary files (saying so), then raise :class:`CorpusError` listing every offender.

    With ``replay_only`` nothing is written, so nothing is removed either: a stale
    temporary file (its writer gone) is left where it is, with a notice, and is no
    offence, since a replay-only run reads only the corpus entries.
    """
    if not replay_only:
        for c in corpora:
            for path in c.remove_stale():
                notices.notify(f"removed {path}: a temporary file left by an assay process that is gone")
    offences = [o for c in corpora for o in c.check()]
    if replay_only:
        for o in offences:
            if os.path.basename(o.path).startswith(TMP_PREFIX):
                notices.notify(f"left {o.path} alone: a temporary file of an assay process that is gone (replay-only)")
        offences = [o for o in offences if not os.path.basename(o.path).startswith(TMP_PREFIX)]
    if offences:
        lines = "\n".join(f"  {o.path}: {o.problem}" for o in offences)
        raise CorpusError(
            f"refusing to run: {len(offences)} corpus entr{'y breaks' if len(offences) == 1 else 'ies break'} "
            f"the content-addressing rules (nothing was changed):\n{lines}\n"
            "Fix or remove these files, then run again."
        )
