"""Refuse a leaves file that is clearly not one command per line.

A JSON pool passed as ``--leaves`` used to be read line by line: every ``"ls",``
and ``"command": "rm -rf /",`` became a "command", the classifier denied them all
and the run ended with "no findings".  Before any line is read as a leaf, the
whole text is checked: a JSON document, a file whose lines are mostly JSON
fragments (quoted strings, ``"key": value`` pairs, brackets, JSON Lines) and a
YAML list are refused with one message saying how to write the file instead.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from assay.core.errors import ConfigError

#: Below this many content lines the line-shape heuristics stay silent (one odd line proves nothing).
MIN_LINES = 2
#: Share of content lines that must look like JSON or YAML fragments before the file is refused.
FRAGMENT_SHARE = 0.5

_KEY_VALUE = re.compile(r'^"(?:[^"\\]|\\.)*"\s*:')
_BRACKETS = re.compile(r"^[\[\]{}]+,?$")
_YAML_ITEM = re.compile(r"^- \S")


def _json_fragment(line: str) -> bool:
    """True for a line that only makes sense inside JSON: ``"ls",``, ``"k": v``, ``[``, ``{...}``."""
    if _KEY_VALUE.match(line) or _BRACKETS.match(line):
        return True
    try:
        value = json.loads(line.rstrip(","))
    except ValueError:
        return False
    return isinstance(value, (str, list, dict))


def _describe_json(data: Any) -> str:
    if isinstance(data, dict):
        return f"a JSON object with keys {', '.join(repr(k) for k in list(data)[:6])}"
    kinds = {type(x).__name__ for x in data}
    if kinds == {"str"}:
        return f"a JSON list of {len(data)} strings"
    if kinds == {"dict"}:
        keys = sorted({k for x in data for k in x})[:6]
        return f"a JSON list of {len(data)} objects with keys {', '.join(repr(k) for k in keys)}"
    return f"a JSON list of {len(data)} items"


def _how_to_convert(data: Any, path: str) -> str:
    if isinstance(data, list) and data and all(isinstance(x, str) for x in data):
        return (
            "; convert it with: python -c \"import json,sys; print(*json.load(open(sys.argv[1])), sep='\\n')\" "
            f"{path} > leaves.txt"
        )
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        strings = sorted({k for x in data for k, v in x.items() if isinstance(v, str)})
        if strings:
            key = "command" if "command" in strings else strings[0]
            return (
                '; convert it with: python -c "import json,sys; '
                f"print(*(o['{key}'] for o in json.load(open(sys.argv[1]))), sep='\\n')\" {path} > leaves.txt"
            )
    return ""


def not_leaves_reason(text: str, path: str = "the leaves file") -> str | None:
    """Why ``text`` is clearly not one command per line (with how to fix it), or ``None``."""
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, (list, dict)):
            return f"it is {_describe_json(data)}" + _how_to_convert(data, path)
    lines = [
        (n, ln.strip()) for n, ln in enumerate(text.split("\n"), 1) if ln.strip() and not ln.strip().startswith("#")
    ]
    if len(lines) < MIN_LINES:
        return None
    for label, test in (
        ('JSON fragments (quoted strings, "key": value pairs, brackets)', _json_fragment),
        ("YAML list items ('- ...')", lambda ln: bool(_YAML_ITEM.match(ln))),
    ):
        hits = [(n, ln) for n, ln in lines if test(ln)]
        if len(hits) > FRAGMENT_SHARE * len(lines):
            n, ln = hits[0]
            return f"{len(hits)} of its {len(lines)} lines are {label}, e.g. line {n}: {ln[:80]!r}"
    return None


def refuse_non_leaves(path: str | os.PathLike[str], text: str) -> None:
    """Raise :class:`~assay.core.errors.ConfigError` if ``text`` (read from ``path``) is not a leaves file."""
    reason = not_leaves_reason(text, os.fspath(path))
    if reason:
        raise ConfigError(
            f"leaves file {os.fspath(path)} is not one command per line: {reason}. "
            "--leaves takes a text file with one shell command per line ('#' comments, optional "
            "'allow:'/'deny:' prefixes)"
        )
