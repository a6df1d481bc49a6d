"""``assay merge-corpus`` on native targets: libFuzzer's ``-merge=1`` picks what stays.

Runs only where the native backend (``assay.native``) and clang with libFuzzer exist.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.store.corpus import Corpus

pytest.importorskip("assay.native", reason="the native backend is not part of this build")
NATIVE_PLANTED = Path(__file__).resolve().parents[1] / "native" / "planted"


def test_native_targets_are_minimized_by_libfuzzer_merge(tmp_path):
    from assay.native.toolchain import available

    why = available()
    if why:
        pytest.skip(f"native backend unavailable here: {why}")
    root = tmp_path / "planted"
    shutil.copytree(NATIVE_PLANTED, root)
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    for data in (b"a", b"b", b"F", b"FU"):
        Corpus(a, "deep", 64).add(data)
    for data in (b"c", b"FX", b"FUX"):
        Corpus(b, "deep", 64).add(data)
    report = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "merge-corpus",
            "--project",
            str(root),
            "--report",
            str(report),
            str(out),
            str(a),
            str(b),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    t = json.loads(report.read_text())["targets"]["deep"]
    assert t["note"] == "native target: minimized by libFuzzer -merge=1"
    assert t["entries_in"] == 7 and 1 <= t["entries_out"] < 7
    assert sorted(d for d, _ in Corpus(out, "deep", 64).load()) == sorted(t["kept"])
