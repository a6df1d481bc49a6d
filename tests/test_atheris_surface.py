"""The atheris surface a harness touches per case, as assay's stand-in gives it (issue 43 item 3).

bench/atheris_surface.py times each against real atheris; here, what each does.
"""

from __future__ import annotations

from assay.harness import atheris_shim


def test_instrument_func_hands_back_the_function_itself() -> None:
    """No wrapper: a decorated target costs a call to the target, nothing more."""

    def target(data: bytes) -> int:
        return len(data)

    assert atheris_shim.instrument_func(target) is target


def test_mutate_keeps_an_input_that_fits_and_cuts_one_that_does_not() -> None:
    data = b"hello world"
    assert atheris_shim.Mutate(data, 64) is data  # no copy per case
    assert atheris_shim.Mutate(data, 5) == b"hello"
    assert atheris_shim.Mutate(bytearray(data), 64) == data
    assert type(atheris_shim.Mutate(bytearray(data), 64)) is bytes


def test_enabled_hooks_are_named_in_any_case_as_atheris_does() -> None:
    hooks = type(atheris_shim.enabled_hooks)()
    hooks.add("RegEx")
    assert "regex" in hooks and "REGEX" in hooks and "str" not in hooks
    assert 3 not in hooks


def test_instrument_imports_is_a_context_manager_that_does_nothing() -> None:
    with atheris_shim.instrument_imports():
        import json  # noqa: F401 - an import inside, as harnesses write it
    with atheris_shim.instrument_imports(include=["json"], exclude=["re"]):
        pass
