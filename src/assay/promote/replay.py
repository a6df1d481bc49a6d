"""Replays for failures that never went through fuzzing; emitted tests import these.

The flake guard and the emitted regression test call the very same functions, so
a failure the guard accepted reproduces in the test the same way.  A failure is
judged by :func:`user_verdict`: the usual :func:`assay.core.verdict.classify`, on the
traceback from the first frame of user code inward, because the frames of pytest,
unittest, Hypothesis and assay that called it differ between the original run and
a replay and must not change the signature.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.literals import SAFE_NAMES, NotReplayable
from assay.core.verdict import Verdict, classify, is_timeout_wedge

#: Top-level modules whose frames are the harness, not the code under test.
FRAMEWORK_MODULES = frozenset({"_pytest", "pytest", "pluggy", "unittest", "hypothesis", "assay", "contextlib"})


def _is_framework(module: str) -> bool:
    top = module.split(".", 1)[0]
    # Hypothesis compiles wrappers into modules named hypothesis_temporary_module_<hash>.
    return top in FRAMEWORK_MODULES or top.startswith("hypothesis_temporary_module")


def _not_a_failure(exc: BaseException) -> bool:
    """Skips, xfails and rejected assumptions say nothing about the bug."""
    kinds: list[type] = []
    # Only modules already imported can have raised: look them up rather than import them.
    outcomes = sys.modules.get("_pytest.outcomes")
    if outcomes is not None:
        kinds += [outcomes.Skipped, outcomes.XFailed]
    case = sys.modules.get("unittest.case")
    if case is not None:
        kinds.append(case.SkipTest)
    errors = sys.modules.get("hypothesis.errors")
    if errors is not None:
        kinds.append(errors.UnsatisfiedAssumption)
    return isinstance(exc, tuple(kinds))


def user_verdict(exc: BaseException) -> Verdict | None:
    """The verdict on an exception raised by a test body, keyed by user frames only.

    ``None`` for skips and rejected assumptions.  The exception's traceback is left
    as it was.
    """
    if _not_a_failure(exc):
        return None
    saved = exc.__traceback__
    tb = saved
    while tb is not None and _is_framework(str(tb.tb_frame.f_globals.get("__name__", ""))):
        tb = tb.tb_next
    try:
        exc.__traceback__ = tb
        return classify(exc, ())
    finally:
        exc.__traceback__ = saved


def replay_call(fn: Callable[..., Any], args: tuple = (), kwargs: dict[str, Any] | None = None) -> Verdict | None:
    """Call ``fn``; the verdict on what it raised, or ``None`` if it returned."""
    try:
        fn(*args, **(kwargs or {}))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # every escape is judged, as in execute.run
        return user_verdict(exc)
    return None


#: How an emitted test's failure message begins; the signature follows.
STILL_PRESENT = "the promoted bug is still present: "
#: What the message adds when the failure is no longer the promoted one.
CHANGED_MARK = "the failure has changed"


def failure_message(verdict: Verdict | None, promoted_as: str) -> str:
    """The failure message of an emitted test: the signature now, and the traceback."""
    if verdict is None:
        return "passed"
    text = f"{STILL_PRESENT}{verdict.signature}"
    # A hang caught elsewhere in its loop has not changed (assay.engine.wedges).
    if verdict.signature != promoted_as and not (
        is_timeout_wedge(verdict) and promoted_as.startswith("wedge:timeout@")
    ):
        text += f"\n(it was promoted as {promoted_as}; {CHANGED_MARK})"
    trace = verdict.exception.traceback if verdict.exception is not None else ""
    if trace:
        text += "\n" + trace.rstrip()
    elif verdict.detail:
        text += "\n" + verdict.detail
    return text


# -- loading the test that failed ------------------------------------------------------------------
def load_module(root: str | os.PathLike[str], module: str, file: str) -> Any:
    """Import the test module ``module`` whose file is ``file`` (relative to ``root``).

    Reuses an already imported module of that name and file; otherwise imports it
    by name with its base folder on ``sys.path`` (as pytest's default import mode
    does), and failing that executes the file under that name.
    """
    path = (Path(root) / file).resolve()
    existing = sys.modules.get(module)
    if existing is not None and _same_file(existing, path):
        return existing
    base = _base_folder(path, module)
    if base is not None and existing is None:
        if str(base) not in sys.path:
            sys.path.insert(0, str(base))
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            loaded = None
        if loaded is not None and _same_file(loaded, path):
            return loaded
    spec = importlib.util.spec_from_file_location(module, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {module!r} from {path}")
    loaded = importlib.util.module_from_spec(spec)
    if module not in sys.modules:
        sys.modules[module] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def _same_file(module: Any, path: Path) -> bool:
    mfile = getattr(module, "__file__", None)
    return bool(mfile) and Path(mfile).resolve() == path  # type: ignore[arg-type]  # bool(mfile): set


def _base_folder(path: Path, module: str) -> Path | None:
    """The folder that, on ``sys.path``, makes ``import module`` find ``path``."""
    parts = module.split(".")
    folder = path.parent if path.name != "__init__.py" else path.parent.parent
    expected = path.stem if path.name != "__init__.py" else path.parent.name
    if parts[-1] != expected:
        return None
    for part in reversed(parts[:-1]):
        if folder.name != part:
            return None
        folder = folder.parent
    return folder


def resolve(module: Any, qualname: str) -> tuple[type | None, Any]:
    """(owning class or ``None``, object) for a dotted ``qualname`` inside ``module``."""
    owner: type | None = None
    obj = module
    for part in qualname.split("."):
        owner = obj if isinstance(obj, type) else None
        obj = getattr(obj, part)
    return owner, obj


def _one_example(fn: Callable[..., Any], arguments: dict[str, Any]) -> Callable[..., Any]:
    """``fn`` run as a Hypothesis test of exactly one explicit example, ``arguments``.

    Calling through Hypothesis (rather than bare) gives the test the context it
    had when it failed: ``note()``, ``event()``, ``target()`` and ``assume()`` work.
    """
    from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st

    wrapped = given(**{name: st.just(value) for name, value in arguments.items()})(fn)
    wrapped = example(**arguments)(wrapped)
    return settings(database=None, deadline=None, phases=[Phase.explicit], suppress_health_check=list(HealthCheck))(
        wrapped
    )


def replay_hypothesis(
    root: str | Path, module: str, file: str, qualname: str, arguments: dict[str, Any]
) -> Verdict | None:
    """Call the ``@given`` test ``qualname``'s inner test with ``arguments``, once."""
    owner, test = resolve(load_module(root, module, file), qualname)
    inner = test.hypothesis.inner_test
    args = (owner(),) if owner is not None else ()
    return replay_call(_one_example(inner, arguments), args)


# -- state machines --------------------------------------------------------------------------------
_ALLOWED_NODES = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.List,
    ast.Tuple,
    ast.Set,
    ast.Dict,
    ast.UnaryOp,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Call,
)


@dataclass
class Step:
    """One line of a state machine program: ``[targets =] state.method(**kwargs)``
    or a plain ``names = names`` assignment (``value``)."""

    line: str
    targets: list[ast.expr] = field(default_factory=list)
    method: str | None = None
    kwargs: dict[str, ast.expr] = field(default_factory=dict)
    value: ast.expr | None = None


def _target_names(node: ast.expr, where: str) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts]  # type: ignore[attr-defined]
    raise NotReplayable(f"{where}: cannot assign to {ast.unparse(node)}")


def _check_value(node: ast.expr, bound: set[str], where: str) -> None:
    for sub in ast.walk(node):
        if not isinstance(sub, _ALLOWED_NODES):
            raise NotReplayable(f"{where}: {ast.unparse(node)} is not a literal value")
        if isinstance(sub, ast.Name) and sub.id not in bound and sub.id not in SAFE_NAMES:
            raise NotReplayable(f"{where}: {sub.id!r} is not a value the program defines")
        if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name) and sub.func.id in SAFE_NAMES):
            raise NotReplayable(f"{where}: {ast.unparse(sub)} is not a literal value")


def parse_program(lines: list[str] | tuple[str, ...], machine: str) -> list[Step]:
    """Parse the program Hypothesis printed for a failing state machine.

    The first line must be ``state = <machine>()``; the rest are rule and invariant
    calls on ``state`` (with literal arguments or names of earlier results), plain
    assignments between such names, and ``state.teardown()``.  Anything else
    raises :class:`NotReplayable` saying which line.
    """
    clean = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not clean or clean[0].strip() != f"state = {machine}()":
        raise NotReplayable(f"the step sequence does not start with 'state = {machine}()'")
    steps = [Step(clean[0])]
    bound: set[str] = set()
    for number, line in enumerate(clean[1:], start=2):
        where = f"step {number} ({line.strip()})"
        try:
            tree = ast.parse(line.strip())
        except SyntaxError:
            raise NotReplayable(f"{where}: not Python") from None
        if len(tree.body) != 1:
            raise NotReplayable(f"{where}: expected one statement")
        stmt = tree.body[0]
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets, call = stmt.targets, stmt.value
        elif isinstance(stmt, ast.Expr):
            call = stmt.value
        else:
            raise NotReplayable(f"{where}: expected a call on state or an assignment")
        names = [n for t in targets for n in _target_names(t, where)]
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "state"
        ):
            if call.args or any(k.arg is None for k in call.keywords):
                raise NotReplayable(f"{where}: only keyword arguments can be replayed")
            for k in call.keywords:
                _check_value(k.value, bound, where)
            steps.append(Step(line, targets, call.func.attr, {k.arg: k.value for k in call.keywords}))  # type: ignore[misc]
        elif targets:
            _check_value(call, bound, where)
            steps.append(Step(line, targets, value=call))
        else:
            raise NotReplayable(f"{where}: expected a call on state")
        bound.update(names)
    return steps


def _evaluate(node: ast.expr, variables: dict[str, Any]) -> Any:
    code = compile(ast.Expression(node), "<assay-step>", "eval")
    return eval(code, {"__builtins__": {}, **SAFE_NAMES, **variables})  # noqa: S307 - checked by _check_value


def _bind(targets: list[ast.expr], value: Any, variables: dict[str, Any]) -> None:
    for target in targets:
        names = _target_names(target, "assignment")
        if isinstance(target, ast.Name):
            variables[names[0]] = value
        else:
            from hypothesis.stateful import MultipleResults  # what multiple(...) returns

            values = list(value.values if isinstance(value, MultipleResults) else value)
            if len(values) != len(names):
                raise ValueError(f"{ast.unparse(target)} = ... got {len(values)} values")
            variables.update(zip(names, values))


def run_program(machine_cls: type, steps: list[Step]) -> None:
    """Execute parsed ``steps`` on a fresh ``machine_cls``; teardown runs even on failure."""
    variables: dict[str, Any] = {}
    state = None
    torn_down = False
    try:
        state = machine_cls()
        for step in steps[1:]:
            if step.method is None:
                assert step.value is not None
                _bind(step.targets, _evaluate(step.value, variables), variables)
                continue
            kwargs = {name: _evaluate(node, variables) for name, node in step.kwargs.items()}
            if step.method == "teardown":
                torn_down = True
            result = getattr(state, step.method)(**kwargs)
            _bind(step.targets, result, variables)
    finally:
        if state is not None and not torn_down:
            try:
                state.teardown()
            except Exception:  # noqa: BLE001 - the step's failure is the one that counts
                pass


def replay_state_machine(
    root: str | os.PathLike[str], module: str, file: str, machine: str, steps: list[str] | tuple[str, ...]
) -> Verdict | None:
    """Re-run the printed step sequence of state machine ``machine``; its verdict."""
    _, machine_cls = resolve(load_module(root, module, file), machine)
    parsed = parse_program(steps, machine_cls.__name__)

    def body(_assay_replay: None) -> None:
        run_program(machine_cls, parsed)

    return replay_call(_one_example(body, {"_assay_replay": None}))
