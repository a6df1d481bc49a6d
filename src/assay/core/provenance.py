"""Where an exception came from: the project's own code, the standard library, or a third-party library.

A target declared with ``expected_from=...`` accepts a built-in exception of an
expected class (``ValueError``) only when the project's own code raised it: the
same ``ValueError`` raised inside a third-party library and escaping the project's
wrapper is a finding, since the wrapper promised its own error instead.  Frames of
the standard library are passed over (``json.loads`` inside the project's function
raises for the project), as are assay's own.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType

from assay.core.location import is_assay_file
from assay.core.recursion import module_name

#: Folder names that hold installed third-party packages.
INSTALLED_DIRS = ("site-packages", "dist-packages")
_STDLIB = tuple(
    os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)


@dataclass(frozen=True)
class Escape:
    """A built-in exception a third-party library raised that left the project's code unconverted."""

    library_frame: str  # module:qualname (file:line) of the library frame that raised it
    wrapper_frame: str  # module:qualname (file:line) of the innermost project frame it passed through

    def describe(self) -> str:
        return f"raised in {self.library_frame} and not converted by {self.wrapper_frame}"


def is_installed_file(filename: str) -> bool:
    """Whether ``filename`` lies in an installed-packages folder (``site-packages``)."""
    parts = os.path.abspath(filename).split(os.sep)
    return any(d in parts for d in INSTALLED_DIRS)


def is_stdlib_file(filename: str) -> bool:
    """Whether ``filename`` is the standard library's (not a package installed beside it)."""
    path = os.path.abspath(filename)
    return path.startswith(_STDLIB) and not is_installed_file(path)


def is_own(module: str, filename: str, owners: Iterable[str]) -> bool:
    """Whether a frame belongs to the project: ``owners`` holds module names (``pkg`` covers
    ``pkg.sub``) and absolute folders (code under them, outside installed packages)."""
    for owner in owners:
        if os.path.isabs(owner):
            path = os.path.abspath(filename)
            if path.startswith(owner.rstrip(os.sep) + os.sep) and not is_installed_file(path):
                return True
        elif module == owner or module.startswith(owner + "."):
            return True
    return False


def library_escape(exc: BaseException, owners: tuple[str, ...]) -> Escape | None:
    """The :class:`Escape` when ``exc`` is a built-in exception raised in a third-party library's
    code and passed through the project's code (``owners``, see :func:`is_own`), else ``None``."""
    if not owners or type(exc).__module__ != "builtins":
        return None
    frames: list[tuple[str, str]] = []  # (label, kind) outermost first
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if not is_assay_file(filename) and not is_stdlib_file(filename):
            module = module_name(tb.tb_frame.f_globals, filename)
            kind = "own" if is_own(module, filename, owners) else "library"
            frames.append((f"{module}:{code.co_qualname} ({filename}:{tb.tb_lineno})", kind))
        tb = tb.tb_next
    if not frames or frames[-1][1] != "library":
        return None
    wrappers = [label for label, kind in frames if kind == "own"]
    if not wrappers:
        return None  # the library was called directly, not through the project
    return Escape(frames[-1][0], wrappers[-1])
