"""Differential fuzzing of surviving mutants: can any input tell the mutant from the original?

A mutant that survives the test suite is either equivalent (no input can tell it
apart) or a gap in the tests.  Here each survivor gets a seeded, case-capped fuzz
campaign per target whose ``sources`` hold its file (every target when none
does), in which every input runs on the original and on the mutant and the two
outcome identities (:mod:`assay.mutant.outcome`) are compared.  A difference that
replays stably makes the mutant ``killed-by-fuzz``, with an artifact a person can
replay; a clean campaign is recorded as bounded evidence and the mutant stays
``survived``.

Design
------
The parent is warm (the user's modules imported, a built
:class:`~assay.mutant.apply.Patch` per survivor) and **never applies the patch**.
For each (survivor, target) it forks a pair of children
(:mod:`assay.mutant.diffrun`): the *twin*, which applies the patch once and runs
whatever inputs it is sent, and the *original's process*, which runs the
schedule and sends every input to the twin.

1. **Schedule.**  The target's seeds, then its corpus entries (read-only, sorted
   by digest), then ``cases`` generated inputs from the engine's own
   :class:`~assay.engine.generate.InputSource` (the target's strategy, its
   dictionary plus the constants harvested from its sources, ``max_len``), case
   *i* drawing from ``case_rng(cseed, i)``.  ``cseed`` is
   :func:`campaign_seed`: blake2b of (master seed, mutant id, target name), so
   every survivor gets its own schedule and the same seed gives the same one.
2. **Coverage-guided on the original.**  The original runs with PEP 669 feedback
   on; an input that reaches a new edge, line, semantic feature or outcome class
   of the *original* joins the corpus.  The search explores the original's
   behaviour, and the mutant is compared on every input it produces.
3. **One case.**  The original's process publishes the input in its
   shared-memory journal and runs it under ``SIGALRM`` at the target's timeout,
   then hands it to the twin, which publishes it in its own journal (side
   ``mutant``) and runs it the same way.  Two processes rather than a code swap
   around each mutant run: state the original's run leaves behind (an
   ``lru_cache``, a memo dict) must not answer for the mutant, or a mutant of a
   cached function would never run on the inputs it is given.  An original that
   hangs or exhausts memory makes the case not comparable (skipped, counted in
   the detail).
4. **Infrastructure, never a kill.**  A mutant run that hangs (soft timeout, or
   killed by the parent ``KILL_GRACE`` after it), ends its process (signal,
   ``os._exit``), or raises one of :data:`~assay.mutant.outcome.RESOURCE_ERRORS`
   is an ``infrastructure`` evidence with a ``wedge``/``crash`` finding under the
   mutant's artifact namespace (the exact input comes from the twin's journal
   when it died), replayed :data:`INFRA_REPLAYS` times for its determinism
   record.  The survivor's fuzzing stops there; the caller goes on with the next
   one.  An *original* that kills its process ends that target's campaign early
   (the target's own bug is the fuzz campaign's business, not the mutant's).
5. **Flake guard.**  On a difference the child stops and waits; the parent replays
   the input ``replays`` (K) times on each side, every run in a fresh child forked
   from the warm parent.  Only if all K originals agree with each other, all K
   mutants agree with each other, and the two differ, is the mutant killed: a
   difference that came from state built up earlier in the campaign, or from
   nondeterminism, never kills.  Otherwise the child is told to go on.  A
   :func:`~assay.mutant.outcome.difference_class` that failed the guard
   :data:`FLAKY_PER_CLASS` times, and every difference after :data:`MAX_FLAKY`
   failures, is no longer replayed (counted in the detail), so a mutant whose
   runs depend on state cannot turn the campaign into thousands of forks.
6. **Shrink** (bounded: :data:`SHRINK_CASES` candidates, :data:`SHRINK_SECONDS`),
   in a fresh pair of processes, keeping the
   :func:`~assay.mutant.outcome.difference_class`; the shrunk input must pass
   the flake guard again, else the raw input is kept.
7. **Artifact.**  ``Finding`` with oracle ``differential`` and key
   ``<first 16 hex of sha256(mutant id)>/<difference>``, written by
   :func:`~assay.store.artifacts.write_artifact` under
   ``<artifacts>/mutants/<sha256(mutant id)>/<target>/<sha256(input)>/``;
   ``metadata.json`` carries ``original_outcome``, ``mutant_outcome``,
   ``mutant_id``, ``mutant_diff``, ``mutant_operator`` and the campaign seeds.
   One kill is enough: the survivor's fuzzing stops.

Determinism: with a case cap (and no ``budget``), the same master seed, mutant,
targets and corpus give the same schedule, the same first difference, the same
shrunk input and the same evidence.  ``budget`` only cuts a schedule short.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Pipe
from typing import Any

from assay.core import interrupts, notices
from assay.core.errors import AssayError
from assay.core.target import Target
from assay.core.verdict import Verdict
from assay.engine import isolate, journal as jr, procs
from assay.engine.generate import InputSource
from assay.feedback.scope import Scope
from assay.feedback.sysmon import monitoring
from assay.gen.constants import harvest
from assay.gen.mutators import MAX_DICTIONARY, tokens_from
from assay.gen.strategy import get_strategy
from assay.mutant import diffrun, outcome as oc
from assay.mutant.apply import Patch
from assay.mutant.execute import KILLED_BY_FUZZ, SURVIVED
from assay.mutant.model import Mutant, id_digest
from assay.store.artifacts import Finding, build_metadata, write_artifact
from assay.store.corpus import Corpus, check_all

#: The outcome of a survivor's differential fuzzing that the mutant verdicts
#: (``KILLED_BY_FUZZ``, ``SURVIVED``, from :mod:`assay.mutant.execute`) do not name:
#: the fuzzing itself failed.
INFRASTRUCTURE = "infrastructure"
#: Oracle tag of a differential kill.
ORACLE = "differential"
#: Hex digits of sha256(mutant id) folded into a kill's signature key.
KEY_DIGEST_CHARS = 16
#: Candidates one shrink may try (each runs both sides); 0 turns shrinking off.
SHRINK_CASES = 256
#: Seconds one shrink may take before it keeps the smallest input found so far.
SHRINK_SECONDS = 20.0
#: Replays of an infrastructure input on the mutant, for its determinism record.
INFRA_REPLAYS = 1
#: Flake-guard failures of one difference class after which that class is no longer replayed...
FLAKY_PER_CLASS = 2
#: ...and in all, after which no difference of this campaign is replayed any more.
MAX_FLAKY = 16


class DifferentialError(AssayError):
    """Differential fuzzing could not run (a child died in assay's own code, a patch left applied)."""


@dataclass
class FuzzOptions:
    """How to fuzz survivors (``assay mutant --fuzz-*``, as data)."""

    artifact_root: str
    corpus_root: str | None = None  # read-only: each target's corpus entries are seeds too; never written
    seed: int = 0  # master seed; per (mutant, target) seed from campaign_seed()
    cases: int = 2000  # generated cases per (mutant, target) campaign (after seeds + corpus)
    budget: float | None = None  # optional wall-clock cap per campaign (cuts the schedule short only)
    replays: int = 5  # flake guard K
    project_root: str | None = None


@dataclass
class SurvivorEvidence:
    """What differential fuzzing established about one survivor."""

    mutant_id: str
    status: str  # KILLED_BY_FUZZ | SURVIVED | INFRASTRUCTURE
    target: str | None  # the target that told them apart (or the last one run)
    cases: int  # inputs executed on both sides, over all targets
    edges: int  # branch edges + lines of the original reached, summed over targets (a died child reports none)
    targets: list[str]
    artifact: str | None = None  # artifact folder of a kill (or of the infrastructure finding)
    input: bytes | None = None
    original: dict | None = None  # outcome identity of the original on that input
    mutated: dict | None = None  # ... of the mutant
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (the input as hex, with its SHA-256)."""
        data = asdict(self)
        data["input"] = None if self.input is None else self.input.hex()
        data["input_sha256"] = None if self.input is None else hashlib.sha256(self.input).hexdigest()
        return data


def campaign_seed(master: int, mutant_id: str, target_name: str) -> int:
    """The seed of one (mutant, target) campaign: blake2b of the three, as 64 bits."""
    digest = hashlib.blake2b(
        master.to_bytes(16, "big", signed=True) + mutant_id.encode("utf-8") + b"\0" + target_name.encode("utf-8"),
        digest_size=8,
        person=b"assay-mutfuzz",
    ).digest()
    return int.from_bytes(digest, "big")


def _covers(source: str, path: str) -> bool:
    return path == source or (os.path.isdir(source) and path.startswith(source.rstrip(os.sep) + os.sep))


def targets_for(path: str, targets: list[Target], project_root: str | None) -> list[Target]:
    """Targets whose sources cover file ``path``; every target when none does."""
    real = os.path.realpath(path)
    covering = [t for t in targets if any(_covers(os.path.realpath(s), real) for s in t.source_paths(project_root))]
    return covering or list(targets)


def fuzz_survivor(
    mutant: Mutant, patch: Patch, targets: list[Target], options: FuzzOptions, diff: str = ""
) -> SurvivorEvidence:
    """Seeded, case-capped differential campaign(s) for one survivor; forks a pair of children per target.

    Targets are tried in order (:func:`targets_for`) until one tells the mutant
    apart or the mutant misbehaves; see the module docstring.  ``diff`` is the
    mutant's unified diff, recorded in an artifact.
    """
    if patch.applied:
        raise DifferentialError(f"{mutant.id}: the patch is applied in the parent; revert it before fuzzing")
    if options.replays < 1:
        raise DifferentialError(f"replays must be at least 1, not {options.replays!r}")
    chosen = targets_for(mutant.path, targets, options.project_root)
    evidence = SurvivorEvidence(mutant.id, SURVIVED, None, 0, 0, [t.name for t in chosen])
    if not chosen:
        evidence.detail = "no fuzz target to run the mutant through"
        return evidence
    if not patch.reachable:
        evidence.detail = "the mutant's code is not loaded in this process; fuzzing cannot reach it"
        return evidence
    monitoring()
    notes: list[str] = []
    for target in chosen:
        result = _Campaign(mutant, patch, target, options, diff).run()
        evidence.target = target.name
        evidence.cases += result.cases
        evidence.edges += result.edges
        if result.status != SURVIVED:
            evidence.status = result.status
            evidence.artifact, evidence.input = result.artifact, result.input
            evidence.original, evidence.mutated = result.original, result.mutated
            evidence.detail = result.detail
            return evidence
        if result.detail:
            notes.append(f"{target.name}: {result.detail}")
    evidence.detail = (
        f"no stable difference in {evidence.cases} cases over {len(chosen)} target(s) "
        f"({evidence.edges} edges and lines of the original reached)"
    ) + ("; " + "; ".join(notes) if notes else "")
    return evidence


def compare_in_children(target: Target, patch: Patch, data: bytes) -> tuple[oc.Identity, oc.Identity]:
    """Run ``data`` once on the original and once on the mutant, each in a fresh child.

    This is the replay of a differential artifact (and one round of the flake guard).
    """
    return _replay(target, None, data), _replay(target, patch, data)


def _replay(target: Target, patch: Patch | None, data: bytes) -> oc.Identity:
    shot = diffrun.one_shot(
        lambda send: diffrun.replay_child(target, patch, data, send),
        target.rss_limit_mb,
        target.timeout + isolate.KILL_GRACE + 1.0,
    )
    if shot.message is not None:
        return shot.message[0]
    if shot.killed:
        return oc.wedged(target.timeout)
    verdict = isolate.death_verdict(shot.status, shot.output, killed_for_timeout=False, timeout=target.timeout)
    return oc.died(verdict.detail)


@dataclass
class _Result:
    status: str = SURVIVED
    cases: int = 0
    edges: int = 0
    artifact: str | None = None
    input: bytes | None = None
    original: dict | None = None
    mutated: dict | None = None
    detail: str = ""
    flaky: int = 0
    unguarded: int = 0
    flaky_classes: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class _Campaign:
    """One (survivor, target) campaign, from the parent's side."""

    def __init__(self, mutant: Mutant, patch: Patch, target: Target, options: FuzzOptions, diff: str) -> None:
        self.mutant, self.patch, self.target, self.options, self.diff = mutant, patch, target, options, diff
        self.sources = target.source_paths(options.project_root)
        self.strategy = get_strategy(target.strategy) if target.strategy else None
        self.initial = self._initial()
        given = sorted(set(target.dictionary) | set(tokens_from(target.seeds)))
        mined = Scope(self.sources).eager().entries
        self.dictionary = (given + [t for t in harvest(mined) if t not in set(given)])[:MAX_DICTIONARY]
        self.cseed = campaign_seed(options.seed, mutant.id, target.name)
        self.result = _Result()
        self.twin_killed = False

    def _initial(self) -> list[bytes]:
        entries: list[bytes] = []
        if self.options.corpus_root is not None:
            corpus = Corpus(self.options.corpus_root, self.target.name, self.target.max_len)
            check_all([corpus])
            entries = [d for _, d in corpus.load()]
        return list(dict.fromkeys([*self.target.seeds, *entries]))  # first occurrence wins, order kept

    # -- the campaign's two processes ---------------------------------------------------------------------
    def run(self) -> _Result:
        target = self.target
        journal, twin_journal = jr.Journal(target.max_len), jr.Journal(target.max_len)
        capture, twin_capture = isolate.new_capture(), isolate.new_capture()
        budget = self.options.budget
        deadline = None if budget is None else time.monotonic() + budget
        pids: list[int] = []
        try:
            twin_pid, twin_conn = diffrun.spawn_twin(target, self.patch, twin_journal, twin_capture)
            pids.append(twin_pid)
            control_reader, control_writer = Pipe(duplex=False)
            plan = diffrun.SurvivorFuzzPlan(
                target=target,
                sources=self.sources,
                strategy=self.strategy,
                dictionary=self.dictionary,
                initial=self.initial,
                cseed=self.cseed,
                cases=self.options.cases,
                deadline=deadline,
                journal=journal,
                capture=capture,
                twin=twin_conn,
                control=control_reader,
            )

            def child(writer) -> None:
                control_writer.close()  # so the child sees EOF (and ends) if the parent goes away
                diffrun.campaign_child(plan, writer.send)

            pid, reader = isolate.fork_with_pipe(child)
            pids.append(pid)
            control_reader.close()
            twin_conn.close()  # only the original's process talks to the twin now
            try:
                done, status, killed = self._watch(
                    pid, reader, journal, control_writer, deadline, twin_pid, twin_journal
                )
            finally:
                reader.close()
                control_writer.close()
            twin_status, twin_killed = self._end_twin(twin_pid, twin_journal)
            pids.clear()
            self._after(
                done, (journal, status, killed, capture), (twin_journal, twin_status, twin_killed, twin_capture)
            )
        except BaseException:
            for p in pids:
                diffrun.kill_and_reap(p)
            raise
        finally:
            journal.close()
            twin_journal.close()
            for path in (capture, twin_capture):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
        if self.result.flaky and self.result.status == SURVIVED:
            more = f" ({self.result.unguarded} more like them not replayed)" if self.result.unguarded else ""
            self.result.notes.append(f"{self.result.flaky} difference(s) did not replay stably{more}")
        if self.result.status == SURVIVED and self.result.notes:
            self.result.detail = "; ".join(self.result.notes)
        return self.result

    def _watch(
        self,
        pid: int,
        reader,
        journal: jr.Journal,
        control,
        deadline: float | None,
        twin_pid: int,
        twin_journal: jr.Journal,
    ) -> tuple[bool, int, bool]:
        """Serve the original's messages; enforce the hard timeout on both sides.

        Returns (the original's process finished its schedule, its exit status,
        it was killed).  A twin killed for hanging is recorded in ``self.twin_killed``.
        """
        timeout = self.target.timeout
        done = killed = False
        watched: dict[int, tuple[jr.Journal, tuple[int, float] | None]] = {
            pid: (journal, None),
            twin_pid: (twin_journal, None),
        }
        while True:
            interrupts.raise_if_requested()  # a signal whose raise an at-fork hook swallowed
            if reader.poll(diffrun.POLL):
                try:
                    msg = reader.recv()
                except EOFError:
                    break
                if isinstance(msg, isolate.ChildFailure):
                    continue  # the child's own code raised; its exit status (after EOF) tells the rest
                if msg[0] == "diff":
                    reply = self._on_diff(msg)
                    try:
                        control.send(reply)
                    except (BrokenPipeError, OSError):
                        pass
                elif msg[0] == "infra":
                    self._on_infra(msg)
                elif msg[0] == "done":
                    done = True
                    _, self.result.cases, self.result.edges, _chain, skipped = msg
                    if skipped:
                        self.result.notes.append(f"{skipped} case(s) skipped: the original hung or ran out of memory")
                continue
            now = time.monotonic()
            for p, (j, last_seen) in list(watched.items()):
                state, position, started, limit = j.state()
                current = (position, started)
                # Act only on a case seen running on two polls in a row (one read may race a write).
                if (
                    state == jr.RUNNING
                    and current == last_seen
                    and now - started - (limit or timeout) > isolate.KILL_GRACE
                ):
                    isolate.kill_with_stack(p)
                    del watched[p]
                    if p == pid:
                        killed = True
                    else:
                        self.twin_killed = True
                    continue
                watched[p] = (j, current if state == jr.RUNNING else None)
            if deadline is not None and now > deadline + max(5.0, 2 * timeout) and pid in watched:
                isolate.kill_with_stack(pid)  # a child that ignores its own deadline
                del watched[pid]
                killed = True
        status = procs.reap_group(pid, kill=killed)  # bounded, and ends what the child started
        return done, status, killed

    def _end_twin(self, twin_pid: int, twin_journal: jr.Journal) -> tuple[int, bool]:
        """Wait for the twin (it ends when the original's process has closed its connection)."""
        limit = time.monotonic() + self.target.timeout + isolate.KILL_GRACE + 1.0
        while time.monotonic() < limit:
            done, status = os.waitpid(twin_pid, os.WNOHANG)
            if done:
                return status, self.twin_killed
            time.sleep(0.01)
        isolate.kill_with_stack(twin_pid)
        _, status = os.waitpid(twin_pid, 0)
        state = twin_journal.state()[0]
        return status, self.twin_killed or state == jr.RUNNING

    def _after(self, done: bool, original: tuple, twin: tuple) -> None:
        """Judge how the two processes ended (after every message has been served)."""
        journal, status, killed, capture = original
        twin_journal, twin_status, twin_killed, twin_capture = twin
        if self.result.status != SURVIVED:
            return  # a kill or an infrastructure finding is recorded already
        twin_ran = twin_journal.read()
        twin_died = twin_killed or not (os.WIFEXITED(twin_status) and os.WEXITSTATUS(twin_status) == 0)
        if twin_died and twin_ran[0] == jr.RUNNING:
            self._on_death(twin_journal, twin_status, twin_killed, isolate.read_tail(twin_capture), mutant=True)
        elif not done:
            self._on_death(journal, status, killed, isolate.read_tail(capture), mutant=False)
        elif twin_died:
            raise DifferentialError(
                f"the mutant's process for {self.mutant.id} on target {self.target.name!r} died outside any input "
                f"(status {twin_status}):\n{isolate.read_tail(twin_capture)[-4000:]}"
            )

    # -- a difference ------------------------------------------------------------------------------
    def _on_diff(self, msg: tuple) -> str:
        _, phase, pos, data, ops, original, mutated, cases = msg
        r = self.result
        cls = oc.difference_class(original, mutated)
        if r.flaky >= MAX_FLAKY or r.flaky_classes.get(cls, 0) >= FLAKY_PER_CLASS:
            r.unguarded += 1  # this kind of difference has shown itself to be state, not behaviour
            return "go"
        stable = self._guard(data)
        if stable is None:
            r.flaky += 1
            r.flaky_classes[cls] = r.flaky_classes.get(cls, 0) + 1
            return "go"
        kept, (original, mutated), shrink_cases = self._shrink(data, stable)
        what = oc.difference(original, mutated)
        detail = oc.describe(original, mutated)
        verdict = Verdict(
            ORACLE, f"{id_digest(self.mutant.id)[:KEY_DIGEST_CHARS]}/{what}", detail, None, {"difference": what}
        )
        k = self.options.replays
        finding = Finding(
            target=self.target.name,
            verdict=verdict,
            input=kept,
            original=data,
            determinism={"replays": k, "reproduced": k, "same_signature": True},
            mutation_operators=list(ops),
            case_index=pos,
            extra={
                **self._extra(KILLED_BY_FUZZ, original, mutated, phase),
                "shrink_cases": shrink_cases,
                "cases_before_kill": cases,
            },
        )
        self._publish(KILLED_BY_FUZZ, finding, original, mutated, f"{self.target.name}: {detail}")
        return "stop"

    def _guard(self, data: bytes) -> tuple[oc.Identity, oc.Identity] | None:
        """K replays of both sides in fresh children: the stable pair of outcomes, or ``None``."""
        first: tuple[oc.Identity, oc.Identity] | None = None
        for _ in range(self.options.replays):
            original, mutated = compare_in_children(self.target, self.patch, data)
            if not (oc.comparable(original) and oc.comparable(mutated)) or oc.same(original, mutated):
                return None
            if first is None:
                first = (original, mutated)
            elif (oc.compared(original), oc.compared(mutated)) != (oc.compared(first[0]), oc.compared(first[1])):
                return None
        return first

    def _shrink(
        self, data: bytes, stable: tuple[oc.Identity, oc.Identity]
    ) -> tuple[bytes, tuple[oc.Identity, oc.Identity], int]:
        """A smaller input with the same difference class that passes the guard, else ``data``."""
        if SHRINK_CASES <= 0 or not data:
            return data, stable, 0
        want = oc.difference_class(*stable)
        structural = (
            InputSource(self.target.max_len, [], self.strategy).structural_candidates if self.strategy else None
        )
        target = self.target
        limit = SHRINK_SECONDS + 2 * target.timeout + isolate.KILL_GRACE + 1.0
        journal, capture = jr.Journal(target.max_len), isolate.new_capture()
        twin_pid, conn = diffrun.spawn_twin(target, self.patch, journal, capture)
        try:
            twin = diffrun.Twin(conn, wait=target.timeout + isolate.KILL_GRACE)
            shot = diffrun.one_shot(
                lambda send: diffrun.shrink_child(
                    target, twin, data, want, SHRINK_CASES, SHRINK_SECONDS, structural, send
                ),
                target.rss_limit_mb,
                limit,
            )
        finally:
            conn.close()
            diffrun.kill_and_reap(twin_pid)  # idle by now (or hung on a candidate): nothing to keep
            journal.close()
            os.unlink(capture)
        if shot.message is None or shot.message[1] == data:
            return data, stable, 0
        smaller, cases = shot.message[1], shot.message[2]
        again = self._guard(smaller)
        if again is None or oc.difference_class(*again) != want:
            return data, stable, cases
        return smaller, again, cases

    # -- the mutant misbehaved -----------------------------------------------------------------------
    def _on_infra(self, msg: tuple) -> None:
        _, phase, pos, data, ops, original, mutated, verdict_json = msg
        verdict = Verdict.from_json(verdict_json) if verdict_json else Verdict("crash", mutated.get("kind", "?"))
        if verdict.oracle not in ("wedge", "crash"):
            verdict = Verdict("crash", f"resource:{verdict.key}", verdict.detail, verdict.exception)
        self._infrastructure(phase, pos, data, list(ops), original, mutated, verdict, None)

    def _on_death(self, journal: jr.Journal, status: int, killed: bool, output: str, *, mutant: bool) -> None:
        state, phase, position, _side, started, data = journal.read()
        who = "mutant's" if mutant else "original's"
        if started == 0.0 or state != jr.RUNNING:
            raise DifferentialError(
                f"the {who} process for {self.mutant.id} on target {self.target.name!r} "
                f"died outside any input (status {status}):\n{output[-4000:]}"
            )
        verdict = isolate.death_verdict(status, output, killed_for_timeout=killed, timeout=self.target.timeout)
        if not mutant:
            self.result.cases = position + (len(self.initial) if phase == jr.GENERATED else 0)
            self.result.notes.append(
                f"the campaign ended early: the original itself ({verdict.signature}) at case {self.result.cases}"
            )
            return
        mutated = oc.wedged(self.target.timeout) if killed else oc.died(verdict.detail)
        self._infrastructure(phase, position, data, [], None, mutated, verdict, output)

    def _infrastructure(
        self,
        phase: int,
        pos: int,
        data: bytes,
        ops: list[str],
        original: oc.Identity | None,
        mutated: oc.Identity,
        verdict: Verdict,
        output: str | None,
    ) -> None:
        reproduced = sum(not oc.comparable(_replay(self.target, self.patch, data)) for _ in range(INFRA_REPLAYS))
        if original is None:  # the twin died: what the original does there, for the record
            original = _replay(self.target, None, data)
        detail = f"{self.target.name}: the mutant {verdict.detail or verdict.oracle} ({verdict.signature}); an infrastructure finding, not a kill"
        finding = Finding(
            target=self.target.name,
            verdict=verdict,
            input=data,
            original=data,
            determinism={
                "replays": INFRA_REPLAYS,
                "reproduced": reproduced,
                "same_signature": reproduced == INFRA_REPLAYS,
            },
            mutation_operators=ops,
            case_index=pos,
            diagnostic=output,
            extra={**self._extra(INFRASTRUCTURE, original, mutated, phase), "infrastructure": True, "side": "mutant"},
        )
        self._publish(INFRASTRUCTURE, finding, original, mutated, detail)

    # -- artifacts -------------------------------------------------------------------------------------
    def _extra(
        self, status: str, original: oc.Identity | None, mutated: oc.Identity | None, phase: int
    ) -> dict[str, Any]:
        m = self.mutant
        return {
            "mutant_id": m.id,
            "mutant_status": status,
            "mutant_operator": m.operator,
            "mutant_description": m.description,
            "mutant_path": m.relpath,
            "mutant_line": m.line,
            "mutant_diff": self.diff,
            "mutant": m.to_json(),  # enough to rebuild the Patch and replay (Mutant.from_json)
            "original_outcome": original,
            "mutant_outcome": mutated,
            "differential_seed": self.cseed,
            "phase": "initial" if phase == jr.INITIAL else "generated",
        }

    def _publish(
        self, status: str, finding: Finding, original: oc.Identity | None, mutated: oc.Identity | None, detail: str
    ) -> None:
        meta = build_metadata(finding, campaign_seed=self.options.seed, target_seed=self.cseed, sources=self.sources)
        if self.strategy is not None:
            meta["strategy"] = f"{self.strategy.name}@{self.strategy.version}"
        artifact: str | None
        try:
            artifact = str(write_artifact(self.options.artifact_root, finding, meta)[0])
        except OSError as exc:  # a full disk: the verdict and its input stay in the report
            artifact = None
            error = exc.strerror or str(exc)
            detail = f"{detail} (its artifact could not be saved under {self.options.artifact_root}: {error})"
            notices.notify(
                f"could not save the {status} finding of mutant {self.mutant.id} ({error}); it is kept in the "
                f"report, its input (base64): {base64.b64encode(finding.input).decode('ascii')}"
            )
        r = self.result
        r.status, r.artifact, r.input, r.original, r.mutated, r.detail = (
            status,
            artifact,
            finding.input,
            original,
            mutated,
            detail,
        )
