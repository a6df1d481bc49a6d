"""The public replay of a native finding, what emitted native regression tests call::

    failure = assay.replay_native("planted", INPUT, project=PROJECT_ROOT)
    assert failure is None, failure.report(SIGNATURE)

It is :func:`assay.replay`'s twin for native targets (reached as ``assay.replay_native``,
loaded only when used): the target is rebuilt first when its build identity changed
(a fix in the C source is a new identity), the input runs once through the harness
binary, and a sanitizer report becomes a :class:`~assay.promote.regression.Failure`.
The promoter's flake guard replays through the same :func:`~assay.native.promote.replay_input`.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.native.promote import replay_input
from assay.promote.regression import Failure

__all__ = ["replay_native"]


def replay_native(target: str, data: bytes, *, project: str | os.PathLike[str] | None = None) -> Failure | None:
    """Run ``data`` once through native target ``target``; its failure, or None when it passes.

    ``project`` is the folder holding ``pyproject.toml`` (default: the current folder).
    """
    verdict = replay_input(Path(project if project is not None else os.getcwd()), target, data)
    return None if verdict is None else Failure(verdict)
