"""Where assay runs: CPython 3.12+ on Linux or macOS, and a clear refusal elsewhere.

Coverage comes from ``sys.monitoring`` (PEP 669, CPython 3.12+) and every campaign
forks its workers from a warm parent (``os.fork``), which Windows lacks.  This
module uses no syntax newer than Python 3.6, so the refusal itself works on old
interpreters too.
"""

from __future__ import annotations

import sys

#: The oldest CPython assay supports.
MIN_PYTHON = (3, 12)
#: ``sys.platform`` prefixes assay supports.
PLATFORMS = ("linux", "darwin")


def problem(
    platform: str | None = None, implementation: str | None = None, version: tuple[int, ...] | None = None
) -> str | None:
    """Why assay cannot run here (one line, saying what to use instead), or ``None``; defaults: this interpreter."""
    platform = sys.platform if platform is None else platform
    implementation = sys.implementation.name if implementation is None else implementation
    version = tuple(sys.version_info[:2]) if version is None else version
    have = f"{implementation} {version[0]}.{version[1]} on {platform}"
    if implementation != "cpython":
        return (
            f"assay needs CPython {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+ (this is {have}): its coverage uses "
            "CPython's sys.monitoring; run it with CPython"
        )
    if tuple(version) < MIN_PYTHON:
        return (
            f"assay needs CPython {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+ (this is {have}): its coverage uses "
            "sys.monitoring (PEP 669); install Python 3.12 or newer and run assay with it"
        )
    if not platform.startswith(PLATFORMS):
        return (
            f"assay runs on Linux and macOS (this is {have}): each campaign forks its workers (os.fork); "
            "on Windows, run it inside WSL"
        )
    return None
