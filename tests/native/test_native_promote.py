"""The regression test promoted from a native finding: public API only, compared byte for byte.

``ASSAY_REGEN_GOLDEN=1 pytest tests/native/test_native_promote.py`` rewrites tests/promote/golden/native_asan.py
instead of comparing (review the diff before committing).  That the emitted test fails
while the C bug is present and passes once it is fixed is
``test_native_cli.py::test_promote_emits_a_test_that_fails_until_the_c_bug_is_fixed``.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from assay.native.promote import render_native_test

GOLDEN = Path(__file__).resolve().parents[1] / "promote" / "golden" / "native_asan.py"
HEAP = "native-asan:heap-buffer-overflow:READ:4@heap_overflow<LLVMFuzzerTestOneInput"


def _emitted(tmp_path: Path) -> str:
    test_path = tmp_path / "tests" / "fuzz_regressions" / "test_planted_native_asan_0123456789ab.py"
    files = render_native_test(
        test_path,
        tmp_path,
        origin=".assay/artifacts/planted/b1d/f00/d00d",
        target="planted",
        oracle="native-asan",
        signature=HEAP,
        seed="1234",
        data=b"Hx",
    )
    return files[test_path].decode("utf-8")


def test_emitted_native_test_matches_the_golden_file(tmp_path):
    text = _emitted(tmp_path)
    if os.environ.get("ASSAY_REGEN_GOLDEN") == "1":
        GOLDEN.write_text(text, "utf-8")
    assert text == GOLDEN.read_text("utf-8")


def test_emitted_native_test_uses_only_the_public_api(tmp_path):
    import assay

    tree = ast.parse(_emitted(tmp_path))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert sorted(imported) == ["assay", "pathlib"]  # no assay.native.* or assay.promote.* module
    called = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert "replay_native" in called and "replay_native" in assay.__all__ and callable(assay.replay_native)
