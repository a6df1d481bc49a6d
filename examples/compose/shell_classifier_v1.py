"""First version of the example classifier (kept to show what ``assay compose`` found).

This is the classifier as first written, before the composition oracle was run on
it.  ``shell_classifier.py`` is the fixed version; README.md lists what the run found.
"""

from __future__ import annotations

import bashlex

#: Commands allowed with any arguments.
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
#: Path prefixes no redirect may target.
PROTECTED = ("/etc/", "~/.ssh/", "~/.bashrc", "~/.profile", "/dev/sd")


class _Judge(bashlex.ast.nodevisitor):
    def __init__(self) -> None:
        self.ok = True

    def visitcommand(self, n, parts):
        words = [p.word for p in parts if p.kind == "word"]
        if not words:
            return
        if words[0] == "git":
            if len(words) < 2 or words[1] not in GIT_READ:
                self.ok = False
        elif words[0] not in ALLOWED:
            self.ok = False

    def visitredirect(self, n, input, type, output, heredoc):
        target = getattr(output, "word", "")
        if any(target.startswith(p) for p in PROTECTED):
            self.ok = False


def is_allowed(command: str) -> bool:
    """True if every command in ``command`` is on the allowlist and no redirect hits a protected path."""
    try:
        trees = bashlex.parse(command)
    except Exception:  # anything bashlex cannot parse is denied
        return False
    judge = _Judge()
    for tree in trees:
        judge.visit(tree)
    return judge.ok
