"""The clean-leaf filter: every rejection reason, hints, files, and the pool summary."""

from __future__ import annotations

import logging

import pytest
from compose_helpers import LEAVES, reference

from assay.compose import REASONS, build_pool, composition_target, filter_leaves, leaf_problem, read_leaves_file
from assay.compose.classifier import CallableClassifier
from assay.compose.leaves import LeafEntry, as_entries, lex, shell_leaf_check
from assay.core.errors import ConfigError

REJECTED = [
    ("", "empty"),
    ("   ", "empty"),
    ("echo a\x00b", "control-char"),
    ("echo a\rb", "control-char"),
    ("echo a\nb", "newline"),
    ("echo 'a\nb'", "newline"),
    ("echo 'abc", "unbalanced-quotes"),
    ('echo "abc', "unbalanced-quotes"),
    ("echo $'a\\'b", "unbalanced-quotes"),
    ("echo abc\\", "trailing-backslash"),
    ("echo hi # comment", "comment"),
    ("echo a#b", "comment"),
    ("ls; rm x", "semicolon"),
    ("ls & rm x", "ampersand"),
    ("ls && rm x", "ampersand"),
    ("ls | sh", "pipe"),
    ("echo `id`", "backtick"),
    ('echo "`id`"', "backtick"),
    ("echo $(id)", "substitution"),
    ('echo "$(id)"', "substitution"),
    ("echo $((1+2))", "substitution"),
    ("ls > out", "redirect"),
    ("cat < in", "redirect"),
    ("diff <(ls) x", "redirect"),
    ("(ls)", "group"),
    ("{ ls; }", "group"),
    ("echo {a,b}", "group"),
    ("echo ${HOME}", "group"),
    ("if true", "reserved-word"),
    ("! ls", "reserved-word"),
    ("time ls", "reserved-word"),
    ("X=1 ls", "assignment"),
    ("PATH=/tmp", "assignment"),
    ("A[1]=x ls", "assignment"),
    ("cd /tmp", "state-changing-head"),
    ("exec ls", "state-changing-head"),
    ("exit 0", "state-changing-head"),
    ("set -e", "state-changing-head"),
    ("trap 'rm x' EXIT", "state-changing-head"),
    ("alias ls=rm", "state-changing-head"),
    ("export PATH=/tmp", "state-changing-head"),
    ("eval ls", "state-changing-head"),
    ("source env.sh", "state-changing-head"),
    (". env.sh", "state-changing-head"),
    ("command cd /", "state-changing-head"),
    ("builtin -p cd /", "state-changing-head"),
]

ADMITTED = [
    "ls -la",
    "echo 'a;b|c&d#e>f<g(h)'",
    'echo "a;b|c&d#e"',
    "echo a\\;b",
    "echo $'it\\'s'",
    "echo '$(not run)'",
    'grep -n "x y" f.txt',
    "echo $HOME",
    "env X=1 ls",
    "printf '%s\\n' done",
    "echo a=b",
]


@pytest.mark.parametrize("text,reason", REJECTED)
def test_each_rejection_reason(text: str, reason: str) -> None:
    assert leaf_problem(text) == reason
    assert reason in REASONS


def test_every_reason_of_the_lexer_is_tested() -> None:
    tested = {r for _, r in REJECTED} | {"duplicate", "classifier-error"}
    assert tested == set(REASONS)


@pytest.mark.parametrize("text", ADMITTED)
def test_clean_leaves_are_admitted(text: str) -> None:
    assert leaf_problem(text) is None


def test_state_heads_are_configurable() -> None:
    assert leaf_problem("cd /tmp", state_heads=()) is None
    assert leaf_problem("ls /tmp", state_heads={"ls"}) == "state-changing-head"
    assert shell_leaf_check(set())("export A=1") is None


def test_lexer_words_and_spans() -> None:
    lexed = lex("grep -n 'a b' \"c d\"  e\\ f")
    assert lexed.words == ("grep", "-n", "a b", "c d", "e f")
    text = "grep -n 'a b' \"c d\"  e\\ f"
    assert [text[s:e] for s, e in lexed.spans] == ["grep", "-n", "'a b'", '"c d"', "e\\ f"]


def test_filter_counts_reasons_and_duplicates(caplog: pytest.LogCaptureFixture) -> None:
    entries = as_entries(["ls", "ls", "ls; rm", "cd /", "echo hi #", "cat x"])
    with caplog.at_level(logging.INFO, logger="assay.compose"):
        result = filter_leaves(entries)
    assert [e.text for e in result.admitted] == ["ls", "cat x"]
    assert result.counts == {"comment": 1, "semicolon": 1, "state-changing-head": 1, "duplicate": 1}
    assert "2 of 6 leaves admitted" in caplog.text
    assert "semicolon 1" in caplog.text


def test_leaves_file_labels_comments_and_blank_lines(tmp_path) -> None:
    path = tmp_path / "leaves.txt"
    path.write_text("# a comment\n\nallow: ls -la\nDENY:rm -rf /\n  echo hi  \r\n", encoding="utf-8")
    entries = read_leaves_file(path)
    assert entries == [
        LeafEntry("ls -la", "allow", 3),
        LeafEntry("rm -rf /", "deny", 4),
        LeafEntry("echo hi", None, 5),
    ]


def test_unreadable_leaves_file_is_a_config_error(tmp_path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        read_leaves_file(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="cannot be read"):
        read_leaves_file(bad)


def test_pool_judges_each_leaf_once_and_reports_disagreements() -> None:
    calls: list[str] = []

    def counting(cmd: str) -> bool:
        calls.append(cmd)
        return reference(cmd)

    entries = as_entries(LEAVES + ["allow: rm -f x", "deny: echo fine", "ls; rm", "echo $(id)"])
    pool = build_pool(entries, CallableClassifier(counting))
    assert sorted(calls) == sorted(set(calls)) and len(calls) == len(pool)
    s = pool.summary
    assert s.admitted == len(LEAVES) + 2 and s.rejected == {"semicolon": 1, "substitution": 1}
    assert {d["text"] for d in s.disagreements} == {"rm -f x", "echo fine"}
    assert any("hint disagrees" in line for line in s.lines())


def test_a_leaf_the_classifier_raises_on_is_left_out() -> None:
    def picky(cmd: str) -> bool:
        if cmd.startswith("boom"):
            raise RuntimeError("cannot judge")
        return True

    pool = build_pool(as_entries(["ls", "boom x"]), CallableClassifier(picky))
    assert [leaf.text for leaf in pool.leaves] == ["ls"]
    assert pool.summary.rejected == {"classifier-error": 1}
    assert "cannot judge" in pool.summary.errors[0]["error"]


def test_empty_pool_after_filtering_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="leaf pool is empty.*semicolon 1"):
        composition_target(reference, ["ls; rm", ""])
