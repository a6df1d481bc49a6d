"""Which branch directions of a code object announce themselves by a new instruction.

On 3.12/3.13 ``sys.monitoring`` has one ``BRANCH`` event per site, and returning
``DISABLE`` from it silences both directions.  A direction whose destination
instruction can be reached *only* through that branch (one predecessor in the
control-flow graph) needs no ``BRANCH`` event at all: the first time the
destination runs, its ``INSTRUCTION`` event fires, and that is the first time the
edge was taken.  Only a direction into a *join* (an instruction with several
predecessors: the end of an ``if`` without ``else``, the short-circuit exit of an
``and``/``or``, a loop head) must be watched through ``BRANCH`` until it is seen.

:func:`branch_layout` works that out once per code object from its bytecode.
"""

from __future__ import annotations

import dis
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import TypeVar

T = TypeVar("T")

_TERMINATORS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})
_UNCONDITIONAL = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"})
_CONDITIONAL = frozenset(
    {
        "POP_JUMP_IF_FALSE",
        "POP_JUMP_IF_TRUE",
        "POP_JUMP_IF_NONE",
        "POP_JUMP_IF_NOT_NONE",
        "FOR_ITER",
    }
)
#: An exhausted ``FOR_ITER`` jumps past the ``END_FOR`` its argument names (3.12),
#: or past ``END_FOR`` and the ``POP_TOP`` after it (3.13), and the ``BRANCH`` event
#: reports that later offset as the destination: the instructions it skips.
FOR_ITER_SKIPS = ("END_FOR",) if sys.version_info < (3, 13) else ("END_FOR", "POP_TOP")
#: Instructions of a straight-line run after a branch destination that are watched.
_CHAIN = 4


@dataclass
class BranchLayout:
    """Branch sites of one code object.

    ``watch`` maps an instruction offset to the edge ``(src, dst)`` whose first
    traversal its first execution proves; ``joins`` maps every site's ``src`` to
    the destinations that only a ``BRANCH`` event can report (often none).  A join
    still tells which edge reached it the *first* time it runs if only one of its
    predecessors has run by then (the first entry into a loop body, say, before
    the loop's back edge ever ran): ``join_preds`` gives what that check needs.
    """

    watch: dict[int, tuple[int, int]]
    joins: dict[int, tuple[int, ...]]
    #: join destination -> (all its predecessors, the sites that branch into it)
    join_preds: dict[int, tuple[tuple[int, ...], frozenset[int]]]


#: id(code) -> (code, its layout): kept alive, so an id is never reused.
_LAYOUTS: dict[int, tuple[CodeType, BranchLayout]] = {}


def once_per_code(cache: dict[int, tuple[CodeType, T]], code: CodeType, compute: Callable[[CodeType], T]) -> T:
    """``compute(code)``, remembered in ``cache`` (by id, the code kept alive) for this
    process and its forks."""
    hit = cache.get(id(code))
    if hit is None or hit[0] is not code:
        hit = cache[id(code)] = (code, compute(code))
    return hit[1]


def cached_layout(code: CodeType) -> BranchLayout:
    """:func:`branch_layout`, computed once per code object."""
    return once_per_code(_LAYOUTS, code, branch_layout)


def _target(instr: dis.Instruction) -> int | None:
    target = getattr(instr, "jump_target", None)  # 3.13+
    if target is None and instr.opcode in dis.hasjrel + dis.hasjabs:
        target = instr.argval
    return target if isinstance(target, int) else None


def past_skipped(opnames: Sequence[str], j: int) -> int | None:
    """The index just past the instructions (:data:`FOR_ITER_SKIPS`) an exhausted
    ``FOR_ITER`` whose argument names ``opnames[j]`` skips; None where they are not
    the shape this version compiles."""
    k = j
    for name in FOR_ITER_SKIPS:
        if k >= len(opnames) or opnames[k] != name:
            return None
        k += 1
    return k


def branch_layout(code: CodeType) -> BranchLayout:
    """The observable and join directions of every conditional jump in ``code``."""
    try:
        instrs = list(dis.get_instructions(code))
        handlers = {entry.target for entry in dis.Bytecode(code).exception_entries}  # type: ignore[attr-defined]  # undocumented
    except Exception:  # noqa: BLE001 - an odd code object: watch every site through BRANCH
        return BranchLayout({}, {}, {})
    at = {ins.offset: i for i, ins in enumerate(instrs)}
    opnames = [ins.opname for ins in instrs]
    succs: dict[int, list[int]] = {}
    sites: dict[int, tuple[int, int]] = {}
    for i, ins in enumerate(instrs):
        nxt = instrs[i + 1].offset if i + 1 < len(instrs) else None
        target = _target(ins)
        if ins.opname in _TERMINATORS:
            out = []
        elif ins.opname in _UNCONDITIONAL and target is not None:
            out = [target]
        elif ins.opname in _CONDITIONAL and target is not None and nxt is not None:
            if ins.opname == "FOR_ITER" and target in at:
                k = past_skipped(opnames, at[target])
                if k is not None and k < len(instrs):  # else as the argument says
                    target = instrs[k].offset
            out = [nxt, target]
            sites[ins.offset] = (nxt, target)
        else:
            out = [] if nxt is None else [nxt]
        succs[ins.offset] = out
    # Predecessors among reachable instructions only (dead code does not make a join).
    preds: dict[int, int] = dict.fromkeys(handlers, 1)
    pred_lists: dict[int, list[int]] = {}
    reached: set[int] = set()
    stack = [instrs[0].offset, *handlers] if instrs else []
    while stack:
        off = stack.pop()
        if off in reached or off not in succs:
            continue
        reached.add(off)
        for s in succs[off]:
            preds[s] = preds.get(s, 0) + 1
            pred_lists.setdefault(s, []).append(off)
            stack.append(s)
    lines: dict[int, int | None] = {}
    for start, end, line in code.co_lines():
        for off in range(start, end, 2):
            lines[off] = line
    watch: dict[int, tuple[int, int]] = {}
    joins: dict[int, tuple[int, ...]] = {}
    for src, dsts in sites.items():
        if src not in reached:
            continue
        need = []
        for dst in dict.fromkeys(dsts):
            ok = preds.get(dst) == 1 and dst not in handlers and dst in at and instrs[at[dst]].opname != "EXTENDED_ARG"
            chain = _chain(dst, succs, preds, handlers) if ok else []
            # On 3.12 an instruction's INSTRUCTION event is skipped while any tool's
            # LINE event fires there (coverage.py's, say), and LINE may fire at a
            # branch destination.  So the run must hold an instruction on the same
            # line as the one before it, where no LINE event can fire.
            if any(lines.get(b) is not None and lines.get(b) == lines.get(a) for a, b in zip(chain, chain[1:])):
                for off in chain:
                    watch[off] = (src, dst)
            else:
                need.append(dst)
        joins[src] = tuple(need)
    join_srcs: dict[int, set[int]] = {}
    for src, dsts in joins.items():  # type: ignore[assignment]  # the names reused for joins
        for dst in dsts:
            if dst not in handlers:
                join_srcs.setdefault(dst, set()).add(src)
    join_preds = {dst: (tuple(pred_lists.get(dst, ())), frozenset(srcs)) for dst, srcs in join_srcs.items()}
    return BranchLayout(watch, joins, join_preds)


def _chain(dst: int, succs: dict[int, list[int]], preds: dict[int, int], handlers: set[int]) -> list[int]:
    """``dst`` and the straight-line run after it that only ``dst`` leads into."""
    chain = [dst]
    while len(chain) < _CHAIN:
        nxt = succs.get(chain[-1], [])
        if len(nxt) != 1 or preds.get(nxt[0]) != 1 or nxt[0] in handlers:
            break
        chain.append(nxt[0])
    return chain
