"""Mutants as data: the source edit an operator proposes, and the mutant built from it.

An :class:`Edit` replaces one span of a file's text (an expression or a statement)
with new text.  A :class:`Mutant` places that edit in its function and gives it a
stable identity::

    <file relative to the project>::<function qualname>::<operator>#<k>@<digest>

``k`` counts the edits of that operator within the function in source order and
``digest`` hashes the function's source text, so an id survives edits elsewhere in
the file and changes when its own function changes.  Spans use the AST's
coordinates: 1-based lines, columns as UTF-8 byte offsets.
"""

from __future__ import annotations

import ast
import difflib
import functools
import hashlib
import re
from dataclasses import asdict, dataclass
from typing import Any

#: Hex digits of the function digest kept in a mutant id.
ID_DIGEST_CHARS = 10
#: Name used as the qualname of code outside any function.
MODULE_SCOPE = "<module>"

EXPRESSION = "expr"
STATEMENT = "stmt"


@dataclass(frozen=True)
class Edit:
    """One proposed change of the source text.

    ``kind`` is :data:`EXPRESSION` (the replacement is an expression; it is
    parenthesized when applied, so precedence never changes around it) or
    :data:`STATEMENT` (the replacement is one or more complete statements at the
    original statement's indentation, such as ``pass``).  ``description`` says in
    a post-mortem's words what the mutant removed or changed.
    """

    operator: str
    line: int
    col: int
    end_line: int
    end_col: int
    replacement: str
    description: str
    kind: str = EXPRESSION


@dataclass(frozen=True)
class Mutant:
    """An edit placed in its function, with everything needed to apply it.

    ``unit`` is the qualname of the function whose code object is swapped to apply
    the mutant (the outermost function enclosing the edit that the module reaches
    by attribute: a top-level function or a method), ``unit_line`` and
    ``unit_end_line`` its span including decorators, and ``wrappers`` the class
    headers around it as ``(line, indentation, name)``.  A mutant outside any
    function (``unit == ""``) is applied by re-executing the mutated assignment
    statement spanning ``unit_line..unit_end_line``, or the whole module.
    ``reexec`` marks a mutant inside a function that runs while its module is
    imported: it is applied by re-executing the module (as every module-level
    mutant is), so what the import built changes too.
    """

    path: str  # absolute, resolved
    relpath: str  # relative to the project root, with forward slashes
    qualname: str  # innermost enclosing function, or MODULE_SCOPE
    operator: str
    index: int
    digest: str
    edit: Edit
    unit: str
    unit_line: int
    unit_end_line: int
    wrappers: tuple[tuple[int, int, str], ...] = ()
    reexec: bool = False

    @property
    def id(self) -> str:
        return f"{self.relpath}::{self.qualname}::{self.operator}#{self.index}@{self.digest[:ID_DIGEST_CHARS]}"

    @property
    def line(self) -> int:
        return self.edit.line

    @property
    def end_line(self) -> int:
        return self.edit.end_line

    @property
    def family(self) -> str:
        return self.operator

    @property
    def description(self) -> str:
        return self.edit.description

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["id"] = self.id
        data["wrappers"] = [list(w) for w in self.wrappers]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Mutant:
        fields = {k: v for k, v in data.items() if k != "id"}
        fields["edit"] = Edit(**fields["edit"])
        fields["wrappers"] = tuple(tuple(w) for w in fields.get("wrappers", ()))
        return cls(**fields)


def function_digest(text: str) -> str:
    """SHA-256 of a function's source text (its identity in mutant ids and history)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def id_digest(mutant_id: str) -> str:
    """SHA-256 of a mutant id: its folder name under ``<artifacts>/mutants/``."""
    return hashlib.sha256(mutant_id.encode("utf-8")).hexdigest()


def apply_edit(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` applied, keeping every other line at its line number.

    An expression replacement is parenthesized; a replacement shorter (in lines)
    than the span it replaces is padded with newlines inside the parentheses, or
    after the rest of the statement's last line, so code after it keeps its line
    numbers.
    """
    lines = text.splitlines(keepends=True)
    return "".join(lines[: edit.line - 1]) + edited_span(lines, edit) + "".join(lines[edit.end_line :])


def edited_span(lines: list[str], edit: Edit, display: bool = False) -> str:
    """The text that replaces lines ``edit.line..edit.end_line``: as many lines as they were.

    With ``display`` (for people, never compiled): no padding, and no parentheses
    around a replacement that is a name, literal, call, attribute or subscript.
    """
    first = lines[edit.line - 1].encode("utf-8")
    last = lines[edit.end_line - 1].encode("utf-8")
    before = first[: edit.col].decode("utf-8")
    after = last[edit.end_col :].decode("utf-8")
    spanned = edit.end_line - edit.line
    replacement = edit.replacement
    pad = "" if display else "\n" * max(0, spanned - replacement.count("\n"))
    if edit.kind == EXPRESSION:
        if display and _is_atom(replacement):
            return f"{before}{replacement}{after}"
        return f"{before}({replacement}{pad}){after}"
    indent = " " * len(before) if not before.strip() else ""
    stmt_lines = replacement.split("\n")
    new = stmt_lines[0] + "".join("\n" + indent + s for s in stmt_lines[1:])
    # The rest of the last line (`; more()`, a comment) stays on the statement's line.
    if pad and not after.endswith("\n"):
        after += "\n"
        pad = pad[1:]
    return before + new + after + pad


def _is_atom(source: str) -> bool:
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(
        node, (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple, ast.Dict, ast.Set)
    )


def unified_diff(text: str, mutant: Mutant, context: int = 3) -> str:
    """The mutant as a unified diff of its file (``a/`` original, ``b/`` mutant), for people.

    Only a window of lines around the edit is compared (the rest of the file is the
    same on both sides), and the hunk's line numbers are shifted back to the file's,
    so a report can carry the diff of every mutant of a large file cheaply.
    """
    lines = _lines_of(text)
    edit = mutant.edit
    start = max(0, edit.line - 1 - context - 1)
    stop = min(len(lines), edit.end_line + context + 1)
    before = lines[start:stop]
    after = lines[start : edit.line - 1] + edited_span(lines, edit, display=True).splitlines(keepends=True)
    after += lines[edit.end_line : stop]
    out = []
    for row in difflib.unified_diff(
        before, after, fromfile=f"a/{mutant.relpath}", tofile=f"b/{mutant.relpath}", n=context
    ):
        if row.startswith("@@"):
            row = _HUNK.sub(lambda h: f"@@ -{int(h[1]) + start}{h[2] or ''} +{int(h[3]) + start}{h[4] or ''} @@", row)
        out.append(row)
    return "".join(out)


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@functools.lru_cache(maxsize=8)
def _lines_of(text: str) -> list[str]:
    """A file's lines, split once however many of its mutants are shown (never mutate the list)."""
    return text.splitlines(keepends=True)
