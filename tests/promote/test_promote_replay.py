"""Replays of failures that never went through fuzzing (used by emitted tests and the guard)."""

from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, multiple, rule, run_state_machine_as_test

from assay.core.literals import NotReplayable
from assay.promote.from_hypothesis import program_from_notes
from assay.promote.replay import _one_example, load_module, parse_program, replay_call, run_program, user_verdict


class Pairs(RuleBasedStateMachine):
    nums = Bundle("nums")

    @rule(target=nums, x=st.integers(0, 10))
    def two(self, x):
        return multiple(x, x + 1)

    @rule(target=nums)
    def nothing(self):
        return multiple()

    @rule(a=nums, b=nums)
    def check(self, a, b):
        assert a + b != 3, (a, b)


def test_hypothesis_program_with_bundles_and_multiple_results_replays_identically():
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(Pairs, settings=settings(database=None, derandomize=True, deadline=None))
    program = program_from_notes(info.value)
    assert program is not None and program[0] == "state = Pairs()" and program[-1] == "state.teardown()"
    assert any(", " in line.split(" = ")[0] for line in program if " = state." in line)  # tuple targets
    original = user_verdict(info.value)
    steps = parse_program(program, "Pairs")
    replayed = replay_call(lambda: run_program(Pairs, steps))
    assert replayed is not None and replayed.signature == original.signature
    assert original.signature.startswith("invariant:assert@") and "Pairs.check#" in original.signature


def test_program_passes_once_the_bug_is_fixed():
    class Fixed(Pairs):
        @rule(a=Pairs.nums, b=Pairs.nums)
        def check(self, a, b):
            pass

    steps = parse_program(
        ["state = Fixed()", "n_0, n_1 = state.two(x=1)", "state.check(a=n_0, b=n_1)", "state.teardown()"], "Fixed"
    )
    assert replay_call(lambda: run_program(Fixed, steps)) is None


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["state = Other()"], re.escape("does not start with 'state = Pairs()'")),
        (["state = Pairs()", "state.check(a=Thing(1), b=2)"], "not a literal value"),
        (["state = Pairs()", "state.check(a=v_9, b=2)"], "'v_9' is not a value the program defines"),
        (["state = Pairs()", "state.check(1, 2)"], "only keyword arguments"),
        (["state = Pairs()", "import os"], "expected a call on state"),
        (["state = Pairs()", "os.system('x')"], "expected a call on state"),
        (["state = Pairs()", "state.check(a=__import__('os'), b=1)"], "not a literal value"),
    ],
)
def test_programs_that_are_not_plain_steps_are_refused(lines, message):
    with pytest.raises(NotReplayable, match=message):
        parse_program(lines, "Pairs")


def test_user_verdict_ignores_the_harness_frames_and_skips():
    def failing(x):
        return {}[x]

    def check(x):
        failing(x)

    direct = replay_call(check, ("k",))
    through_hypothesis = replay_call(_one_example(check, {"x": "other"}))  # pytest + Hypothesis + assay frames
    assert direct is not None and direct.signature.startswith("panic:builtins.KeyError@")
    assert through_hypothesis is not None and through_hypothesis.signature == direct.signature
    assert replay_call(lambda: pytest.skip("not a failure")) is None


def test_load_module_finds_package_modules_and_falls_back_to_the_file(tmp_path, request):
    tag = request.node.name.replace("-", "_")[:20]
    pkg = tmp_path / f"pkg_{tag}"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(textwrap.dedent("VALUE = 41\nfrom . import helper\n"))
    (pkg / "helper.py").write_text("X = 1\n")
    module = load_module(tmp_path, f"pkg_{tag}.mod", f"pkg_{tag}/mod.py")
    assert module.VALUE == 41 and module.__name__ == f"pkg_{tag}.mod"
    assert load_module(tmp_path, f"pkg_{tag}.mod", f"pkg_{tag}/mod.py") is module  # reused
    # A name that does not match the file's location (pytest's importlib mode): loaded from the file.
    (tmp_path / "loose.py").write_text("VALUE = 7\n")
    loose = load_module(tmp_path, f"synthetic_{tag}.loose", "loose.py")
    assert loose.VALUE == 7 and loose.__name__ == f"synthetic_{tag}.loose"
