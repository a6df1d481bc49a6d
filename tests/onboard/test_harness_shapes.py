"""Every common atheris harness shape runs unchanged: tiny synthetic harnesses, one per shape.

Each file is written to a fresh folder under a unique stem (discovery imports a
harness as a top-level module named after its file) and checked through
:func:`import_file` and :func:`targets_in`, the path ``assay fuzz FILE`` takes.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap

import pytest

from assay.core import notices
from assay.harness import discovery
from assay.harness.discovery import import_file, targets_in

_STEMS = itertools.count()


@pytest.fixture
def load(tmp_path):
    """Write a harness, import it as discovery does, and give its targets; unloads the modules after."""
    loaded = []

    def _load(source: str, stem: str = "shape") -> list:
        name = f"{stem}_{next(_STEMS)}_{tmp_path.name[-12:].replace('-', '_')}"
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        loaded.append(name)
        return targets_in(import_file(path, tmp_path))

    yield _load
    for name in loaded:
        sys.modules.pop(name, None)


def _short(targets) -> list[str]:
    return [t.name.partition(":")[2] for t in targets]


# The xmltodict OSS-Fuzz shape: Setup inside main(), main() only under the __main__ guard, a callback
# with its own name, and sys.exit(main()).
MAIN_GUARD = """
    import sys
    import atheris

    CALLS = []

    def test_one_input(data):
        CALLS.append(data)

    def main():
        atheris.instrument_all()
        atheris.Setup(sys.argv, test_one_input)
        atheris.Fuzz()
        return 0

    if __name__ == "__main__":
        sys.exit(main())
"""


def test_setup_in_main_under_the_guard_with_any_callback_name(load):
    [target] = load(MAIN_GUARD)
    assert _short([target]) == ["test_one_input"]
    target(b"abc")
    assert target.fn.__globals__["CALLS"] == [b"abc"]


def test_without_running_the_guard_the_callback_is_missed(load, monkeypatch):
    """Non-vacuity: with the __main__ search switched off, the xmltodict shape defines no target."""
    monkeypatch.setattr(discovery, "_main_guard_calls", lambda module, path: [])
    assert load(MAIN_GUARD) == []


def test_callback_made_at_start_up_is_found_by_running_the_guard(load):
    """A callback that is not a module-level name (a closure from a factory) is what Setup really got."""
    [target] = load(
        """
        import sys
        import atheris

        def make(limit):
            def check(data):
                return len(data[:limit])
            return check

        def main():
            atheris.Setup(sys.argv, make(3))
            atheris.Fuzz()

        if __name__ == "__main__":
            main()
        """
    )
    assert _short([target]) == ["check"] and target(b"abcdef") == 3


def test_guard_that_cannot_run_here_falls_back_to_the_named_callback(load):
    """A guard that fails before Setup (it wants a file argument) still yields the callback Setup names."""
    [target] = load(
        """
        import sys
        import atheris

        def fuzz_me(data):
            return data[::-1]

        def main():
            atheris.Setup(sys.argv, fuzz_me)
            atheris.Fuzz()

        if __name__ == "__main__":
            open(sys.argv[1]).close()
            main()
        """
    )
    assert _short([target]) == ["fuzz_me"] and target(b"ab") == b"ba"


def test_main_without_a_guard_is_read_from_the_source(load):
    """Setup in a main() that only a console entry point calls: nothing runs it, the source names it."""
    [target] = load(
        """
        import atheris as ath

        class Harness:
            @staticmethod
            def run(data):
                return len(data)

        def main():
            ath.Setup(["prog", "-max_len=33"], Harness.run)
            ath.Fuzz()
        """
    )
    assert _short([target]) == ["run"] and target(b"xyz") == 3
    assert target.max_len == 33  # the flags written in the Setup call, read from the source too


def test_guard_that_fails_with_no_named_callback_says_why(load):
    before = len(notices.messages)
    found = load(
        """
        import sys
        import atheris

        def main():
            atheris.Setup(sys.argv, lambda data: None)
            atheris.Fuzz()

        if __name__ == "__main__":
            raise RuntimeError("needs a device")
        """
    )
    assert found == []
    [note] = [n for n in notices.messages[before:] if "__main__" in n]
    assert "RuntimeError: needs a device" in note and "::FUNCTION" in note


def test_setup_imported_by_name(load):
    [target] = load(
        """
        import sys
        from atheris import Fuzz, Setup as setup

        def TestInput(data):
            return data

        if __name__ == "__main__":
            setup(sys.argv, TestInput)
            Fuzz()
        """
    )
    assert _short([target]) == ["TestInput"]


def test_instrument_imports_block_gives_the_library_as_sources(load):
    [target] = load(
        """
        import sys
        import atheris

        with atheris.instrument_imports():
            import h11

        def TestInput(data):
            h11.Connection(h11.SERVER).receive_data(data)

        def main():
            atheris.Setup(sys.argv, TestInput, enable_python_coverage=True)
            atheris.instrument_all()
            atheris.Fuzz()

        if __name__ == "__main__":
            main()
        """
    )
    assert _short([target]) == ["TestInput"] and target.implied_sources == ("h11",)


def test_flags_the_harness_passes_to_setup_become_target_settings(load, tmp_path):
    (tmp_path / "tokens.dict").write_text('kw="SELECT"\n"\\x00end"\n')
    before = len(notices.messages)
    [target] = load(
        """
        import sys
        import atheris

        def TestOneInput(data):
            pass

        def main():
            atheris.Setup(sys.argv + ["-max_len=77", "-timeout=9", "-dict=tokens.dict", "-runs=5"], TestOneInput)
            atheris.Fuzz()

        if __name__ == "__main__":
            main()
        """
    )
    assert target.max_len == 77 and target.timeout == 9
    assert target.dictionary == (b"SELECT", b"\x00end")
    assert any("-runs=5" in n and "assay fuzz" in n for n in notices.messages[before:])


def test_harness_sees_its_own_command_line_not_assays(load, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["assay", "fuzz", "h.py", "-max_len=5", "--fuzz-cases", "10"])
    [target] = load(
        """
        import sys
        import atheris

        SEEN = list(sys.argv)

        def TestOneInput(data):
            pass

        def main():
            atheris.Setup(sys.argv, TestOneInput)
            atheris.Fuzz()

        if __name__ == "__main__":
            main()
        """
    )
    seen = target.fn.__globals__["SEEN"]
    assert len(seen) == 1 and seen[0].endswith(".py") and target.max_len != 5
    assert sys.argv[0] == "assay"  # restored


def test_module_level_setup_and_fuzz_stop_the_import(load):
    [target] = load(
        """
        import sys
        import atheris

        def fuzz(data):
            pass

        atheris.instrument_all()
        atheris.Setup(sys.argv, fuzz)
        atheris.Fuzz()
        AFTER = True
        """
    )
    assert _short([target]) == ["fuzz"] and "AFTER" not in target.fn.__globals__


def test_module_level_test_one_input_without_setup(load):
    [target] = load(
        """
        def TestOneInput(data):
            return b"!" + data
        """
    )
    assert _short([target]) == ["TestOneInput"] and target(b"a") == b"!a"


def test_guard_of_a_file_without_setup_never_runs(load):
    """Only harnesses that call Setup have their __main__ block run; others keep it to themselves."""
    [target] = load(
        """
        def TestOneInput(data):
            pass

        if __name__ == "__main__":
            raise SystemExit("this block must not run under assay")
        """
    )
    assert _short([target]) == ["TestOneInput"]


def test_guard_of_an_assay_target_file_never_runs(load):
    [target] = load(
        """
        import sys
        import assay

        @assay.target
        def parse(data: bytes):
            pass

        if __name__ == "__main__":
            import atheris
            atheris.Setup(sys.argv, parse)
            raise SystemExit("this block must not run under assay")
        """
    )
    assert target.name == "parse"


def test_module_named_in_targets_runs_its_guard_too(tmp_path, monkeypatch):
    """A harness listed by module name in [tool.assay] targets is found the same way as a file."""
    monkeypatch.setattr(sys, "path", list(sys.path))  # import_entry puts the project root on it
    name = f"guard_module_{tmp_path.name[-12:].replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(MAIN_GUARD))
    try:
        [module] = discovery.import_entry(tmp_path, name)
        assert [t.name for t in targets_in(module)] == [f"{name}:test_one_input"]
    finally:
        sys.modules.pop(name, None)


def test_fuzz_command_runs_the_main_guard_shape(tmp_path):
    """End to end: `assay fuzz harness.py` with no ::NAME, the callback named test_one_input."""
    harness = tmp_path / "unparse_like.py"
    harness.write_text(textwrap.dedent(MAIN_GUARD))
    r = subprocess.run(
        [sys.executable, "-m", "assay", "fuzz", str(harness), "-runs=50", "--report", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "defines no fuzz target" not in r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["targets"]["unparse_like:test_one_input"]["cases"] >= 50
