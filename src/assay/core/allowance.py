"""A target's ``allow=[...]``: which side effects the sandbox lets it have.

The vocabulary the declaration (:mod:`assay.harness.define`) validates and the
sandbox (:mod:`assay.engine.sandbox`) enforces; it lives here, below both, so that
declaring a target never imports the engine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from assay.core.errors import TargetError

#: The classes a target may pass in ``allow=[...]`` (``write:<path>`` takes a path).
ALLOW_CLASSES = ("subprocess", "network", "write")


@dataclass(frozen=True)
class Allowance:
    """A target's ``allow=[...]``, parsed."""

    subprocess: bool = False
    network: bool = False
    write_paths: tuple[str, ...] = ()


def parse_allow(entries: Iterable[str], target_name: str = "?") -> Allowance:
    """Validate a target's ``allow=[...]`` (raises :class:`TargetError` naming the bad entry)."""
    if isinstance(entries, str):
        entries = [entries]
    sub = net = False
    paths: list[str] = []
    for entry in entries:
        if not isinstance(entry, str):
            raise TargetError(f"target {target_name!r}: allow=[...] holds {entry!r}; use strings")
        if entry == "subprocess":
            sub = True
        elif entry == "network":
            net = True
        elif entry.startswith("write:") and len(entry) > len("write:"):
            paths.append(os.path.realpath(os.path.expanduser(entry[len("write:") :])))
        else:
            raise TargetError(
                f"target {target_name!r}: allow=[...] holds {entry!r}; known: 'subprocess', 'network', 'write:<path>'"
            )
    return Allowance(sub, net, tuple(paths))
