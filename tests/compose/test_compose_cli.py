"""``assay compose``: run(args) through the parser that register() builds."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from compose_helpers import LEAVES

from assay.cli.compose import main, register, run
from assay.compose import CommandClassifier
from assay.compose.classifier import ClassifierError, load_object
from assay.core.errors import ConfigError

HELPERS = Path(__file__).with_name("compose_helpers.py")
#: Small caps keep these runs to a second or two.
CASES = "400"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="assay")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    return parser.parse_args(["compose", *argv])


@pytest.fixture
def leaves(tmp_path) -> Path:
    path = tmp_path / "leaves.txt"
    path.write_text("\n".join(LEAVES + ["# comment", "", "ls; rm x"]) + "\n", encoding="utf-8")
    return path


def common(tmp_path, leaves: Path, *extra: str) -> list[str]:
    return [
        "--leaves",
        str(leaves),
        "--fuzz-cases",
        CASES,
        "--fuzz-seed",
        "3",
        "--fuzz-corpus",
        str(tmp_path / "corpus"),
        "--fuzz-artifacts",
        str(tmp_path / "artifacts"),
        *extra,
    ]


def test_register_sets_run_as_the_handler() -> None:
    args = parse("--classifier", "x:y", "--leaves", "f")
    assert args.func is run and args.bound == 4


def test_clean_classifier_exits_0_and_writes_a_report(tmp_path, leaves, capsys) -> None:
    report = tmp_path / "report.json"
    args = parse("--classifier", f"{HELPERS}:reference", *common(tmp_path, leaves, "--report", str(report)))
    code = run(args)
    out = capsys.readouterr().out
    assert "leaf pool: 9 of 10 admitted (6 allowed, 3 denied by the classifier)" in out
    assert "rejected    1  semicolon" in out
    data = json.loads(report.read_text())
    assert data["compose"]["pool"]["rejected"] == {"semicolon": 1}
    ours = [f for f in data["compose"]["findings"] if f["oracle"] in ("fail-open", "over-denial")]
    assert ours == []
    if not data["compose"]["findings"]:  # (an engine-level wedge on a loaded machine is not ours)
        assert code == 0 and data["status"] == "clean" and "no findings" in out


def test_buggy_classifier_exits_1_and_prints_minimized_commands(tmp_path, leaves, capsys) -> None:
    report = tmp_path / "report.json"
    args = parse(
        "--classifier",
        f"{HELPERS}:first_segment",
        "--families",
        "none",
        *common(tmp_path, leaves, "--report", str(report)),
    )
    assert run(args) == 1
    out = capsys.readouterr().out
    assert "[fail-open] binary:" in out and "example:" in out and "denied part" in out
    compose = json.loads(report.read_text())["compose"]
    findings = compose["findings"]
    assert findings and all(f["oracle"] == "fail-open" and f["culprit"]["text"] in f["witness"] for f in findings)
    assert {s for g in compose["groups"] for s in g["signatures"]} == {f["signature"] for f in findings}


def test_level_classifier_through_the_cli(tmp_path, leaves) -> None:
    args = parse(
        "--classifier",
        f"{HELPERS}:leveled_first_only",
        "--allowed-predicate",
        f"{HELPERS}:is_allowed_level",
        "--families",
        "none",
        *common(tmp_path, leaves),
    )
    assert run(args) == 1
    args = parse(
        "--classifier",
        f"{HELPERS}:leveled",
        "--allowed-predicate",
        f"{HELPERS}:is_allowed_level",
        *common(tmp_path / "good", leaves),
    )
    assert run(args) == 0


CLI_CLASSIFIER = textwrap.dedent("""\
    import json, re, sys
    cmd = sys.stdin.read() if "--stdin" in sys.argv else sys.argv[-1]
    bad = ">" in cmd or any(t in {"rm", "curl", "shutdown", "tee"} for t in re.findall(r"[A-Za-z0-9_.~/-]+", cmd))
    if "--json" in sys.argv:
        print(json.dumps({"decision": {"verdict": "deny" if bad else "allow"}}))
    else:
        sys.exit(1 if bad else 0)
    """)


@pytest.fixture
def cli_classifier(tmp_path) -> str:
    path = tmp_path / "judge.py"
    path.write_text(CLI_CLASSIFIER, encoding="utf-8")
    return f"{sys.executable} -S -E {path}"


def test_out_of_process_classifier_by_exit_status(tmp_path, leaves, cli_classifier, capsys) -> None:
    args = parse("--classifier-cmd", cli_classifier, "--no-seeds", *common(tmp_path, leaves, "--fuzz-cases", "25"))
    assert run(args) == 0
    assert "6 allowed, 3 denied" in capsys.readouterr().out


def test_out_of_process_classifier_json_on_stdin(tmp_path, leaves, cli_classifier) -> None:
    args = parse(
        "--classifier-cmd",
        cli_classifier + " --json --stdin",
        "--classifier-stdin",
        "--classifier-json-field",
        "decision.verdict",
        "--no-seeds",
        *common(tmp_path, leaves, "--fuzz-cases", "25"),
    )
    assert run(args) == 0


def test_command_classifier_caches_and_never_uses_a_shell(tmp_path, cli_classifier) -> None:
    marker = tmp_path / "ran"
    judge = CommandClassifier(cli_classifier)
    dangerous = f"touch {marker}; echo $(touch {marker})"
    assert judge.judge(dangerous).allowed is True  # judged as a string ...
    assert not marker.exists()  # ... never executed
    assert judge.judge("rm -rf /").allowed is False
    judge.judge("rm -rf /")
    assert judge.calls == 2 and judge.hits == 1
    placeholder = CommandClassifier([sys.executable, "-c", "import sys; sys.exit(sys.argv[1] != 'ok')", "{}"])
    assert placeholder.judge("ok").allowed and not placeholder.judge("no").allowed


def test_command_classifier_errors(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        CommandClassifier("/nonexistent/judge").judge("ls")
    with pytest.raises(ClassifierError, match="no JSON field"):
        CommandClassifier([sys.executable, "-c", "print('{}')"], mode="json").judge("ls")
    with pytest.raises(ClassifierError, match="longer than"):
        CommandClassifier([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.2).judge("ls")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--classifier", "no_such_module_xyz:f"], "cannot import classifier module"),
        (["--classifier", "os:no_such_function"], "has no attribute"),
        (["--classifier", "nocolon"], "must look like"),
        (["--classifier", f"{HELPERS}:reference", "--r-ops", "teleport"], "not in table"),
        (["--classifier", f"{HELPERS}:leveled"], "allowed-predicate"),
        (["--classifier-cmd", "x", "--allowed-predicate", "a:b"], "apply to --classifier"),
    ],
)
def test_bad_input_is_a_config_error_saying_what_to_fix(tmp_path, leaves, argv, message) -> None:
    with pytest.raises(ConfigError, match=message):
        run(parse(*argv, *common(tmp_path, leaves)))


def test_unreadable_or_empty_leaves_are_config_errors(tmp_path) -> None:
    args = parse("--classifier", f"{HELPERS}:reference", "--leaves", str(tmp_path / "missing.txt"))
    with pytest.raises(ConfigError, match="does not exist"):
        run(args)
    bad = tmp_path / "bad.txt"
    bad.write_text("ls; rm\necho $(id)\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="leaf pool is empty"):
        run(parse("--classifier", f"{HELPERS}:reference", "--leaves", str(bad)))


def test_standalone_main_exits_2_on_config_errors(tmp_path, capsys) -> None:
    assert main(["compose", "--classifier", "nope_xyz:f", "--leaves", str(tmp_path / "l.txt")]) == 2
    assert "assay: error:" in capsys.readouterr().err


def test_load_object_accepts_module_and_file_specs() -> None:
    assert load_object("os.path:join") is os.path.join
    assert load_object(f"{HELPERS}:reference")("ls") is True
