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

import math
import os
import signal
import statistics
import sys
import time
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from assay.core import interrupts, observe
from assay.core.target import Target
from assay.core.verdict import is_timeout_wedge
from assay.engine import execute, generate, journal as jr, sandbox, slow, strays, traced, trim, wedges
from assay.engine.budget import ANALYSIS_SHARE, AnalysisBudget
from assay.engine.generate import InputSource, LengthControl
from assay.engine.seeds import case_rng, case_stream
from assay.engine.shrink import shrink
from assay.feedback import valueprofile
from assay.feedback.cmplog import guards_of, input_to_state, repair
from assay.feedback.protocol import Feedback
from assay.feedback.sysmon import RESTART_EVERY, SysmonFeedback
from assay.feedback.valueprofile import ValueProfile
from assay.gen import accelerated

#: Cases between checks of the clock (budget, progress messages).
CLOCK_EVERY = 64
#: The C hot loop checks the clock itself at the clock boundaries where nothing else
#: is due, and runs through at most this many cases before Python sees a boundary.
QUIET_MAX = 1024
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
#: Seconds a failure's replays and shrinking may take whatever the analysis budget
#: (:mod:`assay.engine.budget`) has left; past them, shrinking stops when it is spent.
#: Most shrinks of a cheap target end well within them.
SHRINK_FREE_SECONDS = 2.0
#: Replays of a failing input that decide whether it is deterministic.
DETERMINISM_REPLAYS = 2
#: Every this many generated cases, one runs with its Python line events and loop
#: turns counted (:mod:`assay.engine.traced`; 0: never).  A new highest log2 count
#: is a feature: the search climbs towards costly inputs (quadratic loops)
#: deterministically, without a ``slow=`` setting.
COST_EVERY = 32
#: With ``slow=`` (the user expects cost to matter, and every case is timed anyway):
#: every this many cases is counted.
SLOW_COST_EVERY = 8
#: Counted cases that found no new highest count double the interval every this
#: many (a counted case costs 60-78 us, a dozen cases of a cheap target); new
#: coverage resets it.  Doubling, not widening by COST_EVERY: a saturated campaign
#: reaches COST_MAX_EVERY within 8,000 cases instead of 127,000, and json.loads'
#: steady speed with counting is then no longer below it without (bench/README.md,
#: eleventh session).
COST_BACKOFF = 8
#: Widest interval between counted cases.
COST_MAX_EVERY = 1024
#: Fewest counted events that make a cost class of their own: a run that short differs
#: from another by a branch, not by cost.  (The count is the target's lines alone; when
#: it held assay's ~35 lines around the target too, they played this part, and a tiny
#: target's first cases each made a class and a corpus entry without it.)
COST_FLOOR = 32
#: Events counted at most (the count then saturates, tracing stops, and so
#: does counting for the rest of the worker's life: the climb has arrived).
LINE_CAP = 1 << 20
#: A counted (traced) case may run this many timeouts before it is a wedge.
COUNT_SLACK = 4
#: Counted events allowed per generated case so far: counting big inputs
#: costs up to a microsecond an event, so it is skipped while over budget
#: (deterministic: counts are).
COUNT_BUDGET = 64
#: Without ``slow=``, a case that ran longer than this share of the target's
#: timeout is checked for super-linear cost (replays and pumping) and reported
#: as a ``slow`` finding if it is; the schedule does not depend on it.
IMPLICIT_SLOW_SHARE = 0.125
#: Without ``slow=``: a counted case whose Python line events and loop turns reach a new
#: highest log2 class of at least this many bits (2**17 events, tens of milliseconds) is
#: checked for super-linear cost too, however fast it ran (0: never).  A quadratic loop
#: stays far below the timeout within ``max_len`` yet hangs on a bigger input: the
#: check grows it until it does (:func:`assay.engine.slow.cross_steps`).
SUSPECT_LINE_BITS = 18
#: Crash exploration (AFL's): a failing input (not a hang) that showed new coverage or
#: a new outcome stays a mutation parent, so a second bug behind the first one's trigger
#: (the first fires on most inputs that reach it) is still reached.  At most this many
#: such parents per campaign (0: off), so a shallow frequent crash cannot fill the corpus.
CRASH_PARENTS = 32

#: What ``_cmutate.HotLoop.run`` hands back: cases done, or a case for Python to
#: generate and run, to repair, or to judge, or what a signal handler raised.
HOT_DONE, HOT_PYTHON, HOT_REPAIR, HOT_RAN, HOT_SIGNAL = 0, 1, 2, 3, 4


@dataclass
class WorkerPlan:
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
    chain: bytes  # the schedule digest's chain, with ``pending`` (assay.engine.journal)
    shrink_cases: int
    strategy: Any = None
    dictionary: list[bytes] = field(default_factory=list)
    corpus_meta: list[tuple[list, list, list]] = field(default_factory=list)  # (cmp pairs, tokens, guards) per entry
    fatal_inputs: list[bytes] = field(default_factory=list)  # inputs that killed earlier workers
    slow: float | None = None  # threshold (s) that turns on cost feedback and slow findings
    reload_dir: str | None = None  # with --jobs: the shared corpus folder to import from
    cmplog: Any = None
    len_limit: int | None = None  # byte mode's current length limit (None: not started yet)
    len_mark: int = 0  # case index of the last new coverage or limit raise
    len_more: tuple[int, int, bool] | None = None  # the rest of LengthControl.state() (None: not started yet)
    pending: bytes = b""  # the schedule digest's records not folded into ``chain`` yet
    analysis_share: float | None = ANALYSIS_SHARE  # bound on work for findings (None: unbounded)
    analysis_spent: float = 0.0  # seconds earlier workers spent on it...
    analysis_loop: float = 0.0  # ...and fuzzing
    analysis_after: float = 0.0  # of analysis_spent: seconds spent finishing it after the schedule ended
    analysis_unfinished: int = 0  # suspects left unanalysed when the budget ran out
    crash_parents: list[int] = field(default_factory=list)  # corpus indices of the failing parents (CRASH_PARENTS)
    trim_runs: int = 0  # recorded runs earlier workers spent trimming new entries (assay.engine.trim)
    seeded: set[int] = field(default_factory=set)  # corpus indices that descend from an initial input
    #: Oracle tags whose first finding ends the schedule (a survivor's differential kill: one is enough).
    stop_on: frozenset[str] = frozenset()
    #: Oracle tags whose findings are reported but do not end or steer the search: the input then counts as a
    #: passing case (a survivor's message kill, which a behaviour kill found later outranks).
    go_on: frozenset[str] = frozenset()
    #: A directed campaign's aim (called once per new corpus entry, never per case; None: every entry is
    #: equal): given the entry and its new keys, how many extra shares of the parent picks it earns and
    #: which replacements (pattern, replacement) to try on it first, before its comparisons'.
    aim: Callable[[bytes, list[Hashable]], tuple[int, list[tuple[bytes, bytes]]]] | None = None


class Worker:
    def __init__(self, plan: WorkerPlan, feedback: Feedback, journal: jr.Journal, send) -> None:
        self.plan = plan
        self.target = plan.target
        self.feedback = feedback
        self.journal = journal
        self.send = send
        self.source = InputSource(plan.target.max_len, plan.dictionary, plan.strategy)
        crashing = set(plan.crash_parents)
        for index, (entry, (pairs, tokens, guards)) in enumerate(zip(plan.corpus, plan.corpus_meta)):
            self.source.add(entry, pairs, tokens, guards, crashing=index in crashing, seeded=index in plan.seeded)
        self.crash_parents = len(crashing)
        for fatal in plan.fatal_inputs:
            self.source.forget(fatal)
        self.seen_features: set[Hashable] = {
            k for k in plan.seen if isinstance(k, tuple) and k and k[0] in ("f", "outcome", "vp")
        }
        self.values = ValueProfile(plan.seen) if plan.cmplog is not None and plan.cmplog.value_profile else None
        self.known = set(plan.known_signatures)
        self._held = wedges.HeldByStack()
        self.journal.start_chain(plan.chain, plan.pending)
        self._last_progress = time.monotonic()
        self.executed = 0
        self.slow = plan.slow
        self._last_reload = time.monotonic()
        self._imported: set[str] = set()
        self._in_corpus = set(plan.corpus) | set(plan.initial)
        self.cost_max = -1
        self.confirmed_bucket = -1
        #: Without ``slow=``: the wall time past which a case is checked for super-linear cost.
        self.outlier = None if self.slow is not None else IMPLICIT_SLOW_SHARE * plan.target.timeout
        self.lines_traced = 0  # a restarted worker starts its budget afresh
        self.count_misses = 0  # counted cases since the last new count or new coverage
        self.cost_every = COST_EVERY if plan.slow is None else SLOW_COST_EVERY
        self.next_count = sys.maxsize if not COST_EVERY else -(-plan.generated_pos // self.cost_every) * self.cost_every
        self.lines_max = max(
            (int(k[2]) for k in self.seen_features if k[0] == "f" and len(k) == 3 and k[1] == "cost-lines"),  # type: ignore[index, arg-type]  # tuple keys
            default=-1,
        )
        self.lengths: LengthControl | None = None
        if plan.strategy is None:
            longest = max(map(len, [*plan.initial, *plan.corpus]), default=0)
            self.lengths = LengthControl(plan.target.max_len, plan.len_limit, plan.len_mark, longest, plan.len_more)
            self.source.len_limit = self.lengths.limit
        self.sink = observe.FeatureSink()
        self._boring: set = set()  # return-value classes whose outcome is already seen
        self._rejects: set = set()  # expected exception types whose outcome is already seen
        self.counting = traced.CountingChild(lambda data: execute.run(self.target, data), LINE_CAP)
        #: Trims new entries in byte mode (:mod:`assay.engine.trim`); None: entries are kept as they ran.
        self.trimmer = (
            trim.TrimChild(self.target, feedback)
            if plan.strategy is None and isinstance(feedback, SysmonFeedback) and trim.TRIM_RUNS
            else None
        )
        self.trim_runs = plan.trim_runs
        self._counted: tuple | None = None  # the case whose line count is out (see case())
        self.budget = AnalysisBudget(plan.analysis_share, plan.analysis_spent, plan.analysis_loop)
        #: The slow suspect being analysed: (its steps, the predicted seconds of the next one).
        self._analysis: tuple[Generator[float, None, None], float] | None = None
        self._at = (jr.INITIAL, 0)  # where the analysis' runs are journalled (see _advance_analysis)
        #: A line-count suspect that came while another was analysed: (phase, pos, data, ops, threshold, elapsed).
        self._waiting: tuple | None = None
        self.analysis_after = plan.analysis_after
        self.analysis_unfinished = plan.analysis_unfinished
        #: A finding of an oracle in ``plan.stop_on`` was reported: the schedule ends (checked per block, not per case).
        self.stopped = False

    # -- schedule ------------------------------------------------------------------------
    def run(self) -> tuple[int, int]:
        """Execute the rest of the schedule; returns (initial done, generated position)."""
        try:
            done = self._run()
            self._finish_analysis(done[1])
            return done
        finally:
            self._send_analysis()
            self.counting.close()
            if self.trimmer is not None:
                self.trimmer.close()

    def _run(self) -> tuple[int, int]:
        plan = self.plan
        for pos in range(plan.initial_pos, len(plan.initial)):
            self.case(jr.INITIAL, pos, plan.initial[pos], ["initial"])
            self._advance_analysis((jr.INITIAL, pos))
            self._tick(pos)
            if self.stopped:
                return pos + 1, plan.generated_pos
        if plan.replay_only:
            return len(plan.initial), plan.generated_pos
        i = plan.generated_pos
        stream = case_stream(plan.tseed)
        rng_of = stream.rng if plan.strategy is None else (lambda k: case_rng(plan.tseed, k))
        hot = self._hot_loop(stream)
        while (plan.max_cases is None or i < plan.max_cases) and not self.stopped:
            if i % CLOCK_EVERY == 0:
                self._collect_count()
                self._advance_analysis((jr.GENERATED, i - 1))
                if self._tick(i):
                    break
                self.feedback.maybe_restart(i)  # restart indices are multiples of CLOCK_EVERY
                if self.lengths is not None and self.lengths.check(i):
                    self.source.len_limit = self.lengths.limit
                    self.send(("length", *self.lengths.state()))
            end = i - i % CLOCK_EVERY + CLOCK_EVERY
            if hot is not None and self.slow is None:
                end = self._quiet_end(i, end)
            if plan.max_cases is not None:
                end = min(end, plan.max_cases)
            if self.slow is None:
                i = self._generated(i, end, rng_of, hot)
                continue
            while i < end and not self.stopped:  # timed cases: cost feedback from timing, and from counted lines
                self._one(i, rng_of(i), count=i >= self.next_count)
                i += 1
        self._collect_count()
        return len(plan.initial), i

    def _quiet_end(self, i: int, end: int) -> int:
        """How far past clock boundary ``end`` the C hot loop may run: up to the first
        boundary where something other than the clock may be due (a count to collect, a
        restart of the feedback's events, a raise of the length limit), :data:`QUIET_MAX`
        cases at most.  The boundaries in between would do nothing but look at the
        clock, which the C loop does itself (see :meth:`_wake_at`).
        """
        if self.counting.pending or self._analysis is not None or not isinstance(self.feedback, SysmonFeedback):
            return end
        quiet = min(i + QUIET_MAX, -(-end // RESTART_EVERY) * RESTART_EVERY)
        lengths = self.lengths
        if lengths is not None and lengths.limit < lengths.max_len:
            quiet = min(quiet, lengths.mark + lengths.stall())
        return max(end, quiet - quiet % CLOCK_EVERY)

    def _wake_at(self) -> float:
        """The monotonic time from which :meth:`_tick` has something to do."""
        wake = self._last_progress + PROGRESS_EVERY
        if self.plan.reload_dir is not None:
            wake = min(wake, self._last_reload + RELOAD_EVERY)
        if self.plan.deadline is not None:
            wake = min(wake, self.plan.deadline)
        return wake

    def _one(self, i: int, rng, count: bool = False) -> None:
        """Generated case ``i`` on the general path (``count``: the next counted case)."""
        data, ops = self.source.next(rng, grow=count)
        if self.source.repair_guards:
            data, ops = self._repair(i, data, ops, self.source.repair_guards)
        self.case(jr.GENERATED, i, data, ops, count)
        if count:
            misses = self.count_misses
            self.next_count = i + min(COST_MAX_EVERY, self.cost_every << min(misses // COST_BACKOFF, 16))

    def _generated(self, i: int, end: int, rng_of, hot) -> int:
        """Generated cases ``i`` to ``end`` without ``slow=``: the counted cases (every
        :data:`COST_EVERY`-th, backing off while counting finds nothing) on the general
        path, the rest through the hot loop, in C (``hot``) or in Python."""
        previous = observe.activate(self.sink)
        try:
            while i < end and not self.stopped:
                if i >= self.next_count:
                    self._one(i, rng_of(i), count=True)
                    i += 1
                    end = min(end, -(-i // CLOCK_EVERY) * CLOCK_EVERY)  # its count is collected at the next boundary
                    continue
                stop = min(end, self.next_count)
                if hot is None:
                    i = self._block(i, stop, rng_of)
                    continue
                i = self._block_c(hot, i, stop, rng_of)
                if i < stop:  # a clock boundary where the clock says _tick is due
                    break
        finally:
            observe.activate(previous)
        return i

    def _block(self, i: int, end: int, rng_of) -> int:
        """Generated cases ``i`` to ``end``, none of them counted: the hot loop.

        It does only what every case needs (mutate, digest record, journal, call) and leaves
        for the general path (:meth:`_after`) when something happened or may have:
        new coverage, a feature, an exception other than an expected rejection whose
        outcome is seen, a refusal, a new outcome, a time outlier.  A case to be
        repaired runs on the general path.  It computes exactly what :meth:`case`
        computes.  The caller has the feature sink active.
        """
        source, journal, target = self.source, self.journal, self.target
        nxt, begin, mem = source.next, journal.begin, journal.mem
        fn, fb, sink, boring, rejects, seen = (
            target.fn,
            self.feedback,
            self.sink,
            self._boring,
            self._rejects,
            self.seen_features,
        )
        guarded = sandbox.installed()
        allow = execute.allowance(target.allow) if guarded else None
        arm, disarm = sandbox.arm, sandbox.disarm
        getpid, owner, monotonic, record = os.getpid, os.getpid(), time.monotonic, journal.record
        outlier, values = self.outlier, self.values
        tried = values.tried if values is not None else ()  # replacements value profile already judged
        generated, case_sub, idle, running = jr.GENERATED, jr.CASE, jr.IDLE, jr.RUNNING
        pack_header, data_at, capacity = jr.HEADER.pack_into, jr.DATA_AT, journal.capacity
        ran = 0
        try:
            while i < end:
                data, ops = nxt(rng_of(i))
                if source.repair_guards:
                    data, ops = self._repair(i, data, ops, source.repair_guards)
                    self.case(generated, i, data, ops)
                    i += 1
                    continue
                n = len(data)
                record(data)
                if n <= capacity:  # Journal.begin, inlined: this is most of the loop's bookkeeping
                    mem[data_at : data_at + n] = data
                    started = monotonic()
                    pack_header(mem, 0, idle, generated, i, case_sub, started, n, 0.0, journal.used, journal.sel)
                    mem[0] = running
                else:
                    started = begin(generated, i, case_sub, data)
                value = error = refusal = None
                try:
                    if guarded:
                        arm(allow)  # type: ignore[arg-type]  # guarded: allow is set
                    try:
                        value = fn(data)
                    finally:
                        if guarded:
                            refusal = disarm()
                        if getpid() != owner:
                            strays.returned(target, data)
                except KeyboardInterrupt as exc:
                    if refusal is None and interrupts.is_real():
                        raise
                    error = exc
                except BaseException as exc:  # judged on the general path, like execute.run
                    error = exc  # type: ignore[assignment]  # any exception
                mem[0] = idle
                ran += 1
                keys = sink.keys
                if keys and all(k in seen for k in keys):  # features seen before show nothing (see _after)
                    keys.clear()
                # A comparison replacement's child may still advance a comparison: value profile judges
                # the first child of each replacement (ValueProfile.wants_run refuses the others).
                if (
                    refusal is None
                    and not fb.new
                    and not keys
                    and (
                        values is None
                        or source.last_pair is None
                        or source.last_pair in tried
                        or values.refuses(self.executed + ran)
                    )
                    and (
                        (value if value is None or value is True or value is False else type(value)) in boring
                        if error is None
                        else type(error) in rejects
                    )
                    and (outlier is None or monotonic() - started < outlier)
                ):
                    i += 1
                    continue
                self.executed += ran  # the general path reads the case count
                ran = 0
                self._eventful(i, data, ops, value, error, refusal, started)
                i += 1
                if self.stopped:
                    break
        finally:
            self.executed += ran
        return i

    def _eventful(self, i: int, data: bytes, ops: list[str], value, error, refusal, started: float) -> None:
        """A hot-loop case that left the fast path: judged on the general path, as :meth:`case` judges."""
        fb, sink, values, last_pair = self.feedback, self.sink, self.values, self.source.last_pair
        if (
            refusal is None
            and not fb.new
            and not sink.keys
            and (values is None or last_pair is None or last_pair in values.tried or values.refuses(self.executed))
        ):
            # Only a new outcome can follow: once it is seen, this return class (or expected
            # exception type) takes the fast path.
            if error is None:
                if execute.outcome_of_return(value) in self.seen_features:
                    self._boring.add(value if value is None or value is True or value is False else type(value))
            elif execute.rejection_outcome(error, self.target) in self.seen_features:
                self._rejects.add(type(error))
        keys, sink.keys = sink.keys, []
        result = execute.judged(self.target, value, error, refusal, keys)
        new = fb.take_new() if fb.new else []
        self._after(jr.GENERATED, i, data, ops, result, time.monotonic() - started, new)

    def _hot_loop(self, stream):
        """The C twin of :meth:`_block` (``_cmutate.HotLoop``) when it can run this campaign, else None.

        It runs byte mode only, with the generator's C twin, and only while the
        tunables it compiled in agree with :mod:`assay.engine.generate`'s and
        :mod:`assay.feedback.valueprofile`'s.
        """
        cmutate, mutate_c = accelerated.cmutate, self.source.mutator.mutate_c
        if (
            cmutate is None
            or mutate_c is None
            or self.plan.strategy is not None
            or self.slow is not None
            or type(stream) is not cmutate.Stream
            or not accelerated.agrees(vars(generate))
            or not accelerated.agrees(vars(valueprofile))
            or jr.HEADER.format != "<BBxxxxxxqqdQdQQ"
        ):
            return None
        guarded = sandbox.installed()
        return cmutate.HotLoop(
            fn=self.target.fn,
            target=self.target,
            source=self.source,
            stream=stream,
            mutate_args=mutate_c.args,
            replace_one=generate.replace_one,
            feedback=self.feedback,
            sink=self.sink,
            boring=self._boring,
            rejects=self._rejects,
            seen=self.seen_features,
            values=self.values,
            journal=self.journal,
            sandbox=sandbox.state() if guarded else None,
            allow=execute.allowance(self.target.allow) if guarded else None,
            strays_returned=strays.returned,
            outlier=self.outlier,
            data_at=jr.DATA_AT,
            clock_every=CLOCK_EVERY,
        )

    def _block_c(self, hot, i: int, end: int, rng_of) -> int:
        """Generated cases ``i`` to ``end`` through the C hot loop (what :meth:`_block` computes).

        The C loop returns at ``end`` and at any case the general path must see: one
        to generate in Python (random bytes while the corpus is empty), one to
        repair, one that ran and showed something or may have.  It also stops at a
        clock boundary before ``end`` once the clock reaches :meth:`_wake_at`; this
        returns that boundary.  What a signal handler raised while the C loop ran
        (it runs them at each boundary) is raised here, the cases before it counted.
        """
        wake_at = self._wake_at()
        while i < end:
            status, i, ran, data, ops, value, error, refusal, started = hot.run(i, end, self.executed, wake_at)
            self.executed += ran
            if status == HOT_DONE:
                break
            if status == HOT_SIGNAL:
                raise error
            if status == HOT_PYTHON:
                i = self._block(i, i + 1, rng_of)
            elif status == HOT_REPAIR:
                data, ops = self._repair(i, data, ops, self.source.repair_guards)  # type: ignore[arg-type]  # HOT_REPAIR: set
                self.case(jr.GENERATED, i, data, ops)
                i += 1
            elif status == HOT_RAN:
                if isinstance(error, KeyboardInterrupt) and refusal is None and interrupts.is_real():
                    raise error
                self._eventful(i, data, ops, value, error, refusal, started)
                i += 1
            if self.stopped:
                break
        return i

    def _tick(self, position: int) -> bool:
        """Send progress when due; True once the budget is spent."""
        now = time.monotonic()
        # The same sums as _wake_at's: the C hot loop stops where these say something is due.
        if self.plan.reload_dir is not None and now >= self._last_reload + RELOAD_EVERY:
            self._last_reload = now
            self._reload(position)
        if now >= self._last_progress + PROGRESS_EVERY:
            self._last_progress = now
            self.send(
                ("stats", self.executed, self.feedback.counts(), len(self.seen_features), len(self.source.corpus))
            )
            self._send_analysis()
            if position % (CLOCK_EVERY * 64) == 0:
                _truncate_capture()
        return self.plan.deadline is not None and now >= self.plan.deadline

    # -- one case ----------------------------------------------------------------------------
    def case(self, phase: int, pos: int, data: bytes, ops: list[str], count: bool = False) -> None:
        """One case on the general path; with ``count``, its Python line events are counted.

        Without ``slow=`` the count is *deferred*: the counting child gets the input
        before the worker runs it and counts on another core while the worker goes on;
        :meth:`_collect_count` takes the answer at the next clock boundary (or before
        the next count), a position fixed by the schedule, so the campaign stays a
        function of its seed.  With ``slow=`` cases are timed, and the count runs first,
        alone.
        """
        j = self.journal
        j.record(data)
        # Once the count saturates the climb is over; and tracing stays within its budget.
        count = count and self.lines_max < LINE_CAP.bit_length() and self.lines_traced <= COUNT_BUDGET * pos
        deferred = count and self.slow is None
        lines = 0
        if deferred:
            self._collect_count()
            started = j.begin(phase, pos, jr.CASE, data)
            self.counting.submit(data, self.target.timeout)
        elif count:
            # Tracing slows the run down: the parent allows it more time before a wedge.
            started = j.begin(phase, pos, jr.CASE, data, COUNT_SLACK * self.target.timeout)
            lines = self._count_lines(data)
        else:
            started = j.begin(phase, pos, jr.CASE, data)
        result = execute.run(self.target, data)
        elapsed = time.monotonic() - started
        j.end()
        self.executed += 1
        feedback = self.feedback
        new = feedback.take_new() if feedback.new else []
        if count:
            self.count_misses += 1
        if deferred:
            self._counted = (phase, pos, data, ops, result, elapsed)
        elif count:
            self.lines_traced += lines
            key = self._cost_class(lines) if result.verdict is None else None
            if key is not None:
                new.append(key)
        self._after(phase, pos, data, ops, result, elapsed, new, count and not deferred)

    def _cost_class(self, lines: int) -> tuple | None:
        """The feature of a new highest line-count class (now seen), or None."""
        bucket = max(lines, COST_FLOOR).bit_length()
        if bucket <= self.lines_max:
            return None
        self.lines_max = bucket
        key = ("f", "cost-lines", str(bucket))
        self.seen_features.add(key)
        return key

    def _collect_count(self) -> None:
        """Take the deferred count of the last counted case (see :meth:`case`), if one is out.

        A new line-count class keeps that case's input as a corpus entry (a quiet
        one, a parent of the growing cases only), unless its coverage already made
        it one.
        """
        if not self.counting.pending:
            return
        lines = self.counting.collect()
        phase, pos, data, ops, result, elapsed = self._counted  # type: ignore[misc]  # pending: set
        self._counted = None
        self.lines_traced += lines
        key = self._cost_class(lines) if result.verdict is None else None
        if key is not None and data not in self._in_corpus:
            self._after(phase, pos, data, ops, result, elapsed, [key], True)
        if key is not None and SUSPECT_LINE_BITS and lines.bit_length() >= SUSPECT_LINE_BITS:
            # The threshold is the count's.  Behind an analysis under way it waits (the
            # newest waits; its class is higher), so whether it is checked never depends
            # on timing.
            suspect = (phase, pos, data, ops, 0.0, elapsed)
            if self._analysis is None:
                self._suspect_slow(*suspect)
            else:
                self._waiting = suspect

    def _countable_lines(self, data: bytes) -> int | None:
        """Line events and loop turns of ``data``, or ``None`` when the count saturated or the run was cut short."""
        lines = self._count_lines(data)
        return lines if 0 < lines < LINE_CAP else None

    def _count_lines(self, data: bytes) -> int:
        """Python line events and loop turns of one run of ``data`` (see :mod:`assay.engine.traced`).

        A child still running after the target's timeout is killed and counts as
        :data:`LINE_CAP`: as costly as counting goes.  The run that follows in this
        process hangs too and becomes the wedge, with its stack.
        """
        self._collect_count()
        return self.counting.count(data, self.target.timeout)

    def _after(
        self,
        phase: int,
        pos: int,
        data: bytes,
        ops: list[str],
        result,
        elapsed: float,
        new: list,
        counted: bool = False,
    ) -> None:
        """Everything after a case ran: cost, features, findings, corpus (``counted``: timed under tracing)."""
        if result.verdict is not None and result.verdict.oracle in self.plan.go_on:
            self.finding(phase, pos, data, ops, result.verdict)
            result = replace(result, verdict=None)  # the search goes on as if the case had passed
        if result.verdict is None:
            if self.slow is not None:
                self._cost(phase, pos, data, ops, elapsed, new)
            elif self.outlier is not None and elapsed >= self.outlier and not counted and self._analysis is None:
                bucket = _bucket(elapsed)
                if bucket > self.confirmed_bucket:  # one confirmation per cost class, as with slow=
                    self._suspect_slow(phase, pos, data, ops, self.outlier, elapsed, bucket)
        for key in result.features:
            if key not in self.seen_features:
                self.seen_features.add(key)
                new.append(key)
        if result.outcome not in self.seen_features:
            self.seen_features.add(result.outcome)
            new.append(result.outcome)
        # A comparison replacement that showed nothing new: did it advance a comparison?
        if (
            not new
            and result.verdict is None
            and self.values is not None
            and self.source.last_pair is not None
            and self.values.wants_run(self.executed, self.source.last_pair)
        ):
            new = self._values_of(phase, pos, data)
        if result.verdict is not None:
            verdict = result.verdict
            if is_timeout_wedge(verdict):  # keyed by the frames its loop holds (assay.engine.wedges)
                # Keying re-runs the hang in a traced child (seconds): the parent holds the wedge
                # meanwhile, so an interrupt during the analysis still keeps it.
                self.send(("analysing", verdict.to_json(), data, ops, pos, self._case_number(phase, pos)))
                with self.budget.spending():
                    verdict = self._held.rekeyed(
                        verdict,
                        lambda: wedges.held_frames(lambda: execute.run(self.target, data), self.target.timeout),
                    )
            wedge = verdict.oracle == "wedge"
            self.source.failed(known=verdict.signature in self.known, wedge=wedge)
            self.finding(phase, pos, data, ops, verdict)
            if new and not wedge and self.crash_parents < CRASH_PARENTS and data not in self._in_corpus:
                self._keep_crashing(phase, pos, data, new)
        elif new:
            self.count_misses = 0
            self._in_corpus.add(data)
            ran = len(data)  # the length that paid, for the length control
            seeded = self._seeded(phase)
            if phase == jr.GENERATED:
                self.source.reward(ops)
                if not seeded:
                    data = self._trimmed(pos, data, new, result.outcome)
            pairs, tokens, guards = self._analyse(phase, pos, data)
            if self.values is not None:
                new += self.values.observe(data, self.plan.cmplog.last_values)
            shares = 0
            if self.plan.aim is not None:
                shares, aimed = self.plan.aim(data, new)
                pairs = [*aimed, *(p for p in pairs if p not in aimed)]
            self.source.add(data, pairs, tokens, guards, quiet=_cost_only(new), seeded=seeded)
            self.source.favour(len(self.source.corpus) - 1, shares)
            self.send(("corpus", data, new, phase == jr.INITIAL, pairs, tokens, guards, self.executed))
            if seeded and phase != jr.INITIAL:  # the parent marks initial inputs itself
                self.send(("seeded",))
            if phase == jr.GENERATED and self.lengths is not None:
                self.lengths.new_coverage(pos, ran)
                self.send(("length", *self.lengths.state()))

    def _seeded(self, phase: int) -> bool:
        """Does the case just run descend from an initial input (see :mod:`assay.engine.trim`)?"""
        if phase == jr.INITIAL:
            return True
        parent = self.source.last_parent
        return parent is not None and self.source.seeded[parent]

    def _trimmed(self, pos: int, data: bytes, new: list, outcome: Hashable) -> bytes:
        """``data`` trimmed to what made it new (:mod:`assay.engine.trim`); ``new`` gains what
        the shorter form reaches that no case had (it runs here once, unpaused)."""
        trimmer = self.trimmer
        if trimmer is None or len(data) <= trim.TRIM_MIN_LEN:
            return data
        runs = min(trim.TRIM_RUNS, trim.TRIM_FREE + int(trim.TRIM_SHARE * pos) - self.trim_runs)
        required = trim.required_keys(new)
        if runs < 2 or required is None:
            return data
        kept, spent = trimmer.trim(data, required, outcome, runs)
        self.trim_runs += spent
        self.send(("trim", self.trim_runs))
        if kept == data or kept in self._in_corpus:
            return data
        # Here too, so the functions it calls have started (its comparison log needs them) and
        # the worker's feedback sees anything it reaches beyond the entry's news.
        self.journal.begin(jr.GENERATED, pos, jr.DERIVED, kept)
        try:
            again = execute.run(self.target, kept)
        finally:
            self.journal.end()
        more = self.feedback.take_new() if self.feedback.new else []
        if again.verdict is not None or again.outcome != outcome:
            return data  # not as in the child (the stack's depth, a cache): the entry as it ran
        for key in again.features:
            if key not in self.seen_features:
                self.seen_features.add(key)
                more.append(key)
        new += more
        self._in_corpus.add(kept)
        return kept

    def _keep_crashing(self, phase: int, pos: int, data: bytes, new: list) -> None:
        """Keep a failing input that showed something new as a parent (crash exploration).

        Its comparison log is analysed like any entry's: the comparisons only inputs
        past the first bug's trigger reach are what the next bug's input needs.  The
        parent keeps it for a restarted worker but never stores it as a corpus entry
        (it is an artifact's input, and would fail on every later campaign's replay).
        """
        self.crash_parents += 1
        self._in_corpus.add(data)
        seeded = self._seeded(phase)
        pairs, tokens, guards = self._analyse(phase, pos, data)
        self.source.add(data, pairs, tokens, guards, crashing=True, seeded=seeded)
        self.send(("crash-parent", data, new, pairs, tokens, guards))
        if seeded:
            self.send(("seeded",))

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
                with open(os.path.join(self.plan.reload_dir, name), "rb") as fh:  # type: ignore[arg-type]  # checked by the caller
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
                self.source.add(data, seeded=True)
                self.send(("corpus", data, new, True, [], [], [], self.executed))  # seeded, as initial inputs are

    def _cost(self, phase: int, pos: int, data: bytes, ops: list[str], elapsed: float, new: list) -> None:
        """Cost feedback: a new highest cost bucket is a feature; past the threshold, confirm."""
        bucket = _bucket(elapsed)
        # No replays for a confirmation while one is under way (its suspect is dropped).
        confirming = elapsed >= self.slow and bucket > self.confirmed_bucket and self._analysis is None  # type: ignore[operator]  # with slow=
        if bucket <= self.cost_max and not confirming:
            return
        self.feedback.pause(True)
        try:
            run = lambda d: self._derived(phase, pos, d)  # noqa: E731
            with self.budget.spending():
                times = [elapsed, *(slow.median_time(run, data, 1) for _ in range(slow.REPLAYS - 1))]
        finally:
            self.feedback.pause(False)
        # The median of three, so neither a first run's warm-up nor a loaded moment sets
        # a cost class the climb must then beat, or spends the confirmation of one.
        median = statistics.median(times)
        bucket = _bucket(median)
        if bucket > self.cost_max:
            self.cost_max = bucket
            new.append(("f", "cost", str(bucket)))
        if median >= self.slow and bucket > self.confirmed_bucket and self._analysis is None:  # type: ignore[operator]  # with slow=
            self._suspect_slow(phase, pos, data, ops, self.slow, median, bucket)  # type: ignore[arg-type]

    def _suspect_slow(
        self,
        phase: int,
        pos: int,
        data: bytes,
        ops: list[str],
        threshold: float,
        elapsed: float,
        bucket: int | None = None,
    ) -> None:
        """Start analysing ``data`` as a slow suspect; :meth:`_advance_analysis` does the work.

        ``bucket``: the cost class of a suspect by its time.  Its one confirmation is spent
        once the analysis' replays find ``data`` slow; a suspect they refute (a loaded
        moment timed, not the input) leaves the class open for the next.  Meanwhile no
        other suspect by time starts (one analysis at a time).
        """
        steps = self._slow_steps(phase, pos, data, ops, threshold, elapsed, bucket)
        self._analysis = (steps, next(steps))  # up to the first run's prediction: no run yet

    def _spend_class(self, bucket: int) -> None:
        self.confirmed_bucket = max(self.confirmed_bucket, bucket)

    def _advance_analysis(self, at: tuple[int, int], finishing: bool = False) -> None:
        """Run the pending analysis' steps while the analysis budget affords them (all, ``finishing``).

        ``at``: the (phase, position) of the last case run.  The steps' runs are journalled
        there, so a worker that dies in one resumes the schedule after it, not after the
        suspect (an earlier case: its cases since would run twice).
        """
        self._at = at
        while self._analysis is not None or self._waiting is not None:
            if self._analysis is None:
                waiting, self._waiting = self._waiting, None
                self._suspect_slow(*waiting)  # type: ignore[misc]  # checked by the loop
            steps, predicted = self._analysis  # type: ignore[misc]  # just started, if it was not
            if not finishing and not self.budget.affords(predicted):
                return
            if finishing and self.plan.deadline is not None and time.monotonic() >= self.plan.deadline:
                self._analysis = None
                self.analysis_unfinished += 1
                steps.close()
                return
            self.feedback.pause(True)
            try:
                with self.budget.spending():
                    self._analysis = (steps, steps.send(None))
            except StopIteration:
                self._analysis = None
            finally:
                self.feedback.pause(False)

    def _finish_analysis(self, generated: int) -> None:
        """At the end of the schedule: finish the pending analysis (within the deadline, if any)."""
        before = self.budget.spent
        self._advance_analysis((jr.GENERATED, generated - 1), finishing=True)
        self.analysis_after += self.budget.spent - before

    def _send_analysis(self) -> None:
        b = self.budget
        self.send(("analysis", b.spent, b.loop, self.analysis_after, self.analysis_unfinished))

    def _slow_steps(
        self,
        phase: int,
        pos: int,
        data: bytes,
        ops: list[str],
        threshold: float,
        elapsed: float,
        bucket: int | None = None,
    ) -> Generator[float, None, None]:
        """Report ``data`` as a ``slow`` finding if its cost is confirmed super-linear, one run a step.

        A confirmed input is grown until one run crosses the timeout (:func:`slow.cross_steps`);
        the artifact keeps that grown input when it did.  Each step yields the predicted seconds of its next run (see :func:`slow.confirm_steps`).
        """
        run = lambda d: self._derived(*self._at, d)  # noqa: E731 - journalled (see _advance_analysis)
        spend = None if bucket is None else (lambda median: self._spend_class(bucket))
        evidence = yield from slow.confirm_steps(run, data, threshold, self._countable_lines, elapsed, spend)
        if evidence is None:
            return
        timeout = self.target.timeout
        longer = lambda d: self._derived(*self._at, d, slow.CROSS_LIMIT * timeout)  # noqa: E731
        evidence.crossed = yield from slow.cross_steps(longer, evidence, timeout)
        frames = yield from self._slow_frames(run, data, evidence)
        verdict = slow.slow_verdict(frames, evidence, threshold)
        sig = verdict.signature
        if sig in self.known:
            self.send(("again", sig))
            return
        self.known.add(sig)
        determinism = {"replays": slow.REPLAYS, "reproduced": slow.REPLAYS, "same_signature": True}
        kept = data if evidence.crossed is None else evidence.crossed[0]  # the artifact: a hang to replay
        self.send(
            ("finding", sig, verdict.to_json(), data, kept, ops, pos, determinism, 0, self._case_number(phase, pos))
        )

    def _slow_frames(self, run, data: bytes, evidence: slow.SlowEvidence) -> Generator[float, None, list]:
        """The frames that dominate a slow run (:func:`slow.dominant_frames`), one run a step.

        Stacks at fixed fractions of its line events (the same picture on every machine;
        the count is at most twice the run's line events, so the run gets there); code
        that runs no Python lines while slow (a regex) is sampled in time instead.
        """
        traced_run = slow.TRACE_SLOWDOWN * evidence.median
        yield traced_run
        lines = self._count_lines(data)
        stacks = []
        if lines >= slow.MIN_COUNTABLE:
            for point in slow.KEY_POINTS:
                yield traced_run
                stacks.append(
                    traced.stack_at_line(
                        lambda: execute.run(self.target, data), int(lines * point), self.target.timeout
                    )
                )
        if not any(stacks):
            stacks = []
            for point in slow.KEY_POINTS:
                yield evidence.median
                stacks.append(slow.sample_stack(run, data, evidence.median * point))
        return slow.dominant_frames(stacks)

    def _analyse(self, phase: int, pos: int, data: bytes) -> tuple[list, list, list]:
        """Comparison log of a new corpus entry: replacement pairs, tokens and guards."""
        logged = self._cmplog_run(phase, pos, data)
        if logged is None:
            return [], [], []
        records, guard_records = logged
        return (*input_to_state(data, records), guards_of(data, guard_records))

    def _values_of(self, phase: int, pos: int, data: bytes) -> list:
        """Value-profile features of one instrumented run (see :mod:`assay.feedback.valueprofile`)."""
        if self._cmplog_run(phase, pos, data, keep="values") is None:
            return []
        return self.values.observe(data, self.plan.cmplog.last_values)  # type: ignore[union-attr]  # value profile: on

    def _repair(self, pos: int, data: bytes, ops: list[str], guards: list) -> tuple[bytes, list[str]]:
        """Re-establish the parent's guards (checksums, lengths) that ``data`` broke."""
        logged = self._cmplog_run(jr.GENERATED, pos, data, keep="guards", sites=[g[0] for g in guards])
        fixed = None if logged is None else repair(data, logged[1], guards)
        if fixed is None:
            return data, ops
        return fixed[: self.target.max_len], [*ops, "repair"]

    def _cmplog_run(self, phase: int, pos: int, data: bytes, keep: str = "all", sites: list[int] | None = None):
        """One journalled run with the instrumented twins: (records, guard records); see ``CmpLog.record``
        (``sites``: a repair's guard sites, whose functions alone get twins)."""
        cmplog = self.plan.cmplog
        if cmplog is None or not cmplog.swaps:
            return None
        # The input of an analysis or a value-profile run has just run unrecorded, so every
        # function it calls has started; a repair's input has not (it is a new child).
        fb = self.feedback
        ran = fb.started if keep != "guards" and isinstance(fb, SysmonFeedback) else None
        fb.pause(True)
        self.journal.begin(phase, pos, jr.DERIVED, data)
        try:
            return cmplog.record(lambda: execute.run(self.target, data), keep, ran, sites)
        finally:
            self.journal.end()
            fb.pause(False)

    def finding(self, phase: int, pos: int, data: bytes, ops: list[str], verdict) -> None:
        sig = verdict.signature
        if sig in self.known:
            self.send(("again", sig))
            return
        self.known.add(sig)
        self.send(("raw", sig, verdict.to_json(), data, ops, pos, self._case_number(phase, pos)))
        self.feedback.pause(True)
        # A RecursionError depends on the frames left to the target: every rerun (and the
        # artifact's replays) gets the headroom of the hit, however deep the rerun's caller.
        room = execute.recorded_room(verdict)
        free_until = time.monotonic() + SHRINK_FREE_SECONDS
        try:
            with self.budget.spending():
                same = 0
                slowest = 0.0
                for _ in range(DETERMINISM_REPLAYS):
                    t0 = time.perf_counter()
                    again = self._derived(phase, pos, data, room=room)
                    slowest = max(slowest, time.perf_counter() - t0)
                    same += wedges.reproduces(again, verdict)
                minimized, shrink_cases = data, 0
                if same == DETERMINISM_REPLAYS and verdict.oracle != "wedge":
                    # A candidate far slower than the failure itself is not worth waiting
                    # for (parsers with quadratic corners would make shrinking take hours).
                    limit = min(self.target.timeout, max(SHRINK_MIN_LIMIT, SHRINK_SLOWDOWN * slowest))

                    stop = {"timeouts": 0, "deadline": time.monotonic() + SHRINK_MAX_SECONDS}

                    def still_fails(candidate: bytes) -> bool:
                        now = time.monotonic()
                        if (
                            stop["timeouts"] >= SHRINK_MAX_TIMEOUTS
                            or now > stop["deadline"]
                            or (now > free_until and not self.budget.affords(0.0))
                        ):
                            return False  # keep the smallest input found so far
                        v = self._derived(phase, pos, candidate, limit, room=room)
                        if v is not None and v.oracle == "wedge":
                            stop["timeouts"] += 1
                        return v is not None and v.signature == sig

                    result = shrink(data, still_fails, self.plan.shrink_cases, self.source.structural_candidates)
                    minimized, shrink_cases = result.data, result.cases
                    final = self._derived(phase, pos, minimized, fresh=True, room=room)
                    if final is not None and final.signature == sig:
                        verdict = final  # the traceback of the input we keep
        finally:
            self.feedback.pause(False)
        determinism = {
            "replays": DETERMINISM_REPLAYS,
            "reproduced": same,
            "same_signature": same == DETERMINISM_REPLAYS,
        }
        self.send(
            (
                "finding",
                sig,
                verdict.to_json(),
                data,
                minimized,
                ops,
                pos,
                determinism,
                shrink_cases,
                self._case_number(phase, pos),
            )
        )
        if verdict.oracle in self.plan.stop_on:
            self.stopped = True

    def _case_number(self, phase: int, pos: int) -> int:
        """1-based place of a case in the schedule, counted as the report's ``cases`` (initial inputs first)."""
        return pos + 1 if phase == jr.INITIAL else len(self.plan.initial) + pos + 1

    def _derived(
        self, phase: int, pos: int, data: bytes, limit: float = 0.0, fresh: bool = False, room: int | None = None
    ):
        self.journal.begin(phase, pos, jr.DERIVED, data, limit)
        try:
            return execute.run(self.target, data, fresh=fresh, room=room).verdict
        finally:
            self.journal.end()


def _cost_only(new: list) -> bool:
    """Is an entry with these news kept only for its cost (a parent of the growing cases only)?

    A new line-count class, plus at most value-profile values its long run compared
    along the way: the long inputs of the cost climb meet new operand values as a
    side effect, and as ordinary parents they would make every child that long.
    """
    return any(k[:2] == ("f", "cost-lines") for k in new) and all(
        k[:2] == ("f", "cost-lines") or k[0] == "vp" for k in new
    )


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

    def on_usr1(signum, frame):
        # Never a case the parent did not mean, nor assay's own code once the target has returned.
        if journal.interrupt_wanted() and execute.in_target_call(frame):
            raise execute.WedgeTimeout()

    signal.signal(signal.SIGUSR1, on_usr1)


execute.mark_target_call(Worker._block, local="fn")
execute.mark_target_call(Worker._block_c, attribute="run")
