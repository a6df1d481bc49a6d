"""Mutation operators: the small changes of a function's code a test suite should notice.

Design
------
One visitor walks a function's statements in source order and asks each node it
reaches which edits apply to it; every edit is an :class:`~assay.mutant.model.Edit`
over the node's own span (AST lines and UTF-8 byte columns, untouched), so the
caller can apply it to the file text with :func:`~assay.mutant.model.apply_edit`
without moving any other line.  Replacements are rendered with :func:`ast.unparse`
from a shallow copy of the node with one field changed, never from the original
text, so they always parse whatever the original formatting was; ``apply_edit``
parenthesizes expressions, so precedence around them cannot change.

The operators come in two groups.  The general ones (comparisons, arithmetic,
constants, ``and``/``or``, returned values, dropped calls) are the classic
mutation-testing set and live here.  The control-oriented ones live in
:mod:`assay.mutant.operators_control`: they target guards and validations (a
``raise`` under an ``if``, a guard that never or always fires, one clause of a
condition, a comprehension filter, a keyword argument that differs from the
callee's default), because a guard that no test misses is what the tool is for.

What the visitor skips, and why:

* nested ``def``/``async def``/``class``: the caller visits each function as its
  own unit, so entering them here would report their mutants twice;
* decorators, default argument values and annotations: evaluated once at
  definition time, outside the function whose code object is swapped;
* assignment, ``for``, ``with ... as`` and comprehension targets, ``del``
  targets, ``global``/``nonlocal``: a mutated target is a different binding, not
  a mutated computation, and many replacements would not even parse there;
* docstrings (any bare constant statement: a docstring, a string used as a
  comment, ``...``) and f-strings: text no test asserts on, whose mutants would
  only be noise (f-strings also nest expressions whose spans are awkward to
  replace on 3.12);
* ``match`` patterns: patterns only admit literals and dotted names, so most
  expression replacements would not parse;
* string messages of ``raise`` and ``assert``: emptying an error message is a
  mutant that almost every suite lets survive and that says nothing about the
  guard itself, which the control operators already cover;
* ``%`` with a string on the left: it formats, it does not compute.

Two overlaps between families are removed at the source, since each would be
the same mutant reported twice: ``condition.negate`` leaves a test that is a
single ``==``/``!=``/``is``/``in`` comparison to ``compare.negate``, and
``value.widen-bound`` does not double ``1`` (``constant.adjust`` already makes
it ``2``).

The same statements always give the same edits in the same order: edits are
sorted by ``(line, col, operator)`` (stable, so the visitor's pre-order breaks
ties) and an edit repeating another's span and replacement within its family
is dropped.  An edit whose replacement renders exactly like the original (a
float too large for ``+ 1.0`` to change) is dropped too: it is no mutant.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass

from assay.mutant.model import EXPRESSION, STATEMENT, Edit
from assay.mutant.operators_control import (
    CONTROL_FAMILIES,
    comprehension_filters,
    dropped_clauses,
    dropped_keywords,
    guard_edits,
    quote,
    quoting_source,
    removed_raise,
    taken_branches,
)

GENERAL_FAMILIES = (
    "arithmetic.swap",
    "boolean.swap",
    "compare.boundary",
    "compare.negate",
    "condition.negate",
    "constant.adjust",
    "constant.empty",
    "return.value",
    "statement.delete",
    "value.widen-bound",
)

#: Every operator family, sorted; the names are stable (they appear in mutant ids).
FAMILIES: tuple[str, ...] = tuple(sorted(GENERAL_FAMILIES + CONTROL_FAMILIES))

#: Families applied outside functions (module- or class-level ``NAME = value``):
#: only those that change the assigned value's computation, since the caller
#: applies such a mutant by re-executing the one assignment.
ASSIGNMENT_FAMILIES = frozenset(
    {
        "arithmetic.swap",
        "boolean.swap",
        "compare.boundary",
        "compare.negate",
        "constant.adjust",
        "constant.empty",
        "value.widen-bound",
    }
)

#: Replacement for an emptied string constant that was already empty.
FILLER = "XX"

_BOUNDARY: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
}
_NEGATED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
# ``%`` becomes ``//`` rather than ``*`` so a string operand fails loudly instead
# of repeating; ``**`` becomes ``*`` (``x ** 2`` vs ``x * 2``).
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
    ast.BitXor: ast.BitAnd,
}
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.And: "and",
    ast.Or: "or",
}
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _no_resolution(node: ast.expr) -> object | None:
    return None


@dataclass
class OperatorContext:
    """What the operators may know about the code beyond its syntax.

    ``resolve(callee)`` returns the live object a callee expression names in the
    module (``None`` when unknown); only ``call.drop-keyword`` uses it.
    ``in_function`` is false for module- and class-level assignments, which get
    only the :data:`ASSIGNMENT_FAMILIES`.
    """

    resolve: Callable[[ast.expr], object | None] = _no_resolution
    in_function: bool = True
    #: The file's lines (:func:`~assay.mutant.operators_control.source_lines`): descriptions then
    #: quote the code as written (``0x7f``, ``"ab"``); without them, as the parser reads it.
    source: list[bytes] | None = None


def edits_in(statements: list[ast.stmt], ctx: OperatorContext) -> list[Edit]:
    """Every mutation of ``statements``, in source order (by ``(line, col, operator)``).

    Walks into compound statements, lambdas and comprehensions but not into
    nested functions and classes, decorators, default values, annotations,
    f-strings, assignment targets or docstrings (see the module docstring).
    """
    walker = _Walker(ctx)
    with quoting_source(ctx.source):
        walker.statements(statements)
    edits = sorted(walker.edits, key=lambda e: (e.line, e.col, e.operator))
    seen: set[tuple[str, int, int, int, int, str]] = set()
    unique = []
    for edit in edits:
        key = (edit.operator, edit.line, edit.col, edit.end_line, edit.end_col, edit.replacement)
        if key not in seen:
            seen.add(key)
            unique.append(edit)
    return unique


def _header(stmt: ast.stmt, keyword: str) -> str:
    """How a description names the statement an edit sits in: its first line, roughly."""
    if isinstance(stmt, ast.If):
        return f"{keyword} {quote(stmt.test, bare=True)}"
    if isinstance(stmt, ast.While):
        return f"while {quote(stmt.test, bare=True)}"
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return f"for {quote(stmt.target, bare=True)} in {quote(stmt.iter, bare=True)}"
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return "with " + quote(", ".join(ast.unparse(item) for item in stmt.items), bare=True)
    if isinstance(stmt, (ast.Try, ast.TryStar)):
        return "try"
    if isinstance(stmt, ast.Match):
        return f"match {quote(stmt.subject, bare=True)}"
    return quote(stmt, bare=True)


def _number(node: ast.expr) -> int | float | None:
    """The value of a numeric literal (``-5`` included), or None; ``bool`` is no number."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None or not isinstance(node.operand, ast.Constant) else -inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value  # type: ignore[return-value]  # an int or a float
    return None


class _Walker:
    """The one visitor: collects edits while walking statements in pre-order."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx
        self.edits: list[Edit] = []
        self.place: tuple[ast.stmt, str] | None = None
        self.quiet_strings = False

    # -- emitting -------------------------------------------------------------

    def emit(self, operator: str, node: ast.AST, replacement: str, description: str, kind: str) -> None:
        if not self.ctx.in_function and operator not in ASSIGNMENT_FAMILIES:
            return
        # Only a literal can render like its replacement (``if True`` made to
        # always fire, a float too large for ``+ 1.0``); other nodes never do.
        if isinstance(node, ast.Constant) and replacement == ast.unparse(node):
            return
        self.edits.append(
            Edit(
                operator,
                node.lineno,  # type: ignore[attr-defined]
                node.col_offset,  # type: ignore[attr-defined]
                node.end_lineno,  # type: ignore[attr-defined]
                node.end_col_offset,  # type: ignore[attr-defined]
                replacement,
                description,
                kind,
            )
        )

    def where(self) -> str:
        if self.place is None:
            return "the function"
        return quote(_header(*self.place))

    # -- statements -----------------------------------------------------------

    def statements(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt, keyword: str = "if") -> None:
        if isinstance(stmt, _NESTED_SCOPES):
            return
        saved = self.place
        self.place = (stmt, keyword)
        visit = getattr(self, "stmt_" + type(stmt).__name__, None)
        if visit is not None:
            visit(stmt)
        self.place = saved

    def guarded(self, body: list[ast.stmt], where: str) -> None:
        """Statements of an ``if``/``elif``/``else`` branch: the raises there are guards."""
        for stmt in body:
            if isinstance(stmt, ast.Raise):
                removed_raise(self.emit, stmt, where)
            self.statement(stmt)

    def stmt_Expr(self, stmt: ast.Expr) -> None:
        value = stmt.value
        if isinstance(value, ast.Constant):
            return  # a docstring, a string used as a comment, `...`: no computation
        call = value.value if isinstance(value, ast.Await) else value
        if isinstance(call, ast.Call):
            self.emit("statement.delete", stmt, "pass", f"removed the call {quote(value)}", STATEMENT)
        self.expr(value)

    def stmt_Assign(self, stmt: ast.Assign) -> None:
        self.expr(stmt.value)

    def stmt_AnnAssign(self, stmt: ast.AnnAssign) -> None:
        self.expr(stmt.value)

    def stmt_AugAssign(self, stmt: ast.AugAssign) -> None:
        swapped = _ARITHMETIC.get(type(stmt.op))
        if swapped is not None:
            mutant = copy.copy(stmt)
            mutant.op = swapped()
            old, new = _SYMBOLS[type(stmt.op)] + "=", _SYMBOLS[swapped] + "="
            self.emit(
                "arithmetic.swap", stmt, ast.unparse(mutant), f"`{old}` became `{new}` in {quote(stmt)}", STATEMENT
            )
        self.expr(stmt.value)

    def stmt_Return(self, stmt: ast.Return) -> None:
        value = stmt.value
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return
        self.emit("return.value", stmt, "return None", f"{quote(stmt)} became `return None`", STATEMENT)
        self.expr(value)

    def stmt_Delete(self, stmt: ast.Delete) -> None:
        self.emit("statement.delete", stmt, "pass", f"removed {quote(stmt)}", STATEMENT)

    def stmt_If(self, stmt: ast.If) -> None:
        keyword = self.place[1] if self.place is not None else "if"
        head = _header(stmt, keyword)
        self.test(stmt.test, head)
        guard_edits(self.emit, stmt, head)
        self.expr(stmt.test)
        self.guarded(stmt.body, f"under {quote(head)}")
        orelse = stmt.orelse
        # An ``elif`` is an If alone in the orelse, starting at the ``elif``
        # keyword, i.e. at the same column as its parent (``else: if`` is indented).
        if len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == stmt.col_offset:
            self.statement(orelse[0], "elif")
        else:
            self.guarded(orelse, f"in the `else` of {quote(head)}")

    def stmt_While(self, stmt: ast.While) -> None:
        self.test(stmt.test, _header(stmt, "while"))
        self.expr(stmt.test)
        self.statements(stmt.body)
        self.statements(stmt.orelse)

    def stmt_For(self, stmt: ast.For | ast.AsyncFor) -> None:
        self.expr(stmt.iter)
        self.statements(stmt.body)
        self.statements(stmt.orelse)

    stmt_AsyncFor = stmt_For

    def stmt_With(self, stmt: ast.With | ast.AsyncWith) -> None:
        for item in stmt.items:
            self.expr(item.context_expr)
        self.statements(stmt.body)

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, stmt: ast.Try | ast.TryStar) -> None:
        self.statements(stmt.body)
        for handler in stmt.handlers:
            self.expr(handler.type)
            self.statements(handler.body)
        self.statements(stmt.orelse)
        self.statements(stmt.finalbody)

    stmt_TryStar = stmt_Try

    def stmt_Match(self, stmt: ast.Match) -> None:
        self.expr(stmt.subject)
        for case in stmt.cases:
            self.expr(case.guard)
            self.statements(case.body)

    def stmt_Raise(self, stmt: ast.Raise) -> None:
        self.quiet_strings = True
        self.expr(stmt.exc)
        self.expr(stmt.cause)
        self.quiet_strings = False

    def stmt_Assert(self, stmt: ast.Assert) -> None:
        dropped_clauses(self.emit, stmt.test)
        self.expr(stmt.test)
        self.quiet_strings = True
        self.expr(stmt.msg)
        self.quiet_strings = False

    def test(self, test: ast.expr, head: str) -> None:
        """The test of an ``if``/``elif``/``while`` or conditional expression."""
        dropped_clauses(self.emit, test)
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED:
            return  # ``not a == b`` is compare.negate's ``a != b`` again
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            negated: ast.expr = test.operand
        else:
            negated = ast.UnaryOp(ast.Not(), test)
        self.emit("condition.negate", test, ast.unparse(negated), f"negated the test of {quote(head)}", EXPRESSION)

    # -- expressions ----------------------------------------------------------

    def formats(self, op: ast.operator, left: ast.expr) -> bool:
        """Whether ``left % ...`` is string formatting rather than arithmetic."""
        return isinstance(op, ast.Mod) and (
            isinstance(left, ast.JoinedStr) or (isinstance(left, ast.Constant) and isinstance(left.value, (str, bytes)))
        )

    def expr(self, node: ast.expr | None) -> None:
        if node is None or isinstance(node, ast.JoinedStr):
            return
        visit = getattr(self, "expr_" + type(node).__name__, None)
        if visit is not None:
            visit(node)
        for child in _children(node):
            self.expr(child)

    def expr_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            new = repr(not value)
            self.emit("constant.empty", node, new, f"`{value!r}` became `{new}` in {self.where()}", EXPRESSION)
        elif isinstance(value, (int, float)):
            new = ast.unparse(ast.Constant(value + 1))
            self.emit("constant.adjust", node, new, f"{quote(node)} became `{new}` in {self.where()}", EXPRESSION)
        elif isinstance(value, (str, bytes)) and not self.quiet_strings:
            empty = value[:0]
            new = repr(empty if value else (FILLER if isinstance(value, str) else FILLER.encode()))
            self.emit("constant.empty", node, new, f"{quote(node)} became `{new}` in {self.where()}", EXPRESSION)

    def expr_Compare(self, node: ast.Compare) -> None:
        for position, op in enumerate(node.ops):
            for family, table in (("compare.boundary", _BOUNDARY), ("compare.negate", _NEGATED)):
                swapped = table.get(type(op))
                if swapped is None:
                    continue
                mutant = copy.copy(node)
                mutant.ops = [*node.ops[:position], swapped(), *node.ops[position + 1 :]]
                description = f"`{_SYMBOLS[type(op)]}` became `{_SYMBOLS[swapped]}` in {quote(node)}"
                self.emit(family, node, ast.unparse(mutant), description, EXPRESSION)
        for operand in (node.left, *node.comparators):
            number = _number(operand)
            # 0 cannot widen, and doubling +-1 is exactly constant.adjust's mutant.
            if number is None or abs(number) in (0, 1):
                continue
            new = ast.unparse(ast.Constant(number * 2)) if number > 0 else "-" + ast.unparse(ast.Constant(-number * 2))
            description = f"{quote(operand)} widened to `{new}` in {quote(node)}"
            self.emit("value.widen-bound", operand, new, description, EXPRESSION)

    def expr_BoolOp(self, node: ast.BoolOp) -> None:
        mutant = copy.copy(node)
        mutant.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        description = f"`{_SYMBOLS[type(node.op)]}` became `{_SYMBOLS[type(mutant.op)]}` in {quote(node)}"
        self.emit("boolean.swap", node, ast.unparse(mutant), description, EXPRESSION)

    def expr_BinOp(self, node: ast.BinOp) -> None:
        swapped = _ARITHMETIC.get(type(node.op))
        if swapped is None or self.formats(node.op, node.left):
            return
        mutant = copy.copy(node)
        mutant.op = swapped()
        description = f"`{_SYMBOLS[type(node.op)]}` became `{_SYMBOLS[swapped]}` in {quote(node)}"
        self.emit("arithmetic.swap", node, ast.unparse(mutant), description, EXPRESSION)

    def expr_IfExp(self, node: ast.IfExp) -> None:
        self.test(node.test, quote(node, bare=True))
        taken_branches(self.emit, node)

    def expr_Call(self, node: ast.Call) -> None:
        dropped_keywords(self.emit, node, self.ctx.resolve)

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        comprehension_filters(self.emit, node)

    expr_ListComp = expr_SetComp = expr_DictComp = expr_GeneratorExp = comprehension


def _children(node: ast.expr) -> list[ast.expr]:
    """The sub-expressions the walker enters: evaluated ones only, never targets or defaults."""
    if isinstance(node, ast.Lambda):
        return [node.body]
    if isinstance(node, ast.NamedExpr):
        return [node.value]
    if isinstance(node, ast.Call):
        return [node.func, *node.args, *(keyword.value for keyword in node.keywords)]
    if isinstance(node, _COMPREHENSIONS):
        heads = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for generator in node.generators:
            heads.append(generator.iter)
            heads.extend(generator.ifs)
        return heads
    return [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)]
