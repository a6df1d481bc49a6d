"""Fuzz targets for ``inflection`` 0.5.1 (Rails' ActiveSupport inflector ported to Python).

``inflection`` documents no rejection: every function takes a string (or, for
``ordinal``/``ordinalize``, an integer) and returns one, so the only expected
error is the ``UnicodeDecodeError`` of our own decode.  The targets return every
function's output on the same input, so ``assay mutant --fuzz on`` can compare
the original and a mutant: one word that comes out differently is a difference.
"""

from __future__ import annotations

import inflection

import assay

_WORDS = [
    b"search",
    b"category",
    b"person",
    b"Quiz",
    b"matrix",
    b"ox",
    b"mouse",
    b"octopus",
    b"status",
    b"fish",
    b"sheep",
    b"equipment",
    b"child",
    b"woman",
    b"axis",
    b"crisis",
    b"alias",
    b"bus",
    b"ActiveRecord::Errors",
    b"active_record/errors",
    b"CamelOctopus",
    b"employee_salary",
    b"author_id",
    b"  Donald E. Knuth",
    b"Hello World",
    b"x-men: the last stand",
    b"TheManWithoutAPast",
    b"raiders_of_the_lost_ark",
    b"Dona\xc3\xa7\xc3\xa3o  Teste!",
    b"Stra\xc3\x9fe__&&Caf\xc3\xa9",
    b"HTMLTidy",
    b"SSLError",
    b"_leading",
    b"trailing_id",
    b"a--b",
    b"",
    b"1st_place",
]

_DICT = [
    b"_",
    b"-",
    b"::",
    b"/",
    b" ",
    b"_id",
    b"ies",
    b"es",
    b"s",
    b"ves",
    b"ice",
    b"men",
    b"ses",
    b"xes",
    b"y",
    b"ss",
    b"us",
    b"is",
    b"ix",
    b"ex",
    b"um",
    b"a",
    b"o",
    b"on",
    b"ox",
    b"ouse",
    b"quiz",
    b"person",
    b"child",
    b"sex",
    b"move",
    b"zombie",
    b"news",
    b"series",
    b"ID",
    b"HTML",
    b"\xc3\xa9",
    b"\xc3\x9f",
    b"!",
    b"&",
]


@assay.target(
    expected=(UnicodeDecodeError,),
    sources=["inflection/__init__.py"],
    max_len=128,
    seeds=_WORDS,
    dictionary=_DICT,
    timeout=2.0,
)
def inflect_words(data: bytes) -> dict[str, str]:
    """Every string function on one word or phrase."""
    word = data.decode("utf-8")
    out = {
        "camelize": inflection.camelize(word),
        # camelize(word, False) raises IndexError on "" (a real bug; inflect_camelize_lower finds
        # it): left out here so that "" still reaches every other function.
        "camelize_lower": inflection.camelize(word, False) if word else None,
        "underscore": inflection.underscore(word),
        "dasherize": inflection.dasherize(word),
        "humanize": inflection.humanize(word),
        "titleize": inflection.titleize(word),
        "tableize": inflection.tableize(word),
        "parameterize": inflection.parameterize(word),
        "parameterize_underscore": inflection.parameterize(word, "_"),
        "parameterize_none": inflection.parameterize(word, ""),
        "pluralize": inflection.pluralize(word),
        "singularize": inflection.singularize(word),
        "transliterate": inflection.transliterate(word),
    }
    assay.feature("plural-changed", out["pluralize"] != word)
    assay.feature("singular-changed", out["singularize"] != word)
    return out


@assay.target(
    expected=(UnicodeDecodeError,),
    sources=["inflection/__init__.py"],
    max_len=64,
    seeds=_WORDS,
    dictionary=_DICT,
    timeout=2.0,
)
def inflect_camelize_lower(data: bytes) -> str:
    """``camelize(word, uppercase_first_letter=False)``: lowerCamelCase."""
    return inflection.camelize(data.decode("utf-8"), False)


@assay.target(
    expected=(ValueError,),
    sources=["inflection/__init__.py"],
    max_len=24,
    seeds=[
        b"1",
        b"2",
        b"3",
        b"4",
        b"11",
        b"12",
        b"13",
        b"21",
        b"22",
        b"23",
        b"100",
        b"101",
        b"111",
        b"112",
        b"1002",
        b"1013",
        b"-1",
        b"-11",
        b"-21",
        b"0",
    ],
    timeout=2.0,
)
def inflect_ordinal(data: bytes) -> tuple[str, str]:
    """``ordinal`` and ``ordinalize`` of an integer read as decimal text (``int()``'s ValueError rejects)."""
    number = int(data.decode("ascii"))
    return (inflection.ordinal(number), inflection.ordinalize(number))
