"""`assay init`, round two (issue 42): a target for every public input function, typed arguments,
the project's own contract, round trips and twins, each target tried once.

Small real projects are built in ``tmp_path``: a src layout that re-exports from
submodules under ``__all__``, a flat package, a single module, and a third-party
library installed in a ``site-packages`` folder of its own.  Each mechanism has a
check that fails with it switched off.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from assay.core.target import REGISTRY
from assay.core.verdict import classify
from assay.harness.discovery import import_file, targets_in
from assay.scaffold import (
    api as api_module,
    arguments as arguments_module,
    project as project_module,
    selection as selection_module,
)
from assay.scaffold.contract import docstring_raises
from assay.scaffold.project import plan_example
from assay.scaffold.trial import trial


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SRC_LAYOUT = {
    "pyproject.toml": '[project]\nname = "docsrc"\nversion = "0.1"\n',
    "src/docsrc/__init__.py": (
        '"""Documents."""\n'
        "from ._core import load_doc, parse_blob, DocError\n"
        "from .store import save_report, emit\n"
        "from . import formats\n\n"
        '__all__ = ["load_doc", "parse_blob", "save_report", "emit", "DocError", "VERSION"]\n'
        'VERSION = "1"\n'
    ),
    "src/docsrc/_core.py": (
        "SEEN = []\n\n\n"
        "class DocError(Exception):\n"
        '    """A malformed document (a plain Exception subclass)."""\n\n\n'
        "def _check(text):\n"
        "    if not text.startswith('D'):\n"
        "        raise DocError('no D')\n\n\n"
        "def load_doc(text: str, *, strict: bool = True) -> dict:\n"
        '    """Load a document.\n\n    Raises:\n        DocError: when it is malformed.\n    """\n'
        "    SEEN.append(('load_doc', type(text)))\n"
        "    _check(text)\n"
        "    return {'body': text[1:]}\n\n\n"
        "def parse_blob(blob: bytes, limit: int) -> int:\n"
        "    SEEN.append(('parse_blob', type(blob), type(limit)))\n"
        "    if not isinstance(blob, bytes):\n"
        "        raise TypeError('bytes only')\n"
        "    return len(blob[:limit])\n\n\n"
        "def helper_not_exported(text: str) -> str:\n"
        "    return text\n"
    ),
    "src/docsrc/store.py": (
        "import shutil\n\n\n"
        "def save_report(path, text):\n    return path\n\n\n"
        "def emit(where, text):\n    _put(where, text)\n\n\n"
        "def _put(where, text):\n    with open(where, 'w') as f:\n        f.write(text)\n"
    ),
    "src/docsrc/formats.py": (
        '"""A public submodule."""\n'
        "import io\n"
        "from dataclasses import dataclass\n"
        "from pathlib import Path\n"
        "from typing import IO, Optional\n\n"
        "from docsrc._core import SEEN\n\n\n"
        "@dataclass\n"
        "class Box:\n"
        "    name: str\n"
        "    size: int\n\n\n"
        "def read_path(where: Path) -> bytes:\n"
        "    SEEN.append(('read_path', type(where)))\n"
        "    return where.read_bytes()\n\n\n"
        "def read_stream(stream: IO[bytes]) -> bytes:\n"
        "    SEEN.append(('read_stream', type(stream)))\n"
        "    return stream.read()\n\n\n"
        "def from_mapping(doc: dict, box: Box, note: Optional[str] = None) -> str:\n"
        "    SEEN.append(('from_mapping', type(doc), type(box)))\n"
        "    return str(doc)\n\n\n"
        "def guess(data, fp):\n"
        "    SEEN.append(('guess', type(data), type(fp)))\n"
        "    return data\n\n\n"
        "def tally(n: int, flag: bool) -> int:\n"
        "    return n\n"
    ),
}


def _target_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, object]:
    """Plan and write the target file in-process, import it; (targets, the project's SEEN list)."""
    example = plan_example(root)
    example.path.parent.mkdir(exist_ok=True)
    example.path.write_text(example.text)
    monkeypatch.syspath_prepend(str(root / "src"))
    module = import_file(example.path, root)
    core = sys.modules[f"{example.package}._core"]
    return targets_in(module), core.SEEN


@pytest.fixture
def fresh_modules(monkeypatch):
    """Each test imports its own copy of the project's package and target file, and registers its own targets."""
    before = set(sys.modules)
    registered = REGISTRY.all()
    REGISTRY.clear()
    yield
    for name in set(sys.modules) - before:
        sys.modules.pop(name, None)
    REGISTRY.clear()
    for target in registered:
        REGISTRY.add(target)


def test_every_public_input_function_gets_a_target_and_a_reason(tmp_path):
    """Item 1: re-exports under __all__ and public submodules are found; side effects and non-input skipped."""
    root = write(tmp_path, SRC_LAYOUT)
    r = assay("init", cwd=root)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for name in ("docsrc.load_doc", "docsrc.parse_blob", "docsrc.formats.read_path", "docsrc.formats.read_stream"):
        assert f"picked  {name}:" in out, out
    assert "docsrc.formats.from_mapping" in out and "docsrc.formats.guess" in out
    assert "skipped docsrc.save_report: side effects outside the sandbox: its name says it saves" in out
    assert "skipped docsrc.emit: side effects outside the sandbox: docsrc.store._put opens a file for writing" in out
    assert "skipped docsrc.formats.tally: takes no untrusted input" in out
    assert "helper_not_exported" not in out and "_check" not in out and "docsrc._core" not in out
    written = (root / "fuzz" / "fuzz_docsrc.py").read_text()
    assert "def docsrc_load_doc(" in written and "def docsrc_formats_read_stream(" in written
    # Each target was called once, and all of them run; the suggested command budgets time per target.
    assert out.count("  ran ") == 6 and "CANNOT RUN" not in out, out
    assert "next: assay fuzz --fuzz-budget 360" in out


def test_re_exported_functions_are_followed_to_their_definition(tmp_path, monkeypatch):
    """Item 1, switched off: without following `from .core import ...` the re-exported functions are lost."""
    root = write(tmp_path, SRC_LAYOUT)
    found = {d.split(":")[0] for d in plan_example(root).decisions}
    assert "picked  docsrc.load_doc" in found and "picked  docsrc.parse_blob" in found
    monkeypatch.setattr(api_module.Project, "_from_import", lambda self, *a: None)
    lost = {d.split(":")[0] for d in plan_example(root).decisions}
    assert "picked  docsrc.load_doc" not in lost and "picked  docsrc.parse_blob" not in lost


def test_flat_package_and_single_module_layouts(tmp_path):
    """Item 1: a flat package without __all__ and a single module are read the same way."""
    flat = write(
        tmp_path / "flat",
        {
            "pyproject.toml": '[project]\nname = "flatkv"\nversion = "0.1"\n',
            "flatkv/__init__.py": "from flatkv.reader import loads\n",
            "flatkv/reader.py": "def loads(text: str) -> dict:\n    return dict(l.split('=', 1) for l in text.splitlines())\n",
        },
    )
    single = write(
        tmp_path / "single",
        {
            "pyproject.toml": '[project]\nname = "onemod"\nversion = "0.1"\n',
            "onemod.py": "def decode(raw: bytes) -> str:\n    return raw.decode('ascii')\n\n\ndef _hidden(x):\n    return x\n",
        },
    )
    assert [d.split(":")[0] for d in plan_example(flat).decisions] == ["picked  flatkv.loads"]
    assert [d.split(":")[0] for d in plan_example(single).decisions] == ["picked  onemod.decode"]
    assert "onemod.decode(args.bytes(rest=True))" in plan_example(single).text


def test_arguments_follow_the_annotations(tmp_path, monkeypatch, fresh_modules):
    """Item 2: bytes get bytes, str text, Path a file, IO[bytes] a stream, dict/dataclass structured values."""
    root = write(tmp_path, SRC_LAYOUT)
    targets, seen = _target_file(root, monkeypatch)
    by_name = {t.name: t for t in targets}
    for name in ("docsrc_load_doc", "docsrc_parse_blob", "docsrc_formats_read_path", "docsrc_formats_read_stream"):
        try:
            by_name[name](b"D\x00\x01\x02\x03\x04 some input bytes")
        except Exception as exc:  # noqa: BLE001 - a rejection is fine here; the types are what is checked
            assert classify(exc, by_name[name].expected, by_name[name].expected_from) is None, exc
    by_name["docsrc_formats_from_mapping"](bytes(range(64)))
    by_name["docsrc_formats_guess"](b"abc")
    kinds = {entry[0]: entry[1:] for entry in seen}
    assert kinds["load_doc"] == (str,)
    assert kinds["parse_blob"] == (bytes, int)
    assert issubclass(kinds["read_path"][0], Path) and kinds["read_stream"] == (io.BytesIO,)
    doc_type, box_type = kinds["from_mapping"]
    assert doc_type is dict and box_type.__name__ == "Box"
    assert kinds["guess"] == (bytes, io.StringIO)  # unannotated: guessed from the names data and fp
    text = (root / "fuzz" / "fuzz_docsrc.py").read_text()
    assert "# data: no annotation; bytes guessed from its name (data)" in text
    assert "# fp: no annotation; a text stream guessed from its name (fp)" in text
    assert "note=" not in text  # a parameter with a default keeps it


def test_without_annotations_a_bytes_parameter_gets_text(tmp_path, monkeypatch):
    """Item 2, switched off: reading no annotation, `blob: bytes` is called with text (the bug of issue 42)."""
    root = write(tmp_path, SRC_LAYOUT)
    assert "    blob = args.bytes(rest=True)  # blob: bytes\n" in plan_example(root).text
    monkeypatch.setattr(arguments_module, "_from_annotation", lambda *a: ("text", "args.text({rest})"))
    assert "args.bytes(" not in plan_example(root).text.split("def docsrc_parse_blob")[1].split("@assay")[0]


LIBRARY = {  # a third-party library, installed in a site-packages folder of its own
    "site-packages/leaky/__init__.py": (
        "class LeakyError(Exception):\n    pass\n\n\n"
        "def decode(text):\n"
        "    if text.startswith('!'):\n"
        "        raise LeakyError('bang')\n"
        "    if text.startswith('?'):\n"
        "        return int(text[1:] or 'x')  # the library's bug: a raw ValueError\n"
        "    return text\n"
    )
}
WRAPPER = {
    "proj/pyproject.toml": '[project]\nname = "wrapkit"\nversion = "0.1"\n',
    "proj/wrapkit/__init__.py": (
        "import ipaddress\n\n"
        "import leaky\n\n\n"
        "class WrapError(Exception):\n    pass\n\n\n"
        "def read(text: str) -> str:\n"
        '    """Read a record; a ValueError for an empty one, WrapError for what leaky refuses."""\n'
        "    if not text:\n"
        "        raise ValueError('empty')\n"
        "    try:\n"
        "        return leaky.decode(text)\n"
        "    except leaky.LeakyError as exc:\n"
        "        raise WrapError(str(exc)) from exc\n\n\n"
        "def address(text: str):\n"
        '    """The address in text; ValueError for a malformed one."""\n'
        "    try:\n"
        "        return ipaddress.ip_address(text)\n"
        "    except TypeError as exc:\n"
        "        raise WrapError(str(exc)) from exc\n\n\n"
        "def strict(text: str) -> str:\n"
        "    try:\n"
        "        return leaky.decode(text)\n"
        "    except leaky.LeakyError:\n"
        "        raise\n"
    ),
}


def _wrapper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write(tmp_path, {**LIBRARY, **WRAPPER})
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    monkeypatch.syspath_prepend(str(tmp_path / "proj"))
    example = plan_example(tmp_path / "proj")
    example.path.parent.mkdir(exist_ok=True)
    example.path.write_text(example.text)
    return {t.name: t for t in targets_in(import_file(example.path, tmp_path / "proj"))}, example.text


def _verdict(target, data: bytes):
    try:
        target(data)
    except Exception as exc:  # noqa: BLE001
        return classify(exc, target.expected, target.expected_from)
    return None


def test_the_contract_comes_from_the_project_with_one_comment_each(tmp_path, monkeypatch, fresh_modules):
    """Item 3: raised, documented and re-raised classes, each with where it came from."""
    targets, text = _wrapper(tmp_path, monkeypatch)
    assert "ValueError,  # named in wrapkit.read's docstring" in text
    assert "wrapkit.WrapError,  # raised in wrapkit.read" in text
    assert "leaky.LeakyError,  # caught and re-raised in wrapkit.strict" in text
    # read and address convert errors; strict passes leaky's on, so they are promised as they are.
    assert text.count('    expected_from="project",  # it converts library errors (wrapkit.read line ') == 1
    assert text.count('    expected_from="project",  # it converts library errors (wrapkit.address line ') == 1
    assert text.count("expected_from=") == 3  # the two above and the file's docstring
    read = targets["wrapkit_read"]
    assert _verdict(read, b"") is None  # the project's own ValueError: documented
    assert _verdict(read, b"!x") is None  # leaky's error converted into WrapError
    assert _verdict(targets["wrapkit_strict"], b"!x") is None  # re-raised as it is
    # A plain Exception subclass is the project working as documented; without the contract it is a panic.
    assert classify(_raise(read, b"!x"), (), ()) is not None


def _raise(target, data: bytes) -> BaseException:
    try:
        target(data)
    except Exception as exc:  # noqa: BLE001
        return exc
    raise AssertionError("no exception")


def test_a_builtin_error_leaking_from_the_library_is_a_finding_naming_both_frames(tmp_path, monkeypatch, fresh_modules):
    """Item 3: expected_from='project' makes leaky's raw ValueError a panic; switched off it hides the bug."""
    targets, _ = _wrapper(tmp_path, monkeypatch)
    read = targets["wrapkit_read"]
    verdict = _verdict(read, b"?1x")
    assert verdict is not None and verdict.oracle == "panic" and "builtins.ValueError" in verdict.key
    assert "raised in leaky:decode" in verdict.detail and "not converted by wrapkit:read" in verdict.detail
    assert classify(_raise(read, b"?1x"), read.expected, ()) is None  # the blanket ValueError hides it
    # A ValueError from the standard library's Python code, called by the project, is the project's.
    assert _verdict(targets["wrapkit_address"], b"not an address") is None


def test_expected_from_takes_project_or_module_names(tmp_path):
    from assay.core.errors import TargetError
    from assay.harness.define import make_target

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "fuzz").mkdir()
    here = tmp_path / "fuzz" / "t.py"
    here.write_text("def t(data):\n    pass\n")
    namespace: dict = {}
    exec(compile(here.read_text(), str(here), "exec"), namespace)
    made = make_target(namespace["t"], expected=(ValueError,), expected_from="project")
    assert made.expected_from == (str(tmp_path.resolve()),)
    assert make_target(namespace["t"], expected_from=("mypkg", "other.sub")).expected_from == ("mypkg", "other.sub")
    with pytest.raises(TargetError, match="expected_from"):
        make_target(namespace["t"], expected_from=("not a module",))


def test_arguments_never_reject_and_rest_takes_what_is_left():
    from assay import Arguments

    assert Arguments(b"abc").text(rest=True) == "abc" and Arguments(b"\xff").bytes(rest=True) == b"\xff"
    for data in (b"", b"\x00", bytes(range(256))):
        args = Arguments(data)
        values = [args.integer(), args.number(), args.flag(), args.value(), args.mapping(), args.listing()]
        assert isinstance(values[0], int) and isinstance(values[4], dict) and isinstance(values[5], list)
        assert isinstance(args.text(), str) and isinstance(args.bytes(rest=True), bytes)


def test_docstring_raises_in_three_styles():
    google = "Parse.\n\nRaises:\n    DocError: when bad.\n    KeyError: missing.\n"
    numpy = "Parse.\n\nRaises\n------\nDocError\n    When bad.\n"
    sphinx = "Parse.\n\n:param text: the text\n:raises DocError: when bad\n"
    assert docstring_raises(google) == ["DocError", "KeyError"]
    assert docstring_raises(numpy) == ["DocError"]
    assert docstring_raises(sphinx) == ["DocError"]
    assert docstring_raises("Parse; a TypeError for non-text.") == ["TypeError"]


PAIRS = {
    "pyproject.toml": '[project]\nname = "kvpair"\nversion = "0.1"\n',
    "kvpair.py": (
        "def loads(text: str) -> dict:\n"
        '    """key=value lines; ValueError for a line without =."""\n'
        "    out = {}\n"
        "    for line in text.splitlines():\n"
        "        if '=' not in line:\n"
        "            raise ValueError(line)\n"
        "        key, value = line.split('=', 1)\n"
        "        out[key] = value\n"
        "    return out\n\n\n"
        "def dumps(obj: dict) -> str:\n"
        "    return ''.join(f'{k}={v.strip()}\\n' for k, v in obj.items())  # the bug: strips the values\n\n\n"
        "def parse(text: str) -> list:\n"
        "    return text.split(',')\n\n\n"
        "def parse_strict(text: str) -> list:\n"
        "    parts = text.strip().split(',')  # the bug: strips, parse does not\n"
        "    if '' in parts:\n"
        "        raise ValueError('empty part')\n"
        "    return parts\n\n\n"
        "def parse_bytes(data: bytes) -> list:\n"
        "    return data.decode('utf-8').strip().split(',')  # the bug: strips, parse does not\n"
    ),
}


def test_round_trip_and_twin_targets_find_what_single_targets_cannot(tmp_path, monkeypatch, fresh_modules):
    """Item 4: loads/dumps get a round trip, parse/parse_bytes a differential; off, the bugs pass."""
    root = write(tmp_path, PAIRS)
    monkeypatch.syspath_prepend(str(root))
    example = plan_example(root)
    assert "paired  kvpair.loads ~ kvpair.dumps: a round-trip target" in example.decisions
    assert "paired  kvpair.parse ~ kvpair.parse_bytes: a differential target (bytes-text)" in example.decisions
    example.path.parent.mkdir(exist_ok=True)
    example.path.write_text(example.text)
    targets = {t.name: t for t in targets_in(import_file(example.path, root))}
    trip = _verdict(targets["kvpair_loads_round_trip"], b"a= b\n")
    assert trip is not None and trip.oracle == "invariant", trip
    twin = _verdict(targets["kvpair_parse_vs_parse_bytes"], b" a,b")
    assert twin is not None and twin.oracle == "differential", twin
    assert "paired  kvpair.parse_strict ~ kvpair.parse: a differential target (strict-lax)" in example.decisions
    strict = targets["kvpair_parse_strict_vs_parse"]
    assert _verdict(strict, b"a,,b") is None  # strict refuses what lax accepts: allowed
    twin = _verdict(strict, b"a, b ")
    assert twin is not None and twin.oracle == "differential", twin
    # The single-function targets accept both inputs: only the pairs see the bugs.
    assert _verdict(targets["kvpair_loads"], b"a= b\n") is None and _verdict(targets["kvpair_parse"], b" a,b") is None
    monkeypatch.setattr(project_module, "round_trips", lambda picked: [])
    monkeypatch.setattr(project_module, "twins", lambda picked: [])
    assert "round_trip" not in plan_example(root).text and "differential" not in plan_example(root).text


def test_a_target_that_cannot_run_is_reported_by_init(tmp_path):
    """Item 1: each target is called once; one whose own code fails is named, working ones run."""
    root = write(
        tmp_path,
        {"pyproject.toml": '[project]\nname = "tiny"\n', "tiny.py": "def parse(text: str):\n    return text\n"},
    )
    fuzz = root / "fuzz"
    fuzz.mkdir()
    (fuzz / "fuzz_tiny.py").write_text(
        "import assay\nimport tiny\n\n\n"
        "@assay.target\ndef good(data: bytes) -> None:\n    tiny.parse(data.decode())\n\n\n"
        "@assay.target\ndef broken(data: bytes) -> None:\n    tiny.parse(data.decode(), 3)\n"
    )
    results = {t.target: t for t in trial(fuzz / "fuzz_tiny.py", root)}
    assert results["good"].runs and not results["broken"].runs
    assert "TypeError" in results["broken"].detail
    (fuzz / "fuzz_missing.py").write_text("import assay\nimport not_a_module_anywhere\n")
    [result] = trial(fuzz / "fuzz_missing.py", root)
    assert not result.runs and "cannot be imported" in result.detail


def test_side_effects_skip_a_function(tmp_path, monkeypatch):
    """Item 1, switched off: without the side-effect check save_report would be fuzzed, writing files."""
    root = write(tmp_path, SRC_LAYOUT)
    assert not any(d.startswith("picked  docsrc.save_report") for d in plan_example(root).decisions)
    monkeypatch.setattr(selection_module, "side_effect", lambda project, fn: None)
    assert any(d.startswith("picked  docsrc.save_report") for d in plan_example(root).decisions)


def test_the_projects_sample_inputs_seed_the_targets_taking_one_input(tmp_path, monkeypatch, fresh_modules):
    """A project's sample files (samples/, tests/data/, ...) seed each target whose function takes one
    input whole; a function with two parameters cuts its input, so a sample is not an input to it.
    Without a sample folder no target has seeds."""
    root = write(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "recs"\nversion = "0.1"\n',
            "recs.py": (
                "def read_record(raw: bytes) -> int:\n    return len(raw)\n\n\n"
                "def read_limited(raw: bytes, limit: int) -> int:\n    return len(raw[:limit])\n"
            ),
            "tests/data/one.bin": "\x01\x02record one",
            "tests/data/two.bin": "record two",
            "tests/data/.hidden": "not a sample",
        },
    )
    (root / "tests/data/huge.bin").write_bytes(b"x" * 5000)
    monkeypatch.syspath_prepend(str(root))
    example = plan_example(root)
    assert any(d.startswith("seeded  1 target(s) with the 2 sample file(s) in tests/data/") for d in example.decisions)
    example.path.parent.mkdir(parents=True)
    example.path.write_text(example.text)
    targets = {t.name: t for t in targets_in(import_file(example.path, root))}
    assert sorted(targets["recs_read_record"].seeds) == [b"\x01\x02record one", b"record two"]
    assert targets["recs_read_limited"].seeds == ()

    for sample in (root / "tests/data").iterdir():
        sample.unlink()
    (root / "tests/data").rmdir()
    bare = plan_example(root)
    assert "SEEDS" not in bare.text and not any(d.startswith("seeded") for d in bare.decisions)


def test_the_sample_folder_is_listed_once(tmp_path, monkeypatch, fresh_modules):
    """init picks the sample folder and counts its files for its output from one listing of it."""
    root = write(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "recs"\nversion = "0.1"\n',
            "recs.py": "def read_record(raw: bytes) -> int:\n    return len(raw)\n",
            "samples/one.bin": "record one",
        },
    )
    monkeypatch.syspath_prepend(str(root))
    listings: list[Path] = []
    iterdir = Path.iterdir

    def counted(self: Path):
        listings.append(self)
        return iterdir(self)

    monkeypatch.setattr(Path, "iterdir", counted)
    example = plan_example(root)
    assert any(d.startswith("seeded  1 target(s) with the 1 sample file(s) in samples/") for d in example.decisions)
    assert listings.count(root / "samples") == 1
