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
Each (survivor, target) campaign runs on the engine
(:class:`~assay.engine.supervisor.Supervisor` and its crash-isolated worker: the
same input sources, comparison log, value profile, C hot loop, journal and
schedule digest as ``assay fuzz``), with the target wrapped by
:class:`~assay.mutant.comparing.Comparing`.  Beside the worker run two processes
forked from the warm parent (:mod:`assay.mutant.diffrun`): the mutant's *twin*,
which applied the patch once, and the *flake guard*.

1. **Schedule.**  The target's seeds, then its corpus entries (read-only, sorted
   by digest), then ``cases`` generated inputs from the engine's schedule, seeded
   by :func:`campaign_seed`: blake2b of (master seed, mutant id, target name), so
   every survivor gets its own schedule and the same seed gives the same one.  The
   dictionary starts with the mutated line's constants (:mod:`assay.mutant.direct`).
2. **Coverage-guided on the original, directed at the mutation.**  The original
   runs in the worker with the engine's feedback; the twin reports which lines of
   the mutated code it ran, and getting closer to the mutated line is a feature
   (:func:`assay.mutant.direct.reach_features`).  A compared size beyond the
   target's ``max_len`` raises the campaign's ``max_len``.
3. **One case.**  The input goes to the twin, the original runs it meanwhile, and
   then the twin's answer is taken (each side has its own state: an ``lru_cache``
   the original filled cannot answer for the mutant); the two outcome identities
   are compared; with ``messages`` off, a difference in an exception's message
   alone does not count.  A worker that died (the original's doing) may take the
   twin with it, as the twin was running the same input: before the next worker a
   ping tells, and a new twin replaces it.
4. **Infrastructure, never a kill.**  A mutant run that hangs, ends its process or
   raises one of :data:`~assay.mutant.outcome.RESOURCE_ERRORS` is an
   ``infrastructure`` evidence with a ``wedge``/``crash`` finding under the
   mutant's artifact namespace, replayed :data:`INFRA_REPLAYS` times for its
   determinism record.  An original that fails (even by killing its process) is
   the engine's business: the worker is replaced, the schedule goes on, and the
   evidence notes it; it never blames the mutant.
5. **Flake guard.**  On a difference the guard replays the input ``replays`` (K)
   times on each side, every run in a fresh child of a pristine copy of the warm
   parent.  Only if all K originals agree with each other, all K mutants agree with
   each other, and the two differ, is the mutant killed: a difference that came
   from state built up earlier in the campaign, or from nondeterminism, never
   kills, and the case goes on as the original's.  A difference class that failed
   the guard ``FLAKY_PER_CLASS`` times, and every difference after ``MAX_FLAKY``
   failures, is no longer replayed (counted in the detail).
6. **Shrink.**  The engine shrinks the kill (at most :data:`SHRINK_CASES`
   candidates) keeping its difference class, which is in the finding's key; the
   shrunk input must pass the flake guard again, else the raw input is kept.
7. **Artifact.**  ``Finding`` with oracle ``differential`` and key
   ``<first 16 hex of sha256(mutant id)>/<difference>``, written by
   :func:`~assay.store.artifacts.write_artifact` under
   ``<artifacts>/mutants/<sha256(mutant id)>/<target>/<sha256(input)>/``;
   ``metadata.json`` carries ``original_outcome``, ``mutant_outcome``,
   ``mutant_id``, ``mutant_diff``, ``mutant_operator``, ``kill_kind``
   (``behaviour`` or ``message``) and the campaign seeds.  One behaviour kill is
   enough: the engine stops the schedule there.  A message kill (with
   ``messages`` on, a stable difference in an exception's message alone) is
   shrunk and kept, but the schedule goes on until a behaviour kill or the case
   cap: the verdict is the behaviour kill if one was found, else the first
   message kill (which also outranks an infrastructure case met after it).

Determinism: with a case cap (and no ``budget``), the same master seed, mutant,
targets and corpus give the same schedule, the same first difference, the same
shrunk input and the same evidence.  ``budget`` only cuts a schedule short.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from multiprocessing.connection import Pipe
from pathlib import Path
from typing import Any

from assay.core import notices
from assay.core.errors import AssayError
from assay.core.target import Target
from assay.core.verdict import Verdict
from assay.engine import isolate, journal as jr, procs
from assay.engine.supervisor import Supervisor, TargetOutcome
from assay.feedback.scope import Scope
from assay.feedback.sysmon import monitoring
from assay.gen.constants import harvest
from assay.gen.mutators import MAX_DICTIONARY, tokens_from
from assay.gen.strategy import get_strategy
from assay.mutant import diffrun, direct, meet, outcome as oc
from assay.mutant.apply import Patch
from assay.mutant.comparing import INFRA_ORACLE, KILL_ORACLE, MESSAGE_ORACLE, Comparing
from assay.mutant.execute import KILLED_BY_FUZZ, SURVIVED
from assay.mutant.model import Mutant, id_digest
from assay.store.artifacts import Finding, build_metadata, load_artifact, write_artifact
from assay.store.corpus import Corpus, check_all

#: The outcome of a survivor's differential fuzzing that the mutant verdicts
#: (``KILLED_BY_FUZZ``, ``SURVIVED``, from :mod:`assay.mutant.execute`) do not name:
#: the fuzzing itself failed.
INFRASTRUCTURE = "infrastructure"
#: Oracle tag of a differential kill.
ORACLE = "differential"
#: Hex digits of sha256(mutant id) folded into a kill's signature key.
KEY_DIGEST_CHARS = 16
#: Candidates the engine's shrink of a kill may try (each runs both sides); 0 turns shrinking off.
SHRINK_CASES = 256
#: Replays of an infrastructure input on the mutant, for its determinism record.
INFRA_REPLAYS = 1
#: Oracles whose findings the engine reports without letting them end or steer the search (a message kill's
#: input stays a parent like a passing case's, so the behaviour kill beyond it is still reached).
GO_ON = frozenset({MESSAGE_ORACLE})
#: What a kill told apart: behaviour (a return value, state, features, an outcome class)...
BEHAVIOUR_KILL = "behaviour"
#: ...or only an exception's message.
MESSAGE_KILL = "message"


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
    max_len: int | None = (
        None  # the campaigns' max_len instead of each target's (raised further to reach a compared size)
    )
    messages: bool = True  # an exception message alone tells the mutant apart (--compare messages)
    directed: bool | None = None  # aim at the mutated line and its constants (None: direct.DIRECTED)


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
    kill_kind: str | None = None  # BEHAVIOUR_KILL or MESSAGE_KILL, for a kill

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
            evidence.detail, evidence.kill_kind = result.detail, result.kill_kind
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
    return diffrun.replay_side(target, None, data), diffrun.replay_side(target, patch, data)


def _text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


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
    kill_kind: str | None = None
    notes: list[str] = field(default_factory=list)


class _Campaign:
    """One (survivor, target) campaign, from the parent's side: the engine's supervisor with a comparing target."""

    def __init__(self, mutant: Mutant, patch: Patch, target: Target, options: FuzzOptions, diff: str) -> None:
        self.mutant, self.patch, self.options, self.diff = mutant, patch, options, diff
        self.sources = target.source_paths(options.project_root)
        self.strategy = get_strategy(target.strategy) if target.strategy else None
        self.directed = direct.DIRECTED if options.directed is None else options.directed
        names = patch.functions[0].__globals__ if patch.functions else None
        constants = direct.mutated_line_constants(mutant, _text(mutant.path), names) if self.directed else []
        self.constants = constants
        base = self.base_len = options.max_len or target.max_len
        self.target = replace(target, max_len=direct.reach_len(base, constants))
        self.initial = self._initial()
        given = sorted(set(target.dictionary) | set(tokens_from(target.seeds)))
        aimed = [t for t in direct.constant_tokens(constants) if t not in set(given)]
        mined = Scope(self.sources).eager().entries
        known = set(given) | set(aimed)
        self.dictionary = (aimed + given + [t for t in harvest(mined) if t not in known])[:MAX_DICTIONARY]
        self.cseed = campaign_seed(options.seed, mutant.id, target.name)
        self.result = _Result()

    def _initial(self) -> list[bytes]:
        entries: list[bytes] = []
        if self.options.corpus_root is not None:
            corpus = Corpus(self.options.corpus_root, self.target.name, self.target.max_len)
            check_all([corpus])
            entries = [d for _, d in corpus.load()]
        # First occurrence wins, order kept; a seed longer than the campaign's max_len cannot run in it.
        return [d for d in dict.fromkeys([*self.target.seeds, *entries]) if len(d) <= self.target.max_len]

    def run(self) -> _Result:
        target, options = self.target, self.options
        line = self.mutant.edit.line if self.directed and self.patch.functions else None
        sites = meet.sites_of(self.mutant, _text(self.mutant.path)) if line is not None else None
        meeting = meet.Meeting(target.max_len) if sites is not None and sites.by_line else None
        twin_journal, twin_capture = jr.Journal(target.max_len), isolate.new_capture()
        pids: list[int] = []
        conns: list[Any] = []
        try:
            twin_pid, twin_conn = diffrun.spawn_twin(target, self.patch, twin_journal, twin_capture, line, sites=sites)
            twin = [twin_pid]  # the current twin: a replacement worker may need a new one
            pids.append(twin_pid)
            conns.append(twin_conn)
            guard_conn, served = Pipe(duplex=True)
            conns.append(guard_conn)

            def guard(writer) -> None:
                writer.close()
                guard_conn.close()
                twin_conn.close()
                diffrun.guard_child(target, self.patch, options.replays, options.messages, served)

            guard_pid, guard_reader = isolate.fork_with_pipe(guard)
            pids.append(guard_pid)
            guard_reader.close()
            served.close()
            comparing = Comparing(target.fn, target.timeout, twin_conn, guard_conn, line, options.messages, meeting)

            def before_restart() -> None:
                # The worker that ended may have died on an input the twin was running meanwhile
                # (comparing.Comparing asks the twin before it runs the original) and taken the twin
                # with it: the original's death is not the mutant's doing, so a new twin goes on.
                if comparing.twin.ping():
                    return
                diffrun.kill_and_reap(twin[0])
                pids.remove(twin[0])
                conns.remove(comparing.twin.conn)
                comparing.twin.conn.close()
                twin[0], comparing.twin.conn = diffrun.spawn_twin(
                    target, self.patch, twin_journal, twin_capture, line, others=(guard_conn,), sites=sites
                )
                pids.append(twin[0])
                conns.append(comparing.twin.conn)

            # The worker's limit on one case covers the original, the mutant and a flake guard's replays;
            # the wrapper bounds each side itself (SIGALRM, and a wait for the twin).
            guard_time = 2 * options.replays * (target.timeout + isolate.KILL_GRACE + 1.0)
            wrapped = replace(target, fn=comparing, timeout=2 * target.timeout + 2.0 + guard_time, slow=None)
            with tempfile.TemporaryDirectory(prefix="assay-mutant-") as scratch:
                supervisor = Supervisor(
                    wrapped,
                    tseed=self.cseed,
                    master_seed=options.seed,
                    initial=self.initial,
                    initial_manifest=[],
                    corpus=None,
                    artifact_root=scratch,
                    sources=self.sources,
                    max_cases=options.cases,
                    budget=options.budget,
                    replay_only=False,
                    shrink_cases=SHRINK_CASES,
                    strategy=self.strategy,
                    dictionary=self.dictionary,
                    stop_on=frozenset({KILL_ORACLE, INFRA_ORACLE}),
                    go_on=GO_ON,
                    aim=meet.aimed(direct.Aim(self.constants, target.max_len), meeting) if line is not None else None,
                    before_restart=before_restart,
                )
                comparing.rerun = lambda: supervisor.journal is not None and supervisor.journal.sub() == jr.DERIVED
                if self.target.max_len > self.base_len:
                    # A size beyond the target's max_len is the point: byte mode's length control starts there.
                    supervisor.plan.len_limit = self.target.max_len
                outcome = supervisor.run()
                flaky, unguarded, first, message = diffrun.ask_guard(guard_conn, "report")
                for conn in conns:
                    conn.close()
                conns.clear()
                twin_status, twin_killed = self._end_twin(twin[0], twin_journal)
                procs.reap_group(guard_pid, kill=True)
                pids.clear()
                self._judge(outcome, first, message, (twin_journal, twin_status, twin_killed, twin_capture))
        except BaseException:
            for p in pids:
                diffrun.kill_and_reap(p)
            raise
        finally:
            for conn in conns:
                conn.close()
            twin_journal.close()
            try:
                os.unlink(twin_capture)
            except FileNotFoundError:
                pass
        r = self.result
        if flaky and r.status == SURVIVED:
            more = f" ({unguarded} more like them not replayed)" if unguarded else ""
            r.notes.append(f"{flaky} difference(s) did not replay stably{more}")
        if r.status == SURVIVED and r.notes:
            r.detail = "; ".join(r.notes)
        return r

    def _end_twin(self, twin_pid: int, twin_journal: jr.Journal) -> tuple[int, bool]:
        """Wait for the twin (it ends when every end of its connection has closed); kill it if it hangs."""
        limit = time.monotonic() + self.target.timeout + isolate.KILL_GRACE + 1.0
        while time.monotonic() < limit:
            done, status = os.waitpid(twin_pid, os.WNOHANG)
            if done:
                return status, False
            time.sleep(0.01)
        isolate.kill_with_stack(twin_pid)
        _, status = os.waitpid(twin_pid, 0)
        return status, twin_journal.state()[0] == jr.RUNNING

    def _judge(self, outcome: TargetOutcome, first: tuple | None, message: tuple | None, twin: tuple) -> None:
        """The survivor's evidence from the engine's outcome, the first kill or infrastructure case and the first
        message kill: a behaviour kill, else a message kill, else an infrastructure finding."""
        r = self.result
        r.cases, r.edges = outcome.cases, outcome.edges + outcome.lines
        own = [f for f in outcome.findings if f.oracle not in (KILL_ORACLE, INFRA_ORACLE, MESSAGE_ORACLE)]
        if own:
            r.notes.append(
                f"the original itself failed on {len(own)} kind(s) of input, not the mutant's doing "
                f"(first: {own[0].signature})"
            )
        ours = [f for f in outcome.findings if f.oracle in (KILL_ORACLE, INFRA_ORACLE)]
        if first is None and ours:
            r.notes.append(
                "the mutant's process was lost on an input the original itself failed on; the campaign ended there"
            )
        said = [f for f in outcome.findings if f.oracle == MESSAGE_ORACLE]
        if (first is None or first[0] != "kill" or not ours) and message is not None and said:
            # The schedule went on past a message kill and found no behaviour kill: the message kill stands
            # (an infrastructure case after it ended the schedule, but a kill outranks it).
            first, ours = message, said
        if first is None or not ours:
            return
        kind, data, original, mutated, verdict_json = first
        record = ours[0]
        meta: dict[str, Any] = {}
        shrunk = data
        if record.artifact:
            found = load_artifact(record.artifact)
            meta, shrunk = found.metadata, found.input
        ops = list(meta.get("mutation_operators") or [])
        pos = int(meta.get("case_index") or 0)
        phase = jr.INITIAL if "initial" in ops else jr.GENERATED
        if kind in ("kill", "message"):
            self._kill(data, shrunk, (original, mutated), ops, pos, phase, record.first_seen_case or r.cases)
        else:
            self._on_infra(data, original, mutated, verdict_json, ops, pos, phase, twin)

    # -- a difference ------------------------------------------------------------------------------
    def _kill(
        self,
        data: bytes,
        shrunk: bytes,
        stable: tuple[oc.Identity, oc.Identity],
        ops: list[str],
        pos: int,
        phase: int,
        cases: int,
    ) -> None:
        """Publish a kill: the engine's shrunk input when it passes the flake guard again, else the raw one."""
        kept, (original, mutated) = data, stable
        if shrunk != data:
            again = diffrun.guard(self.target, self.patch, shrunk, self.options.replays, self.options.messages)
            if again is not None and oc.difference_class(*again) == oc.difference_class(*stable):
                kept, (original, mutated) = shrunk, again
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
                "kill_kind": MESSAGE_KILL if oc.message_only(original, mutated) else BEHAVIOUR_KILL,
                "cases_before_kill": cases,
            },
        )
        self._publish(KILLED_BY_FUZZ, finding, original, mutated, f"{self.target.name}: {detail}")
        self.result.kill_kind = finding.extra["kill_kind"]

    # -- the mutant misbehaved -----------------------------------------------------------------------
    def _on_infra(
        self,
        data: bytes,
        original: oc.Identity,
        mutated: oc.Identity,
        verdict_json: dict | None,
        ops: list[str],
        pos: int,
        phase: int,
        twin: tuple,
    ) -> None:
        twin_journal, twin_status, twin_killed, twin_capture = twin
        output = None
        if verdict_json is not None:
            verdict = Verdict.from_json(verdict_json)
        elif mutated.get("kind") == "wedge":
            verdict = isolate.death_verdict(twin_status, "", killed_for_timeout=True, timeout=self.target.timeout)
            output = isolate.read_tail(twin_capture)
        else:
            output = isolate.read_tail(twin_capture)
            verdict = isolate.death_verdict(
                twin_status, output, killed_for_timeout=twin_killed, timeout=self.target.timeout
            )
            mutated = oc.died(verdict.detail)
        if verdict.oracle not in ("wedge", "crash"):
            verdict = Verdict("crash", f"resource:{verdict.key}", verdict.detail, verdict.exception)
        self._infrastructure(phase, pos, data, ops, original, mutated, verdict, output)

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
        reproduced = sum(
            not oc.comparable(diffrun.replay_side(self.target, self.patch, data)) for _ in range(INFRA_REPLAYS)
        )
        if original is None:  # the twin died: what the original does there, for the record
            original = diffrun.replay_side(self.target, None, data)
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
