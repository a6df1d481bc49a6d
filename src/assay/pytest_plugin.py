"""pytest plugin: replay every target's seeds, corpus and artifacts as tests.

Like ``go test`` running ``testdata/fuzz``: no generation, fully deterministic.
Off unless asked for (``--assay`` or ``assay_replay = true`` in the ini file); when
off, importing this module is all it costs.  ``--assay-promote`` turns failing
Hypothesis tests into regression tests (see :mod:`assay.promote`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from assay.core.config import Project


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay fuzz-target replay")
    group.addoption(
        "--assay",
        action="store_true",
        default=False,
        help="replay registered fuzz targets' seeds, corpus and artifacts as tests",
    )
    group.addoption(
        "--assay-project",
        metavar="DIR",
        default=None,
        help="project folder whose [tool.assay] names the targets (default: rootdir)",
    )
    group.addoption(
        "--assay-promote",
        action="store_true",
        default=False,
        help="promote failing Hypothesis tests into named regression tests",
    )
    group.addoption(
        "--assay-promote-write",
        action="store_true",
        default=False,
        help="with --assay-promote: write into the regressions folder, not the staging folder",
    )
    group.addoption(
        "--assay-promote-replays",
        type=int,
        default=None,
        metavar="K",
        help="with --assay-promote: replays the flake guard demands (default: 5)",
    )
    parser.addini("assay_replay", type="bool", default=False, help="replay assay fuzz targets as tests")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("assay") or config.getini("assay_replay"):
        config.pluginmanager.register(ReplayPlugin(config), "assay-replay")
    if config.getoption("assay_promote"):
        from assay.promote.pytest_promote import PromotePlugin

        config.pluginmanager.register(PromotePlugin(config), "assay-promote")


class ReplayPlugin:
    """Adds one test item per (target, seed | corpus entry | artifact)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items: list) -> None:
        from pathlib import Path

        from assay.core.config import load_project

        root = config.getoption("assay_project") or str(config.rootpath)
        project = load_project(root)
        collector = TargetReplays.from_parent(session, path=Path(project.root) / "pyproject.toml")
        collector.project = project
        items.extend(collector.collect())


class TargetReplays(pytest.File):
    """A pseudo-file collecting the replay items of every registered target."""

    project: Project | None = None

    def collect(self):
        from assay.core.errors import AssayError
        from assay.harness.discovery import load_targets
        from assay.store.artifacts import iter_artifacts
        from assay.store.corpus import Corpus, digest

        try:
            registry = load_targets(self.project)
        except AssayError as exc:
            raise self.CollectError(str(exc)) from None
        for target in registry.all():
            for i, seed in enumerate(target.seeds):
                yield ReplayItem.from_parent(
                    self, name=f"{target.name}[seed-{i}]", target=target, data=seed, isolated=False
                )
            corpus = Corpus(self.project.corpus, target.name, target.max_len)
            offences = corpus.check()
            if offences:
                raise self.CollectError("; ".join(f"{o.path}: {o.problem}" for o in offences))
            for d, data in corpus.load():
                yield ReplayItem.from_parent(
                    self, name=f"{target.name}[corpus-{d[:12]}]", target=target, data=data, isolated=False
                )
            from assay.engine.execute import recorded_room

            for art in iter_artifacts(self.project.artifacts, target.name):
                isolated = art.metadata.get("oracle") in ("crash", "wedge")
                yield ReplayItem.from_parent(
                    self,
                    name=f"{target.name}[artifact-{digest(art.input)[:12]}]",
                    target=target,
                    data=art.input,
                    isolated=isolated,
                    room=recorded_room(art.verdict),
                )


class ReplayFailure(Exception):
    pass


class ReplayItem(pytest.Item):
    def __init__(self, *, target, data: bytes, isolated: bool, room: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.target = target
        self.data = data
        self.isolated = isolated
        self.room = room  # a RecursionError artifact's recorded headroom

    def runtest(self) -> None:
        from assay.engine.execute import run_input
        from assay.engine.isolate import run_isolated

        if self.isolated:
            verdict = run_isolated(self.target, self.data, room=self.room).verdict
        else:
            verdict = run_input(self.target, self.data, timeout=self.target.timeout, room=self.room)
        if verdict is not None:
            raise ReplayFailure(verdict)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ReplayFailure):
            verdict = excinfo.value.args[0]
            text = [f"{verdict.signature}", f"input: {self.data[:300]!r}"]
            if verdict.exception is not None and verdict.exception.traceback:
                text.append(verdict.exception.traceback.rstrip())
            return "\n".join(text)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"assay replay {self.name}"
