"""Replay inputs once each, in a crash-isolated worker, recording every feature they reach.

A campaign only wants what is *new*, so its feedback disables every item once seen.
``assay merge-corpus`` needs the opposite: the *full* feature set of each input
(branch edges, lines, semantic features, the outcome class), so that a set cover
over them keeps everything the union reached.  One forked worker replays a batch of
inputs; before each input it forgets what it saw and re-arms every disabled event
(``sys.monitoring.restart_events()``), so each input's set is complete on its own.

An input that kills the worker (signal, exit, memory) or hangs past its timeout is
judged like a campaign death (:func:`assay.engine.isolate.death_verdict`) and a new
worker resumes at the next input.  An input that fails in-process (panic, wedge,
invariant, ...) is reported with its verdict too.  Either way the caller decides
what to do with it; nothing is dropped here.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Hashable
from dataclasses import dataclass

from assay.core.target import Target
from assay.core.verdict import Verdict
from assay.engine import execute, isolate, procs
from assay.feedback import edgesplit
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback, monitoring

#: Seconds of grace, beyond the target's timeout plus :data:`isolate.KILL_GRACE`,
#: before a silent replay worker is killed as hung.
HANG_SLACK = 1.0


@dataclass
class Replay:
    """What one input did: its full feature set, or the verdict it failed with."""

    features: frozenset[Hashable]
    verdict: Verdict | None

    @property
    def failed(self) -> bool:
        return self.verdict is not None


class FullFeedback(SysmonFeedback):
    """PEP 669 lines and edges, never retiring a one-way branch site early.

    Within one input every direction of every branch site must be seen, so the
    3.12/3.13 one-way caps of :class:`SysmonFeedback` (campaign-wide optimisations)
    do not apply: a site is disabled only once both directions were seen, and
    no ``INSTRUCTION`` events are used (re-armed per input they would fire for
    every instruction of every input).
    """

    split_by_instruction = False

    def forget(self) -> None:
        """Start a new input: nothing is seen, every disabled event fires again."""
        self.seen.clear()
        self.new = []
        self.lines = self.edges = 0
        self._site_dirs.clear()
        self._site_hits.clear()
        monitoring().restart_events()

    def _on_branch(self, code, src: int, dst: int):  # noqa: ANN001 - sys.monitoring callback
        if self.paused:
            return None
        ck = self._code_keys[id(code)]
        key = (ck, src, dst)
        site = (ck, src)
        if key not in self.seen:
            self.seen.add(key)
            self.new.append(key)
            self.edges += 1
            self._site_dirs[site] = self._site_dirs.get(site, 0) + 1
        return sys.monitoring.DISABLE if self._site_dirs.get(site, 0) >= 2 else None


def record(target: Target, sources: list[str], inputs: list[bytes], timeout: float | None = None) -> list[Replay]:
    """Replay each of ``inputs`` once on ``target``; one :class:`Replay` per input, in order."""
    timeout = target.timeout if timeout is None else timeout
    results: list[Replay | None] = [None] * len(inputs)
    edgesplit.prepare(Scope(sources).eager().contains)  # once here, not in every forked replayer
    start = 0
    while start < len(inputs):
        start = _one_worker(target, sources, inputs, start, timeout, results)
    return [r for r in results if r is not None]


def _one_worker(
    target: Target, sources: list[str], inputs: list[bytes], start: int, timeout: float, results: list[Replay | None]
) -> int:
    """Fork a worker replaying ``inputs[start:]``; returns the index to resume from."""
    capture = isolate.new_capture()
    pid, reader = isolate.fork_with_pipe(
        lambda writer: _child(target, sources, inputs, start, timeout, writer, capture)
    )
    nxt = start
    killed = False
    finished = False
    try:
        deadline = time.monotonic() + timeout + isolate.KILL_GRACE + HANG_SLACK
        while True:
            if reader.poll(0.05):
                try:
                    msg = reader.recv()
                except EOFError:
                    break
                if msg == "done":
                    finished = True
                    break
                idx, keys, verdict = msg
                results[idx] = Replay(frozenset(keys), Verdict.from_json(verdict) if verdict else None)
                nxt = idx + 1
                deadline = time.monotonic() + timeout + isolate.KILL_GRACE + HANG_SLACK
            elif time.monotonic() > deadline:
                isolate.kill_with_stack(pid)
                killed = True
                break
        status = procs.reap_group(pid, kill=killed)  # bounded, and ends what the child started
        if finished:
            return len(inputs)
        if nxt >= len(inputs):
            return nxt  # died after its last input: nothing to blame
        output = isolate.read_tail(capture)
        verdict = isolate.death_verdict(status, output, killed_for_timeout=killed, timeout=timeout)
        results[nxt] = Replay(frozenset(), verdict)
        return nxt + 1
    finally:
        reader.close()
        os.unlink(capture)


def _child(
    target: Target, sources: list[str], inputs: list[bytes], start: int, timeout: float, writer, capture: str
) -> None:
    isolate.child_setup(capture, target.rss_limit_mb)
    feedback = FullFeedback(Scope(sources))
    feedback.start()
    try:
        for idx in range(start, len(inputs)):
            feedback.forget()
            result = execute.run_timed(target, inputs[idx], timeout)
            keys = [*feedback.take_new(), *result.features, result.outcome]
            writer.send((idx, keys, result.verdict.to_json() if result.verdict else None))
        writer.send("done")
    finally:
        feedback.stop()
