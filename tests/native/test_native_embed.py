"""embed_python: harnesses that call into CPython, built against this interpreter's libpython."""

from __future__ import annotations

import sys
import sysconfig

from assay.native.build import ensure_build
from assay.native.findings import Replayer
from assay.native.run import sanitizer_env
from assay.store.artifacts import load_artifact
from assay.store.corpus import Corpus

OVERREAD = "native-asan:heap-buffer-overflow:READ:1@peek_past<LLVMFuzzerTestOneInput"


def test_embedded_python_build_identity_names_libpython(planted_project, clang):
    build = ensure_build(planted_project.native["embedded"], planted_project.root, tc=clang)
    python = build.manifest["python"]
    assert python["abi"] == sysconfig.get_config_var("SOABI") and python["libpython_sha256"]
    assert python["version"] == sys.version
    assert any(p.endswith("Python.h") for p in build.manifest["inputs"])  # the headers actually read
    assert any(a.startswith("-lpython") for a in build.manifest["argv"])


def test_overread_of_a_python_object_is_found_with_pythonmalloc_malloc(planted_project, native_run, tmp_path):
    Corpus(tmp_path / "corpus", "embedded", 4096).add(b"Bx")
    outcome = native_run(planted_project, "embedded", replay_only=True)
    assert [f.signature for f in outcome.findings] == [OVERREAD]
    assert load_artifact(outcome.findings[0].artifact).metadata["determinism"]["same_signature"]


def test_without_pythonmalloc_malloc_the_same_bug_is_invisible(planted_project, clang, tmp_path):
    target = planted_project.native["embedded"]
    build = ensure_build(target, planted_project.root, tc=clang)
    env = sanitizer_env(embed_python=True, symbolizer=clang.symbolizer)
    assert env["PYTHONMALLOC"] == "malloc"
    seen, _ = Replayer(build, target, planted_project.root, env, tmp_path).run(b"Bx")
    assert seen is not None and seen.signature == OVERREAD
    env["PYTHONMALLOC"] = "pymalloc"
    unseen, _ = Replayer(build, target, planted_project.root, env, tmp_path).run(b"Bx")
    assert unseen is None
