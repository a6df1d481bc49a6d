"""Differential: ``json.loads`` against ``ast.literal_eval`` on their common subset.

A JSON document without ``true``/``false``/``null`` is, character for
character, also a Python literal; where both parsers accept a text they must
build the same value.  Every known way the two legitimately differ is an
explicit :class:`~assay.oracles.Allow` entry below, with its reason; what they
do not cover is a finding.
"""

from __future__ import annotations

import ast
import json
import math
import warnings

import assay
from assay.oracles import Allow, AllowList, differential


def _walk(value):
    yield value
    if isinstance(value, list):
        for v in value:
            yield from _walk(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _walk(v)


def _uses_json_only_values(data, a, b) -> bool:
    if not a.ok:
        return False
    # Re-read keeping every member: a duplicate key can hide a ``true`` that the
    # final dict no longer holds (json keeps the last value of a repeated key).
    every = json.loads(data, object_pairs_hook=lambda pairs: [v for pair in pairs for v in pair])
    return any(
        v is None or isinstance(v, bool) or (isinstance(v, float) and not math.isfinite(v)) for v in _walk(every)
    )


def _literal_eval_only(data, a, b) -> bool:
    return a.is_error and b.ok


def _json_slash_escape(data, a, b) -> bool:
    return a.ok and b.ok and "\\/" in data


def _both_reject(data, a, b) -> bool:
    return a.is_error and b.is_error


ALLOW = AllowList(
    Allow(
        "json-only-literals",
        "true/false/null, NaN and Infinity are JSON (or json-module) spellings with no Python "
        "literal; literal_eval rejects them (or reads 1e400 as inf where JSON text had a number): "
        "outside the common subset",
        _uses_json_only_values,
        pair=("json", "literal_eval"),
    ),
    Allow(
        "python-only-syntax",
        "literal_eval accepts Python syntax JSON forbids (single quotes, tuples, sets, bytes, "
        "complex, underscores in numbers, trailing commas, raw control characters in strings, "
        "comments, implicit string concatenation): json rejecting those is correct",
        _literal_eval_only,
        pair=("json", "literal_eval"),
    ),
    Allow(
        "json-solidus-escape",
        "JSON's \\/ escape means '/'; in Python '\\/' is not an escape and keeps the backslash "
        "(RFC 8259 section 7 against the Python lexical reference)",
        _json_slash_escape,
        pair=("json", "literal_eval"),
    ),
    Allow(
        "both-reject",
        "both rejected the text; json raises JSONDecodeError, literal_eval SyntaxError or "
        "ValueError, and the class is not part of the contract",
        _both_reject,
    ),
)


def _literal_eval(text: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences warn in 3.12
        return ast.literal_eval(text)


def combine_surrogates(value):
    """Strings with surrogate pairs combined, as JSON decoding does.

    JSON's \\uD83D\\uDE00 is a UTF-16 pair meaning one character (RFC 8259 section 7);
    Python's "\\uD83D\\uDE00" is two lone surrogates.  Same text, different spelling:
    normalised here rather than allowed, so other string differences still show.
    """
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if isinstance(value, list):
        return [combine_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {combine_surrogates(k): combine_surrogates(v) for k, v in value.items()}
    return value


@assay.target(
    expected=(UnicodeDecodeError,),
    sources=["json", "ast"],
    strategy="json@1",
    max_len=512,
    seeds=[b'{"a": [1, -2.5e3, "x\\u00e9"], "b": {}}', b'[0, 1e5, "\\ud83d\\ude00", "\\/"]'],
)
def oracle_diff_json_literal(data: bytes) -> None:
    text = data.decode("utf-8")
    differential(
        {"json": json.loads, "literal_eval": _literal_eval},
        text,
        name="json-vs-literal",
        allow=ALLOW,
        normalize={"literal_eval": combine_surrogates},
    )
