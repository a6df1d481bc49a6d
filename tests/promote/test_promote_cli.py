"""``assay promote``: the subcommand, its exit codes and its summary."""

from __future__ import annotations

import argparse

import pytest
from promote_helpers import isolated_registry, temp_project  # noqa: F401 - fixtures

from assay.cli import promote as cli
from assay.core.errors import ConfigError

TARGETS = """
calls = {"n": 0}

@assay.target
def steady(data: bytes):
    if data.startswith(b"!"):
        raise LookupError("deterministic")

@assay.target
def wobbly(data: bytes):
    calls["n"] += 1
    if calls["n"] % 2:
        raise RuntimeError("every other run")
"""


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="assay")
    cli.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["promote", *argv])


def test_register_adds_the_promote_subcommand():
    args = parse("a", "b", "--project", "p", "--write", "--replays", "3")
    assert (args.artifacts, args.project, args.write, args.replays, args.func) == (["a", "b"], "p", True, 3, cli.run)
    args = parse()
    assert (args.artifacts, args.project, args.write, args.replays) == ([], None, False, None)
    for bad in ("0", "-2", "many"):
        with pytest.raises(SystemExit):
            parse("--replays", bad)


def test_promote_everything_then_write_then_known(temp_project, capsys):
    temp_project.write_targets(TARGETS)
    steady = temp_project.artifact("steady", b"!x")
    temp_project.artifact("wobbly", b"w")
    root = str(temp_project.root)

    assert cli.run(parse("--project", root)) == 1
    out = capsys.readouterr().out
    assert "assay promote: 1 promoted (1 staged for review), 0 already known, 1 quarantined" in out
    assert "staged" in out and steady.signature in out and "--write" in out
    assert "survived 0 of 5 replays: replay 1 of 5 passed" in out
    project = temp_project.project()
    assert len(list(project.staging.glob("test_steady_LookupError_*.py"))) == 1
    assert not project.regressions.exists()

    assert cli.run(parse("--project", root, "--write", "--replays", "2")) == 1
    out = capsys.readouterr().out
    assert "1 promoted, 0 already known, 1 quarantined" in out and " of 2 replays" in out
    assert (project.regressions / "buckets.json").exists()

    assert cli.run(parse("--project", root, "--write")) == 0  # nothing new
    out = capsys.readouterr().out
    assert "0 promoted, 1 already known, 1 quarantined" in out
    assert "known        " + steady.signature in out


def test_explicit_artifacts_only(temp_project, capsys):
    temp_project.write_targets(TARGETS)
    steady = temp_project.artifact("steady", b"!x")
    temp_project.artifact("wobbly", b"w")
    assert cli.run(parse(str(steady.path), "--project", str(temp_project.root))) == 1
    out = capsys.readouterr().out
    assert "1 promoted (1 staged for review), 0 already known, 0 quarantined" in out


def test_nothing_to_promote_is_success(temp_project, capsys):
    temp_project.write_targets(TARGETS)
    assert cli.run(parse("--project", str(temp_project.root))) == 0
    assert "no artifacts to promote" in capsys.readouterr().out


def test_bad_input_is_a_config_error(temp_project, tmp_path):
    temp_project.write_targets(TARGETS)
    root = str(temp_project.root)
    with pytest.raises(ConfigError, match="does not exist"):
        cli.run(parse(str(tmp_path / "no-such-artifact"), "--project", root))
    (tmp_path / "not-an-artifact").mkdir()
    with pytest.raises(ConfigError, match="not an assay artifact"):
        cli.run(parse(str(tmp_path / "not-an-artifact"), "--project", root))
    with pytest.raises(ConfigError, match="--replays"):
        cli.run(argparse.Namespace(artifacts=[], project=root, write=False, replays=0))
    with pytest.raises(ConfigError):
        cli.run(parse("--project", str(tmp_path / "missing-project")))


def test_mutant_artifacts_are_not_promoted_by_default(temp_project, capsys):
    from assay.engine.execute import run_input
    from assay.harness.discovery import load_targets
    from assay.store.artifacts import Finding, build_metadata, write_artifact

    temp_project.write_targets(TARGETS)
    project = temp_project.project()
    verdict = run_input(load_targets(project).get("steady"), b"!m")
    finding = Finding("steady", verdict, b"!m", b"!m", {}, extra={"mutant_id": "m1"})
    write_artifact(project.artifacts, finding, build_metadata(finding, campaign_seed=1, target_seed=2, sources=[]))
    assert cli.run(parse("--project", str(temp_project.root))) == 0
    assert "no artifacts to promote" in capsys.readouterr().out


def test_main_cli_dispatches_and_maps_errors(temp_project, capsys):
    main = pytest.importorskip("assay.cli.main").main
    temp_project.write_targets(TARGETS)
    temp_project.artifact("steady", b"!x")
    assert main(["promote", "--project", str(temp_project.root)]) == 1
    assert "1 promoted" in capsys.readouterr().out
    assert main(["promote", "/no/such/artifact", "--project", str(temp_project.root)]) == 2
