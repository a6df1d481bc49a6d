"""Meeting a compared size exactly: the mutated comparison's distance to its bound, fed back.

A boundary mutant (``len(line) > self.limit`` made ``>=``) is told apart only by an
input whose compared size equals the bound.  The aim (:mod:`assay.mutant.direct`)
grows a word of an entry to the bound, but the compared size is often more than the
word (a whole header line: its name, a separator and the value), so the grown word
overshoots, and the original and the mutant fail alike.  Here the distance is
measured and the growth corrected:

* **Operands** (in the mutant's process).  Just before a line holding one of the
  comparisons of the mutated line or of its guard runs, the integer operands of each
  comparison are evaluated in the running frame by an evaluator that runs no code of
  the user's (names, plain attributes, ``len()`` of a built-in container, subscripts
  of built-in containers, integer arithmetic).  Per case and comparison, the
  observation nearest its bound is kept: how much the input's side must grow to meet
  the bound (negative: shrink) and, when that side is ``len(x)`` of a text or bytes,
  ``x`` itself.
* **Distance features** (the original's side).  Each observation becomes a feature
  (the comparison, the sign and the bit length of the distance), so an input that
  comes nearer the bound joins the corpus, as AFL++'s value profile does for the one
  comparison that matters here.
* **Replacements** (the aim).  For an entry nearer a bound than any before it, ``x``
  found in the entry's bytes is replaced by itself grown (or shrunk) by the distance
  and by one either side, so the operand meets the bound, and the boundary between the
  original's and the mutant's bound, in one step.  Where ``x`` is not in the input as
  such (a decoded or joined value, a counter), the entry's last words are grown by the
  distance instead, and the next entry's distance corrects what that missed.

None of this runs outside a survivor's directed campaign.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import operator
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from assay.core import observe
from assay.mutant import direct, reshape
from assay.mutant.model import Mutant, apply_edit

#: Measure the distance to the mutated comparison's bound and grow inputs by it (off: the aim alone).
MEET = True
#: Evaluations of one line's comparisons per case at most (a line in a byte loop would run thousands).
MAX_EVALUATIONS = 256
#: Longest measured text or bytes sent back with an observation (longer ones: the distance alone).
MAX_MEASURED = 1 << 16
#: Largest integer operand evaluated by arithmetic (no huge products or powers).
MAX_OPERAND = 1 << 62
#: Cases whose observations the worker keeps for the aim (it asks about an entry right after its case).
RECENT = 8
#: Replacements offered for one entry at most.
MAX_MET = 64
#: Largest bit length a distance feature tells apart (farther is one class).
MAX_BITS = 32
_FEATURE = "mutant-gap"
_WORD = reshape.WORD  # the aim's words: what it grows is what this corrects
_SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset)
_INDEXED = (str, bytes, bytearray, list, tuple)
_ARITHMETIC: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}

#: What a ``len()`` measured: a text or bytes, or the pieces of a split (a list of them); None: not known.
Measured = str | bytes | tuple[str, ...] | tuple[bytes, ...] | None
#: One observation: (comparison index, growth that meets the bound, what was measured).
Observation = tuple[int, int, Measured]


class _Unknown(Exception):
    """An operand the evaluator will not compute (it would run user code, or is not there yet)."""


@dataclass(frozen=True)
class Comparison:
    """One link of a comparison on a watched line: which side is the input's, which the bound."""

    index: int
    operand: ast.expr
    bound: ast.expr


@dataclass
class Sites:
    """The comparisons to measure, by the line whose event evaluates them."""

    by_line: dict[int, list[Comparison]] = field(default_factory=dict)

    @property
    def lines(self) -> frozenset[int]:
        return frozenset(self.by_line)


def sites_of(mutant: Mutant, text: str) -> Sites:
    """The integer comparisons of the mutated line (as the mutant has it), of its guard's test, and of the
    statements after it, in its function, that read a name it assigns (``limit = 128`` ... ``len(x) > limit``).

    Each is keyed by the line of the statement holding it: the line event that fires
    just before its operands are compared.
    """
    sites = Sites()
    if not MEET:
        return sites
    try:
        mutated = ast.parse(apply_edit(text, mutant.edit))
        original = ast.parse(text)
    except SyntaxError:
        return sites
    first, last = mutant.edit.line, mutant.edit.end_line
    edited = _statements(mutated, lambda n: first <= n.lineno <= last)
    statements = [*edited, *_guards(original, first), *_readers(mutated, first, last)]
    counter = 0
    for line, expressions in statements:
        for expression in expressions:
            for node in ast.walk(expression):
                if not isinstance(node, ast.Compare):
                    continue
                left = node.left
                for op, right in zip(node.ops, node.comparators):
                    if isinstance(op, (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                        known = sites.by_line.setdefault(line, [])
                        link = _link(counter, left, right)
                        if all(_key(c) != _key(link) for c in known):
                            known.append(link)
                            counter += 1
                    left = right
    return sites


#: Statements after the mutated line that read a name it assigns, measured at most.
MAX_READERS = 4


def _readers(tree: ast.AST, first: int, last: int) -> list[tuple[int, list[ast.expr]]]:
    """(line, own expressions) of the first statements after the edit, in its function, reading a name it assigns."""
    functions = [
        n
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= first <= (n.end_lineno or n.lineno)
    ]
    if not functions:
        return []
    function = max(functions, key=lambda n: n.lineno)
    assigned: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and first <= node.lineno <= last:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned.update(ast.unparse(t) for t in targets if isinstance(t, (ast.Name, ast.Attribute)))
    if not assigned:
        return []
    out = []
    for line, expressions in sorted(_statements(function, lambda n: n.lineno > last), key=lambda s: s[0]):
        reads = {
            ast.unparse(n)
            for e in expressions
            for n in ast.walk(e)
            if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load)
        }
        if reads & assigned and any(isinstance(n, ast.Compare) for e in expressions for n in ast.walk(e)):
            out.append((line, expressions))
            if len(out) >= MAX_READERS:
                break
    return out


def _key(link: Comparison) -> str:
    return ast.dump(link.operand) + ast.dump(link.bound)


def _statements(tree: ast.AST, within: Callable[[ast.stmt], bool]) -> list[tuple[int, list[ast.expr]]]:
    """(line, own expressions) of each statement that ``within`` accepts: an ``if``'s or ``while``'s test alone."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and within(node):
            out.append((node.lineno, _own_expressions(node)))
    return out


def _own_expressions(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, (ast.If, ast.While)):
        return [node.test]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.iter]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith, ast.Try)):
        return []
    return [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr)]


def _guards(tree: ast.AST, line: int) -> list[tuple[int, list[ast.expr]]]:
    """The test of the innermost ``if``/``while`` whose body holds ``line`` (as :func:`direct._guard_tests`)."""
    guard = direct.guard_of(tree, line)
    return [] if guard is None else [(guard.lineno, [guard.test])]


def _link(index: int, left: ast.expr, right: ast.expr) -> Comparison:
    """Which side of ``left <op> right`` the input moves: a ``len()``, else the side that is not bound-like."""
    left_len, right_len = _has_len(left), _has_len(right)
    if left_len != right_len:
        return Comparison(index, left, right) if left_len else Comparison(index, right, left)
    if _bound_like(left) and not _bound_like(right):
        return Comparison(index, right, left)
    return Comparison(index, left, right)


def _has_len(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" for n in ast.walk(node))


def _bound_like(node: ast.expr) -> bool:
    """A literal, an upper-case name, an attribute (``self.limit``) or arithmetic of those."""
    if isinstance(node, (ast.Constant, ast.Attribute)):
        return True
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.UnaryOp):
        return _bound_like(node.operand)
    if isinstance(node, ast.BinOp):
        return _bound_like(node.left) and _bound_like(node.right)
    return False


class OperandProbe:
    """In the mutant's process: evaluates the watched comparisons' operands as their lines are about to run."""

    def __init__(self, sites: Sites) -> None:
        self.sites = sites
        self.lines = sites.lines
        self.best: dict[int, tuple[int, Measured]] = {}
        self.evaluations: dict[int, int] = {}

    def begin(self) -> None:
        """Forget the last case's observations."""
        self.best.clear()
        self.evaluations.clear()

    def __call__(self, line: int, frame: types.FrameType) -> bool:
        """Measure ``line``'s comparisons in ``frame``; False once the line has been measured enough this case."""
        count = self.evaluations.get(line, 0)
        if count >= MAX_EVALUATIONS:
            return False
        self.evaluations[line] = count + 1
        names = _Names(frame)
        for link in self.sites.by_line.get(line, ()):
            measured: list[Any] = []
            try:
                value = _value(link.operand, names, measured)
                bound = _value(link.bound, names, [])
            except Exception:  # noqa: BLE001 - an operand not computable here is not measured
                continue
            if type(value) is not int or type(bound) is not int:
                continue
            growth = bound - value
            best = self.best.get(link.index)
            if best is None or abs(growth) < abs(best[0]):
                sized = measured[-1] if measured else None
                if isinstance(sized, (str, bytes)) and len(sized) > MAX_MEASURED:
                    sized = None
                self.best[link.index] = (growth, sized)
        return True

    def taken(self) -> tuple[Observation, ...]:
        return tuple((index, growth, sized) for index, (growth, sized) in sorted(self.best.items()))


class _Names:
    """A frame's names, resolved as the interpreter would (locals, globals, builtins), without running code."""

    def __init__(self, frame: types.FrameType) -> None:
        self.locals = frame.f_locals
        self.globals = frame.f_globals
        self.builtins = frame.f_builtins

    def __getitem__(self, name: str) -> Any:
        for space in (self.locals, self.globals, self.builtins):
            if name in space:
                return space[name]
        raise _Unknown(name)


def _value(node: ast.expr, names: _Names, measured: list[Any]) -> Any:
    """``node``'s value, computed without running user code (``measured`` gets each ``len()``'s text or bytes)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.Attribute):
        return _attribute(_value(node.value, names, measured), node.attr)
    if isinstance(node, ast.Call):
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "len"
            and names["len"] is builtins.len
            and len(node.args) == 1
            and not node.keywords
        ):
            sized = _value(node.args[0], names, measured)
            if type(sized) in _SIZED:
                if type(sized) in (str, bytes, bytearray):
                    measured.append(bytes(sized) if type(sized) is bytearray else sized)
                elif type(sized) in (list, tuple) and _pieces(sized):
                    measured.append(tuple(sized))
                return len(sized)
        raise _Unknown("call")
    if isinstance(node, ast.Subscript):
        container = _value(node.value, names, measured)
        key = _value(node.slice, names, measured)
        if type(container) in _INDEXED and type(key) is int:
            return container[key]
        if type(container) is dict and type(key) in (int, str, bytes):
            return container[key]
        raise _Unknown("subscript")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _value(node.operand, names, measured)
        if type(operand) is int:
            return -operand
        raise _Unknown("negation")
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _value(node.left, names, measured), _value(node.right, names, measured)
        if type(left) is int and type(right) is int and abs(left) < MAX_OPERAND and abs(right) < MAX_OPERAND:
            return _ARITHMETIC[type(node.op)](left, right)
        raise _Unknown("arithmetic")
    raise _Unknown(type(node).__name__)


def _pieces(items: list | tuple) -> bool:
    """Are ``items`` texts or bytes of one kind (a split's result), small enough to send back?"""
    kinds = {type(item) for item in items}
    return len(kinds) == 1 and kinds <= {str, bytes} and sum(len(item) for item in items) <= MAX_MEASURED


def _attribute(obj: Any, name: str) -> Any:
    """``obj.name`` where no code runs to get it: an instance's or a class's plain value, a slot, a module's name."""
    try:
        found = inspect.getattr_static(obj, name)
    except AttributeError:
        raise _Unknown(name) from None
    if type(found) is types.MemberDescriptorType:  # a __slots__ member: read by the interpreter itself
        return getattr(obj, name)
    if hasattr(type(found), "__get__"):  # a property, a method, a descriptor of the user's
        raise _Unknown(name)
    return found


def features(observed: tuple[Observation, ...] | None) -> list[Hashable]:
    """One feature per measured comparison: its index, the sign and the bit length of its distance to the bound."""
    if not observed:
        return []
    return [
        observe.feature_key(_FEATURE, f"{index}:{'-' if growth < 0 else '+'}{min(abs(growth).bit_length(), MAX_BITS)}")
        for index, growth, _ in observed
    ]


class Meeting:
    """The worker's side: each case's observations, their features, and the replacements for a nearer entry."""

    def __init__(self, max_len: int) -> None:
        self.max_len = max_len
        self.recent: OrderedDict[bytes, tuple[Observation, ...]] = OrderedDict()
        self.best: dict[int, int] = {}

    def note(self, data: bytes, observed: tuple[Observation, ...] | None) -> list[Hashable]:
        """Keep ``data``'s observations for the aim; their features."""
        if not observed:
            return []
        self.recent[data] = observed
        self.recent.move_to_end(data)
        while len(self.recent) > RECENT:
            self.recent.popitem(last=False)
        return features(observed)

    def pairs(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """Replacements that make ``data``'s operands meet their bounds, where it is nearer one than any entry before."""
        nearer = []
        for index, growth, sized in self.recent.get(data, ()):
            if abs(growth) < self.best.get(index, MAX_OPERAND):
                self.best[index] = abs(growth)
                nearer.append((growth, sized))
        out: list[tuple[bytes, bytes]] = []
        for growth, sized in sorted(nearer, key=lambda o: abs(o[0])):
            out.extend(p for p in grown_pairs(data, growth, sized, self.max_len) if p not in out)
        return out[:MAX_MET]


def grown_pairs(data: bytes, growth: int, sized: Measured, max_len: int) -> list[tuple[bytes, bytes]]:
    """Replacements growing the measured part of ``data`` by ``growth`` and by one either side (none where 0 is).

    A measured text grows by bytes; the measured pieces of a split grow by pieces (its
    separator repeated after them) or lose their last ones.
    """
    steps = [k for k in (growth, growth - 1, growth + 1) if k != 0]
    if isinstance(sized, tuple):
        return _split_pairs(data, sized, steps, max_len)
    steps = [k for k in steps if len(data) + k <= max_len]
    found = _located(data, sized)
    patterns = [found] if found is not None else list(dict.fromkeys(_WORD.findall(data)))[-direct.MAX_WORDS :][::-1]
    out = []
    for pattern in patterns:
        for k in steps:
            resized = _resized(pattern, k)
            if resized is not None:
                out.append((pattern, resized))
    return out


#: Longest separator looked for between a split's pieces.
MAX_SEPARATOR = 8


def _split_pairs(data: bytes, pieces: tuple, steps: list[int], max_len: int) -> list[tuple[bytes, bytes]]:
    """The pieces' run in ``data``, with ``k`` more (empty) pieces after it, or its last ``-k`` dropped."""
    parts = [p if isinstance(p, bytes) else p.encode("utf-8", "surrogatepass") for p in pieces]
    if len(parts) < 2:
        return []
    start = data.find(parts[0]) if parts[0] else -1
    if start == -1:
        return []
    after = start + len(parts[0])
    second = data.find(parts[1], after) if parts[1] else after
    separator = data[after:second] if second != -1 else b""
    if not 0 < len(separator) <= MAX_SEPARATOR:
        return []
    joined = separator.join(parts)
    if data.find(joined, start) != start:
        return []
    out = []
    for k in steps:
        if k > 0 and len(data) + k * len(separator) <= max_len:
            out.append((joined, joined + separator * k))
        elif k < 0 and len(parts) + k >= 1:
            out.append((joined, separator.join(parts[: len(parts) + k])))
    return out


def _located(data: bytes, sized: str | bytes | None) -> bytes | None:
    """The bytes ``sized`` has in ``data`` (as they are, or encoded), if it is there."""
    if not sized:
        return None
    forms = [sized] if isinstance(sized, bytes) else [sized.encode(c, "ignore") for c in ("utf-8", "latin-1")]
    return next((f for f in forms if f and f in data), None)


def _resized(part: bytes, k: int) -> bytes | None:
    """``part`` grown by ``k`` bytes (its last word's last byte repeated) or shrunk by ``-k`` (its longest word cut)."""
    spans = [m.span() for m in _WORD.finditer(part)]
    if k > 0:
        if not spans:
            return part + (part[-1:] or b"A") * k
        _, end = spans[-1]
        return part[:end] + part[end - 1 : end] * k + part[end:]
    if not spans:
        return None
    start, end = max(spans, key=lambda s: s[1] - s[0])
    if end - start <= -k:
        return None
    return part[: end + k] + part[end:]


#: The engine's ``aim``: (entry, its new keys) -> (extra parent shares, replacements to try first).
AimFn = Callable[[bytes, list[Hashable]], tuple[int, list[tuple[bytes, bytes]]]]


def aimed(aim: AimFn, meeting: Meeting | None) -> AimFn:
    """``aim`` with the replacements that meet a bound first, and the favour of an entry nearer one."""
    if meeting is None:
        return aim

    def both(data: bytes, new: list[Hashable]) -> tuple[int, list[tuple[bytes, bytes]]]:
        shares, pairs = aim(data, new)
        met = meeting.pairs(data)
        if not met:
            return shares, pairs
        known = set(met)
        return max(shares, direct.FAVOUR_SHARES), [*met, *(p for p in pairs if p not in known)]

    return both
