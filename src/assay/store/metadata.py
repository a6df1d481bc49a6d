"""The schema of an artifact's ``metadata.json``, checked field by field.

Artifacts travel (CI uploads them, pull requests carry them), so their metadata is
untrusted data: :func:`check_metadata` checks the type of every field assay reads
before anything reads it, and raises :class:`~assay.core.errors.ArtifactError`
naming the artifact, the field and what was expected.  Fields assay does not know
are left alone (a newer assay may write more); known fields must have their type.

Nothing here imports, runs or opens what a field names: ``harness`` and the files of
``exception.frames`` are strings to show and compare, never paths to load (see
:func:`assay.harness.paths.registry_for`).  This validator is explicit on purpose:
``jsonschema`` is an optional extra.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.core.errors import ArtifactError

#: A check returns None when the value fits, else what was expected (for the message).
Check = Callable[[Any], str | None]

_SHA256 = re.compile(r"[0-9a-f]{64}")


def _is(kind: type | tuple[type, ...], expected: str) -> Check:
    kinds = kind if isinstance(kind, tuple) else (kind,)

    def check(value: Any) -> str | None:
        if isinstance(value, bool) and bool not in kinds:
            return expected  # JSON true is not a number
        return None if isinstance(value, kinds) else expected

    return check


_STR = _is(str, "a string")
_INT = _is(int, "a whole number")
_NUMBER = _is((int, float), "a number")
_BOOL = _is(bool, "true or false")
_OBJECT = _is(dict, "an object")


def _optional(check: Check) -> Check:
    def optional(value: Any) -> str | None:
        problem = check(value)
        return None if value is None or problem is None else f"{problem} or null"

    return optional


def _sha256(value: Any) -> str | None:
    return None if isinstance(value, str) and _SHA256.fullmatch(value) else "64 lowercase hex digits (a SHA-256)"


def _str_list(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    return None if ok else "a list of strings"


def _frame(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "an object"
    for key, check in (("module", _STR), ("qualname", _STR), ("file", _STR), ("line", _INT)):
        if key not in value or check(value[key]) is not None:
            return f"an object with {check(None)} {key!r}"
    unknown = sorted(set(value) - {"module", "qualname", "file", "line"})
    return f"an object without {unknown[0]!r}" if unknown else None


#: ``exception`` (top level and inside ``verdict``): what :meth:`ExceptionInfo.from_json` reads.
EXCEPTION_FIELDS: dict[str, Check] = {
    "type": _STR,
    "message": _STR,
    "frames": lambda v: None if isinstance(v, list) else "a list of frames",
    "traceback": _STR,
    "cycle": _optional(_str_list),
}

#: ``verdict``: what :meth:`Verdict.from_json` reads (``oracle`` and ``key`` are required).
VERDICT_FIELDS: dict[str, Check] = {
    "oracle": _STR,
    "key": _STR,
    "signature": _STR,
    "detail": _optional(_STR),
    "data": _optional(_OBJECT),
}

#: Top-level fields: the required ones, then every optional one assay reads.
REQUIRED = ("target", "signature", "verdict", "input_sha256")
FIELDS: dict[str, Check] = {
    "target": _STR,
    "signature": _STR,
    "input_sha256": _sha256,
    "schema_version": _INT,
    "backend": _optional(_STR),
    "oracle": _optional(_STR),
    "harness": _optional(_STR),
    "harness_finding": _optional(_BOOL),
    "bug": _optional(_STR),
    "sources": _optional(_str_list),
    "mutation_operators": _optional(_str_list),
    "campaign_seed": _optional(_INT),
    "target_seed": _optional(_INT),
    "case_index": _optional(_INT),
    "original_sha256": _optional(_sha256),
    "original_size": _optional(_INT),
    "minimized_size": _optional(_INT),
    "first_seen": _optional(_STR),
    "first_seen_seconds": _optional(_NUMBER),
    "first_seen_case": _optional(_INT),
    "determinism": _optional(_OBJECT),
    "strategy": _optional(_STR),
    "mutant_id": _optional(_STR),
    "mutant": _optional(_OBJECT),
    "mutant_diff": _optional(_STR),
    "build": _optional(_OBJECT),
}


def check_metadata(meta: Any, where: str | Path) -> dict[str, Any]:
    """``meta`` when it fits the schema; else :class:`ArtifactError` naming ``where``, the field and the type wanted."""
    if not isinstance(meta, dict):
        raise ArtifactError(f"{where} holds {type(meta).__name__}, not an object; restore or delete the artifact")
    for key in REQUIRED:
        if key not in meta:
            raise ArtifactError(f"{where} lacks {key!r}; it was not written by this version of assay")
    for key, check in FIELDS.items():
        if key in meta:
            _field(where, key, meta[key], check)
    verdict = meta["verdict"]
    if not isinstance(verdict, dict):
        _bad(where, "verdict", verdict, "an object with string 'oracle' and 'key'")
    for key in ("oracle", "key"):
        if key not in verdict:
            _bad(where, f"verdict.{key}", None, "a string (it is missing)")
    for key, check in VERDICT_FIELDS.items():
        if key in verdict:
            _field(where, f"verdict.{key}", verdict[key], check)
    for name, exc in (("exception", meta.get("exception")), ("verdict.exception", verdict.get("exception"))):
        if exc is None:
            continue
        if not isinstance(exc, dict):
            _bad(where, name, exc, "an object (type, message, frames, traceback) or null")
        for key, check in EXCEPTION_FIELDS.items():
            if key in exc:
                _field(where, f"{name}.{key}", exc[key], check)
        for i, frame in enumerate(exc.get("frames") or ()):
            _field(where, f"{name}.frames[{i}]", frame, _frame)
    return meta


def _field(where: str | Path, name: str, value: Any, check: Check) -> None:
    expected = check(value)
    if expected is not None:
        _bad(where, name, value, expected)


def _bad(where: str | Path, name: str, value: Any, expected: str) -> None:
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    raise ArtifactError(
        f"{where}: {name!r} must be {expected}, not {shown}; the artifact is damaged or was not written by assay"
    )


def showable_harness(recorded: object) -> str | None:
    """A harness path an artifact's metadata records, when it is a plain ``.py`` path worth
    showing to the user; ``None`` otherwise.  Only ever printed: artifacts are data, and a
    path from their metadata is never imported on their word."""
    if isinstance(recorded, str) and recorded and recorded.isprintable() and recorded.endswith(".py"):
        return recorded
    return None
