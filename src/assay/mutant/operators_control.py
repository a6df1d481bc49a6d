"""Control-oriented mutation operators: the guards and validations a suite should pin down.

The classic operators (in :mod:`assay.mutant.operators`) perturb computations;
these remove *decisions*.  A surviving mutant here reads as a missing test in a
post-mortem's words: "removed the raise under ``if len(data) > MAX``" survived,
so no test sends oversized data.  Each function receives the visitor's ``emit``
callback and one node, and emits edits over that node's own span; the visitor
in :mod:`assay.mutant.operators` decides where each applies (which nodes are
guards, which expressions are tests) and orders the result.

``call.drop-keyword`` is the one operator that looks beyond syntax: it drops a
keyword argument only when the live callee has a default for it that differs
from the value passed, so the mutant is neither a TypeError nor a no-op.
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from assay.mutant.model import EXPRESSION, STATEMENT

#: ``emit(operator, node, replacement, description, kind)``: the visitor's sink.
Emit = Callable[[str, ast.AST, str, str, str], None]

CONTROL_FAMILIES = (
    "call.drop-keyword",
    "comprehension.drop-clause",
    "expression.take-branch",
    "guard.always-fires",
    "guard.never-fires",
    "guard.remove-raise",
    "predicate.drop-clause",
)

#: Longest source quote in a description; longer ones are cut with "...".
QUOTE_CHARS = 60

_EXITS: dict[type[ast.stmt], str] = {
    ast.Raise: "raise",
    ast.Return: "return",
    ast.Continue: "continue",
    ast.Break: "break",
}
_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr)


#: The lines (UTF-8) of the file whose edits are being made, while :func:`quoting_source` is active.
_SOURCE: ContextVar[list[bytes] | None] = ContextVar("assay_mutant_source", default=None)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SPACE_AROUND_BREAK = re.compile(r"\s*\n\s*")


def source_lines(text: str) -> list[bytes]:
    """``text`` split where the parser counts lines (``\\n``, ``\\r\\n``, ``\\r``), as UTF-8 bytes."""
    return [line.encode("utf-8") for line in _LINE_BREAK.split(text)]


@contextmanager
def quoting_source(lines: list[bytes] | None) -> Iterator[None]:
    """While active, :func:`quote` shows a node as it is written in ``lines`` (``0x7f``, not ``127``)."""
    token = _SOURCE.set(lines)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def _written(node: ast.AST) -> str:
    """``node`` as the source writes it, when the source is known; else as the parser reads it."""
    lines = _SOURCE.get()
    end = getattr(node, "end_lineno", None)
    if lines is None or end is None or end > len(lines):
        return ast.unparse(node)
    first, col, end_col = node.lineno, node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if first == end:
        raw = lines[first - 1][col:end_col]
    else:
        raw = b"\n".join([lines[first - 1][col:], *lines[first : end - 1], lines[end - 1][:end_col]])
    text = raw.decode("utf-8", "replace")
    if "#" in text and "\n" in text:  # a comment inside a multi-line expression would read as code
        return ast.unparse(node)
    return _SPACE_AROUND_BREAK.sub(" ", text)


def quote(node: ast.AST | str, *, bare: bool = False) -> str:
    """Source of ``node`` (or ``node`` itself) for a description, cut to :data:`QUOTE_CHARS`."""
    text = node if isinstance(node, str) else _written(node)
    text = text.replace("\n", " ")
    if len(text) > QUOTE_CHARS:
        text = text[: QUOTE_CHARS - 3] + "..."
    return text if bare else f"`{text}`"


def removed_raise(emit: Emit, stmt: ast.Raise, where: str) -> None:
    """``guard.remove-raise``: a raise directly in an ``if``/``elif``/``else`` branch becomes ``pass``."""
    emit("guard.remove-raise", stmt, "pass", f"removed the raise {where}", STATEMENT)


def guard_edits(emit: Emit, stmt: ast.If, head: str) -> None:
    """``guard.never-fires``/``guard.always-fires``: the test of an ``if`` that leaves its block.

    Only an ``if`` whose body directly raises, returns, continues or breaks is a
    guard; its test becomes ``False`` (the exit never happens) and ``True`` (it
    always happens).
    """
    exits = [_EXITS[type(s)] for s in stmt.body if type(s) in _EXITS]
    if not exits:
        return
    under = f"the {exits[0]} under {quote(head)}"
    emit("guard.never-fires", stmt.test, "False", f"{under} never fires (its test became `False`)", EXPRESSION)
    emit("guard.always-fires", stmt.test, "True", f"{under} always fires (its test became `True`)", EXPRESSION)


def dropped_clauses(emit: Emit, test: ast.expr) -> None:
    """``predicate.drop-clause``: each operand of each ``and``/``or`` in a test, removed.

    Lambdas, comprehensions and f-strings inside the test are not the predicate
    itself, so their clauses are left to the other operators.
    """
    pending = [test]
    while pending:
        node = pending.pop()
        if isinstance(node, _OWN_SCOPES):
            continue
        if isinstance(node, ast.BoolOp):
            for position, clause in enumerate(node.values):
                rest = [*node.values[:position], *node.values[position + 1 :]]
                mutant = rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)
                description = f"dropped the clause {quote(clause)} from {quote(node)}"
                emit("predicate.drop-clause", node, ast.unparse(mutant), description, EXPRESSION)
        pending.extend(reversed([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]))


def taken_branches(emit: Emit, node: ast.IfExp) -> None:
    """``expression.take-branch``: ``x if c else y`` becomes ``x``, and separately ``y``."""
    for branch in (node.body, node.orelse):
        description = f"{quote(node)} always took {quote(branch)}"
        emit("expression.take-branch", node, ast.unparse(branch), description, EXPRESSION)


def comprehension_filters(emit: Emit, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
    """``comprehension.drop-clause``: each ``if`` filter of a comprehension, removed."""
    for index, generator in enumerate(node.generators):
        for position, condition in enumerate(generator.ifs):
            trimmed = copy.copy(generator)
            trimmed.ifs = [*generator.ifs[:position], *generator.ifs[position + 1 :]]
            mutant = copy.copy(node)
            mutant.generators = [*node.generators[:index], trimmed, *node.generators[index + 1 :]]
            description = f"dropped the filter `if {quote(condition, bare=True)}` from {quote(node)}"
            emit("comprehension.drop-clause", node, ast.unparse(mutant), description, EXPRESSION)


def dropped_keywords(emit: Emit, call: ast.Call, resolve: Callable[[ast.expr], object | None]) -> None:
    """``call.drop-keyword``: a keyword argument dropped where the callee's default differs.

    Emits nothing when the callee does not resolve, has no signature, takes the
    keyword through ``**kwargs`` or without a default (dropping it would only be a
    TypeError), or when the value passed is a literal equal to the default (an
    equivalent mutant).
    """
    named = [keyword for keyword in call.keywords if keyword.arg is not None]
    if not named:
        return
    # The resolver and the callee are user code: any failure means "unknown".
    try:
        target = resolve(call.func)
        if target is None or not callable(target):
            return
        parameters = inspect.signature(target).parameters
    except Exception:
        return
    for keyword in named:
        parameter = parameters.get(keyword.arg)  # type: ignore[arg-type]
        if parameter is None or parameter.kind not in _KEYWORD_KINDS:
            continue
        if parameter.default is inspect.Parameter.empty or _is_default(keyword.value, parameter.default):
            continue
        mutant = copy.copy(call)
        mutant.keywords = [k for k in call.keywords if k is not keyword]
        description = f"dropped `{keyword.arg}={quote(keyword.value, bare=True)}` from the call to {quote(call.func)}"
        emit("call.drop-keyword", call, ast.unparse(mutant), description, EXPRESSION)


def _is_default(value: ast.expr, default: object) -> bool:
    """Whether ``value`` is a literal equal to ``default`` (and of the same type)."""
    try:
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    try:
        return type(literal) is type(default) and bool(literal == default)
    except Exception:  # a default with an exotic __eq__ is just "not equal"
        return False
