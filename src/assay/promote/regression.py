"""The public API emitted regression tests call: replay a finding, get its failure or ``None``.

An emitted test reads::

    failure = assay.replay("parse", INPUT, project=PROJECT_ROOT)
    assert failure is None, failure.report(SIGNATURE)

and, for a Hypothesis target, replays the falsifying example through Hypothesis's
own ``@example`` (never the version-specific choice bytes)::

    failure = assay.replay_example("mean_of_lists", example(xs=[]), project=PROJECT_ROOT)

The promoter's flake guard calls these same functions, so a failure it accepted
reproduces in the emitted test the same way.
"""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any

from assay.core.errors import TargetError
from assay.core.verdict import Verdict

__all__ = ["Failure", "replay", "replay_example", "replay_test", "replay_steps", "given_test"]


class Failure:
    """A replay that failed: its :class:`~assay.core.verdict.Verdict`, readable as a test failure."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    @property
    def signature(self) -> str:
        return self.verdict.signature

    def report(self, promoted_as: str | None = None) -> str:
        """The failure message: the signature now (and the one it was promoted as, if it changed), the traceback."""
        from assay.promote.replay import failure_message

        return failure_message(self.verdict, promoted_as or self.signature)

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        return f"Failure({self.signature!r})"


def _failure(verdict: Verdict | None) -> Failure | None:
    return None if verdict is None else Failure(verdict)


@functools.lru_cache(maxsize=8)
def _registry(root: str, name: str | None = None, harness: str | None = None) -> Any:
    """The project's targets, plus those of ``harness`` (a target given on the command line; ``name`` keys the cache)."""
    from assay.core.config import load_project
    from assay.harness.paths import registry_for

    # ``harness`` is named by the project's own committed test (its code), never by artifact metadata.
    return registry_for(load_project(root), [harness] if harness else [])


def _target(name: str, project: str | os.PathLike[str] | None, harness: str | os.PathLike[str] | None = None) -> Any:
    root = str(Path(project or os.getcwd()).resolve())
    if harness is None:
        return _registry(root).get(name)
    # a target given on the command line (assay fuzz harness.py), not in [tool.assay]
    return _registry(root, name, str(Path(harness).resolve())).get(name)


def replay(
    target: str,
    data: bytes,
    *,
    project: str | os.PathLike[str] | None = None,
    isolated: bool = False,
    harness: str | os.PathLike[str] | None = None,
    recursion_headroom: int | None = None,
) -> Failure | None:
    """Run ``data`` through the project's target ``target`` and its oracles once.

    ``isolated`` runs it in a forked child (for failures that kill or hang their
    process).  ``project`` is the folder holding ``pyproject.toml`` (default: the
    current folder).  ``harness`` is the file defining a target that was given on
    the command line (``assay fuzz harness.py``) rather than in ``[tool.assay]``.
    ``recursion_headroom`` gives the target that many Python frames below its caller
    (a ``RecursionError`` finding's recorded headroom), however deep this call is.
    """
    from assay.engine.execute import run_input
    from assay.engine.isolate import run_isolated

    t = _target(target, project, harness)
    if isolated:
        return _failure(run_isolated(t, data, room=recursion_headroom).verdict)
    return _failure(run_input(t, data, timeout=t.timeout, room=recursion_headroom))


def given_test(target: Any) -> Any:
    """The Hypothesis ``@given`` test behind a target (a :class:`~assay.core.target.Target`)."""
    test = getattr(target.fn, "__wrapped__", None)
    if test is None or not hasattr(getattr(test, "hypothesis", None), "inner_test"):
        raise TargetError(f"target {target.name!r} is not a Hypothesis @given test; replay its input with assay.replay")
    return test


def run_example(inner: Any, example: Any) -> Verdict | None:
    """Call a ``@given`` test's inner function on ``example`` (a ``hypothesis.example``), once.

    It runs as a Hypothesis test of that one explicit example, so ``note()``,
    ``assume()`` and ``event()`` work as when it failed; nothing is generated.
    """
    from hypothesis import HealthCheck, Phase, given, settings, strategies as st

    from assay.promote.replay import replay_call

    def body(*args: Any, **kwargs: Any) -> Any:
        return inner(*args, **kwargs)

    body.__name__ = body.__qualname__ = getattr(inner, "__name__", "test")
    params = list(inspect.signature(inner).parameters)
    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in params]
    )
    test = example(given(**{p: st.just(None) for p in params})(body))  # explicit phase: never drawn
    test = settings(database=None, deadline=None, phases=[Phase.explicit], suppress_health_check=list(HealthCheck))(
        test
    )
    return replay_call(test)


def replay_example(target: str, example: Any, *, project: str | os.PathLike[str] | None = None) -> Failure | None:
    """Replay ``example`` (``hypothesis.example(x=...)``) through the ``@given`` test of target ``target``."""
    return _failure(run_example(given_test(_target(target, project)).hypothesis.inner_test, example))


def _split(test: str) -> tuple[str, str]:
    file, sep, qualname = test.partition("::")
    if not sep or not file or not qualname:
        raise TargetError(f"{test!r} is not FILE::NAME (a test file relative to the project, and the test in it)")
    return file, qualname


def replay_test(
    test: str, example: Any, *, module: str, project: str | os.PathLike[str] | None = None
) -> Failure | None:
    """Replay ``example`` through the ``@given`` test ``test`` (``FILE::NAME``, FILE relative to ``project``).

    ``module`` is the name the test module is imported under (as pytest imported it).
    """
    from assay.promote.replay import load_module, resolve

    file, qualname = _split(test)
    owner, found = resolve(load_module(project or os.getcwd(), module, file), qualname)
    inner = found.hypothesis.inner_test
    if owner is not None:
        inner = functools.partial(inner, owner())
    return _failure(run_example(inner, example))


def replay_steps(
    machine: str, steps: Any, *, module: str, project: str | os.PathLike[str] | None = None
) -> Failure | None:
    """Re-run the printed step sequence ``steps`` of state machine ``machine`` (``FILE::NAME``)."""
    from assay.promote.replay import replay_state_machine

    file, qualname = _split(machine)
    return _failure(replay_state_machine(project or os.getcwd(), module, file, qualname, list(steps)))
