"""Fuzz targets for the standard library's ``html.parser``.

``HTMLParser.feed`` is documented to accept a document in pieces: "incomplete data
is buffered until more data is fed or close() is called".  So after ``close()`` the
events must not depend on how the text was cut.  The oracle (``rechunk``) feeds the
same text three ways -- whole, in two halves, and one character at a time -- and
compares the recorded event lists.

Normalization: a run of text may be reported through several ``handle_data`` calls
(the parser flushes text as far as it can see), so consecutive data events are
merged before comparing.  Nothing else is normalized.

``html_parser_rechunk`` uses the default ``convert_charrefs=True``;
``html_parser_rechunk_raw`` uses ``convert_charrefs=False``, which reports character
and entity references as their own events.
"""

from __future__ import annotations

from html.parser import HTMLParser

import assay


class _Recorder(HTMLParser):
    def __init__(self, convert_charrefs: bool) -> None:
        super().__init__(convert_charrefs=convert_charrefs)
        self.events: list[tuple] = []

    def _data(self, kind: str, text: str) -> None:
        if self.events and self.events[-1][0] == kind:
            self.events[-1] = (kind, self.events[-1][1] + text)
        else:
            self.events.append((kind, text))

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, tuple(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.events.append(("startend", tag, tuple(attrs)))

    def handle_endtag(self, tag):
        self.events.append(("end", tag))

    def handle_data(self, data):
        self._data("data", data)

    def handle_comment(self, data):
        self.events.append(("comment", data))

    def handle_decl(self, decl):
        self.events.append(("decl", decl))

    def handle_pi(self, data):
        self.events.append(("pi", data))

    def unknown_decl(self, data):
        self.events.append(("unknown_decl", data))

    def handle_entityref(self, name):
        self.events.append(("entityref", name))

    def handle_charref(self, name):
        self.events.append(("charref", name))


def _parse(chunks: list[str], convert_charrefs: bool) -> list[tuple]:
    parser = _Recorder(convert_charrefs)
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    return parser.events


def _check(text: str, convert_charrefs: bool) -> None:
    whole = _parse([text], convert_charrefs)
    assay.feature("events", tuple(sorted({e[0] for e in whole})))
    half = len(text) // 2
    halves = _parse([text[:half], text[half:]], convert_charrefs)
    if halves != whole:
        raise assay.InvariantViolation(
            "rechunk", f"{text!r}: whole {whole!r} != halves at {half} {halves!r}", kind="halves"
        )
    chars = _parse(list(text), convert_charrefs)
    if chars != whole:
        raise assay.InvariantViolation("rechunk", f"{text!r}: whole {whole!r} != char-by-char {chars!r}", kind="chars")


_SEEDS = [
    b"<!DOCTYPE html><html><head><title>T</title></head><body class=main id='b'>Hi &amp; bye</body></html>",
    b"<p>a<br/>b &lt; c &#60; &#x3C; &nbsp;d<img src=\"x.png\" alt=''></p>",
    b"<script>if (a < b && c > d) { x = '</p>'; }</script><style>p > a { }</style>",
    b"<!-- a comment --><![CDATA[ raw ]]><?php echo 1 ?><!ELEMENT x>",
    b'<textarea>x &amp; <b>y</b></textarea><a href="?a=1&b=2" data-x="&quot;q&quot;">link</a>',
]

_DICT = [
    b"<",
    b">",
    b"</",
    b"/>",
    b"<!--",
    b"-->",
    b"<!",
    b"<?",
    b"?>",
    b"<![CDATA[",
    b"]]>",
    b"&",
    b"&#",
    b"&#x",
    b";",
    b"&amp;",
    b"=",
    b'"',
    b"'",
    b"<script>",
    b"</script>",
    b"<style>",
    b"</style>",
    b"<!DOCTYPE",
    b" ",
    b"\n",
    b"<a ",
    b"href=",
]


#: Both targets run the same parser; only ``convert_charrefs`` differs.
_SETTINGS = dict(
    expected=(UnicodeDecodeError,),
    sources=["html.parser", "_markupbase"],
    max_len=1024,
    seeds=_SEEDS,
    dictionary=_DICT,
    timeout=2.0,
)


@assay.target(**_SETTINGS)
def html_parser_rechunk(data: bytes) -> None:
    _check(data.decode("utf-8"), convert_charrefs=True)


@assay.target(**_SETTINGS)
def html_parser_rechunk_raw(data: bytes) -> None:
    _check(data.decode("utf-8"), convert_charrefs=False)
