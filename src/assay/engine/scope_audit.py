"""Where a target's executed Python code lies: in its coverage scope, or in which package outside it.

Run once after a campaign, on a few of its inputs, in a forked child set up as a
replay's; the scope hint (:mod:`assay.harness.scope_hint`) turns the answer into
a warning that names the package to add.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from assay.core.target import Target
from assay.engine import execute, isolate
from assay.feedback.executed import ExecutedCode
from assay.feedback.scope import INSTALLED, Scope
from assay.harness.imported import NOT_UNDER_TEST
from assay.harness.scope_hint import ExecutedLines

#: Inputs replayed (seeds and corpus entries, in order): enough to reach the code a
#: target's typical inputs reach, few enough to take well under a second.
AUDIT_INPUTS = 64
#: Longest the whole audit may take, in seconds; past it there is no answer and no warning.
AUDIT_TIMEOUT = 20.0


def executed_lines(target: Target, sources: Sequence[str], inputs: Sequence[bytes]) -> ExecutedLines | None:
    """Lines of code the inputs ran, in ``sources`` and per package outside them; ``None`` when unknown."""
    chosen = list(inputs[:AUDIT_INPUTS])
    if not chosen:
        return None
    harness_dir = os.path.dirname(os.path.realpath(target.defined_in)) if target.defined_in else None
    scope = Scope(sources)

    def body(send) -> None:  # noqa: ANN001 - the pipe's send
        monitor = ExecutedCode()
        monitor.start()
        try:
            for data in chosen:
                execute.run_input(target, data, timeout=target.timeout)
        finally:
            monitor.stop()
        send(_tally(monitor.lines_by_file(), scope, harness_dir))

    result = isolate.call_isolated(target, body, min(AUDIT_TIMEOUT, target.timeout * len(chosen) + 5.0))
    return ExecutedLines(result[0], dict(result[1])) if result else None


def _tally(by_file: dict[str, int], scope: Scope, harness_dir: str | None) -> tuple[int, list[tuple[str, int]]]:
    """(lines in scope, [(package, lines)] outside it), leaving out the standard library, tools and the harness."""
    packages = _package_of_files()
    inside, outside = 0, dict[str, int]()
    for file, lines in by_file.items():
        if scope.contains(file):
            inside += lines
            continue
        real = os.path.realpath(file) if not file.startswith("<") else file
        top = packages.get(real)
        if top is None or top in NOT_UNDER_TEST or top in sys.stdlib_module_names:
            continue
        if harness_dir and real.startswith(harness_dir + os.sep) and not INSTALLED & set(real.split(os.sep)):
            continue  # the harness and its helpers (a venv inside the harness's folder is not one)
        outside[top] = outside.get(top, 0) + lines
    return inside, sorted(outside.items(), key=lambda item: (-item[1], item[0]))


def _package_of_files() -> dict[str, str]:
    """Real path of each imported module's file -> its top-level package name."""
    found = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py"):
            found[os.path.realpath(file)] = name.partition(".")[0]
    return found
