"""Which files are mutated (exclude patterns) and how a mutant is described (the source as written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.core.errors import ConfigError
from assay.mutant.discover import DEFAULT_EXCLUDE, exclude_setting, excluded, files_to_mutate, mutants_in_file
from assay.mutant.operators import OperatorContext, edits_in


def _tree(root: Path, *files: str) -> None:
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("def f(x):\n    return x + 1\n")


def test_exclude_patterns_match_paths_names_and_folders():
    assert excluded("tests/helpers/make.py", DEFAULT_EXCLUDE)
    assert excluded("src/pkg/test", DEFAULT_EXCLUDE)
    assert not excluded("src/pkg/testing.py", DEFAULT_EXCLUDE)
    assert excluded("src/pkg/_vendor/six.py", ["src/pkg/_vendor"])
    assert excluded("src/pkg/_vendor/six.py", ["src/pkg/_vendor/"])
    assert excluded("src/pkg/api_pb2.py", ["*_pb2.py"])
    assert excluded("src/pkg/gen/x.py", ["src/*/gen"])
    assert not excluded("src/pkg/core.py", ["pkg/core.py"])  # a path pattern is relative to the project


def test_files_to_mutate_leaves_out_excluded_files_but_not_a_folder_named_on_purpose(tmp_path):
    _tree(tmp_path, "src/pkg/core.py", "src/pkg/_vendor/six.py", "src/pkg/api_pb2.py", "src/tests/util.py")
    rel = lambda files: [p.relative_to(tmp_path.resolve()).as_posix() for p in files]  # noqa: E731
    assert rel(files_to_mutate(tmp_path, [])) == ["src/pkg/_vendor/six.py", "src/pkg/api_pb2.py", "src/pkg/core.py"]
    assert rel(files_to_mutate(tmp_path, [], exclude=["_vendor", "*_pb2.py"])) == [
        "src/pkg/core.py",
        "src/tests/util.py",
    ]
    # Named on purpose, an excluded folder is mutated.
    assert rel(files_to_mutate(tmp_path, ["src/tests"])) == ["src/tests/util.py"]
    with pytest.raises(ConfigError, match=r"excluded: \*"):
        files_to_mutate(tmp_path, [], exclude=["*"])


def test_exclude_setting_defaults_to_the_test_folders_and_is_checked():
    assert exclude_setting({}) == list(DEFAULT_EXCLUDE)
    assert exclude_setting({"mutant": {"exclude": []}}) == []
    assert exclude_setting({"mutant": {"exclude": "gen"}}) == ["gen"]
    for bad in ({"mutant": 3}, {"mutant": {"exclude": [1]}}, {"mutant": {"exclued": []}}):
        with pytest.raises(ConfigError, match=r"\[tool.assay.mutant\]"):
            exclude_setting(bad)


SOURCE = """\
MASK = 0x7f


def clean(b, name):
    if b & 0x7f > 1_000 or name == "ab":
        return 0b101
    return b
"""


def test_descriptions_quote_the_source_as_written(tmp_path):
    """``0x7f``, ``1_000``, ``"ab"`` and ``0b101`` as the file writes them; read back from
    the parsed tree (the mechanism off), they would be ``127``, ``1000``, ``'ab'``, ``5``."""
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    described = "\n".join(m.description for m in mutants_in_file(path, tmp_path))
    for written in ("`0x7f` became `128` in `MASK = 0x7f`", "`1_000` widened to `2000`", '`"ab"` became', "`0b101`"):
        assert written in described
    assert "127" not in described and "'ab'" not in described
    import ast

    parsed = "\n".join(e.description for e in edits_in(ast.parse(SOURCE).body[1].body, OperatorContext()))
    assert "`127` became `128`" in parsed  # without the source: the parser's reading
