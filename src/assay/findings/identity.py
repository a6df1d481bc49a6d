"""Grouping findings into bugs: one bug, however many signatures reached it.

A signature tells findings apart as finely as the engine can (three frames, the
oracle's own kind); a person wants one line per bug.  Two findings are one bug
when their exception type and their *innermost project frame* agree: the
deepest frame whose file is in the target's ``sources`` or outside the standard
library (a third-party package counts whether or not it is in ``sources``, so a
bug keeps its id when the scope changes), or failing that the harness file, or
failing that any frame outside the standard library and installed packages.
Frames are named by module and function, never by line, so a line edit keeps
the id too.  A bare ``assert`` is told apart by its statement as well
(the ``#tag`` of its key): two asserts in one function are two bugs; assay's
own oracle failures (``invariant(...)``) and wedges are named by their key.  Findings
without an exception (a wedge, a leak) are a bug of their own signature.  A wedge
names no exception type, whatever stopped it (the timeout's ``WedgeTimeout``, assay's
own, raised wherever the loop happened to be, or the kill): it is a hang, not an
exception the target raised.  Nor does a ``crash`` (the worker died of a signal or
exited mid-input): its cause (``signal:SIGSEGV``) is in its key and message.  A
``RecursionError`` whose traceback recurses is one bug per recursion cycle (the
``cycle`` its exception records, see :mod:`assay.core.recursion`), wherever in the cycle
the limit struck; it is placed at the innermost project frame of the cycle.

A finding is a *harness* finding when it is a ``panic`` (an unexpected
exception, not an assertion or oracle the harness raises on purpose), that frame
lies in the harness file, and ``sources`` watch other code that does not contain
the harness (default sources are the harness plus what it imports): the mistake is
the fuzz target's (an uncaught rejection, a wrong assumption), not the library's.
"""

from __future__ import annotations

import hashlib
import os
import sysconfig
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.core.recursion import cycle_key
from assay.core.verdict import Frame, Verdict

_LIBRARY_ROOTS = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
)


_STDLIB_ROOTS = tuple(
    os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")}
)


#: Oracles whose findings name no exception type (docs/report-schema.json: ``exception`` is null).
_RAISED_NOTHING = frozenset({"wedge", "crash"})


def _inside(path: str, roots: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    for root in roots:
        r = os.path.realpath(root)
        if real == r or real.startswith(r.rstrip(os.sep) + os.sep):
            return True
    return False


def _is_library(path: str) -> bool:
    real = os.path.realpath(path)
    return real.startswith(_LIBRARY_ROOTS) or "site-packages" in real.split(os.sep) or path.startswith("<")


def is_third_party(path: str) -> bool:
    """Whether ``path`` is installed code (the standard library, site-packages), not the project's."""
    return _is_library(path)


def _harness_is_not_the_code_under_test(harness: str, sources: Sequence[str]) -> bool:
    """True when ``sources`` watch code beyond the harness file (the harness itself may be among them).

    Default sources are the harness plus the packages it imports; a harness that is
    the only source holds the code under test itself (a planted bug, a self-contained
    example), so a raise there is not the harness's mistake.
    """
    if not sources:  # not recorded: the harness is all we know of the target
        return True
    real = os.path.realpath(harness)
    others = [s for s in sources if os.path.realpath(s) != real]
    return bool(others) and not _inside(harness, others)


def _is_stdlib(path: str) -> bool:
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    installed = "site-packages" in parts or "dist-packages" in parts
    return (real.startswith(_STDLIB_ROOTS) and not installed) or path.startswith("<")


def project_frame(frames: Sequence[Frame], sources: Sequence[str], harness: str | None) -> Frame | None:
    """The innermost frame in ``sources`` or outside the standard library, else in the harness,
    else outside installed code.

    A third-party package counts whether or not it is in ``sources``, so adding a
    library to the scope (or dropping it) keeps the bug's id; a standard-library
    frame counts only when ``sources`` name it (its callers are the code under test).
    """
    for wanted in (
        lambda f: (bool(sources) and _inside(f.file, sources)) or not _is_stdlib(f.file),
        lambda f: bool(harness) and os.path.realpath(f.file) == os.path.realpath(harness or ""),
        lambda f: not _is_library(f.file),
    ):
        for frame in frames:  # innermost first
            if wanted(frame):
                return frame
    return None


@dataclass(frozen=True)
class BugIdentity:
    """What makes findings one bug: a short ``id``, the stable ``key`` and where it was raised."""

    key: str
    exception: str | None
    frame: Frame | None
    harness: bool
    oracle: str = ""  # the tag of the verdict it was made from ("" when only a signature was known)

    @property
    def id(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:10]

    @property
    def location(self) -> str | None:
        return f"{self.frame.file}:{self.frame.line}" if self.frame else None


def identify(verdict: Verdict, sources: Sequence[str] = (), harness: str | None = None) -> BugIdentity:
    """The bug a verdict belongs to (see the module docstring)."""
    exc = verdict.exception
    # A hang raised nothing, and neither did a worker that died (its "type" names the signal).
    raised = None if exc is None or verdict.oracle in _RAISED_NOTHING else exc.type
    if exc is None or not exc.frames:
        return BugIdentity(f"{verdict.oracle}:{verdict.key}", raised, None, False, verdict.oracle)
    in_cycle = [f for f in exc.frames if f.identity in exc.cycle]
    frame = (in_cycle and project_frame(in_cycle, sources, harness)) or project_frame(exc.frames, sources, harness)
    if exc.type.startswith("assay.") or verdict.oracle == "wedge":
        # assay's own oracle failures (invariant(...), ...) are named by their key, not a raise site; so is
        # a wedge, soft or killed: its key holds the frames its loop holds (assay.engine.wedges), where
        # its stack at the timeout or the kill is chance.
        return BugIdentity(f"{verdict.oracle}:{verdict.key}", raised, frame, False, verdict.oracle)
    in_harness = bool(
        verdict.oracle == "panic"  # an assert or oracle in the harness is its check, not its mistake
        and frame is not None
        and harness
        and os.path.realpath(frame.file) == os.path.realpath(harness)
        and _harness_is_not_the_code_under_test(harness, sources)
    )
    where = cycle_key(exc.cycle) if exc.cycle else frame.identity if frame else "?"
    if verdict.oracle == "invariant" and "#" in verdict.key:
        where += verdict.key[verdict.key.rindex("#") :]  # two bare asserts of one function are two bugs
    return BugIdentity(f"{verdict.oracle}:{exc.type}@{where}", raised, frame, in_harness, verdict.oracle)


def identify_metadata(meta: dict[str, Any]) -> BugIdentity:
    """:func:`identify` for an artifact's ``metadata.json`` (``sources`` and ``harness`` as recorded)."""
    return identify(Verdict.from_json(meta["verdict"]), meta.get("sources") or (), meta.get("harness") or None)


@dataclass
class Bug:
    """Findings that share one :class:`BugIdentity`, in the order they were given."""

    identity: BugIdentity
    members: list[Any] = field(default_factory=list)


def group(items: Iterable[Any], identity_of: Callable[[Any], BugIdentity]) -> list[Bug]:
    """Group ``items`` by ``identity_of(item)``; bugs keep the order of their first member."""
    bugs: dict[str, Bug] = {}
    for item in items:
        ident = identity_of(item)
        bugs.setdefault(ident.key, Bug(ident)).members.append(item)
    return list(bugs.values())
