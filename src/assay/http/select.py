"""Which operations run: safe methods by default, allow-lists and exclusions.

A rule is matched against an operation as follows: ``tag:NAME`` (glob) matches
its tags; a rule holding ``/`` is a path glob on the path template, optionally
preceded by a method (``"POST /items*"``); anything else is a glob on the
``operationId``.  Only GET, HEAD and OPTIONS run unless a rule in ``allow``
matches; a rule in ``exclude`` removes an operation whatever its method.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from assay.core.errors import ConfigError
from assay.http.openapi import Operation

#: Methods that run without being allow-listed (they must not change state).
SAFE_METHODS = frozenset({"get", "head", "options"})


def matches(op: Operation, rule: str) -> bool:
    """Whether ``rule`` (see the module docstring) names ``op``."""
    if rule.startswith("tag:"):
        return any(fnmatch.fnmatchcase(tag, rule[4:]) for tag in op.tags)
    if "/" in rule:
        method, _, path = rule.partition(" ") if " " in rule.strip() else ("", "", rule)
        if method and method.lower() != op.method and method != "*":
            return False
        return fnmatch.fnmatchcase(op.path, path.strip())
    return fnmatch.fnmatchcase(op.operation_id, rule)


def select(ops: Iterable[Operation], allow: Iterable[str] = (), exclude: Iterable[str] = ()) -> list[Operation]:
    """The operations that may run; a :class:`ConfigError` naming what was left out if none may."""
    allow, exclude = list(allow), list(exclude)
    ops = list(ops)
    chosen = [
        op
        for op in ops
        if (op.method in SAFE_METHODS or any(matches(op, r) for r in allow))
        and not any(matches(op, r) for r in exclude)
    ]
    if not chosen:
        skipped = ", ".join(op.label for op in ops[:12]) or "none declared"
        raise ConfigError(
            f"no operation of the app may run (only GET/HEAD/OPTIONS run unless allow-listed; "
            f"operations: {skipped}); allow some with allow=['operationId', 'POST /path*', 'tag:NAME']"
        )
    return chosen
