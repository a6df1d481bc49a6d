"""The mutation operators: what each family changes, where it must not, and that every edit compiles.

Each example mutant below is checked to behave differently on an input picked
for it.  In general some families can yield equivalent mutants, which no test
can kill: ``compare.boundary`` where the two sides are never equal,
``constant.adjust``/``value.widen-bound`` where the value only matters through
a coarser check, ``call.drop-keyword`` where a non-literal value equals the
default at run time, ``statement.delete`` on a call without effect, and
``predicate.drop-clause`` on a clause implied by the others.
"""

from __future__ import annotations

import ast
import builtins
import collections
import copy
import importlib
import json
import sysconfig
import textwrap
from pathlib import Path

import pytest

from assay.mutant.model import EXPRESSION, STATEMENT, Edit, apply_edit
from assay.mutant.operators import FAMILIES, OperatorContext, edits_in


def need_keyword(a, *, k):
    return (a, k)


NAMESPACE = {"json": json, "sorted": sorted, "need_keyword": need_keyword}


def resolver(namespace: dict[str, object]):
    """A ``ctx.resolve`` that looks dotted names up in ``namespace`` (then the builtins)."""

    def resolve(node: ast.expr) -> object | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        obj = namespace.get(node.id, getattr(builtins, node.id, None))
        for part in reversed(parts):
            obj = getattr(obj, part, None)
        return obj

    return resolve


resolve = resolver(NAMESPACE)


def edits(source: str, family: str | None = None, *, in_function: bool = True) -> tuple[str, list[Edit]]:
    """The dedented source and the edits of its first function's body (or of all its statements)."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    if in_function:
        statements = tree.body[0].body
    else:
        statements = tree.body
    found = edits_in(statements, OperatorContext(resolve=resolve, in_function=in_function))
    return source, [e for e in found if family is None or e.operator == family]


def load(source: str, name: str = "f"):
    namespace = dict(NAMESPACE)
    exec(compile(source, "<mutant>", "exec"), namespace)
    return namespace[name]


def outcome(fn, *args):
    try:
        return ("value", fn(*args))
    except Exception as error:
        return ("raised", type(error))


def only(found: list[Edit]) -> Edit:
    assert len(found) == 1, found
    return found[0]


def differs(source: str, mutated: str, *args) -> None:
    """Both versions compile, and the mutant behaves differently on (fresh copies of) ``args``."""
    assert outcome(load(source), *copy.deepcopy(args)) != outcome(load(mutated), *copy.deepcopy(args))


def test_families_are_sorted_and_stable():
    assert FAMILIES == tuple(sorted(FAMILIES))
    assert set(FAMILIES) == {
        "arithmetic.swap",
        "boolean.swap",
        "call.drop-keyword",
        "compare.boundary",
        "compare.negate",
        "comprehension.drop-clause",
        "condition.negate",
        "constant.adjust",
        "constant.empty",
        "expression.take-branch",
        "guard.always-fires",
        "guard.never-fires",
        "guard.remove-raise",
        "predicate.drop-clause",
        "return.value",
        "statement.delete",
        "value.widen-bound",
    }


# -- general families ---------------------------------------------------------


def test_compare_boundary():
    source, found = edits(
        """
        def f(n, limit):
            return n < limit
        """,
        "compare.boundary",
    )
    edit = only(found)
    assert (edit.line, edit.col, edit.end_line, edit.end_col, edit.kind) == (3, 11, 3, 20, EXPRESSION)
    assert edit.description == "`<` became `<=` in `n < limit`"
    mutated = apply_edit(source, edit)
    assert "return (n <= limit)" in mutated
    differs(source, mutated, 2, 2)


def test_compare_boundary_one_edit_per_operator_position():
    source, found = edits("def f(a, b, c):\n    return a < b >= c\n", "compare.boundary")
    assert [e.replacement for e in found] == ["a <= b >= c", "a < b > c"]
    differs(source, apply_edit(source, found[1]), 1, 2, 2)
    assert edits("def f(a, b):\n    return a == b\n", "compare.boundary")[1] == []


def test_compare_negate():
    source, found = edits(
        """
        def f(x, s):
            return x is None or x in s
        """,
        "compare.negate",
    )
    assert [e.replacement for e in found] == ["x is not None", "x not in s"]
    assert found[1].description == "`in` became `not in` in `x in s`"
    differs(source, apply_edit(source, found[0]), None, "")
    differs(source, apply_edit(source, found[1]), 1, [1])


def test_condition_negate_if_elif_while_and_conditional_expression():
    source, found = edits(
        """
        def f(n):
            out = []
            while n > 0:
                n -= 1
                if n % 2:
                    out.append(1)
                elif not n:
                    out.append(0)
            return out if out else None
        """,
        "condition.negate",
    )
    assert [e.replacement for e in found] == ["not n > 0", "not n % 2", "n", "not out"]
    assert [e.description for e in found] == [
        "negated the test of `while n > 0`",
        "negated the test of `if n % 2`",
        "negated the test of `elif not n`",
        "negated the test of `out if out else None`",
    ]
    for edit in found:
        differs(source, apply_edit(source, edit), 3)


def test_condition_negate_leaves_equality_tests_to_compare_negate():
    # `not a == b` would duplicate compare.negate's `a != b`; assert tests are never negated.
    _, found = edits(
        """
        def f(a, b):
            assert a
            if a == b:
                return 1
            return [x for x in a if x]
        """,
        "condition.negate",
    )
    assert found == []


def test_boolean_swap():
    source, found = edits("def f(a, b):\n    return a and b\n", "boolean.swap")
    edit = only(found)
    assert edit.replacement == "a or b"
    assert edit.description == "`and` became `or` in `a and b`"
    differs(source, apply_edit(source, edit), True, False)


def test_arithmetic_swap_binop_and_augmented_assignment():
    source, found = edits(
        """
        def f(a, b):
            total = a + b
            total %= 7
            return total
        """,
        "arithmetic.swap",
    )
    first, second = found
    assert first.replacement == "a - b" and first.kind == EXPRESSION
    assert first.description == "`+` became `-` in `a + b`"
    assert second.replacement == "total //= 7" and second.kind == STATEMENT
    assert second.description == "`%=` became `//=` in `total %= 7`"
    assert "    total //= 7\n" in apply_edit(source, second)
    differs(source, apply_edit(source, first), 3, 2)
    differs(source, apply_edit(source, second), 10, 0)


def test_arithmetic_swap_skips_string_formatting():
    _, found = edits("def f(x):\n    return '%s!' % x\n", "arithmetic.swap")
    assert found == []


def test_constant_adjust():
    source, found = edits(
        """
        def f(xs):
            return xs[0] * 2.5 + True
        """,
        "constant.adjust",
    )
    assert [e.replacement for e in found] == ["1", "3.5"]  # a bool is no number
    assert found[0].description == "`0` became `1` in `return xs[0] * 2.5 + True`"
    differs(source, apply_edit(source, found[0]), [1, 2])
    differs(source, apply_edit(source, found[1]), [1, 2])


def test_constant_empty_strings_bytes_and_booleans():
    source, found = edits(
        """
        def f(flag=''):
            '''Docstrings stay.'''
            'so do bare strings'
            text = 'ab' if flag else ''
            return text, b'x', True, f"{flag}!"
        """,
        "constant.empty",
    )
    assert [e.replacement for e in found] == ["''", "'XX'", "b''", "False"]
    assert found[0].description == "`'ab'` became `''` in `text = 'ab' if flag else ''`"
    for edit, arg in zip(found, [1, 0, 0, 0]):
        differs(source, apply_edit(source, edit), arg)


def test_constant_empty_skips_raise_and_assert_messages():
    _, found = edits(
        """
        def f(x):
            assert x, 'x is required'
            if x < 0:
                raise ValueError('negative')
            return x
        """,
        "constant.empty",
    )
    assert found == []


def test_return_value():
    source, found = edits(
        """
        def f(x):
            if x:
                return
            if x is None:
                return None
            yield x
            return x + 1
        """,
        "return.value",
    )
    edit = only(found)
    assert (edit.line, edit.kind, edit.replacement) == (8, STATEMENT, "return None")
    assert edit.description == "`return x + 1` became `return None`"
    mutated = apply_edit(source, edit)
    assert "\n    return None\n" in mutated

    def final(fn, x):
        generator = fn(x)
        next(generator)
        try:
            next(generator)
        except StopIteration as stop:
            return stop.value

    assert final(load(source), 0) == 1 and final(load(mutated), 0) is None


def test_statement_delete():
    source, found = edits(
        """
        def f(items, d):
            items.append(1); d.pop('k', None)
            del d['a']
            x = items.append(2)
            return items, d
        """,
        "statement.delete",
    )
    assert [(e.line, e.col, e.replacement, e.kind) for e in found] == [
        (3, 4, "pass", STATEMENT),
        (3, 21, "pass", STATEMENT),
        (4, 4, "pass", STATEMENT),
    ]
    assert [e.description for e in found] == [
        "removed the call `items.append(1)`",
        "removed the call `d.pop('k', None)`",
        "removed `del d['a']`",
    ]
    assert "    items.append(1); pass\n" in apply_edit(source, found[1])
    for edit in found:
        differs(source, apply_edit(source, edit), [], {"k": 1, "a": 2})


# -- control families ---------------------------------------------------------

GUARDED = """
def f(data, limit):
    if len(data) > limit:
        raise ValueError('too long')
    elif not data:
        return 'empty'
    else:
        if data == 'x':
            raise KeyError(data)
        size = len(data)
    raise TypeError
"""


def test_guard_remove_raise():
    source, found = edits(GUARDED, "guard.remove-raise")
    assert [(e.line, e.replacement, e.kind) for e in found] == [(4, "pass", STATEMENT), (9, "pass", STATEMENT)]
    assert found[0].description == "removed the raise under `if len(data) > limit`"
    assert found[1].description == "removed the raise under `if data == 'x'`"
    mutated = apply_edit(source, found[0])
    assert mutated.splitlines()[3] == "        pass"
    differs(source, mutated, "abc", 1)
    differs(source, apply_edit(source, found[1]), "x", 1)


def test_guard_remove_raise_in_else_branch():
    source, found = edits(
        """
        def f(x):
            if x:
                y = 1
            else:
                raise ValueError
            return y
        """,
        "guard.remove-raise",
    )
    edit = only(found)
    assert edit.description == "removed the raise in the `else` of `if x`"
    # Removing the raise leaves `y` unbound: a different exception, still a different behaviour.
    differs(source, apply_edit(source, edit), 0)


def test_guard_never_and_always_fires():
    source, never = edits(GUARDED, "guard.never-fires")
    _, always = edits(GUARDED, "guard.always-fires")
    assert [(e.line, e.replacement) for e in never] == [(3, "False"), (5, "False"), (8, "False")]
    assert [(e.line, e.replacement) for e in always] == [(3, "True"), (5, "True"), (8, "True")]
    assert never[1].description == "the return under `elif not data` never fires (its test became `False`)"
    assert always[0].description == "the raise under `if len(data) > limit` always fires (its test became `True`)"
    differs(source, apply_edit(source, never[1]), "", 1)
    differs(source, apply_edit(source, always[1]), "ab", 5)
    # No guard: an if that neither raises, returns, continues nor breaks.
    assert edits("def f(x):\n    if x:\n        x = 1\n    return x\n", "guard.never-fires")[1] == []


def test_predicate_drop_clause():
    source, found = edits(
        """
        def f(a, b, c):
            while a and b and c:
                return 1
            if a or (b and not c):
                return 2
            return 3
        """,
        "predicate.drop-clause",
    )
    assert [e.replacement for e in found] == ["b and c", "a and c", "a and b", "b and (not c)", "a", "not c", "b"]
    assert found[1].description == "dropped the clause `b` from `a and b and c`"
    differs(source, apply_edit(source, found[1]), 1, 0, 1)
    differs(source, apply_edit(source, found[-1]), 0, 1, 1)


def test_predicate_drop_clause_in_assert_and_conditional_expression():
    source, found = edits(
        """
        def f(a, b):
            assert a or b
            return 1 if a and b else 0
        """,
        "predicate.drop-clause",
    )
    assert [e.replacement for e in found] == ["b", "a", "b", "a"]
    differs(source, apply_edit(source, found[0]), 1, 0)
    differs(source, apply_edit(source, found[2]), 0, 1)


def test_expression_take_branch():
    source, found = edits("def f(x):\n    return 'big' if x > 9 else 'small'\n", "expression.take-branch")
    assert [e.replacement for e in found] == ["'big'", "'small'"]
    assert found[0].description == "`'big' if x > 9 else 'small'` always took `'big'`"
    differs(source, apply_edit(source, found[0]), 1)
    differs(source, apply_edit(source, found[1]), 10)


def test_comprehension_drop_clause():
    source, found = edits(
        """
        def f(xs):
            return sum(x for x in xs if x > 0 if x % 2), {k: v for k, v in xs.items() if v}
        """,
        "comprehension.drop-clause",
    )
    assert [e.replacement for e in found] == [
        "(x for x in xs if x % 2)",
        "(x for x in xs if x > 0)",
        "{k: v for k, v in xs.items()}",
    ]
    assert found[2].description == "dropped the filter `if v` from `{k: v for k, v in xs.items() if v}`"

    class Both(list):
        def items(self):
            return [(x, x) for x in self]

    for edit in found:
        differs(source, apply_edit(source, edit), Both([-1, 0, 2, 3]))


def test_call_drop_keyword_against_the_live_signature():
    source, found = edits(
        """
        def f(data):
            a = json.dumps(data, sort_keys=True, indent=None, separators=(',', ':'))
            b = sorted(data, reverse=True, key=None)
            c = need_keyword(data, k=1)
            d = unknown(data, sort_keys=True)
            e = json.dumps(data, **{'sort_keys': True})
            return a, b
        """,
        "call.drop-keyword",
    )
    # indent=None and key=None equal the defaults; `k` has none; `unknown` does not resolve.
    assert [e.replacement for e in found] == [
        "json.dumps(data, indent=None, separators=(',', ':'))",
        "json.dumps(data, sort_keys=True, indent=None)",
        "sorted(data, key=None)",
    ]
    assert found[0].description == "dropped `sort_keys=True` from the call to `json.dumps`"
    source = source.replace("    d = unknown", "    d = None  #").replace("    c = need", "    c = None  #")
    for edit in found:
        differs(source, apply_edit(source, edit), {"b": 1, "a": 2})


def test_call_drop_keyword_needs_a_resolver():
    source = "def f(x):\n    return sorted(x, reverse=True)\n"
    tree = ast.parse(source)
    # The default context resolves nothing, so even a builtin's keyword stays.
    assert [e.operator for e in edits_in(tree.body[0].body, OperatorContext())] == ["return.value", "constant.empty"]


def test_value_widen_bound():
    source, found = edits(
        """
        def f(x):
            return len(x) > 100 or x[0] < -5 or x[0] == 1 or x[0] == 0
        """,
        "value.widen-bound",
    )
    assert [e.replacement for e in found] == ["200", "-10"]  # 1 doubled is constant.adjust's 2; 0 cannot widen
    assert found[1].description == "`-5` widened to `-10` in `x[0] < -5`"
    assert (found[1].col, found[1].end_col) == (34, 36)
    differs(source, apply_edit(source, found[0]), [5] * 150)
    differs(source, apply_edit(source, found[1]), [-7])


# -- what is never mutated ----------------------------------------------------


def test_nested_definitions_decorators_defaults_annotations_and_targets_are_not_entered():
    _, found = edits(
        """
        def f(x: int = 1) -> int:
            global G
            @decorate(2 + 3)
            def inner(y=4 < 5):
                return y + 6
            class C:
                z = 7
            handler = lambda a=8: a
            x: int = 9
            items[10] = 11
            for i in []:
                pass
            with open('p') as (fh):
                pass
            return [a for a in ()]
        """
    )
    assert [(e.operator, e.replacement) for e in found] == [
        ("constant.adjust", "10"),  # x: int = 9
        ("constant.adjust", "12"),  # the value of items[10] = 11, not its subscript
        ("constant.empty", "''"),  # open('p')
        ("return.value", "return None"),
    ]


def test_match_patterns_are_not_entered():
    _, found = edits(
        """
        def f(x):
            match x:
                case 1 | 'a':
                    return 2
                case _ if x > 3:
                    return 4
        """
    )
    assert [(e.line, e.operator, e.replacement) for e in found] == [
        (5, "return.value", "return None"),
        (5, "constant.adjust", "3"),
        (6, "compare.boundary", "x >= 3"),
        (6, "constant.adjust", "4"),
        (6, "value.widen-bound", "6"),
        (7, "return.value", "return None"),
        (7, "constant.adjust", "5"),
    ]


def test_module_level_assignments_get_only_value_families():
    _, found = edits(
        """
        LIMIT = 2 * 60 if DEBUG and FAST else len(NAMES) > 3
        NAMES = ['a']
        """,
        in_function=False,
    )
    assert sorted({e.operator for e in found}) == [
        "arithmetic.swap",
        "boolean.swap",
        "compare.boundary",
        "constant.adjust",
        "constant.empty",
        "value.widen-bound",
    ]


def test_edits_are_ordered_deduplicated_and_deterministic():
    source = textwrap.dedent(GUARDED)
    body = ast.parse(source).body[0].body
    first = edits_in(body, OperatorContext())
    again = edits_in(ast.parse(source).body[0].body, OperatorContext())
    assert first == again
    assert [(e.line, e.col, e.operator) for e in first] == sorted((e.line, e.col, e.operator) for e in first)
    keys = [(e.operator, e.line, e.col, e.end_line, e.end_col, e.replacement) for e in first]
    assert len(keys) == len(set(keys))


def test_multi_line_spans_keep_every_other_line_in_place():
    source, found = edits(
        """
        def f(xs):
            xs.extend([1,
                       2])
            return (len(xs)
                    > 2)
        """
    )
    for edit in found:
        mutated = apply_edit(source, edit)
        assert mutated.count("\n") == source.count("\n")
        load(mutated)


def test_bare_constants_and_multi_line_statements_sharing_a_line():
    source, found = edits(
        """
        def f(a):
            ...
            g(1,
              2); h(3)
            a += (
                2); return a
        """
    )
    # `g(...)` and `a += ...` end on a line they share with the next statement:
    # their statement edits keep `; h(3)` / `; return a` on that line.
    assert [(e.line, e.operator) for e in found] == [
        (4, "statement.delete"),
        (4, "constant.adjust"),
        (5, "constant.adjust"),
        (5, "statement.delete"),
        (5, "constant.adjust"),
        (6, "arithmetic.swap"),
        (7, "constant.adjust"),
        (7, "return.value"),
    ]
    for edit in found:
        mutated = apply_edit(source, edit)
        assert mutated.count("\n") == source.count("\n")
        compile(mutated, "<mutant>", "exec")
    deleted = apply_edit(source, found[0])
    assert "pass; h(3)" in deleted and "g(1," not in deleted


# -- the real-code sweep ------------------------------------------------------

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SWEEP = {
    "email/_header_value_parser.py": "email._header_value_parser",
    "json/decoder.py": "json.decoder",
    "urllib/parse.py": "urllib.parse",
    "tomllib/_parser.py": "tomllib._parser",
    "shlex.py": "shlex",
}


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def outermost_functions(tree: ast.Module) -> list[ast.AST]:
    """The functions not nested in another function (methods included)."""
    found = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, FUNCTIONS):
                found.append(child)
            else:
                pending.append(child)
    return found


def line_offsets(text: str) -> list[int]:
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    return offsets


@pytest.mark.parametrize("relpath", sorted(SWEEP))
def test_every_edit_on_real_stdlib_modules_compiles_in_place(relpath):
    text = (STDLIB / relpath).read_text(encoding="utf-8")
    module = importlib.import_module(SWEEP[relpath])
    tree = ast.parse(text)
    offsets = line_offsets(text)
    ctx = OperatorContext(resolve=resolver(vars(module)))
    units: list[tuple[ast.AST, Edit]] = []
    for unit in outermost_functions(tree):
        # A nested function is compiled inside its outermost enclosing one:
        # alone, its `nonlocal` statements would not compile.
        for node in ast.walk(unit):
            if isinstance(node, FUNCTIONS):
                units.extend((unit, edit) for edit in edits_in(node.body, ctx))
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            module_ctx = OperatorContext(resolve=ctx.resolve, in_function=False)
            units.extend((node, edit) for edit in edits_in([node], module_ctx))
    assert units
    families = collections.Counter()
    for unit, edit in units:
        mutated = apply_edit(text, edit)
        # Every line outside the span is the same, at the same number.
        head, tail = offsets[edit.line - 1], len(text) - offsets[edit.end_line]
        assert mutated.startswith(text[:head]) and mutated.endswith(text[len(text) - tail :]), edit
        assert mutated[head : len(mutated) - tail].count("\n") == edit.end_line - edit.line + 1, edit
        # Compiling the whole file per edit would take minutes: compile the mutated
        # unit (with its decorators) in place, and the whole file once per family.
        first = min([unit.lineno, *(d.lineno for d in getattr(unit, "decorator_list", ()))])
        after_unit = len(text) - offsets[unit.end_lineno]  # unchanged, as checked above
        chunk = mutated[offsets[first - 1] : len(mutated) - after_unit]
        if unit.col_offset:
            chunk = "if 1:\n" + chunk
        compile(chunk, relpath, "exec", dont_inherit=True)
        if edit.operator not in families:
            compile(mutated, relpath, "exec", dont_inherit=True)
        families[edit.operator] += 1
    assert set(families) <= set(FAMILIES)
