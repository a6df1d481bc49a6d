"""A Hypothesis ``RuleBasedStateMachine`` built from a :class:`~assay.http.stateful.StateSpec`.

One rule per operation, guarded by the operation's precondition (the bundles it
uses hold a value); each rule draws the step's ``pick`` and choice bytes, so a
Hypothesis program is a sequence of the spec's steps.  Hypothesis shrinks the
program; the last failing run (its final, shrunk replay) is captured as steps,
encoded as the spec target's bytes, and offered to the promoter as a
:class:`SequenceCandidate`: flake guard, dedup and a pytest emit replaying the
sequence through the project's registered spec target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.config import Project
from assay.core.target import Target
from assay.core.verdict import Verdict
from assay.engine.execute import run_input
from assay.http.stateful import MAX_STEP_DATA, SequenceRun, StateSpec, Step, encode
from assay.promote.emit import identifier, relative_posix, render_artifact_test
from assay.promote.rubric import Candidate, Promoter
from assay.promote.summary import Outcome

#: Steps per Hypothesis program.
DEFAULT_STEPS = 12


def state_machine(spec: StateSpec) -> type[Any]:
    """The ``RuleBasedStateMachine`` subclass of ``spec``; ``failures`` collects failing step lists."""
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

    def __init__(self: Any) -> None:
        RuleBasedStateMachine.__init__(self)
        self.sequence = SequenceRun(spec)
        self.steps: list[Step] = []  # type: ignore[misc]  # a method of the class made below

    namespace: dict[str, Any] = {"__init__": __init__, "failures": [], "spec": spec}

    def make_rule(index: int) -> Any:
        @precondition(lambda self: self.sequence.enabled(index))
        @rule(pick=st.integers(0, 0xFFFF), data=st.binary(max_size=MAX_STEP_DATA))
        def step(self: Any, pick: int, data: bytes) -> None:
            self.steps.append((index, pick, data))
            try:
                self.sequence.step(index, pick, data)
            except BaseException:
                type(self).failures.append(list(self.steps))
                raise

        return step

    for i, op in enumerate(spec.operations):
        name = f"op_{identifier(op.label)}"
        namespace[name] = make_rule(i)
        namespace[name].__name__ = namespace[name].__qualname__ = name
    return type(f"{identifier(spec.name)}_machine", (RuleBasedStateMachine,), namespace)


def find_sequence(spec: StateSpec, *, max_examples: int = 200, steps: int = DEFAULT_STEPS) -> bytes | None:
    """Run the machine (derandomized, so deterministic); the shrunk failing sequence's bytes, or ``None``."""
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    machine = state_machine(spec)
    config = settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    try:
        run_state_machine_as_test(machine, settings=config)
    except BaseException as exc:  # noqa: BLE001 - every failure of the machine is a candidate
        if isinstance(exc, KeyboardInterrupt) or not machine.failures:
            raise
        # The final (shrunk) replay is among the last failures; keep the shortest that
        # fails again as a plain sequence (Hypothesis's explain phase runs variants too).
        for steps in sorted(machine.failures[-8:], key=len):
            data = encode(steps)  # type: ignore[arg-type]  # the name reused for a failing step list
            try:
                spec.run(data)
            except Exception:  # noqa: BLE001 - it reproduces: this is the sequence
                return data
        return encode(machine.failures[-1])
    return None


class SequenceCandidate(Candidate):
    """A failing sequence, replayed through the project's registered spec target."""

    source = "stateful"

    def __init__(
        self, target: Target, data: bytes, project_root: Path, origin: str = "hypothesis state machine"
    ) -> None:
        self.target_obj = target
        self.data = data
        self.target = target.name
        self.origin = origin
        self.replays = target.replays
        first = run_input(target, data, timeout=target.timeout)
        self.signature = first.signature if first else None
        self.oracle = first.oracle if first else "?"
        self.problem = None if first else "the sequence passed when replayed before promotion"
        self.root = project_root

    def replay(self) -> Verdict | None:
        return run_input(self.target_obj, self.data, timeout=self.target_obj.timeout)

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        assert self.signature is not None
        return render_artifact_test(
            test_path,
            project_root,
            origin=self.origin,
            target=self.target,
            oracle=self.oracle,
            signature=self.signature,
            seed="none (Hypothesis, derandomized)",
            data=self.data,
        )

    def log_fields(self) -> dict[str, Any]:
        return {"sequence": self.data.hex(), "file": relative_posix(Path(self.target_obj.defined_in), self.root)}


def promote_sequence(
    project: Project, target: Target, data: bytes, *, write: bool = False, replays: int | None = None
) -> Outcome:
    """Offer one failing sequence to the promoter (flake guard, dedup, emit)."""
    return Promoter(project, write=write, replays=replays).promote(SequenceCandidate(target, data, project.root))
