"""An artifact is data: no command imports, compiles or evaluates what its metadata names.

Artifacts travel (CI uploads, pull requests, ``merge-corpus``), so a crafted
``metadata.json`` must not run code: a ``harness`` path (inside the artifact, ``../``,
absolute), a mutant's edit, a falsifying example's argument text.  Malformed fields are
exit 2 with one line naming the field, never a traceback and exit 3.  The legitimate
route for a finding of a harness file given on the command line is ``--harness FILE``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TARGETS = textwrap.dedent("""
    import assay

    @assay.target(max_len=16)
    def parse(data: bytes) -> None:
        if data == b"boom":
            raise ValueError("boom")
""")


def evil_source(marker: Path) -> str:
    """A harness that writes ``marker`` the moment it is imported."""
    return textwrap.dedent(f"""
        from pathlib import Path
        Path({str(marker)!r}).write_text("imported")

        import assay

        @assay.target
        def evil(data: bytes) -> None:
            pass
    """)


def assay(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.assay]\ntargets = ["targets.py"]\n')
    (root / "targets.py").write_text(TARGETS)
    return root


def metadata(data: bytes, **fields) -> dict:
    meta = {
        "schema_version": 1,
        "target": "evil:evil",
        "signature": "panic:builtins.ValueError@evil:evil",
        "oracle": "panic",
        "verdict": {"oracle": "panic", "key": "builtins.ValueError@evil:evil", "detail": "", "data": {}},
        "exception": None,
        "input_sha256": hashlib.sha256(data).hexdigest(),
        "sources": [],
        "harness": None,
    }
    meta.update(fields)
    return meta


def write_artifact(root: Path, meta: dict, data: bytes = b"boom") -> Path:
    folder = root / str(meta.get("target", "t")).replace(":", "_") / hashlib.sha256(data).hexdigest()
    folder.mkdir(parents=True)
    (folder / "input").write_bytes(data)
    (folder / "metadata.json").write_text(json.dumps(meta))
    return folder


def place_evil(kind: str, project: Path, artifact: Path, marker: Path) -> str:
    """Put the marker-writing harness where ``kind`` says; the ``harness`` string that names it."""
    if kind == "inside the artifact":
        (artifact / "evil.py").write_text(evil_source(marker))
        return str(artifact / "evil.py")
    if kind == "a ../ path":
        (project.parent / "evil.py").write_text(evil_source(marker))
        return "../evil.py"
    (project.parent / "abs_evil.py").write_text(evil_source(marker))
    return str((project.parent / "abs_evil.py").resolve())


@pytest.mark.parametrize("kind", ["inside the artifact", "a ../ path", "an absolute path"])
def test_no_command_imports_the_harness_file_an_artifacts_metadata_names(project, tmp_path, kind):
    marker = tmp_path / "marker"
    root = project / ".assay" / "artifacts"
    artifact = write_artifact(root, metadata(b"boom"))
    harness = place_evil(kind, project, artifact, marker)
    meta = json.loads((artifact / "metadata.json").read_text())
    meta["harness"] = harness
    (artifact / "metadata.json").write_text(json.dumps(meta))

    replay = assay("replay", str(artifact), cwd=project)
    assert not marker.exists(), "assay replay imported the harness file named by the metadata"
    assert replay.returncode == 2, replay.stdout + replay.stderr
    (line,) = replay.stderr.strip().splitlines()
    assert "never imported" in line and "--harness" in line and "Traceback" not in replay.stderr

    promote = assay("promote", str(artifact), cwd=project)
    assert not marker.exists(), "assay promote imported the harness file named by the metadata"
    assert promote.returncode == 0 and "--harness" in promote.stdout, promote.stdout + promote.stderr

    for args in (["findings"], ["findings", "--json"]):
        findings = assay(*args, cwd=project)
        assert findings.returncode == 0, findings.stdout + findings.stderr
    assert not marker.exists(), "assay findings imported the harness file named by the metadata"

    merge = assay("merge-corpus", str(tmp_path / "out"), str(root), cwd=project)
    assert not marker.exists(), "assay merge-corpus imported the harness file named by the metadata"
    assert merge.returncode == 2 and "Traceback" not in merge.stderr, merge.stdout + merge.stderr


MALFORMED = {
    "exception is a string": {"exception": "x"},
    "verdict is a string": {"verdict": "x"},
    "verdict exception is a number": {
        "verdict": {"oracle": "panic", "key": "k", "exception": 5},
    },
    "a frame lacks its fields": {
        "exception": {"type": "builtins.ValueError", "message": "", "frames": [{"file": 1}], "traceback": ""}
    },
    "a frame has an unknown field": {
        "exception": {
            "type": "builtins.ValueError",
            "message": "",
            "frames": [{"module": "m", "qualname": "f", "file": "m.py", "line": 1, "evil": 1}],
            "traceback": "",
        }
    },
    "sources is a string": {"sources": "abc"},
    "harness is a number": {"harness": 5},
    "target is a number": {"target": 5},
    "campaign seed is text": {"campaign_seed": "1"},
    "mutant is a string": {"mutant": "x", "mutant_id": "m"},
    "verdict data is a list": {"verdict": {"oracle": "panic", "key": "k", "data": []}},
    "input sha256 is not hex": {"input_sha256": "../../etc"},
    "metadata is a list": None,
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_metadata_field_is_exit_2_with_one_line_naming_it(project, case):
    fields = MALFORMED[case]
    meta = metadata(b"boom", target="parse") if fields is not None else ["not", "an", "object"]
    if fields is not None:
        meta.update(fields)
    artifact = write_artifact(project / ".assay" / "artifacts", {"target": "parse"} if fields is None else meta)
    if fields is None:
        (artifact / "metadata.json").write_text(json.dumps(meta))
    for args in (["replay", str(artifact)], ["promote", str(artifact)], ["findings"]):
        r = assay(*args, cwd=project)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        (line,) = r.stderr.strip().splitlines()
        assert line.startswith("assay: error: ") and "metadata.json" in line, line


def test_a_missing_required_key_is_exit_2_naming_it(project):
    meta = metadata(b"boom", target="parse")
    del meta["verdict"]
    artifact = write_artifact(project / ".assay" / "artifacts", meta)
    r = assay("replay", str(artifact), cwd=project)
    assert r.returncode == 2 and "lacks 'verdict'" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_harness_file_finding_replays_and_promotes_when_its_file_is_named_on_the_command_line(tmp_path):
    root = tmp_path / "proj"
    (root / "harnesses").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    (root / "harnesses" / "h.py").write_text(
        textwrap.dedent("""
            import assay

            @assay.target(max_len=8, seeds=[b"P"])
            def planted(data: bytes) -> None:
                if data[:1] == b"P":
                    raise RuntimeError("planted: a P prefix")
        """)
    )
    run = assay("fuzz", "harnesses/h.py", "--fuzz-cases", "10", "--fuzz-seed", "1", cwd=root, timeout=240)
    assert run.returncode == 1, run.stdout + run.stderr
    (artifact,) = [m.parent for m in (root / ".assay" / "artifacts").rglob("metadata.json")]

    refused = assay("replay", str(artifact), cwd=root)
    assert refused.returncode == 2 and "--harness harnesses/h.py" in refused.stderr, refused.stderr
    replay = assay("replay", str(artifact), "--harness", "harnesses/h.py", cwd=root)
    assert replay.returncode == 1 and "planted: a P prefix" in replay.stdout, replay.stdout + replay.stderr

    promote = assay("promote", "--write", "--harness", "harnesses/h.py", cwd=root)
    assert promote.returncode == 1, promote.stdout + promote.stderr
    (test,) = (root / "tests" / "fuzz_regressions").glob("test_*.py")
    assert "harness=HARNESS" in test.read_text()


PAYLOAD = (
    "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'catch_warnings'][0]()"
    "._module.__builtins__['open']({marker!r}, 'w')"
)


def test_a_falsifying_example_from_metadata_is_never_evaluated_unless_it_is_a_literal(tmp_path):
    from assay.core.literals import NotReplayable, evaluate

    marker = tmp_path / "marker"
    with pytest.raises(NotReplayable):
        evaluate(PAYLOAD.format(marker=str(marker)))
    assert not marker.exists()
    assert evaluate("[1, -2.5, b'x', frozenset({1}), complex(0.0, -1.0)]") == [1, -2.5, b"x", frozenset({1}), -1j]


def test_promote_refuses_a_crafted_example_instead_of_writing_it_into_a_test(project, tmp_path):
    from assay.core.config import load_project
    from assay.harness.discovery import load_targets
    from assay.promote.from_fuzz import candidate_for
    from assay.store.artifacts import load_artifact

    marker = tmp_path / "marker"
    example = {"arguments": {"x": PAYLOAD.format(marker=str(marker))}, "replayable": True}
    meta = metadata(b"boom", target="parse")
    meta["verdict"]["data"] = {"example": example}
    artifact = load_artifact(write_artifact(project / ".assay" / "artifacts", meta))
    proj = load_project(project)
    candidate = candidate_for(artifact, load_targets(proj), proj.root)
    assert candidate.problem and "damaged or crafted" in candidate.problem
    assert not marker.exists()


def test_replay_of_a_differential_artifact_never_compiles_the_edit_its_metadata_carries(project, tmp_path):
    from assay.mutant.discover import mutants_in_file

    marker = tmp_path / "marker"
    real = next(m for m in mutants_in_file(project / "targets.py", project) if m.edit.replacement.strip() != "")
    mutant = real.to_json()
    mutant["edit"]["replacement"] = f"(open({str(marker)!r}, 'w').close() or {real.edit.replacement})"
    meta = metadata(b"boom", target="parse", mutant_id=real.id, mutant=mutant, mutant_diff="")
    artifact = write_artifact(project / ".assay" / "artifacts" / "mutants", meta)
    r = assay("replay", str(artifact), cwd=project)
    assert not marker.exists(), "the mutant's edit from the metadata was compiled and run"
    assert r.returncode in (0, 1), r.stdout + r.stderr  # the project's own mutant of that id replays

    mutant_gone = dict(meta, mutant_id=real.id.replace("#", "#9"))
    other = tmp_path / "other"
    shutil.copytree(artifact, other)
    (other / "metadata.json").write_text(json.dumps(mutant_gone))
    r = assay("replay", str(other), cwd=project)
    assert r.returncode == 2 and "no mutant" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not marker.exists()
    assert os.listdir(tmp_path)  # sanity: the temporary folder is where everything happened
