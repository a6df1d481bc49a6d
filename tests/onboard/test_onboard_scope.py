"""The default coverage scope follows the library a project wraps (issue 39, item 1).

The project under test is a small package whose ``parse()`` and ``search()`` wrap
jmespath, a real pure-Python parser from the package index: ``assay init`` and
``assay fuzz`` with defaults must watch jmespath too, ``assay targets`` says why each
entry is watched, a run with jmespath pinned out warns and names it, and two
distinct jmespath bugs stay two bugs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jmespath")  # in the dev extra

WRAPPER = '''\
"""Query a JSON document with JMESPath expressions."""

import jmespath

DOCUMENT = {"a": [1, 2, {"b": "x"}, "s"], "n": 5}


class QueryError(ValueError):
    """A query this package refuses."""


def parse(text: str):
    """Compile a query; QueryError (or jmespath's own ValueError) for a malformed one."""
    query = text.strip()
    if not query:
        raise QueryError("empty query")
    if query.startswith("#"):
        return None
    if len(query) > 500:
        raise QueryError("query too long")
    return jmespath.compile(query)


def search(text: str):
    """The query's result on DOCUMENT."""
    compiled = parse(text)
    return compiled.search(DOCUMENT) if compiled is not None else None
'''

SEARCH_TARGET = """\
import assay
import jq_query

TWO_BUGS = (b"a[?@ > `1`]", b'max_by(`[{"a": 1}, {"a": "b"}]`, &a)')  # comparator and max_by: both TypeError


@assay.target(expected=(ValueError,), seeds=TWO_BUGS)
def fuzz_search(data: bytes) -> None:
    jq_query.search(data.decode("utf-8", errors="replace"))
"""

CASES, SEED = "2000", "1"
OUTSIDE = "lie outside its coverage scope"


def assay(*args: str, cwd: Path, follow_libraries: bool = True) -> subprocess.CompletedProcess:
    """``assay ARGS`` in a fresh interpreter; ``follow_libraries=False`` runs it with the new default switched off
    (neither the libraries the project imports nor those its first cases run join the scope)."""
    code = "import sys\nfrom assay.cli.main import main\n"
    if not follow_libraries:
        code += "import assay.harness.imported as imported\nimported.FOLLOW_LIBRARIES = False\n"
        code += (
            "import assay.harness.scope_hint as hint\nhint.FOLLOW_SHARE = 2.0\n"  # no package joins from first cases
        )
    code += "sys.exit(main(sys.argv[1:]))\n"
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # as assay fuzz sets it, so it does not re-execute itself
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env=env
    )


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "jq-query"
    (root / "src" / "jq_query").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "jq-query"\nversion = "0.1"\n')
    (root / "src" / "jq_query" / "__init__.py").write_text(WRAPPER)
    r = assay("init", cwd=root)
    assert r.returncode == 0 and "jq_query.parse" in r.stdout, r.stdout + r.stderr
    return root


def _fuzz(root: Path, label: str, *extra: str, follow_libraries: bool = True) -> tuple[dict, str]:
    report = root / f"{label}.json"
    r = assay(
        "fuzz",
        "--fuzz-target",
        "jq_query_parse",  # init writes one target per public function; this one calls parse()
        "--fuzz-cases",
        CASES,
        "--fuzz-seed",
        SEED,
        "--fuzz-corpus",
        str(root / f"corpus-{label}"),
        "--fuzz-artifacts",
        str(root / f"artifacts-{label}"),
        "--report",
        str(report),
        *extra,
        cwd=root,
        follow_libraries=follow_libraries,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    [outcome] = json.loads(report.read_text())["targets"].values()
    return outcome, r.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, tuple[dict, str]]:
    """The init-written target fuzzed three ways, same cases and seed."""
    root = _project(tmp_path_factory.mktemp("scope"))
    return {
        "default": _fuzz(root, "default"),
        "by hand": _fuzz(root, "by-hand", "--sources", "jq_query", "--sources", "jmespath"),
        "project only": _fuzz(root, "project-only", "--sources", "jq_query"),
        "switched off": _fuzz(root, "switched-off", follow_libraries=False),
    }


def test_init_defaults_get_most_of_the_edges_hand_set_sources_give(runs):
    default, by_hand = runs["default"][0]["coverage"]["edges"], runs["by hand"][0]["coverage"]["edges"]
    assert by_hand >= 30  # jmespath's parser really ran under the hand-set scope
    assert default >= 0.8 * by_hand, (default, by_hand)
    assert any(s.endswith("/jmespath") for s in runs["default"][0]["sources"])


def test_with_the_new_default_switched_off_the_library_is_unwatched(runs):
    """Non-vacuity: the scope before (the project's package alone) misses the 80% mark by far."""
    off, by_hand = runs["switched off"][0], runs["by hand"][0]["coverage"]["edges"]
    assert off["coverage"]["edges"] < 0.8 * by_hand, (off["coverage"]["edges"], by_hand)
    assert not any(s.endswith("/jmespath") for s in off["sources"])


def test_warning_names_the_library_when_it_is_pinned_out(runs):
    project_only, stderr = runs["project only"]
    assert project_only["coverage"]["edges"] >= 4  # the wrapper's own branches: the few-edges hint would be silent
    assert OUTSIDE in stderr and "in jmespath (" in stderr and "--sources jmespath" in stderr, stderr
    assert "nearly off" not in stderr  # one warning per target, the one that names the package


def test_warning_is_silent_when_the_library_is_in_scope(runs):
    assert OUTSIDE not in runs["default"][1] and OUTSIDE not in runs["by hand"][1]
    assert "warning" not in runs["default"][1]


def test_targets_shows_each_scope_entry_with_its_reason(tmp_path):
    root = _project(tmp_path)
    (root / "fuzz" / "fuzz_pinned.py").write_text(
        "import assay\nimport jmespath\n\n\n"
        '@assay.target(expected=(ValueError,), sources=["jq_query"])\n'
        "def pinned(data: bytes) -> None:\n"
        "    jmespath.compile(data.decode('utf-8', errors='replace'))\n\n\n"
        "@assay.target(expected=(ValueError,))\n"
        "def direct(data: bytes) -> None:\n"
        "    jmespath.compile(data.decode('utf-8', errors='replace'))\n"
    )
    r = assay("targets", cwd=root)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    init_block = text[text.index("jq_query_parse") :]
    assert "jq_query  (project package)" in init_block and "jmespath  (imported by jq_query)" in init_block
    assert "its file  (the target's file)" in init_block
    direct = text[text.index("direct\n") : text.index("jq_query_parse\n")]
    assert "jmespath  (imported by the target)" in direct
    pinned = text[text.index("\npinned") :]
    assert "jq_query  (set in sources=)" in pinned.split("\n    max_len")[0]
    listed = {t["name"]: t for t in json.loads(assay("targets", "--json", cwd=root).stdout)}
    assert {e["source"]: e["reason"] for e in listed["jq_query_parse"]["scope"]} == {
        str(root / "fuzz" / "fuzz_jq_query.py"): "the target's file",
        "jq_query": "project package",
        "jmespath": "imported by jq_query",
    }
    assert listed["pinned"]["scope"] == [{"source": "jq_query", "reason": "set in sources="}]


def _bugs_of_seeds(root: Path, label: str, *extra: str, follow_libraries: bool = True) -> dict[str, set[str]]:
    """TypeError bug id -> the artifacts' inputs, after a run that replays the two seeds."""
    report = root / f"{label}.json"
    r = assay(
        "fuzz",
        "--fuzz-target",
        "fuzz_search",
        "--fuzz-cases",
        "2",
        "--fuzz-seed",
        SEED,
        "--fuzz-corpus",
        str(root / f"corpus-{label}"),
        "--fuzz-artifacts",
        str(root / f"artifacts-{label}"),
        "--report",
        str(report),
        *extra,
        cwd=root,
        follow_libraries=follow_libraries,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    bugs: dict[str, set[str]] = {}
    for finding in json.loads(report.read_text())["targets"]["fuzz_search"]["findings"]:
        if "TypeError" in finding["signature"]:
            bugs.setdefault(finding["bug"], set()).add(finding["signature"])
    return bugs


def test_two_distinct_library_bugs_stay_two_bugs(tmp_path):
    root = _project(tmp_path)
    (root / "fuzz" / "fuzz_search.py").write_text(SEARCH_TARGET)
    assert len(_bugs_of_seeds(root, "default")) == 2
    # A bug is keyed at the library frame that raised it whether or not the library is in scope
    # (findings/identity.py): with the library left out the two bugs still stay two, under the same ids.
    # (Before, both fell back to the wrapper's line and merged into one.)
    off = _bugs_of_seeds(root, "switched-off", follow_libraries=False)
    assert off == _bugs_of_seeds(root, "default-again")


LAZY_WRAPPER = '''\
"""Compile JMESPath queries, importing the library only when asked."""


def parse(text: str):
    """Compile a query; ValueError for a malformed one."""
    query = text.strip()
    if not query:
        raise ValueError("empty query")
    if query.startswith("#") or len(query) > 500:
        raise ValueError("not a query")
    import jmespath  # imported inside the function: not among the package's globals

    return jmespath.compile(query)
'''


def test_a_library_imported_inside_a_function_joins_the_scope_once_first_cases_ran_it(tmp_path):
    root = tmp_path / "jq-lazy"
    (root / "src" / "jq_query").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "jq-query"\nversion = "0.1"\n')
    (root / "src" / "jq_query" / "__init__.py").write_text(LAZY_WRAPPER)
    assert assay("init", cwd=root).returncode == 0
    listed = assay("targets", "--json", cwd=root)
    [target] = json.loads(listed.stdout)
    assert target["sources"] == ["jq_query"]  # the imports do not show jmespath
    # The first run starts from nothing: jmespath stays out, and the run says so.
    first, stderr = _fuzz(root, "first")
    assert not any(s.endswith("/jmespath") for s in first["sources"])
    assert "--sources jmespath" in stderr
    # The next run starts from that corpus: its first cases run jmespath, which joins the scope.
    r = assay(
        "fuzz",
        "--fuzz-cases",
        CASES,
        "--fuzz-seed",
        SEED,
        "--fuzz-corpus",
        str(root / "corpus-first"),
        "--report",
        str(root / "next.json"),
        cwd=root,
    )
    assert r.returncode in (0, 1), r.stderr
    [again] = json.loads((root / "next.json").read_text())["targets"].values()
    assert any(s.endswith("/jmespath") for s in again["sources"])
    assert "watching jmespath too (executed by first cases)" in r.stderr and OUTSIDE not in r.stderr
    assert again["coverage"]["edges"] > 2 * first["coverage"]["edges"]
