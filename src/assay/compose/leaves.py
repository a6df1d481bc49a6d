"""The clean-leaf filter: which pool entries may be composed soundly.

A composition check ("``A && B`` allowed implies ``A`` and ``B`` allowed") is a
theorem only if rendering ``A ⊕ B`` executes ``A`` and ``B`` exactly as written.
A leaf like ``echo hi #`` would comment out what follows, ``cd /tmp`` changes what
the next command means, ``ls > f`` already carries a redirect; composing those can
make a correct classifier look wrong.  So a pool entry is admitted only if it is
*atomic and clean* (see :func:`leaf_problem`); every rejection is counted by
reason so that a filter that throws away too much is visible, never silent.

Leaves files hold one command a line.  Blank lines and lines starting with ``#``
are skipped; an ``allow:`` or ``deny:`` prefix is a *hint* (the classifier's own
start-up verdict decides; disagreements are reported).
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from assay.compose.leaffile import refuse_non_leaves
from assay.core.errors import ConfigError

log = logging.getLogger("assay.compose")

#: Why a candidate can be rejected, with the text the summary prints.
REASONS: dict[str, str] = {
    "empty": "empty or blank",
    "control-char": "control character (NUL, CR, ...)",
    "newline": "newline",
    "unbalanced-quotes": "unbalanced quotes",
    "trailing-backslash": "trailing backslash",
    "comment": "unquoted '#'",
    "semicolon": "unquoted ';'",
    "ampersand": "unquoted '&'",
    "pipe": "unquoted '|'",
    "backtick": "backtick substitution",
    "substitution": "'$(' substitution or arithmetic",
    "redirect": "unquoted '<' or '>'",
    "group": "unquoted brace or paren group",
    "reserved-word": "headed by a shell keyword",
    "assignment": "headed by a variable assignment",
    "state-changing-head": "headed by a word that changes what follows",
    "duplicate": "duplicate of an earlier entry",
    "classifier-error": "the classifier raised on it at start-up",
}

#: Reasons a user may turn off, with the flag that does it.  Each concerns only the
#: leaf's head word; the other reasons change how a rendered whole parses (``a # b``
#: comments out what follows), so admitting them would let F accuse a correct classifier.
OVERRIDABLE: dict[str, str] = {
    "assignment": "--admit assignment",
    "state-changing-head": "--allow-head WORD admits one word, --admit state-changing-head all",
    "reserved-word": "--admit reserved-word",
}

#: Words that change what the commands after them mean (the shell's state, the
#: control flow, or the process itself).  A leaf headed by one is not atomic.
DEFAULT_STATE_HEADS: frozenset[str] = frozenset(
    {
        "cd",
        "pushd",
        "popd",
        "exec",
        "exit",
        "logout",
        "return",
        "break",
        "continue",
        "set",
        "shopt",
        "trap",
        "alias",
        "unalias",
        "export",
        "unset",
        "readonly",
        "declare",
        "typeset",
        "local",
        "eval",
        "source",
        ".",
        "enable",
        "hash",
        "umask",
        "ulimit",
        "shift",
        "getopts",
        "read",
        "mapfile",
        "readarray",
        "let",
        "wait",
        "disown",
        "suspend",
        "fc",
        "bind",
    }
)

#: Shell keywords: a leaf headed by one is not a simple command (or, like ``!``
#: and ``time``, is only recognised at the start of a pipeline).
RESERVED_WORDS: frozenset[str] = frozenset(
    {
        "!",
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "while",
        "until",
        "do",
        "done",
        "in",
        "function",
        "time",
        "coproc",
        "[[",
        "]]",
        "{",
        "}",
    }
)

#: Prefixes skipped before the head word is judged (``command cd /`` is ``cd``).
TRANSPARENT_PREFIXES: frozenset[str] = frozenset({"command", "builtin"})

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_LABEL = re.compile(r"^\s*(allow|deny)\s*:\s?(.*)$", re.IGNORECASE)

#: A leaf check: the reason a candidate is rejected, or ``None`` if it is clean.
LeafCheck = Callable[[str], "str | None"]


@dataclass(frozen=True)
class LeafEntry:
    """One candidate leaf: its text, an optional ``allow``/``deny`` hint, and its line."""

    text: str
    label: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Lexed:
    """A leaf split into words: quote-removed words and their spans in the text."""

    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    problem: str | None = None


def lex(text: str) -> Lexed:
    """Split ``text`` into shell words, stopping at the first thing that is not clean.

    Quotes (``'…'``, ``"…"``, ``$'…'``) and backslash escapes are honoured; a
    ``$(`` or backtick is a problem even inside double quotes, where it still runs.
    """
    words: list[str] = []
    spans: list[tuple[int, int]] = []
    cur: list[str] = []
    start = -1
    i, n = 0, len(text)

    def done(problem: str | None = None) -> Lexed:
        return Lexed(tuple(words), tuple(spans), problem)

    def begin() -> None:
        nonlocal start
        if start < 0:
            start = i

    while i < n:
        c = text[i]
        if c in " \t":
            if start >= 0:
                words.append("".join(cur))
                spans.append((start, i))
                cur, start = [], -1
            i += 1
            continue
        begin()
        if c == "\\":
            if i + 1 >= n:
                return done("trailing-backslash")
            cur.append(text[i + 1])
            i += 2
        elif c == "'" or (c == "$" and text.startswith("$'", i)):
            ansi = c == "$"
            j = i + (2 if ansi else 1)
            while j < n and text[j] != "'":
                j += 2 if (ansi and text[j] == "\\") else 1
            if j >= n:
                return done("unbalanced-quotes")
            cur.append(text[i + (2 if ansi else 1) : j])
            i = j + 1
        elif c == '"' or (c == "$" and text.startswith('$"', i)):
            j = i + (2 if c == "$" else 1)
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "`":
                    return done("backtick")
                if text.startswith("$(", j):
                    return done("substitution")
                j += 1
            if j >= n:
                return done("unbalanced-quotes")
            cur.append(text[i + (2 if c == "$" else 1) : j])
            i = j + 1
        elif c == "$" and text.startswith("$(", i):
            return done("substitution")
        else:
            problem = _UNQUOTED.get(c)
            if problem:
                return done(problem)
            cur.append(c)
            i += 1
    if start >= 0:
        words.append("".join(cur))
        spans.append((start, n))
    return done()


_UNQUOTED = {
    "#": "comment",
    ";": "semicolon",
    "&": "ampersand",
    "|": "pipe",
    "`": "backtick",
    "<": "redirect",
    ">": "redirect",
    "(": "group",
    ")": "group",
    "{": "group",
    "}": "group",
}


def leaf_problem(text: str, state_heads: Iterable[str] = DEFAULT_STATE_HEADS, admit: Iterable[str] = ()) -> str | None:
    """Why ``text`` is not an atomic, clean shell leaf (a key of :data:`REASONS`), or ``None``.

    Admitted: balanced quotes; no unquoted ``#``, ``;``, ``&``, ``|``, ``<``, ``>``,
    brace or paren; no backtick or ``$(`` (quoted or not); no newline or other
    control character; no trailing backslash; not headed by a keyword, an
    assignment, or one of ``state_heads`` (after ``command``/``builtin``).
    ``admit`` turns off reasons of :data:`OVERRIDABLE` (with ``assignment``
    admitted, the head word is the first word after the assignments).
    """
    admitted = frozenset(admit)
    unknown = sorted(admitted - set(OVERRIDABLE))
    if unknown:
        raise ConfigError(f"cannot admit {', '.join(unknown)}; only {', '.join(OVERRIDABLE)} can be admitted")
    if not text.strip():
        return "empty"
    if "\n" in text:
        return "newline"
    if any((ord(ch) < 32 and ch != "\t") or ord(ch) == 127 for ch in text):
        return "control-char"
    lexed = lex(text)
    if lexed.problem:
        return lexed.problem
    if not lexed.words:
        return "empty"
    raw = [text[start:end] for start, end in lexed.spans]
    first = 0
    while first < len(raw) and _ASSIGNMENT.match(raw[first]):
        first += 1
    if first and "assignment" not in admitted:
        return "assignment"
    if first == len(raw):
        return None
    if first == 0 and raw[0] in RESERVED_WORDS and "reserved-word" not in admitted:
        return "reserved-word"
    k = first
    while k < len(lexed.words) - 1 and lexed.words[k] in TRANSPARENT_PREFIXES:
        k += 1
        while k < len(lexed.words) - 1 and lexed.words[k].startswith("-"):
            k += 1
    if lexed.words[k] in frozenset(state_heads) and "state-changing-head" not in admitted:
        return "state-changing-head"
    return None


def command_word(text: str) -> str:
    """The word a leaf runs: its first word after any ``NAME=value`` assignments."""
    lexed = lex(text)
    for (start, end), word in zip(lexed.spans, lexed.words):
        if not _ASSIGNMENT.match(text[start:end]):
            return word
    return lexed.words[0] if lexed.words else (text.split() or [""])[0]


def shell_leaf_check(state_heads: Iterable[str] = DEFAULT_STATE_HEADS, admit: Iterable[str] = ()) -> LeafCheck:
    """The shell leaf check with a chosen set of state-changing head words and admitted reasons."""
    heads = frozenset(state_heads)
    admitted = frozenset(admit)
    leaf_problem("ls", heads, admitted)  # raises now for an unknown reason, not on the first leaf
    return lambda text: leaf_problem(text, heads, admitted)


def exclusions(state_heads: Iterable[str] = DEFAULT_STATE_HEADS) -> list[str]:
    """The leaf filter's rules as lines (``assay compose --list-exclusions``)."""
    out = ["A leaf is dropped when it has (reason: what; how to admit it anyway):"]
    for reason, text in REASONS.items():
        how = OVERRIDABLE.get(reason, "not overridable")
        out.append(f"  {reason:<20} {text}; {how}")
    out.append("State-changing head words (--allow-head WORD admits one):")
    out.append("  " + " ".join(sorted(state_heads)))
    out.append("Shell keywords (reserved-word): " + " ".join(sorted(RESERVED_WORDS)))
    return out


def parse_leaf_line(line: str, number: int | None = None) -> LeafEntry | None:
    """One line of a leaves file as an entry (``None`` for blank and ``#`` lines)."""
    body = line.rstrip("\r\n")
    if not body.strip() or body.lstrip().startswith("#"):
        return None
    m = _LABEL.match(body)
    if m:
        return LeafEntry(m.group(2).strip(), m.group(1).lower(), number)
    return LeafEntry(body.strip(), None, number)


def read_leaves_file(path: str | os.PathLike[str]) -> list[LeafEntry]:
    """Read a leaves file (one command a line, optional ``allow:``/``deny:`` hints)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except FileNotFoundError:
        raise ConfigError(
            f"leaves file {path} does not exist; pass --leaves with a file of one command per line"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"leaves file {path} cannot be read ({exc}); pass a readable UTF-8 text file") from None
    refuse_non_leaves(path, "\n".join(lines))
    entries = []
    for number, line in enumerate(lines, 1):
        entry = parse_leaf_line(line, number)
        if entry is not None:
            entries.append(entry)
    return entries


def as_entries(leaves: Iterable[str | LeafEntry]) -> list[LeafEntry]:
    """Entries from strings (with ``allow:``/``deny:`` hints parsed) or entries."""
    out = []
    for n, leaf in enumerate(leaves, 1):
        if isinstance(leaf, LeafEntry):
            out.append(leaf)
        elif isinstance(leaf, str):
            m = _LABEL.match(leaf)
            out.append(LeafEntry(m.group(2).strip(), m.group(1).lower(), n) if m else LeafEntry(leaf.strip(), None, n))
        else:
            raise ConfigError(f"leaf #{n} is {leaf!r}; leaves must be strings (commands)")
    return out


@dataclass
class FilterResult:
    """What the filter admitted and why it rejected the rest."""

    admitted: list[LeafEntry]
    rejected: list[tuple[LeafEntry, str]] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Rejections per reason, in :data:`REASONS` order."""
        c = Counter(reason for _, reason in self.rejected)
        return {r: c[r] for r in list(REASONS) + sorted(set(c) - set(REASONS)) if c[r]}


def filter_leaves(entries: Sequence[LeafEntry], check: LeafCheck | None = None) -> FilterResult:
    """Admit the atomic, clean, distinct entries; count the rest by reason (and log it)."""
    check = check or shell_leaf_check()
    result = FilterResult([])
    seen: set[str] = set()
    for entry in entries:
        reason = check(entry.text)
        if reason is None and entry.text in seen:
            reason = "duplicate"
        if reason is None:
            seen.add(entry.text)
            result.admitted.append(entry)
        else:
            result.rejected.append((entry, reason))
            log.debug("leaf %r rejected: %s", entry.text, REASONS.get(reason, reason))
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items()) or "none"
    log.info("compose: %d of %d leaves admitted; rejected: %s", len(result.admitted), len(entries), counts)
    return result
