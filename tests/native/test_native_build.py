"""Builds: identity over compiler, argv and every file read; reuse only on a matching manifest."""

from __future__ import annotations

import json

import pytest

from assay.core.errors import BuildError, ConfigError, NativeError
from assay.native.build import ensure_build, identity_of, parse_make_deps


def test_parse_make_deps_handles_continuations_and_escaped_spaces():
    text = "planted.o: /p/planted.c /p/include/planted.h \\\n  /p/with\\ space.h\nother.o: /p/other.c\n"
    assert parse_make_deps(text) == ["/p/planted.c", "/p/include/planted.h", "/p/with space.h", "/p/other.c"]


def test_manifest_names_compiler_argv_and_headers_read(fresh_project, clang):
    build = ensure_build(fresh_project.native["planted"], fresh_project.root, tc=clang)
    m = build.manifest
    assert build.identity == identity_of(m) and build.folder.name == build.identity
    assert build.binary.is_file() and not build.reused
    header = str((fresh_project.root / "include" / "planted.h").resolve())
    assert set(m["inputs"]) == {str((fresh_project.root / "planted.c").resolve()), header}
    assert "-fsanitize=fuzzer,address,undefined" in m["argv"] and "-fno-sanitize-recover=undefined" in m["argv"]
    assert {"-g", "-O1", "<out>"} <= set(m["argv"])
    assert m["compiler"]["sha256"] == clang.sha256 and m["compiler"]["version"] == clang.version
    assert any("fuzzer" in r for r in m["compiler"]["runtimes"]) and any("asan" in r for r in m["compiler"]["runtimes"])
    stored = json.loads((build.folder / "manifest.json").read_text())
    assert stored["identity"] == build.identity and stored["manifest"] == m and stored["binary_sha256"]


def test_unchanged_sources_reuse_the_binary(fresh_project, clang):
    target = fresh_project.native["planted"]
    first = ensure_build(target, fresh_project.root, tc=clang)
    again = ensure_build(target, fresh_project.root, tc=clang)
    assert again.reused and again.identity == first.identity and again.binary == first.binary


def test_changing_a_header_changes_the_identity_and_rebuilds(fresh_project, clang):
    target = fresh_project.native["planted"]
    first = ensure_build(target, fresh_project.root, tc=clang)
    header = fresh_project.root / "include" / "planted.h"
    header.write_text(header.read_text().replace("PLANTED_SLOTS 4", "PLANTED_SLOTS 8"))
    second = ensure_build(target, fresh_project.root, tc=clang)
    assert second.identity != first.identity and not second.reused
    assert second.folder != first.folder and second.binary.is_file()
    changed = [p for p in second.manifest["inputs"] if second.manifest["inputs"][p] != first.manifest["inputs"][p]]
    assert changed == [str(header.resolve())]


def test_a_newly_included_header_enters_the_identity(fresh_project, clang):
    target = fresh_project.native["planted"]
    first = ensure_build(target, fresh_project.root, tc=clang)
    (fresh_project.root / "include" / "extra.h").write_text("#define EXTRA 1\n")
    header = fresh_project.root / "include" / "planted.h"
    header.write_text(header.read_text() + '#include "extra.h"\n')
    second = ensure_build(target, fresh_project.root, tc=clang)
    assert second.identity != first.identity
    assert str((fresh_project.root / "include" / "extra.h").resolve()) in second.manifest["inputs"]


def test_a_tampered_binary_is_rebuilt_not_run(fresh_project, clang):
    target = fresh_project.native["planted"]
    first = ensure_build(target, fresh_project.root, tc=clang)
    first.binary.write_bytes(b"#!/bin/sh\nexit 0\n")
    second = ensure_build(target, fresh_project.root, tc=clang)
    assert not second.reused and second.identity == first.identity
    assert second.binary.read_bytes()[:4] == b"\x7fELF"


def test_defines_and_cflags_are_part_of_the_identity(fresh_project, clang):
    from dataclasses import replace

    target = fresh_project.native["planted"]
    a = ensure_build(target, fresh_project.root, tc=clang)
    b = ensure_build(replace(target, defines=("EXTRA=1",)), fresh_project.root, tc=clang)
    assert a.identity != b.identity and "-DEXTRA=1" in b.manifest["argv"]


def test_compile_error_is_a_build_error_exit_2(fresh_project, clang):
    (fresh_project.root / "planted.c").write_text(
        "int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return nope; }\n"
    )
    with pytest.raises(BuildError, match="failed to build") as info:
        ensure_build(fresh_project.native["planted"], fresh_project.root, tc=clang)
    assert isinstance(info.value, ConfigError)
    assert not list((fresh_project.root / ".assay" / "native" / "planted").glob(".tmp-*"))


def test_build_past_its_time_limit_is_killed(fresh_project, clang):
    with pytest.raises(BuildError, match="limit"):
        ensure_build(fresh_project.native["planted"], fresh_project.root, tc=clang, timeout=0.001)


def test_missing_clang_is_exit_2_with_the_install_command(monkeypatch):
    from assay.native.toolchain import INSTALL_HINT, find_toolchain

    monkeypatch.setenv("ASSAY_CLANG", "clang-that-does-not-exist")
    with pytest.raises(NativeError) as info:
        find_toolchain()
    assert INSTALL_HINT in str(info.value) and isinstance(info.value, ConfigError)


def test_missing_harness_is_named(tmp_path):
    from assay.core.config import load_project

    (tmp_path / "pyproject.toml").write_text('[tool.assay.native.x]\nharness = "nope.c"\n')
    target = load_project(tmp_path).native["x"]
    with pytest.raises(NativeError, match="nope.c"):
        target.check_paths(tmp_path)


def test_unknown_native_keys_are_refused(tmp_path):
    from assay.core.config import load_project

    (tmp_path / "pyproject.toml").write_text('[tool.assay.native.x]\nharness = "h.c"\ncflag = ["-O2"]\n')
    with pytest.raises(ConfigError, match="unknown key.*cflag"):
        load_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.assay.native.x]\nsources = ["a.c"]\n')
    with pytest.raises(ConfigError, match="lacks harness"):
        load_project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.assay.native.x]\nharness = "h.c"\ntimeout = 0.5\n')
    with pytest.raises(ConfigError, match="timeout"):
        load_project(tmp_path)


WIDTH_HARNESS = (
    "#include <stdint.h>\n#include <stddef.h>\n"
    '#if !defined(WIDTH) || WIDTH != 8\n#error "WIDTH must be 8"\n#endif\n'
    "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n"
)


def _project(tmp_path, table: str):
    from assay.core.config import load_project

    (tmp_path / "h.c").write_text(WIDTH_HARNESS)
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.assay]\ntargets = []\n[tool.assay.native.x]\nharness = "h.c"\n{table}'
    )
    return load_project(tmp_path)


def test_defines_take_the_compilers_spelling_too(tmp_path, clang):
    a = _project(tmp_path, 'defines = ["-DWIDTH=8"]\n')
    built = ensure_build(a.native["x"], a.root, tc=clang)  # "-D-DWIDTH=8" would fail the header scan
    assert "-DWIDTH=8" in built.manifest["argv"] and not any(f.startswith("-D-D") for f in built.manifest["argv"])
    b = _project(tmp_path, 'defines = ["WIDTH=8"]\n')
    assert b.native["x"] == a.native["x"] and ensure_build(b.native["x"], b.root, tc=clang).reused
    with pytest.raises(ConfigError, match="defines entry '-D' is not a macro definition"):
        _project(tmp_path, 'defines = ["-D"]\n')


def test_a_broken_cflags_entry_is_named_with_its_key(tmp_path, clang):
    project = _project(tmp_path, 'defines = ["WIDTH=8"]\ncflags = ["-O1", "-fno-such-flag"]\n')
    with pytest.raises(BuildError) as info:
        ensure_build(project.native["x"], project.root, tc=clang)
    first = str(info.value).splitlines()[0]
    assert "cflags entry '-fno-such-flag' is refused by clang" in first and "-fno-such-flag" in first
    assert "[tool.assay.native.x] of " in first and first.endswith("pyproject.toml")


def test_a_compile_error_of_the_code_blames_no_flag(tmp_path, clang):
    project = _project(tmp_path, 'cflags = ["-O1"]\n')  # WIDTH undefined: the harness's own #error
    with pytest.raises(BuildError) as info:
        ensure_build(project.native["x"], project.root, tc=clang)
    assert "refused by clang" not in str(info.value) and "WIDTH must be 8" in str(info.value)
