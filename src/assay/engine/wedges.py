"""One hang, one signature: a wedge keyed by the frames its loop holds.

A wedge is caught wherever the timeout found it, and below the frame that loops
that place is chance.  The h11 harness that loops over ``next_event()`` after EOF
was caught in ``next_event`` -> ``_extract_next_receive_event`` in one run and in a
generated ``__eq__`` in another: one hang reported as two bugs, and its replays,
caught elsewhere again, called it flaky.

So a wedge's key comes from a traced run of its input instead (in a forked child,
``sys.settrace``): at line event :data:`AFTER` it takes the stack, and over the next
:data:`WINDOW` line events it watches which of those frames return.  A loop's
callees return again and again; the frame that loops, and its callers, never do.
The frames that held on through the window make the key.  Line events are the same
on every run and machine, so an input always gets the same key, and any input
caught in the same loop gets the loop's frames, whatever phase of its body the
window began in.

A hang that runs no Python lines (a regular expression, C code) never closes the
window; it keeps the key of its stack at the timeout, which such a hang holds
still anyway.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from assay.core.location import is_assay_file
from assay.core.recursion import module_name
from assay.core.target import Target
from assay.core.verdict import KEY_FRAMES, Verdict, is_timeout_wedge
from assay.engine import isolate
from assay.engine.traced import TimedOut, in_child, report_traced

#: Line events a wedge's input runs, traced, before its stack is taken (a hang takes
#: millions before its timeout; setup before its loop takes far fewer).
AFTER = 1 << 17
#: Line events after that during which a frame that returns is not part of the loop.
WINDOW = 1 << 17
#: Deepest stack walked.
MAX_DEPTH = 1000
#: Longest a traced run may take (at most the target's timeout): a hang in C code never
#: closes the window, and each new stack at a timeout costs one such run.
MAX_SECONDS = 10.0


def wedge_key(outer: list[str] | tuple[str, ...]) -> str:
    """The key of a wedge whose stack holds ``outer`` (identities, outermost first)."""
    return "timeout@" + ("<".join(outer[:KEY_FRAMES]) or "?")


def _identity(frame: Any) -> str:
    code = frame.f_code
    return f"{module_name(frame.f_globals, code.co_filename)}:{code.co_qualname}"


def _is_ours(code: Any) -> bool:
    return is_assay_file(code.co_filename)


def outer_frames(frame: Any) -> list[Any]:
    """``frame`` and its callers out to assay's own code, outermost first."""
    found: list[Any] = []
    f = frame
    while f is not None and len(found) < MAX_DEPTH:
        if _is_ours(f.f_code):
            if found:
                break
        else:
            found.append(f)
        f = f.f_back
    found.reverse()
    return found


class HeldFrames:
    """A ``sys.settrace`` tracer: the frames that held on through a window of a run.

    It counts the line events of code that is not assay's (so the worker and the
    campaign's parent, which reach the target through different assay code, count
    alike).  At ``after`` it takes the stack; until ``after + window`` each frame
    of it that returns (or, a generator, yields) cuts the held frames above it;
    then it calls ``finish`` with the held frames' identities as JSON.
    """

    def __init__(self, after: int, window: int, finish: Callable[[bytes], None] | None = None) -> None:
        self.count = 0
        self.after = after
        self.end = after + window
        self.finish = finish
        self.stack: list[Any] | None = None
        self.depth = 0  # how many of self.stack, outermost first, have not returned
        self._at: dict[int, int] = {}
        self._ours: dict[Any, bool] = {}

    def trace(self, frame, event, arg):  # noqa: ARG002 - the settrace signature
        if event == "line":
            self.count += 1
            if self.count == self.after:
                self.stack = outer_frames(frame)  # kept alive, so no other frame reuses an id
                self.depth = len(self.stack)
                self._at = {id(f): k for k, f in enumerate(self.stack)}
            elif self.count == self.end:
                sys.settrace(None)
                if self.finish is not None:
                    self.finish(self.report())
                return None
        elif event == "call":
            code = frame.f_code
            ours = self._ours.get(code)
            if ours is None:
                ours = self._ours[code] = _is_ours(code)
            return None if ours else self.trace
        elif event == "return" and self.stack is not None:
            k = self._at.get(id(frame))
            if k is not None and k < self.depth:
                self.depth = k
        return self.trace

    def report(self) -> bytes:
        """The held frames' identities once the window closed, else ``null``."""
        if self.stack is None or self.count < self.end:
            return b"null"
        return json.dumps([_identity(f) for f in self.stack[: self.depth]]).encode()


def held_frames(run: Callable[[], Any], timeout: float) -> list[str] | None:
    """The frames of ``run()`` that held on through :data:`WINDOW` line events from
    :data:`AFTER` on, outermost first, traced in a forked child of this process (the
    worker's, under its sandbox); ``None`` when it ends, dies or times out before the
    window closes, or no frame held."""
    try:
        return _held(in_child(run, lambda finish: HeldFrames(AFTER, WINDOW, finish), min(timeout, MAX_SECONDS)))
    except TimedOut:
        return None


def held_frames_isolated(target: Target, run: Callable[[], Any]) -> list[str] | None:
    """:func:`held_frames` from the campaign's parent, which runs no target code itself:
    in a child set up as a replay's (:func:`assay.engine.isolate.call_isolated`)."""

    def body(send: Callable[[Any], None]) -> None:
        report_traced(run, lambda finish: HeldFrames(AFTER, WINDOW, finish), send)

    return _held(isolate.call_isolated(target, body, min(target.timeout, MAX_SECONDS)))


def _held(raw: bytes | None) -> list[str] | None:
    try:
        held = json.loads(raw) if raw else None
    except ValueError:
        return None
    return held if isinstance(held, list) and held and all(isinstance(x, str) for x in held) else None


def rekeyed(verdict: Verdict, held: list[str] | None) -> Verdict:
    """``verdict`` (a wedge) keyed by the frames its loop holds, when they are known."""
    if held is None:
        return verdict
    return replace(verdict, key=wedge_key(held), data={**verdict.data, "held_frames": held})


class HeldByStack:
    """Held frames remembered by the signature a wedge's timeout (or kill) gave it: the
    same stack there again is the same hang, and is not traced again."""

    def __init__(self) -> None:
        self._held: dict[str, list[str] | None] = {}

    def rekeyed(self, verdict: Verdict, trace: Callable[[], list[str] | None]) -> Verdict:
        """``verdict`` keyed by its held frames, from ``trace()`` the first time its signature is seen."""
        held = self._held.get(verdict.signature, False)
        if held is False:
            held = self._held[verdict.signature] = trace()
        return rekeyed(verdict, held)  # type: ignore[arg-type]  # never True: False is replaced above


def reproduces(again: Verdict | None, first: Verdict) -> bool:
    """Did a replay of ``first``'s input fail as ``first`` did?  For a wedge, a replay
    that wedged did: where its timeout caught it is chance, and the key comes from
    the input (:func:`held_frames`), not from that place."""
    if again is None:
        return False
    return again.signature == first.signature or (is_timeout_wedge(first) and is_timeout_wedge(again))
