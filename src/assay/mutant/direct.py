"""Aiming a survivor's campaign at what the mutant changed.

A survivor knows its mutated line.  Two things steer its differential campaign
towards the input that tells the mutant apart:

* **Reach.**  The mutant's process (the twin) watches the lines of the mutated
  code it runs (``sys.monitoring`` LINE events on those code objects alone) and
  reports them per case; the original's side turns them into semantic features
  (:func:`reach_features`): reaching the mutated function, then each line distance
  to the mutated line not seen before, then the line itself.  An input that gets
  closer joins the corpus and, as one of the newest entries, is a parent more
  often: the search climbs the valid prefix towards the mutation (the spirit of
  AFLGo's distance, measured in lines of the mutated function).
* **Constants.**  The constants of the mutated line, in the original and in the
  mutant, and of the test that guards it (with each integer's neighbours: a
  boundary is told apart at the bound and one past it), go first in the campaign's dictionary, where the comparison
  log's replacements and the dictionary mutations put them at the compared place.
  A size the line compares beyond the target's ``max_len`` raises the campaign's
  ``max_len`` (:func:`reach_len`) and gives the dictionary a run of that length.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import sys
import tokenize
import types
from collections.abc import Callable, Hashable, Iterable, Mapping

from assay.core import observe
from assay.feedback.sysmon import claim_tool_id, monitoring, release_tool_id
from assay.mutant import reshape
from assay.mutant.model import Mutant

#: Steer survivor campaigns towards the mutated line (off: coverage of the original alone guides them).
DIRECTED = True
#: Line distances at or beyond this are one feature class (a long function's far lines are no nearer).
MAX_DISTANCE = 64
#: Distinct words of an entry the constants are put in place of (the last ones)...
MAX_WORDS = 16
#: ...and replacements tried per entry at most.
MAX_AIMED = 256
#: Longest constant put in place of a word (longer ones stay in the dictionary).
MAX_VALUE_TOKEN = 64
#: Shares of the parent picks (the engine's productive parents) an entry earns by getting nearer
#: to the mutated line than any before it (AFLGo's power schedule, in one step).
FAVOUR_SHARES = 64
#: Largest ``max_len`` a survivor's campaign raises itself to, to reach a compared size.
MAX_REACH_LEN = 1 << 20
#: Fewest bytes beyond the largest compared size that a raised ``max_len`` leaves room for (a prefix, a
#: terminator); the room is the target's own ``max_len`` when that is more, so a word of any input the
#: target takes can grow to the compared size (a 1,025-byte boundary in a 240-byte form upload).
REACH_SLACK = 64
#: Longest run of filler bytes given to the dictionary for a compared size.
MAX_FILLER = 1 << 16
#: Also repeat and shift the lines of the first entry to come within :data:`RESHAPE_DISTANCE` lines of
#: the mutated line, and give the first entry that reaches the mutated function a preamble before its
#: delimiter (:mod:`assay.mutant.reshape`).
RESHAPE = True
RESHAPE_DISTANCE = 1
_TOOL_NAME = "assay-mutant-direct"
_FEATURE = "mutant-reach"


def mutated_line_constants(mutant: Mutant, text: str, names: Mapping[str, object] | None = None) -> list[object]:
    """The constants of the mutated line(s), in the original text and in the replacement, then of its guard.

    Literals, upper-case names whose value in ``names`` (the mutated function's
    globals) is a number, a text or bytes (``len(body) > MAX_BODY`` compares with ``MAX_BODY``),
    and ``self.NAME`` where the class's source gives its starting value (:func:`_instance_values`).
    The guard is the test of the innermost ``if`` or ``while`` whose body (or ``else``)
    holds the mutated lines: a removed ``raise`` under ``if len(b) > 1024:`` is told
    apart only by an input that meets that test.
    """
    lines = text.splitlines(keepends=True)
    original = "".join(lines[mutant.edit.line - 1 : mutant.edit.end_line])
    found: list[object] = []
    sources = (original, mutant.edit.replacement, *_guard_tests(text, mutant.edit.line))
    attributes = _instance_values(text, mutant.edit.line, names or {}) if any("self." in s for s in sources) else {}
    for source in sources:
        values = [
            *_literals(source, names or {}),
            *(attributes[a] for a in _SELF_ATTRIBUTE.findall(source) if a in attributes),
        ]
        for value in values:
            if value not in found:
                found.append(value)
    return found


_SELF_ATTRIBUTE = re.compile(r"\bself\.([A-Za-z_]\w*)")


def _instance_values(text: str, line: int, names: Mapping[str, object]) -> dict[str, object]:
    """The values ``self.NAME`` starts with in the class whose body holds ``line``, where its source says.

    ``self.NAME = <constant>`` in one of its methods, or ``self.NAME = param`` where
    ``param`` defaults to a constant (``max_header_size=4096 + 128``), or ``NAME =
    <constant>`` in the class body: ``len(line) > self.max_header_size`` compares with 4,224.
    A name assigned two different values is left out.
    """
    tree = _parsed(text)
    if tree is None:
        return {}
    classes = [
        n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    if not classes:
        return {}
    owner = max(classes, key=lambda n: n.lineno)
    values: dict[str, object] = {}
    clashes: set[str] = set()

    def note(name: str, node: ast.expr | None, defaults: Mapping[str, ast.expr]) -> None:
        if isinstance(node, ast.Name) and node.id in defaults:
            node = defaults[node.id]
        value = _constant(node, names) if node is not None else None
        if value is None:
            return
        if values.setdefault(name, value) != value:
            clashes.add(name)

    for item in owner.body:
        if isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name):
                    note(target.id, item.value, {})
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = item.args
            positional = [*args.posonlyargs, *args.args]
            defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults))
            defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
            for node in ast.walk(item):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            note(target.attr, node.value, defaults)
    return {name: value for name, value in values.items() if name not in clashes}


#: Largest exponent of a ``**`` a constant expression is folded with (``2**64`` is, ``10**10**6`` not).
MAX_POWER = 128
_FOLDED = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.LShift: lambda a, b: a << b,
    ast.Pow: lambda a, b: a**b,
}


def _constant(node: ast.expr, names: Mapping[str, object]) -> object | None:
    """An integer, text or bytes constant expression's value (literals, upper-case globals, integer arithmetic)."""
    if isinstance(node, (ast.Constant, ast.Name)):
        found: object = (
            node.value if isinstance(node, ast.Constant) else names.get(node.id) if node.id.isupper() else None
        )
        return found if isinstance(found, (int, str, bytes)) and not isinstance(found, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _constant(node.operand, names)
        return -operand if isinstance(operand, int) else None
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLDED:
        left, right = _constant(node.left, names), _constant(node.right, names)
        if not isinstance(left, int) or not isinstance(right, int):
            return None
        if isinstance(node.op, (ast.Pow, ast.LShift)) and not 0 <= right <= MAX_POWER:
            return None
        if isinstance(node.op, ast.FloorDiv) and right == 0:
            return None
        return _FOLDED[type(node.op)](left, right)
    return None


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> ast.Module | None:
    """``text``'s syntax tree (None: it does not parse), parsed once for the guard and the instance's values.

    Callers only read it.
    """
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _guard_tests(text: str, line: int) -> list[str]:
    """The source of the test of the innermost ``if``/``while`` whose body holds ``line`` (none outside one)."""
    tree = _parsed(text)
    guard = None if tree is None else guard_of(tree, line)
    segment = ast.get_source_segment(text, guard.test) if guard is not None else None
    return [segment] if segment else []


def guard_of(tree: ast.AST, line: int) -> ast.If | ast.While | None:
    """The innermost ``if``/``while`` whose body holds ``line`` (None outside one)."""
    guard: ast.If | ast.While | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.If, ast.While))
            and (node.test.end_lineno or node.lineno) < line <= (node.end_lineno or node.lineno)
            and (guard is None or node.lineno > guard.lineno)
        ):
            guard = node
    return guard


def _literals(source: str, names: Mapping[str, object]) -> Iterable[object]:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = []
    for tok in tokens:
        if tok.type == tokenize.NAME:
            # Only names written as constants: a lower-case name may be a local that shadows a global.
            value = names.get(tok.string) if tok.string.isupper() else None
        elif tok.type in (tokenize.NUMBER, tokenize.STRING):
            try:
                value = ast.literal_eval(tok.string)
            except (ValueError, SyntaxError):
                continue
        else:
            continue
        if isinstance(value, (int, str, bytes)) and not isinstance(value, bool):
            yield value


def constant_tokens(constants: list[object]) -> list[bytes]:
    """Dictionary tokens for the mutated line's constants: texts, bytes, integers and their neighbours."""
    out: list[bytes] = []
    for value in constants:
        if isinstance(value, int):
            for n in (value, value + 1, value - 1):
                out.append(str(n).encode())
            if 1 < value <= MAX_FILLER:
                out.append(b"A" * (value + 1))  # a compared size: one past the bound
        elif isinstance(value, str):
            out.append(value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, bytes):
            out.append(value)
    return [t for t in dict.fromkeys(out) if t]


def reach_len(max_len: int, constants: list[object]) -> int:
    """``max_len`` raised so that every integer the mutated line compares fits (at most :data:`MAX_REACH_LEN`).

    The raise is the largest such size plus room for the rest of an input (``max_len``
    itself, at least :data:`REACH_SLACK`): the aim grows one word of an entry to the
    size, and the entry keeps its other bytes.
    """
    sizes = [c for c in constants if isinstance(c, int) and not isinstance(c, bool) and max_len <= c < MAX_REACH_LEN]
    if not sizes:
        return max_len
    return min(MAX_REACH_LEN, max(sizes) + max(REACH_SLACK, max_len))


def mutated_codes(functions: Iterable[types.FunctionType]) -> list[types.CodeType]:
    """The code objects of the mutated functions, nested ones included."""
    out: list[types.CodeType] = []
    stack = [fn.__code__ for fn in functions]
    while stack:
        code = stack.pop()
        out.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


class LineProbe:
    """Records which lines of the mutated code run (in the mutant's process only)."""

    def __init__(
        self,
        codes: list[types.CodeType],
        watch: Callable[[int, types.FrameType], bool] | None = None,
        watched: frozenset[int] = frozenset(),
    ) -> None:
        self.codes = codes
        self.lines: set[int] = set()
        self.tool: int | None = None
        #: Called with the frame each time one of the ``watched`` lines is about to run, while it returns
        #: True (:class:`assay.mutant.meet.OperandProbe`); other lines are seen once per case.
        self.watch = watch
        self.watched = watched if watch is not None else frozenset()

    def start(self) -> None:
        mon = monitoring()
        self.tool = claim_tool_id(_TOOL_NAME)
        lines = self.lines
        watch, watched = self.watch, self.watched

        def on_line(code, line):  # noqa: ARG001
            lines.add(line)
            if line in watched and watch(line, sys._getframe(1)):  # watched is empty without a watch
                return None
            return mon.DISABLE  # once per case: restart_events() at the next one re-arms it

        mon.register_callback(self.tool, mon.events.LINE, on_line)
        for code in self.codes:
            mon.set_local_events(self.tool, code, mon.events.LINE)

    def begin(self) -> None:
        """Forget the last case's lines and re-arm the disabled events."""
        self.lines.clear()
        monitoring().restart_events()

    def taken(self) -> frozenset[int]:
        return frozenset(self.lines)

    def stop(self) -> None:
        if self.tool is not None:
            release_tool_id(self.tool, self.codes, [monitoring().events.LINE])
            self.tool = None


def reach_features(lines: frozenset[int] | None, line: int) -> list[Hashable]:
    """The features of one case's reach of the mutated ``line`` (nothing when the mutated code did not run)."""
    if not lines:
        return []
    distance = min(MAX_DISTANCE, min(abs(line - n) for n in lines))
    return [observe.feature_key(_FEATURE, "function"), observe.feature_key(_FEATURE, distance)]


class Aim:
    """The engine's ``aim`` in a directed campaign (see :class:`assay.engine.worker.WorkerPlan`).

    An entry nearer to the mutated line than any before it earns
    :data:`FAVOUR_SHARES` of the parent picks, and its words replaced by the mutated
    line's constants (and, for each integer ``n``, by runs of ``n - 1``, ``n`` and
    ``n + 1`` of the word's first byte, or the same runs appended) are tried on it
    first: the step from reaching the comparison to meeting its bound.  The first
    entry within :data:`RESHAPE_DISTANCE` lines also gets its lines repeated and its
    delimiters shifted, the first entry in the mutated function a preamble
    (:func:`assay.mutant.reshape.pairs`): the step when the input's shape, not a
    value, tells the mutant apart.
    """

    def __init__(self, constants: list[object], max_len: int, reshape: bool | None = None) -> None:
        self.best = MAX_DISTANCE + 1
        self.reshaping = RESHAPE if reshape is None else reshape
        self.max_len = max_len
        self.values = [t for t in constant_tokens(constants) if len(t) <= MAX_VALUE_TOKEN]
        self.sizes = sorted({c for c in constants if isinstance(c, int) and 1 < c <= min(MAX_FILLER, max_len)})

    def __call__(self, data: bytes, new: list[Hashable]) -> tuple[int, list[tuple[bytes, bytes]]]:
        distances = [k[2] for k in new if isinstance(k, tuple) and len(k) == 3 and k[:2] == ("f", _FEATURE)]
        nearest = min((int(d) for d in distances if isinstance(d, str) and d.isdigit()), default=None)
        if nearest is None or nearest >= self.best:
            return 0, []
        first, self.best = self.best > MAX_DISTANCE, nearest
        aimed = self.replacements(data)
        if self.reshaping and (first or nearest <= RESHAPE_DISTANCE):
            near = nearest <= RESHAPE_DISTANCE
            known = set(aimed)
            aimed += [p for p in reshape.pairs(data, self.values, self.max_len, repeat=near) if p not in known]
        return FAVOUR_SHARES, aimed

    def replacements(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """Replacement pairs putting the constants (and runs of the compared sizes) into ``data``."""
        words = list(dict.fromkeys(reshape.WORD.findall(data)))[-MAX_WORDS:]
        pairs: list[tuple[bytes, bytes]] = []
        room = self.max_len - len(data)
        for word in reversed(words):  # the words nearest the end were read last, nearest the comparison
            pairs.extend((word, v) for v in self.values if v != word and len(v) - len(word) <= room)
            for n in self.sizes:
                pairs.extend((word, word[:1] * k) for k in (n - 1, n, n + 1) if k - len(word) <= room)
        tail = data[-4:]
        if tail:
            for n in self.sizes:
                pairs.extend((tail, tail + b"A" * k) for k in (n - 1, n, n + 1) if k <= room)
        return list(dict.fromkeys(pairs))[:MAX_AIMED]
