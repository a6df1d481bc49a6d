"""Which public functions get a target, and why each is picked or skipped."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from assay.scaffold.api import Function, Project
from assay.scaffold.arguments import Argument, Unbuildable, arguments, is_input, kind_label
from assay.scaffold.contract import Expected, contract, converts_errors
from assay.scaffold.effects import side_effect


@dataclass(frozen=True)
class Picked:
    """A function that gets a target: how to call it and what it promises."""

    fn: Function
    args: list[Argument]
    expected: list[Expected]
    generator: bool  # its result is drained (a generator runs only when iterated)
    converts: str = ""  # where it converts other errors into its own ("": nowhere; then no expected_from)

    @property
    def target_name(self) -> str:
        return self.fn.public.replace(".", "_")


@dataclass(frozen=True)
class Decision:
    """One line of init's output: a function picked or skipped, and why."""

    public: str
    picked: bool
    why: str

    def line(self) -> str:
        return f"{'picked ' if self.picked else 'skipped'} {self.public}: {self.why}"


def select(project: Project) -> tuple[list[Picked], list[Decision]]:
    """The functions that get a target, and one decision per public function."""
    picked: list[Picked] = []
    decisions: list[Decision] = []
    for fn in project.functions():
        why = _refusal(project, fn)
        if isinstance(why, str):
            decisions.append(Decision(fn.public, False, why))
            continue
        args = why
        chosen = Picked(fn, args, contract(project, fn), _is_generator(fn.node), converts_errors(project, fn))
        picked.append(chosen)
        takes = ", ".join(f"{a.name} ({kind_label(a.kind)}{', guessed' if a.guessed else ''})" for a in args)
        raises = ", ".join(e.dotted for e in chosen.expected) or "nothing promised"
        decisions.append(Decision(fn.public, True, f"takes {takes}; expects {raises}"))
    return picked, decisions


def _refusal(project: Project, fn: Function) -> str | list[Argument]:
    """Why ``fn`` gets no target, or its arguments."""
    if isinstance(fn.node, ast.AsyncFunctionDef):
        return "a coroutine function (async def); write its target by hand with asyncio.run"
    effect = side_effect(project, fn)
    if effect:
        return f"side effects outside the sandbox: {effect}"
    args = arguments(project, fn)
    if isinstance(args, Unbuildable):
        return f"{args.why}; write its target by hand"
    if not args:
        return "takes no arguments"
    if not is_input(args):
        return "takes no untrusted input (" + ", ".join(f"{a.name}: {kind_label(a.kind)}" for a in args) + ")"
    return args


def _is_generator(node: ast.AST) -> bool:
    todo = list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        if isinstance(child, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo += ast.iter_child_nodes(child)
    return False
