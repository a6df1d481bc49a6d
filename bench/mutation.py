#!/usr/bin/env python
"""Mutation testing side by side: ``assay mutant`` against mutmut on real libraries.

Run from the repository root with the project's venv::

    .venv/bin/python bench/mutation.py                       # every workload, 3 repeats (~45 min)
    .venv/bin/python bench/mutation.py --repeat 1 --workloads inflection   # smoke test (~2 min)
    .venv/bin/python bench/mutation.py --fuzz                # also one assay run with --fuzz on
    .venv/bin/python bench/mutation.py --repeat 0 --tools assay --fuzz --workloads multipart \
        --assay-src ../old-tree/src                          # the fuzz kills of another tree

Workloads, built at run time from sdists that ``pip download --no-binary :all:``
fetches (nothing downloaded is kept in the repository):

``parse``       ``parse==1.22.4``: ``parse/__init__.py`` (1,106 lines) laid out as
                ``parse.py``, with the sdist's ``tests/`` (110 tests);
``inflection``  ``inflection==0.5.1``: ``inflection/__init__.py`` (426 lines) as
                ``inflection.py``, with the sdist's ``test_inflection.py`` (455 tests);
``multipart``   ``multipart==2.0.1``: ``multipart.py`` (1,321 lines), a hand-written
                ``multipart/form-data`` push parser (delimiter scanning across
                chunks, segment headers, limits) behind the WSGI ``parse_form_data``,
                with the sdist's ``test/`` package (134 tests).  Its fuzz target is
                what a web framework's author would write: the first line is the
                ``Content-Type`` header, the rest the body, parsed as the default
                (lenient) call does and again strictly, read 16 bytes at a time;
                the library's ``MultipartError`` (a ``ValueError``) is expected.

Each workload is a folder with the module, ``tests/``, a ``fuzz/`` target file
written by this script (used only by ``--fuzz``) and a ``pyproject.toml`` holding
``[tool.mutmut]`` (``source_paths``, ``pytest_add_cli_args_test_selection``) and
``[tool.assay] mutate``.  Every measured run starts from a fresh copy of it (no
``mutants/``, no ``.assay/``), so the first run of each tool is cold.

Per repeat and workload (interleaved: mutmut, assay, next workload, next repeat):

* **mutmut** 3.8.1 (in its own venv under ``--work``, with the project's pytest
  version): ``mutmut run --max-children JOBS``, wall clock end to end (libcst
  generation, stats collection, clean run, mutants); then ``mutmut run`` again in
  the same folder (its own result cache) for its re-run time.  Per-mutant status
  from ``mutants/<module>.py.meta`` (``exit_code_by_key``, mapped as mutmut's
  ``status_by_exit_code`` does).
* **assay**: ``assay mutant --project DIR --jobs JOBS --report FILE``, wall clock;
  then the same command again in the same folder (the re-run: history of an
  unchanged project).  Exit codes 0 and 1 count as success.

``mutants/s`` is mutants over end-to-end wall seconds of the first run, median over
repeats; ``re-run x`` is the first run's seconds over the re-run's, median over
repeats.  ``flips`` counts mutants whose verdict was not the same in every repeat.

**Verdict agreement.**  Each mutmut mutant's change is found by comparing the ASTs
of its function and the function's unmutated copy in ``mutants/<module>.py`` (the
first differing node): its line in the original file and a coarse kind
(comparison, boolean, arithmetic, constant, string, call-arg, assign, negate,
branch, method, other) plus, where the change is an operator or literal swap, a
detail such as ``<→<=`` or ``1→2``.  assay's operator families map to the same
kinds (``compare.*`` → comparison, ``boolean.swap`` → boolean, ``constant.empty``
→ boolean or string, ...), the detail read from the description (```<` became
`<=```).  Within each (line, kind) group, mutants with the same detail pair first,
the rest pair in order ("same line+kind only").  A pair agrees when both tools
detected the mutant (killed or timeout) or neither did (survived, unreached / no
tests; ``killed-by-fuzz`` counts as not detected by the tests); pairs where either
side is an error or another status are left out.  Disagreements are listed with
both descriptions for a human to explain; ``--json FILE`` keeps all of them.

With ``--fuzz``, one more assay run per workload (``--fuzz on --fuzz-seed 1
--fuzz-cases N``, ``--fuzz-cases`` here, default 2,000; fresh copy, after the timed
repeats) lists the ``killed-by-fuzz`` mutants with the input that told them apart.

``CPU s/mutant`` is the user+system CPU of the first run's whole process tree
(``RUSAGE_CHILDREN`` around it) over its mutants, median over repeats.
``--assay-src DIR`` runs the ``assay`` package of another tree's ``src/`` (by
``PYTHONPATH``, with its C extension built in place), e.g. a worktree of an older
commit for a before/after comparison; without it, assay runs with ``PYTHONPATH``
unset, i.e. whatever the venv's install points at.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: mutmut release compared against (pinned: its operators and caching change between releases).
MUTMUT_REQUIREMENT = "mutmut==3.8.1"
#: Default work folder (sdists, the mutmut venv, workload templates, runs).
DEFAULT_WORK = ROOT / ".assay" / "bench-mutation"
#: Wall-clock limit of one tool run, seconds (a run past it is killed and counted as failed).
RUN_TIMEOUT = 1800.0
#: Wall-clock limit of pip (download, venv install), seconds.
PIP_TIMEOUT = 600.0
#: Disagreements printed per direction and workload (``--json`` keeps all).
SHOW_DISAGREEMENTS = 15
#: Longest description printed in a table row.
DESCRIPTION_CHARS = 90

PARSE_TARGET = '''\
"""Differential-fuzzing target for the mutation benchmark: parse(format, text)."""

import parse

import assay

_SEEDS = [b"{}\\nhello", b"{:d}-{:d}\\n12-34", b"{name} is {age:d}\\nBob is 42",
          b"{:f}\\n3.25", b"{:>5}|{:<3}\\n   ab|c  |", b"{:ti}\\n2024-01-02T03:04:05",
          b"{a:w} {b:S}\\nfoo_1 bar!", b"{:x}/{:o}/{:b}\\n1f/17/101", b"{:%Y-%m-%d}\\n2021-12-31",
          b"{:e}\\n1.5e10", b"{:g}\\n-inf", b"{:n}\\n1,234", b"{:.2f}\\n3.14", b"{:3d}\\n 42"]


@assay.target(expected=(ValueError,), sources=["parse"], seeds=_SEEDS, max_len=200, timeout=2.0)
def parse_format(data: bytes):
    """First line: a format; the rest: the text to parse and search with it."""
    fmt, _, text = data.decode("utf-8", "replace").partition("\\n")
    try:
        compiled = parse.compile(fmt)
    except (ValueError, KeyError, IndexError, NotImplementedError, TypeError, AttributeError) as exc:
        return ("bad format", type(exc).__name__)
    result = compiled.parse(text)
    found = compiled.search(text)
    return (None if result is None else (repr(result.fixed), repr(result.named), result.spans),
            None if found is None else (repr(found.fixed), repr(found.named)))
'''

INFLECTION_TARGET = '''\
"""Differential-fuzzing target for the mutation benchmark: every inflection function."""

import inflection

import assay

_SEEDS = [b"octopus", b"person", b"ActiveModel::Errors", b"raw_scaled_scorer", b"Donald E. Knuth",
          b"employee_salary", b"man_from_the_boondocks", "Ærøskøbing".encode(), b"mouse", b"sheep", b"matrix",
          b"CamelOctopi", b"x-men: the last stand", b"1002", b"status", b"criterion"]


@assay.target(sources=["inflection"], seeds=_SEEDS, max_len=120, timeout=2.0)
def inflect_all(data: bytes):
    """Every public inflection function on the decoded text."""
    word = data.decode("utf-8", "replace")
    return (inflection.pluralize(word), inflection.singularize(word), inflection.camelize(word),
            inflection.camelize(word, False), inflection.underscore(word), inflection.dasherize(word),
            inflection.humanize(word), inflection.titleize(word), inflection.tableize(word),
            inflection.parameterize(word), inflection.transliterate(word),
            inflection.ordinalize(len(word) * 7 - 20))
'''

MULTIPART_TARGET = '''\
"""Differential-fuzzing target for the mutation benchmark: a WSGI form upload parsed by multipart."""

import io

import multipart

import assay

_BODY = (b"--xYzZY\\r\\nContent-Disposition: form-data; name=\\"a\\"\\r\\n\\r\\n1\\r\\n--xYzZY\\r\\n"
         b"Content-Disposition: form-data; name=\\"f\\"; filename=\\"x.txt\\"\\r\\n"
         b"Content-Type: text/plain; charset=latin1\\r\\n\\r\\nhello\\r\\n--xYzZY--\\r\\n")
_SEEDS = [b"multipart/form-data; boundary=xYzZY\\n" + _BODY,
          b"multipart/form-data; boundary=\\"a b\\"; charset=utf8\\n--a b\\r\\n"
          b"Content-Disposition: form-data; name=\\"\\xc3\\xa4\\"; filename=\\"C:\\\\\\\\x\\\\\\\\y.bin\\"\\r\\n"
          b"Content-Length: 3\\r\\n\\r\\nabc\\r\\n--a b--",
          b"application/x-www-form-urlencoded\\na=1&b=%41+c&&=x&d",
          b"multipart/form-data; boundary=b\\n\\r\\n--b--\\r\\n",
          b"multipart/form-data; boundary=q\\npreamble\\r\\n--q\\r\\nContent-Disposition: form-data; name=x\\r\\n"
          b"X-Long: a\\r\\n\\tcontinued\\r\\n\\r\\n\\r\\n--q\\r\\n--q--"]


def _form(environ: dict, **options):
    forms, files = multipart.parse_form_data(environ, **options)
    uploads = [(name, part.filename, part.content_type, part.charset, part.size, part.raw, part.headerlist)
               for name, part in files.iterallitems()]
    for _, part in files.iterallitems():
        part.close()
    return list(forms.iterallitems()), uploads


@assay.target(expected=(ValueError,), sources=["multipart"], seeds=_SEEDS, max_len=512, timeout=2.0)
def form_upload(data: bytes):
    """First line: the Content-Type header; the rest: the request body, parsed leniently then strictly."""
    content_type, _, body = data.partition(b"\\n")
    environ = {"REQUEST_METHOD": "POST", "CONTENT_TYPE": content_type.decode("latin1"),
               "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
    try:
        lenient = _form(environ)
    except UnicodeDecodeError:  # the lenient mode swallows MultipartError, not a field's decode error
        lenient = "undecodable"
    # Strict, and read 16 bytes at a time as a slow client's body arrives: documented errors propagate.
    environ["wsgi.input"] = io.BytesIO(body)
    return lenient, _form(environ, strict=True, buffer_size=16)
'''


@dataclass(frozen=True)
class Workload:
    """A real library laid out as one module plus its tests, from its sdist."""

    name: str
    requirement: str  # pip requirement, pinned
    module: str  # the module's name; its file is <module>.py at the workload root
    source: str  # the module's path inside the sdist (below its top folder)
    tests: tuple[str, ...]  # test files inside the sdist, globs; copied into tests/
    fuzz_target: str  # text of fuzz/fuzz_<name>.py (only --fuzz runs it)


WORKLOADS: dict[str, Workload] = {
    "parse": Workload("parse", "parse==1.22.4", "parse", "parse/__init__.py", ("tests/test_*.py",), PARSE_TARGET),
    "inflection": Workload(
        "inflection",
        "inflection==0.5.1",
        "inflection",
        "inflection/__init__.py",
        ("test_inflection.py",),
        INFLECTION_TARGET,
    ),
    "multipart": Workload(
        "multipart", "multipart==2.0.1", "multipart", "multipart.py", ("test/*.py",), MULTIPART_TARGET
    ),
}

#: mutmut 3.8.1's ``status_by_exit_code`` (mutmut/stats.py); anything else is "suspicious".
MUTMUT_STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    2: "interrupted",
    None: "not checked",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    37: "caught by type check",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
}
#: Tool statuses to the verdicts compared: killed, survived, unreached, timeout; others are "other".
NORMALIZED = {
    "killed": "killed",
    "survived": "survived",
    "no tests": "unreached",
    "timeout": "timeout",
    "unreached": "unreached",
    "killed-by-fuzz": "killed-by-fuzz",
}
#: Verdicts that mean the tests detected the mutant, and those that mean they did not.
DETECTED = {"killed", "timeout"}
UNDETECTED = {"survived", "unreached", "killed-by-fuzz"}

#: assay operator family to coarse kind (``constant.empty`` is decided by its description).
ASSAY_KINDS = {
    "compare.boundary": "comparison",
    "compare.negate": "comparison",
    "boolean.swap": "boolean",
    "arithmetic.swap": "arithmetic",
    "constant.adjust": "constant",
    "value.widen-bound": "constant",
    "constant.empty": "string",
    "return.value": "return",
    "statement.delete": "statement",
    "condition.negate": "negate",
    "expression.take-branch": "branch",
    "guard.remove-raise": "guard",
    "guard.never-fires": "guard",
    "guard.always-fires": "guard",
    "predicate.drop-clause": "clause",
    "comprehension.drop-clause": "clause",
    "call.drop-keyword": "call-arg",
}
_SYMBOLS: dict[type, str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.And: "and",
    ast.Or: "or",
    ast.UAdd: "+",
    ast.USub: "-",
    ast.Not: "not",
    ast.Invert: "~",
    ast.MatMult: "@",
}
_BECAME = re.compile(r"^`([^`]+)` became `([^`]+)`")
_QUOTED_IN = re.compile(r" in `(.+)`$")
#: Kinds whose assay description quotes the mutated operation itself (so it can be compared).
CONTEXT_KINDS = ("comparison", "boolean", "arithmetic")
_MUTMUT_NAME = re.compile(r"^x(?:ǁ(?P<cls>[^ǁ]+)ǁ|_)(?P<func>.+?)__mutmut_(?P<n>\d+|orig)$")


@dataclass
class Record:
    """One mutant of one tool, reduced to what the comparison needs."""

    tool: str
    name: str  # mutmut key or assay id
    path: str
    line: int
    kind: str
    detail: str | None
    status: str  # the tool's own word
    verdict: str  # normalized: killed, survived, unreached, timeout, killed-by-fuzz, other
    description: str
    context: str | None = None  # source of the mutated operation, for operator swaps (ast.unparse)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    """One tool run over one workload: timing, counts, per-mutant records."""

    tool: str
    workload: str
    ok: bool
    seconds: float
    rerun_seconds: float | None
    mutants: int
    statuses: dict[str, int]
    records: list[Record]
    error: str = ""
    report_elapsed: float | None = None
    cpu_seconds: float | None = None  # user+system CPU of the first run and all its processes


# =========================================================================================
# Processes
# =========================================================================================


def run(
    cmd: list[str],
    *,
    cwd: Path | None = None,
    timeout: float = RUN_TIMEOUT,
    log: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, float, str]:
    """Run ``cmd`` in its own session; (exit code, wall seconds, tail of stderr+stdout).

    On timeout the whole process group is killed and the exit code is -9.  Output
    goes to ``log`` when given (mutmut's spinner writes megabytes), else is captured.
    """
    out = open(log, "wb") if log is not None else subprocess.PIPE
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
    )
    try:
        data, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        data, _ = proc.communicate()
        code = -9
    elapsed = time.perf_counter() - started
    if log is not None:
        out.close()  # type: ignore[union-attr]
        with open(log, "rb") as f:
            f.seek(max(0, log.stat().st_size - 4000))
            data = f.read()
    text = (data or b"").decode("utf-8", "replace").replace("\r", "\n")
    return code, elapsed, "\n".join(text.strip().splitlines()[-25:])


def assay_revision(root: Path = ROOT) -> str:
    """The commit of the repository at ``root`` (with "+dirty" when src/ has uncommitted changes), or "?"."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (head or "?") + ("+dirty" if dirty else "")


def children_cpu() -> float:
    """User+system CPU seconds of this process's finished (waited-for) descendants so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def say(message: str) -> None:
    """Progress on stderr (the tables go to stdout)."""
    print(message, file=sys.stderr, flush=True)


# =========================================================================================
# Workloads and the mutmut venv
# =========================================================================================


def prepare_workload(work: Path, w: Workload) -> Path:
    """The workload's template folder under ``work/templates``, built from its sdist once."""
    template = work / "templates" / w.name
    stamp = template / ".requirement"
    if stamp.exists() and stamp.read_text() == w.requirement:
        return template
    sdists = work / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    name, _, version = w.requirement.partition("==")
    found = [p for p in sdists.glob("*.tar.gz") if p.name.lower().replace("_", "-").startswith(f"{name}-{version}.")]
    if not found:
        say(f"downloading the {w.requirement} sdist")
        code, _, out = run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-binary",
                ":all:",
                "--no-deps",
                "-d",
                str(sdists),
                w.requirement,
            ],
            timeout=PIP_TIMEOUT,
        )
        found = [
            p for p in sdists.glob("*.tar.gz") if p.name.lower().replace("_", "-").startswith(f"{name}-{version}.")
        ]
        if code != 0 or not found:
            raise SystemExit(f"pip download {w.requirement} failed (exit {code}):\n{out}")
    unpacked = work / "unpacked" / w.name
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    with tarfile.open(found[0]) as tar:
        tar.extractall(unpacked, filter="data")
    top = next(unpacked.iterdir())
    shutil.rmtree(template, ignore_errors=True)
    (template / "tests").mkdir(parents=True)
    (template / "fuzz").mkdir()
    shutil.copy2(top / w.source, template / f"{w.module}.py")
    copied = 0
    for pattern in w.tests:
        for test in sorted(top.glob(pattern)):
            shutil.copy2(test, template / "tests" / test.name)
            copied += 1
    if not copied:
        raise SystemExit(f"no test files matching {w.tests} in the {w.requirement} sdist")
    (template / "fuzz" / f"fuzz_{w.name}.py").write_text(w.fuzz_target)
    (template / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        f'source_paths = ["{w.module}.py"]\n'
        'pytest_add_cli_args_test_selection = ["tests/"]\n\n'
        "[tool.assay]\n"
        f'mutate = ["{w.module}.py"]\n'
        'targets = ["fuzz"]\n\n'
        "[tool.pytest.ini_options]\n"
        'testpaths = ["tests"]\n'
    )
    stamp.write_text(w.requirement)
    return template


def mutmut_venv(work: Path) -> Path:
    """``work/venv-mutmut`` with mutmut and the project's pytest version; its ``bin``."""
    venv = work / "venv-mutmut"
    bin_dir = venv / "bin"
    pytest_version = metadata.version("pytest")
    wanted = f"{MUTMUT_REQUIREMENT} pytest=={pytest_version}"
    stamp = venv / ".requirements"
    if stamp.exists() and stamp.read_text() == wanted and (bin_dir / "mutmut").exists():
        return bin_dir
    say(f"installing {wanted} into {venv}")
    shutil.rmtree(venv, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    code, _, out = run([base, "-m", "venv", str(venv)], timeout=PIP_TIMEOUT)
    if code != 0:
        raise SystemExit(f"making the mutmut venv failed:\n{out}")
    code, _, out = run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", MUTMUT_REQUIREMENT, f"pytest=={pytest_version}"],
        timeout=PIP_TIMEOUT,
    )
    if code != 0:
        raise SystemExit(f"installing {wanted} failed:\n{out}")
    stamp.write_text(wanted)
    return bin_dir


def fresh_copy(template: Path, run_dir: Path) -> Path:
    """``run_dir/project``: a clean copy of the workload template (no mutants/, no .assay/).

    Logs and reports go to ``run_dir`` beside it, so they never touch the project.
    """
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    dest = run_dir / "project"
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns(".requirement", "__pycache__"))
    return dest


# =========================================================================================
# mutmut
# =========================================================================================


def run_mutmut(bin_dir: Path, w: Workload, project: Path, jobs: int, rerun: bool) -> RunResult:
    """``mutmut run --max-children JOBS`` in ``project`` (and again for the re-run)."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    cmd = [str(bin_dir / "mutmut"), "run", "--max-children", str(jobs)]
    cpu_before = children_cpu()
    code, seconds, tail = run(cmd, cwd=project, log=project.parent / "mutmut-run.log", env=env)
    cpu = children_cpu() - cpu_before
    if code != 0:
        return RunResult("mutmut", w.name, False, seconds, None, 0, {}, [], f"exit {code}:\n{tail}")
    records = mutmut_records(project, w)
    rerun_seconds = None
    if rerun:
        code, rerun_seconds, tail = run(cmd, cwd=project, log=project.parent / "mutmut-rerun.log", env=env)
        if code != 0:
            say(f"mutmut re-run failed (exit {code}):\n{tail}")
            rerun_seconds = None
    statuses = Counter(r.status for r in records)
    return RunResult(
        "mutmut", w.name, True, seconds, rerun_seconds, len(records), dict(statuses), records, cpu_seconds=cpu
    )


def _defs(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions and methods of top-level classes, by name."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same type (``True`` is not ``1`` here)."""
    return type(a) is type(b) and a == b


def first_difference(
    a: Any, b: Any, anchors: tuple[Any, Any], parent: Any = None, field_name: str | None = None
) -> tuple[Any, Any, Any, str | None, tuple[Any, Any]] | None:
    """The first place two ASTs differ, in pre-order.

    Returns ``(old, new, parent, field, (old anchor, new anchor))``: the two nodes
    that differ (for a differing scalar field or list length, the nodes owning it,
    with ``field`` naming it), the old node's parent, and the nearest nodes with a
    line number at or above them.  A conditional expression whose test differs is
    reported whole (mutmut's ``(test) and False`` / ``(test) or True``).
    """
    if type(a) is not type(b):
        return a, b, parent, field_name, anchors
    if not isinstance(a, ast.AST):
        return None if _same(a, b) else (a, b, parent, field_name, anchors)
    here = (a, b) if hasattr(a, "lineno") else anchors
    if isinstance(a, ast.IfExp) and ast.dump(a.test) != ast.dump(b.test):
        return a, b, parent, "test", here
    for name in a._fields:
        va, vb = getattr(a, name, None), getattr(b, name, None)
        if isinstance(va, list) and isinstance(vb, list):
            if len(va) != len(vb):
                return a, b, parent, name, here
            for x, y in zip(va, vb):
                diff = first_difference(x, y, here, a, name)
                if diff:
                    return diff
        elif isinstance(va, ast.AST) or isinstance(vb, ast.AST):
            diff = first_difference(va, vb, here, a, name)
            if diff:
                return diff
        elif not _same(va, vb):
            return a, b, parent, name, here
    return None


def classify_change(old: Any, new: Any, parent: Any, field_name: str | None) -> tuple[str, str | None]:
    """A mutmut change's coarse kind and, for swaps of an operator or a literal, its detail."""
    if isinstance(old, ast.IfExp):
        return "branch", None
    if isinstance(old, ast.cmpop) and isinstance(new, ast.cmpop):
        return "comparison", f"{_SYMBOLS[type(old)]}→{_SYMBOLS[type(new)]}"
    if isinstance(old, ast.boolop) and isinstance(new, ast.boolop):
        return "boolean", f"{_SYMBOLS[type(old)]}→{_SYMBOLS[type(new)]}"
    if isinstance(old, ast.operator) and isinstance(new, ast.operator):
        suffix = "=" if isinstance(parent, ast.AugAssign) else ""
        return "arithmetic", f"{_SYMBOLS[type(old)]}{suffix}→{_SYMBOLS[type(new)]}{suffix}"
    if isinstance(old, ast.unaryop) and isinstance(new, ast.unaryop):
        return "arithmetic", f"{_SYMBOLS[type(old)]}→{_SYMBOLS[type(new)]}"
    if isinstance(old, ast.AugAssign) and isinstance(new, ast.Assign):
        return "arithmetic", f"{_SYMBOLS[type(old.op)]}=→="
    if isinstance(old, ast.UnaryOp) and not isinstance(new, ast.UnaryOp):
        return ("negate", None) if isinstance(old.op, ast.Not) else ("arithmetic", None)
    if (
        isinstance(new, ast.Constant)
        and new.value is None
        and not (isinstance(old, ast.Constant) and old.value is None)
    ):
        if isinstance(parent, (ast.Call, ast.keyword)):
            return "call-arg", None
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return "assign", None
        if isinstance(parent, ast.Lambda):
            return "other", "lambda"
    if isinstance(old, ast.Constant) and isinstance(new, ast.Constant):
        if isinstance(old.value, bool) and isinstance(new.value, bool):
            return "boolean", f"{old.value!r}→{new.value!r}"
        if isinstance(old.value, (int, float, complex)) and not isinstance(old.value, bool):
            return "constant", f"{old.value!r}→{new.value!r}"
        if isinstance(old.value, (str, bytes)):
            return "string", None
        if old.value is None and isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return "assign", None
    if isinstance(old, ast.Call) and field_name in ("args", "keywords"):
        return "call-arg", None
    if isinstance(old, ast.keyword) and field_name == "arg":
        return "call-arg", None
    if isinstance(old, ast.Attribute) and field_name == "attr":
        return "method", f"{old.attr}→{new.attr}"
    if isinstance(parent, ast.Lambda):
        return "other", "lambda"
    return "other", None


def _source(node: Any) -> str:
    """``ast.unparse`` of a node, or its type name when it cannot be unparsed alone."""
    try:
        return ast.unparse(node)
    except Exception:  # an operator node on its own, or something unparse does not know
        return type(node).__name__


def mutmut_records(project: Path, w: Workload) -> list[Record]:
    """Every mutant of a finished mutmut run: status from the meta file, change from the ASTs."""
    rel = f"{w.module}.py"
    meta = json.loads((project / "mutants" / f"{rel}.meta").read_text())
    mutated = ast.parse((project / "mutants" / rel).read_text())
    original = ast.parse((project / rel).read_text())
    mutated_defs = {
        node.name: node for node in ast.walk(mutated) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    original_defs = _defs(original)
    records = []
    for key, exit_code in sorted(meta["exit_code_by_key"].items()):
        status = MUTMUT_STATUS.get(exit_code, "suspicious")
        short = key.rpartition(".")[2]
        match = _MUTMUT_NAME.match(short)
        line, kind, detail, description, context = 0, "other", None, "?", None
        if match:
            qual = f"{match['cls']}.{match['func']}" if match["cls"] else match["func"]
            orig_name = f"{short.rpartition('__mutmut_')[0]}__mutmut_orig"
            copy, mutant, source_def = mutated_defs.get(orig_name), mutated_defs.get(short), original_defs.get(qual)
            if copy is not None and mutant is not None and source_def is not None:
                in_signature = True
                diff = first_difference(copy.args, mutant.args, (copy, mutant))
                if diff is None:
                    in_signature = False
                    diff = first_difference(ast.Module(copy.body, []), ast.Module(mutant.body, []), (copy, mutant))
                if diff is not None:
                    old, new, parent, field_name, (old_anchor, new_anchor) = diff
                    kind, detail = classify_change(old, new, parent, field_name)
                    if in_signature:  # a default value: assay never mutates those
                        kind, detail = "default", None
                    at = old if hasattr(old, "lineno") else old_anchor
                    line = at.lineno - copy.lineno + source_def.lineno
                    shown_old = old if hasattr(old, "lineno") else old_anchor
                    shown_new = new if hasattr(new, "lineno") else new_anchor
                    description = f"`{_source(shown_old)[:60]}` -> `{_source(shown_new)[:60]}`"
                    if kind in CONTEXT_KINDS:
                        context = _source(old_anchor).replace("\n", " ")
        records.append(
            Record(
                "mutmut", key, rel, line, kind, detail, status, NORMALIZED.get(status, "other"), description, context
            )
        )
    records.sort(key=lambda r: (r.line, _mutant_number(r.name)))
    return records


def _mutant_number(name: str) -> int:
    """The ``n`` of a ``..__mutmut_<n>`` name (-1 for others), for numeric ordering."""
    tail = name.rpartition("__mutmut_")[2]
    return int(tail) if tail.isdigit() else -1


# =========================================================================================
# assay
# =========================================================================================


def assay_command(args: argparse.Namespace) -> list[str]:
    """How to start assay: ``--assay`` split on spaces, else the venv's ``assay`` script."""
    if args.assay:
        return args.assay.split()
    script = Path(sys.executable).parent / "assay"
    return [str(script)] if script.exists() else [sys.executable, "-m", "assay"]


def load_assay_report(path: Path, workload: Workload) -> tuple[list[Record], dict[str, Any]]:
    """Parse ``assay mutant --report`` JSON into records (the one place that knows its format).

    Expects ``{"schema_version": 1, "mutants": [{"id", "path", "line", "operator",
    "description", "verdict", "killed_by", "fuzz"/"evidence": {...}}, ...],
    "counts": {...}, "elapsed": s}``; missing fields get defaults, unknown ones are
    ignored.  A fuzz kill's input is looked for in ``fuzz.input`` (hex) or
    ``evidence.input``.
    """
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    version = data.get("schema_version")
    if version not in (None, 1):
        say(f"warning: {path} has schema_version {version!r}; reading it as version 1")
    records = []
    for m in data.get("mutants") or []:
        operator = str(m.get("operator") or m.get("family") or "?")
        description = str(m.get("description") or "")
        kind = ASSAY_KINDS.get(operator, "other")
        became = _BECAME.match(description)
        detail = f"{became[1]}→{became[2]}" if became else None
        if operator == "constant.empty" and detail in ("True→False", "False→True"):
            kind = "boolean"
        if kind not in ("comparison", "boolean", "arithmetic", "constant"):
            detail = None
        quoted = _QUOTED_IN.search(description) if kind in CONTEXT_KINDS else None
        status = str(m.get("verdict") or "?")
        evidence = m.get("fuzz") or m.get("evidence") or {}
        extra = {"killed_by": m.get("killed_by"), "operator": operator}
        if isinstance(evidence, dict) and evidence:
            extra["fuzz"] = {
                k: evidence.get(k)
                for k in ("status", "target", "cases", "input", "detail", "artifact", "kill_kind")
                if evidence.get(k) is not None
            }
        path_text = str(m.get("path") or f"{workload.module}.py").replace("\\", "/")
        records.append(
            Record(
                "assay",
                str(m.get("id")),
                path_text,
                int(m.get("line") or 0),
                kind,
                detail,
                status,
                NORMALIZED.get(status, "other"),
                description,
                quoted[1] if quoted else None,
                extra,
            )
        )
    return records, data


def run_assay(
    args: argparse.Namespace, w: Workload, project: Path, jobs: int, rerun: bool, fuzz: bool = False
) -> RunResult:
    """``assay mutant --project DIR --jobs JOBS --report FILE`` (and again for the re-run)."""
    report = project.parent / "assay-report.json"
    cmd = [*assay_command(args), "mutant", "--project", str(project), "--jobs", str(jobs), "--report", str(report)]
    if fuzz:
        cmd += ["--fuzz", "on", "--fuzz-seed", "1", "--fuzz-cases", str(args.fuzz_cases)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if args.assay_src:  # another tree's assay (an older commit, say) in this venv
        env["PYTHONPATH"] = str(args.assay_src.resolve())
    cpu_before = children_cpu()
    code, seconds, tail = run(
        cmd, cwd=project, log=project.parent / ("assay-fuzz.log" if fuzz else "assay-run.log"), env=env
    )
    cpu = children_cpu() - cpu_before
    if code not in (0, 1) or not report.exists():
        return RunResult("assay", w.name, False, seconds, None, 0, {}, [], f"exit {code}:\n{tail}")
    try:
        records, data = load_assay_report(report, w)
    except (ValueError, KeyError, TypeError) as exc:
        return RunResult("assay", w.name, False, seconds, None, 0, {}, [], f"unreadable report: {exc}")
    shutil.copy2(report, project.parent / ("assay-report-fuzz.json" if fuzz else "assay-report-first.json"))
    rerun_seconds = None
    if rerun:
        code, rerun_seconds, tail = run(cmd, cwd=project, log=project.parent / "assay-rerun.log", env=env)
        if code not in (0, 1):
            say(f"assay re-run failed (exit {code}):\n{tail}")
            rerun_seconds = None
        elif report.exists():
            shutil.copy2(report, project.parent / "assay-report-rerun.json")
    elapsed = data.get("elapsed")
    return RunResult(
        "assay",
        w.name,
        True,
        seconds,
        rerun_seconds,
        len(records),
        dict(Counter(r.status for r in records)),
        records,
        report_elapsed=float(elapsed) if isinstance(elapsed, (int, float)) else None,
        cpu_seconds=cpu,
    )


# =========================================================================================
# Matching and agreement
# =========================================================================================


def pair_mutants(
    left: list[Record], right: list[Record]
) -> tuple[list[tuple[Record, Record, bool]], list[Record], list[Record]]:
    """Pairs of mutants of the two tools at the same (path, line, kind); (pairs, unpaired left, unpaired right).

    Within a group, mutants with the same detail pair first (``True`` in the pair:
    the same change), the rest in order (``False``: same line and kind only).
    """
    groups: dict[tuple[str, int, str], tuple[list[Record], list[Record]]] = defaultdict(lambda: ([], []))
    for r in left:
        groups[(r.path, r.line, r.kind)][0].append(r)
    for r in right:
        groups[(r.path, r.line, r.kind)][1].append(r)
    pairs: list[tuple[Record, Record, bool]] = []
    lone_left: list[Record] = []
    lone_right: list[Record] = []
    for key in sorted(groups):
        ls, rs = groups[key]
        taken: set[int] = set()
        rest = []
        for lrec in ls:
            j = next((j for j, rrec in enumerate(rs) if j not in taken and same_change(lrec, rrec)), None)
            if j is None:
                rest.append(lrec)
            else:
                taken.add(j)
                pairs.append((lrec, rs[j], True))
        others = [rrec for j, rrec in enumerate(rs) if j not in taken]
        pairs.extend((a, b, False) for a, b in zip(rest, others))
        lone_left.extend(rest[len(others) :])
        lone_right.extend(others[len(rest) :])
    return pairs, lone_left, lone_right


def same_change(a: Record, b: Record) -> bool:
    """Same detail and, where both quote the mutated operation, the same operation (quotes may be cut with "...")."""
    if not a.detail or a.detail != b.detail:
        return False
    if a.context is None or b.context is None:
        return True
    x, y = a.context.removesuffix("..."), b.context.removesuffix("...")
    return x.startswith(y) or y.startswith(x)


def agreement(mutmut: list[Record], assay: list[Record]) -> dict[str, Any]:
    """Verdict agreement on the mutants both tools generate, and the disagreements."""
    pairs, lone_m, lone_a = pair_mutants(mutmut, assay)
    judged = [
        (m, a, same)
        for m, a, same in pairs
        if m.verdict in DETECTED | UNDETECTED and a.verdict in DETECTED | UNDETECTED
    ]
    cells = Counter((m.verdict in DETECTED, a.verdict in DETECTED) for m, a, _ in judged)
    exact = [(m, a) for m, a, same in judged if same]
    agree = cells[(True, True)] + cells[(False, False)]
    return {
        "pairs": len(pairs),
        "same_change": sum(1 for p in pairs if p[2]),
        "judged": len(judged),
        "agree": agree,
        "judged_same_change": len(exact),
        "agree_same_change": sum(1 for m, a in exact if (m.verdict in DETECTED) == (a.verdict in DETECTED)),
        "both_detected": cells[(True, True)],
        "both_undetected": cells[(False, False)],
        "mutmut_only": [
            pair_json(m, a, same)
            for m, a, same in first_same(judged)
            if m.verdict in DETECTED and a.verdict not in DETECTED
        ],
        "assay_only": [
            pair_json(m, a, same)
            for m, a, same in first_same(judged)
            if a.verdict in DETECTED and m.verdict not in DETECTED
        ],
        "unpaired_mutmut": dict(Counter(r.kind for r in lone_m).most_common()),
        "unpaired_assay": dict(Counter(r.kind for r in lone_a).most_common()),
    }


def first_same(pairs: list[tuple[Record, Record, bool]]) -> list[tuple[Record, Record, bool]]:
    """Pairs of the same change first (their disagreements need explaining most), then by line."""
    return sorted(pairs, key=lambda p: (not p[2], p[0].line))


def pair_json(m: Record, a: Record, same: bool) -> dict[str, Any]:
    """A disagreeing pair as JSON data: both tools' names, statuses and descriptions."""
    return {
        "line": m.line,
        "kind": m.kind,
        "same_change": same,
        "mutmut": {"name": m.name, "status": m.status, "change": m.description},
        "assay": {
            "id": a.name,
            "status": a.verdict,
            "operator": a.extra.get("operator"),
            "description": a.description,
            "killed_by": a.extra.get("killed_by"),
        },
    }


def flips(runs: list[RunResult]) -> int:
    """Mutants (by name) whose normalized verdict differs between repeats."""
    seen: dict[str, set[str]] = defaultdict(set)
    for r in runs:
        for rec in r.records:
            seen[rec.name].add(rec.verdict)
    return sum(1 for v in seen.values() if len(v) > 1)


# =========================================================================================
# Output
# =========================================================================================


def _median(values: list[float]) -> float | None:
    """Median, or None for no values."""
    return statistics.median(values) if values else None


def summarize(runs: list[RunResult]) -> dict[str, Any]:
    """Medians over the successful repeats of one tool on one workload."""
    ok = [r for r in runs if r.ok]
    if not ok:
        return {"ok": 0, "error": runs[-1].error if runs else "not run"}
    seconds = [r.seconds for r in ok]
    rates = [r.mutants / r.seconds for r in ok if r.seconds > 0]
    speedups = [r.seconds / r.rerun_seconds for r in ok if r.rerun_seconds]
    return {
        "ok": len(ok),
        "mutants": ok[0].mutants,
        "seconds": _median(seconds),
        "seconds_all": [round(s, 1) for s in seconds],
        "mutants_per_s": _median(rates),
        "rerun_seconds": _median([r.rerun_seconds for r in ok if r.rerun_seconds]),
        "rerun_speedup": _median(speedups),
        "statuses": ok[0].statuses,
        "flips": flips(ok),
        "report_elapsed": _median([r.report_elapsed for r in ok if r.report_elapsed]),
        "cpu_per_mutant": _median([r.cpu_seconds / r.mutants for r in ok if r.cpu_seconds and r.mutants]),
        "cpu_all": [round(r.cpu_seconds, 1) for r in ok if r.cpu_seconds is not None],
    }


def fmt(value: float | None, spec: str) -> str:
    """``value`` formatted, or "-" for None."""
    return "-" if value is None else format(value, spec)


def print_table(
    summaries: dict[tuple[str, str], dict[str, Any]], workloads: list[str], tools: list[str], jobs: int
) -> None:
    """The main table: one row per workload and tool."""
    header = [
        "workload",
        "tool",
        "mutants",
        "seconds",
        "mutants/s",
        "vs mutmut",
        "CPU s/mutant",
        "CPU vs mutmut",
        "re-run s",
        "re-run x",
        "flips",
        "statuses",
    ]
    rows = []
    for wname in workloads:
        base = summaries.get((wname, "mutmut"), {}).get("mutants_per_s")
        base_cpu = summaries.get((wname, "mutmut"), {}).get("cpu_per_mutant")
        for tool in tools:
            s = summaries.get((wname, tool))
            if not s:
                continue
            if not s["ok"]:
                rows.append([wname, tool, "failed", "", "", "", "", "", "", "", "", s["error"].splitlines()[0][:60]])
                continue
            ratio = s["mutants_per_s"] / base if base and s["mutants_per_s"] else None
            cpu_ratio = s["cpu_per_mutant"] / base_cpu if base_cpu and s["cpu_per_mutant"] else None
            statuses = ", ".join(f"{n} {k}" for k, n in sorted(s["statuses"].items(), key=lambda kv: -kv[1]))
            rows.append(
                [
                    wname,
                    tool,
                    str(s["mutants"]),
                    fmt(s["seconds"], ".1f"),
                    fmt(s["mutants_per_s"], ".2f"),
                    fmt(ratio, ".2f") + ("x" if ratio else ""),
                    fmt(s["cpu_per_mutant"], ".3f"),
                    fmt(cpu_ratio, ".2f") + ("x" if cpu_ratio else ""),
                    fmt(s["rerun_seconds"], ".1f"),
                    fmt(s["rerun_speedup"], ".1f") + ("x" if s["rerun_speedup"] else ""),
                    str(s["flips"]),
                    statuses,
                ]
            )
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(
        f"mutation testing, --jobs {jobs}; seconds = median wall clock of the first (cold) run; "
        "CPU = user+system seconds of all its processes over its mutants"
    )
    for r in [header, ["-" * w for w in widths], *rows]:
        print(
            "  ".join(
                str(c).ljust(w) if i < 2 or i == len(r) - 1 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(r, widths))
            ).rstrip()
        )


def print_agreement(wname: str, ag: dict[str, Any], show: int) -> None:
    """The agreement summary of one workload and its first ``show`` disagreements each way."""
    judged, same = ag["judged"], ag["judged_same_change"]
    print()
    print(f"verdict agreement on {wname} (mutants paired by line and kind; detected = killed or timeout):")
    print(
        f"  pairs: {ag['pairs']} ({ag['same_change']} the same change, the rest the same line and kind only); "
        f"{judged} with a verdict on both sides"
    )
    if judged:
        print(
            f"  agree: {ag['agree']}/{judged} ({ag['agree'] / judged:.1%}); on the same change: "
            f"{ag['agree_same_change']}/{same}" + (f" ({ag['agree_same_change'] / same:.1%})" if same else "")
        )
    print(
        f"  both detected {ag['both_detected']}, both not {ag['both_undetected']}, "
        f"only mutmut detected {len(ag['mutmut_only'])}, only assay detected {len(ag['assay_only'])}"
    )
    print(
        "  unpaired mutmut mutants by kind: "
        + (", ".join(f"{k} {n}" for k, n in ag["unpaired_mutmut"].items()) or "none")
    )
    print(
        "  unpaired assay mutants by kind:  "
        + (", ".join(f"{k} {n}" for k, n in ag["unpaired_assay"].items()) or "none")
    )
    for title, items in (
        ("mutmut detected, assay did not", ag["mutmut_only"]),
        ("assay detected, mutmut did not", ag["assay_only"]),
    ):
        if not items:
            continue
        same = sum(1 for d in items if d["same_change"])
        print(f"  {title}: {len(items)} ({same} the same change){f', first {show}' if len(items) > show else ''}:")
        for d in items[:show]:
            tag = "same change" if d["same_change"] else "line+kind"
            print(f"    line {d['line']:<5} {d['kind']:<11} ({tag})")
            print(
                f"      mutmut {d['mutmut']['status']:<9} {d['mutmut']['name']}: {d['mutmut']['change'][:DESCRIPTION_CHARS]}"
            )
            print(
                f"      assay  {d['assay']['status']:<9} {d['assay']['operator']}: {d['assay']['description'][:DESCRIPTION_CHARS]}"
            )


def fuzz_kills(result: RunResult) -> list[dict[str, Any]]:
    """assay's ``killed-by-fuzz`` mutants with the input that told them apart."""
    kills = []
    for r in result.records:
        if r.status != "killed-by-fuzz":
            continue
        ev = r.extra.get("fuzz", {})
        raw = ev.get("input")
        shown: str
        if isinstance(raw, str):
            try:
                shown = repr(bytes.fromhex(raw))
            except ValueError:
                shown = repr(raw)
        else:
            shown = repr(raw)
        kills.append(
            {
                "id": r.name,
                "line": r.line,
                "operator": r.extra.get("operator"),
                "description": r.description,
                "target": ev.get("target"),
                "input": shown,
                "detail": ev.get("detail", ""),
                "kill_kind": ev.get("kill_kind"),
            }
        )
    return kills


def print_fuzz(wname: str, result: RunResult, show: int) -> None:
    """The ``--fuzz on`` run of one workload: its kills, each with its input."""
    print()
    if not result.ok:
        print(f"assay --fuzz on, {wname}: failed ({result.error.splitlines()[0][:100]})")
        return
    kills = fuzz_kills(result)
    survived = result.statuses.get("survived", 0)
    kinds = Counter(str(k["kill_kind"] or "unclassified") for k in kills)
    split = ", ".join(f"{n} by {kind}" for kind, n in sorted(kinds.items()))
    print(
        f"assay --fuzz on, {wname}: {len(kills)} killed-by-fuzz ({split}), "
        f"{survived} still survived, {result.seconds:.1f} s"
    )
    for k in kills[: show * 2]:
        print(f"  line {k['line']:<5} {k['operator']}: {k['description'][:DESCRIPTION_CHARS]}")
        print(f"    input {k['input'][:120]}  ({k['target']}) {str(k['detail'])[:100]}")


# =========================================================================================
# Main
# =========================================================================================


def main(argv: list[str] | None = None) -> int:
    """Prepare, run, compare, print; exit 1 when any tool run failed."""
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--work", type=Path, default=DEFAULT_WORK, help=f"work folder (default {DEFAULT_WORK.relative_to(ROOT)})"
    )
    ap.add_argument("--repeat", type=int, default=3, help="interleaved repeats per tool and workload (default 3)")
    ap.add_argument("--jobs", type=int, default=2, help="mutmut --max-children and assay --jobs (default 2)")
    ap.add_argument(
        "--workloads", default=",".join(WORKLOADS), help="comma-separated subset of: " + ", ".join(WORKLOADS)
    )
    ap.add_argument("--tools", default="mutmut,assay", help="comma-separated subset of: mutmut, assay")
    ap.add_argument("--no-rerun", action="store_true", help="skip the second (cached) run of each tool")
    ap.add_argument(
        "--fuzz", action="store_true", help="one more assay run per workload with --fuzz on; list its kills"
    )
    ap.add_argument(
        "--fuzz-cases", type=int, default=2000, help="with --fuzz: assay's --fuzz-cases, per survivor (default 2000)"
    )
    ap.add_argument("--assay", default=None, help="command that starts assay (default: the venv's assay script)")
    ap.add_argument(
        "--assay-src",
        type=Path,
        default=None,
        help="run the assay package of this src/ folder (PYTHONPATH), e.g. a worktree of an older commit",
    )
    ap.add_argument("--show", type=int, default=SHOW_DISAGREEMENTS, help="disagreements printed per direction")
    ap.add_argument("--json", type=Path, default=None, help="write every number and disagreement here")
    args = ap.parse_args(argv)

    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"unknown workload {w!r}")
    for t in tools:
        if t not in ("mutmut", "assay"):
            ap.error(f"unknown tool {t!r}")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    templates = {w: prepare_workload(work, WORKLOADS[w]) for w in workloads}
    bin_dir = mutmut_venv(work) if "mutmut" in tools else None

    revision = assay_revision(args.assay_src.resolve().parent if args.assay_src else ROOT)
    load_start = os.getloadavg()
    started = time.perf_counter()
    results: dict[tuple[str, str], list[RunResult]] = defaultdict(list)
    for i in range(args.repeat):
        for wname in workloads:
            w = WORKLOADS[wname]
            for tool in tools:
                project = fresh_copy(templates[wname], work / "runs" / f"{wname}-{tool}-{i + 1}")
                say(f"[{i + 1}/{args.repeat}] {tool} on {wname} ...")
                if tool == "mutmut":
                    assert bin_dir is not None
                    res = run_mutmut(bin_dir, w, project, args.jobs, not args.no_rerun)
                else:
                    res = run_assay(args, w, project, args.jobs, not args.no_rerun)
                results[(wname, tool)].append(res)
                if res.ok:
                    rerun = f", re-run {res.rerun_seconds:.1f} s" if res.rerun_seconds else ""
                    say(
                        f"    {res.mutants} mutants in {res.seconds:.1f} s ({res.mutants / res.seconds:.2f}/s){rerun}; "
                        + ", ".join(f"{n} {k}" for k, n in sorted(res.statuses.items()))
                    )
                else:
                    say(f"    FAILED: {res.error}")
    fuzz_results: dict[str, RunResult] = {}
    if args.fuzz and "assay" in tools:
        for wname in workloads:
            project = fresh_copy(templates[wname], work / "runs" / f"{wname}-assay-fuzz")
            say(f"assay --fuzz on, {wname} ...")
            fuzz_results[wname] = run_assay(args, WORKLOADS[wname], project, args.jobs, False, fuzz=True)
    total = time.perf_counter() - started

    summaries = {key: summarize(runs) for key, runs in results.items()}
    print(
        f"machine: {os.cpu_count()} cores, load average {load_start[0]:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end; {total:.0f} s in all; Python {sys.version.split()[0]}; "
        f"{MUTMUT_REQUIREMENT}; assay at {revision}; {args.repeat} repeat(s)"
    )
    if summaries:
        print()
        print_table(summaries, workloads, tools, args.jobs)
    agreements: dict[str, Any] = {}
    for wname in workloads:
        m_runs = [r for r in results.get((wname, "mutmut"), []) if r.ok]
        a_runs = [r for r in results.get((wname, "assay"), []) if r.ok]
        if m_runs and a_runs:
            agreements[wname] = agreement(m_runs[0].records, a_runs[0].records)
            print_agreement(wname, agreements[wname], args.show)
    for wname, res in fuzz_results.items():
        print_fuzz(wname, res, args.show)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "summaries": {f"{w}/{t}": s for (w, t), s in summaries.items()},
                    "agreement": agreements,
                    "fuzz": {
                        w: {"ok": r.ok, "seconds": r.seconds, "statuses": r.statuses, "kills": fuzz_kills(r)}
                        for w, r in fuzz_results.items()
                    },
                    "records": {
                        f"{w}/{t}": [asdict(rec) for rec in runs[0].records]
                        for (w, t), runs in results.items()
                        if runs and runs[0].ok
                    },
                },
                indent=1,
                default=str,
            )
        )
    failed = any(not s["ok"] for s in summaries.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
