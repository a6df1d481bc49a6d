"""Each planted bug class comes out with its exact sanitizer class, frames and artifact layout."""

from __future__ import annotations

import json

import pytest

from assay.store.artifacts import iter_artifacts, load_artifact
from assay.store.corpus import Corpus, digest

CLASSES = [
    (b"Hx", "native-asan:heap-buffer-overflow:READ:4@heap_overflow<LLVMFuzzerTestOneInput"),
    (b"Ux", "native-asan:heap-use-after-free:READ:1@use_after_free<LLVMFuzzerTestOneInput"),
    (b"Sx", "native-ubsan:signed-integer-overflow@signed_overflow<LLVMFuzzerTestOneInput"),
    (b"Nx", "native-ubsan:null-pointer-use@null_deref<LLVMFuzzerTestOneInput"),
    (b"Wx", "native-asan:SEGV-on-unknown-address:READ@wild_read<LLVMFuzzerTestOneInput"),
    (b"Tx", "native-timeout:timeout@spin<LLVMFuzzerTestOneInput"),
    (b"Mx", "native-oom:malloc@hog<LLVMFuzzerTestOneInput"),
    (b"Lx", "native-lsan:leak@leak<LLVMFuzzerTestOneInput"),
]


@pytest.mark.parametrize(
    "data,signature", CLASSES, ids=[c[1].split(":")[0] + ":" + c[1].split(":")[1].split("@")[0] for c in CLASSES]
)
def test_planted_class_signature_and_artifact(planted_project, native_run, tmp_path, data, signature):
    Corpus(tmp_path / "corpus", "planted", 4096).add(data)
    outcome = native_run(planted_project, "planted", replay_only=True)
    assert [f.signature for f in outcome.findings] == [signature]
    assert outcome.status == "findings" and outcome.corpus_additions == []  # replay-only writes no corpus

    art = load_artifact(outcome.findings[0].artifact)
    build = outcome.build["identity"]
    # <artifacts>/<target>/<build sha256>/<failure sha256>/<input sha256>/
    rel = art.path.relative_to(tmp_path / "artifacts").parts
    assert rel == ("planted", build, digest(signature.encode()), digest(art.input))
    # seen.json (last seen, runs, occurrences) is kept under a lock file, as for Python artifacts
    assert sorted(p.name for p in art.path.iterdir()) == [
        "diagnostic.log",
        "input",
        "metadata.json",
        "seen.json",
        "seen.json.lock",
    ]
    meta = art.metadata
    assert meta["backend"] == "native" and meta["signature"] == signature and meta["oracle"] == signature.split(":")[0]
    assert meta["build"]["identity"] == build and meta["build"]["manifest"]["argv"][0].endswith("clang")
    assert meta["clang"]["sha256"] and meta["clang"]["version"].startswith(("clang", "Debian clang", "Ubuntu clang"))
    assert meta["python"]["abi"] and meta["platform"]
    assert meta["determinism"]["same_signature"] is True and meta["determinism"]["replays"] == 2
    assert meta["original_size"] == len(data) and meta["minimized_size"] == len(art.input) <= len(data)
    assert (
        signature.split(":")[1].split("@")[0].split(":")[0].replace("-on-unknown-address", "")
        in meta["sanitizer_report"]
        or "timeout" in meta["sanitizer_report"]
        or "leak" in meta["sanitizer_report"]
        or "out-of-memory" in meta["sanitizer_report"]
    )
    assert (
        "ERROR" in (art.path / "diagnostic.log").read_text()
        or "runtime error" in (art.path / "diagnostic.log").read_text()
    )
    # The verdict round-trips (the promoter and assay replay read it).
    assert art.verdict.signature == signature
    assert [a.signature for a in iter_artifacts(tmp_path / "artifacts")] == [signature]
    json.dumps(meta)


def test_clean_input_is_no_finding(planted_project, native_run, tmp_path):
    Corpus(tmp_path / "corpus", "planted", 4096).add(b"Zx")
    outcome = native_run(planted_project, "planted", replay_only=True)
    assert outcome.findings == [] and outcome.status == "clean"
    assert outcome.cases >= 3  # the two seeds and the corpus entry


def test_minimized_input_kept_only_when_it_fails_the_same_way(planted_project, native_run, tmp_path):
    original = b"H" + bytes(range(1, 41))
    Corpus(tmp_path / "corpus", "planted", 4096).add(original)
    outcome = native_run(planted_project, "planted", replay_only=True)
    art = load_artifact(outcome.findings[0].artifact)
    assert art.metadata["original_size"] == 41 and art.metadata["original_sha256"] == digest(original)
    assert len(art.input) < 41 and art.input[:1] == b"H"
    assert art.metadata["determinism"]["minimized"] is True
    assert art.signature == CLASSES[0][1]


def test_replay_judges_the_original_when_minimizing_changes_the_failure(planted_project, tmp_path, clang):
    """A minimizer result that fails differently is discarded (the original is kept)."""
    from assay.native.build import ensure_build
    from assay.native.findings import Replayer, confirm
    from assay.native.run import sanitizer_env

    target = planted_project.native["planted"]
    build = ensure_build(target, planted_project.root, tc=clang)
    replayer = Replayer(
        build, target, planted_project.root, sanitizer_env(embed_python=False, symbolizer=clang.symbolizer), tmp_path
    )
    replayer.minimize = lambda data, seed: b"Sx"  # a "smaller" input with another bug
    data = b"H" + b"y" * 20
    failure, log = replayer.run(data)
    finding = confirm(replayer, failure, data, log, 1)
    assert finding.input == data and finding.determinism["minimized"] is False
    assert finding.failure.signature == CLASSES[0][1]
