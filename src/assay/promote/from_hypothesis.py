"""Failures that never went through fuzzing: failing Hypothesis tests and state machines.

Hypothesis owns its shrink loop and hands back no artifact, so the failure is
captured *inside* the run:

- a ``@given`` test: its inner function (``test.hypothesis.inner_test``, which
  Hypothesis reads at call time precisely so plugins can wrap it) is wrapped for
  the duration of the test; each call of the final, shrunk replay has its
  arguments written down as source text *before* the call (a test may mutate
  them) and its exception judged right away (the traceback still starts at the
  wrapper);
- a ``RuleBasedStateMachine``: Hypothesis attaches the shrunk program
  (``state = Machine()``, one line per rule and invariant, ``state.teardown()``)
  to the exception as notes; that program is parsed and replayed step by step.

The promotion itself happens in the test's teardown (see
:mod:`assay.promote.pytest_promote`).
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.literals import NotReplayable, evaluate, to_source
from assay.core.verdict import Verdict
from assay.findings.identity import identify
from assay.promote.emit import name_label, relative_posix, render_hypothesis_test, render_stateful_test
from assay.promote.replay import parse_program, replay_state_machine, user_verdict
from assay.promote.rubric import Candidate

#: Header line of a Hypothesis test's emitted file in place of a fuzz master seed.
NO_SEED = "none (found by Hypothesis, which shrank the example itself)"

_STATE_LINE = re.compile(r"^state = [A-Za-z_][A-Za-z_0-9]*\(\)$")


def _is_final() -> bool | None:
    """Whether Hypothesis is running its final (shrunk) replay; ``None`` if unknown."""
    try:
        from hypothesis.control import current_build_context

        return bool(current_build_context().is_final)
    except Exception:  # noqa: BLE001 - no context, or a Hypothesis without this attribute
        return None


@dataclass
class CapturedCall:
    """One failing call of a test's inner function."""

    arguments: dict[str, str]
    verdict: Verdict
    final: bool | None
    problem: str | None = None


class InnerTestCapture:
    """Wraps a ``@given`` test's inner function to record its failing calls."""

    def __init__(self, test: Any, fixture_names: set[str], *, method: bool = False) -> None:
        self.handle = test.hypothesis
        self.fixture_names = fixture_names
        # A method's instance is recreated by the replay, never written down.
        params = list(inspect.signature(self.handle.inner_test).parameters)
        self.self_name = params[0] if method and params else None
        self.calls: list[CapturedCall] = []
        self._original: Any = None

    def __enter__(self) -> InnerTestCapture:
        original = self._original = self.handle.inner_test

        @functools.wraps(original)
        def capturing(*args: Any, **kwargs: Any) -> Any:
            final = _is_final()
            # Snapshot only the calls that can be the reported one: before the call,
            # since the test may mutate its arguments.
            snapshot = self._snapshot(args, kwargs) if final is not False else None
            try:
                return original(*args, **kwargs)
            except BaseException as exc:
                if snapshot is not None:
                    verdict = user_verdict(exc)
                    if verdict is not None:
                        arguments, problem = snapshot
                        self.calls.append(CapturedCall(arguments, verdict, final, problem))
                raise

        self.handle.inner_test = capturing
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.inner_test = self._original

    def _snapshot(self, args: tuple, kwargs: dict[str, Any]) -> tuple[dict[str, str], str | None]:
        arguments: dict[str, str] = {}
        problems: list[str] = []
        used_fixtures = sorted(k for k in kwargs if k in self.fixture_names)
        if used_fixtures:
            problems.append(
                f"the test takes pytest fixtures ({', '.join(used_fixtures)}), which a regression "
                "test cannot recreate faithfully"
            )
        if len(args) > (1 if self.self_name else 0):
            problems.append("the test was called with positional arguments other than self")
        for name, value in kwargs.items():
            if name in self.fixture_names or name == self.self_name:
                continue
            try:
                arguments[name] = to_source(value, f"argument {name!r}")
                if not _round_trips(arguments[name], value):
                    problems.append(f"argument {name!r} does not survive repr and back")
            except NotReplayable as exc:
                problems.append(f"{exc} (not repr-able, so it cannot be replayed)")
        return arguments, "; ".join(problems) or None

    def failures(self) -> list[CapturedCall]:
        """The calls to promote: every failing final call, else the last failing call."""
        finals = [c for c in self.calls if c.final]
        if finals:
            unique: dict[str, CapturedCall] = {}
            for call in finals:
                unique.setdefault(call.verdict.signature, call)
            return list(unique.values())
        return self.calls[-1:]


def _round_trips(source: str, value: Any) -> bool:
    try:
        return to_source(evaluate(source)) == to_source(value)
    except Exception:  # noqa: BLE001
        return False


@dataclass
class Location:
    """Where a failing test lives, as the emitted test will find it again."""

    module: str
    file: str
    qualname: str
    nodeid: str


def locate(obj: Any, nodeid: str, project_root: Path) -> Location:
    """The module, file (relative to the project root) and qualname of ``obj``."""
    module = getattr(obj, "__module__", None) or "?"
    mod = sys.modules.get(module)
    mfile = getattr(mod, "__file__", None) or ""
    return Location(module, relative_posix(Path(mfile).resolve(), project_root), obj.__qualname__, nodeid)


def _describe(cand: Candidate, verdict: Verdict, project_root: Path) -> None:
    """Bug id, test-name label and headline of a failure whose project frames lie under ``project_root``."""
    from assay.findings.explain import headline

    ident = identify(verdict, (str(project_root),))
    cand.bug = ident.id
    cand.label = name_label(ident.exception, verdict.oracle, verdict.key)
    cand.summary = headline(
        {"verdict": verdict.to_json(), "oracle": verdict.oracle, "sources": [str(project_root)]}, ident
    )


class HypothesisCandidate(Candidate):
    """A failing ``@given`` test's shrunk call, replayed through its inner test."""

    source = "hypothesis"

    def __init__(self, where: Location, call: CapturedCall, project_root: Path, seed: str = NO_SEED) -> None:
        self.where = where
        self.call = call
        self.root = project_root
        self.seed = seed
        self.target = where.qualname
        self.oracle = call.verdict.oracle
        self.signature = call.verdict.signature
        self.origin = where.nodeid
        self.problem = call.problem
        _describe(self, call.verdict, project_root)

    def replay(self) -> Verdict | None:
        """Exactly as the emitted test: :func:`assay.replay_test` with an ``@example`` of the arguments."""
        from hypothesis import example

        from assay.promote.regression import replay_test

        arguments = {name: evaluate(src) for name, src in self.call.arguments.items()}
        failure = replay_test(
            f"{self.where.file}::{self.where.qualname}",
            example(**arguments),
            module=self.where.module,
            project=self.root,
        )
        return None if failure is None else failure.verdict

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        assert self.signature is not None
        return render_hypothesis_test(
            test_path,
            project_root,
            origin=self.origin,
            target=self.target,
            oracle=self.oracle,
            signature=self.signature,
            seed=self.seed,
            module=self.where.module,
            file=self.where.file,
            qualname=self.where.qualname,
            arguments=self.call.arguments,
            bug=self.bug,
            summary=self.summary,
        )

    def log_fields(self) -> dict[str, Any]:
        return {"test": self.where.nodeid, "arguments": self.call.arguments}


class UncapturedFailure(Candidate):
    """A test that failed without a failing call to replay (health check, deadline, flaky)."""

    source = "hypothesis"

    def __init__(self, nodeid: str, target: str, verdict: Verdict | None, problem: str) -> None:
        self.target = target
        self.oracle = verdict.oracle if verdict else "?"
        self.signature = verdict.signature if verdict else None
        self.origin = nodeid
        self.problem = problem

    def replay(self) -> Verdict | None:  # pragma: no cover - never replayed: problem is set
        raise NotImplementedError

    def log_fields(self) -> dict[str, Any]:
        return {"test": self.origin}

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:  # pragma: no cover
        raise NotImplementedError


# -- state machines --------------------------------------------------------------------------------
def flatten(exc: BaseException) -> list[BaseException]:
    """The leaf exceptions of ``exc`` (Hypothesis groups several distinct bugs)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in flatten(sub)]
    return [exc]


def program_from_notes(exc: BaseException) -> list[str] | None:
    """The step sequence Hypothesis printed for ``exc``, from its notes; ``None`` if absent."""
    lines = [line.strip() for note in getattr(exc, "__notes__", ()) for line in str(note).splitlines()]
    start = next((i for i, line in enumerate(lines) if _STATE_LINE.match(line)), None)
    if start is None:
        return None
    program: list[str] = []
    for line in lines[start:]:
        if not line:
            break
        program.append(line)
        if line == "state.teardown()":
            break
    return program


def find_machine(module: Any, testcase_cls: type) -> type | None:
    """The ``RuleBasedStateMachine`` subclass whose ``TestCase`` is ``testcase_cls``."""
    try:
        from hypothesis.stateful import RuleBasedStateMachine
    except ImportError:  # pragma: no cover - Hypothesis is what ran the test
        return None
    for value in list(vars(module).values()):
        if isinstance(value, type) and issubclass(value, RuleBasedStateMachine) and value is not RuleBasedStateMachine:
            try:
                if value.TestCase is testcase_cls:
                    return value
            except Exception:  # noqa: BLE001 - a broken machine is not ours to judge
                continue
    return None


class StatefulCandidate(Candidate):
    """A failing state machine's shrunk program, replayed step by step."""

    source = "stateful"

    def __init__(
        self, where: Location, program: list[str] | None, verdict: Verdict, project_root: Path, seed: str = NO_SEED
    ) -> None:
        self.where = where
        self.program = program or []
        self.root = project_root
        self.seed = seed
        self.target = where.qualname
        self.oracle = verdict.oracle
        self.signature = verdict.signature
        self.origin = where.nodeid
        self.problem = None
        _describe(self, verdict, project_root)
        if program is None:
            self.problem = "Hypothesis attached no step sequence to the failure"
        else:
            try:
                parse_program(program, where.qualname.rsplit(".", 1)[-1])
            except NotReplayable as exc:
                self.problem = f"the step sequence cannot be replayed deterministically: {exc}"

    def replay(self) -> Verdict | None:
        return replay_state_machine(self.root, self.where.module, self.where.file, self.where.qualname, self.program)

    def render(self, test_path: Path, project_root: Path) -> dict[Path, bytes]:
        assert self.signature is not None
        return render_stateful_test(
            test_path,
            project_root,
            origin=self.origin,
            target=self.target,
            oracle=self.oracle,
            signature=self.signature,
            seed=self.seed,
            module=self.where.module,
            file=self.where.file,
            machine=self.where.qualname,
            steps=self.program,
            bug=self.bug,
            summary=self.summary,
        )

    def log_fields(self) -> dict[str, Any]:
        return {"test": self.where.nodeid, "steps": self.program}
