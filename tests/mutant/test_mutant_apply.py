"""Applying mutants to live code: ``__code__`` swaps and module-level rebinding, then reverting."""

from __future__ import annotations

import importlib.util
import sys
import traceback
import uuid
from pathlib import Path

import pytest

from assay.mutant.apply import FunctionIndex, MutantError, Patch
from assay.mutant.discover import mutants_in_file
from assay.mutant.model import EXPRESSION, STATEMENT, Edit

SUBJECT = """\
import functools

LIMIT = 10


def wrap(fn):
    @functools.wraps(fn)
    def inner(*a, **k):
        return fn(*a, **k)
    return inner


def check(n):
    if n > LIMIT:
        raise ValueError("too big")
    return n


@wrap
def decorated(n):
    return n + 1


@functools.lru_cache(maxsize=None)
def cached(n):
    return n * 3


class Base:
    def size(self):
        return 1


class Child(Base):
    KIND = "child"

    def size(self):
        return super().size() + 1

    def __secret(self):
        return 5

    def reveal(self):
        return self.__secret()


def outer(n):
    def helper(m):
        return m - 1
    return helper(n)


def closure(n):
    k = 2

    def times(m):
        return m * k
    return times(n)


def lines(n):
    x = n + 1
    y = x * 2
    raise RuntimeError(y)
"""


@pytest.fixture
def subject(tmp_path):
    """The subject module, imported under a fresh name, with its mutants."""
    path = tmp_path / "subject_mod.py"
    path.write_text(SUBJECT)
    name = f"subject_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    mutants = mutants_in_file(path, tmp_path, module.__dict__)
    yield module, mutants, FunctionIndex([str(path)])
    del sys.modules[name]


def find(mutants, qualname, operator, contains=""):
    for m in mutants:
        if m.qualname == qualname and m.operator == operator and contains in m.edit.replacement:
            return m
    raise AssertionError(f"no {operator} mutant in {qualname} (have {[(m.qualname, m.operator) for m in mutants]})")


def test_code_swap_applies_and_reverts(subject):
    module, mutants, index = subject
    m = find(mutants, "check", "guard.remove-raise")
    patch = Patch.build(m, SUBJECT, index)
    with pytest.raises(ValueError):
        module.check(11)
    with patch:
        assert module.check(11) == 11  # the guard is gone
    with pytest.raises(ValueError):
        module.check(11)
    assert patch.applied is False


def test_decorated_and_cached_functions_change(subject):
    module, mutants, index = subject
    dec = Patch.build(find(mutants, "decorated", "arithmetic.swap"), SUBJECT, index)
    assert module.decorated(1) == 2
    with dec:
        assert module.decorated(1) == 0  # reached through the wrapper
    cached = Patch.build(find(mutants, "cached", "arithmetic.swap"), SUBJECT, index)
    with cached:
        module.cached.cache_clear()
        assert module.cached(6) == 2
    module.cached.cache_clear()
    assert module.cached(6) == 18


def test_methods_keep_class_cell_and_name_mangling(subject):
    module, mutants, index = subject
    sup = Patch.build(find(mutants, "Child.size", "arithmetic.swap"), SUBJECT, index)
    with sup:
        assert module.Child().size() == 0  # super() still works: the __class__ cell is there
    secret = Patch.build(find(mutants, "Child.__secret", "constant.adjust"), SUBJECT, index)
    with secret:
        assert module.Child().reveal() == 6


def test_nested_function_mutated_through_its_outer_unit(subject):
    module, mutants, index = subject
    m = find(mutants, "outer.<locals>.helper", "arithmetic.swap")
    assert m.unit == "outer"
    with Patch.build(m, SUBJECT, index):
        assert module.outer(5) == 6
    assert module.outer(5) == 4


def test_closure_mutant_applies(subject):
    module, mutants, index = subject
    m = find(mutants, "closure.<locals>.times", "arithmetic.swap")
    with Patch.build(m, SUBJECT, index):
        assert module.closure(6) == 3


def test_module_level_rebinding(subject):
    module, mutants, index = subject
    m = find(mutants, "<module>", "constant.adjust")
    assert m.unit == ""
    with Patch.build(m, SUBJECT, index):
        assert module.LIMIT == 11
        assert module.check(11) == 11
    assert module.LIMIT == 10


def test_class_level_rebinding(subject):
    module, mutants, index = subject
    m = find(mutants, "Child", "constant.empty")
    with Patch.build(m, SUBJECT, index):
        assert module.Child.KIND == ""
    assert module.Child.KIND == "child"


def test_line_numbers_are_kept(subject):
    """A traceback from the mutated function names the same lines as the original's."""
    module, mutants, index = subject

    def raise_line():
        try:
            module.lines(1)
        except RuntimeError as exc:
            return traceback.extract_tb(exc.__traceback__)[-1].lineno, exc.args[0]
        raise AssertionError("no raise")

    line, value = raise_line()
    m = find(mutants, "lines", "arithmetic.swap", "x")
    with Patch.build(m, SUBJECT, index):
        mutated_line, mutated_value = raise_line()
    assert mutated_line == line == SUBJECT.splitlines().index("    raise RuntimeError(y)") + 1
    assert mutated_value != value


def test_multi_line_edit_keeps_later_lines(subject):
    module, _, index = subject
    text = SUBJECT
    start = text.splitlines().index("def lines(n):") + 1
    edit = Edit("statement.delete", start + 1, 4, start + 2, 13, "pass", "two statements became pass", STATEMENT)
    from assay.mutant.model import Mutant, apply_edit

    mutated = apply_edit(text, edit)
    assert len(mutated.splitlines()) == len(text.splitlines())
    assert mutated.splitlines()[start + 2] == text.splitlines()[start + 2]
    m = Mutant(
        path=str(Path(module.__file__).resolve()),
        relpath="subject_mod.py",
        qualname="lines",
        operator="x",
        index=0,
        digest="0" * 64,
        edit=edit,
        unit="lines",
        unit_line=start,
        unit_end_line=start + 3,
    )
    with Patch.build(m, text, index):
        with pytest.raises(NameError):
            module.lines(1)


def test_a_mutant_that_deletes_super_keeps_the_class_cell(subject):
    """`return super().size() + 1` -> `return None` drops the method's only use of
    the ``__class__`` cell; the swap must still fit the live function."""
    module, mutants, index = subject
    m = find(mutants, "Child.size", "return.value")
    with Patch.build(m, SUBJECT, index):
        assert module.Child().size() is None
    assert module.Child().size() == 2


def test_hand_made_super_edit_is_repaired_and_a_missing_unit_refused(subject):
    """An edit replacing the super() call keeps the cell; a unit with no code object is refused."""
    module, _, index = subject
    from assay.mutant.model import Mutant

    first = SUBJECT.splitlines().index("    def size(self):", SUBJECT.splitlines().index("class Child(Base):")) + 1
    line = SUBJECT.splitlines()[first]
    col = line.index("super().size() + 1")
    edit = Edit("x", first + 1, col, first + 1, col + len("super().size() + 1"), "2", "super() gone", EXPRESSION)
    m = Mutant(
        path=str(Path(module.__file__).resolve()),
        relpath="subject_mod.py",
        qualname="Child.size",
        operator="x",
        index=0,
        digest="0" * 64,
        edit=edit,
        unit="Child.size",
        unit_line=first,
        unit_end_line=first + 1,
        wrappers=((first - 3, 0, "Child"),),
    )
    with Patch.build(m, SUBJECT, index):  # repaired with the cell reference
        assert module.Child().size() == 2
    broken = Mutant(**{**m.__dict__, "unit": "Child.missing"})
    with pytest.raises(MutantError, match="no code object"):
        Patch.build(broken, SUBJECT, index)


def test_every_discovered_mutant_of_a_real_module_builds(tmp_path):
    """Mutants of a real stdlib parser compile and find their live function (every third, for time)."""
    import email._header_value_parser as hvp

    path = Path(hvp.__file__)
    text = path.read_text("utf-8")
    mutants = mutants_in_file(path, path.parent, hvp.__dict__, text)
    index = FunctionIndex([str(path)])
    assert len(mutants) > 500
    unreachable = 0
    for m in mutants[::3]:
        patch = Patch.build(m, text, index)
        unreachable += not patch.reachable
    assert unreachable == 0


def test_a_flat_project_mutates_its_code_not_its_fuzz_harnesses(tmp_path):
    from assay.mutant.discover import files_to_mutate

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("def parse(t):\n    return t\n")
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "fuzz_pkg.py").write_text("import pkg\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_pkg.py").write_text("import pkg\n")
    assert files_to_mutate(tmp_path, [], ["fuzz"]) == [(tmp_path / "pkg" / "__init__.py").resolve()]
    # Named on purpose, a harness folder is mutated like any other path.
    assert files_to_mutate(tmp_path, ["fuzz"], ["fuzz"]) == [(tmp_path / "fuzz" / "fuzz_pkg.py").resolve()]
    # Without the targets' folders (as before), the harness was mutated too.
    assert (tmp_path / "fuzz" / "fuzz_pkg.py").resolve() in files_to_mutate(tmp_path, [])


BUILT_AT_IMPORT = """\
import re

WORD = "[a-z]+"
PATTERN = re.compile(WORD)
LIMIT = 10
_KEYS = {"ab": 1, "b": 2}
ALLOWED = frozenset(_KEYS)


def scale(n, factor=LIMIT):
    return n * factor


def check(word):
    return bool(PATTERN.fullmatch(word)) and word in ALLOWED


class Point:
    __slots__ = ("x", "y")
"""


@pytest.fixture
def built(tmp_path):
    """A module whose module-level values are used at import, and a second module that
    copied its names with ``from ... import``."""
    path = tmp_path / "built_mod.py"
    path.write_text(BUILT_AT_IMPORT)
    name = f"built_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    user = type(sys)(f"user_{uuid.uuid4().hex}")
    user.__file__ = str(tmp_path / "user_mod.py")  # a project module (installed ones are not searched)
    exec(f"from {name} import check, scale, Point", user.__dict__)
    sys.modules[user.__name__] = user
    yield module, user, mutants_in_file(path, tmp_path, module.__dict__), FunctionIndex([str(path)])
    del sys.modules[name], sys.modules[user.__name__]


def test_module_level_values_used_at_import_change_only_when_the_module_is_reexecuted(built):
    """Rebinding the assignment alone (``reexec=False``, the mechanism off) changes the
    name but nothing the import built from it; re-executing the module changes the
    compiled pattern, the default argument, the copied keys and, through the copies
    other modules made with ``from ... import``, what they call.  Revert restores all."""
    module, user, mutants, index = built
    cases = [
        (find(mutants, "<module>", "constant.empty", "''"), lambda: user.check("ab"), True, False),
        (find(mutants, "<module>", "constant.adjust", "11"), lambda: user.scale(2), 20, 22),
    ]
    keys = next(m for m in mutants if m.operator == "constant.empty" and m.line == 6)
    cases.append((keys, lambda: user.check("ab"), True, False))
    for m, probe, original, mutated in cases:
        assert m.unit == ""
        with Patch.build(m, BUILT_AT_IMPORT, index, reexec=False):
            assert probe() == original, m.description  # rebinding alone: the mutant cannot be seen
        with Patch.build(m, BUILT_AT_IMPORT, index) as patch:
            assert patch.reexecutes
            assert probe() == mutated, m.description
        assert probe() == original
    assert user.check is module.check and user.scale is module.scale


def test_a_slots_mutant_that_breaks_the_import_raises_when_applied(built):
    module, user, mutants, index = built
    m = find(mutants, "Point", "constant.empty")
    with Patch.build(m, BUILT_AT_IMPORT, index, reexec=False):
        point = user.Point()
        point.x = 1  # only the attribute was rebound: the class still has its slot `x`
        assert point.x == 1
    patch = Patch.build(m, BUILT_AT_IMPORT, index)
    with pytest.raises(TypeError):
        patch.apply()
    patch.revert()
    assert module.Point is user.Point and module.check("ab")


def test_identity_reexecution_changes_nothing(built):
    module, user, mutants, index = built
    with Patch.build(mutants[0], BUILT_AT_IMPORT, index, identity=True):
        assert user.check("ab") and user.scale(2) == 20 and module.WORD == "[a-z]+"
        assert user.Point is module.Point
