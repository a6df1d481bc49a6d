"""The report's bug section: grouping per bug, per-target mapping, locations inside the project."""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

from assay.core.verdict import ExceptionInfo, Frame, Verdict
from assay.engine.supervisor import FindingRecord, TargetOutcome
from assay.findings.bug_entries import bug_section, relative_path
from assay.store.artifacts import Finding, build_metadata, write_artifact

# A frame in the real standard library (json's decoder), as a library bug would have.
JSON_DECODER = str(Path(sysconfig.get_paths()["stdlib"]) / "json" / "decoder.py")


def _finding(tmp_path: Path, target: str, harness: Path, sig_key: str, data: bytes) -> FindingRecord:
    frames = (
        Frame("json.decoder", "JSONDecoder.raw_decode", JSON_DECODER, 353),
        Frame(harness.stem, "check", str(harness), 12),
    )
    verdict = Verdict(
        "panic", sig_key, exception=ExceptionInfo("builtins.ValueError", "bad\nsecond line", frames, "tb")
    )
    finding = Finding(target=target, verdict=verdict, input=data, original=data, determinism={})
    meta = build_metadata(finding, campaign_seed=1, target_seed=2, sources=[])
    meta["harness"] = str(harness)
    path, _ = write_artifact(tmp_path / "artifacts", finding, meta)
    return FindingRecord(verdict.signature, "panic", str(path), True, occurrences=3)


def test_one_signature_in_two_harnesses_is_two_bugs_mapped_per_target(tmp_path):
    project = tmp_path / "proj"
    (project / "fuzz").mkdir(parents=True)
    a, b = project / "fuzz" / "a.py", project / "fuzz" / "b.py"
    a.write_text("")
    b.write_text("")
    outcomes = []
    for name, harness in (("ta", a), ("tb", b)):
        o = TargetOutcome(name=name, seed=1, sources=[], strategy=None, initial_manifest=[])
        o.findings = [
            _finding(tmp_path, name, harness, "ValueError@json.decoder:JSONDecoder.raw_decode", b"x"),
            _finding(tmp_path, name, harness, "ValueError@json.decoder:JSONDecoder.raw_decode<other", b"y"),
        ]
        outcomes.append(o)
    bugs, ids = bug_section(outcomes, project_root=str(project), project_arg=None)
    assert [b["targets"] for b in bugs] == [["ta"], ["tb"]]
    assert all(len(b["signatures"]) == 2 and b["occurrences"] == 6 for b in bugs)
    sig = outcomes[0].findings[0].signature
    assert ids[("ta", sig)] == bugs[0]["id"] != ids[("tb", sig)] == bugs[1]["id"]
    first = bugs[0]
    assert first["message"] == "bad" and first["harness"] and first["harness_file"] == "fuzz/a.py"
    assert first["project_location"] == {"path": "fuzz/a.py", "line": 12, "function": "a:check"}
    # The artifacts lie outside the project folder: the command names it, so it works pasted anywhere.
    replay = f"assay replay --project {project.resolve()} ta {outcomes[0].findings[0].artifact}"
    assert first["replay"] == replay and first["input_size"] == 1
    json.dumps(bugs)  # plain data


def test_relative_path_keeps_virtual_environments_out_of_the_project(tmp_path):
    (tmp_path / ".venv" / "lib" / "site-packages").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    assert relative_path(str(tmp_path / "src" / "m.py"), str(tmp_path)) == "src/m.py"
    assert relative_path(str(tmp_path / ".venv" / "lib" / "site-packages" / "m.py"), str(tmp_path)) is None
    assert relative_path("/elsewhere/m.py", str(tmp_path)) is None and relative_path("<string>", str(tmp_path)) is None


def test_a_crash_names_no_exception_type_and_keeps_its_signal(tmp_path):
    """A worker killed by a signal raised nothing: its bug's ``exception`` is null, as
    docs/report-schema.json says of a crash; the signal stays in its key and message."""
    import os
    import signal

    from assay.engine.isolate import death_verdict
    from assay.promote.emit import name_label

    harness = tmp_path / "fuzz" / "crashy.py"
    harness.parent.mkdir()
    harness.write_text("")
    output = f'Fatal Python error: Segmentation fault\n\nCurrent thread (most recent call first):\n  File "{harness}", line 3 in crashy\n'
    verdict = death_verdict(signal.SIGSEGV, output, killed_for_timeout=False, timeout=1.0)
    assert os.WIFSIGNALED(signal.SIGSEGV) and verdict.oracle == "crash", verdict
    finding = Finding(target="crashy", verdict=verdict, input=b"x", original=b"x", determinism={})
    meta = build_metadata(finding, campaign_seed=1, target_seed=2, sources=[])
    path, _ = write_artifact(tmp_path / "artifacts", finding, meta)
    o = TargetOutcome(name="crashy", seed=1, sources=[], strategy=None, initial_manifest=[])
    o.findings = [FindingRecord(verdict.signature, "crash", str(path), True)]
    (bug,) = bug_section([o], project_root=str(tmp_path), project_arg=None)[0]
    assert bug["exception"] is None, bug["exception"]
    assert bug["key"].startswith("crash:signal:SIGSEGV") and "SIGSEGV" in bug["message"], bug
    # A promoted test is still named by what killed the worker.
    assert name_label(None, "crash", verdict.key) == "signal:SIGSEGV"
