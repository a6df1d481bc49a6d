"""The optional C twin of the byte-mode generator (``assay.gen._cmutate``).

It is built at install time when a C compiler is there and computes exactly what
the Python reference computes (:class:`assay.engine.seeds.FastRandom`,
:class:`~assay.engine.seeds.CaseStream`, :meth:`assay.gen.mutators.ByteMutator.mutate`),
three to five times faster.  ``ASSAY_PURE_PYTHON=1`` turns it off, to compare the two.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("ASSAY_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from assay.gen import _cmutate
    except ImportError:
        return None
    return _cmutate


#: The C module, or None (not built, or turned off).
cmutate = _load()

#: ``id()`` without its ``builtins.id`` audit event when the C twin is built.  With an
#: audit hook installed (the worker's sandbox) each ``id()`` call is an event, about
#: 2,000 instructions; assay's own per-case bookkeeping (the coverage callbacks' table
#: look-ups, a recorded run's choice of twins) need not pay it.
object_id: Callable[[object], int] = getattr(cmutate, "object_id", None) or id


def agrees(namespace: dict) -> bool:
    """Whether the C twin is built and the tunables it compiled in (``CONSTANTS``) have the
    values ``namespace`` gives them (a module's ``globals()``; names it lacks do not count).
    A test that changes one gets the Python reference instead."""
    if cmutate is None:
        return False
    return all(namespace.get(name, value) == value for name, value in cmutate.CONSTANTS.items())
