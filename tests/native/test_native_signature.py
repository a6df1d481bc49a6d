"""Sanitizer report parsing (no clang needed): classes, interceptor frames, C++ names, timeouts."""

from __future__ import annotations

import pytest

from assay.native.signature import parse_frame, parse_report, project_predicate

ROOT = "/proj"
IN_PROJECT = project_predicate(ROOT, ["/vendor/llhttp/src/llhttp.c"])

MEMCPY = """\
INFO: Seed: 1
==42==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000031 at pc 0x1 bp 0x2 sp 0x3
WRITE of size 17 at 0x602000000031 thread T0
    #0 0x4c2a1d in __asan_memcpy (/proj/.assay/native/t/abc/fuzzer+0x4c2a1d) (BuildId: 0123abcd)
    #1 0x4f1b2e in copy_header /proj/src/headers.c:41:5
    #2 0x4f1c00 in llhttp__on_header /vendor/llhttp/src/llhttp.c:900:3
    #3 0x4f1d00 in LLVMFuzzerTestOneInput /proj/fuzz/h.c:12:9
    #4 0x4f1e00 in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long) (/proj/fuzzer+0x1) (BuildId: 1)
    #5 0x4f1f00 in main (/proj/fuzzer+0x2)

0x602000000031 is located 0 bytes to the right of 1-byte region
allocated by thread T0 here:
    #0 0x4c3000 in __interceptor_malloc (/proj/fuzzer+0x3)
    #1 0x4f1a00 in make_buffer /proj/src/headers.c:20:5
SUMMARY: AddressSanitizer: heap-buffer-overflow /proj/src/headers.c:41:5 in copy_header
"""


def test_interceptor_frames_are_skipped_and_vendored_sources_count():
    failure = parse_report(MEMCPY, IN_PROJECT)
    assert failure.signature == (
        "native-asan:heap-buffer-overflow:WRITE:17@copy_header<llhttp__on_header<LLVMFuzzerTestOneInput"
    )
    assert failure.report.startswith("==42==ERROR") and failure.report.rstrip().endswith("in copy_header")


def test_line_numbers_and_addresses_do_not_enter_the_key():
    moved = MEMCPY.replace("headers.c:41:5", "headers.c:77:1").replace("0x4f1b2e", "0x5555")
    assert parse_report(moved, IN_PROJECT).signature == parse_report(MEMCPY, IN_PROJECT).signature


def test_segv_and_cxx_frames():
    text = """\
==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000010 (pc 0x1 bp 0x2 sp 0x3 T0)
==7==The signal is caused by a READ memory access.
==7==Hint: address points to the zero page.
    #0 0x1 in ns::Parser<int>::next(char const*) const /proj/p.cc:10:3
    #1 0x2 in LLVMFuzzerTestOneInput /proj/h.cc:5:1
SUMMARY: AddressSanitizer: SEGV /proj/p.cc:10:3 in ns::Parser<int>::next(char const*) const
"""
    assert parse_report(text, IN_PROJECT).signature == (
        "native-asan:SEGV-on-unknown-address:READ@ns::Parser<int>::next<LLVMFuzzerTestOneInput"
    )


def test_double_free_class():
    text = """\
==9==ERROR: AddressSanitizer: attempting double-free on 0x602000000010 in thread T0:
    #0 0x1 in __interceptor_free (/proj/fuzzer+0x1)
    #1 0x2 in release /proj/r.c:3:1
"""
    assert parse_report(text, IN_PROJECT).signature == "native-asan:attempting-double-free@release"


def test_rss_oom_without_stack_and_clean_output():
    text = "==5== ERROR: libFuzzer: out-of-memory (used: 2100Mb; exceeds: 2048Mb)\n   To change the out-of-memory limit use -rss_limit_mb=<N>\n"
    assert parse_report(text, IN_PROJECT).signature == "native-oom:rss@?"
    assert parse_report("INFO: Seed: 1\nDone 100 runs in 0 second(s)\n", IN_PROJECT) is None


def test_frames_without_in_or_location():
    assert (
        parse_frame("    #3 0x7f1c2225a04f  (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f) (BuildId: 93ac)").function == ""
    )
    frame = parse_frame("    #0 0x55 in parse_heap /tmp/p/planted.c:6:111")
    assert (frame.function, frame.file, frame.line) == ("parse_heap", "/tmp/p/planted.c", 6)


@pytest.mark.parametrize("data", [b"Hx", b"Ux", b"Sx", b"N\x7f", b"Wx", b"Lx"])
def test_an_unsymbolized_report_symbolized_by_assay_reads_as_asans_own(planted_root, clang, tmp_path, data):
    import subprocess

    from assay.core.config import load_project
    from assay.native.build import ensure_build
    from assay.native.run import sanitizer_env
    from assay.native.signature import parse_report, project_predicate, raw_crash_key, symbolize_report

    project = load_project(planted_root)
    build = ensure_build(project.native["planted"], planted_root, tc=clang)
    in_project = project_predicate(planted_root, build.manifest["inputs"])
    (tmp_path / "in").write_bytes(data)
    logs = {}
    for symbolize in (True, False):
        env = sanitizer_env(embed_python=False, symbolizer=clang.symbolizer, symbolize=symbolize)
        run = subprocess.run(
            [str(build.binary), "-rss_limit_mb=256", str(tmp_path / "in")], capture_output=True, text=True, env=env
        )
        logs[symbolize] = run.stdout + run.stderr
    own = parse_report(logs[True], in_project)
    assert raw_crash_key(logs[True]) is None  # a symbolized stack has no offsets to key on
    raw = raw_crash_key(logs[False])
    assert raw is not None and raw.startswith(f"{own.sanitizer}:{own.kind}@") and "+0x" in raw
    assert parse_report(logs[False], in_project).key_frames == ()  # unsymbolized: no function names
    assert parse_report(symbolize_report(logs[False], clang.symbolizer), in_project).signature == own.signature
