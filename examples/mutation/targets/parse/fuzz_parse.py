"""Fuzz targets for ``parse`` 1.22.4 (``parse()`` is the opposite of ``format()``).

The input is ``FORMAT \\x00 TEXT`` (UTF-8; without a NUL byte the whole input is
the format and the text is the format with its fields' braces removed, so plain
literals still meet themselves).  ``parse`` documents one rejection: "If the
format is invalid a ValueError will be raised" (``TooManyFields`` and
``RepeatedNameError`` are ``ValueError`` subclasses; so is the
``UnicodeDecodeError`` of our own decode).  Everything else escaping is a bug.

The targets return plain data -- ``(fixed, named, spans)`` of every result, or
``None`` -- so that ``assay mutant --fuzz on`` can compare the original and a
mutant on the same input: a converted value, a span, or the decision to match
that differs is a difference a person would call a bug.
"""

from __future__ import annotations

import itertools

import parse

import assay

#: findall() results kept: parse 1.22.4's findall never ends when a field can match the empty
#: string (``compile('{:tt}').findall('10:21:36 PM')`` repeats an empty match at the end forever).
MAX_FOUND = 16

_SEEDS = [
    b"{}\x00hello",
    b"{:d} apples\x00 12 apples",
    b"It's {}, I love it!\x00It's spam, I love it!",
    b"{name} is {age:d}\x00Bob is 42",
    b"{:f}\x00-3.25",
    b"{:e}\x001.5e+10",
    b"{:g}\x00nan",
    b"{:%}\x0012.5%",
    b"{:x} {:o} {:b}\x00ff 17 101",
    b"{:n}\x001,234,567",
    b"{:>5d}|{:<5}|{:^7}\x00   42|ab   |  mid  ",
    b"{:05d}\x0000042",
    b"{:.2f}\x003.14",
    b"{:ti}\x002003-09-25T10:49:41.5-03:00",
    b"{:te}\x00Mon, 20 Jan 1972 10:21:36 +1000",
    b"{:tg}\x0020/1/1972 10:21:36 AM +1:00",
    b"{:ta}\x001/20/1972 10:21:36 PM",
    b"{:th}\x0021/Nov/2011:10:21:36 +1000",
    b"{:tc}\x00Sun Sep 16 01:03:52 1973",
    b"{:tt}\x0010:21:36 PM -5:30",
    b"{:ts}\x00Nov  9 03:37:44",
    b"{:%Y-%m-%d %H:%M}\x002023-11-05 17:01",
    b"{:w}-{:W}-{:s}-{:S}-{:l}\x00ab_1-;;- x-;;-abc",
    b"{:D}{:d}\x0012",
    b"{a.b} {a.c} {d[e]}\x001 2 3",
    b"{x}{x}\x00abab",
    b"{{literal}} {}\x00{literal} 5",
    b"a.b*c+d? {} (x)\x00a.b*c+d? 7 (x)",
]

_DICT = [
    b"{",
    b"}",
    b"{}",
    b"{{",
    b"}}",
    b":",
    b"\x00",
    b"{:d}",
    b"{:f}",
    b"{:w}",
    b"{name}",
    b"{a.b}",
    b"{a[b]}",
    b"{:ti}",
    b"{:te}",
    b"{:tg}",
    b"{:ta}",
    b"{:th}",
    b"{:tc}",
    b"{:tt}",
    b"{:ts}",
    b"{:%Y}",
    b"%m",
    b"%d",
    b"%H:%M:%S",
    b"%z",
    b"%b",
    b"%p",
    b"<",
    b">",
    b"^",
    b"=",
    b"+",
    b"-",
    b"0",
    b".2",
    b",",
    b"_",
    b"x",
    b"o",
    b"b",
    b"n",
    b"%",
    b"e",
    b"g",
    b"l",
    b"D",
    b"S",
    b"W",
    b"AM",
    b"PM",
    b"Jan",
    b"Mon",
    b"+10:00",
    b"Z",
    b"T",
    b" ",
]


def _split(data: bytes) -> tuple[str, str]:
    if b"\x00" in data:
        fmt, _, text = data.partition(b"\x00")
        return fmt.decode("utf-8"), text.decode("utf-8")
    fmt = data.decode("utf-8")
    return fmt, fmt.replace("{", "").replace("}", "")


def _plain(result: parse.Result | None) -> tuple | None:
    if result is None:
        return None
    return (result.fixed, result.named, result.spans)


@assay.target(
    expected=(ValueError,), sources=["parse/__init__.py"], max_len=256, seeds=_SEEDS, dictionary=_DICT, timeout=2.0
)
def parse_match(data: bytes) -> tuple:
    """``parse.parse``: the whole text against the format, case-insensitive and case-sensitive."""
    fmt, text = _split(data)
    loose = parse.parse(fmt, text)
    assay.feature("matched", loose is not None)
    strict = parse.parse(fmt, text, case_sensitive=True)
    lazy = parse.parse(fmt, text, evaluate_result=False)
    return (_plain(loose), _plain(strict), _plain(lazy.evaluate_result() if lazy is not None else None))


@assay.target(
    expected=(ValueError,), sources=["parse/__init__.py"], max_len=256, seeds=_SEEDS, dictionary=_DICT, timeout=2.0
)
def parse_search(data: bytes) -> tuple:
    """``compile(fmt)`` then ``search`` (first occurrence, and from position 1) and ``findall`` (bounded)."""
    fmt, text = _split(data)
    parser = parse.compile(fmt)
    first = parser.search(text)
    later = parser.search(text, pos=1)
    every = [_plain(r) for r in itertools.islice(parser.findall(text), MAX_FOUND)]
    assay.feature("found", len(every))
    return (parser.named_fields, parser.fixed_fields, _plain(first), _plain(later), every)
