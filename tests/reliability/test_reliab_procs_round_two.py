"""Issue 38, items 6-10: processes and hangs.

Each test writes its own small project into ``tmp_path`` and runs ``assay`` in a new
session, so every descendant can be found by session id and pid, never by name.
Runs are bounded by case caps; every wait is bounded; nothing asserts on elapsed time
(a run that hangs is caught by the subprocess's timeout).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from reliab_helpers import alive, kill_session, run_assay, start_assay, wait_for, wait_gone


def _project(root, body: str) -> str:
    """A project whose ``t.py`` holds the targets ``body`` defines; returns its folder."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[tool.assay]\ntargets = ["t.py"]\n')
    header = "import ctypes\nimport os\nimport time\n\nimport assay\n\n"
    (root / "t.py").write_text(header + textwrap.dedent(body))
    return str(root)


def _fuzz_args(project: str, tmp_path, cases: int, seed: int = 1, *extra: str) -> list[str]:
    return [
        "fuzz",
        "--project",
        project,
        "--fuzz-cases",
        str(cases),
        "--fuzz-seed",
        str(seed),
        "--fuzz-corpus",
        str(tmp_path / "c"),
        "--fuzz-artifacts",
        str(tmp_path / "a"),
        *extra,
    ]


HANGS = """
@assay.target(max_len=16, timeout=5)
def hangs(data: bytes) -> None:
    # Every run leaves its pid in its working folder, then hangs in C code (no Python lines).
    with open(f"hang-{os.getpid()}", "w"):
        pass
    time.sleep(3600)
"""


def test_sigkill_of_the_parent_while_a_hang_is_traced_leaves_no_orphan(tmp_path):
    project = _project(tmp_path / "p", HANGS)
    temp = tmp_path / "tmp"
    temp.mkdir()
    proc = start_assay(*_fuzz_args(project, tmp_path, 3), env={**os.environ, "TMPDIR": str(temp)})
    runs: list[int] = []

    def traced_run_started() -> bool:
        # The worker runs the hang first; the second pid in its folder is the traced run
        # (wedges.held_frames, a child of the worker) that looks for the loop's frames.
        runs[:] = sorted(
            int(name.split("-", 1)[1])
            for work in temp.glob("assay-work-*")
            for name in os.listdir(work)
            if name.startswith("hang-")
        )
        return len(runs) >= 2

    try:
        assert wait_for(traced_run_started, wait=120), "the hang was never traced"
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert wait_gone(proc.pid) == [], "processes of the SIGKILLed run survived it"
        assert not [pid for pid in runs if alive(pid)], f"runs of the hang survived: {runs}"
    finally:
        kill_session(proc.pid)


LINGERS = """
@assay.target(max_len=16, allow=["subprocess"])
def lingers(data: bytes) -> None:
    assay.feature("prefix", data[:2])
    if os.fork() == 0:  # a child that outlives the case by far, holding what it inherited
        time.sleep(3600)
        os._exit(0)
"""


def test_a_lingering_child_of_the_target_does_not_hold_up_the_counting_child(tmp_path):
    # Before: every CountingChild.close() waited for the target's child (an hour here);
    # the subprocess timeout turns such a wait into a failure.
    project = _project(tmp_path / "p", LINGERS)
    done = run_assay(*_fuzz_args(project, tmp_path, 300), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "300 cases" in done.stderr + done.stdout


def test_counting_child_close_is_bounded_when_a_forked_child_holds_its_pipes():
    # In a fresh interpreter of its own session: the worker's side of a counting child,
    # then a process forked from it that lingers (the target's child, say).
    script = textwrap.dedent(
        """
        import os, time
        from assay.engine import traced

        child = traced.CountingChild(lambda data: None, 1 << 20)
        child.count(b"x", 5.0)
        if os.fork() == 0:
            os.closerange(0, 3)  # not the test's pipes: only what it inherited from the worker
            time.sleep(3600)
            os._exit(0)
        child.close()
        print("closed")
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
        assert out.strip() == "closed", err
    finally:
        kill_session(proc.pid)


CLOSES = """
@assay.target(max_len=16, seeds=[b"x"])
def closes(data: bytes) -> None:
    assay.feature("prefix", data[:2])
    if data[:1] == b"x":
        os.closerange(1, 3)  # the worker's stdout and stderr: fds 1 and 2 are free now
        raise RuntimeError("after closing stdio")
    if data[:1] == b"l":  # reaches the counting child's cap: it is forked again, after the close
        for _ in range(1 << 20):
            pass
"""


def test_a_target_that_closes_stdout_and_stderr_then_raises_is_a_finding_with_a_report(tmp_path):
    project = _project(tmp_path / "p", CLOSES)
    report = tmp_path / "r.json"
    done = run_assay(*_fuzz_args(project, tmp_path, 3000, 1, "--report", str(report)), timeout=240)
    assert done.returncode == 1, done.stderr
    assert "RuntimeError: after closing stdio" in done.stdout
    assert report.exists()


SEGFAULTS = """
def _deref(n: int) -> None:
    if n:
        return _deref(n - 1)
    ctypes.string_at(0)  # SIGSEGV, under a dozen frames of the target's


@assay.target(max_len=16)
def segfaults(data: bytes) -> None:
    assay.feature("prefix", data[:2])
    for _ in range(len(data) * 200):  # lines to count: the counting child runs these inputs too
        pass
    if len(data) % 3 == 1:
        _deref(12)
"""


def _findings(report) -> list[tuple[str, str, int, str]]:
    import json
    from pathlib import Path

    target = json.loads(report.read_text())["targets"]["segfaults"]
    return sorted(
        (f["signature"], f["bug"], f["occurrences"], (Path(f["artifact"]) / "diagnostic.log").read_text())
        for f in target["findings"]
    )


def test_the_same_segfault_gives_the_same_findings_on_every_run_with_the_same_seed(tmp_path):
    # The counting child runs some of the same inputs beside the worker: its crash stack
    # went into the worker's capture file too, after, before or inside the worker's own.
    project = _project(tmp_path / "p", SEGFAULTS)
    runs = []
    for k in range(2):
        report = tmp_path / f"r{k}.json"
        done = run_assay(*_fuzz_args(project, tmp_path / f"run{k}", 400, 7, "--report", str(report)), timeout=240)
        assert done.returncode == 1, done.stderr
        runs.append(_findings(report))
    assert runs[0], "no finding"
    for signature, _bug, _seen, diagnostic in runs[0]:
        assert signature.startswith("crash:signal:SIGSEGV@"), signature
        assert diagnostic.count("Fatal Python error: Segmentation fault") == 1, diagnostic
    assert runs[0] == runs[1]


def test_a_segfault_in_the_counting_child_leaves_no_stack_in_the_workers_capture():
    # Deterministic twin of the test above: the counting child crashes on its input, alone.
    script = textwrap.dedent(
        """
        import ctypes, os
        from assay.engine import isolate, traced

        capture = isolate.new_capture()
        pid = os.fork()
        if pid == 0:  # a worker: its output captured, faulthandler on
            isolate.child_setup(capture, 0)
            counting = traced.CountingChild(lambda data: ctypes.string_at(0), 1 << 20)
            os._exit(0 if counting.count(b"x", 30.0) == 0 else 5)
        status = os.waitpid(pid, 0)[1]
        with open(capture) as fh:
            text = fh.read()
        os.unlink(capture)
        print(os.waitstatus_to_exitcode(status), text.count("Fatal Python error"))
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        kill_session(proc.pid)
    assert out.split() == ["0", "0"], (out, err)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=60)
    return proc.pid


GROWS = """
@assay.target(max_len=16, seeds=[b"a"])
def grows(data: bytes) -> None:
    assay.feature("prefix", data[:2])
"""


#: ``assay`` with deleting in the store failing as in a read-only folder (the tests run as
#: root, where a folder's mode does not stop a write); its arguments follow.
READ_ONLY_ASSAY = """
import errno, shutil, sys
from assay.store import atomic


unlink, rmtree = atomic.os.unlink, atomic.shutil.rmtree


def refusing(delete):
    def refuse(path, *args, **kwargs):
        if "/c/grows/" in str(path):  # the corpus folder only
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return delete(path, *args, **kwargs)

    return refuse


atomic.os.unlink = refusing(unlink)
atomic.shutil.rmtree = refusing(rmtree)
from assay.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _read_only_assay(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(
        [sys.executable, "-c", READ_ONLY_ASSAY, *args],
        env={**os.environ, "PYTHONHASHSEED": "0"},  # else assay re-executes itself, without the patch
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        kill_session(proc.pid)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _stale_corpus(tmp_path):
    folder = tmp_path / "c" / "grows"
    folder.mkdir(parents=True)
    stale = folder / f".tmp-{_dead_pid()}-x"
    stale.write_bytes(b"half")
    return stale


def test_a_stale_temp_file_in_a_read_only_corpus_is_ignored_by_replay_only(tmp_path):
    project = _project(tmp_path / "p", GROWS)
    stale = _stale_corpus(tmp_path)
    done = _read_only_assay(*_fuzz_args(project, tmp_path, 10), "--fuzz-replay-only")
    assert done.returncode == 0, done.stderr
    assert stale.exists()  # replay-only never writes


def test_a_stale_temp_file_in_a_read_only_corpus_is_a_clear_error_not_exit_3(tmp_path):
    project = _project(tmp_path / "p", GROWS)
    stale = _stale_corpus(tmp_path)
    done = _read_only_assay(*_fuzz_args(project, tmp_path, 10))
    assert done.returncode == 2, done.stderr
    assert str(stale) in done.stderr


def test_the_temp_files_of_a_sigkilled_run_are_removed_by_the_next_run(tmp_path):
    project = _project(tmp_path / "p", HANGS)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = start_assay(*_fuzz_args(project, tmp_path, 3), env=env)
    try:
        assert wait_for(lambda: any(temp.glob("assay-work-*")) and any(temp.glob("assay-capture-*.log")), wait=120)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert wait_gone(proc.pid) == []
    finally:
        kill_session(proc.pid)
    left = sorted(p.name for p in temp.iterdir())
    assert left, "the SIGKILLed run left nothing to clean (the test proves nothing)"
    mine = temp / "assay-work-notapid"  # not named by a pid: never touched
    mine.mkdir()
    living = temp / f"assay-capture-{os.getpid()}-x.log"  # a live process's: never touched
    living.write_text("")
    grow = _project(tmp_path / "g", GROWS)
    done = subprocess.run(
        [sys.executable, "-m", "assay", *_fuzz_args(grow, tmp_path / "g", 5)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in temp.iterdir()) == sorted([mine.name, living.name])
    for name in left:
        assert f"removed {temp / name}" in done.stderr


WEDGES = """
import signal


@assay.target(max_len=16, timeout=2)
def wedges(data: bytes) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})  # deaf to the soft timeout
    with open(f"wedge-{os.getpid()}", "w"):
        pass
    time.sleep(3600)
"""


def _interrupted_run(tmp_path, body: str, name: str, ready) -> tuple[int, str, list[dict]]:
    """Run ``body``'s target ``name``, SIGTERM assay once ``ready(markers)`` holds for the markers
    its runs left in their work folders; (exit code, stderr, the report's findings of ``name``)."""
    import json

    project = _project(tmp_path / "p", body)
    temp = tmp_path / "tmp"
    temp.mkdir()
    report = tmp_path / "r.json"
    args = _fuzz_args(project, tmp_path, 3, 1, "--report", str(report))
    proc = start_assay(*args, env={**os.environ, "TMPDIR": str(temp)})
    try:
        assert wait_for(lambda: ready(list(temp.glob("assay-work-*/wedge-*"))), wait=120)
        os.kill(proc.pid, signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        kill_session(proc.pid)
    return proc.returncode, err, json.loads(report.read_text())["targets"][name]["findings"]


def _past_the_timeout(markers: list) -> bool:
    """The case has started and run past its 2 s timeout, before the kill 1 s later."""
    import time

    if not markers:
        return False
    time.sleep(2.4)
    return True


def test_a_wedge_in_progress_when_sigterm_arrives_is_kept(tmp_path):
    code, err, findings = _interrupted_run(tmp_path, WEDGES, "wedges", _past_the_timeout)
    assert code == 130, err
    assert [f["oracle"] for f in findings] == ["wedge"], err
    assert (tmp_path / "a" / "wedges").is_dir()


ANALYSED = """
@assay.target(max_len=16, timeout=2)
def analysed(data: bytes) -> None:
    with open(f"wedge-{os.getpid()}", "w"):
        pass
    while True:  # a hang the soft timeout ends; keying it re-runs it in a traced child for the timeout
        time.sleep(0.01)
"""


def test_a_wedge_being_keyed_when_sigterm_arrives_is_kept(tmp_path):
    """The worker caught the soft timeout and is keying the wedge (a traced re-run of the
    hang, which writes the second marker): an interrupt then must not lose it."""
    # The first marker is the case itself; the second, the traced re-run that keys it.
    code, err, findings = _interrupted_run(tmp_path, ANALYSED, "analysed", lambda markers: len(markers) >= 2)
    assert code == 130, err
    assert [f["oracle"] for f in findings] == ["wedge"], err
