"""Run one input through a target, in-process, and judge the result."""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass
from typing import Hashable

from assay import observe
from assay.target import Target
from assay.verdict import Frame, Verdict, classify, code_frames, exception_info, frames_key, type_name

class WedgeTimeout(BaseException):
    """Raised inside a target whose input ran past its timeout.

    A ``BaseException`` so that a target's ``except Exception`` cannot swallow it.
    """


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


def run(target: Target, data: bytes) -> RunResult:
    """Execute ``target`` on ``data`` and classify what happened.

    ``KeyboardInterrupt`` propagates; a :class:`WedgeTimeout` becomes a ``wedge``
    verdict keyed by the outermost frames (where the input is stuck is stable
    across replays; the innermost frame of a hot loop is not).
    """
    sink = observe.FeatureSink()
    previous = observe.activate(sink)
    try:
        value = target.fn(data)
    except KeyboardInterrupt:
        raise
    except WedgeTimeout as exc:
        return RunResult(wedge_verdict(exc, target), ("outcome", "wedge"), sink.keys)
    except BaseException as exc:  # every escape from the target is judged, SystemExit included
        verdict = classify(exc, target.expected)
        return RunResult(verdict, ("outcome", "raise", type_name(type(exc))), sink.keys)
    finally:
        observe.activate(previous)
    return RunResult(None, outcome_of_return(value), sink.keys)


def wedge_verdict(exc: BaseException, target: Target) -> Verdict:
    info = exception_info(exc)
    outer = list(reversed(code_frames(exc.__traceback__)))
    return Verdict("wedge", f"timeout@{frames_key(outer)}", f"input ran longer than {target.timeout}s", info)


def wedge_verdict_from_frames(frames_outer_first: list[Frame], timeout: float, text: str) -> Verdict:
    """A ``wedge`` verdict for a worker that had to be killed (stack from faulthandler)."""
    from assay.verdict import ExceptionInfo

    info = ExceptionInfo(type="wedge", message=f"killed after {timeout}s", frames=tuple(frames_outer_first), traceback=text)
    return Verdict("wedge", f"timeout@{frames_key(frames_outer_first)}", f"input ran longer than {timeout}s and ignored the soft timeout", info)


def run_input(target: Target, data: bytes, timeout: float | None = None) -> Verdict | None:
    """Replay one input in this process: the verdict, or ``None`` if it passes.

    With ``timeout`` (main thread only) an input that runs longer is a ``wedge``.
    This is the replay used by ``assay replay``, the promoter and the pytest plugin;
    the campaign uses the same :func:`run` so both judge identically.
    """
    if timeout is None or threading.current_thread() is not threading.main_thread():
        return run(target, data).verdict

    def on_alarm(signum, frame):  # noqa: ARG001
        raise WedgeTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return run(target, data).verdict
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
