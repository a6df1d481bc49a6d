"""``assay mutant`` end to end: a real pytest run in a real project, through the command line.

Each test builds a small project in a temp folder and runs ``python -m assay mutant``
in a subprocess, as a user would; verdicts are read from the JSON report.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SHOP = """\
import os

MAX_ITEMS = 3


def add(items, x):
    if len(items) >= MAX_ITEMS:
        raise OverflowError("full")
    items.append(x)
    return items


def price(n):
    total = 0
    for _ in range(n):
        total += 2
    return total


def spin(n):
    i = 0
    while i < n:
        i += 1
    return i


def shutdown(flag):
    if flag:
        os._exit(3)
    return "ok"


def untested(x):
    return x + 1
"""

TESTS = """\
import pytest

from shop import add, price, shutdown, spin


def test_add():
    assert add([], 1) == [1]
    with pytest.raises(OverflowError):
        add([1, 2, 3], 4)


def test_price():
    assert price(2) == 4


def test_spin():
    assert spin(2) == 2


def test_shutdown():
    assert shutdown(False) == "ok"
"""


@pytest.fixture
def shop(tmp_path):
    root = tmp_path / "shop"
    (root / "tests").mkdir(parents=True)
    (root / "shop.py").write_text(SHOP)
    (root / "tests" / "test_shop.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["shop.py"]\n')
    return root


def assay(root: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=root, capture_output=True, text=True, timeout=timeout
    )
    return proc


def run_report(root: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = root / "report.json"
    proc = assay(root, "mutant", "--jobs", "2", "--report", str(report), *args)
    assert proc.returncode in (0, 1), proc.stderr + proc.stdout
    return proc, json.loads(report.read_text())


def by_function(report: dict, qualname: str) -> list[dict]:
    return [m for m in report["mutants"] if m["qualname"] == qualname]


def test_verdicts_selection_timeout_and_error(shop):
    proc, report = run_report(shop)
    assert proc.returncode == 1  # survivors or unreached mutants are findings
    verdicts = {m["id"]: m["verdict"] for m in report["mutants"]}
    assert report["counts"]["killed"] > 0
    # Nothing calls untested(): every mutant of it is unreached and ran no test.
    untested = by_function(report, "untested")
    assert untested and all(m["verdict"] == "unreached" and m["tests_run"] == 0 for m in untested)
    # Test selection: only test_add reaches add(), only test_price reaches price().
    for name, test in (("add", "tests/test_shop.py::test_add"), ("price", "tests/test_shop.py::test_price")):
        ms = by_function(report, name)
        assert ms and all(m["tests_selected"] == 1 for m in ms if m["verdict"] != "unreached")
        assert all(m["killed_by"] == test for m in ms if m["verdict"] == "killed")
    removed = [m for m in by_function(report, "add") if m["operator"] == "guard.remove-raise"]
    assert [m["verdict"] for m in removed] == ["killed"]
    assert "OverflowError" in removed[0]["failure"]
    # `i += 1` -> `i -= 1` loops forever: a timeout, and the run went on to judge the rest.
    loop = [m for m in by_function(report, "spin") if m["operator"] == "arithmetic.swap"]
    assert [m["verdict"] for m in loop] == ["timeout"]
    # `if flag` -> `if not (flag)` calls os._exit in the child: an error, never a kill.
    negated = [m for m in by_function(report, "shutdown") if m["operator"] == "condition.negate"]
    assert [m["verdict"] for m in negated] == ["error"]
    assert "status 3" in negated[0]["detail"]
    # The os._exit line itself runs in no test: its mutants are unreached too.
    exit_line = SHOP.splitlines().index("        os._exit(3)") + 1
    unreached = {
        m["qualname"] if m["qualname"] == "untested" else m["line"]
        for m in report["mutants"]
        if verdicts[m["id"]] == "unreached"
    }
    assert unreached == {"untested", exit_line}
    assert "shop.py" in proc.stdout and "survived" in proc.stdout


def test_second_run_uses_history(shop):
    _, first = run_report(shop)
    verdicts = {m["id"]: m["verdict"] for m in first["mutants"]}
    # Nothing changed: every verdict is reused, no test runs.
    proc, second = run_report(shop)
    assert second["history"]["unchanged"] is True and second["history"]["reused"] == len(verdicts)
    assert all(m["cached"] for m in second["mutants"])
    assert {m["id"]: m["verdict"] for m in second["mutants"]} == verdicts
    assert "nothing changed since the last run" in proc.stdout
    # A test file changed: killed mutants replay the test that killed them first (gold
    # replay); nothing is reused, since the tests may now notice more.
    tests = shop / "tests" / "test_shop.py"
    tests.write_text(tests.read_text() + "\n# reviewed\n")
    proc, third = run_report(shop)
    killed = [m for m in third["mutants"] if m["verdict"] == "killed"]
    assert killed and all(m["gold"] and m["tests_run"] == 1 for m in killed)
    assert third["history"]["gold_replays"] == len(killed) and third["history"]["reused"] == 0
    assert {m["id"]: m["verdict"] for m in third["mutants"]} == verdicts
    assert "gold replays" in proc.stdout
    # --no-history ignores it: nothing replayed or reused.
    _, fourth = run_report(shop, "--no-history")
    assert fourth["history"]["gold_replays"] == 0 and fourth["history"]["reused"] == 0
    assert not any(m["gold"] or m["cached"] for m in fourth["mutants"])


def test_changed_function_falls_back_to_full_selection(shop):
    run_report(shop)
    text = (shop / "shop.py").read_text().replace("total += 2", "total += 2  # priced per item")
    (shop / "shop.py").write_text(text)
    _, report = run_report(shop)
    price = [m for m in by_function(report, "price") if m["verdict"] == "killed"]
    assert price and not any(m["gold"] for m in price)  # the function's digest changed: no gold replay
    assert any(m["gold"] for m in by_function(report, "add") if m["verdict"] == "killed")


def test_sample_is_stable_and_spread(shop):
    _, a = run_report(shop, "--sample", "6", "--no-history")
    _, b = run_report(shop, "--sample", "6", "--no-history")
    ids = [m["id"] for m in a["mutants"]]
    assert len(ids) == 6 and ids == [m["id"] for m in b["mutants"]]
    assert len({m["qualname"] for m in a["mutants"]}) >= 3  # not the first six in source order


def test_operators_filter(shop):
    _, report = run_report(shop, "--operators", "guard", "--no-history")
    assert report["mutants"] and {m["operator"] for m in report["mutants"]} <= {
        "guard.remove-raise",
        "guard.never-fires",
        "guard.always-fires",
    }
    proc = assay(shop, "mutant", "--operators", "nonsense.family")
    assert proc.returncode == 2 and "no such operator family" in proc.stderr


def test_changed_since_a_revision(shop):
    def git(*args):
        subprocess.run(["git", *args], cwd=shop, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    text = (shop / "shop.py").read_text().replace("    total = 0\n", "    total = 0\n    total = total * 1\n")
    (shop / "shop.py").write_text(text)
    _, report = run_report(shop, "--changed", "HEAD", "--no-history")
    changed_line = text.splitlines().index("    total = total * 1") + 1
    assert report["mutants"] and all(m["line"] == changed_line for m in report["mutants"])
    proc = assay(shop, "mutant", "--changed", "no-such-rev")
    assert proc.returncode == 2 and "no-such-rev" in proc.stderr


def test_show_prints_the_diff_and_evidence(shop):
    _, report = run_report(shop)
    killed = next(m for m in report["mutants"] if m["operator"] == "guard.remove-raise")
    proc = assay(shop, "mutant", "show", killed["id"])
    assert proc.returncode == 0, proc.stderr
    assert '-        raise OverflowError("full")' in proc.stdout and "+        pass" in proc.stdout
    assert "killed by: tests/test_shop.py::test_add" in proc.stdout
    proc = assay(shop, "mutant", "show", "shop.py::nothing::here#0@0")
    assert proc.returncode == 2 and "no mutant" in proc.stderr


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda root: None, "does not exist"),
        (
            lambda root: (root / "tests" / "test_shop.py").write_text(
                TESTS + "\n\ndef test_red():\n    assert False\n"
            ),
            "baseline is not green",
        ),
        (lambda root: (root / "pyproject.toml").write_text("[tool.assay]\nmutate = 3\n"), "mutate must be a list"),
    ],
)
def test_bad_input_is_exit_2(shop, setup, message):
    setup(shop)
    args = ["--paths", "missing.py"] if message == "does not exist" else []
    proc = assay(shop, "mutant", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


HEADERS = """\
def header_value(data: bytes) -> bytes:
    if len(data) > 64:
        raise ValueError("header too long")
    name, sep, value = data.partition(b":")
    if not sep:
        raise ValueError("no colon")
    return value.strip()
"""

HEADER_TESTS = """\
import pytest

from headers import header_value


def test_value():
    assert header_value(b"Host: example") == b"example"


def test_no_colon():
    with pytest.raises(ValueError):
        header_value(b"Host")
"""

HEADER_TARGET = """\
import assay

import headers


@assay.target(expected=(ValueError,), sources=["headers.py"], max_len=200, seeds=[b"Host: example"])
def header(data: bytes):
    return headers.header_value(data)
"""


@pytest.fixture
def headers(tmp_path):
    root = tmp_path / "headers"
    (root / "tests").mkdir(parents=True)
    (root / "fuzz").mkdir()
    (root / "headers.py").write_text(HEADERS)
    (root / "tests" / "test_headers.py").write_text(HEADER_TESTS)
    (root / "fuzz" / "fuzz_header.py").write_text(HEADER_TARGET)
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["headers.py"]\n')
    return root


def test_fuzzing_kills_a_guard_no_test_checks(headers):
    """No test sends a long header: the length guard's raise is unreached and its test
    never true, so its mutants pass the suite; the fuzz target tells them apart."""
    _, plain = run_report(headers, "--no-history", "--operators", "guard")
    before = {(m["line"], m["operator"]): m["verdict"] for m in plain["mutants"]}
    assert before[(2, "guard.never-fires")] == "survived"
    assert before[(3, "guard.remove-raise")] == "unreached"
    proc, report = run_report(
        headers, "--fuzz", "on", "--fuzz-cases", "300", "--fuzz-seed", "1", "--no-history", "--operators", "guard"
    )
    after = {(m["line"], m["operator"]): m["verdict"] for m in report["mutants"]}
    assert after[(2, "guard.never-fires")] == "killed-by-fuzz", proc.stdout
    removed = [m for m in report["mutants"] if m["line"] == 3]
    assert [m["verdict"] for m in removed] == ["killed-by-fuzz"], proc.stdout
    fuzz = removed[0]["fuzz"]
    art = Path(fuzz["artifact"])
    import hashlib

    assert art.parent.parent.name == hashlib.sha256(removed[0]["id"].encode()).hexdigest()
    assert art.parent.name == "header"
    data = (art / "input").read_bytes()
    assert art.name == hashlib.sha256(data).hexdigest() and len(data) > 64
    meta = json.loads((art / "metadata.json").read_text())
    assert meta["mutant_id"] == removed[0]["id"]
    assert "killed by fuzzing" in proc.stdout
    # `assay replay` of the artifact runs the input on both sides and shows the difference.
    replay = assay(headers, "replay", "header", str(art))
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "verdict: differential" in replay.stdout and removed[0]["id"] in replay.stdout
    # The no-colon guard is killed by test_no_colon, never fuzzed.
    assert {m["verdict"] for m in report["mutants"] if m["line"] in (5, 6)} == {"killed"}
    assert report["fuzz"]["killed_by_fuzz"] == sum(v == "killed-by-fuzz" for v in after.values()) >= 2
    fz = report["fuzz"]
    assert fz["compare"] == "messages"
    assert fz["killed_by_fuzz_behaviour"] + fz["killed_by_fuzz_message"] == fz["killed_by_fuzz"]


def test_survivor_campaign_switches_reach_the_campaigns(headers):
    """--max-len and --compare are taken, checked, and recorded in the fuzz summary."""
    for bad in (["--max-len", "0"], ["--compare", "sometimes"]):
        proc = assay(headers, "mutant", "--fuzz", "on", *bad)
        assert proc.returncode == 2, proc.stderr
    proc, report = run_report(
        headers,
        *("--fuzz", "on", "--fuzz-cases", "300", "--fuzz-seed", "1", "--no-history", "--operators", "guard"),
        *("--max-len", "4096", "--compare", "no-messages"),
    )
    assert report["fuzz"]["compare"] == "no-messages", proc.stdout
    assert report["fuzz"]["killed_by_fuzz_message"] == 0
    assert report["fuzz"]["killed_by_fuzz"] >= 2


def test_fuzz_on_without_targets_is_exit_2(shop):
    proc = assay(shop, "mutant", "--fuzz", "on")  # the default targets folder fuzz/ does not exist
    assert proc.returncode == 2 and "'fuzz'" in proc.stderr and "Traceback" not in proc.stderr
    (shop / "fuzz").mkdir()
    (shop / "fuzz" / "fuzz_nothing.py").write_text("x = 1\n")
    proc = assay(shop, "mutant", "--fuzz", "on")
    assert proc.returncode == 2 and "no fuzz target" in proc.stderr


def test_assay_test_runs_the_suite_then_a_sample(shop):
    proc = assay(shop, "test", "--mutant", "sample", "--mutant-samples", "4", "--no-history", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # pytest's status: the suite is green
    assert "4 passed" in proc.stdout  # pytest's own output is shown
    assert "mutants: 4 (" in proc.stdout
    proc = assay(
        shop, "test", "--mutant", "sample", "--mutant-samples", "4", "--no-history", "--mutant-fail-under", "100"
    )
    assert proc.returncode == 1 and "below --mutant-fail-under" in proc.stderr
    (shop / "tests" / "test_shop.py").write_text(TESTS + "\n\ndef test_red():\n    assert False\n")
    proc = assay(shop, "test", "--mutant", "sample", "--no-history")
    assert proc.returncode == 1 and "mutants not run" in proc.stderr  # pytest's failure, reported as such


def test_import_time_code_is_judged_by_reexecuting_its_module(tmp_path):
    """A function that runs only while its module is imported (building a table) is
    changed by re-executing the module with the mutant in the child: its mutants are
    judged (the test of ``lookup`` kills them), not left unreached."""
    root = tmp_path / "rules"
    (root / "tests").mkdir(parents=True)
    (root / "rules.py").write_text(
        "def _build():\n"
        "    table = {}\n"
        "    for n in (1, 2, 3):\n"
        "        table[n] = n * 10\n"
        "    return table\n"
        "\n"
        "\n"
        "TABLE = _build()\n"
        "\n"
        "\n"
        "def lookup(n):\n"
        "    return TABLE[n]\n"
    )
    (root / "tests" / "test_rules.py").write_text(
        "from rules import lookup\n\n\ndef test_lookup():\n    assert lookup(2) == 20\n"
    )
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["rules.py"]\n')
    proc, report = run_report(root, "--no-history")
    build = by_function(report, "_build")
    assert build and all(m["reexec"] for m in build)
    ops = {m["operator"]: m for m in build}
    assert ops["arithmetic.swap"]["verdict"] == "killed"  # n * 10 -> n / 10: TABLE[2] is 0.2
    assert ops["return.value"]["killed_by"] == "tests/test_rules.py::test_lookup"  # TABLE is None
    assert not any(m["reexec"] for m in by_function(report, "lookup"))
    assert not any(m["verdict"] == "unreached" for m in report["mutants"])
    assert report["counts"]["reexec"] == len(build)


BUILT = """\
import re

import registry

WORD = "[a-z]+"
PATTERN = re.compile(WORD)
LIMIT = 10
_KEYS = {"ab": 1, "b": 2}
ALLOWED = frozenset(_KEYS)


def scale(n, factor=LIMIT):
    return n * factor


def check(word):
    return bool(PATTERN.fullmatch(word)) and word in ALLOWED


class Point:
    __slots__ = ("x", "y")
"""

PLUGIN = """\
import registry

NAME = "plugin"
registry.register(NAME)


def hello():
    return NAME
"""

REGISTRY = """\
NAMES = []


def register(name):
    if name in NAMES:
        raise ValueError(f"{name} registered twice")
    NAMES.append(name)
"""

BUILT_TESTS = """\
from built import Point, check, scale
from plugin import hello


def test_check():
    assert check("ab") and not check("zz") and not check("a1")


def test_scale():
    assert scale(2) == 20


def test_point():
    p = Point()
    p.x, p.y = 1, 2
    assert (p.x, p.y) == (1, 2)


def test_hello():
    assert hello() == "plugin"
"""


def test_module_level_mutants_run_with_their_module_reexecuted(tmp_path):
    """Values used at import (a pattern compiled from a constant, a default argument,
    keys copied into a set, ``__slots__``) are killed by the tests once the module is
    re-executed in the child; a mutant whose module no longer imports is killed at
    import; a module that cannot be re-executed unchanged (it registers itself and
    refuses a second time) has its module-level mutants excluded with the reason, out
    of the score."""
    root = tmp_path / "built"
    (root / "tests").mkdir(parents=True)
    (root / "built.py").write_text(BUILT)
    (root / "plugin.py").write_text(PLUGIN)
    (root / "registry.py").write_text(REGISTRY)
    (root / "tests" / "test_built.py").write_text(BUILT_TESTS)
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["built.py", "plugin.py"]\n')
    proc, report = run_report(root, "--no-history")
    module_level = {(m["qualname"], m["line"], m["operator"]): m for m in report["mutants"] if m["reexec"]}
    word, limit = BUILT.splitlines().index('WORD = "[a-z]+"') + 1, BUILT.splitlines().index("LIMIT = 10") + 1
    keys = BUILT.splitlines().index('_KEYS = {"ab": 1, "b": 2}') + 1
    assert module_level[("<module>", word, "constant.empty")]["verdict"] == "killed"
    assert module_level[("<module>", limit, "constant.adjust")]["verdict"] == "killed"
    [ab] = [m for m in report["mutants"] if m["line"] == keys and m["description"].startswith('`"ab"` became')]
    assert ab["verdict"] == "killed"  # ALLOWED was built from the keys at import
    slots = [m for m in report["mutants"] if m["qualname"] == "Point"]
    assert slots and all(m["verdict"] == "killed" and m["killed_by"] == "<import>" for m in slots)
    assert "TypeError" in slots[0]["failure"]
    excluded = [m for m in report["mutants"] if m["verdict"] == "excluded"]
    assert excluded and all(m["path"] == "plugin.py" and m["reexec"] for m in excluded)
    assert "registered twice" in excluded[0]["detail"]
    assert not any(m["verdict"] == "excluded" for m in by_function(report, "hello"))
    c = report["counts"]
    assert c["excluded"] == len(excluded) and c["killed_at_import"] == len(slots)
    judged = c["killed"] + c["killed-by-fuzz"] + c["survived"] + c["unreached"]
    assert c["judged"] == judged and report["score"] == pytest.approx((c["killed"] + c["killed-by-fuzz"]) / judged)
    assert f"of {judged} judged mutants" in proc.stdout
    assert f"{c['excluded']} excluded" in proc.stdout


def test_a_test_that_fails_kills_even_after_another_hung(tmp_path):
    """A verdict must not depend on test order.  Under ``while not (n > 0)`` the fast
    test (run first: tests go fastest-first) loops forever and the slow one fails; a
    fresh child runs the tests after the hung one, so the mutant is killed, as it
    would be had the slow test run first.  Without the resume it is a timeout."""
    root = tmp_path / "loop"
    (root / "tests").mkdir(parents=True)
    (root / "loop.py").write_text("def countdown(n):\n    while n > 0:\n        n -= 1\n    return n\n")
    (root / "tests" / "test_loop.py").write_text(
        "import time\n\nfrom loop import countdown\n\n\n"
        "def test_zero():\n    assert countdown(0) == 0\n\n\n"
        "def test_three_slowly():\n    time.sleep(0.2)\n    assert countdown(3) == 0\n"
    )
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["loop.py"]\n')
    _, report = run_report(root, "--no-history", "--jobs", "1")
    negated = [m for m in by_function(report, "countdown") if m["operator"] == "condition.negate"]
    assert [(m["verdict"], m["killed_by"], m["tests_run"]) for m in negated] == [
        ("killed", "tests/test_loop.py::test_three_slowly", 2)
    ]
    assert "timeout in tests/test_loop.py::test_zero" in negated[0]["detail"]
    # `n -= 1` -> `n += 1`: test_zero passes and then test_three_slowly hangs; nothing is
    # left to resume, and the hung test is named.
    swapped = [m for m in by_function(report, "countdown") if m["operator"] == "arithmetic.swap"]
    assert [m["verdict"] for m in swapped] == ["timeout"]
    assert swapped[0]["detail"].startswith("in tests/test_loop.py::test_three_slowly: ")


def test_show_and_diffs_after_no_history_and_reuse_whatever_the_report_is_called(shop):
    """``show`` works after a ``--no-history`` run (the last run is kept apart from the
    history), the JSON report carries every mutant's diff, and an unchanged tree is
    re-used though ``--report`` names another file."""
    _, first = run_report(shop, "--no-history")
    assert all(m["diff"] and m["diff"].startswith("--- a/shop.py\n+++ b/shop.py\n@@ ") for m in first["mutants"])
    removed = next(m for m in first["mutants"] if m["operator"] == "guard.remove-raise")
    assert '-        raise OverflowError("full")\n+        pass\n' in removed["diff"]
    assert not (shop / ".assay" / "mutants" / "history.json").exists()
    proc = assay(shop, "mutant", "show", removed["id"])
    assert proc.returncode == 0, proc.stderr
    assert "+        pass" in proc.stdout and "killed by: tests/test_shop.py::test_add" in proc.stdout
    assay(shop, "mutant", "--jobs", "2", "--report", "one.json")  # records the tree
    proc = assay(shop, "mutant", "--jobs", "2", "--report", "two.json")
    assert "nothing changed since the last run" in proc.stdout, proc.stdout + proc.stderr
    reused = json.loads((shop / "two.json").read_text())
    assert reused["history"]["unchanged"] and len(reused["mutants"]) == len(first["mutants"])
    assert {m["id"]: m["diff"] for m in reused["mutants"]} == {m["id"]: m["diff"] for m in first["mutants"]}


def test_exclude_setting_and_flag(tmp_path):
    """``[tool.assay.mutant] exclude`` replaces the default (the test folders), and
    ``--exclude`` adds to it: a project can leave out a vendored folder, and mutate
    helpers that live in a ``tests/`` folder."""
    root = tmp_path / "proj"
    for folder in ("pkg/_vendor", "tests/helpers"):
        (root / folder).mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def twice(n):\n    return n * 2\n")
    (root / "pkg" / "_vendor" / "six.py").write_text("def one():\n    return 1\n")
    (root / "tests" / "helpers" / "make.py").write_text("def three():\n    return 3\n")
    (root / "tests" / "test_core.py").write_text(
        "from pkg.core import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n"
    )
    (root / "pyproject.toml").write_text("[tool.assay]\n")
    _, report = run_report(root, "--no-history")
    assert report["baseline"]["files"] == ["pkg/__init__.py", "pkg/_vendor/six.py", "pkg/core.py"]
    (root / "pyproject.toml").write_text('[tool.assay.mutant]\nexclude = ["pkg/_vendor"]\n')
    _, report = run_report(root, "--no-history")
    assert report["baseline"]["files"] == ["pkg/__init__.py", "pkg/core.py", "tests/helpers/make.py"]
    _, report = run_report(root, "--no-history", "--exclude", "make.py", "__init__.py")
    assert report["baseline"]["files"] == ["pkg/core.py"]
    (root / "pyproject.toml").write_text('[tool.assay.mutant]\nexclude = "pkg/_vendor"\nskip = 1\n')
    proc = assay(root, "mutant")
    assert proc.returncode == 2 and "unknown key(s) skip in [tool.assay.mutant]" in proc.stderr


OTHER_SCRIPT = """\
import afl_runner_that_is_not_installed

afl_runner_that_is_not_installed.main()
"""


def test_the_default_fuzz_folder_says_which_files_it_used_and_skipped(headers):
    """With ``[tool.assay] targets`` unset, fuzz/ may hold the project's other scripts:
    one that does not import here, and one with no target, are skipped and named (the
    run used to stop at the first such file), and the target file is used."""
    (headers / "fuzz" / "run_afl.py").write_text(OTHER_SCRIPT)
    (headers / "fuzz" / "corpus_tool.py").write_text("def minimize(paths):\n    return sorted(paths)\n")
    proc, report = run_report(headers, "--fuzz", "on", "--fuzz-cases", "20", "--no-history", "--operators", "guard")
    note = next(line for line in proc.stderr.splitlines() if "default folder fuzz/" in line)
    assert "using fuzz/fuzz_header.py (header)" in note
    assert "fuzz/run_afl.py (does not import here" in note and "fuzz/corpus_tool.py (defines no target)" in note
    assert report["fuzz"]["survivors"] > 0


LIMITS = """\
def fits(size):
    return size <= 1024
"""

SUBTEST_TESTS = """\
import unittest

from limits import fits


class LimitTest(unittest.TestCase):
    def test_boundary(self):
        for size, expected in ((1024, True), (1025, False)):
            with self.subTest(size=size):
                self.assertEqual(fits(size), expected)
"""


def test_a_mutant_failing_only_a_subtest_is_killed(tmp_path):
    # pytest logs a failed unittest subTest as its own report during the call, and the
    # call's report passes: a mutant only a subtest fails was judged survived.
    root = tmp_path / "limits"
    (root / "tests").mkdir(parents=True)
    (root / "limits.py").write_text(LIMITS)
    (root / "tests" / "test_limits.py").write_text(SUBTEST_TESTS)
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["limits.py"]\n')
    _, report = run_report(root)
    boundary = [m for m in report["mutants"] if m["operator"].startswith("compare")]
    assert boundary and all(m["verdict"] == "killed" for m in boundary), boundary
    assert all(m["killed_by"].endswith("LimitTest::test_boundary") for m in boundary)
