"""Existing harnesses run unchanged: atheris files, libFuzzer flags, Hypothesis tests by path."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from assay.core.errors import ConfigError
from assay.harness.fdp import FuzzedDataProvider
from assay.harness.libfuzzer_flags import read_dictionary, translate

HARNESSES = Path(__file__).resolve().parent / "harnesses"
#: jsonschema ships the harness OSS-Fuzz runs (a Hypothesis @given test plus atheris.Setup
#: under __main__) inside its wheel: a real project's harness, used in place, unchanged.
JSONSCHEMA_HARNESS = Path(importlib.util.find_spec("jsonschema").origin).parent / "tests" / "fuzz_validate.py"


def assay(*args, cwd, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


# -- FuzzedDataProvider ------------------------------------------------------------------------------
_OPS = [
    ("ConsumeBytes", lambda r: (r.randrange(0, 20),)),
    ("ConsumeUnicode", lambda r: (r.randrange(0, 12),)),
    ("ConsumeUnicodeNoSurrogates", lambda r: (r.randrange(0, 12),)),
    ("ConsumeString", lambda r: (r.randrange(0, 9),)),
    ("ConsumeInt", lambda r: (r.randrange(0, 12),)),
    ("ConsumeUInt", lambda r: (r.randrange(0, 12),)),
    ("ConsumeIntInRange", lambda r: (-7, -7 + r.choice([0, 1, 255, 256, 65535, 2**40, 2**64 - 1, 2**64, 2**70]))),
    ("ConsumeIntList", lambda r: (r.randrange(0, 4), r.randrange(0, 5))),
    ("ConsumeIntListInRange", lambda r: (r.randrange(0, 4), -5, 300)),
    ("ConsumeFloat", lambda r: ()),
    ("ConsumeRegularFloat", lambda r: ()),
    ("ConsumeProbability", lambda r: ()),
    ("ConsumeFloatInRange", lambda r: (-3.5, 1e10)),
    ("ConsumeFloatList", lambda r: (3,)),
    ("ConsumeBool", lambda r: ()),
    ("PickValueInList", lambda r: (list(range(r.choice([1, 2, 255, 256, 300, 70000]))),)),
    ("remaining_bytes", lambda r: ()),
    ("buffer", lambda r: ()),
]


def _same(a, b) -> bool:
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def test_fuzzed_data_provider_matches_real_atheris_value_for_value():
    atheris = pytest.importorskip("atheris", reason="the real atheris (dev extra) is the reference")
    rng = random.Random(15)
    for case in range(4000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60)))
        real, ours = atheris.FuzzedDataProvider(data), FuzzedDataProvider(data)
        for _ in range(rng.randrange(1, 8)):
            name, make_args = rng.choice(_OPS)
            args = make_args(rng)
            expected, got = getattr(real, name)(*args), getattr(ours, name)(*args)
            assert _same(expected, got), (case, data, name, args, expected, got)


def test_fuzzed_data_provider_without_atheris():
    fdp = FuzzedDataProvider(b"\x01abc\xff" + b"\x07")
    assert fdp.ConsumeIntInRange(0, 10) == 7  # from the end, modulo the range
    assert fdp.ConsumeUnicode(3) == "abc"  # first byte odd: ASCII
    assert fdp.remaining_bytes() == 1 and fdp.ConsumeBool() is True and fdp.ConsumeBytes(5) == b""
    assert FuzzedDataProvider(b"\x02\x41\x00\x42").ConsumeUnicode(5) == "A"  # UTF-16, odd tail byte dropped
    assert FuzzedDataProvider(b"ab\\\\c\\d").ConsumeRandomLengthBytes() == b"ab\\c"


# -- the atheris stand-in --------------------------------------------------------------------------
def test_atheris_harness_unchanged_without_atheris(tmp_path):
    """Module-level Setup/Fuzz/instrument_imports; the real atheris is never imported."""
    from assay.harness.discovery import import_file, targets_in

    sentinel = type(sys)("atheris")  # whatever "atheris" the process had stays in place
    saved = sys.modules.get("atheris")
    sys.modules["atheris"] = sentinel
    try:
        module = import_file(HARNESSES / "atheris_h11.py")
    finally:
        assert sys.modules["atheris"] is sentinel
        if saved is None:
            del sys.modules["atheris"]
        else:
            sys.modules["atheris"] = saved
    assert not hasattr(module, "AFTER_FUZZ")  # atheris.Fuzz() does not return
    [target] = targets_in(module)
    assert target.name == "atheris_h11:TestOneInput" and target.implied_sources == ("h11",)
    target(b"\x01GET / HTTP/1.1\r\nHost: a\r\n\r\n")


def test_two_test_one_inputs_never_clash_and_listing_says_from_imports(tmp_path):
    r = assay(
        "targets", "--json", str(HARNESSES / "atheris_h11.py"), str(HARNESSES / "atheris_markup.py"), cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    listed = {t["name"]: t for t in json.loads(r.stdout)}
    assert set(listed) == {"atheris_h11:TestOneInput", "atheris_markup:TestOneInput"}
    assert listed["atheris_h11:TestOneInput"]["sources"] == ["h11"]
    assert listed["atheris_h11:TestOneInput"]["sources_from"] == "imports"
    text = assay("targets", str(HARNESSES / "atheris_markup.py"), cwd=tmp_path).stdout
    assert "markupsafe  (imported by the target)" in text


def test_libfuzzer_flags_and_corpus_folders(tmp_path):
    corpus, extra = tmp_path / "corpus", tmp_path / "seeds"
    corpus.mkdir()
    extra.mkdir()
    (extra / "seed1").write_bytes(b"\x00GET / HTTP/1.1\r\nHost: example.com\r\n\r\n" * 4)
    dictionary = tmp_path / "http.dict"
    dictionary.write_text('# tokens\nverb="POST"\n"Transfer-Encoding: chunked\\x0d\\x0a"\n')
    r = assay(
        "fuzz",
        str(HARNESSES / "atheris_h11.py"),
        "-runs=300",
        "-seed=5",
        "-max_len=64",
        "-timeout=5",
        f"-dict={dictionary}",
        "-rss_limit_mb=1024",
        "-use_value_profile=1",
        str(corpus),
        str(extra),
        "--report",
        str(tmp_path / "r.json"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "-use_value_profile=1 ignored" in r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["master_seed"] == 5 and report["arguments"]["max_len"] == 64
    outcome = report["targets"]["atheris_h11:TestOneInput"]
    assert outcome["cases"] >= 300 and outcome["coverage"]["edges"] >= 20
    written = sorted(corpus.iterdir())
    assert written and "new entries written to" in r.stdout
    for entry in written:  # libFuzzer's naming, and -max_len held (the 160-byte seed was cut to 64)
        data = entry.read_bytes()
        assert entry.name == hashlib.sha1(data).hexdigest() and len(data) <= 64


def test_unknown_and_unmapped_flags_exit_2(tmp_path):
    r = assay("fuzz", str(HARNESSES / "atheris_h11.py"), "-artifact_prefix=crashes/", cwd=tmp_path)
    assert r.returncode == 2 and "--fuzz-artifacts" in r.stderr and "Traceback" not in r.stderr
    r = assay("fuzz", str(HARNESSES / "atheris_h11.py"), "-no_such_flag=1", cwd=tmp_path)
    assert r.returncode == 2 and "unknown libFuzzer flag -no_such_flag" in r.stderr and "-runs" in r.stderr


def test_translate_moves_positionals_after_options():
    takes_value = {"--fuzz-cases", "--fuzz-corpus"}.__contains__
    notes = []
    out = translate(
        ["h.py", "--fuzz-corpus", "c", "-runs=0", "corpus/", "-seed=0", "-print_final_stats=1"],
        takes_value,
        notes.append,
    )
    assert out == ["--fuzz-corpus", "c", "--fuzz-replay-only", "h.py", "corpus/"]
    assert notes and "print_final_stats" in notes[0]
    assert translate(["-runs=-1", "-max_total_time=30"], takes_value, notes.append) == ["--fuzz-budget", "30"]
    with pytest.raises(ConfigError, match="not a whole number"):
        translate(["-runs=lots"], takes_value, notes.append)
    with pytest.raises(ConfigError, match="merge-corpus"):
        translate(["-merge=1"], takes_value, notes.append)


def test_dictionary_file_format(tmp_path):
    path = tmp_path / "x.dict"
    path.write_text('a="\\x41\\\\\\"b"\n\n# c\n"plain"\n')
    assert read_dictionary(str(path)) == [b'A\\"b', b"plain"]
    path.write_text("no quotes here\n")
    with pytest.raises(ConfigError, match="x.dict:1"):
        read_dictionary(str(path))


# -- Hypothesis tests and a real project's harness ---------------------------------------------------
def test_real_oss_fuzz_harness_runs_unchanged(tmp_path):
    """jsonschema's own OSS-Fuzz harness, straight from site-packages: its @given test is the target."""
    before = JSONSCHEMA_HARNESS.read_bytes()
    r = assay("fuzz", str(JSONSCHEMA_HARNESS), "-runs=150", "-seed=2", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr + r.stdout
    assert "fuzz_validate:test_schemas: " in r.stdout
    edges = int(r.stdout.split(" edges")[0].rsplit(" ", 1)[1])
    assert edges >= 20  # jsonschema's code is watched, not just the harness file
    assert JSONSCHEMA_HARNESS.read_bytes() == before and (tmp_path / ".assay" / "corpus").is_dir()


def test_hypothesis_test_by_path_and_name(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tests / "test_roundtrip.py").write_text(
        "from hypothesis import given, strategies as st\n"
        "import urllib.parse\n\n"
        "@given(st.text())\n"
        "def test_quote_roundtrip(s):\n"
        "    assert urllib.parse.unquote(urllib.parse.quote(s)) == s\n\n"
        "@given(st.integers())\n"
        "def test_other(n):\n"
        "    assert n == n\n"
    )
    r = assay(
        "fuzz", "tests/test_roundtrip.py::test_quote_roundtrip", "--fuzz-cases", "100", "--fuzz-seed", "1", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "test_roundtrip:test_quote_roundtrip: 100 cases" in r.stdout and "test_other" not in r.stdout
    r = assay("targets", "tests/test_roundtrip.py", cwd=tmp_path)
    assert (
        r.returncode == 0
        and "test_roundtrip:test_other" in r.stdout
        and "test_roundtrip:test_quote_roundtrip" in r.stdout
    )
    r = assay("fuzz", "tests/test_roundtrip.py::nope", cwd=tmp_path)
    assert r.returncode == 2 and "has no function 'nope'" in r.stderr and "test_other" in r.stderr


def test_unbound_wrapper_is_not_silently_ignored(tmp_path):
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "made.py").write_text(
        "import assay\n\n"
        "def make(name):\n"
        "    def check(data: bytes):\n"
        "        data.decode('ascii')\n"
        "    assay.target(name=name, expected=(UnicodeDecodeError,))(check)\n\n"
        "make('made_ascii')\n"
    )
    r = assay("targets", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "made_ascii"
