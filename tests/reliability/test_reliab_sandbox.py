"""Item 5 of issue 38: holes in the audit-hook sandbox made with ordinary standard-library calls."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from reliab_helpers import run_assay


def _isolated(fn, name, data=b"x", **kw):
    from assay.engine.isolate import run_isolated
    from assay.harness.define import make_target

    return run_isolated(make_target(fn, name=name, **kw), data).verdict


def _refused(verdict, event):
    assert verdict is not None and verdict.oracle == "safety", verdict
    assert verdict.key.startswith(f"{event}@"), verdict.key


@pytest.fixture
def outside(tmp_path):
    out = tmp_path / "outside"
    out.mkdir()
    return out


# -- paths relative to a dir_fd, and hard links ------------------------------------------------------
def test_os_open_relative_to_a_folder_descriptor_outside_cannot_create_a_file_there(outside):
    def target(data: bytes) -> None:
        fd = os.open(outside, os.O_RDONLY)
        os.close(os.open("made", os.O_CREAT | os.O_WRONLY, dir_fd=fd))

    _refused(_isolated(target, "dirfd_open"), "open")
    assert not (outside / "made").exists()


def test_os_open_of_a_relative_path_without_a_folder_descriptor_still_writes_in_the_worker_folder():
    def target(data: bytes) -> None:
        os.close(os.open("mine", os.O_CREAT | os.O_WRONLY, 0o600))
        with open("mine", "a") as fh:
            fh.write("fine")

    assert _isolated(target, "plain_relative_open") is None


def test_unlink_relative_to_a_folder_descriptor_outside_deletes_nothing(outside):
    (outside / "keep").write_text("precious")

    def target(data: bytes) -> None:
        fd = os.open(outside, os.O_RDONLY)
        os.unlink("keep", dir_fd=fd)

    _refused(_isolated(target, "dirfd_unlink"), "os.remove")
    assert (outside / "keep").read_text() == "precious"


def test_a_hard_link_to_an_outside_file_cannot_be_made_and_appended_to(outside):
    (outside / "log").write_text("precious")

    def target(data: bytes) -> None:
        os.link(outside / "log", "hl")
        with open("hl", "a") as fh:
            fh.write("appended")

    _refused(_isolated(target, "hardlink"), "os.link")
    assert (outside / "log").read_text() == "precious"


# -- sockets -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["sendto", "sendmsg"])
def test_datagrams_sent_off_loopback_are_refused(how):
    import socket

    def target(data: bytes) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:  # TEST-NET-1: nothing answers; an unreachable network is not the point
                if how == "sendto":
                    s.sendto(b"x", ("192.0.2.1", 9))
                else:
                    s.sendmsg([b"x"], [], 0, ("192.0.2.1", 9))
            except OSError:
                pass

    _refused(_isolated(target, f"udp_{how}"), f"socket.{how}")


def test_datagrams_to_loopback_pass():
    import socket

    def target(data: bytes) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", ("127.0.0.1", 9))

    assert _isolated(target, "udp_loopback") is None


# -- processes ---------------------------------------------------------------------------------------
def test_a_direct_fork_exec_runs_no_command(outside):
    marker = outside / "ran"

    def target(data: bytes) -> None:
        import _posixsubprocess

        errr, errw = os.pipe()
        args = [b"/bin/touch", os.fsencode(marker)]
        pid = _posixsubprocess.fork_exec(
            *(args, [args[0]], True, (errw,), None, None, -1, -1, -1, -1, -1, -1, errr, errw),
            *(False, False, -1, None, None, None, -1, None, False),
        )
        os.close(errw)
        os.waitpid(pid, 0)

    _refused(_isolated(target, "fork_exec"), "_posixsubprocess.fork_exec")
    assert not marker.exists()


# -- threads -----------------------------------------------------------------------------------------
_THREAD_SCRIPT = """
import os, sys, threading
from assay.core.allowance import Allowance
from assay.engine import sandbox

work, outside = sys.argv[1], sys.argv[2]
sandbox.enter(work)
go, outcome = threading.Event(), []

def writer():  # started by the target; writes once the target's call has returned
    go.wait(10)
    try:
        with open(os.path.join(outside, "late"), "w") as fh:
            fh.write("x")
        outcome.append("wrote")
    except BaseException as exc:
        outcome.append(type(exc).__name__)

sandbox.arm(Allowance())
thread = threading.Thread(target=writer)
thread.start()
assert sandbox.disarm() is None
go.set()
thread.join(10)
with open(os.path.join(outside, "assay-own"), "w") as fh:  # assay's own thread, disarmed: passes
    fh.write("x")
sandbox.arm(Allowance())
refusal = sandbox.disarm()
print(outcome[0], refusal.event if refusal else None)
"""


def test_a_thread_the_target_started_cannot_write_outside_between_calls(tmp_path, outside):
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run(
        [sys.executable, "-c", _THREAD_SCRIPT, str(work), str(outside)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["SandboxRefusal", "open"]
    assert not (outside / "late").exists()
    assert (outside / "assay-own").exists()


# -- a whole campaign --------------------------------------------------------------------------------
def test_a_campaign_reports_a_dir_fd_escape_as_a_safety_finding_and_writes_nothing(tmp_path, outside):
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.assay]\ntargets = ["t.py"]\n')
    (project / "t.py").write_text(
        textwrap.dedent(
            f"""
            import os
            import assay

            @assay.target(max_len=8)
            def escape(data):
                fd = os.open({str(outside)!r}, os.O_RDONLY)
                try:
                    os.close(os.open("made", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
                finally:
                    os.close(fd)
            """
        )
    )
    r = run_assay(
        "fuzz",
        "--project",
        str(project),
        "--fuzz-cases",
        "50",
        "--fuzz-seed",
        "1",
        "--fuzz-corpus",
        str(tmp_path / "c"),
        "--fuzz-artifacts",
        str(tmp_path / "a"),
        timeout=180,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[safety] assay's sandbox refused open (os.open of 'made' relative to a dir_fd" in r.stdout, r.stdout
    assert not (outside / "made").exists()


# -- the opt-in kernel boundary ----------------------------------------------------------------------
def _landlock_abi() -> int:
    from assay.engine import landlock

    return landlock.abi()


needs_landlock = pytest.mark.skipif(_landlock_abi() < 1, reason="this kernel has no Landlock")


def _ctypes_write(path) -> None:
    """A write the audit hook cannot see: libc's open(2) through ctypes."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(os.fsencode(path), os.O_WRONLY | os.O_CREAT, 0o644)
    if fd >= 0:
        libc.write(fd, b"x", 1)
        libc.close(fd)


@needs_landlock
def test_with_landlock_on_a_ctypes_write_outside_the_worker_folder_is_stopped_by_the_kernel(outside, monkeypatch):
    monkeypatch.setenv("ASSAY_LANDLOCK", "1")
    assert _isolated(lambda data: _ctypes_write(outside / "native"), "ctypes_write") is None
    assert not (outside / "native").exists()


@needs_landlock
def test_with_landlock_on_the_worker_folder_and_allowed_paths_stay_writable(outside, monkeypatch):
    monkeypatch.setenv("ASSAY_LANDLOCK", "1")

    def target(data: bytes) -> None:
        _ctypes_write("inside")
        assert os.path.exists("inside")
        _ctypes_write(outside / "allowed")
        with open(os.devnull, "w") as fh:
            fh.write("x")

    assert _isolated(target, "ctypes_allowed", allow=[f"write:{outside}"]) is None
    assert (outside / "allowed").exists()


def test_landlock_asked_for_on_a_kernel_without_it_is_a_config_error(monkeypatch):
    from assay.core.errors import ConfigError
    from assay.engine import isolate, landlock

    monkeypatch.setenv("ASSAY_LANDLOCK", "1")
    monkeypatch.setattr(landlock, "_abi_cache", [0])
    with pytest.raises(ConfigError, match="Landlock"):
        isolate.new_workdir()
