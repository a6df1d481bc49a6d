"""Sanitizer and libFuzzer reports -> signatures.

A native signature is ``native-<sanitizer>:<class>@<frames>``: the sanitizer
(``asan``, ``ubsan``, ``lsan``, ``timeout``, ``oom``, ``crash``), the class of the
report (``heap-buffer-overflow:READ:4``, ``SEGV-on-unknown-address:READ``, UBSan's
report type such as ``signed-integer-overflow``, ``timeout``, ``malloc``/``rss`` for
out-of-memory, ``leak``) and the top in-project frames by function name.  Frames of
the sanitizer runtime (``__asan_memcpy``, ``__interceptor_*``, allocators), libFuzzer
and libc are skipped; line numbers and addresses never enter the key.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from assay.core.verdict import Verdict

#: How many in-project frames make up a key (as for Python panics).
KEY_FRAMES = 3
#: Most lines of a report kept for the artifact.
MAX_REPORT_LINES = 400

#: Function-name prefixes of runtime frames that never name a bug.
RUNTIME_PREFIXES = (
    "__asan",
    "__interceptor_",
    "__sanitizer",
    "__ubsan",
    "__lsan",
    "__libc_",
    "fuzzer::",
    "__sanitizer_print_stack_trace",
    "_start",
    "__GI_",
    "__interceptor",
    "___interceptor_",
)
#: Allocator and process entry frames skipped too.
RUNTIME_FUNCTIONS = frozenset(
    {
        "malloc",
        "calloc",
        "realloc",
        "free",
        "main",
        "operator new",
        "operator delete",
        "operator new[]",
        "operator delete[]",
        "strdup",
        "memcpy",
        "memmove",
        "memset",
        "aligned_alloc",
        "posix_memalign",
        "valloc",
        "reallocarray",
    }
)

_ASAN = re.compile(r"==\d+==\s*ERROR: AddressSanitizer: (?P<what>.+?)(?: on (?:unknown )?address.*)?$")
_ACCESS = re.compile(r"^(?P<op>READ|WRITE) of size (?P<size>\d+)")
_SEGV_ACCESS = re.compile(r"The signal is caused by a (?P<op>READ|WRITE|UNKNOWN) memory access")
_UBSAN = re.compile(r"runtime error: ")
_UBSAN_SUMMARY = re.compile(r"SUMMARY: UndefinedBehaviorSanitizer: (?P<type>\S+)")
_LSAN = re.compile(r"==\d+==\s*ERROR: LeakSanitizer: detected memory leaks")
_LIBFUZZER = re.compile(r"==\d+==\s*ERROR: libFuzzer: (?P<what>.+)$")
_FRAME = re.compile(r"^\s*#(?P<n>\d+) 0x[0-9a-fA-F]+(?: in (?P<rest>.*))?(?P<bare>\s+\(.*)?$")
_BUILD_ID = re.compile(r"\s*\(BuildId: [0-9a-f]+\)\s*$")
_RAW_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-fA-F]+\s+\((?P<module>[^()\s]+)\+(?P<offset>0x[0-9a-fA-F]+)\)")
_LOCATION = re.compile(r"^(?P<file>.+?)(?::(?P<line>\d+))?(?::\d+)?$")


@dataclass(frozen=True)
class NativeFrame:
    """One symbolized frame: function name and, when known, its source file and line."""

    function: str
    file: str = ""
    line: int = 0

    @property
    def runtime(self) -> bool:
        name = self.function
        return not name or name.startswith(RUNTIME_PREFIXES) or name.split("(")[0] in RUNTIME_FUNCTIONS


@dataclass(frozen=True)
class NativeFailure:
    """One failure report read from libFuzzer's output."""

    sanitizer: str
    kind: str
    frames: tuple[NativeFrame, ...]
    key_frames: tuple[str, ...]
    headline: str
    report: str
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def oracle(self) -> str:
        return f"native-{self.sanitizer}"

    @property
    def key(self) -> str:
        return f"{self.kind}@{'<'.join(self.key_frames) or '?'}"

    @property
    def signature(self) -> str:
        return f"{self.oracle}:{self.key}"

    def verdict(self) -> Verdict:
        """The failure as a :class:`~assay.core.verdict.Verdict` (what artifacts and the promoter use)."""
        return Verdict(
            self.oracle,
            self.key,
            self.headline,
            None,
            {
                "sanitizer": self.sanitizer,
                "class": self.kind,
                "frames": [{"function": f.function, "file": f.file, "line": f.line} for f in self.frames],
            },
        )


def parse_frame(line: str) -> NativeFrame | None:
    """A frame line of a sanitizer stack trace, or None."""
    m = _FRAME.match(line)
    if not m:
        return None
    rest = _BUILD_ID.sub("", m.group("rest") or "").rstrip()
    if not rest:
        return NativeFrame("")
    if rest.endswith(")") and " (" in rest:  # "func (module+0x1234)": no source location
        return NativeFrame(_short(rest[: rest.rindex(" (")]))
    function, _, location = rest.rpartition(" ")
    if not function:
        return NativeFrame(_short(rest))
    loc = _LOCATION.match(location)
    return NativeFrame(
        _short(function), loc.group("file") if loc else location, int(loc.group("line") or 0) if loc else 0
    )


def _short(function: str) -> str:
    """A C++ function without its parameter list (``ns::f(int) const`` -> ``ns::f``)."""
    function = function.strip()
    depth, cut = 0, len(function)
    for i, ch in enumerate(function):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0 and not function.startswith("operator()"):
            cut = i
            break
    return function[:cut]


def _stack_after(lines: list[str], start: int) -> list[NativeFrame]:
    """The first stack trace at or after line ``start``."""
    frames: list[NativeFrame] = []
    for line in lines[start:]:
        frame = parse_frame(line)
        if frame is not None:
            frames.append(frame)
        elif frames:
            break
    return frames


def key_frames(frames: Iterable[NativeFrame], in_project, outermost: bool = False) -> tuple[str, ...]:
    """Function names of the top in-project frames (runtime frames skipped).

    ``in_project(path)`` says whether a source file belongs to the project.  Without
    any in-project frame, the non-runtime frames that have a source file are used.
    ``outermost`` keys by the outermost frames (for timeouts, whose innermost frame is
    wherever the alarm struck).
    """
    usable = [f for f in frames if not f.runtime]
    chosen = [f for f in usable if f.file and in_project(f.file)] or [f for f in usable if f.file]
    names: list[str] = []
    for f in chosen:
        if not names or names[-1] != f.function:
            names.append(f.function)
    return tuple(names[-KEY_FRAMES:] if outermost else names[:KEY_FRAMES])


def project_predicate(root: str | os.PathLike[str], files: Iterable[str] = ()) -> Callable[[str], bool]:
    """``in_project(path)``: under ``root`` or one of the build's input ``files``."""
    base = str(Path(root).resolve()) + os.sep
    known = {str(Path(f).resolve()) for f in files}

    def in_project(path: str) -> bool:
        p = str(Path(path).resolve()) if os.path.isabs(path) else str((Path(root) / path).resolve())
        return p in known or p.startswith(base)

    return in_project


def parse_report(text: str, in_project) -> NativeFailure | None:
    """The first failure reported in libFuzzer's output ``text``, or None when there is none."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        found = _classify(lines, i, line)
        if found is None:
            continue
        sanitizer, kind, stack_from, outermost = found
        frames = tuple(_stack_after(lines, stack_from))
        end = next(
            (j for j in range(i, min(len(lines), i + MAX_REPORT_LINES)) if lines[j].startswith("SUMMARY:")),
            min(len(lines), i + MAX_REPORT_LINES) - 1,
        )
        report = "\n".join(lines[i : end + 1])
        return NativeFailure(sanitizer, kind, frames, key_frames(frames, in_project, outermost), line.strip(), report)
    return None


def _classify(lines: list[str], i: int, line: str) -> tuple[str, str, int, bool] | None:
    """(sanitizer, class, line where its stack starts, key by outermost frames?) for a headline."""
    m = _ASAN.search(line)
    if m:
        what = m.group("what").split(" on ")[0].strip()
        kind = re.sub(r"[^0-9A-Za-z_.-]+", "-", what).strip("-")
        if " on " in line and "unknown address" in line:
            kind = f"{what.split()[0]}-on-unknown-address"
        for follow in lines[i + 1 : i + 6]:
            a = _ACCESS.search(follow.strip())
            if a:
                kind += f":{a.group('op')}:{a.group('size')}"
                break
            s = _SEGV_ACCESS.search(follow)
            if s:
                kind += f":{s.group('op')}"
                break
        return "asan", kind, i + 1, False
    if _UBSAN.search(line) and not line.startswith("SUMMARY"):
        kind = "undefined-behavior"
        for follow in lines[i + 1 : i + MAX_REPORT_LINES]:
            s = _UBSAN_SUMMARY.search(follow)
            if s:
                kind = s.group("type")
                break
        return "ubsan", kind, i + 1, False
    if _LSAN.search(line):
        return "lsan", "leak", i + 1, False
    m = _LIBFUZZER.search(line)
    if m:
        what = m.group("what")
        if what.startswith("timeout"):
            return "timeout", "timeout", i + 1, True
        if what.startswith("out-of-memory"):
            return "oom", "malloc" if "malloc(" in what else "rss", i + 1, False
        kind = re.sub(r"[^0-9A-Za-z_.-]+", "-", what.split("(")[0]).strip("-") or "error"
        return "crash", kind, i + 1, False
    return None


def raw_crash_key(text: str) -> str | None:
    """A key of a report written with ``symbolize=0``: its class and the module offsets of its first stack.

    Within one build the same key means the same signature, so a campaign knows a bug it
    has already found without symbolizing the report (which costs most of a restart).
    None when there is no report or its stack is symbolized.
    """
    lines = text.splitlines()
    for i, line in enumerate(lines):
        found = _classify(lines, i, line)
        if found is None:
            continue
        sanitizer, kind, start, _ = found
        offsets: list[str] = []
        for follow in lines[start:]:
            m = _RAW_FRAME.match(follow)
            if m:
                offsets.append(f"{os.path.basename(m.group('module'))}+{m.group('offset')}")
            elif offsets:
                break
        return f"{sanitizer}:{kind}@{','.join(offsets)}" if offsets else None
    return None


#: Seconds llvm-symbolizer may take over one report's stack.
SYMBOLIZE_TIMEOUT = 60.0


def symbolize_report(text: str, symbolizer: str | None) -> str:
    """``text`` with its ``#N 0x... (module+0xOFF)`` frames symbolized as ASan prints them.

    One ``llvm-symbolizer`` process for the whole report; return addresses (every frame
    but ``#0``) are looked up one byte back, as the sanitizers do, and inlined frames get
    lines of their own.  Frames it cannot name are left as they were; without a
    symbolizer the text is returned unchanged.
    """
    lines = text.splitlines()
    spots = [(i, m) for i, line in enumerate(lines) if (m := _RAW_FRAME.match(line))]
    if not symbolizer or not spots:
        return text
    queries = []
    for _, m in spots:
        offset = int(m.group("offset"), 16) - (0 if m.group(0).lstrip().startswith("#0 ") else 1)
        queries.append(f'"{m.group("module")}" 0x{offset:x}')
    try:
        r = subprocess.run(
            [symbolizer, "--inlining", "--demangle"],
            input="\n".join(queries) + "\n",
            capture_output=True,
            text=True,
            timeout=SYMBOLIZE_TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError):
        return text
    blocks = r.stdout.split("\n\n")
    out = list(lines)
    for (i, m), block in reversed(list(zip(spots, blocks, strict=False))):
        pairs = [p for p in zip(*[iter(block.strip("\n").splitlines())] * 2, strict=False) if p[0] != "??"]
        if not pairs:
            continue
        pc = m.group(0).split()[1]
        number = m.group(0).split()[0]
        out[i : i + 1] = [f"    {number} {pc} in {function} {location}" for function, location in pairs]
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
