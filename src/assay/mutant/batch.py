"""A batch of mutants judged away from the run that planned them (a Dask task).

The planning run (``assay mutant --executor dask``) collects the suite, runs the
baseline with test selection and checks the history, as a local run does; then,
instead of forking the mutants itself, it ships their plans in
:class:`MutantBatch` es.  :func:`run_batch` runs on a worker: pytest in-process
with :class:`BatchPlugin` (the session plugin of a local run, minus discovery and
reach recording), which runs the batch's tests once as that process's own
baseline and then forks one child per mutant exactly as locally
(:func:`~assay.mutant.execute.run_mutants`).  The verdicts come back as data and
the planning run merges them into its report and history.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import AssayError
from assay.mutant.apply import FunctionIndex
from assay.mutant.execute import MutantResult, MutantRunPlan, run_mutants
from assay.mutant.model import Mutant
from assay.mutant.session import MutationOptions, MutationPlugin, RecentKillers, lru_caches

#: One pytest session at a time per process: pytest, the working directory and the
#: garbage collector's freeze are process-wide (a Dask worker may run several threads).
_SESSION_LOCK = threading.Lock()
#: Files of the project's modules that earlier batches in this process imported, with
#: their (mtime, size) then: a worker outlives runs, and its sys.modules must not.
_IMPORTED: dict[str, tuple[int, int]] = {}


class BatchError(AssayError):
    """A worker could not judge its batch (its copy of the project differs, or its baseline fails)."""


@dataclass(frozen=True)
class MutantBatch:
    """Plans of some mutants, and what a worker needs to run them; plain data."""

    root: str
    pytest_args: tuple[str, ...]
    files: tuple[tuple[str, str], ...]  # (mutated file, sha256 of the text the plans were made from)
    plans: tuple[tuple[dict[str, Any], tuple[str, ...], float, tuple[str, ...]], ...]  # mutant, tests, seconds, gold

    @property
    def key(self) -> str:
        """A stable Dask key: the same batch always has the same one."""
        ids = "\n".join(p[0]["id"] for p in self.plans)
        return f"assay-mutants-{len(self.plans)}-{hashlib.sha256(ids.encode()).hexdigest()[:16]}"


def make_batches(
    plans: list[MutantRunPlan], texts: dict[str, str], root: Path, pytest_args: list[str], size: int
) -> list[MutantBatch]:
    """Consecutive plans (in discovery order, so a function's mutants stay together), ``size`` per batch."""
    files = tuple(sorted((path, _sha(text)) for path, text in texts.items()))
    out = []
    for start in range(0, len(plans), size):
        chunk = plans[start : start + size]
        out.append(
            MutantBatch(
                str(root),
                tuple(pytest_args),
                files,
                tuple((p.mutant.to_json(), tuple(p.tests), p.baseline, tuple(p.gold)) for p in chunk),
            )
        )
    return out


def result_from_json(mutant: Mutant, data: dict[str, Any]) -> MutantResult:
    """A worker's :meth:`MutantResult.to_json` back into a result for ``mutant``."""
    return MutantResult(
        mutant,
        data["verdict"],
        killed_by=data.get("killed_by"),
        failure=data.get("failure", ""),
        tests_selected=data.get("tests_selected", 0),
        tests_run=data.get("tests_run", 0),
        elapsed=data.get("elapsed", 0.0),
        gold=bool(data.get("gold")),
        detail=data.get("detail", ""),
    )


def run_batch(batch: MutantBatch) -> list[dict[str, Any]]:
    """Judge a batch in this process (a Dask worker); each result as :meth:`MutantResult.to_json`."""
    plugin = BatchPlugin(batch)
    with _SESSION_LOCK:
        old_cwd, old_path = os.getcwd(), list(sys.path)
        sys.path.insert(0, batch.root)  # as the planning run: the project's own modules import
        os.chdir(batch.root)
        try:
            _forget_changed_modules(batch.root)
            code = pytest.main(
                [
                    *batch.pytest_args,
                    "-p",
                    "no:terminal",
                    "-p",
                    "no:cacheprovider",
                    "--rootdir",
                    batch.root,
                    "-W",
                    "ignore::pytest.PytestAssertRewriteWarning",
                ],
                plugins=[plugin],
            )
            _IMPORTED.update((f, _stamp(f)) for f in _project_modules(batch.root).values())
        finally:
            os.chdir(old_cwd)
            sys.path[:] = old_path
    if plugin.problem:
        raise BatchError(plugin.problem)
    if len(plugin.results) != len(batch.plans):
        raise BatchError(
            f"pytest stopped with exit code {int(code)} before the batch ran "
            f"({len(plugin.results)} of {len(batch.plans)} mutants judged)"
        )
    return [r.to_json() for r in plugin.results]


class BatchPlugin(MutationPlugin):
    """The local session plugin with the plans given: no discovery, no reach recording."""

    def __init__(self, batch: MutantBatch) -> None:
        super().__init__(MutationOptions(root=Path(batch.root), files=[], jobs=1))
        self.batch = batch
        self.problem = ""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session) -> bool:
        if session.testsfailed:
            self.problem = f"the suite does not collect on this worker ({session.testsfailed} error(s))"
            return True
        self.items = {item.nodeid: item for item in session.items}
        for path, sha in self.batch.files:
            try:
                self.texts[path] = Path(path).read_text("utf-8")
            except OSError as exc:
                self.problem = (
                    f"this worker cannot read {path} ({exc.strerror or exc}); workers need the project at the same path"
                )
                return True
            if _sha(self.texts[path]) != sha:
                self.problem = f"this worker's copy of {path} differs from the one the mutants were made from"
                return True
        plans = [
            MutantRunPlan(Mutant.from_json(m), list(tests), seconds, list(gold))
            for m, tests, seconds, gold in self.batch.plans
        ]
        wanted = {t for p in plans for t in p.tests}
        missing = sorted(wanted - set(self.items))
        if missing:
            self.problem = f"pytest on this worker did not collect {len(missing)} selected test(s), e.g. {missing[0]}"
            return True
        # The batch's tests once, in suite order, before any fork: the parent is as warm
        # as a local run's after its baseline, and a test that fails here would make
        # every verdict meaningless.
        self._phase = "baseline"
        chosen = [item for item in session.items if item.nodeid in wanted]
        for i, item in enumerate(chosen):
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=chosen[i + 1] if i + 1 < len(chosen) else None)
        self._phase = "mutants"
        if self.baseline.failed:
            self.problem = (
                f"{len(self.baseline.failed)} selected test(s) fail on this worker without any mutant, "
                f"e.g. {self.baseline.failed[0]}"
            )
            return True
        caches = lru_caches(self.texts)

        def in_child() -> None:
            for cache in caches:
                cache.cache_clear()

        killers = RecentKillers()
        for result in run_mutants(
            plans, self.texts, FunctionIndex(self.texts), self._run_test, 1, before_apply=in_child, order=killers.order
        ):
            killers.learn(result)
            self.results.append(result)
        return True


def _project_modules(root: str) -> dict[str, str]:
    """Module name -> file, for the modules imported from the project (not from an environment in it)."""
    base = Path(root).resolve()
    envs = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
    out = {}
    for name, module in list(sys.modules.items()):
        f = getattr(module, "__file__", None)
        if not isinstance(f, str) or name == "assay" or name.startswith("assay."):
            continue
        path = Path(f).resolve()
        if (
            path.is_relative_to(base)
            and "site-packages" not in path.parts
            and not any(path.is_relative_to(e) for e in envs)
        ):
            out[name] = str(path)
    return out


def _forget_changed_modules(root: str) -> None:
    """Drop every project module when any file an earlier batch imported has changed since
    (a new run on a long-lived worker): the tests and the mutants must see the code on disk."""
    modules = _project_modules(root)
    if any(_stamp(f) != _IMPORTED.get(f) for f in modules.values()):
        for name in modules:
            del sys.modules[name]


def _stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_mtime_ns, st.st_size)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
