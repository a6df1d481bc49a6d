"""The per-finding explanation: one fact a line, a command that can be pasted."""

import os
import shlex
from pathlib import Path

from assay.core.verdict import classify
from assay.findings.explain import finding_lines, input_preview, one_line, reproduce_command, short_type


def test_input_preview_is_truncated_and_says_the_length():
    assert input_preview(b"<a") == "b'<a' (2 bytes)"
    long = input_preview(bytes(range(200)))
    assert long.endswith("... (200 bytes)") and len(long) < 300
    assert input_preview(b"x") == "b'x' (1 byte)"


def test_message_is_one_line_and_types_are_short():
    assert one_line("\n  first line\nsecond") == "first line"
    assert len(one_line("x" * 500)) == 120
    assert short_type("builtins.KeyError") == "KeyError"
    assert short_type("json.decoder.JSONDecodeError") == "json.decoder.JSONDecodeError"


def test_reproduce_command_is_absolute_and_names_the_project_only_when_needed(tmp_path, monkeypatch):
    project = tmp_path / "proj dir"
    art = project / ".assay" / "artifacts" / "t" / "abc"
    art.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.assay]\n")
    for cwd in (project, tmp_path):  # the same command wherever it is printed: it works anywhere
        monkeypatch.chdir(cwd)
        assert shlex.split(reproduce_command(art, project)) == ["assay", "replay", str(art)]
    outside = tmp_path / "ci" / "t" / "abc"  # --fuzz-artifacts outside the project: replay is told the project
    outside.mkdir(parents=True)
    words = shlex.split(reproduce_command(outside, project))
    assert words == ["assay", "replay", str(outside), "--project", str(project)]


def test_finding_lines_of_a_stdlib_failure(tmp_path):
    import json

    try:
        json.loads(b"{")
    except ValueError as exc:
        verdict = classify(exc, ())
    meta = {
        "verdict": verdict.to_json(),
        "oracle": verdict.oracle,
        "signature": verdict.signature,
        "exception": verdict.exception.to_json(),
        "sources": [os.path.dirname(json.__file__)],
        "first_seen_case": 7,
        "first_seen_seconds": 0.5,
    }
    lines = finding_lines(meta, b"{", tmp_path / "a", occurrences=3, signatures=2)
    assert (
        lines[0]
        == "[panic] json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )
    assert lines[1].startswith("raised at ") and "json/decoder.py:" in lines[1]
    assert lines[2] == "input: b'{' (1 byte)"
    assert lines[3] == "seen 3x under 2 signatures; first hit at case 7, 0.50s into the run"
    assert lines[4].startswith("reproduce: assay replay ") and Path(shlex.split(lines[4])[3]).name == "a"


def test_the_where_line_of_a_finding_that_raised_nothing_says_what_happened_there(tmp_path):
    """A hang, a slow input and a dead worker raised nothing: the line says hung, slow or died at."""
    from assay.core.verdict import ExceptionInfo, Frame, Verdict

    here = Frame("test_explain", "loop", __file__, 3)
    kinds = {
        "panic": ("builtins.ValueError", "raised at "),
        "wedge": ("assay.engine.execute.WedgeTimeout", "hung at "),
        "slow": ("slow", "slow at "),
        "crash": ("signal:SIGSEGV", "died at "),
    }
    for oracle, (type_, start) in kinds.items():
        verdict = Verdict(oracle, "x@test_explain:loop", "detail", ExceptionInfo(type_, "m", (here,)))
        meta = {"verdict": verdict.to_json(), "oracle": oracle, "signature": verdict.signature, "sources": [__file__]}
        where = finding_lines(meta, b"x", tmp_path / "a")[1]
        assert where.startswith(start) and where.endswith(":3 in loop"), (oracle, where)
