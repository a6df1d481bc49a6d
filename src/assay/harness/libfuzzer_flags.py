"""libFuzzer-style flags on ``assay fuzz``, as atheris harnesses are usually started.

``assay fuzz harness.py -runs=1000 -max_len=256 -dict=x.dict CORPUS`` means what
``python harness.py -runs=1000 -max_len=256 -dict=x.dict CORPUS`` means to atheris.
:func:`translate` rewrites such flags into assay's own options before argparse
sees the command line; a flag with no counterpart stops the run (exit 2) with a
message naming what assay offers instead, and a flag that only tunes libFuzzer
internals assay does not have is accepted with a notice.  A harness may also pass
flags to ``atheris.Setup`` itself (``atheris.Setup(sys.argv + ["-max_len=64"], cb)``):
:func:`harness_settings` turns those into the settings of the target it defines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError

#: libFuzzer flag -> assay option taking the same value.
MAPPED = {
    "runs": "--fuzz-cases",
    "seed": "--fuzz-seed",
    "max_total_time": "--fuzz-budget",
    "jobs": "--jobs",
    "workers": "--jobs",
    "max_len": "--max-len",
    "timeout": "--timeout",
    "rss_limit_mb": "--rss-limit-mb",
    "malloc_limit_mb": "--rss-limit-mb",
    "dict": "--dict",
}
#: Flags accepted and ignored, with the reason the notice gives.
IGNORED = {
    "use_value_profile": "comparison feedback is always on",
    "use_cmp": "comparison feedback is always on",
    "print_final_stats": "assay always prints a summary",
    "print_pcs": "assay reports edges in its summary",
    "close_fd_mask": "assay keeps the target's output in its artifacts",
    "verbosity": "assay has one output level",
    "reload": "--jobs workers share their corpus on their own",
    "detect_leaks": "assay fuzzes Python code",
    "report_slow_units": "use slow=SECONDS on the target",
    "error_exitcode": "assay exits 1 for findings",
    "timeout_exitcode": "assay exits 1 for findings",
    "len_control": "assay grows inputs on its own up to max_len",
    "entropic": "assay has its own scheduler",
}
#: Flags with an assay counterpart that is not a flag of ``assay fuzz``.
EQUIVALENT = {
    "artifact_prefix": "--fuzz-artifacts DIR (a folder; one subfolder per finding)",
    "exact_artifact_path": "--fuzz-artifacts DIR (a folder; one subfolder per finding)",
    "merge": "`assay merge-corpus OUT IN...`",
    "set_cover_merge": "`assay merge-corpus OUT IN...`",
    "minimize_crash": "nothing: every finding is minimized (--shrink-cases N sets the effort)",
    "cleanse_crash": "nothing: every finding is minimized (--shrink-cases N sets the effort)",
    "fork": "--jobs N",
    "only_ascii": "a strategy=... on the target, or decoding the bytes in the target",
    "focus_function": "sources=[...] on the target",
    "seed_inputs": "seeds=[...] on the target, or the files in a corpus folder given as an argument",
    "help": "`assay fuzz --help`",
}
#: libFuzzer flags a harness passes to ``atheris.Setup`` that become settings of its target.
TARGET_SETTINGS = {
    "max_len": "max_len",
    "timeout": "timeout",
    "rss_limit_mb": "rss_limit_mb",
    "malloc_limit_mb": "rss_limit_mb",
    "dict": "dictionary",
}
_FLAG = re.compile(r"^-([a-z_]+)=(.*)$", re.DOTALL)


def translate(argv: list[str], takes_value: Callable[[str], bool], notify: Callable[[str], None]) -> list[str]:
    """``argv`` (the words after ``fuzz``) with libFuzzer flags rewritten and positional words moved last.

    ``takes_value(option)`` says whether an assay option consumes the next word, so
    that a positional word is never mistaken for an option's value.
    """
    options: list[str] = []
    positionals: list[str] = []
    words = iter(argv)
    for word in words:
        match = _FLAG.match(word)
        if match and not word.startswith("--"):
            options += _one(match.group(1), match.group(2), notify)
        elif word == "--":
            positionals += list(words)
        elif word.startswith("-") and word != "-":
            options.append(word)
            if "=" not in word and takes_value(word):
                options += [next(words, "")]
        else:
            positionals.append(word)
    return options + positionals


def harness_settings(args: Sequence[str], harness_dir: Path, notify: Callable[[str], None]) -> dict[str, Any]:
    """``make_target`` settings from the flags a harness gave ``atheris.Setup`` (other words are ignored).

    A ``-dict=`` file is looked for where atheris looks (the working folder), then beside
    the harness.  Flags that tune a whole run (``-runs``, ``-seed``...) belong on the
    ``assay fuzz`` command line, which also overrides the settings given here.
    """
    settings: dict[str, Any] = {}
    for word in args:
        match = _FLAG.match(word)
        if not match:
            continue
        flag, value = match.groups()
        if flag == "dict":
            path = Path(value)
            if not path.is_absolute() and not path.exists() and (harness_dir / path).exists():
                path = harness_dir / path
            settings["dictionary"] = tuple(read_dictionary(str(path)))
        elif flag in TARGET_SETTINGS:
            settings[TARGET_SETTINGS[flag]] = _integer(flag, value)
        elif flag not in IGNORED:
            notify(f"{word}, which the harness passes to atheris.Setup, is left out; give it to `assay fuzz` instead")
    return settings


def _one(flag: str, value: str, notify: Callable[[str], None]) -> list[str]:
    if flag == "runs":
        runs = _integer(flag, value)
        if runs < 0:
            return []  # libFuzzer's "run forever": assay's default budget applies
        return ["--fuzz-replay-only"] if runs == 0 else ["--fuzz-cases", str(runs)]
    if flag == "seed":
        seed = _integer(flag, value)
        return [] if seed == 0 else ["--fuzz-seed", str(seed)]  # libFuzzer: 0 means a random seed
    if flag in ("max_total_time", "rss_limit_mb", "malloc_limit_mb", "jobs", "workers", "max_len", "timeout"):
        number = _integer(flag, value)
        if flag == "max_total_time" and number <= 0:
            return []
        return [MAPPED[flag], str(number)]
    if flag in MAPPED:
        return [MAPPED[flag], value]
    if flag in IGNORED:
        notify(f"-{flag}={value} ignored: {IGNORED[flag]}")
        return []
    if flag in EQUIVALENT:
        raise ConfigError(f"-{flag} has no libFuzzer-style form in assay; use {EQUIVALENT[flag]}")
    known = ", ".join(f"-{name}" for name in MAPPED)
    raise ConfigError(
        f"unknown libFuzzer flag -{flag}; assay understands {known} (see `assay fuzz --help` for its own options)"
    )


def _integer(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"-{flag}={value}: {value!r} is not a whole number") from None


def read_dictionary(path: str) -> list[bytes]:
    """Tokens of a libFuzzer/AFL dictionary file (``name="value"`` lines, ``\\xNN`` escapes)."""
    try:
        text = open(path, encoding="latin-1").read()
    except OSError as exc:
        raise ConfigError(f"-dict/--dict {path}: cannot read it ({exc.strerror or exc})") from None
    tokens = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        first, last = line.find('"'), line.rfind('"')
        if first < 0 or last <= first:
            raise ConfigError(f'{path}:{number}: a dictionary line must be name="value" or "value", not {line!r}')
        tokens.append(_unescape(line[first + 1 : last], f"{path}:{number}"))
    return tokens


def _unescape(body: str, where: str) -> bytes:
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(ord(c))
            i += 1
        elif body[i + 1 : i + 2] in ("\\", '"'):
            out.append(ord(body[i + 1]))
            i += 2
        elif body[i + 1 : i + 2] == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2 : i + 4]):
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        else:
            raise ConfigError(f'{where}: bad escape in dictionary entry {body!r} (use \\\\, \\" or \\xNN)')
    return bytes(out)
