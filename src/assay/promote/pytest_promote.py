"""``pytest --assay-promote``: failing Hypothesis tests become regression tests.

:class:`PromotePlugin` is registered by :mod:`assay.pytest_plugin` when the option
is given.  For each test it captures the shrunk failure inside the run (see
:mod:`assay.promote.from_hypothesis`), and during the test's teardown runs the
promoter on it: dedup, flake guard, emit.  The summary is printed at the end of
the session.  Emit-only unless ``--assay-promote-write`` (when the main plugin
defines it) or ``write=True``: tests then go into the regressions folder and
their buckets are recorded.
"""

from __future__ import annotations

import unittest
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from assay.core.config import load_project
from assay.core.errors import AssayError
from assay.promote.from_hypothesis import (
    NO_SEED,
    HypothesisCandidate,
    InnerTestCapture,
    StatefulCandidate,
    UncapturedFailure,
    find_machine,
    flatten,
    locate,
    program_from_notes,
)
from assay.promote.replay import user_verdict
from assay.promote.rubric import Candidate, Promoter
from assay.promote.summary import format_summary


def _hypothesis_test(item: pytest.Item) -> Any | None:
    """The ``@given`` test object of a function item, or ``None``."""
    obj = getattr(item, "obj", None)
    handle = getattr(obj, "hypothesis", None)
    return obj if handle is not None and hasattr(handle, "inner_test") else None


def _machine_of(item: pytest.Item) -> type | None:
    cls = getattr(item, "cls", None)
    if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
        return None
    module = getattr(item, "module", None)
    return find_machine(module, cls) if module is not None else None


class PromotePlugin:
    """pytest hooks that promote failing Hypothesis and state-machine tests."""

    def __init__(
        self,
        config: pytest.Config,
        *,
        write: bool | None = None,
        replays: int | None = None,
        project_root: str | Path | None = None,
    ) -> None:
        self.config = config
        self.write = bool(config.getoption("assay_promote_write", False)) if write is None else write
        self.replays = replays if replays is not None else config.getoption("assay_promote_replays", None)
        self.project_root = project_root or config.getoption("assay_project", None) or config.rootpath
        seed = config.getoption("hypothesis_seed", None)
        self.seed = f"{seed} (--hypothesis-seed)" if seed is not None else NO_SEED
        self._promoter: Promoter | None = None
        self._captures: dict[str, InnerTestCapture] = {}
        self._pending: dict[str, list[Candidate]] = {}
        self.errors: list[str] = []

    @property
    def promoter(self) -> Promoter:
        if self._promoter is None:
            self._promoter = Promoter(load_project(self.project_root), write=self.write, replays=self.replays)
        return self._promoter

    # -- capture ----------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        test = _hypothesis_test(item)
        if test is None:
            return (yield)
        fixtures = set(getattr(item, "funcargs", {}) or {})
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            fixtures -= set(callspec.params)  # parametrized values are plain data, replayable
        with InnerTestCapture(test, fixtures, method=getattr(item, "cls", None) is not None) as capture:
            self._captures[item.nodeid] = capture
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        capture = self._captures.pop(item.nodeid, None) if call.when == "call" else None
        if call.when == "call" and report.failed and call.excinfo is not None:
            try:
                found = self._candidates(item, call.excinfo.value, capture)
            except AssayError as exc:
                self.errors.append(f"{item.nodeid}: {exc}")
                found = []
            if found:
                self._pending[item.nodeid] = found
        return report

    def _candidates(self, item: pytest.Item, exc: BaseException, capture: InnerTestCapture | None) -> list[Candidate]:
        root = self.promoter.project.root
        test = _hypothesis_test(item)
        if test is not None:
            where = locate(test.hypothesis.inner_test, item.nodeid, root)
            calls = capture.failures() if capture is not None else []
            if calls:
                return [HypothesisCandidate(where, c, root, self.seed) for c in calls]
            return [
                UncapturedFailure(
                    item.nodeid,
                    where.qualname,
                    user_verdict(exc),
                    f"Hypothesis failed the test outside its body ({type(exc).__name__}): there is no failing "
                    "call of the test function to replay",
                )
            ]
        machine = _machine_of(item)
        if machine is None:
            return []  # not a Hypothesis test: nothing was shrunk, nothing to promote
        where = locate(machine, item.nodeid, root)
        found: list[Candidate] = []
        for leaf in flatten(exc):
            verdict = user_verdict(leaf)
            if verdict is not None:
                found.append(StatefulCandidate(where, program_from_notes(leaf), verdict, root, self.seed))
        return found

    # -- promotion during teardown ----------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        for candidate in self._pending.pop(item.nodeid, []):
            try:
                self.promoter.promote(candidate)
            except AssayError as exc:
                self.errors.append(f"{item.nodeid}: {exc}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._promoter is None and not self.errors:
            return
        terminalreporter.section("assay promote")
        if self._promoter is not None:
            terminalreporter.write_line(format_summary(self._promoter.summary))
        for error in self.errors:
            terminalreporter.write_line(f"error: {error}")


__all__ = ["PromotePlugin"]
