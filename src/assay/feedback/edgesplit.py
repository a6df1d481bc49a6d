"""Edge splitting: a branch direction into a join gets an instruction of its own.

Design
------
On 3.12/3.13 ``sys.monitoring`` has one ``BRANCH`` event per site, and a
``DISABLE`` returned for it silences both directions.  :mod:`assay.feedback.branches`
works out which directions announce themselves by a first-run ``INSTRUCTION``
event (a destination with one predecessor).  A direction into a *join* (the end
of an ``if`` without ``else``, the short-circuit exit of ``and``/``or``, a loop
head reached by a ``continue``) has no instruction of its own, so the site had to
stay armed (a callback every time it runs) until that direction showed up, and was
retired after a cap: a direction first taken later went unseen.

Compilers remove such a *critical edge* by splitting it, and so does this module,
with three edits:

* a jump into a join goes through a trampoline appended after the code::

      NOP                              # the join's line
      JUMP_BACKWARD_NO_INTERRUPT join

* a fall-through into a join (the ``while`` body's first test, a chain's last
  operand) gets two ``NOP`` instructions on the jump's line, inserted right after it: only the
  fall-through reaches them, while every jump into the join still lands on it;

* an exhausted ``FOR_ITER`` goes on past the ``END_FOR`` its argument names (and,
  on 3.13, the ``POP_TOP`` after it): two ``NOP`` instructions on the loop's line
  are inserted there, and only it reaches them (a ``break`` into the same join
  still lands on the join).

Either way the direction now has an instruction of its own, whose ``INSTRUCTION``
event fires the first time the direction is taken and then disables itself: it is
recorded at its first traversal, at any case index, and costs a ``NOP`` or a jump
afterwards.  (Two instructions on one line, because on 3.12 another tool's ``LINE``
event hides the ``INSTRUCTION`` event of the instruction it fires at.)

The edited code is re-assembled: instructions with their jump targets as
instructions, laid out again with as many ``EXTENDED_ARG`` prefixes as each jump
now needs, the exception table mapped onto the moved instructions and the
location table encoded again, one position per code unit.  Everything original
keeps its opcode, argument, position and handler (tested on six stdlib parsers).
The no-interrupt jump does not check the eval breaker, so a trampoline cannot
raise and needs no exception-table entry.

:class:`SplitCode` swaps the split code into the live functions of the in-scope
modules (as :class:`assay.feedback.cmplog.CmpLog` swaps its twins) and puts the
originals back; nested functions come along as constants of their split parent.
The split is a pure function of the code, so every process of a campaign (the
workers, the replays that re-measure features) computes the same edge keys.
"""

from __future__ import annotations

import dis
import os
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FunctionType

from assay.feedback.branches import branch_layout, cached_layout, once_per_code, past_skipped
from assay.feedback.livecode import functions_of, modules_by_file

#: Versions whose bytecode this module knows (3.14+ reports each direction itself).
SUPPORTED = ((3, 12), (3, 13))

_NOP = dis.opmap["NOP"]
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_JUMP_BACK = dis.opmap["JUMP_BACKWARD_NO_INTERRUPT"]
_FOR_ITER = dis.opmap["FOR_ITER"]
_JREL = frozenset(op for op in dis.hasjrel if op < 256)
_BACKWARD = frozenset(op for op in _JREL if "BACKWARD" in dis.opname[op])
_FORWARD_IFS = frozenset(
    dis.opmap[n] for n in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
)
_ICE = dis._inline_cache_entries  # type: ignore[attr-defined]  # list by opcode on 3.12, dict by name on 3.13


def _caches(op: int) -> int:
    return _ICE[op] if isinstance(_ICE, list) else _ICE.get(dis.opname[op], 0)


def supported() -> bool:
    """True where this Python needs edge splitting and its bytecode is known."""
    return sys.version_info[:2] in SUPPORTED


def enabled() -> bool:
    """:func:`supported`, unless ``ASSAY_NO_EDGE_SPLIT=1`` turns the split off (to compare)."""
    return supported() and os.environ.get("ASSAY_NO_EDGE_SPLIT", "") in ("", "0")


# -- the tables ---------------------------------------------------------------------------------


def _loc_varint(value: int, out: bytearray) -> None:
    while value >= 64:
        out.append(64 | (value & 63))
        value >>= 6
    out.append(value)


def _location_table(positions: list[tuple], first_line: int) -> bytes:
    """Encode one position per code unit (Objects/locations.md): long, no-column or none."""
    out = bytearray()
    line_now = first_line
    i = 0
    while i < len(positions):
        pos = positions[i]
        n = 1
        while n < 8 and i + n < len(positions) and positions[i + n] == pos:
            n += 1
        line, end_line, col, end_col = pos
        if line is None:
            out.append(0x80 | (15 << 3) | (n - 1))
        else:
            delta = line - line_now
            line_now = line
            plain = end_line is None or col is None or end_col is None or end_line < line
            out.append(0x80 | ((13 if plain else 14) << 3) | (n - 1))
            _loc_varint((-delta << 1) | 1 if delta < 0 else delta << 1, out)
            if not plain:
                _loc_varint(end_line - line, out)
                _loc_varint(col + 1, out)
                _loc_varint(end_col + 1, out)
        i += n
    return bytes(out)


def _exception_entries(code: CodeType) -> list[tuple[int, int, int, int]]:
    """``(start, end, target, depth_lasti)`` in code units, as the table stores them."""
    return [
        (e.start // 2, e.end // 2, e.target // 2, (e.depth << 1) | e.lasti)
        for e in dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]  # undocumented, 3.11+
    ]


def _exception_table(entries: list[tuple[int, int, int, int]]) -> bytes:
    out = bytearray()
    for start, end, target, dl in entries:
        for n, value in enumerate((start, end - start, target, dl)):
            chunks = [value & 63]
            value >>= 6
            while value:
                chunks.append(value & 63)
                value >>= 6
            chunks.reverse()
            for k, chunk in enumerate(chunks):
                out.append(chunk | (64 if k < len(chunks) - 1 else 0) | (128 if n == 0 and k == 0 else 0))
    return bytes(out)


# -- the assembler --------------------------------------------------------------------------------


class _Ins:
    """One instruction: its ``EXTENDED_ARG`` prefixes, opcode, argument and cache units.

    A jump's argument is kept as its target (an :class:`_Ins`), re-encoded on assembly.
    """

    __slots__ = ("op", "arg", "target", "prefixes", "caches", "position", "offset")

    def __init__(self, op: int, arg: int, position: tuple, prefixes: int = 0) -> None:
        self.op, self.arg, self.position, self.prefixes = op, arg, position, prefixes
        self.caches = _caches(op)
        self.target: _Ins | None = None
        self.offset = 0

    @property
    def size(self) -> int:
        return self.prefixes + 1 + self.caches


def _decode(code: CodeType) -> tuple[list[_Ins], dict[int, _Ins]]:
    raw = code.co_code
    positions = list(code.co_positions())
    out: list[_Ins] = []
    at: dict[int, _Ins] = {}
    unit, n = 0, len(raw) // 2
    while unit < n:
        first, arg, prefixes = unit, 0, 0
        while raw[2 * unit] == _EXTENDED_ARG and unit + 1 < n:
            arg = (arg | raw[2 * unit + 1]) << 8
            prefixes += 1
            unit += 1
        op = raw[2 * unit]
        ins = _Ins(op, arg | raw[2 * unit + 1], positions[unit], prefixes)
        ins.offset = first
        out.append(ins)
        at[first] = ins
        unit += 1 + ins.caches
    for ins in out:
        if ins.op in _JREL:
            after = ins.offset + ins.size
            ins.target = at[after - ins.arg if ins.op in _BACKWARD else after + ins.arg]
    return out, at


def _assemble(code: CodeType, body: list[_Ins], handlers: list[tuple[_Ins, _Ins | None, _Ins, int]]) -> CodeType:
    """Lay out ``body`` (growing jump prefixes until every argument fits) and re-encode it."""
    while True:
        unit = 0
        for ins in body:
            ins.offset = unit
            unit += ins.size
        grown = False
        for ins in body:
            if ins.target is not None:
                after = ins.offset + ins.size
                ins.arg = after - ins.target.offset if ins.op in _BACKWARD else ins.target.offset - after
                need = (max(ins.arg, 1).bit_length() - 1) // 8
                if need > ins.prefixes:
                    ins.prefixes, grown = need, True
        if not grown:
            break
    raw = bytearray()
    positions: list[tuple] = []
    for ins in body:
        for k in range(ins.prefixes, 0, -1):
            raw += bytes([_EXTENDED_ARG, (ins.arg >> (8 * k)) & 0xFF])
        raw += bytes([ins.op, ins.arg & 0xFF]) + bytes(2 * ins.caches)
        positions += [ins.position] * ins.size
    entries = [(lo.offset, hi.offset if hi is not None else unit, target.offset, dl) for lo, hi, target, dl in handlers]
    return code.replace(
        co_code=bytes(raw),
        co_linetable=_location_table(positions, code.co_firstlineno),
        co_exceptiontable=_exception_table(entries),
    )


# -- the split ------------------------------------------------------------------------------------


def split_code(code: CodeType) -> CodeType:
    """``code`` (and the code objects among its constants) with join directions split.

    Returns ``code`` itself when nothing needed a split.
    """
    consts = tuple(split_code(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    if any(a is not b for a, b in zip(consts, code.co_consts)):
        code = code.replace(co_consts=consts)
    layout = branch_layout(code)
    try:
        body, at = _decode(code)
    except (KeyError, IndexError):
        return code  # a jump into the middle of an instruction: not code this module knows
    end = len(code.co_code) // 2
    table = _exception_entries(code)
    if any(lo not in at or target not in at or (hi not in at and hi != end) for lo, hi, target, _ in table):
        return code  # a table this module does not understand: leave the code alone
    by_op = {2 * (ins.offset + ins.prefixes): ins for ins in body}
    tail: list[_Ins] = []
    inserted: dict[int, list[_Ins]] = {}
    opnames = [dis.opname[ins.op] for ins in body]
    index = {id(ins): k for k, ins in enumerate(body)}
    for src, dsts in sorted(layout.joins.items()):
        jump = by_op.get(src)
        if jump is not None and jump.op == _FOR_ITER and jump.target is not None:
            # Exhausted: two NOPs after the END_FOR (and POP_TOP) it skips, where it
            # lands; the jumps into the join still land past them.
            k = past_skipped(opnames, index[id(jump.target)])
            last = body[k - 1] if k is not None else None
            if last is not None and 2 * (last.offset + last.size) in dsts:
                inserted[last.offset] = [_Ins(_NOP, 0, jump.position), _Ins(_NOP, 0, jump.position)]
            continue
        if jump is None or jump.op not in _FORWARD_IFS:
            continue
        line = jump.position
        for dst in dsts:
            if 2 * jump.target.offset == dst:  # type: ignore[union-attr]  # a jump has a target
                # The jump goes through a trampoline of its own: NOP, then back to the join.
                join = jump.target
                where = join.position if join.position[0] is not None else line  # type: ignore[union-attr]
                nop = _Ins(_NOP, 0, where)
                back = _Ins(_JUMP_BACK, 0, where)
                back.target = join
                tail += [nop, back]
                jump.target = nop
            elif dst == 2 * (jump.offset + jump.size):
                # The fall-through: two NOPs on the jump's line, that only it falls into.
                inserted[jump.offset] = [_Ins(_NOP, 0, line), _Ins(_NOP, 0, line)]
    if not tail and not inserted:
        return code
    new_body: list[_Ins] = []
    for ins in body:
        new_body.append(ins)
        new_body += inserted.get(ins.offset, ())
    # A range reaching the end of the code stops before the trampolines (they cannot raise).
    handlers = [(at[lo], at.get(hi, tail[0] if tail else None), at[target], dl) for lo, hi, target, dl in table]
    return _assemble(code, new_body + tail, handlers)


#: id(original code) -> (original, split): kept alive, so an id is never reused.
_SPLIT: dict[int, tuple[CodeType, CodeType]] = {}


def _split_cached(code: CodeType) -> CodeType:
    return once_per_code(_SPLIT, code, split_code)


def _live_functions(contains: Callable[[str], bool]) -> Iterator[FunctionType]:
    """Each in-scope function once, however many modules reach it."""
    seen: set[int] = set()
    for modules in modules_by_file(contains).values():
        for module in modules:
            for fn in functions_of(module):
                if id(fn) not in seen and contains(fn.__code__.co_filename):
                    seen.add(id(fn))
                    yield fn


def prepare(contains: Callable[[str], bool]) -> None:
    """Split the in-scope code, and lay out its branches, ahead of the workers' forks.

    A worker then inherits the work instead of repeating it at every start (tens of
    milliseconds for a stdlib parser).
    """
    if not enabled():
        return
    stack = [_split_cached(fn.__code__) for fn in _live_functions(contains)]
    while stack:
        code = stack.pop()
        cached_layout(code)
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))


class SplitCode:
    """Split code swapped into the live functions of the in-scope modules."""

    def __init__(self, contains: Callable[[str], bool]) -> None:
        self.contains = contains
        self.swaps: list[tuple[FunctionType, CodeType, CodeType]] = []

    def install(self) -> None:
        """Swap in split code; functions already running other code (a twin, a mutant) too."""
        for fn in _live_functions(self.contains):
            code = fn.__code__
            new = _split_cached(code)
            if new is not code:
                fn.__code__ = new
                self.swaps.append((fn, code, new))

    def remove(self) -> None:
        """Put the originals back wherever the split code is still live."""
        for fn, orig, new in reversed(self.swaps):
            if fn.__code__ is new:
                fn.__code__ = orig
        self.swaps = []
