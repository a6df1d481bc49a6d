"""Run one input through a target, in-process, and judge the result."""

from __future__ import annotations

import dis
import functools
import os
import signal
import sys
import threading
from collections.abc import Hashable
from dataclasses import dataclass, replace
from types import CodeType, FrameType

from assay.core import interrupts, observe
from assay.core.allowance import Allowance, parse_allow
from assay.core.recursion import headroom, limit_for
from assay.core.target import Target
from assay.core.verdict import (
    ExceptionInfo,
    Frame,
    Verdict,
    classify,
    code_frames,
    exception_info,
    frames_key,
    type_name,
)
from assay.engine import sandbox, strays
from assay.feedback.protocol import RecordingCut

#: Lowest recursion limit a replay at a recorded headroom sets (a corrupt record must not starve assay's own frames).
MIN_RECURSION_LIMIT = 64
#: Most failure identities remembered by :func:`judge` (a known failure skips traceback formatting).
MAX_KNOWN_FAILURES = 256


class WedgeTimeout(BaseException):
    """Raised inside a target whose input ran past its timeout.

    A ``BaseException`` so that a target's ``except Exception`` cannot swallow it.
    """


#: Each function that calls into a target, and the line of that call.
_TARGET_CALLS: dict[CodeType, int] = {}


def mark_target_call(fn, *, local: str = "", attribute: str = "") -> None:
    """Record the line of ``fn`` that calls into a target: the one line loading the ``local``
    variable, or the ``attribute``, of that name (one of the two is given)."""
    code = fn.__code__
    ops, name = (("LOAD_FAST", "LOAD_FAST_CHECK"), local) if local else (("LOAD_ATTR",), attribute)
    lines = {
        i.positions.lineno
        for i in dis.get_instructions(code)
        if i.opname in ops and i.argval == name and i.positions and i.positions.lineno is not None
    }
    if len(lines) != 1:
        raise RuntimeError(f"{code.co_qualname} loads {name!r} on lines {sorted(lines)}, not on one")
    _TARGET_CALLS[code] = lines.pop()


def in_target_call(frame: FrameType | None) -> bool:
    """Whether a signal that landed in ``frame`` interrupted a call into a target.

    True when the innermost caller of a target on the stack (see
    :func:`mark_target_call`) stands at its call line: the target, or what it
    called, is running.  False once the target has returned, while its result is
    judged (formatting a thousand-frame ``RecursionError`` takes long enough for
    the timeout to land there) or the case is being recorded: a timeout raised
    there would break assay's own code, not stop the input.
    """
    while frame is not None:
        line = _TARGET_CALLS.get(frame.f_code)
        if line is not None:
            return frame.f_lineno == line
        frame = frame.f_back
    return False


@dataclass
class RunResult:
    """The judgement of one run plus the semantic features it produced."""

    verdict: Verdict | None
    outcome: Hashable
    features: list[Hashable]


def outcome_of_return(value: object) -> Hashable:
    """The outcome class of a normal return: its type, plus the value for
    ``None`` and booleans.  Other values are left to :func:`assay.feature`, since
    every distinct length or count becoming a corpus entry would swamp the corpus."""
    if value is None or isinstance(value, bool):
        return ("outcome", "return", repr(value))
    return ("outcome", "return", type(value).__qualname__)


def run(target: Target, data: bytes, *, fresh: bool = False, room: int | None = None) -> RunResult:
    """Execute ``target`` on ``data`` and classify what happened.

    A ``KeyboardInterrupt`` from a real signal propagates (see
    :mod:`assay.core.interrupts`); one the target raised is judged like any exception.
    A :class:`WedgeTimeout` becomes a ``wedge`` verdict keyed by the outermost
    frames (where the input is stuck is stable across replays; the innermost frame
    of a hot loop is not).  Under the sandbox, a refused side effect is a ``safety``
    verdict even if the target caught the refusal.  A process the target forked
    that returns here is ended at once (:mod:`assay.engine.strays`).  A failure
    already seen (same exception type, same code and lines) reuses its verdict
    unless ``fresh``.  With ``room`` (a ``RecursionError`` finding's recorded
    headroom, see :func:`assay.core.recursion.headroom`) the recursion limit is set
    for this call so the target has exactly that many frames, as where it was found.
    """
    sink = observe.FeatureSink()
    previous = observe.activate(sink)
    owner = os.getpid()
    guarded = sandbox.installed()
    refusal = None
    error: BaseException | None = None
    value = None
    limit = effective = sys.getrecursionlimit()
    if room is not None:
        effective = max(limit_for(sys._getframe(), room), MIN_RECURSION_LIMIT)
        sys.setrecursionlimit(effective)
    try:
        if guarded:
            sandbox.arm(allowance(target.allow))
        try:
            value = target.fn(data)
        finally:
            if room is not None:
                sys.setrecursionlimit(limit)
            if guarded:
                refusal = sandbox.disarm()
            if os.getpid() != owner:
                strays.returned(target, data)
    except KeyboardInterrupt as exc:
        if refusal is None and interrupts.is_real():
            raise
        error = exc
    except RecordingCut:  # the comparison twins ending a recorded run: not the target's doing
        raise
    except BaseException as exc:  # every escape from the target is judged, SystemExit included
        error = exc
    finally:
        observe.activate(previous)
    result = judged(target, value, error, refusal, sink.keys, fresh)
    verdict = result.verdict
    if room is not None and verdict is not None and "recursion" in verdict.data:
        # Judged once the limit was restored; the target itself had exactly ``room`` frames.
        result.verdict = replace(verdict, data={**verdict.data, "recursion": {"headroom": room, "limit": effective}})
    return result


mark_target_call(run, attribute="fn")


def judged(
    target: Target,
    value: object,
    error: BaseException | None,
    refusal: sandbox.Refusal | None,
    keys: list[Hashable],
    fresh: bool = False,
) -> RunResult:
    """The :class:`RunResult` of a finished call (the tail of :func:`run`, shared with the worker's fast loop)."""
    if refusal is not None:
        return RunResult(safety_verdict(refusal, error), ("outcome", "safety", refusal.kind), keys)
    if error is None:
        return RunResult(None, outcome_of_return(value), keys)
    if isinstance(error, WedgeTimeout):
        return RunResult(wedge_verdict(error, target), ("outcome", "wedge"), keys)
    return RunResult(judge(error, target, fresh), ("outcome", "raise", type_name(type(error))), keys)


def rejection_outcome(error: BaseException, target: Target) -> Hashable | None:
    """The outcome of ``error`` when :func:`judged` calls it an expected rejection by its type
    alone (whatever its message or traceback), else None: what a fast loop may skip once seen."""
    if (
        isinstance(error, (WedgeTimeout, KeyboardInterrupt, observe.OracleFailure))
        or not target.expected
        or not isinstance(error, target.expected)
    ):
        return None
    return ("outcome", "raise", type_name(type(error)))


@functools.lru_cache(maxsize=64)
def allowance(allow: tuple[str, ...]) -> Allowance:
    """A target's ``allow`` entries, parsed once."""
    return parse_allow(allow)


def safety_verdict(refusal: sandbox.Refusal, error: BaseException | None) -> Verdict:
    """The ``safety`` verdict of a refused side effect, keyed by the audit event and the target's frame."""
    if error is not None:
        info = exception_info(error)
    else:
        info = ExceptionInfo(type="safety", message=refusal.detail)
    detail = f"the target tried {refusal.event} ({refusal.detail}) in {refusal.frame}; not allowed by the target's allow=[...]"
    return Verdict("safety", f"{refusal.event}@{refusal.frame}", detail, info, {"class": refusal.kind})


_KNOWN: dict[tuple, Verdict] = {}


def judge(exc: BaseException, target: Target, fresh: bool = False) -> Verdict | None:
    """:func:`classify`, with a cache keyed by the failure's cheap identity.

    The identity is the exception type and every (code object, line) of its
    traceback: the same identity always yields the same signature, so a failure
    hit again and again (a ``RecursionError`` on every input) does not pay for
    formatting its traceback each time.  Oracle failures carry data of their own
    and are never cached.
    """
    from assay.core.observe import OracleFailure

    if isinstance(exc, OracleFailure):
        return classify(exc, target.expected, target.expected_from)
    codes = []
    tb = exc.__traceback__
    while tb is not None:
        codes.append((tb.tb_frame.f_code, tb.tb_lineno))
        tb = tb.tb_next
    key = (target.name, target.expected, target.expected_from, type(exc), tuple(codes))
    verdict = None if fresh else _KNOWN.get(key)
    if verdict is None:
        verdict = classify(exc, target.expected, target.expected_from)
        if verdict is not None and len(_KNOWN) < MAX_KNOWN_FAILURES:
            _KNOWN[key] = verdict
    if verdict is not None and isinstance(exc, RecursionError):
        # Measured per run, never cached: the same traceback can hang under stacks of any height.
        recorded = {"headroom": headroom(exc, target.fn), "limit": sys.getrecursionlimit()}
        verdict = replace(verdict, data={**verdict.data, "recursion": recorded})
    return verdict


def recorded_room(verdict: Verdict | None) -> int | None:
    """The headroom a ``RecursionError`` finding was found with (see :func:`judge`), or ``None``."""
    record = verdict.data.get("recursion") if verdict is not None else None
    room = record.get("headroom") if isinstance(record, dict) else None
    return room if isinstance(room, int) and not isinstance(room, bool) and room > 0 else None


def wedge_verdict(exc: BaseException, target: Target) -> Verdict:
    info = exception_info(exc)
    outer = list(reversed(code_frames(exc.__traceback__)))
    return Verdict("wedge", f"timeout@{frames_key(outer)}", f"input ran longer than {target.timeout}s", info)


def wedge_verdict_from_frames(frames_outer_first: list[Frame], timeout: float, text: str) -> Verdict:
    """A ``wedge`` verdict for a worker that had to be killed (stack from faulthandler)."""
    from assay.core.verdict import ExceptionInfo

    info = ExceptionInfo(  # its frames innermost first, as every other finding records them
        type="wedge", message=f"killed after {timeout}s", frames=tuple(reversed(frames_outer_first)), traceback=text
    )
    return Verdict(
        "wedge",
        f"timeout@{frames_key(frames_outer_first)}",
        f"input ran longer than {timeout}s and ignored the soft timeout",
        info,
    )


def run_input(target: Target, data: bytes, timeout: float | None = None, room: int | None = None) -> Verdict | None:
    """Replay one input in this process: the verdict, or ``None`` if it passes.

    With ``timeout`` (main thread only) an input that runs longer is a ``wedge``.
    This is the replay used by ``assay replay``, the promoter and the pytest plugin;
    the campaign uses the same :func:`run` so both judge identically.  ``room``
    replays a ``RecursionError`` finding at the headroom it was found with
    (:func:`recorded_room`).
    """
    return run_timed(target, data, timeout, room).verdict


def run_timed(target: Target, data: bytes, timeout: float | None, room: int | None = None) -> RunResult:
    """:func:`run` under a ``SIGALRM`` timeout (main thread only): a target still running past it is a ``wedge``."""
    if timeout is None or threading.current_thread() is not threading.main_thread():
        return run(target, data, room=room)

    def on_alarm(signum, frame):  # noqa: ARG001
        if in_target_call(frame):
            raise WedgeTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return run(target, data, room=room)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
