"""The parent side of one target's campaign: fork, watch, restart, record.

Design
------
The parent is warm (targets imported) and forks a worker that runs the schedule.
It never executes target code itself.  It listens on the worker's pipe and keeps
the authoritative state: the corpus, every coverage and feature key seen, the
signatures found, where the schedule stands.  It polls the worker's journal to
enforce the per-input timeout: first ``SIGUSR1`` (the worker raises a
``WedgeTimeout`` inside the target), then, if the input ignores it, a stack dump
and ``SIGKILL``.

When a worker dies (signal, ``os._exit``, kill for a hang, out of memory), the
parent reads the exact active input from the journal, judges the death, replays
the input in fresh children to learn whether it is deterministic, writes the
artifact, and forks a new worker that resumes at the next case with the same
corpus and seen keys: nothing is lost and the schedule continues.
"""

from __future__ import annotations

import base64
import os
import signal
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from assay.core import interrupts, notices
from assay.core.errors import InternalError
from assay.core.target import Target
from assay.core.timeline import Timeline
from assay.core.verdict import Verdict, is_timeout_wedge
from assay.engine import execute, isolate, journal as jr, procs, sandbox, strays, wedges
from assay.engine.budget import ANALYSIS_SHARE
from assay.engine.worker import Worker, WorkerPlan, install_soft_timeout
from assay.feedback import edgesplit
from assay.feedback.cmplog import CmpLog
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from assay.findings.identity import identify
from assay.store.artifacts import Finding, build_metadata, record_seen, write_artifact
from assay.store.corpus import Corpus, digest

#: Seconds between the parent's looks at the worker's journal.
POLL = 0.05
#: Replays (in fresh children) that decide whether a worker death is deterministic.
DEATH_REPLAYS = 2
#: Most worker-killing inputs remembered to steer restarted workers away from them.
MAX_FATAL_INPUTS = 64
#: Most failed writes listed in a target's outcome (a full disk fails every one).
MAX_WRITE_ERRORS = 20
#: Worker deaths outside any input tolerated before the campaign gives up.
MAX_IDLE_DEATHS = 3


class WorkerError(InternalError):
    """A campaign worker failed in assay's own code (not the target's)."""


@dataclass
class Progress:
    target: str
    cases: int
    edges: int
    lines: int
    features: int
    corpus: int
    findings: int
    elapsed: float
    time_left: float | None
    planned: int | None = None  # cases the schedule will run when it has a case cap
    done: bool = False  # the target's final numbers (sent once, when its campaign ends)


@dataclass
class FindingRecord:
    signature: str
    oracle: str
    artifact: str
    new: bool
    occurrences: int = 1
    bug: str = ""  # assay.findings.identity identity id: findings with one raise site and exception type share it
    harness: bool = False  # raised in the harness file, outside the target's sources
    first_seen_seconds: float | None = None  # since the campaign (this target) started
    first_seen_case: int | None = None  # 1-based place in the schedule, counted as the report's cases
    # When the artifact could not be written (a full disk): why, and what it would have held, so the
    # report and the summary still carry the input and the exception (the only copy left).
    save_error: str = ""
    unsaved_input: bytes | None = None
    unsaved_metadata: dict[str, Any] | None = None


@dataclass
class TargetOutcome:
    name: str
    seed: int
    sources: list[str]
    strategy: str | None
    initial_manifest: list[str]
    corpus_additions: list[str] = field(default_factory=list)
    schedule_digest: str = ""
    schedule_count: int = 0
    cases: int = 0
    elapsed: float = 0.0
    edges: int = 0
    lines: int = 0
    features: int = 0
    corpus_size: int = 0
    findings: list[FindingRecord] = field(default_factory=list)
    worker_restarts: int = 0
    status: str = "clean"
    jobs: int = 1
    write_errors: list[str] = field(default_factory=list)  # what could not be saved (a full disk), and why
    write_errors_dropped: int = 0  # failed writes past MAX_WRITE_ERRORS, counted but not listed
    timeline: list = field(default_factory=list)  # [cases, seconds, edges, corpus] samples (assay.core.timeline)
    # Work done for findings (assay.engine.budget): its seconds, of them those spent after the
    # schedule ended (finishing it), the loop's seconds, and suspects left unanalysed.
    analysis_seconds: float = 0.0
    analysis_after: float = 0.0
    loop_seconds: float = 0.0
    analysis_unfinished: int = 0
    analysis_bound: float | None = None  # the share of the loop's time it may take (None: unbounded)

    @property
    def execs_per_sec(self) -> float:
        return self.cases / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def analysis_share(self) -> float:
        """Analysis seconds over all seconds the workers spent (fuzzing plus analysing)."""
        total = self.analysis_seconds + self.loop_seconds
        return self.analysis_seconds / total if total > 0 else 0.0


class Supervisor:
    """Runs one target's campaign in crash-isolated workers (see module docstring)."""

    def __init__(
        self,
        target: Target,
        *,
        tseed: int,
        master_seed: int,
        initial: list[bytes],
        initial_manifest: list[str],
        corpus: Corpus | None,
        artifact_root: str,
        sources: list[str],
        max_cases: int | None,
        budget: float | None,
        replay_only: bool,
        shrink_cases: int,
        strategy: Any,
        dictionary: list[bytes],
        progress: Callable[[Progress], None] | None = None,
        cmplog: bool = True,
        slow: float | None = None,
        reload_dir: str | None = None,
        analysis_share: float | None = ANALYSIS_SHARE,
        stop_on: frozenset[str] = frozenset(),
        go_on: frozenset[str] = frozenset(),
        aim: Callable[[bytes, list[Hashable]], tuple[int, list[tuple[bytes, bytes]]]] | None = None,
        before_restart: Callable[[], None] | None = None,
    ) -> None:
        self.target = target
        #: Called in this process before each worker that replaces one (never before the first): a
        #: campaign whose target talks to processes of its own makes them ready for the new worker.
        self.before_restart = before_restart
        self.master_seed = master_seed
        self.corpus_store = corpus
        self.artifact_root = artifact_root
        self.sources = sources
        self.progress = progress
        self.budget = budget
        self.outcome = TargetOutcome(
            name=target.name,
            seed=tseed,
            sources=sources,
            strategy=strategy and f"{strategy.name}@{strategy.version}",
            initial_manifest=initial_manifest,
            analysis_bound=analysis_share,
        )
        self.plan = WorkerPlan(
            target=target,
            tseed=tseed,
            initial=initial,
            initial_pos=0,
            generated_pos=0,
            max_cases=max_cases,
            deadline=None,
            replay_only=replay_only,
            corpus=[],
            seen=[],
            known_signatures=set(),
            chain=bytes(32),
            shrink_cases=shrink_cases,
            strategy=strategy,
            dictionary=dictionary,
            slow=target.slow if target.slow is not None else slow,
            reload_dir=reload_dir,
            analysis_share=analysis_share,
            stop_on=stop_on,
            go_on=go_on,
            aim=aim,
        )
        #: A finding of an oracle in ``stop_on`` was reported (raw or shrunk): no worker is started after this one.
        self.stopped = False
        #: The workers' journal while :meth:`run` runs (a worker's target may read which input is running).
        self.journal: jr.Journal | None = None
        in_scope = Scope(sources).eager().contains  # the per-function work ahead of the run
        if cmplog:
            log = CmpLog(in_scope)
            log.attach()  # in the parent, once: every worker inherits the compiled twins
            self.plan.cmplog = log
        edgesplit.prepare(in_scope)  # in the parent too: workers inherit the split code
        self.pending: dict[str, tuple] = {}
        #: A wedge the worker is keying (verdict, input, ops, position, case), until it reports it.
        self.analysing: tuple | None = None
        self.first_seen: dict[str, tuple[float, int | None]] = {}  # signature -> (seconds, case number)
        self.records: dict[str, FindingRecord] = {}
        self.held = wedges.HeldByStack()
        self.started = 0.0
        self.last_stats: tuple = (0, {"edges": 0, "lines": 0}, 0, 0)
        self.idle_deaths = 0
        self.timeline = Timeline()

    # -- the loop over worker lifetimes --------------------------------------------------------
    def run(self) -> TargetOutcome:
        self.started = time.monotonic()
        if self.budget is not None:
            self.plan.deadline = self.started + self.budget
        journal = self.journal = jr.Journal(self.target.max_len)
        interrupted = False
        self.timeline.add(0, 0.0, 0, 0)
        try:
            while True:
                try:
                    finished = self._one_worker(journal)
                except KeyboardInterrupt:
                    interrupted = True
                    self._resume_after(journal)
                    break
                if finished or self.stopped:
                    break
                self.outcome.worker_restarts += 1
                if self.plan.deadline is not None and time.monotonic() >= self.plan.deadline:
                    break
                if (
                    self.plan.max_cases is not None
                    and self.plan.generated_pos >= self.plan.max_cases
                    and (self.plan.initial_pos >= len(self.plan.initial))
                ):
                    break
        finally:
            journal.close()
            for sig in list(self.pending):
                self._flush_pending(sig)
            self._note_seen()
        o = self.outcome
        o.elapsed = time.monotonic() - self.started
        o.schedule_digest = jr.digest(self.plan.chain, self.plan.pending).hex()
        o.schedule_count = self.plan.initial_pos + self.plan.generated_pos
        o.cases = o.schedule_count
        o.corpus_size = self._corpus_size()
        o.findings = list(self.records.values())
        o.analysis_seconds, o.loop_seconds = self.plan.analysis_spent, self.plan.analysis_loop
        o.analysis_after, o.analysis_unfinished = self.plan.analysis_after, self.plan.analysis_unfinished
        self.timeline.add(o.cases, o.elapsed, o.edges, o.corpus_size)
        o.timeline = self.timeline.as_json()
        if self.progress is not None:
            self.progress(
                Progress(
                    o.name,
                    o.cases,
                    o.edges,
                    o.lines,
                    o.features,
                    o.corpus_size,
                    len(o.findings),
                    o.elapsed,
                    None,
                    o.cases,
                    done=True,
                )
            )
        o.status = "interrupted" if interrupted else ("findings" if o.findings else "clean")
        return o

    def _one_worker(self, journal: jr.Journal) -> bool:
        """Fork a worker and watch it; True if it finished the schedule.

        The worker's death is noticed by its pid, not by the pipe's end (a process
        the target forked may hold the pipe open); its process group ends with it.
        """
        if self.before_restart is not None and self.outcome.worker_restarts:
            self.before_restart()
        capture = isolate.new_capture()
        workdir = isolate.new_workdir()
        journal.reset()
        pid, reader = isolate.fork_with_pipe(lambda writer: self._child(journal, writer, capture, workdir))
        done = False
        killed = False
        reaped = False
        signalled_for: tuple | None = None
        last_seen: tuple | None = None
        try:
            try:
                while True:
                    interrupts.raise_if_requested()  # a signal whose raise an at-fork hook swallowed
                    if reader.poll(POLL):
                        try:
                            msg = reader.recv()
                        except (EOFError, OSError):
                            msg = None
                        if msg is not None:
                            done = self._dispatch(msg) or done
                            self._report_progress()  # a busy pipe must not starve the progress display
                            continue
                        procs.wait_exited(
                            pid, POLL
                        )  # end of file: the worker is exiting (or closed the pipe); its pid decides
                    if procs.exited(pid):
                        break
                    self._check_strays(journal)
                    state, position, started, limit = journal.state()
                    now = time.monotonic()
                    current = (position, started)
                    # Act only on a case seen running on two polls in a row: one read may
                    # race with the worker rewriting the header.
                    if state == jr.RUNNING and current == last_seen:
                        over = now - started - (limit or self.target.timeout)
                        if over > isolate.KILL_GRACE:
                            isolate.kill_with_stack(pid)
                            killed = True
                        elif over > 0 and signalled_for != current:
                            signalled_for = current
                            journal.request_interrupt(position, started)
                            _signal(pid, signal.SIGUSR1)
                    last_seen = current if state == jr.RUNNING else None
                    if self.plan.deadline is not None and now > self.plan.deadline + max(5.0, 2 * self.target.timeout):
                        isolate.kill_with_stack(pid)  # a worker that ignores its own deadline
                        killed = True
                    self._report_progress()
            except KeyboardInterrupt:
                if not reaped and self._over_time(journal):
                    # A wedge in progress: keep it (the stack, then the finding) before leaving.
                    isolate.kill_with_stack(pid)
                    status = procs.reap_group(pid, kill=True)
                    reaped = True
                    self._interrupted_wedge(journal, status, isolate.read_tail(capture))
                self._keep_analysing()
                raise
            while reader.poll(0):  # drain what the worker sent before dying
                try:
                    msg = reader.recv()
                except (EOFError, OSError):
                    break
                done = self._dispatch(msg) or done
            status = procs.reap_group(pid, kill=False)
            reaped = True
            self._check_strays(journal)
            if not done:
                self._on_death(journal, status, killed, isolate.read_tail(capture))
        finally:
            if not reaped:
                procs.reap_group(pid)
            reader.close()
            isolate.remove_workdir(workdir)
            try:
                os.unlink(capture)
            except FileNotFoundError:
                pass
        return done

    def _dispatch(self, msg: tuple) -> bool:
        """Handle one message from the worker; True if it says the schedule is done."""
        if isinstance(msg, isolate.ChildFailure):
            raise WorkerError(
                f"the worker for target {self.target.name!r} failed in assay's own code:\n{msg.traceback}"
            )
        if msg[0] == "done":
            self._on_done(msg)
            return True
        self._on_message(msg)
        return False

    def _check_strays(self, journal: jr.Journal) -> None:
        """Record a process the target forked that came back into assay's loop (it is gone now)."""
        for position, data, key in journal.take_strays():
            verdict = strays.stray_verdict(key)
            if not self._first_sighting(verdict.signature, None):
                continue
            self._record(
                Finding(
                    target=self.target.name,
                    verdict=verdict,
                    input=data,
                    original=data,
                    determinism={"replays": 0, "reproduced": 0, "same_signature": None},
                    case_index=position,
                )
            )

    def _child(self, journal: jr.Journal, writer, capture: str, workdir: str) -> None:
        isolate.child_setup(capture, self.target.rss_limit_mb)
        sandbox.enter(workdir, execute.allowance(self.target.allow))
        strays.arm(journal)
        install_soft_timeout(journal)
        feedback = SysmonFeedback(Scope(self.sources))
        feedback.start()
        feedback.mark_seen(self.plan.seen)
        worker = Worker(self.plan, feedback, journal, writer.send)
        try:
            initial_done, generated = worker.run()
        finally:
            feedback.stop()
        writer.send(("done", journal.chain_state(), initial_done, generated, worker.executed, feedback.counts()))
        writer.close()

    # -- messages ---------------------------------------------------------------------------------
    def _on_message(self, msg: tuple) -> None:
        kind = msg[0]
        if kind == "corpus":
            _, data, new, from_initial, pairs, tokens, guards, executed = msg
            self.last_stats = (executed, *self.last_stats[1:])  # the timeline places the entry at its case
            if from_initial:  # an initial input or an import: its descendants are never trimmed (assay.engine.trim)
                self.plan.seeded.add(len(self.plan.corpus))
            self.plan.corpus.append(data)
            self.plan.corpus_meta.append((pairs, tokens, guards))
            self.plan.seen.extend(new)
            self._count_keys(new)
            self._sample(time.monotonic())  # coverage moved: the timeline shows when
            if not from_initial and self.corpus_store is not None and not self.plan.replay_only:
                try:
                    self.outcome.corpus_additions.append(self.corpus_store.add(data))
                except OSError as exc:  # a full disk: keep fuzzing, keep what was written, say what was not
                    self._write_failed(f"corpus entry {digest(data)}", exc)
            elif not from_initial:
                self.outcome.corpus_additions.append(digest(data))
        elif kind == "crash-parent":  # kept for a restarted worker, never stored (see Worker._keep_crashing)
            _, data, new, pairs, tokens, guards = msg
            self.plan.crash_parents.append(len(self.plan.corpus))
            self.plan.corpus.append(data)
            self.plan.corpus_meta.append((pairs, tokens, guards))
            self.plan.seen.extend(new)
            self._count_keys(new)
        elif kind == "stats":
            self.last_stats = msg[1:]
        elif kind == "analysis":  # its cost so far, so a restarted worker goes on within the same bound
            p = self.plan
            _, p.analysis_spent, p.analysis_loop, p.analysis_after, p.analysis_unfinished = msg
        elif kind == "seeded":  # the entry just kept descends from an initial input (assay.engine.trim)
            self.plan.seeded.add(len(self.plan.corpus) - 1)
        elif kind == "trim":  # recorded runs spent trimming entries, so a restarted worker stays within the bound
            self.plan.trim_runs = msg[1]
        elif kind == "length":  # byte mode's length limit, so a restarted worker goes on the same way
            _, self.plan.len_limit, self.plan.len_mark, self.plan.len_more = msg
        elif kind == "analysing":
            self.analysing = msg[1:]
        elif kind == "raw":
            _, sig, verdict, data, ops, pos, case = msg
            self.analysing = None
            self.stopped = self.stopped or verdict["oracle"] in self.plan.stop_on
            self.plan.known_signatures.add(sig)
            self.pending[sig] = (verdict, data, ops, pos)
            self._seen_now(sig, case)
        elif kind == "finding":
            _, sig, verdict, original, minimized, ops, pos, determinism, shrink_cases, case = msg
            self.pending.pop(sig, None)
            self._seen_now(sig, case)
            self._record(
                Finding(
                    target=self.target.name,
                    verdict=Verdict.from_json(verdict),
                    input=minimized,
                    original=original,
                    determinism=determinism,
                    mutation_operators=ops,
                    case_index=pos,
                    extra={"shrink_cases": shrink_cases},
                )
            )
        elif kind == "again":
            self.analysing = None
            rec = self.records.get(msg[1])
            if rec is not None:
                rec.occurrences += 1

    def _on_done(self, msg: tuple) -> None:
        _, (self.plan.chain, self.plan.pending), initial_done, generated, executed, counts = msg
        self.plan.initial_pos = initial_done
        self.plan.generated_pos = generated
        self.last_stats = (0, *self.last_stats[1:])  # counted in the positions now

    def _count_keys(self, keys: list[Hashable]) -> None:
        for key in keys:
            if isinstance(key[0], int):  # type: ignore[index]  # coverage keys are tuples
                if len(key) == 3:  # type: ignore[arg-type]
                    self.outcome.edges += 1
                else:
                    self.outcome.lines += 1
            else:
                self.outcome.features += 1

    # -- a worker that died -----------------------------------------------------------------------
    def _on_death(self, journal: jr.Journal, status: int, killed: bool, output: str) -> None:
        state, phase, position, sub, started, data = journal.read()
        if started == 0.0:
            raise WorkerError(
                f"the worker for target {self.target.name!r} died before running any input:\n{output[-4000:]}"
            )
        self._resume_after(journal)
        if state != jr.RUNNING:
            # Died between inputs (the OOM killer, say): resume; but a worker that keeps
            # dying outside any input is assay's fault, not the target's.
            self.idle_deaths += 1
            if self.idle_deaths > MAX_IDLE_DEATHS:
                raise WorkerError(
                    f"the worker for target {self.target.name!r} keeps dying between inputs (status {status}):\n{output[-4000:]}"
                )
            return
        if phase == jr.GENERATED and len(self.plan.fatal_inputs) < MAX_FATAL_INPUTS:
            self.plan.fatal_inputs.append(data)
        verdict = isolate.death_verdict(status, output, killed_for_timeout=killed, timeout=self.target.timeout)
        if is_timeout_wedge(verdict):  # keyed as the worker keys a soft one (assay.engine.wedges)
            verdict = self.held.rekeyed(
                verdict, lambda: wedges.held_frames_isolated(self.target, lambda: execute.run(self.target, data))
            )
        sig = verdict.signature
        if not self._first_sighting(
            sig, position + 1 if phase == jr.INITIAL else len(self.plan.initial) + position + 1
        ):
            return
        same = 0
        for _ in range(DEATH_REPLAYS):
            same += wedges.reproduces(isolate.run_isolated(self.target, data).verdict, verdict)
        self._record(
            Finding(
                target=self.target.name,
                verdict=verdict,
                input=data,
                original=data,
                determinism={"replays": DEATH_REPLAYS, "reproduced": same, "same_signature": same == DEATH_REPLAYS},
                case_index=position,
                diagnostic=output,
                extra={"infrastructure": True, "during": "shrink" if sub == jr.DERIVED else "case"},
            )
        )

    def _first_sighting(self, sig: str, case: int | None) -> bool:
        """Whether ``sig`` is new to this campaign: if so, note when it was first seen; if not, count one more."""
        if sig in self.plan.known_signatures:
            rec = self.records.get(sig)
            if rec is not None:
                rec.occurrences += 1
            return False
        self.plan.known_signatures.add(sig)
        self._seen_now(sig, case)
        return True

    def _over_time(self, journal: jr.Journal) -> bool:
        """Whether the worker's current case has run past its timeout (a wedge in progress)."""
        state, position, started, limit = journal.state()
        return state == jr.RUNNING and started > 0.0 and time.monotonic() - started > (limit or self.target.timeout)

    def _interrupted_wedge(self, journal: jr.Journal, status: int, output: str) -> None:
        """Record the wedge a SIGINT or SIGTERM cut short (its worker killed with its stack).

        No replay and no traced key (an interrupted run leaves at once): the finding
        keeps the stack at the kill and says it was not replayed.
        """
        _state, phase, position, sub, _started, data = journal.read()
        self._resume_after(journal)
        verdict = isolate.death_verdict(status, output, killed_for_timeout=True, timeout=self.target.timeout)
        sig = verdict.signature
        if not self._first_sighting(
            sig, position + 1 if phase == jr.INITIAL else len(self.plan.initial) + position + 1
        ):
            return
        self._record(
            Finding(
                target=self.target.name,
                verdict=verdict,
                input=data,
                original=data,
                determinism={"replays": 0, "reproduced": 0, "same_signature": False},
                case_index=position,
                diagnostic=output,
                extra={
                    "infrastructure": True,
                    "during": "shrink" if sub == jr.DERIVED else "case",
                    "interrupted": True,
                },
            )
        )

    def _resume_after(self, journal: jr.Journal) -> None:
        """Move the schedule past the case the journal names (its worker is gone)."""
        _state, phase, position, _sub, started, _data = journal.read()
        if started == 0.0:
            return
        self.plan.chain, self.plan.pending = journal.chain_state()
        self.last_stats = (0, *self.last_stats[1:])  # the positions count the dead worker's cases now
        if phase == jr.INITIAL:
            self.plan.initial_pos = position + 1
        else:
            self.plan.initial_pos = len(self.plan.initial)
            self.plan.generated_pos = position + 1

    def _keep_analysing(self) -> None:
        """A wedge the worker was still keying when the run was interrupted: kept unkeyed, as a raw finding."""
        if self.analysing is None:
            return
        verdict, data, ops, pos, case = self.analysing
        self.analysing = None
        sig = Verdict.from_json(verdict).signature
        if self._first_sighting(sig, case):
            self.pending[sig] = (verdict, data, ops, pos)

    def _flush_pending(self, sig: str) -> None:
        verdict, data, ops, pos = self.pending.pop(sig)
        self._record(
            Finding(
                target=self.target.name,
                verdict=Verdict.from_json(verdict),
                input=data,
                original=data,
                determinism={"replays": 0, "reproduced": 0, "same_signature": None},
                mutation_operators=ops,
                case_index=pos,
                extra={"shrink_interrupted": True},
            )
        )

    def _seen_now(self, sig: str, case: int | None) -> None:
        """Remember when ``sig`` was first hit (the first report wins: raw before its shrunk finding)."""
        self.first_seen.setdefault(sig, (time.monotonic() - self.started, case))

    def _record(self, finding: Finding) -> None:
        meta = build_metadata(
            finding, campaign_seed=self.master_seed, target_seed=self.plan.tseed, sources=self.sources
        )
        meta["harness"] = self.target.defined_in or None
        seconds, case = self.first_seen.get(finding.signature, (time.monotonic() - self.started, None))
        bug = identify(finding.verdict, self.sources, meta["harness"])
        meta.update(
            first_seen=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            first_seen_seconds=round(seconds, 3),
            first_seen_case=case,
            bug=bug.id,
            harness_finding=bug.harness,
        )
        if self.outcome.strategy:
            meta["strategy"] = self.outcome.strategy
        save_error = ""
        try:
            path, new = write_artifact(self.artifact_root, finding, meta)
        except OSError as exc:
            self._write_failed(f"artifact of {finding.signature}", exc)
            path, new = "", True  # type: ignore[assignment]  # no artifact: str(path) is ""
            save_error = str(exc.strerror or exc)
            notices.notify(
                f"could not save the finding {finding.signature} of target {self.target.name} under "
                f"{self.artifact_root} ({save_error}); it is kept in the report, its input (base64): "
                f"{base64.b64encode(finding.input).decode('ascii')}"
            )
        self.records[finding.signature] = FindingRecord(
            finding.signature,
            finding.verdict.oracle,
            str(path),
            new,
            bug=bug.id,
            harness=bug.harness,
            first_seen_seconds=round(seconds, 3),
            first_seen_case=case,
            save_error=save_error,
            unsaved_input=finding.input if save_error else None,
            unsaved_metadata=meta if save_error else None,
        )

    def _note_seen(self) -> None:
        """Update each written artifact's ``seen.json`` (last seen, runs, occurrences)."""
        for rec in self.records.values():
            if rec.artifact:
                try:
                    record_seen(rec.artifact, rec.occurrences)
                except OSError as exc:
                    self._write_failed(f"seen.json of {rec.signature}", exc)

    def _write_failed(self, what: str, exc: OSError) -> None:
        """Note a write that failed (the campaign goes on; the report lists it)."""
        if len(self.outcome.write_errors) < MAX_WRITE_ERRORS:
            self.outcome.write_errors.append(f"{what}: {exc.strerror or exc}")
        else:
            self.outcome.write_errors_dropped += 1

    def _corpus_size(self) -> int:
        """Corpus entries, without the crash parents (kept in memory only, see Worker._keep_crashing)."""
        return len(self.plan.corpus) - len(self.plan.crash_parents)

    def _sample(self, now: float) -> int:
        """Add the current state to the timeline; the cases run so far."""
        cases = self.plan.initial_pos + self.plan.generated_pos + self.last_stats[0]
        self.timeline.add(cases, now - self.started, self.outcome.edges, self._corpus_size())
        return cases

    def _report_progress(self) -> None:
        now = time.monotonic()
        cases = self._sample(now)
        if self.progress is None:
            return
        left = None if self.plan.deadline is None else max(0.0, self.plan.deadline - now)
        planned = None if self.plan.max_cases is None else len(self.plan.initial) + self.plan.max_cases
        self.progress(
            Progress(
                self.target.name,
                cases,
                self.outcome.edges,
                self.outcome.lines,
                self.outcome.features,
                self._corpus_size(),
                len(self.records),
                now - self.started,
                left,
                planned,
            )
        )


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
