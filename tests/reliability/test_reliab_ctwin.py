"""The C twin (``assay.gen._cmutate``) raises on hostile arguments instead of reading or writing out of bounds.

Each scenario of ``ctwin_hostile.py`` runs in its own process (a crash must not take
the test run with it) and must end with the Python exception named here: parallel
lists of different lengths, journal offsets outside its memory, a sandbox slot of
another class, an index that overflows.  Objects of the twin's types caught in a
reference cycle must be collected.  ``tests/native/asan_cmutate.sh`` runs this file
again against the AddressSanitizer and UBSan build, where an out-of-bounds access
that happens to survive here aborts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.gen.accelerated import cmutate

HOSTILE = Path(__file__).resolve().parent / "ctwin_hostile.py"

pytestmark = pytest.mark.skipif(cmutate is None, reason="assay.gen._cmutate is not built (no C compiler)")

EXPECTED = {
    "corpus longer than trouble": ("ValueError",),
    "corpus longer than children": ("ValueError",),
    "corpus longer than guards": ("ValueError",),
    "corpus longer than cmp_pairs": ("ValueError",),
    "trouble shrunk by the target": ("ValueError", "IndexError"),
    "negative journal capacity": ("ValueError",),
    "chain past the journal": ("ValueError",),
    "ring past the journal": ("ValueError",),
    "data inside the header": ("ValueError",),
    "foreign sandbox slot": ("TypeError",),
    "sandbox class swapped": ("TypeError",),
    "overflowing case index": ("ValueError",),
    "negative max_len": ("ValueError",),
    "zero picks": ("ValueError", "ZeroDivisionError"),
}

RETURNING = {
    "saturated line count": "returned",
    "HotLoop in a cycle": "collected",
    "LineTally in a cycle": "collected",
    "Random in a cycle": "collected",
    "Stream in a cycle": "collected",
}


def _outcome(name: str) -> str:
    proc = subprocess.run(
        [sys.executable, str(HOSTILE), name],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("OUTCOME: ")]
    assert proc.returncode == 0 and lines, (
        f"scenario {name!r} crashed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    )
    return lines[-1].removeprefix("OUTCOME: ")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_call_into_the_c_twin_raises_a_python_exception_instead_of_crashing(name: str) -> None:
    outcome = _outcome(name)
    assert outcome.startswith(tuple(f"raised {kind}" for kind in EXPECTED[name])), outcome


@pytest.mark.parametrize("name", sorted(RETURNING))
def test_the_c_twin_returns_and_its_objects_in_a_reference_cycle_are_collected(name: str) -> None:
    assert _outcome(name) == RETURNING[name]


def test_every_hostile_scenario_is_checked() -> None:
    sys.path.insert(0, str(HOSTILE.parent))
    try:
        import ctwin_hostile
    finally:
        sys.path.remove(str(HOSTILE.parent))
    assert set(ctwin_hostile.SCENARIOS) == set(EXPECTED) | set(RETURNING)
