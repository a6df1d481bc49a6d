"""Verdicts and signatures: how one run of a target is judged and named.

A :class:`Verdict` is a finding's identity: ``oracle`` is the tag (``panic``,
``invariant``, ``wedge``, ...) and ``key`` the part that tells distinct bugs apart.
``signature`` is ``oracle:key``; the promoter dedups on it, so two different bugs
must never share one, and the same bug reached through different inputs must
always get the same one.  Keys therefore use function identity (``module:qualname``),
never line numbers, addresses or the message text (which usually echoes the input).
"""

from __future__ import annotations

import traceback
from dataclasses import asdict, dataclass, field
from types import FrameType, TracebackType
from typing import Any

from assay.core.location import is_assay_file
from assay.core.observe import OracleFailure
from assay.core.provenance import library_escape
from assay.core.recursion import cycle_key, module_name, recursion_cycle

#: How many innermost frames of the code under test make up a panic key.
KEY_FRAMES = 3
#: How many frames an artifact keeps for people to read.
REPORT_FRAMES = 12
#: Longest exception message kept in metadata.
MAX_MESSAGE = 2000


@dataclass(frozen=True)
class Frame:
    """One stack frame, identified by function rather than line."""

    module: str
    qualname: str
    file: str
    line: int

    @property
    def identity(self) -> str:
        return f"{self.module}:{self.qualname}"


@dataclass(frozen=True)
class ExceptionInfo:
    """What an artifact records of an exception.

    ``cycle`` is set for a ``RecursionError`` whose traceback recurses: the sorted
    ``module:qualname`` identities of the recursion (see :mod:`assay.core.recursion`),
    kept here because ``frames`` holds only the innermost :data:`REPORT_FRAMES`.
    """

    type: str
    message: str
    frames: tuple[Frame, ...] = ()
    traceback: str = ""
    cycle: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = {
            "type": self.type,
            "message": self.message,
            "frames": [asdict(f) for f in self.frames],
            "traceback": self.traceback,
        }
        if self.cycle:  # absent otherwise, so every other artifact's metadata stays as it was
            data["cycle"] = list(self.cycle)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExceptionInfo:
        return cls(
            type=data.get("type", ""),
            message=data.get("message", ""),
            frames=tuple(Frame(**f) for f in data.get("frames", ())),
            traceback=data.get("traceback", ""),
            cycle=tuple(data.get("cycle") or ()),
        )


@dataclass(frozen=True)
class Verdict:
    """A failed run: which oracle fired and the key that names the bug."""

    oracle: str
    key: str
    detail: str = ""
    exception: ExceptionInfo | None = field(default=None, compare=False)
    data: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def signature(self) -> str:
        return f"{self.oracle}:{self.key}"

    def to_json(self) -> dict[str, Any]:
        return {
            "oracle": self.oracle,
            "key": self.key,
            "signature": self.signature,
            "detail": self.detail,
            "exception": self.exception.to_json() if self.exception else None,
            "data": self.data,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        exc = data.get("exception")
        return cls(
            oracle=data["oracle"],
            key=data["key"],
            detail=data.get("detail", ""),
            exception=ExceptionInfo.from_json(exc) if exc else None,
            data=data.get("data") or {},
        )


def is_timeout_wedge(verdict: Verdict | None) -> bool:
    """A ``wedge`` keyed by where a timeout caught it (``timeout@...``), not an oracle's own
    ``wedge`` such as an HTTP step timeout, whose key names the step."""
    return verdict is not None and verdict.oracle == "wedge" and verdict.key.startswith("timeout@")


def type_name(exc_type: type) -> str:
    """``module.qualname`` of an exception class (``builtins.ValueError``)."""
    return f"{exc_type.__module__}.{exc_type.__qualname__}"


def code_frames(tb: TracebackType | None) -> list[Frame]:
    """Frames of a traceback, innermost first, without assay's own frames."""
    return [frame for frame, _ in _live_frames(tb)]


def _live_frames(tb: TracebackType | None) -> list[tuple[Frame, FrameType]]:
    """:func:`code_frames` with each frame's live frame object beside it."""
    frames: list[tuple[Frame, FrameType]] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        if not is_assay_file(filename):
            module = module_name(tb.tb_frame.f_globals, filename)
            frames.append((Frame(module, code.co_qualname, filename, tb.tb_lineno or 0), tb.tb_frame))
        tb = tb.tb_next
    frames.reverse()
    return frames


def exception_info(exc: BaseException) -> ExceptionInfo:
    """Describe ``exc`` for an artifact: type, message, frames and traceback text.

    For a ``RecursionError`` the whole stack, not only the frames kept, is searched
    for the recursion's cycle.
    """
    live = _live_frames(exc.__traceback__)
    frames = [frame for frame, _ in live]
    cycle: tuple[str, ...] = ()
    if isinstance(exc, RecursionError):
        try:
            cycle = recursion_cycle([(f.identity, obj) for f, obj in live])
        except Exception:  # noqa: BLE001 - an odd frame must not hide the finding; the frame key remains
            cycle = ()
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a broken __str__ (even one raising SystemExit) must not hide the finding
        message = f"<unprintable {type(exc).__name__}>"
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return ExceptionInfo(
        type=type_name(type(exc)),
        message=message[:MAX_MESSAGE],
        frames=tuple(frames[:REPORT_FRAMES]),
        traceback=text[-20000:],
        cycle=cycle,
    )


def frames_key(frames: tuple[Frame, ...] | list[Frame]) -> str:
    """The innermost :data:`KEY_FRAMES` identities, ``<``-joined (``?`` without frames)."""
    return "<".join(f.identity for f in frames[:KEY_FRAMES]) or "?"


def classify(
    exc: BaseException, expected: tuple[type[BaseException], ...], expected_from: tuple[str, ...] = ()
) -> Verdict | None:
    """Judge an exception a target raised: ``None`` when it is an expected rejection.

    An :class:`~assay.core.observe.OracleFailure` is a finding of its own oracle tag (its
    name and kind in the key); a bare ``AssertionError`` is an ``invariant`` finding
    keyed by the asserting function; every other exception
    outside ``expected`` is a ``panic`` keyed by its type and innermost frames, except
    a ``RecursionError`` whose traceback recurses: it is keyed by its type and the
    recursion's cycle (``builtins.RecursionError@cycle:mod:f,g``), so wherever in the
    cycle the limit struck, one recursion is one signature.
    """
    if isinstance(exc, OracleFailure):
        info = exception_info(exc)
        key = exc.name + (f"/{exc.kind}" if exc.kind else "")
        return Verdict(exc.oracle, key, exc.detail, info, {**dict(exc.data), **_example_data(exc)})
    escape = library_escape(exc, expected_from) if expected and isinstance(exc, expected) else None
    if expected and isinstance(exc, expected) and escape is None:
        return None
    if isinstance(exc, AssertionError):
        info = exception_info(exc)
        where = f"{info.frames[0].identity}{_statement_tag(info.frames[0])}" if info.frames else "?"
        return Verdict("invariant", f"assert@{where}", info.message, info, _example_data(exc))
    info = exception_info(exc)
    where = cycle_key(info.cycle) if info.cycle else frames_key(info.frames)
    detail = f"{info.message} [{escape.describe()}]" if escape else info.message
    return Verdict("panic", f"{info.type}@{where}", detail, info, _example_data(exc))


def _statement_tag(frame: Frame) -> str:
    """``#<8 hex>`` of the failing ``assert`` line's text: two asserts of one function are two bugs.

    The text, not the line number, so an edit elsewhere in the file keeps the key.
    """
    import hashlib
    import linecache

    linecache.checkcache(frame.file)  # the file may have been edited since it was first read
    text = " ".join(linecache.getline(frame.file, frame.line).split())
    return f"#{hashlib.sha256(text.encode()).hexdigest()[:8]}" if text else ""


def _example_data(exc: BaseException) -> dict[str, Any]:
    """The falsifying example a Hypothesis target attached to ``exc`` (see :mod:`assay.harness.given`)."""
    example = getattr(exc, "__assay_example__", None)
    if not callable(example):
        return {}
    try:
        return {"example": example()}
    except Exception:  # noqa: BLE001 - an unprintable argument must not hide the finding
        return {}
