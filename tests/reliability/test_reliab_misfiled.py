"""Items 5 and 6 of issue 14: misfiled findings, and the audit-hook sandbox."""

from __future__ import annotations

import pytest
from reliab_helpers import HOSTILE, hostile_registry, run_assay


@pytest.fixture(scope="module")
def hostile():
    return hostile_registry()


def _isolated(target, data=b"x"):
    from assay.engine.isolate import run_isolated

    return run_isolated(target, data).verdict


# -- item 5 ------------------------------------------------------------------------------------------
def test_target_keyboard_interrupt_is_a_panic_in_a_worker(hostile):
    v = _isolated(hostile.get("hostile_keyboard_interrupt"), b"k")
    assert v.signature.startswith("panic:builtins.KeyboardInterrupt@hostile_targets:hostile_keyboard_interrupt")


def test_str_raising_system_exit_is_a_panic(hostile):
    v = _isolated(hostile.get("hostile_str_exit"), b"s")
    assert v.signature == "panic:hostile_targets.LyingError@hostile_targets:hostile_str_exit"


def test_replay_of_keyboard_interrupt_target_is_a_finding_not_an_interrupt(tmp_path):
    inp = tmp_path / "in"
    inp.write_bytes(b"k")
    r = run_assay("replay", "--project", str(HOSTILE), "hostile_keyboard_interrupt", str(inp))
    assert r.returncode == 1 and "panic:builtins.KeyboardInterrupt" in r.stdout, (r.stdout, r.stderr)


def test_campaign_files_them_under_their_own_signatures(hostile, tmp_path):
    from assay.engine.campaign import CampaignOptions, run_campaign

    targets = [hostile.get("hostile_keyboard_interrupt"), hostile.get("hostile_str_exit")]
    for t, seed in zip(targets, (b"k", b"s")):
        t.seeds = (seed,)
    options = CampaignOptions(
        corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=20, seed=1, shrink_cases=32
    )
    result = run_campaign(targets, options)
    sigs = {t.name: [f.signature for f in t.findings] for t in result.targets}
    assert not result.interrupted
    assert sigs["hostile_keyboard_interrupt"][0].startswith("panic:builtins.KeyboardInterrupt@")
    assert sigs["hostile_str_exit"][0].startswith("panic:hostile_targets.LyingError@")
    assert not any(s.startswith("crash:") for ss in sigs.values() for s in ss)


def test_closed_stdio_keeps_one_deterministic_segfault_signature(hostile, tmp_path):
    from assay.engine.campaign import CampaignOptions, run_campaign
    from assay.store.artifacts import load_artifact

    target = hostile.get("hostile_close_stdio_segv")
    options = CampaignOptions(corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=6, seed=1)
    (outcome,) = run_campaign([target], options).targets
    (finding,) = outcome.findings
    # The stack comes through the private diagnostics descriptor although fds 1 and 2 are closed.
    assert finding.signature.startswith("crash:signal:SIGSEGV@"), finding.signature
    assert "hostile_targets:hostile_close_stdio_segv" in finding.signature and finding.occurrences == 6
    assert load_artifact(finding.artifact).metadata["determinism"]["same_signature"] is True


def test_known_failure_skips_traceback_formatting(hostile, monkeypatch):
    from assay.engine import execute

    calls = []
    real = execute.classify
    monkeypatch.setattr(execute, "classify", lambda exc, expected, frm=(): calls.append(1) or real(exc, expected, frm))
    target = hostile.get("hostile_recursion")
    first = execute.run(target, b"a").verdict
    for data in (b"b", b"c", b"d"):
        assert execute.run(target, data).verdict.signature == first.signature
    assert len(calls) == 1
    assert execute.run(target, b"e", fresh=True).verdict.signature == first.signature and len(calls) == 2


def test_cache_never_merges_distinct_failures():
    from assay.engine import execute
    from assay.harness.define import make_target

    def two(data: bytes) -> None:
        if data == b"a":
            raise ValueError("a")
        raise KeyError("b")

    t = make_target(two, name="two_failures")
    sigs = {execute.run(t, d).verdict.signature for d in (b"a", b"b", b"a", b"b")}
    assert len(sigs) == 2


# -- item 6: the sandbox -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,event",
    [
        ("hostile_popen_refused", "subprocess.Popen"),
        ("hostile_system_refused", "os.system"),
        ("hostile_connect", "socket.connect"),
        ("hostile_swallow", "os.system"),
    ],
)
def test_refused_side_effects_are_safety_findings(hostile, name, event):
    v = _isolated(hostile.get(name))
    assert v is not None and v.oracle == "safety", v
    assert v.key == f"{event}@hostile_targets:{name}"


def test_write_outside_the_worker_folder_is_refused_and_nothing_is_written(hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_HOSTILE_OUT", str(tmp_path))
    v = _isolated(hostile.get("hostile_write_outside"))
    assert v.signature == "safety:open@hostile_targets:hostile_write_outside"
    assert not (tmp_path / "assay-hostile-written").exists()


@pytest.mark.parametrize("name", ["hostile_write_cwd", "hostile_loopback", "hostile_popen"])
def test_allowed_side_effects_pass(hostile, name):
    assert _isolated(hostile.get(name), b"p") is None


def test_allow_write_path(tmp_path, monkeypatch):
    from assay.harness.define import make_target

    out = tmp_path / "out"
    out.mkdir()

    def writer(data: bytes) -> None:
        (out / "f").write_bytes(data)

    assert _isolated(make_target(writer, name="w1")).signature.startswith("safety:open@")
    assert _isolated(make_target(writer, name="w2", allow=[f"write:{out}"])) is None
    assert (out / "f").read_bytes() == b"x"


def test_unknown_allow_entry_is_a_target_error():
    from assay.core.errors import TargetError
    from assay.harness.define import make_target

    with pytest.raises(TargetError, match="allow"):
        make_target(lambda d: None, name="bad_allow", allow=["everything"])


def test_sandbox_is_off_outside_workers(tmp_path):
    """In-process use (the pytest plugin, a library caller) is not sandboxed: no hook, no refusal."""
    from assay.engine import execute, sandbox
    from assay.harness.define import make_target

    assert not sandbox.installed()
    path = tmp_path / "f"
    assert execute.run(make_target(lambda d: path.write_bytes(d), name="inproc"), b"1").verdict is None
    assert path.read_bytes() == b"1"


def test_tempfile_in_a_target_writes_inside_the_worker_folder():
    from assay.harness.define import make_target

    def uses_tempfile(data: bytes) -> None:
        import tempfile

        with tempfile.NamedTemporaryFile() as fh:
            fh.write(data)
        with tempfile.TemporaryDirectory() as d:
            with open(f"{d}/x", "wb") as fh:
                fh.write(data)

    assert _isolated(make_target(uses_tempfile, name="uses_tempfile")) is None


def test_replay_of_a_safety_artifact_runs_in_the_sandbox(hostile, tmp_path, monkeypatch):
    """``assay replay`` of a safety finding never performs the refused side effect for real."""
    from assay.engine.campaign import CampaignOptions, run_campaign

    monkeypatch.setenv("ASSAY_HOSTILE_OUT", str(tmp_path))
    options = CampaignOptions(corpus_root=str(tmp_path / "c"), artifact_root=str(tmp_path / "a"), max_cases=2, seed=1)
    (outcome,) = run_campaign([hostile.get("hostile_write_outside")], options).targets
    (finding,) = outcome.findings
    r = run_assay("replay", "--project", str(HOSTILE), "hostile_write_outside", finding.artifact)
    assert r.returncode == 1 and "safety:open@hostile_targets:hostile_write_outside" in r.stdout
    assert not (tmp_path / "assay-hostile-written").exists()
