"""The mutation run as a pytest plugin: baseline with test selection, then one fork per mutant.

pytest imports the code and collects the suite once.  This plugin takes over the
run loop: it discovers the mutants (the code is imported by then, so
``call.drop-keyword`` can read live signatures), runs the whole suite once as the
baseline while :class:`~assay.mutant.reach.ReachRecorder` notes which test reaches
which mutated line, and then hands each reached mutant to
:func:`~assay.mutant.execute.run_mutants` with its tests fastest-first (the tests
that killed it last time first of all).  The engine parts know nothing of pytest;
this module is the only one that does.
"""

from __future__ import annotations

import functools
import gc
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import AssayError
from assay.mutant import selection
from assay.mutant.apply import FunctionIndex
from assay.mutant.discover import mutants_in_file
from assay.mutant.execute import (
    EXCLUDED,
    IMPORT_KILL,
    KILLED_BY_TEST,
    SURVIVED,
    UNREACHED,
    MutantResult,
    MutantRunPlan,
    run_mutants,
)
from assay.mutant.history import History, project_digest, selection_digest
from assay.mutant.model import Mutant
from assay.mutant.reach import FILE_TOUCHED, ReachRecorder
from assay.promote.unfixed import fails_for_its_bug

#: Tests remembered per function as recent killers (tried first for its next mutants).
MAX_RECENT_KILLERS = 4


@dataclass
class MutationOptions:
    """What to mutate and how (the CLI's flags, as data)."""

    root: Path
    files: list[Path]
    jobs: int = 1
    sample: int | None = None
    changed: str | None = None
    operators: list[str] = field(default_factory=list)
    history: Path | None = None  # None: --no-history
    run_mutants: bool = True  # False: baseline only (``assay test --mutant off``)
    progress: Callable[[dict[str, int], int], None] | None = None
    budget: float | None = None  # seconds for the mutant phase (the rest are left unrun)
    #: Runs the plans elsewhere (``--executor dask``): ``remote(plans, texts)`` yields
    #: their results as they arrive; None forks them here, ``jobs`` at a time.
    remote: Callable[[list[MutantRunPlan], dict[str, str]], Iterator[MutantResult]] | None = None


@dataclass
class Baseline:
    passed: dict[str, float] = field(default_factory=dict)  # nodeid -> seconds
    failed: list[str] = field(default_factory=list)
    #: Promoted regression tests failing for their recorded bug (:mod:`assay.promote.unfixed`):
    #: left out of mutation testing, not a reason to stop it.
    unfixed: list[str] = field(default_factory=list)
    collect_errors: list[str] = field(default_factory=list)
    reached: dict[str, set[tuple[str, int]]] = field(default_factory=dict)
    elapsed: float = 0.0
    tests: int = 0


class MutationPlugin:
    """Registered for ``assay mutant`` and ``assay test`` only; inert otherwise."""

    def __init__(self, options: MutationOptions) -> None:
        self.options = options
        self.baseline = Baseline()
        self.mutants: list[Mutant] = []
        self.results: list[MutantResult] = []
        self.texts: dict[str, str] = {}
        self.index: FunctionIndex | None = None
        self.items: dict[str, Any] = {}
        self.timings: dict[str, float] = {}
        self.history_stats = {"gold_replays": 0, "gold_kills": 0, "reused": 0}
        self.unrun = 0
        self._phase = "collect"
        self._test_files: set[str] = set()
        self.project = ""
        self._history: History | None = None
        self._selections: dict[str, str] = {}
        self.import_lines: set[tuple[str, int]] = set()
        self.error: AssayError | None = None  # raised again by the CLI once pytest has finished
        self._subfailure: str | None = None  # the first failed subtest of the test ``_run_test`` runs

    # -- pytest hooks -----------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection(self, session):
        """Record which lines of the mutated files run while the tests import them."""
        recorder = None
        if self.options.run_mutants and self.options.files:
            lines = {}
            for path in self.options.files:
                with open(path, "rb") as fh:
                    lines[str(path)] = set(range(1, fh.read().count(b"\n") + 2))
            recorder = ReachRecorder(lines)
            recorder.start()
            recorder.begin()
        try:
            yield
        finally:
            if recorder is not None:
                self.import_lines = recorder.end()
                recorder.stop()

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.baseline.collect_errors.append(f"{report.nodeid or '<session>'}: {_text(report.longrepr)[-1500:]}")

    def pytest_runtest_logreport(self, report) -> None:
        if self._phase == "mutants":
            # A mutant's tests run without logging (``_run_test``): what arrives here is
            # a report pytest logs on its own during the call, a failed ``subTest``'s.
            if report.failed and self._subfailure is None:
                self._subfailure = f"{report.when}: {_failure_line(report)}"
            return
        if self._phase != "baseline":
            return
        nodeid = report.nodeid
        if report.failed and report.when == "call" and self._unfixed_bug(nodeid, report):
            if nodeid not in self.baseline.unfixed:
                self.baseline.unfixed.append(nodeid)
            self.baseline.passed.pop(nodeid, None)
        elif report.failed:
            if nodeid not in self.baseline.failed:
                self.baseline.failed.append(nodeid)
            self.baseline.passed.pop(nodeid, None)
        elif report.when == "call" and report.passed and nodeid not in self.baseline.failed:
            self.baseline.passed[nodeid] = self.baseline.passed.get(nodeid, 0.0) + report.duration
        elif report.when != "call" and nodeid in self.baseline.passed:
            self.baseline.passed[nodeid] += report.duration

    def _unfixed_bug(self, nodeid: str, report: Any) -> bool:
        """Whether a failing test is a promoted regression test failing for its recorded bug."""
        item = self.items.get(nodeid)
        return item is not None and fails_for_its_bug(item.path, _text(report.longrepr))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session) -> bool:
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            raise session.Interrupted(f"{session.testsfailed} error(s) during collection")
        if session.config.option.collectonly:
            return True
        t0 = time.monotonic()
        self.items = {item.nodeid: item for item in session.items}
        self._test_files = {str(item.path) for item in session.items}
        self.mutants = self._discover()
        self.timings["discover"] = time.monotonic() - t0
        self._run_baseline(session)
        if self.baseline.failed or not self.options.run_mutants or session.shouldfail or session.shouldstop:
            return True
        try:
            self._run_mutants()
        except AssayError as exc:  # pytest would print it as its own internal error
            self.error = exc
        return True

    # -- phases ----------------------------------------------------------------------------
    def _discover(self) -> list[Mutant]:
        from assay.mutant.operators import FAMILIES

        modules = _modules_by_file()
        mutants: list[Mutant] = []
        for path in self.options.files:
            text = path.read_text("utf-8")
            self.texts[str(path)] = text
            module = modules.get(os.path.realpath(path))
            mutants.extend(mutants_in_file(path, self.options.root, module.__dict__ if module else None, text))
        mutants = selection.by_operators(mutants, self.options.operators, FAMILIES)
        if self.options.changed:
            mutants = selection.on_changed_lines(
                mutants, selection.changed_lines(self.options.root, self.options.changed)
            )
        if self.options.sample is not None:
            mutants = selection.sample(mutants, self.options.sample)
        return mutants

    def _run_baseline(self, session) -> None:
        lines: dict[str, set[int]] = {}
        for m in self.mutants:
            lines.setdefault(m.path, set()).update(range(m.line, m.end_line + 1))
        recorder = ReachRecorder(lines) if self.options.run_mutants else None
        t0 = time.monotonic()
        self._phase = "baseline"
        if recorder is not None:
            recorder.start()
        try:
            items = session.items
            for i, item in enumerate(items):
                nextitem = items[i + 1] if i + 1 < len(items) else None
                if recorder is not None:
                    recorder.begin()
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                if recorder is not None:
                    self.baseline.reached[item.nodeid] = recorder.end()
                if session.shouldfail or session.shouldstop:
                    break
        finally:
            if recorder is not None:
                recorder.stop()
            self._phase = "mutants"
        self.baseline.tests = len(session.items)
        self.baseline.elapsed = self.timings["baseline"] = time.monotonic() - t0

    def _run_mutants(self) -> None:
        t0 = time.monotonic()
        opts = self.options
        history = History.load(opts.history) if opts.history else None
        self.project = project_digest([*self.texts, *self._test_files, *_conftests(opts.root)])
        passed = self.baseline.passed
        by_line: dict[tuple[str, int], list[str]] = {}
        for test, hits in self.baseline.reached.items():
            if test in passed:
                for hit in hits:
                    by_line.setdefault(hit, []).append(test)
        plans: list[MutantRunPlan] = []
        results: dict[str, MutantResult] = {}
        selections: dict[str, str] = {}
        for i, m in enumerate(self.mutants):
            real = os.path.realpath(m.path)
            lines: tuple[int, ...] = tuple(range(m.line, m.end_line + 1)) if m.unit else ()
            if m.unit and any((real, line) in self.import_lines for line in lines):
                # The function ran while the module was imported: only re-executing the
                # module changes what the import built with it.
                m = self.mutants[i] = replace(m, reexec=True)
            reexec = m.reexec or not m.unit
            if reexec:  # every test that runs code of the file may see what the import built
                lines = (*lines, FILE_TOUCHED)
            tests = sorted({t for line in lines for t in by_line.get((m.path, line), ())}, key=lambda t: (passed[t], t))
            if not tests:
                cached = history.reusable(m.id, m.digest, self.project, "") if history is not None else None
                if cached is not None:  # with its fuzzing evidence, if it was fuzzed
                    results[m.id] = from_record(m, cached)
                    self.history_stats["reused"] += 1
                elif reexec:  # no test to run, but a module that no longer imports is killed
                    plans.append(MutantRunPlan(m, [], 0.0))
                else:
                    results[m.id] = MutantResult(m, UNREACHED)
                continue
            sel = selections[m.id] = selection_digest(tests)
            if history is not None:
                cached = history.reusable(m.id, m.digest, self.project, sel)
                if cached is not None:
                    results[m.id] = from_record(m, cached)
                    self.history_stats["reused"] += 1
                    continue
            gold = [t for t in (history.killers(m.id, m.digest) if history else []) if t in passed]
            ordered = gold + [t for t in tests if t not in gold]
            plans.append(MutantRunPlan(m, ordered, sum(passed[t] for t in ordered), gold))
            self.history_stats["gold_replays"] += bool(gold)
        self.index = FunctionIndex(self.texts)
        caches = lru_caches(self.texts)
        deadline = None if opts.budget is None else time.monotonic() + opts.budget

        def in_child() -> None:
            for cache in caches:
                cache.cache_clear()

        plans = self._exclude_unrepeatable(plans, results, in_child)
        counts: dict[str, int] = {}
        for r in results.values():
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        killers = RecentKillers()
        if opts.remote is not None:
            stream = opts.remote(plans, self.texts)
        else:
            stream = run_mutants(
                plans, self.texts, self.index, self._run_test, opts.jobs, before_apply=in_child, order=killers.order
            )
        for result in stream:
            killers.learn(result)
            results[result.mutant.id] = result
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
            self.history_stats["gold_kills"] += result.gold
            if opts.progress is not None:
                opts.progress(counts, len(self.mutants))
            if deadline is not None and time.monotonic() > deadline:
                break
        self.unrun = len(self.mutants) - len(results)
        self.results = [results[m.id] for m in self.mutants if m.id in results]
        self.timings["mutants"] = time.monotonic() - t0
        self._history, self._selections = history, selections

    def _exclude_unrepeatable(
        self, plans: list[MutantRunPlan], results: dict[str, MutantResult], in_child: Callable[[], None]
    ) -> list[MutantRunPlan]:
        """Run each re-executed file's control; leave out the mutants of a file whose control fails.

        The control re-executes the module unchanged in a child and runs every test
        its re-executed mutants selected.  A module whose second run changes what
        the tests see (it registers itself somewhere and refuses a second time, it
        counts its imports) would kill every such mutant by itself: those mutants
        are ``excluded``, with the reason, and do not count in the score.
        """
        by_file: dict[str, list[MutantRunPlan]] = {}
        for plan in plans:
            if plan.mutant.reexec or not plan.mutant.unit:
                by_file.setdefault(plan.mutant.path, []).append(plan)
        if not by_file:
            return plans
        passed = self.baseline.passed
        controls = []
        for group in by_file.values():
            tests = sorted({t for p in group for t in p.tests}, key=lambda t: (passed[t], t))
            controls.append(MutantRunPlan(group[0].mutant, tests, sum(passed[t] for t in tests), control=True))
        failed: dict[str, str] = {}
        index = self.index or FunctionIndex(self.texts)
        for control in run_mutants(
            controls, self.texts, index, self._run_test, self.options.jobs, before_apply=in_child
        ):
            if control.verdict != SURVIVED:
                failed[control.mutant.path] = _control_failure(control)
        kept = []
        for plan in plans:
            why = failed.get(plan.mutant.path) if plan.mutant.reexec or not plan.mutant.unit else None
            if why is None:
                kept.append(plan)
                continue
            results[plan.mutant.id] = MutantResult(
                plan.mutant,
                EXCLUDED,
                tests_selected=len(plan.tests),
                detail=f"re-executing {plan.mutant.relpath} unchanged already {why}, so a mutant applied "
                "by re-executing it cannot be judged",
            )
        return kept

    def save_history(self, tree: str = "") -> None:
        """Record every judged mutant (after fuzzing, which may upgrade survivors).

        ``tree`` (:func:`~assay.mutant.history.tree_digest`) is recorded only for a
        complete run, so an unchanged tree can reuse the whole run next time.
        """
        history = self._history
        if history is None:
            return
        for r in self.results:
            history.record(
                r.mutant.id,
                r.mutant.digest,
                self._selections.get(r.mutant.id, ""),
                r.verdict,
                [r.killed_by] if r.killed_by else [],
                {**r.to_json(), "mutant": r.mutant.to_json()},
            )
        complete = not self.unrun and len(self.results) == len(self.mutants)
        history.save(self.project, tree if complete else "", [r.mutant.id for r in self.results] if complete else [])

    def _run_test(self, nodeid: str, nextid: str | None) -> str | None:
        """Runs in a mutant's child: one test, its failure line or None."""
        from _pytest.runner import runtestprotocol

        item = self.items[nodeid]
        nextitem = self.items[nextid] if nextid else None
        # Only the crash line is kept: pytest's formatted traceback (source lines of
        # every frame, read from disk in each child) costs more than most tests.
        item.repr_failure = _crash_line
        self._subfailure = None
        for report in runtestprotocol(item, log=False, nextitem=nextitem):
            if report.failed:
                return f"{report.when}: {_failure_line(report)}"
        return self._subfailure


class RecentKillers:
    """Tries first the tests that killed other mutants of the same function in this run.

    Mutants of one function tend to die by the same tests; putting those first
    (after the gold tests from history) makes a killed mutant's child run one or
    two tests instead of every cheaper one before its killer.
    """

    def __init__(self) -> None:
        self.by_function: dict[tuple[str, str], list[str]] = {}

    def learn(self, result: MutantResult) -> None:
        if result.verdict == KILLED_BY_TEST and result.killed_by:
            key = (result.mutant.path, result.mutant.qualname)
            tests = self.by_function.setdefault(key, [])
            if result.killed_by in tests:
                tests.remove(result.killed_by)
            tests.insert(0, result.killed_by)
            del tests[MAX_RECENT_KILLERS:]

    def order(self, plan: MutantRunPlan) -> None:
        recent = self.by_function.get((plan.mutant.path, plan.mutant.qualname))
        if not recent:
            return
        selected = set(plan.tests)
        first = plan.gold + [t for t in recent if t in selected and t not in plan.gold]
        plan.tests = first + [t for t in plan.tests if t not in first]


def _control_failure(control: MutantResult) -> str:
    """What re-executing a module unchanged did, in a few words."""
    if control.verdict == KILLED_BY_TEST and control.killed_by == IMPORT_KILL:
        return f"raises ({control.failure})"
    if control.verdict == KILLED_BY_TEST:
        return f"fails {control.killed_by} ({control.failure})"
    first = control.detail.splitlines()[0] if control.detail else ""
    return f"ends in {control.verdict} ({first})" if first else f"ends in {control.verdict}"


def from_record(m: Mutant, record: dict[str, Any]) -> MutantResult:
    return MutantResult(
        m,
        record.get("verdict", SURVIVED),
        killed_by=record.get("killed_by"),
        failure=record.get("failure", ""),
        tests_selected=record.get("tests_selected", 0),
        tests_run=0,
        elapsed=0.0,
        cached=True,
        detail=record.get("detail", ""),
        fuzz=record.get("fuzz"),
        import_time=bool(record.get("import_time")),
    )


def _modules_by_file() -> dict[str, Any]:
    import sys

    out: dict[str, Any] = {}
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if isinstance(f, str):
            out.setdefault(os.path.realpath(f), module)
    return out


def lru_caches(paths) -> list[Any]:
    """``functools`` caches around functions of the mutated files: cleared in every mutant's child,
    so a result the baseline memoized cannot hide the mutant."""
    wanted = {os.path.realpath(p) for p in paths}
    out = []
    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper):
            code = getattr(getattr(obj, "__wrapped__", None), "__code__", None)
            if code is not None and os.path.realpath(code.co_filename) in wanted:
                out.append(obj)
    return out


def _conftests(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("conftest.py") if ".venv" not in p.parts and ".assay" not in p.parts]


def _crash_line(excinfo, style=None) -> str:  # noqa: ARG001 - Item.repr_failure's signature
    """``Type: message (file:line)`` of the innermost frame: a cheap ``repr_failure``."""
    tb = excinfo.tb
    while tb.tb_next is not None:
        tb = tb.tb_next
    try:
        message = str(excinfo.value).strip().splitlines()[0] if str(excinfo.value).strip() else ""
    except Exception:  # a broken __str__ of the user's exception must not hide the failure
        message = "<unprintable>"
    where = f"{os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
    return f"{excinfo.typename}: {message[:300]} ({where})"


def _failure_line(report) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return f"{crash.message.splitlines()[0] if crash.message else ''} ({os.path.basename(str(crash.path))}:{crash.lineno})"
    return _text(report.longrepr).strip().splitlines()[-1] if report.longrepr else "failed"


def _text(longrepr) -> str:
    try:
        return str(longrepr)
    except Exception:  # a broken repr of the user's object must not hide the failure
        return "<unprintable failure>"
