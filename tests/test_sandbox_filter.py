"""The sandbox's audit hook behind the C filter of event names (``_cmutate.add_audit_hook``).

Audit hooks cannot be removed, so each check runs in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from assay.engine import sandbox
from assay.gen.accelerated import cmutate

needs_c = pytest.mark.skipif(
    cmutate is None or not hasattr(cmutate, "add_audit_hook"), reason="assay.gen._cmutate is not built"
)


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, env=env, check=False
    )


def test_every_event_the_sandbox_can_refuse_is_one_the_filter_passes():
    # _judge refuses nothing outside JUDGED_EVENTS: each table it reads is inside it.
    assert {"open", "os.remove", "socket.connect", "subprocess.Popen", "_posixsubprocess.fork_exec"} <= (
        sandbox.JUDGED_EVENTS
    )
    for event in ("object.__setattr__", "exec", "compile", "import", "sys._getframe", "os.listdir"):
        assert event not in sandbox.JUDGED_EVENTS
        assert sandbox._judge(event, ("/nowhere/x", "w", 0)) is None


@needs_c
def test_the_c_filter_calls_the_hook_for_named_events_only_and_its_exception_refuses():
    r = _python(
        """
        import os, sys
        from assay.gen import _cmutate
        seen = []
        def hook(event, args):
            seen.append(event)
            if event == "os.remove" and args[0] == "refused":
                raise PermissionError("no")
        _cmutate.add_audit_hook(hook, ["open", "os.remove"])
        def f():
            pass
        f.__code__ = (lambda: None).__code__  # object.__setattr__: not named, never reaches the hook
        open(os.devnull).close()
        try:
            os.remove("refused")
        except PermissionError:
            seen.append("refused")
        print(" ".join(seen))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["open", "os.remove", "refused"]


_COUNTING = """
import os, sys, tempfile
from assay.engine import sandbox
from assay.engine.execute import allowance
calls = []
judge = sandbox._hook
def counting(event, args):
    calls.append(event)
    return judge(event, args)
sandbox._hook = counting  # install() adds what the module holds at that moment
work, outside = sys.argv[1], sys.argv[2]
sandbox.enter(work, allowance(()))
def f():
    pass
codes = [f.__code__, (lambda: None).__code__]
for k in range(1000):  # what a recorded run of a big library does: swap code objects
    f.__code__ = codes[k % 2]
sandbox.arm(allowance(()))
try:
    open(os.path.join(outside, "x"), "w")
except BaseException as exc:
    print("refused", type(exc).__name__)
refusal = sandbox.disarm()
print("refusal", refusal.kind if refusal else None)
print("calls", len(calls))
"""


@pytest.mark.parametrize("pure", [False, True])
def test_code_swaps_reach_the_python_hook_only_without_the_filter(tmp_path, pure):
    if not pure and (cmutate is None or not hasattr(cmutate, "add_audit_hook")):
        pytest.skip("assay.gen._cmutate is not built")
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    env_code = ("import os; os.environ['ASSAY_PURE_PYTHON'] = '1'\n" if pure else "") + _COUNTING
    r = _python(env_code, str(work), str(outside))
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["refused"] == "SandboxRefusal" and lines["refusal"] == "write"  # the sandbox still judges
    assert not (outside / "x").exists()
    calls = int(lines["calls"])
    if pure:
        assert calls >= 1000, "without the filter every swap is a call of the Python hook"
    else:
        assert calls < 20, "the filter passes the judged events only"


@needs_c
def test_every_judged_name_passes_the_filters_mask_and_others_do_not():
    # The filter turns an event away by a mask of the judged names' hashes before it
    # compares names: each judged name must still reach the hook, whatever its hash.
    r = _python(
        """
        import sys
        from assay.engine import sandbox
        from assay.gen import _cmutate
        seen = []
        _cmutate.add_audit_hook(lambda event, args: seen.append(event), sorted(sandbox.JUDGED_EVENTS))
        for name in sorted(sandbox.JUDGED_EVENTS) + ["builtins.id", "object.__setattr__", "import", "os.listdir"]:
            sys.audit(name)
        id(seen)
        print(" ".join(seen))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == sorted(sandbox.JUDGED_EVENTS)


@needs_c
def test_object_id_is_id_without_its_audit_event():
    r = _python(
        """
        import sys
        from assay.gen import _cmutate
        events = []
        sys.addaudithook(lambda event, args: events.append(event) if event == "builtins.id" else None)
        o = object()
        same = _cmutate.object_id(o) == id(o)
        print(same, events.count("builtins.id"))
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "1"]
