"""The pytest plugin replays seeds, corpus and artifacts as ordinary tests."""

from __future__ import annotations

import hashlib

TARGETS = """
import assay

@assay.target(seeds=[b"ok", b"fine"], max_len=64)
def plugged(data: bytes):
    if data.startswith(b"BAD"):
        raise KeyError("bad")
"""


def _setup(pytester, enable: str = ""):
    pytester.makepyprojecttoml(f'[tool.assay]\ntargets = ["fuzz"]\n[tool.pytest.ini_options]\n{enable}\n')
    fuzz = pytester.mkdir("fuzz")
    (fuzz / f"plug_{abs(hash(str(pytester.path))) % 10**8}.py").write_text(TARGETS)


def test_off_by_default(pytester):
    _setup(pytester)
    result = pytester.runpytest_subprocess()
    assert result.ret == 5  # no tests: the plugin added nothing


def test_seeds_corpus_and_artifacts_become_tests(pytester):
    _setup(pytester, "assay_replay = true")
    corpus = pytester.path / ".assay" / "corpus" / "plugged"
    corpus.mkdir(parents=True)
    for data in (b"good one", b"BAD one"):
        (corpus / (hashlib.sha256(data).hexdigest() + ".input")).write_bytes(data)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*plugged?seed-0?*PASSED*", "*plugged?corpus-*FAILED*", "*panic:builtins.KeyError*"])


def test_flag_enables(pytester):
    _setup(pytester)
    result = pytester.runpytest_subprocess("--assay")
    result.assert_outcomes(passed=2)
