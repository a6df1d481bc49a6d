"""Progress output: pulse lines in CI logs (driven by a fake clock), a rich display on a terminal."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from assay.engine.supervisor import Progress
from assay.reports.progress import PULSE_EVERY, CampaignProgress, ProgressLine, pulse_every
from conftest import ROOT

PULSE = re.compile(
    r"^#(\d+) (pulse|done)  target: (\S+)  cases: (\d+)  exec/s: \d+  edges: (\d+)  corpus: (\d+)  "
    r"findings: (\d+)  elapsed: \d+s(  left: \d+s)?$"
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _p(target: str, cases: int, elapsed: float, **kw) -> Progress:
    return Progress(
        target,
        cases,
        kw.get("edges", cases // 10),
        0,
        0,
        kw.get("corpus", 3),
        kw.get("findings", 0),
        elapsed,
        kw.get("left"),
        kw.get("planned"),
        kw.get("done", False),
    )


def test_pulse_lines_every_n_seconds_of_the_clock_not_per_call():
    clock, out = FakeClock(), io.StringIO()
    progress = CampaignProgress(out, every=10.0, clock=clock, live=False)
    for t, cases in ((3, 30), (9.9, 99), (10, 100), (12, 120), (19, 190), (21, 210)):
        clock.now = 100.0 + t
        progress(_p("parse", cases, t, left=60 - t))
    progress(_p("parse", 250, 25.0, done=True))
    clock.now = 131.0  # 10 s after the last pulse (at 121)
    progress(_p("quick", 5, 0.5))
    progress(_p("quick", 9, 0.9, done=True))
    clock.now = 132.0
    progress(_p("tiny", 1, 0.1))  # never pulsed: no done line either
    progress(_p("tiny", 2, 0.2, done=True))
    progress.finish()
    lines = out.getvalue().splitlines()
    assert [PULSE.match(line).group(1, 2, 3) for line in lines] == [
        ("100", "pulse", "parse"),
        ("210", "pulse", "parse"),
        ("250", "done", "parse"),
        ("5", "pulse", "quick"),
        ("9", "done", "quick"),
    ]
    assert lines[0].endswith("left: 50s") and "exec/s: 10 " in lines[0]


def test_pulse_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ASSAY_PULSE_EVERY", "2.5")
    assert pulse_every() == 2.5
    monkeypatch.setenv("ASSAY_PULSE_EVERY", "0")
    assert pulse_every() is None
    clock, out = FakeClock(), io.StringIO()
    progress = CampaignProgress(out, clock=clock, live=False)
    for t in range(1, 50):
        clock.now = 100.0 + t
        progress(_p("parse", t, t))
    assert out.getvalue() == ""
    monkeypatch.setenv("ASSAY_PULSE_EVERY", "soon")
    assert pulse_every() == PULSE_EVERY


def test_progress_line_logs_in_ci_by_default():
    clock, out = FakeClock(), io.StringIO()
    line = ProgressLine(out, lambda n: f"{n} done", clock=clock, live=False)
    for t in range(31):
        clock.now = 100.0 + t
        line(t)
    assert out.getvalue().splitlines() == ["10 done", "20 done", "30 done"]


def test_terminal_gets_a_rich_row_per_target():
    pytest.importorskip("rich")
    out = io.StringIO()
    progress = CampaignProgress(out, live=True)
    assert progress.display is not None and progress.plain is None
    progress(_p("parse", 50, 1.0, planned=200))
    progress(_p("parse", 200, 3.0, planned=200))  # schedule spent, a shrink still running
    (row,) = progress.display.progress.tasks
    assert not row.finished
    progress(_p("parse", 200, 4.0, planned=200, findings=2, done=True))
    assert row.finished
    progress(_p("dump", 10, 0.5, left=10.0))
    progress.finish()
    text = out.getvalue()
    assert "parse" in text and "200 cases" in text and "findings 2" in text and "dump" in text
    assert not PULSE.search(text)


def test_terminal_without_rich_redraws_one_line(monkeypatch):
    import assay.reports.progress as mod

    monkeypatch.setattr(mod, "_rich_console", lambda stream: None)
    clock, out = FakeClock(), io.StringIO()
    progress = CampaignProgress(out, clock=clock, live=True)
    assert progress.display is None
    for t in (0.0, 0.1, 0.3, 0.6):
        clock.now = 100.0 + t
        progress(_p("parse", int(t * 100), t))
    progress.finish()
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and "parse: 60 cases" in text


def test_fuzz_in_ci_writes_pulse_lines_and_a_done_line(tmp_path):
    report = tmp_path / "r.json"
    env = {**os.environ, "ASSAY_PULSE_EVERY": "0.001"}  # every progress call pulses: no timing assumption
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(ROOT / "examples"),
            "--fuzz-target",
            "url_split_roundtrip",
            "--fuzz-cases",
            "2000",
            "--fuzz-seed",
            "2",
            "--fuzz-corpus",
            str(tmp_path / "c"),
            "--fuzz-artifacts",
            str(tmp_path / "a"),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode in (0, 1), r.stderr
    lines = [m for m in map(PULSE.match, r.stderr.splitlines()) if m]
    assert [m.group(2) for m in lines].count("done") == 1 and lines[-1].group(2) == "done"
    assert any(m.group(2) == "pulse" for m in lines)
    final = json.loads(report.read_text())["targets"]["url_split_roundtrip"]
    assert int(lines[-1].group(4)) == final["cases"] and int(lines[-1].group(5)) == final["coverage"]["edges"]
    counts = [int(m.group(4)) for m in lines]
    assert counts == sorted(counts)  # never a case counted twice across a worker's end


def test_jobs_pulse_one_line_per_job(tmp_path):
    env = {**os.environ, "ASSAY_PULSE_EVERY": "0.001"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(ROOT / "examples"),
            "--fuzz-target",
            "url_split_roundtrip",
            "--fuzz-cases",
            "2000",
            "--jobs",
            "2",
            "--fuzz-seed",
            "2",
            "--fuzz-corpus",
            str(tmp_path / "c"),
            "--fuzz-artifacts",
            str(tmp_path / "a"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode in (0, 1), r.stderr
    done = sorted(m.group(3) for m in map(PULSE.match, r.stderr.splitlines()) if m and m.group(2) == "done")
    assert done == ["url_split_roundtrip[1/2]", "url_split_roundtrip[2/2]"]


def test_a_redirected_log_starts_with_the_seed_and_survives_kill_9(tmp_path):
    """stdout and stderr to one file, as in CI; kill -9 of the process group mid-run."""
    import signal
    import time

    log = tmp_path / "log.txt"
    env = {**os.environ, "ASSAY_PULSE_EVERY": "0.05"}
    argv = [sys.executable, "-m", "assay", "fuzz", "--project", str(ROOT / "examples")]
    argv += ["--fuzz-target", "url_split_roundtrip", "--fuzz-budget", "120", "--fuzz-seed", "7"]
    argv += ["--fuzz-corpus", str(tmp_path / "c"), "--fuzz-artifacts", str(tmp_path / "a")]
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if any(map(PULSE.match, log.read_text().splitlines())):
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL  # killed mid-run, not finished
    lines = log.read_text().splitlines()
    assert lines and lines[0] == "assay: master seed 7 (repeat with --fuzz-seed 7)", lines[:3]
    assert any(PULSE.match(line) for line in lines[1:])


def _live_row(width: int, *names: str) -> list[str]:
    """The rows the rich display draws last at ``width`` columns, one target per name."""
    pytest.importorskip("rich")
    from rich.console import Console

    import assay.reports.progress as mod

    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    original = mod._rich_console
    mod._rich_console = lambda stream: console
    try:
        progress = CampaignProgress(out, live=True)
    finally:
        mod._rich_console = original
    for name in names:
        progress(_p(name, 123456, 12.3, edges=812, corpus=96, findings=3, left=47.7))
    progress.finish()
    drawn = out.getvalue().split("\x1b[2K")[-1]  # the last redraw: every row
    rows = (re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", row) for row in drawn.splitlines())
    return [row.rstrip() for row in rows if row.strip()]


@pytest.mark.parametrize("width", [80, 60, 120])
def test_the_live_row_keeps_the_target_name_whole_at_any_width(width):
    names = ("fuzz_whenparse_datetime", "fuzz_whenparse.py:TestOneInput")
    rows = _live_row(width, *names)
    assert len(rows) == len(names), rows  # one line per target: nothing wrapped
    for name, row in zip(names, rows, strict=True):
        assert f" {name} " in row and len(row) <= width, row
        assert "123,456 cases" in row, row
        assert "findings 3" in row or width < 80, row  # the counts that matter stay as long as they fit
    if width >= 120:
        assert "corpus 96" in rows[0] and "left 48s" in rows[0]  # room for every column
