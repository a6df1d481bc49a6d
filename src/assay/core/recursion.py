"""Recursion cycles: one name for a runaway recursion, wherever the limit struck.

A ``RecursionError`` is raised by whichever function of a recursive cycle happens to
be innermost when the limit is reached (``parse_value``, ``parse_array``, a helper one
of them called, a C call inside one of them), so the innermost frames that key other
panics split one bug into several signatures.  For a traceback that really recurses,
:func:`recursion_cycle` names the cycle instead:

1. The traceback's call graph (an edge from each frame to the frame it called) is split
   into strongly connected components.  The recursion is the component holding most
   of the stack, provided one of its functions is on the stack at least
   :data:`MIN_REPEATS` times.  Otherwise (a ``RecursionError`` raised by hand, or by C
   code recursing under a shallow Python stack, as ``json``'s scanner does) there is no
   cycle, and the caller keeps its usual key.
2. The component is widened by the calls its functions' code can make to functions of
   the same modules (the names their code loads, resolved in their globals, closure and
   ``self``'s class), taking the component of that graph which holds the recursion.  A
   recursive-descent parser nested one way shows ``parse_value -> parse_array ->
   parse_value``, nested another way ``parse_value -> parse_inline_table ->
   parse_key_value_pair -> parse_value``; both are one missing depth bound, and the
   widened component is the same whichever shape reached the limit.
3. The name is the *sorted set* of the component's functions (``module:qualname``).

Why a set and not a rotation of the repeating period: the set does not depend on where
the recursion was entered, where the limit struck, how deep the stack was, nor on how
an input interleaves nesting kinds (``[{a=[[{a=[`` has no period at all), while the
period's rotation and even its length do.  Order would tell no two bugs apart that the
set does not: two recursions through the same functions are one recursion.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import CodeType, FrameType, FunctionType
from typing import Any

#: Least number of times one function of a cycle must be on the stack for a traceback to count as recursion.
MIN_REPEATS = 8
#: Most functions the static widening of a cycle visits (a bound for very large modules).
MAX_STATIC = 512
#: Most functions a cycle key spells out; the rest are counted and hashed.
SHOWN = 6


def stack_depth(frame: FrameType | None) -> int:
    """How many Python frames ``frame`` and its callers make (0 for ``None``)."""
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def headroom(exc: BaseException, fn: object) -> int:
    """Python frames the target ``fn`` had below it when ``exc`` was raised: the recursion
    limit minus the depth of the frame that called ``fn``.

    A ``RecursionError`` depends on this number, not on the input alone: a worker and a
    replay call the target under stacks of different heights.  Replaying with the same
    headroom (:func:`limit_for`) makes the limit strike at the same depth of the target's
    own recursion.  The caller is the frame that caught ``exc`` (its traceback's first
    frame), or, when the target was called from C code, the caller of the target's frame.
    """
    tb = exc.__traceback__
    if tb is None:
        return sys.getrecursionlimit()
    called_from_c = tb.tb_frame.f_code is _entry_code(fn)
    base = stack_depth(tb.tb_frame) - 1 if called_from_c else stack_depth(tb.tb_frame)
    return sys.getrecursionlimit() - base


def _entry_code(fn: object) -> CodeType | None:
    """The code the first frame of a call of ``fn`` runs (a function, a partial, a callable object)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    code = getattr(fn, "__code__", None)
    if code is None and not isinstance(fn, type):
        call = next((k.__dict__["__call__"] for k in type(fn).__mro__ if "__call__" in k.__dict__), None)
        code = getattr(call, "__code__", None)
    return code if isinstance(code, CodeType) else None


def limit_for(caller: FrameType | None, room: int) -> int:
    """The recursion limit that leaves ``room`` frames (a recorded :func:`headroom`) to a
    target called from ``caller``."""
    return stack_depth(caller) + room


def module_name(globals_: Mapping[str, Any], filename: str) -> str:
    """The module a frame or function belongs to, as frames are named (``__name__``, else the file name)."""
    return str(globals_.get("__name__") or os.path.basename(filename))


def recursion_cycle(stack: Sequence[tuple[str, FrameType]]) -> tuple[str, ...]:
    """The sorted identities of the recursion ``stack`` shows, or ``()`` when it shows none.

    ``stack`` holds ``(identity, frame)`` pairs, innermost first, identity being
    ``module:qualname``; see the module docstring for what is taken as the cycle.
    """
    ids = [ident for ident, _ in stack]
    edges: dict[str, set[str]] = {}
    for inner, outer in zip(ids, ids[1:]):
        edges.setdefault(outer, set()).add(inner)
    counts = Counter(ids)
    recursive = [
        comp for comp in _components(list(counts), edges) if len(comp) > 1 or comp[0] in edges.get(comp[0], ())
    ]  # a lone function must call itself
    if not recursive:
        return ()
    # Most frames first; on a tie the smallest names, so the choice never depends on stack order.
    best = min(recursive, key=lambda comp: (-sum(counts[n] for n in comp), comp))
    if max(counts[n] for n in best) < MIN_REPEATS:
        return ()
    members = set(best)
    live: dict[str, FrameType] = {}
    for ident, frame in stack:  # innermost first: the innermost frame of each function
        if ident in members and ident not in live:
            live[ident] = frame
    static = _static_calls(live)
    for caller, callees in static.items():
        edges.setdefault(caller, set()).update(callees)
    nodes = sorted(set(edges) | {n for targets in edges.values() for n in targets})
    anchor = best[0]
    for comp in _components(nodes, edges):
        if anchor in comp:
            return tuple(sorted(comp))
    return tuple(sorted(members))  # unreachable: the anchor is in some component


def cycle_key(cycle: Sequence[str]) -> str:
    """``cycle:`` and the cycle's functions grouped by module (``cycle:mod:f,g;other:h``).

    Past :data:`SHOWN` functions the rest are counted and the whole set hashed, so
    the key stays short and still tells two sets apart.
    """
    ordered = sorted(cycle)
    shown, rest = ordered[:SHOWN], ordered[SHOWN:]
    groups: dict[str, list[str]] = {}
    for ident in shown:
        module, _, qualname = ident.partition(":")
        groups.setdefault(module, []).append(qualname)
    text = ";".join(f"{module}:{','.join(names)}" for module, names in groups.items())
    if rest:
        digest = hashlib.sha256("\n".join(ordered).encode()).hexdigest()[:8]
        text += f";+{len(rest)}#{digest}"
    return f"cycle:{text}"


def _components(nodes: Iterable[str], edges: Mapping[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components (Tarjan's algorithm, iterative: the graph may come from a 1000-deep stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[tuple[str, ...]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    found.append(tuple(sorted(comp)))
    return found


def _static_calls(live: Mapping[str, FrameType]) -> dict[str, set[str]]:
    """Calls the code of ``live``'s functions (and what they reach) can make within their modules.

    A call is approximated by a name the code loads that resolves to a Python function
    of one of the cycle's modules: in the function's globals, its closure, or the
    class of its ``self``/``cls`` argument (looked up in the class dictionaries, so no
    user code runs).
    """
    modules = {ident.partition(":")[0] for ident in live}
    calls: dict[str, set[str]] = {}
    queue: list[tuple[str, CodeType, Mapping[str, Any], Mapping[str, Any], type | None]] = []
    for ident, frame in live.items():
        code = frame.f_code
        try:
            local_values = dict(frame.f_locals)
        except Exception:  # noqa: BLE001 - a frame whose locals cannot be read still has globals
            local_values = {}
        free: Mapping[str, Any] = {name: local_values[name] for name in code.co_freevars if name in local_values}
        queue.append((ident, code, frame.f_globals, free, _owner(code, local_values)))
    seen = {ident for ident, *_ in queue}
    while queue:
        ident, code, globals_, free, owner = queue.pop(0)
        for _name, value, via_owner in _names(code, globals_, free, owner):
            # Exact type checks: isinstance may consult a user-defined __class__.
            fn = value.__func__ if type(value) in (staticmethod, classmethod) else value
            if type(fn) is not FunctionType:
                continue
            module = module_name(fn.__globals__, fn.__code__.co_filename)
            if module not in modules:
                continue
            callee = f"{module}:{fn.__code__.co_qualname}"
            calls.setdefault(ident, set()).add(callee)
            if callee not in seen and len(seen) < MAX_STATIC:
                seen.add(callee)
                queue.append((callee, fn.__code__, fn.__globals__, _closure(fn), owner if via_owner else None))
    return calls


def _owner(code: CodeType, local_values: Mapping[str, Any]) -> type | None:
    """The class a method's calls on ``self``/``cls`` resolve in (by the conventional argument names)."""
    if not code.co_argcount:
        return None
    first = code.co_varnames[0]
    value = local_values.get(first)
    if first == "self" and value is not None:
        return type(value)
    if first == "cls" and issubclass(type(value), type):
        return value
    return None


def _names(
    code: CodeType, globals_: Mapping[str, Any], free: Mapping[str, Any], owner: type | None
) -> Iterable[tuple[str, Any, bool]]:
    """``(name, value, found on the owner class)`` for each name the code loads that resolves."""
    for name in code.co_names:
        if name in globals_:
            yield name, globals_[name], False
        if owner is not None:
            for klass in owner.__mro__:
                if name in klass.__dict__:
                    yield name, klass.__dict__[name], True
                    break
    for name, value in free.items():
        yield name, value, False


def _closure(fn: FunctionType) -> dict[str, Any]:
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            continue
    return values
