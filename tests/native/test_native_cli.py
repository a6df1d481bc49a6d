"""The CLI over native targets: targets, fuzz (native and all), replay, promote and the emitted test."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from assay.store.corpus import Corpus

HEAP = "native-asan:heap-buffer-overflow:READ:4@heap_overflow<LLVMFuzzerTestOneInput"


def assay(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "assay", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
    )


def test_targets_lists_native_targets(planted_root):
    r = assay("targets", "--project", planted_root, "--json")
    assert r.returncode == 0, r.stderr
    listed = {t["name"]: t for t in json.loads(r.stdout)}
    assert listed["planted"]["backend"] == "native" and listed["planted"]["include_dirs"] == ["include"]
    assert listed["deep"]["max_len"] == 64
    r = assay("targets", "--project", planted_root)
    assert "planted  (native)" in r.stdout and "harness      planted.c" in r.stdout


def test_fuzz_native_finds_reports_and_replays(planted_root, tmp_path):
    Corpus(tmp_path / "c", "planted", 4096).add(b"Hx")
    report = tmp_path / "r.json"
    r = assay(
        "fuzz",
        "--project",
        planted_root,
        "--fuzz-backend",
        "native",
        "--fuzz-target",
        "planted",
        "--fuzz-replay-only",
        "--fuzz-corpus",
        tmp_path / "c",
        "--fuzz-artifacts",
        tmp_path / "a",
        "--report",
        report,
    )
    assert r.returncode == 1, r.stderr
    # The console names the bug by its key (kind, access, function), not the sanitizer's address line.
    assert (
        "[native-asan] " + HEAP.split(":", 1)[1] in r.stdout
        and "no schedule digest" in r.stdout
        and "native build" in r.stdout
    )
    data = json.loads(report.read_text())
    entry = data["targets"]["planted"]
    assert (
        entry["backend"] == "native" and entry["schedule_digest"] is None and entry["findings"][0]["signature"] == HEAP
    )
    artifact = entry["findings"][0]["artifact"]
    r = assay("replay", "--project", planted_root, "planted", artifact)
    assert r.returncode == 1 and f"signature: {HEAP}" in r.stdout and "AddressSanitizer" in r.stdout
    clean = tmp_path / "clean.bin"
    clean.write_bytes(b"ok")
    r = assay("replay", "--project", planted_root, "planted", clean)
    assert r.returncode == 0 and "pass" in r.stdout


def test_budget_under_one_second_is_exit_2(planted_root):
    r = assay(
        "fuzz", "--project", planted_root, "--fuzz-backend", "native", "--fuzz-target", "deep", "--fuzz-budget", "0.5"
    )
    assert r.returncode == 2 and "at least 1 whole second" in r.stderr


def test_native_backend_without_native_targets_is_exit_2(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.assay]\ntargets = []\n")
    r = assay("fuzz", "--project", tmp_path, "--fuzz-backend", "native", "--fuzz-cases", "1")
    assert r.returncode == 2 and "declares no native target" in r.stderr


@pytest.mark.campaign
def test_backend_all_runs_python_and_native_targets(planted_root, tmp_path):
    project = tmp_path / "both"
    shutil.copytree(planted_root, project, ignore=shutil.ignore_patterns(".assay"))
    (project / "fuzz").mkdir()
    (project / "fuzz" / "fuzz_py.py").write_text(
        "import assay\n\n@assay.target(seeds=[b'a'])\ndef py_clean(data: bytes):\n    return len(data)\n\n"
        "api_declared = assay.native_target('api_deep', harness='deep.c', max_len=32)\n"
    )
    text = (project / "pyproject.toml").read_text().replace("targets = []", 'targets = ["fuzz"]')
    (project / "pyproject.toml").write_text(text)
    r = assay("targets", "--project", project, "--json")
    assert r.returncode == 0, r.stderr
    assert {t["name"]: t["backend"] for t in json.loads(r.stdout)} == {
        "py_clean": "python",
        "planted": "native",
        "deep": "native",
        "embedded": "native",
        "two": "native",
        "api_deep": "native",
    }
    report = tmp_path / "r.json"
    r = assay(
        "fuzz",
        "--project",
        project,
        "--fuzz-backend",
        "all",
        "--fuzz-target",
        "py_clean",
        "--fuzz-target",
        "api_deep",
        "--fuzz-cases",
        "500",
        "--fuzz-seed",
        "1",
        "--report",
        report,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    targets = json.loads(report.read_text())["targets"]
    assert set(targets) == {"py_clean", "api_deep"}
    assert targets["api_deep"]["backend"] == "native" and targets["py_clean"]["schedule_digest"]


@pytest.mark.campaign
def test_promote_emits_a_test_that_fails_until_the_c_bug_is_fixed(fresh_project, tmp_path):
    root = fresh_project.root
    Corpus(root / ".assay" / "corpus", "planted", 4096).add(b"Hx")
    r = assay("fuzz", "--project", root, "--fuzz-backend", "native", "--fuzz-target", "planted", "--fuzz-replay-only")
    assert r.returncode == 1, r.stderr
    r = assay("promote", "--project", root, "--replays", "2", "--write")
    assert r.returncode == 1 and "promoted" in r.stdout, r.stdout + r.stderr
    tests = list((root / "tests" / "fuzz_regressions").glob("test_planted_native_asan_*.py"))
    assert len(tests) == 1
    text = tests[0].read_text()
    assert "DO NOT EDIT" in text and HEAP in text and "assay.replay_native(TARGET, INPUT" in text
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests[0])]
    r = subprocess.run(run, capture_output=True, text=True, cwd=root, timeout=600)
    assert r.returncode == 1 and "the promoted bug is still present" in r.stdout, r.stdout
    source = root / "planted.c"
    source.write_text(source.read_text().replace("a[PLANTED_SLOTS + (d[1] & 1)]", "a[(d[1] & 1)]"))
    r = subprocess.run(run, capture_output=True, text=True, cwd=root, timeout=600)
    assert r.returncode == 0, r.stdout  # rebuilt for the new identity, and the bug is gone
    again = assay("promote", "--project", root, "--replays", "2")
    assert "already known" in again.stdout or "known" in again.stdout


def test_missing_clang_is_exit_2_with_the_install_command(tmp_path):
    import os

    from assay.native.toolchain import INSTALL_HINT

    (tmp_path / "pyproject.toml").write_text('[tool.assay]\ntargets = []\n[tool.assay.native.x]\nharness = "h.c"\n')
    (tmp_path / "h.c").write_text("int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n")
    env = {**os.environ, "ASSAY_CLANG": "clang-that-does-not-exist"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "fuzz",
            "--project",
            str(tmp_path),
            "--fuzz-backend",
            "native",
            "--fuzz-cases",
            "10",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 2 and INSTALL_HINT in r.stderr


def test_a_project_with_only_a_native_target_fuzzes_it_without_flags(planted_root, tmp_path):
    project = tmp_path / "only_native"
    project.mkdir()
    shutil.copy(planted_root / "deep.c", project / "deep.c")
    # no [tool.assay] targets and no fuzz/ folder: only the native table
    (project / "pyproject.toml").write_text('[tool.assay.native.deep]\nharness = "deep.c"\nmax_len = 64\n')
    report = tmp_path / "r.json"
    r = assay("fuzz", "--fuzz-cases", "2000", "--fuzz-seed", "1", "--report", report, cwd=project)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "assay init" not in r.stderr and "fuzz/" not in r.stderr
    data = json.loads(report.read_text())
    assert data["targets"]["deep"]["backend"] == "native" and data["targets"]["deep"]["cases"] == 2000
    assert data["arguments"]["fuzz_backend"] == "native"
    # a name picks its kind too: the planted project's targets are native ones
    r = assay("fuzz", "--project", planted_root, "--fuzz-target", "deep", "--fuzz-cases", "100", "--fuzz-seed", "1")
    assert r.returncode == 0 and "deep: libFuzzer -seed=1" in r.stdout, r.stdout + r.stderr


def test_a_project_with_both_kinds_runs_python_by_default_and_names_the_native_ones(tmp_path):
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "fuzz_py.py").write_text(
        "import assay\n\n@assay.target(seeds=[b'a'])\ndef py_clean(data: bytes):\n    return len(data)\n"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.assay.native.deep]\nharness = "deep.c"\n')
    r = assay("fuzz", "--fuzz-cases", "5", "--fuzz-seed", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "py_clean" in r.stdout and "native target(s) deep not run; add --fuzz-backend all" in r.stderr


def test_targets_warns_about_a_native_harness_that_does_not_exist(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.assay]\ntargets = []\n[tool.assay.native.gone]\nharness = "fuzz/gone.c"\nseeds = ["seeds"]\n'
    )
    r = assay("targets", "--project", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "WARNING: harness: fuzz/gone.c does not exist" in r.stdout
    assert "WARNING: seeds: seeds does not exist" in r.stdout
    listed = json.loads(assay("targets", "--project", tmp_path, "--json").stdout)
    assert [w.split(" does not")[0] for w in listed[0]["warnings"]] == ["harness: fuzz/gone.c", "seeds: seeds"]
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "gone.c").write_text(
        "int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n"
    )
    (tmp_path / "seeds").mkdir()
    r = assay("targets", "--project", tmp_path)
    assert (
        "WARNING" not in r.stdout
        and json.loads(assay("targets", "--project", tmp_path, "--json").stdout)[0]["warnings"] == []
    )


def test_the_summary_says_the_seed_the_restarts_and_an_early_stop():
    from assay.cli.native import native_summary
    from assay.native.campaign import NativeOutcome

    outcome = NativeOutcome(name="two", seed=7, sources=[], strategy=None, initial_manifest=[])
    outcome.libfuzzer_seed, outcome.restarts, outcome.refound_restarts = 1, 8, 40
    outcome.stopped_early = "9 bugs found, and libFuzzer is restarted after at most 8 new bugs, with 241 of 300 s left"
    lines = native_summary([outcome]).splitlines()
    assert "  two: libFuzzer -seed=1; restarted 8 time(s) after a new bug (at most 8) and 40 time(s)" in lines[0]
    assert lines[1] == f"  two: STOPPED EARLY: {outcome.stopped_early}"
    outcome.stopped_early = None
    assert "STOPPED EARLY" not in native_summary([outcome])


def test_same_fuzz_seed_and_case_cap_on_the_same_corpus_repeat_a_native_run(planted_root, tmp_path):
    reports = []
    for run in ("a", "b"):
        report = tmp_path / f"{run}.json"
        r = assay(
            "fuzz",
            "--project",
            planted_root,
            "--fuzz-target",
            "deep",
            "--fuzz-cases",
            "3000",
            "--fuzz-seed",
            "7",
            "--fuzz-corpus",
            tmp_path / f"corpus-{run}",  # the same (empty) starting corpus for both runs
            "--fuzz-artifacts",
            tmp_path / f"artifacts-{run}",
            "--report",
            report,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        reports.append(json.loads(report.read_text())["targets"]["deep"])
    a, b = reports
    assert a["libfuzzer_seed"] == b["libfuzzer_seed"] == 7  # --fuzz-seed 7 is libFuzzer's -seed=7
    assert a["cases"] == b["cases"] == 3000 and a["corpus_additions"] and a["corpus_additions"] == b["corpus_additions"]
