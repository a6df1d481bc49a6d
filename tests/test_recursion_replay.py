"""A RecursionError finding replays at the depth it was found at, whatever the stack above the target."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.core.recursion import headroom, stack_depth
from assay.core.target import Target
from assay.engine.execute import recorded_room, run, run_input

HARNESS = """
import assay


def nest(n):
    return 0 if n <= 0 else 1 + nest(n - 1)


@assay.target(max_len=8)
def deep_recursion(data: bytes) -> None:
    # The input picks a depth near the recursion limit: whether it fails depends on
    # how many frames sit above the target (the worker's, the shrinker's, replay's).
    if len(data) >= 2:
        nest(940 + int.from_bytes(data[:2], "big") % 60)
"""


def _nest(n: int) -> int:
    return 0 if n <= 0 else 1 + _nest(n - 1)


def _deep(data: bytes) -> None:
    _nest(int.from_bytes(data, "big"))


def _under(frames: int, call):
    """``call()`` with ``frames`` more frames of stack above it."""
    return call() if frames <= 0 else _under(frames - 1, call)


def assay_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_recorded_headroom_replays_under_any_stack():
    target = Target(name="deep_inline", fn=_deep)
    # A depth that fails only with at least ~60 more frames above the target than here.
    depth = sys.getrecursionlimit() - stack_depth(sys._getframe()) - 60
    data = depth.to_bytes(2, "big")
    found = _under(120, lambda: run(target, data, fresh=True).verdict)
    assert found is not None and "RecursionError" in found.signature
    room = recorded_room(found)
    assert room is not None and room < 1000
    # A shallow replay passes without the record (the bug replay could not show) ...
    assert _under(0, lambda: run_input(target, data)) is None
    # ... and fails the same way with it, from a shallow stack or a deeper one.
    for frames in (0, 40, 200):
        again = _under(frames, lambda: run_input(target, data, room=room))
        assert again is not None and again.signature == found.signature
        assert recorded_room(again) == room


class _Surface:
    """A callable object target, as an HTTP surface is."""

    def __call__(self, data: bytes) -> None:
        _deep(data)


@pytest.mark.parametrize("fn", [_deep, _Surface(), functools.partial(_deep)], ids=["function", "object", "partial"])
def test_headroom_is_the_same_whether_python_or_c_calls_the_target(fn):
    """The worker's loop calls the target from C, so the traceback it gets starts at the
    target's own frame; ``execute.run`` catches in the calling Python frame.  Both must
    count from the same caller."""
    data = (sys.getrecursionlimit() + 10).to_bytes(2, "big")
    try:
        fn(data)
    except RecursionError as exc:
        caught_in_python = headroom(exc, fn)
        # What a C caller's catch leaves: the traceback from the target's frame on.
        caught_in_c = headroom(exc.with_traceback(exc.__traceback__.tb_next), fn)
    assert caught_in_python == caught_in_c
    assert caught_in_python == sys.getrecursionlimit() - stack_depth(sys._getframe())


def test_recursion_finding_replays_from_the_cli(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.assay]\ntargets = ["fuzz"]\n')
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "deep_target.py").write_text(HARNESS)
    common = ["--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(tmp_path / "a")]
    r = assay_cli("fuzz", "--project", ".", "--fuzz-cases", "3000", "--fuzz-seed", "1", *common, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    (artifact,) = (tmp_path / "a" / "deep_recursion").iterdir()
    meta_path = artifact / "metadata.json"
    meta = json.loads(meta_path.read_text())
    assert "RecursionError" in meta["signature"] and meta["verdict"]["data"]["recursion"]["headroom"] > 0

    r = assay_cli("replay", str(artifact), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"signature: {meta['signature']}" in r.stdout

    # promote replays it at the same headroom, and so does the test it writes.
    r = assay_cli("promote", "--project", ".", "--replays", "2", "--write", str(artifact), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    (emitted,) = (tmp_path / "tests" / "fuzz_regressions").glob("test_deep_recursion_*.py")
    room = meta["verdict"]["data"]["recursion"]["headroom"]
    assert f"recursion_headroom={room}" in emitted.read_text()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(emitted)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 1 and "RecursionError" in run.stdout, run.stdout + run.stderr

    # Non-vacuity: without the recorded headroom the minimized input (on the edge of the
    # worker's depth) passes under replay's shallower stack.
    del meta["verdict"]["data"]["recursion"]
    meta_path.write_text(json.dumps(meta))
    r = assay_cli("replay", str(artifact), cwd=tmp_path)
    assert r.returncode == 0 and "verdict: pass" in r.stdout, r.stdout + r.stderr
