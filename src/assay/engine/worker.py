"""The campaign loop, as it runs inside a forked worker.

The worker executes the schedule (initial inputs, then generated cases), keeps
inputs that reach new edges, lines or features, and judges every run.  It sends
everything the parent must not lose (corpus additions with their new keys, raw and
shrunk findings, progress) over a pipe *before* moving to the next case, and
publishes the active input in the :class:`~assay.engine.journal.Journal` before
running it.  So when the worker dies, the parent knows exactly where to resume and
which input did it.
"""

from __future__ import annotations

import hashlib
import math
import os
import signal
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Hashable

from assay.engine import execute, journal as jr, slow
from assay.engine.generate import InputSource
from assay.engine.seeds import case_rng
from assay.engine.shrink import shrink
from assay.feedback.cmplog import guards_of, input_to_state, repair
from assay.feedback.protocol import Feedback
from assay.feedback.valueprofile import ValueProfile
from assay.target import Target

#: Cases between checks of the clock (budget, progress messages).
CLOCK_EVERY = 64
#: Seconds between progress messages.
PROGRESS_EVERY = 0.5
#: Capture-file size at which a chatty target's output is truncated.
MAX_CAPTURE = 16 * 1024 * 1024
#: Seconds between looks at the shared corpus folder (with --jobs > 1).
RELOAD_EVERY = 1.0
#: A shrink candidate may run this many times longer than the failure it shrinks...
SHRINK_SLOWDOWN = 20.0
#: ...but always at least this long (seconds) before it counts as not failing.
SHRINK_MIN_LIMIT = 0.25
#: Shrinking stops after this many candidates ran into their time limit...
SHRINK_MAX_TIMEOUTS = 3
#: ...or after this many seconds, keeping the smallest failing input found so far.
SHRINK_MAX_SECONDS = 30.0
#: Replays of a failing input that decide whether it is deterministic.
DETERMINISM_REPLAYS = 2


@dataclass
class Plan:
    """Everything a (re)started worker needs; inherited through ``fork``."""

    target: Target
    tseed: int
    initial: list[bytes]
    initial_pos: int
    generated_pos: int
    max_cases: int | None
    deadline: float | None
    replay_only: bool
    corpus: list[bytes]
    seen: list[Hashable]
    known_signatures: set[str]
    chain: bytes
    shrink_cases: int
    strategy: Any = None
    dictionary: list[bytes] = field(default_factory=list)
    corpus_meta: list[tuple[list, list, list]] = field(default_factory=list)  # (cmp pairs, tokens, guards) per entry
    fatal_inputs: list[bytes] = field(default_factory=list)  # inputs that killed earlier workers
    slow: float | None = None  # threshold (s) that turns on cost feedback and slow findings
    reload_dir: str | None = None  # with --jobs: the shared corpus folder to import from
    cmplog: Any = None


class Worker:
    def __init__(self, plan: Plan, feedback: Feedback, journal: jr.Journal, send) -> None:
        self.plan = plan
        self.target = plan.target
        self.feedback = feedback
        self.journal = journal
        self.send = send
        self.source = InputSource(plan.target.max_len, plan.dictionary, plan.strategy)
        for entry, (pairs, tokens, guards) in zip(plan.corpus, plan.corpus_meta):
            self.source.add(entry, pairs, tokens, guards)
        for fatal in plan.fatal_inputs:
            self.source.forget(fatal)
        self.seen_features: set[Hashable] = {k for k in plan.seen if isinstance(k, tuple) and k and k[0] in ("f", "outcome", "vp")}
        self.values = ValueProfile(plan.seen) if plan.cmplog is not None and plan.cmplog.value_profile else None
        self.known = set(plan.known_signatures)
        self.journal.chain = plan.chain
        self._last_progress = time.monotonic()
        self.executed = 0
        self.slow = plan.slow
        self._last_reload = time.monotonic()
        self._imported: set[str] = set()
        self._in_corpus = set(plan.corpus) | set(plan.initial)
        self.cost_max = -1
        self.confirmed_bucket = -1

    # -- schedule ------------------------------------------------------------------------
    def run(self) -> tuple[int, int]:
        """Execute the rest of the schedule; returns (initial done, generated position)."""
        plan = self.plan
        for pos in range(plan.initial_pos, len(plan.initial)):
            self.case(jr.INITIAL, pos, plan.initial[pos], ["initial"])
            self._tick(pos)
        if plan.replay_only:
            return len(plan.initial), plan.generated_pos
        i = plan.generated_pos
        while plan.max_cases is None or i < plan.max_cases:
            if i % CLOCK_EVERY == 0:
                if self._tick(i):
                    break
                self.feedback.maybe_restart(i)  # restart indices are multiples of CLOCK_EVERY
            data, ops = self.source.next(case_rng(plan.tseed, i))
            if self.source.repair_guards:
                data, ops = self._repair(i, data, ops, self.source.repair_guards)
            self.case(jr.GENERATED, i, data, ops)
            i += 1
        return len(plan.initial), i

    def _tick(self, position: int) -> bool:
        """Send progress when due; True once the budget is spent."""
        now = time.monotonic()
        if self.plan.reload_dir is not None and now - self._last_reload >= RELOAD_EVERY:
            self._last_reload = now
            self._reload(position)
        if now - self._last_progress >= PROGRESS_EVERY:
            self._last_progress = now
            self.send(("stats", self.executed, self.feedback.counts(), len(self.seen_features), len(self.source.corpus)))
            if position % (CLOCK_EVERY * 64) == 0:
                _truncate_capture()
        return self.plan.deadline is not None and now >= self.plan.deadline

    # -- one case ----------------------------------------------------------------------------
    def case(self, phase: int, pos: int, data: bytes, ops: list[str]) -> None:
        j = self.journal
        j.chain = hashlib.sha256(j.chain + len(data).to_bytes(4, "big") + data).digest()
        j.begin(phase, pos, jr.CASE, data)
        if self.slow is None:
            result = execute.run(self.target, data)
            elapsed = 0.0
        else:
            t0 = time.perf_counter()
            result = execute.run(self.target, data)
            elapsed = time.perf_counter() - t0
        j.end()
        self.executed += 1
        feedback = self.feedback
        new = feedback.take_new() if feedback.new else []
        if self.slow is not None and result.verdict is None:
            self._cost(phase, pos, data, ops, elapsed, new)
        for key in result.features:
            if key not in self.seen_features:
                self.seen_features.add(key)
                new.append(key)
        if result.outcome not in self.seen_features:
            self.seen_features.add(result.outcome)
            new.append(result.outcome)
        # A comparison replacement that showed nothing new: did it advance a comparison?
        if not new and result.verdict is None and self.values is not None and self.source.last_pair is not None \
                and self.values.wants_run(self.executed, self.source.last_pair):
            new = self._values_of(phase, pos, data)
        if result.verdict is not None:
            self.source.failed()
            self.finding(phase, pos, data, ops, result.verdict)
        elif new:
            self._in_corpus.add(data)
            if phase == jr.GENERATED:
                self.source.reward(ops)
            pairs, tokens, guards = self._analyse(phase, pos, data)
            if self.values is not None:
                new += self.values.observe(data, self.plan.cmplog.last_values)
            self.source.add(data, pairs, tokens, guards)
            self.send(("corpus", data, new, phase == jr.INITIAL, pairs, tokens, guards, self.executed))

    def _reload(self, position: int) -> None:
        """Import entries other jobs wrote to the shared corpus (libFuzzer's -reload).

        Each new file is run once with feedback on; it joins this worker's corpus
        only if it shows this worker something new.  Imports arrive at times that
        depend on the other jobs, which is why --jobs N > 1 is not deterministic.
        """
        try:
            names = sorted(os.listdir(self.plan.reload_dir))
        except OSError:
            return
        for name in names:
            if not name.endswith(".input") or name in self._imported:
                continue
            self._imported.add(name)
            try:
                with open(os.path.join(self.plan.reload_dir, name), "rb") as fh:
                    data = fh.read(self.target.max_len + 1)
            except OSError:
                continue
            if data in self._in_corpus or len(data) > self.target.max_len:
                continue
            self._in_corpus.add(data)
            self.journal.begin(jr.GENERATED, position, jr.DERIVED, data)
            result = execute.run(self.target, data)
            self.journal.end()
            new = self.feedback.take_new() if self.feedback.new else []
            for key in [*result.features, result.outcome]:
                if key not in self.seen_features:
                    self.seen_features.add(key)
                    new.append(key)
            if new and result.verdict is None:
                self.source.add(data)
                self.send(("corpus", data, new, True, [], [], [], self.executed))

    def _cost(self, phase: int, pos: int, data: bytes, ops: list[str], elapsed: float, new: list) -> None:
        """Cost feedback: a new highest cost bucket is a feature; past the threshold, confirm."""
        bucket = _bucket(elapsed)
        if bucket <= self.cost_max and (elapsed < self.slow or bucket <= self.confirmed_bucket):
            return
        self.feedback.pause(True)
        try:
            median = slow.median_time(lambda d: self._derived(phase, pos, d), data, slow.REPLAYS - 1)
        finally:
            self.feedback.pause(False)
        bucket = _bucket(statistics.median([elapsed, median]))
        if bucket > self.cost_max:
            self.cost_max = bucket
            new.append(("f", "cost", str(bucket)))
        if elapsed >= self.slow and bucket > self.confirmed_bucket:
            self.confirmed_bucket = bucket
            self._confirm_slow(phase, pos, data, ops)

    def _confirm_slow(self, phase: int, pos: int, data: bytes, ops: list[str]) -> None:
        run = lambda d: self._derived(phase, pos, d)  # noqa: E731 - journalled, so a crash is caught
        self.feedback.pause(True)
        try:
            evidence = slow.confirm(run, data, self.slow)
            if evidence is None:
                return
            frames = slow.sample_stack(run, data, evidence.median / 2)
        finally:
            self.feedback.pause(False)
        verdict = slow.slow_verdict(frames, evidence, self.slow)
        sig = verdict.signature
        if sig in self.known:
            self.send(("again", sig))
            return
        self.known.add(sig)
        determinism = {"replays": slow.REPLAYS, "reproduced": slow.REPLAYS, "same_signature": True}
        self.send(("finding", sig, verdict.to_json(), data, data, ops, pos, determinism, 0, self._case_number(phase, pos)))

    def _analyse(self, phase: int, pos: int, data: bytes) -> tuple[list, list, list]:
        """Comparison log of a new corpus entry: replacement pairs, tokens and guards."""
        logged = self._cmplog_run(phase, pos, data)
        if logged is None:
            return [], [], []
        records, guard_records = logged
        return (*input_to_state(data, records), guards_of(data, guard_records))

    def _values_of(self, phase: int, pos: int, data: bytes) -> list:
        """Value-profile features of one instrumented run (see :mod:`assay.feedback.valueprofile`)."""
        if self._cmplog_run(phase, pos, data) is None:
            return []
        return self.values.observe(data, self.plan.cmplog.last_values)

    def _repair(self, pos: int, data: bytes, ops: list[str], guards: list) -> tuple[bytes, list[str]]:
        """Re-establish the parent's guards (checksums, lengths) that ``data`` broke."""
        logged = self._cmplog_run(jr.GENERATED, pos, data)
        fixed = None if logged is None else repair(data, logged[1], guards)
        if fixed is None:
            return data, ops
        return fixed[: self.target.max_len], [*ops, "repair"]

    def _cmplog_run(self, phase: int, pos: int, data: bytes):
        """One journalled run with the instrumented twins: (records, guard records)."""
        cmplog = self.plan.cmplog
        if cmplog is None or not cmplog.swaps:
            return None
        self.feedback.pause(True)
        self.journal.begin(phase, pos, jr.DERIVED, data)
        try:
            return cmplog.record(lambda: execute.run(self.target, data))
        finally:
            self.journal.end()
            self.feedback.pause(False)

    def finding(self, phase: int, pos: int, data: bytes, ops: list[str], verdict) -> None:
        sig = verdict.signature
        if sig in self.known:
            self.send(("again", sig))
            return
        self.known.add(sig)
        self.send(("raw", sig, verdict.to_json(), data, ops, pos, self._case_number(phase, pos)))
        self.feedback.pause(True)
        try:
            same = 0
            slowest = 0.0
            for _ in range(DETERMINISM_REPLAYS):
                t0 = time.perf_counter()
                again = self._derived(phase, pos, data)
                slowest = max(slowest, time.perf_counter() - t0)
                same += again is not None and again.signature == sig
            minimized, shrink_cases = data, 0
            if same == DETERMINISM_REPLAYS and verdict.oracle != "wedge":
                # A candidate far slower than the failure itself is not worth waiting
                # for (parsers with quadratic corners would make shrinking take hours).
                limit = min(self.target.timeout, max(SHRINK_MIN_LIMIT, SHRINK_SLOWDOWN * slowest))

                stop = {"timeouts": 0, "deadline": time.monotonic() + SHRINK_MAX_SECONDS}

                def still_fails(candidate: bytes) -> bool:
                    if stop["timeouts"] >= SHRINK_MAX_TIMEOUTS or time.monotonic() > stop["deadline"]:
                        return False  # keep the smallest input found so far
                    v = self._derived(phase, pos, candidate, limit)
                    if v is not None and v.oracle == "wedge":
                        stop["timeouts"] += 1
                    return v is not None and v.signature == sig

                result = shrink(data, still_fails, self.plan.shrink_cases, self.source.structural_candidates)
                minimized, shrink_cases = result.data, result.cases
                final = self._derived(phase, pos, minimized, fresh=True)
                if final is not None and final.signature == sig:
                    verdict = final  # the traceback of the input we keep
        finally:
            self.feedback.pause(False)
        determinism = {"replays": DETERMINISM_REPLAYS, "reproduced": same, "same_signature": same == DETERMINISM_REPLAYS}
        self.send(("finding", sig, verdict.to_json(), data, minimized, ops, pos, determinism, shrink_cases,
                   self._case_number(phase, pos)))

    def _case_number(self, phase: int, pos: int) -> int:
        """1-based place of a case in the schedule, counted as the report's ``cases`` (initial inputs first)."""
        return pos + 1 if phase == jr.INITIAL else len(self.plan.initial) + pos + 1

    def _derived(self, phase: int, pos: int, data: bytes, limit: float = 0.0, fresh: bool = False):
        self.journal.begin(phase, pos, jr.DERIVED, data, limit)
        try:
            return execute.run(self.target, data, fresh=fresh).verdict
        finally:
            self.journal.end()


def _bucket(seconds: float) -> int:
    """log2 of the time in microseconds: cost classes robust to small noise."""
    return int(math.log2(max(seconds, 1e-7) * 1e6))


def _truncate_capture() -> None:
    try:
        if os.fstat(2).st_size > MAX_CAPTURE:
            os.ftruncate(2, 0)
    except OSError:
        pass


def install_soft_timeout(journal: jr.Journal) -> None:
    """SIGUSR1 from the parent raises :class:`WedgeTimeout` if a case is running."""

    def on_usr1(signum, frame):  # noqa: ARG001
        if journal.interrupt_wanted():  # never interrupt a case the parent did not mean
            raise execute.WedgeTimeout()

    signal.signal(signal.SIGUSR1, on_usr1)
