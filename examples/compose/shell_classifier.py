"""An allow/deny classifier for shell commands, built on ``bashlex`` (the worked example).

``is_allowed(command)`` parses the command with bashlex, a real bash parser, and
walks every node: lists, pipelines, subshells and groups, command and process
substitutions (also inside quoted words and assignments), redirects.  It allows
the command only if

* every simple command's word is on :data:`ALLOWED` (``git`` only with a
  read-only subcommand), with the commands that run *other* commands judged by
  what they run: ``xargs CMD`` is judged as ``CMD``, ``find`` is denied with
  ``-exec``, ``-execdir``, ``-ok``, ``-okdir``, ``-delete`` or ``-fprint*``;
* nothing writes to a protected path: redirect targets and ``tee`` file arguments
  are normalised (``$HOME``, ``${HOME}`` and ``~`` are the same place; ``//`` and
  ``..`` are collapsed) before they are compared with :data:`PROTECTED`, and a
  write target that still holds a ``$`` expansion is denied, since it could be
  anywhere.

Every command or process substitution is also judged again from its own text,
because bashlex drops whatever follows a newline inside one.  Anything bashlex
cannot parse is denied.  This is the version fixed after the
first run of ``assay compose``; ``shell_classifier_v1.py`` is the version it ran on.
"""

from __future__ import annotations

import posixpath
import re

import bashlex

#: Commands allowed with any arguments (subject to the checks above).
ALLOWED = {
    "ls",
    "cat",
    "echo",
    "grep",
    "wc",
    "head",
    "tail",
    "sort",
    "uniq",
    "cut",
    "tr",
    "pwd",
    "whoami",
    "date",
    "true",
    "false",
    "printf",
    "diff",
    "file",
    "stat",
    "du",
    "df",
    "basename",
    "dirname",
    "which",
    "find",
    "xargs",
    "tee",
}
#: ``git`` subcommands that only read.
GIT_READ = {"status", "log", "diff", "show", "branch", "rev-parse"}
#: Places no command may write to (after normalisation, ``~`` for the home folder).
PROTECTED = ("/etc", "~/.ssh", "~/.bashrc", "~/.profile", "~/.bash_profile", "/dev/sd", "/boot", "/usr", "/bin")
#: ``find`` actions that run commands, delete or write files.
FIND_ACTIONS = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
#: ``xargs`` options that take a separate argument.
XARGS_OPTS_WITH_ARG = {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter"}

_HOME = re.compile(r"^(\$HOME|\$\{HOME\}|~)(?=/|$)")


def normalise(path: str) -> str:
    """A write target as a comparable path: home spelled ``~``, ``//`` and ``..`` collapsed."""
    path = _HOME.sub("~", path)
    if path.startswith("/") or path.startswith("~"):  # noqa: PIE810 - a fuzz target: two calls, two branches
        return posixpath.normpath(path)
    return path


def protected(path: str) -> bool:
    """True if writing ``path`` may touch a protected place (or cannot be known)."""
    if "$" in path or "`" in path:
        return True
    p = normalise(path)
    return any(p == q or p.startswith(q + "/") or (q.startswith("/dev/") and p.startswith(q)) for q in PROTECTED)


def command_allowed(words: list[str]) -> bool:
    """Judge one simple command by its (expanded-as-written) words."""
    if not words:
        return True
    head, args = words[0], words[1:]
    if head == "git":
        return bool(args) and args[0] in GIT_READ
    if head not in ALLOWED:
        return False
    if head == "xargs":
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in XARGS_OPTS_WITH_ARG else 1
        return command_allowed(args[i:])  # xargs with no command runs echo
    if head == "find":
        return not any(a in FIND_ACTIONS for a in args)
    if head == "tee":
        return not any(protected(a) for a in args if not a.startswith("-"))
    return True


def _unbacktick(text: str) -> str:
    """The command inside backticks: ``\\``, ``\\` ``, ``\\$`` and ``\\"`` lose their backslash."""
    return re.sub(r'\\([\\`$"])', r"\1", text)


class _Judge(bashlex.ast.nodevisitor):
    """Walks a bashlex tree; ``ok`` turns False at the first thing not allowed."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.ok = True

    def _substitution(self, n) -> None:
        # bashlex stops parsing a substitution at its first newline and silently
        # drops the rest, so each substitution's own text is judged again, whole.
        text = self.source[n.pos[0] : n.pos[1]]
        if text.startswith("`") and len(text) >= 2 and text.endswith("`"):
            inner = _unbacktick(text[1:-1])
        elif text[:2] in ("$(", "<(", ">(") and text.endswith(")"):
            inner = text[2:-1]
        else:
            self.ok = False  # truncated by the parser: cannot know what runs
            return
        if not is_allowed(inner):
            self.ok = False

    def visitcommandsubstitution(self, n, command):
        self._substitution(n)

    def visitprocesssubstitution(self, n, command):
        self._substitution(n)

    def visitcommand(self, n, parts):
        words = [p.word for p in parts if p.kind == "word"]
        if not command_allowed(words):
            self.ok = False

    def visitredirect(self, n, input, type, output, heredoc):
        if type in (">", ">>", ">|", "&>", "<>", ">&") and hasattr(output, "word") and protected(output.word):
            self.ok = False


def is_allowed(command: str) -> bool:
    """True if ``command`` only runs allowlisted commands and writes nothing protected."""
    try:
        trees = bashlex.parse(command)
    except Exception:  # noqa: BLE001 - anything bashlex cannot parse is denied
        return False
    judge = _Judge(command)
    for tree in trees:
        judge.visit(tree)
    return judge.ok
