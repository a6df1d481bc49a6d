"""A big library in the coverage scope is watched, without the per-function work ahead of a run.

``Scope.eager`` gives edge splitting, comparison twins and constant harvesting to the
code that is not installed and to installed packages up to ``EAGER_FILES`` Python
files; the rest of the scope still gives line and branch feedback, decided per code
object.  dask (over 300 Python files, in the dev extra) is the big library here.
"""

from __future__ import annotations

import os

import pytest

from assay.feedback import scope as scope_module
from assay.feedback.livecode import functions_of, modules_by_file
from assay.feedback.scope import EAGER_FILES, Scope
from assay.feedback.sysmon import SysmonFeedback

dask_utils = pytest.importorskip("dask.utils")
jmespath = pytest.importorskip("jmespath")

DASK = os.path.dirname(os.path.dirname(dask_utils.__file__))
JMESPATH = os.path.dirname(jmespath.__file__)


def test_eager_keeps_own_code_and_small_libraries_and_leaves_big_ones(tmp_path):
    own = tmp_path / "mypkg"
    own.mkdir()
    for n in range(EAGER_FILES + 5):  # a big project of its own: never left out
        (own / f"m{n}.py").write_text("")
    harness = tmp_path / "fuzz_x.py"
    harness.write_text("")
    scope = Scope([str(harness), str(own), DASK, JMESPATH])
    eager = scope.eager()
    assert eager.entries == [str(harness.resolve()), str(own.resolve()), os.path.realpath(JMESPATH)]
    assert scope.contains(dask_utils.__file__) and not eager.contains(dask_utils.__file__)
    small = Scope([str(harness), JMESPATH])
    assert small.eager() is small  # everything fits: one scope, as before


def _live_functions(contains) -> int:
    """In-scope functions of the imported modules: what edge splitting and the twins work through."""
    return len(
        {
            id(fn)
            for mods in modules_by_file(contains).values()
            for m in mods
            for fn in functions_of(m)
            if contains(fn.__code__.co_filename)
        }
    )


def test_the_work_ahead_of_a_run_stays_small_with_a_big_library_in_scope():
    """Non-vacuity: with the whole scope eager, hundreds of dask functions would be split and twinned."""
    import dask.bag  # noqa: F401 - more of dask imported, as a user's harness would

    whole = Scope([DASK, JMESPATH])
    assert _live_functions(whole.contains) > 500
    assert 0 < _live_functions(whole.eager().contains) < 300  # jmespath's alone


def test_a_big_library_left_out_of_the_eager_work_still_gives_feedback(monkeypatch):
    monkeypatch.setattr(scope_module, "EAGER_FILES", 0)  # even jmespath gets no work ahead
    scope = Scope([DASK, JMESPATH])
    assert scope.eager().entries == []
    feedback = SysmonFeedback(scope)
    feedback.start()
    try:
        dask_utils.parse_bytes("5 MiB")
        jmespath.compile("a[?b > `1`].c")
    finally:
        feedback.stop()
    assert feedback.counts()["lines"] > 20 and feedback.counts()["edges"] > 5
