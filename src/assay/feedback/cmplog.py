"""Comparison feedback (input-to-state), in the spirit of AFL++'s CmpLog.

Design
------
The fast path must stay untouched, so comparisons are *not* traced during normal
execution. Instead every in-scope source file is compiled a second time from an
AST in which each comparison (``==``, ``!=``, ordering, ``in``; each link of a
chain such as ``0 <= x <= 0xD7FF``) becomes a call to a recorder, and
``startswith``/``endswith``/``dict.get`` calls and character-class checks
(``set.issuperset``/``issubset``) go through one too: an instrumented twin of
each code object (like pytest rewriting asserts). Only when a new corpus entry
is analysed are the twins swapped into the live functions (``fn.__code__``), the
entry is run once, and the code that was live (the feedback's split code, see
:mod:`assay.feedback.edgesplit`) is swapped back. Nested functions, lambdas
and comprehensions follow their parent's code, so swapping the module- and
class-level functions covers them.  A function behind ``functools.lru_cache`` gets
a twin too, and while an entry is recorded its name is bound to the function
itself: the entry's plain run has just filled the cache, and a hit would run none
of the comparisons (``tomllib``'s time-zone sign, all of ``urllib.parse.urlsplit``).

The recorded operand pairs become *input-to-state* replacements: when one
operand's encoding (bytes, UTF-8, a byte, ASCII decimal, little/big-endian
integers) occurs in the input, replacing it with the other operand's encoding is
a mutation that solves that comparison in one step. An ordering of two ints that
equal operands would not flip (``x <= 0xD7FF`` holding) also records the value
one past the other operand, as AFL++ does for its less/greater comparisons.
Operands that do not occur in the input go to the dictionary instead. Parsers
compare *decoded* values, so :mod:`assay.feedback.decoded` adds the forms a
value takes before decoding (hex, floats, zero-padded fields, base64/base32,
percent and JSON escapes, other letter case) and AFL++-style transforms (a byte
run xor'ed or shifted by a constant), each giving at most one pair per form and
comparison.

Checksums and length fields defeat a replacement made once: the value one side of
``crc32(payload) == stored`` must take changes with every later mutation of the
payload.  So an analysis also notes *guards*: equality sites between two computed
values (neither side a literal) that held for the entry and whose value occurs in
its bytes.  A child of that entry can then be *repaired*: run once more with the
twins, and wherever a guard now fails, the stale value is overwritten with the one
the other side computed (Redqueen's checksum handling, without patching the target).

A recorded run costs a call per comparison.  It is cut short past
:data:`MAX_COMPARED` comparisons (the buffers are full long before; only the cost
climb's longest inputs get there), and every recorded run goes through the C twin's
recorder (``_cmutate.Recorder``) when it is built.
"""

from __future__ import annotations

import ast
import dis
import functools
import hashlib
import heapq
import operator
import re
import zlib
from collections.abc import Callable, Collection, Iterable
from types import CodeType, FunctionType, ModuleType
from typing import Any

from assay.feedback.decoded import DecodedForms
from assay.feedback.livecode import functions_of, memo_caches, modules_by_file
from assay.feedback.protocol import TWIN_MARK, RecordingCut
from assay.feedback.records import record_pairs
from assay.feedback.twincache import TwinCache
from assay.gen.accelerated import cmutate, object_id
from assay.gen.schema.regex import full_matches

#: Most operand pairs recorded while analysing one input.
MAX_RECORDS = 1024
#: Most replacement pairs kept per corpus entry.
MAX_PAIRS = 64
#: Candidate pairs considered per analysis before the :data:`MAX_PAIRS` are chosen.
PAIR_CANDIDATES = 4 * MAX_PAIRS
#: Candidate pairs from regular expressions' samples (:class:`Sample`), on top.
SAMPLE_CANDIDATES = MAX_PAIRS // 2
#: Most dictionary tokens one analysis contributes.
MAX_TOKENS = 32
#: Longest operand (in bytes) worth recording.
MAX_OPERAND = 256
#: Longest suffix of an input that anchors a value appended past its end (see ``_past_the_end``).
MAX_SUFFIX = 8
#: Most elements of a container (``x in {...}``) turned into pairs.
MAX_CONTAINER = 16
#: Most source files compiled as twins.
MAX_FILES = 400
#: Most guard-site observations recorded while analysing one input.
MAX_GUARD_RECORDS = 512
#: Most guards kept per corpus entry.
MAX_GUARDS = 8
#: Encodings a guard's value may have in the input: wide enough not to be chance.
_GUARD_KINDS = ("le4", "be4", "le8", "be8", "le2", "be2", "raw", "dec")

_OPS: dict[type, tuple[int, Callable[[Any, Any], Any]]] = {
    ast.Eq: (0, operator.eq),
    ast.NotEq: (1, operator.ne),
    ast.Lt: (2, operator.lt),
    ast.LtE: (3, operator.le),
    ast.Gt: (4, operator.gt),
    ast.GtE: (5, operator.ge),
    ast.In: (6, lambda a, b: a in b),
    ast.NotIn: (7, lambda a, b: a not in b),
}
_BY_ID = dict(_OPS.values())
_CALLS = ("startswith", "endswith", "get", "issuperset", "issubset", "match", "fullmatch", "search")
#: Strings drawn once per regular expression (:func:`_record_regex`); each match
#: gets :data:`REGEX_PAIRS` of them, chosen by the text it matched.
REGEX_POOL = 16
REGEX_PAIRS = 4
#: Most pairs one expression contributes to one recorded run: a long input matches
#: the same number pattern hundreds of times, and the records are shared.
REGEX_RECORDS = 16
_CMP, _CALL, _LAST = "__assay_cmp__", "__assay_call__", "__assay_last__"
#: For an ordering of two ints that equal operands would not flip, the step past the
#: other operand that does (``x <= 55295`` holds: 55296 makes it fail); by op id.
_CROSS = {2: (-1, 0), 3: (0, 1), 4: (1, 0), 5: (0, -1)}

_records: list[tuple[Any, Any]] | None = None
_guard_records: list[tuple[int, Any, Any]] | None = None
_value_records: list[tuple[int, Any, Any]] | None = None
#: Comparisons made so far in the current recorded run.
_compared = 0
#: Pairs each regular expression recorded in the current recorded run.
_regex_records: dict[Any, int] = {}
#: The right operand of the last comparison: the left one of the next link of a chain.
_last: Any = None
#: Most (in)equality observations kept for the value profile per analysed input.
MAX_VALUE_RECORDS = 512
#: Most comparisons one recorded run makes before it is cut short (:class:`RecordingCut`).
#: An ordinary input fills the buffers above within a few thousand; the cost climb's
#: longest inputs make hundreds of thousands, at about 2 µs each, and little of what
#: they compare past this point could still be kept.
MAX_COMPARED = 1 << 16


def _record(a: Any, b: Any) -> None:
    rec = _records
    if rec is not None and len(rec) < MAX_RECORDS:
        rec.append((a, b))


def _is_operand(v: Any) -> bool:
    return isinstance(v, (bytes, bytearray, str, int)) and not isinstance(v, bool)


def assay_cmp(op: int, site: int, vsite: int, a: Any, b: Any) -> Any:
    """Replacement for one comparison: evaluate it and record its operands.

    ``site`` numbers an (in)equality between two computed values, -1 elsewhere;
    ``vsite`` numbers every (in)equality (the value profile's sites).
    """
    global _last, _compared
    _compared += 1
    if _compared > MAX_COMPARED:
        raise RecordingCut
    _last = b
    result = _BY_ID[op](a, b)
    if op <= 1 and _value_records is not None and len(_value_records) < MAX_VALUE_RECORDS:
        _value_records.append((vsite, a, b))
    if site >= 0 and _guard_records is not None and len(_guard_records) < MAX_GUARD_RECORDS:
        if type(a) is type(b) and _is_operand(a):
            _guard_records.append((site, a, b))
    if _records is not None:
        if op >= 6:
            _record_membership(a, b)
        elif (_is_operand(a) or type(a) is float) and (_is_operand(b) or type(b) is float) and a != b:
            _record(a, b)  # floats: only their decoded forms (assay.feedback.decoded) can match
        if op in _CROSS and type(a) is int and type(b) is int:
            step = _CROSS[op][bool(result)]
            if step:  # either side moved one past the other flips it
                _record(a, b + step)
                _record(a - step, b)
    return result


def _record_membership(a: Any, b: Any) -> None:
    """The pairs of ``a in b`` (or ``not in``): ``a`` against the container's first
    elements, or, for a substring, ``a`` wanted somewhere in the input (a token)."""
    if _records is None or len(_records) >= MAX_RECORDS:
        return  # full: the loop below would record nothing (a parser tests every character)
    if _is_operand(a) and isinstance(b, (tuple, list, set, frozenset, dict)) and len(b) <= 4096:
        for i, elem in enumerate(_in_order(b)):
            if i >= MAX_CONTAINER:
                break
            if _is_operand(elem):
                _record(a, elem)
    elif isinstance(a, (str, bytes)) and isinstance(b, (str, bytes)):
        _record(None, a)  # wants ``a`` somewhere in the input: a dictionary token


def assay_last() -> Any:
    """The right operand of the comparison just made (a chain's next left operand)."""
    return _last


#: The first elements, in order, of the frozensets recently compared against, by id
#: (the frozenset kept alive beside them, so an id is never reused while cached).
_ORDERED: dict[int, tuple[frozenset, list[Any]]] = {}


def _in_order(container: Any) -> Iterable[Any]:
    """A set's first :data:`MAX_CONTAINER` elements in an order that does not depend on ``PYTHONHASHSEED``.

    Set order follows string hashes, which differ between processes unless the seed
    is pinned; those elements become pairs, so without this a campaign run through
    the API would change with the interpreter.
    """
    if isinstance(container, frozenset):
        cached = _ORDERED.get(id(container))
        if cached is None or cached[0] is not container:
            if len(_ORDERED) >= 256:
                _ORDERED.clear()
            cached = _ORDERED[id(container)] = (container, heapq.nsmallest(MAX_CONTAINER, container, key=repr))
        return cached[1]
    if isinstance(container, set):  # it may change between two checks: never cached
        return heapq.nsmallest(MAX_CONTAINER, container, key=repr)
    return container


def assay_call(name: str, obj: Any, *args: Any, **kwargs: Any) -> Any:
    """Replacement for ``obj.name(*args)`` that records prefix/suffix/key compares."""
    result = getattr(obj, name)(*args, **kwargs)
    if _records is not None and args:
        want = args[0]
        if name in ("startswith", "endswith") and isinstance(obj, (str, bytes)):
            options = want if isinstance(want, tuple) else (want,)
            for w in options[:MAX_CONTAINER]:
                if isinstance(w, type(obj)) and w:
                    seen = obj[: len(w)] if name == "startswith" else obj[-len(w) :]
                    if seen != w:
                        _record(seen, w)
        elif name in ("issuperset", "issubset") and not result:
            allowed, run = (obj, want) if name == "issuperset" else (want, obj)
            fixed = _within(run, allowed)
            if fixed is not None:
                _record(run, fixed)
        elif name in ("match", "fullmatch", "search"):
            _record_regex(obj, args, kwargs, result)
        elif name == "get" and isinstance(obj, dict) and _is_operand(want) and want not in obj:
            for i, key in enumerate(obj):
                if i >= MAX_CONTAINER:
                    break
                if _is_operand(key):
                    _record(want, key)
    return result


def _record_regex(obj: Any, args: tuple, kwargs: dict, result: Any) -> None:
    """A regular expression's match as comparisons: what it matched (or, failing,
    the text where it was tried) against other strings the expression accepts.

    A regex hides its alternatives from comparison feedback: ``(?:(Z)|([+-])\\d\\d)?``
    compares nothing a recorder sees, and the branch taken after it tests only
    whether a group matched.  Strings drawn from the expression itself (each
    optional part, alternative and class member in turn likely) are the other
    operand.  ``re.match(pattern, string)`` and a compiled pattern's methods alike.
    """
    if obj is re:
        if len(args) < 2:
            return
        try:
            compiled = re.compile(args[0], args[2] if len(args) > 2 else kwargs.get("flags", 0))
        except (TypeError, re.error, ValueError, RecursionError):
            return
        string, pos = args[1], 0
    elif isinstance(obj, re.Pattern):
        compiled, string = obj, args[0]
        pos = args[1] if len(args) > 1 else kwargs.get("pos", 0)
    else:
        return
    if type(string) is not type(compiled.pattern) or not isinstance(pos, int):
        return
    made = _regex_records.get(compiled, 0)
    if made >= REGEX_RECORDS:
        return
    pool = _regex_pool(compiled)
    if not pool:
        return
    seen = result.group(0) if result is not None else string[pos : pos + MAX_OPERAND]
    first = _crc(seen)
    rec = _records
    for k in range(min(REGEX_PAIRS, len(pool))):
        sample = pool[(first + k) % len(pool)]
        other = seen if result is not None else string[pos : pos + len(sample)]
        if other and other != sample and len(rec) < MAX_RECORDS:  # type: ignore[arg-type]  # assay_call records only when _records is set
            rec.append(Sample((other, sample)))  # type: ignore[union-attr]
            made += 1
    _regex_records[compiled] = made


class Sample(tuple):
    """A pair whose second operand is a guess (a string a regular expression
    accepts), not a value the program compared against: as a record, and as the
    replacement :func:`input_to_state` makes of it, which comes after the
    comparisons' replacements there and in the input-to-state stage."""

    __slots__ = ()


def _crc(text: str | bytes) -> int:
    return zlib.crc32(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))


@functools.lru_cache(maxsize=256)
def _regex_pool(compiled: re.Pattern) -> tuple[Any, ...]:
    return tuple(full_matches(compiled, REGEX_POOL, _crc(compiled.pattern), MAX_OPERAND))


def _within(run: Any, allowed: Any) -> Any:
    """``run`` with every element outside ``allowed`` replaced by the least allowed one.

    The other operand of a character-class check (``HEX_DIGITS.issuperset(field)``):
    the same length, so the replacement keeps the input's structure around it.
    """
    if not isinstance(run, (str, bytes)) or not run or len(run) > MAX_OPERAND:
        return None
    if not isinstance(allowed, (set, frozenset, str, bytes)) or len(allowed) > 4096:
        return None
    if isinstance(run, str):
        chars = sorted(c for c in allowed if isinstance(c, str) and len(c) == 1)
        return "".join(c if c in allowed else chars[0] for c in run) if chars else None
    ints = sorted(c for c in allowed if isinstance(c, int) and 0 <= c < 256)
    return bytes(c if c in allowed else ints[0] for c in run) if ints else None


class _Rewriter(ast.NodeTransformer):
    def __init__(self, first_site: int) -> None:
        self.next_site = first_site
        self.next_vsite = 0

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if any(type(op) not in _OPS for op in node.ops):
            return node
        # ``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once: each later
        # link takes its left operand from the recorder (:func:`assay_last`), read
        # before its right operand is evaluated, so nested comparisons cannot clobber it.
        calls: list[ast.expr] = []
        lefts = [node.left, *node.comparators[:-1]]
        for k, (op, left, right) in enumerate(zip(node.ops, lefts, node.comparators)):
            op_id = _OPS[type(op)][0]
            site = -1
            if op_id <= 1 and not isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
                site, self.next_site = self.next_site, self.next_site + 1
            vsite = -1
            if op_id <= 1:
                vsite, self.next_vsite = self.next_vsite, self.next_vsite + 1
            operand = left if k == 0 else ast.Call(ast.Name(_LAST, ast.Load()), [], [])
            calls.append(
                ast.Call(
                    ast.Name(_CMP, ast.Load()),
                    [ast.Constant(op_id), ast.Constant(site), ast.Constant(vsite), operand, right],
                    [],
                )
            )
        out = calls[0] if len(calls) == 1 else ast.BoolOp(ast.And(), calls)
        return _located(out, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _CALLS
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            call = ast.Call(
                ast.Name(_CALL, ast.Load()), [ast.Constant(func.attr), func.value, *node.args], node.keywords
            )
            return _located(call, node)
        return node


def _located(new: ast.AST, old: ast.AST) -> ast.AST:
    """``new`` at ``old``'s position, and the nodes it made at the same: what
    ``ast.fix_missing_locations`` over the whole module would give them, for the cost
    of walking only this subtree."""
    return ast.fix_missing_locations(ast.copy_location(new, old))


@functools.cache
def _rewriter_digest() -> bytes:
    """A digest of this module's source: which rewriter a cached twin came from (:meth:`TwinCache.key`)."""
    with open(__file__, "rb") as fh:
        return hashlib.sha256(fh.read()).digest()


def _twin_codes(path: str, rewriter: _Rewriter, cache: TwinCache) -> dict[tuple[str, int], CodeType]:
    """Instrumented code objects of ``path``, by (qualname, first line); from ``cache`` when it has them."""
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError:
        return {}
    first_site, first_vsite = rewriter.next_site, rewriter.next_vsite
    key = cache.key(source, path, first_site, first_vsite, _rewriter_digest())
    cached = cache.load(key)
    if cached is not None:
        module_code, sites, vsites = cached
        rewriter.next_site, rewriter.next_vsite = first_site + sites, first_vsite + vsites
    else:
        try:
            module_code = compile(rewriter.visit(ast.parse(source, filename=path)), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError):
            return {}
        cache.store(key, module_code, rewriter.next_site - first_site, rewriter.next_vsite - first_vsite)
    found: dict[tuple[str, int], CodeType] = {}
    stack = [_marked(module_code)]
    while stack:
        code = stack.pop()
        for const in code.co_consts:
            if isinstance(const, CodeType):
                found[(const.co_qualname, const.co_firstlineno)] = const
                stack.append(const)
    return found


def _marked(code: CodeType) -> CodeType:
    """``code`` and the code it nests, each with :data:`TWIN_MARK` in ``co_names``.

    A name appended to ``co_names`` changes no instruction (they index the names
    before it); it tells the coverage feedback that this code runs only paused.
    """
    consts = tuple(_marked(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_consts=consts, co_names=(*code.co_names, TWIN_MARK))


class CmpLog:
    """Instrumented twins of the in-scope code, swapped in to analyse one input."""

    #: Also feed comparison progress back as features (:mod:`assay.feedback.valueprofile`).
    value_profile = True
    #: Record with the C recorder (``_cmutate.Recorder``) when it is built: the same
    #: records, without a Python call per comparison.
    native = cmutate is not None

    def __init__(self, scope_contains: Callable[[str], bool]) -> None:
        self.contains = scope_contains
        self.swaps: list[tuple[FunctionType, CodeType, CodeType]] = []
        #: The modules whose functions have twins (they hold the recorder names).
        self.modules: list[ModuleType] = []
        self.files = 0
        #: The (in)equality observations ``(vsite, a, b)`` of the last :meth:`record`.
        self.last_values: list[tuple[int, Any, Any]] = []
        #: ``(namespace, name, cache)``: in-scope memo caches, bypassed while recording.
        self.caches: list[tuple[Any, str, Any]] = []
        #: Where compiled twins are kept between campaigns (:mod:`assay.feedback.twincache`).
        self.twin_cache = TwinCache.default()
        #: The functions whose live code has run and their twins, for :meth:`record`'s ``ran``,
        #: with the size of ``ran`` they were picked at (it only grows)...
        self._ran_swaps: tuple[int, list[FunctionType], list[CodeType]] = (-1, [], [])
        #: ...and every function and its twin, with the size of :attr:`swaps` then.
        self._all_swaps: tuple[int, list[FunctionType], list[CodeType]] = (-1, [], [])
        #: Guard site -> the indices in :attr:`swaps` whose twins compare at it (see :meth:`_owners`).
        self._site_owners: dict[int, tuple[int, ...]] = {}
        #: Int constant -> the indices in :attr:`swaps` whose twins (or code nested in them) call the
        #: recorder and hold it: the candidates :meth:`_owners` reads (made at the first repair).
        self._by_constant: dict[int, list[int]] | None = None
        #: A repair's guard sites -> the functions that hold them, their twins and their modules' namespaces.
        self._site_swaps: dict[tuple[int, ...], tuple[list[FunctionType], list[CodeType], list[dict]]] = {}

    def attach(self) -> None:
        """Compile twins for every imported in-scope module and pair them with live functions."""
        by_file = modules_by_file(self.contains)
        rewriter = _Rewriter(first_site=0)  # site numbers unique across files
        for path in sorted(by_file)[:MAX_FILES]:
            twins = _twin_codes(path, rewriter, self.twin_cache)
            if not twins:
                continue
            self.files += 1
            for module in by_file[path]:
                vars(module).setdefault(_CMP, assay_cmp)
                vars(module).setdefault(_CALL, assay_call)
                vars(module).setdefault(_LAST, assay_last)
                self.modules.append(module)
                for fn in functions_of(module):
                    code = fn.__code__
                    twin = twins.get((code.co_qualname, code.co_firstlineno))
                    if twin is not None and len(twin.co_freevars) == len(code.co_freevars):
                        self.swaps.append((fn, code, twin))
                self.caches.extend(
                    c for c in memo_caches(module) if self.contains(c[2].__wrapped__.__code__.co_filename)
                )
        self.twin_cache.prune()

    def record(
        self,
        run: Callable[[], Any],
        keep: str = "all",
        ran: Collection[int] | None = None,
        sites: Collection[int] | None = None,
    ) -> tuple[list[tuple[Any, Any]], list[tuple[int, Any, Any]]]:
        """Run ``run`` with the twins swapped in: the operand pairs it compared, and
        the guard-site observations ``(site, a, b)``.

        ``keep`` is what to record: ``"all"``, or only ``"values"`` (:attr:`last_values`,
        for a value-profile run) or ``"guards"`` (for a repair); what is not kept comes
        back empty.  Recording pairs is most of a recorded run's cost.  A run that
        makes more than :data:`MAX_COMPARED` comparisons is cut short there.

        ``ran``: the ``id()`` of every live code object that has run (a set that only
        grows, such as :attr:`assay.feedback.sysmon.SysmonFeedback.started`); only those
        functions get their twins.  For an input that has just run unrecorded it is
        the same record: the functions it calls are among them.  Swapping a twin in
        and out costs a loop turn and an audit event a function in Python (less in C,
        :func:`_swap_codes`), and a big library has hundreds that a campaign never calls.

        ``sites``: for a repair (``keep="guards"``), the guard sites it reads; only the
        functions whose twins compare at them get their twins (:meth:`_owners`).  The
        other functions' comparisons are never read by :func:`repair`, and a twin computes
        what its original does, so the records of those sites are the same.  A repair of
        a big library's child cost 0.8 ms with every twin swapped in and out, against a
        plain run of about 0.1 ms.
        """
        global _records, _guard_records, _value_records, _compared
        records: list[tuple[Any, Any]] = []
        guard_records: list[tuple[int, Any, Any]] = []
        self.last_values = []
        _records = records if keep == "all" else None
        _guard_records = guard_records if keep in ("all", "guards") else None
        _value_records = self.last_values if keep in ("all", "values") else None
        native = self.native and cmutate is not None
        if sites is not None and keep == "guards":
            functions, twins, spaces = self._for_sites(sites)
        else:
            functions, twins = self._swapped(ran)
            spaces = [vars(module) for module in self.modules]
        if native:
            recorder = cmutate.Recorder(  # type: ignore[union-attr]  # native: cmutate is not None
                self.last_values if _value_records is not None else None,
                MAX_VALUE_RECORDS,
                MAX_COMPARED,
                RecordingCut,
                guards=_guard_records,
                max_guards=MAX_GUARD_RECORDS,
                records=_records,
                max_records=MAX_RECORDS,
                in_order=_in_order,
                max_members=MAX_CONTAINER,
            )
            for space in spaces:
                space.update({_CMP: recorder, _LAST: recorder.last})
        # What runs outside an analysis changed since attach() (the feedback's
        # split code): put back what was live, not ``orig``.
        live = _swap_codes(functions, twins)
        # A memo cache's hit would hide the comparisons of every call it has seen.
        for space, name, cache in self.caches:
            setattr(space, name, cache.__wrapped__)
        _compared = 0
        _regex_records.clear()
        try:
            run()
        except RecordingCut:
            pass  # what was recorded up to the cut is the answer
        finally:
            for space, name, cache in self.caches:
                setattr(space, name, cache)
            _swap_codes(functions, live)
            _records = _guard_records = _value_records = None
            if native:
                for space in spaces:
                    space.update({_CMP: assay_cmp, _LAST: assay_last})
        return records, guard_records

    def _for_sites(self, sites: Collection[int]) -> tuple[list[FunctionType], list[CodeType], list[dict]]:
        """The functions whose twins compare at guard ``sites``, their twins, and the namespaces they read."""
        key = tuple(sorted(set(sites)))
        found = self._site_swaps.get(key)
        if found is None:
            chosen = sorted({k for site in key for k in self._owners(site)})
            functions = [self.swaps[k][0] for k in chosen]
            spaces = list({id(fn.__globals__): fn.__globals__ for fn in functions}.values())
            found = (functions, [self.swaps[k][2] for k in chosen], spaces)
            self._site_swaps[key] = found
        return found

    def _owners(self, site: int) -> tuple[int, ...]:
        """Indices in :attr:`swaps` whose twin, or code nested in it, compares at guard ``site``.

        Found once per site: the twins holding ``site`` among their constants (one pass over
        every twin for all sites), then their bytecode read for the recorder's call with that
        site (a constant equal to it by chance is not the site); code read differently than
        expected keeps its function.
        """
        owners = self._site_owners.get(site)
        if owners is None:
            if self._by_constant is None:
                self._by_constant = _recorder_constants([twin for _fn, _code, twin in self.swaps])
            candidates = self._by_constant.get(site, [])
            owners = tuple(k for k in candidates if _compares_at(self.swaps[k][2], site))
            self._site_owners[site] = owners
        return owners

    def _swapped(self, ran: Collection[int] | None) -> tuple[list[FunctionType], list[CodeType]]:
        """The functions :meth:`record` gives twins, and their twins (picked again when ``ran`` grew)."""
        if ran is None:
            size, functions, twins = self._all_swaps
            if size != len(self.swaps):
                functions, twins = [s[0] for s in self.swaps], [s[2] for s in self.swaps]
                self._all_swaps = (len(self.swaps), functions, twins)
            return functions, twins
        size, functions, twins = self._ran_swaps
        if size != len(ran):
            # A memo cache's function may not have run in this process (a cache filled
            # before the feedback started), and the recorded run bypasses the cache.
            # (object_id: no audit event per function, and a big library has hundreds)
            memo = {object_id(cache.__wrapped__) for _space, _name, cache in self.caches}
            chosen = [s for s in self.swaps if object_id(s[0].__code__) in ran or object_id(s[0]) in memo]
            functions, twins = [s[0] for s in chosen], [s[2] for s in chosen]
            self._ran_swaps = (len(ran), functions, twins)
        return functions, twins


def _recorder_constants(twins: list[CodeType]) -> dict[int, list[int]]:
    """Int constant -> the indices of ``twins`` holding it in code (theirs or nested) that calls the recorder."""
    found: dict[int, list[int]] = {}
    for k, twin in enumerate(twins):
        constants: set[int] = set()
        stack = [twin]
        while stack:
            code = stack.pop()
            if _CMP in code.co_names:
                constants.update(c for c in code.co_consts if type(c) is int)
            stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
        for c in constants:
            found.setdefault(c, []).append(k)
    return found


def _compares_at(twin: CodeType, site: int) -> bool:
    """Whether ``twin`` or code nested in it calls the recorder with guard site ``site``."""
    stack = [twin]
    while stack:
        code = stack.pop()
        if _CMP in code.co_names and any(type(c) is int and c == site for c in code.co_consts):
            found = _site_args(code)
            if found is None or site in found:
                return True
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
    return False


@functools.lru_cache(maxsize=4096)
def _site_args(code: CodeType) -> frozenset[int] | None:
    """The guard sites ``code`` itself passes to the recorder, or None if its calls read differently.

    The rewriter's call is ``__assay_cmp__(op, site, vsite, a, b)``: the name, then
    three constants.
    """
    instructions = list(dis.get_instructions(code))
    found: set[int] = set()
    for k, ins in enumerate(instructions):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval == _CMP:
            args = instructions[k + 1 : k + 4]
            if len(args) < 3 or any(a.opname != "LOAD_CONST" for a in args):
                return None
            found.add(args[1].argval)
    return frozenset(found)


def _python_swap_codes(functions: list[FunctionType], codes: list[CodeType]) -> list[CodeType]:
    """Set each function's ``__code__``; the codes they had (``_cmutate.swap_codes``' reference)."""
    previous = [fn.__code__ for fn in functions]
    for fn, code in zip(functions, codes):
        fn.__code__ = code
    return previous


#: The C twin when built (no audit event per assignment, see cmutate_swap.c); an older build lacks it.
_swap_codes: Callable[[list[FunctionType], list[CodeType]], list[CodeType]] = (
    getattr(cmutate, "swap_codes", None) or _python_swap_codes
)


def _encodings(v: Any) -> dict[str, bytes]:
    """The ways ``v`` may appear in input bytes, by kind (a shared dict: read it, never change it)."""
    kind = type(v)
    if kind is str or kind is bytes or kind is int:
        return _cached_encodings(kind, v)  # type: ignore[arg-type]  # a type is hashable
    return _encode(v)


@functools.lru_cache(maxsize=4096)
def _cached_encodings(kind: type, v: Any) -> dict[str, bytes]:  # noqa: ARG001 - part of the cache key
    # A parser compares every character against the same few constants: each is encoded once.
    return _encode(v)


def _encode(v: Any) -> dict[str, bytes]:
    if isinstance(v, (bytes, bytearray)):
        return {"raw": bytes(v)} if 0 < len(v) <= MAX_OPERAND else {}
    if isinstance(v, str):
        raw = v.encode("utf-8", "surrogatepass")
        return {"raw": raw} if 0 < len(raw) <= MAX_OPERAND else {}
    if isinstance(v, int):
        out = {"dec": str(v).encode()}
        if 0 <= v <= 0xFF:
            out["u8"] = bytes([v])
        for width in (2, 4, 8):
            if -(1 << (8 * width - 1)) <= v < (1 << (8 * width)):
                u = v % (1 << (8 * width))
                out[f"le{width}"] = u.to_bytes(width, "little")
                out[f"be{width}"] = u.to_bytes(width, "big")
        return out
    return {}


def _matching(a: Any, b: Any) -> list[tuple[bytes, bytes]]:
    """Pairs (how ``a`` appears, what ``b`` would look like there), kind with kind."""
    ea, eb = _encodings(a), _encodings(b)
    return [(ea[k], eb[k]) for k in ea if k in eb]


def _distinct(records: list[tuple[Any, Any]]) -> Iterable[tuple[Any, Any]]:
    """``records`` without repeats (a loop compares the same pair over and over)."""
    seen: set[tuple[Any, Any]] = set()
    for record in records:
        try:
            if record in seen:
                continue
            seen.add(record)
        except TypeError:  # a bytearray operand
            pass
        yield record


def input_to_state(data: bytes, records: list[tuple[Any, Any]]) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """Replacement pairs whose pattern occurs in ``data``, and dictionary tokens.

    At most :data:`MAX_PAIRS`, multi-byte patterns first: a parser checks each
    character of a key against a class (``c in BARE_KEY_CHARS``), and those
    one-byte pairs would otherwise crowd out the rarer field-sized ones (a
    keyword, a hex field, a magic number) recorded later in the same run.
    Within each length class the comparisons' pairs come before the regular
    expressions' :class:`Sample` guesses, which have a candidate budget of their own
    (:data:`SAMPLE_CANDIDATES`) so a run full of comparisons still keeps a few.
    """
    # ``data.find(x) != -1``, not ``x in data``: on CPython 3.12 a bytes operand of ``in``
    # is first tried as an integer, and the TypeError costs about a microsecond a test.
    forms = DecodedForms(data)
    compared: dict[tuple[bytes, bytes], None] = {}
    guessed: dict[tuple[bytes, bytes], None] = {}
    tokens: dict[bytes, None] = {}
    for record in _distinct(records):
        a, b = record
        if a is None:
            for tok in _encodings(b).values():
                if data.find(tok) == -1:
                    tokens.setdefault(tok, None)
            continue
        pairs, budget = (guessed, SAMPLE_CANDIDATES) if type(record) is Sample else (compared, PAIR_CANDIDATES)
        for x, y in _matching(a, b) + _matching(b, a):
            if x != y and data.find(x) != -1:
                if len(pairs) < budget:
                    pairs.setdefault((x, y), None)
            elif data.find(y) == -1 and len(tokens) < MAX_TOKENS:
                tokens.setdefault(y, None)
        if len(pairs) < budget:
            for x, y in forms.pairs(a, b) + forms.pairs(b, a):
                if x != y and len(pairs) < budget:
                    pairs.setdefault((x, y), None)
        if _empty(a) != _empty(b):
            _past_the_end(data, b if _empty(a) else a, pairs, budget, tokens)
    guesses = [Sample(p) for p in guessed if p not in compared]
    structural = record_pairs(data, [r for r in _distinct(records) if r[0] is not None], compared)
    ordered = (
        structural
        + [p for p in compared if len(p[0]) > 1]
        + [p for p in guesses if len(p[0]) > 1]
        + [p for p in compared if len(p[0]) <= 1]
        + [p for p in guesses if len(p[0]) <= 1]
    )
    return ordered[:MAX_PAIRS], list(tokens)[:MAX_TOKENS]


def _empty(v: Any) -> bool:
    return (type(v) is bytes or type(v) is str) and not v


def _past_the_end(data: bytes, value: Any, pairs: dict, budget: int, tokens: dict) -> None:
    """A comparison of an empty operand (the input ran out: ``data[4:8] == b"BUG!"`` on a
    four-byte input) with ``value``: ``value`` appended after the input's end, as the pair
    (the shortest suffix that occurs once, that suffix followed by ``value``), and as a token.

    A trimmed corpus entry (:mod:`assay.engine.trim`) ends where its news end: the field
    the next branch reads is past its end, and no byte of it is there to be replaced.
    """
    for enc in _encodings(value).values():
        if data.find(enc) != -1:
            continue  # in the input already: not a constant the input lacks
        if len(tokens) < MAX_TOKENS:
            tokens.setdefault(enc, None)
        for k in range(1, min(len(data), MAX_SUFFIX) + 1):
            if data.find(data[-k:]) == len(data) - k:
                if len(pairs) < budget:
                    pairs.setdefault((data[-k:], data[-k:] + enc), None)
                break


def replace_one(data: bytes, pattern: bytes, replacement: bytes, pick: int) -> bytes | None:
    """``data`` with the ``pick``-th occurrence (modulo the count) of ``pattern`` replaced."""
    spots: list[int] = []
    start = data.find(pattern)
    while start != -1 and len(spots) < 64:
        spots.append(start)
        start = data.find(pattern, start + 1)
    if not spots:
        return None
    at = spots[pick % len(spots)]
    return data[:at] + replacement + data[at + len(pattern) :]


def guards_of(data: bytes, guard_records: list[tuple[int, Any, Any]]) -> list[tuple[int, str, int]]:
    """Guards ``(site, encoding kind, offset)``: held equalities whose value is in ``data``.

    A value shorter than two bytes in the input, or a small integer, is too likely
    to be there by chance.
    """
    guards: dict[int, tuple[int, str, int]] = {}
    for site, a, b in guard_records:
        if a != b or site in guards:
            continue
        encodings = _encodings(a)
        for kind in _GUARD_KINDS:
            enc = encodings.get(kind)
            if enc is None or len(enc) < 2 or isinstance(a, int) and abs(a) < (10 if kind == "dec" else 256):
                continue
            at = data.find(enc)
            if at != -1:
                guards[site] = (site, kind, at)
                break
        if len(guards) >= MAX_GUARDS:
            break
    return list(guards.values())


def repair(data: bytes, guard_records: list[tuple[int, Any, Any]], guards: list[tuple[int, str, int]]) -> bytes | None:
    """``data`` with each broken guard's stale value overwritten, or None if none could be.

    ``guard_records`` come from running ``data`` itself.  For a guard that now fails,
    whichever side's encoding still sits in the input (at the guard's offset if it
    can) is replaced by the other side's.
    """
    wanted = {site: (kind, at) for site, kind, at in guards}
    out = data
    done: set[int] = set()
    for site, a, b in guard_records:
        if site not in wanted or site in done or a == b:
            continue
        done.add(site)
        kind, at = wanted[site]
        ea, eb = _encodings(a).get(kind), _encodings(b).get(kind)
        if ea is None or eb is None:
            continue
        for stale, fresh in ((ea, eb), (eb, ea)):
            spot = at if out[at : at + len(stale)] == stale else out.find(stale)
            if spot != -1:
                out = out[:spot] + fresh + out[spot + len(stale) :]
                break
    return out if out != data else None
