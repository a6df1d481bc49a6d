"""Telling a real interrupt (Ctrl-C, SIGTERM) from a target raising ``KeyboardInterrupt``.

The command line installs :func:`install`: SIGINT and SIGTERM then both raise
``KeyboardInterrupt`` *and* mark the interrupt as requested.  A forked child that
ignores both signals calls :func:`ignore_in_child`.  :func:`is_real` then says
whether a ``KeyboardInterrupt`` escaping a target came from a signal (stop the run)
or from the target's own ``raise`` (a finding).  Where neither was called (a
library caller, a test session) every ``KeyboardInterrupt`` counts as real.

The handler's ``raise`` can be lost: a signal that lands inside an at-fork hook
(logging's ``_releaseLock`` after every fork), a ``__del__`` or a weakref callback
is printed as "Exception ignored" and the code it interrupted goes on.  The flag
the handler set survives: the loops that watch a child for long (the supervisor's,
the ``--jobs`` parent's, the differential one) call :func:`raise_if_requested`.
"""

from __future__ import annotations

import signal
from types import FrameType
from typing import NoReturn

_state = {"mode": "unknown", "requested": False}


def _on_signal(signum: int, frame: FrameType | None) -> NoReturn:  # noqa: ARG001
    _state["requested"] = True
    raise KeyboardInterrupt


def install() -> None:
    """SIGINT and SIGTERM stop this process gracefully (``KeyboardInterrupt``), identically."""
    _state["mode"] = "installed"
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)


def ignore_in_child() -> None:
    """In a child whose parent owns the signals: no ``KeyboardInterrupt`` here is real."""
    _state["mode"] = "child"
    _state["requested"] = False


def requested() -> bool:
    """True once SIGINT or SIGTERM arrived through :func:`install`'s handler."""
    return bool(_state["requested"])


def raise_if_requested() -> None:
    """Raise the ``KeyboardInterrupt`` of a signal whose own ``raise`` was swallowed (see the module docstring).

    Only under :func:`install`; call it where no interrupt has been handled yet.
    """
    if _state["mode"] == "installed" and _state["requested"]:
        raise KeyboardInterrupt


def is_real() -> bool:
    """Whether a ``KeyboardInterrupt`` just seen should stop the run (see the module docstring)."""
    if _state["mode"] == "child":
        return False
    if _state["mode"] == "installed":
        return bool(_state["requested"])
    return True
