"""The stdlib parser targets the throughput and end-to-end benchmarks share: ``SPECS``.

A module of its own so that ``end_to_end.py`` reads the targets without importing
``throughput.py``, which imports ``end_to_end`` for ``--end-to-end``: no import loop.
"""

from __future__ import annotations

import email
import email.errors
import email.policy
import html.parser
import json
import shlex
import tomllib
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _text(data: bytes) -> str:
    # surrogateescape: every input reaches the parser instead of most mutants
    # stopping at UnicodeDecodeError.
    return data.decode("utf-8", "surrogateescape")


def fuzz_json(data: bytes) -> Any:
    return json.loads(data)


def fuzz_toml(data: bytes) -> Any:
    return tomllib.loads(_text(data))


def fuzz_email(data: bytes) -> Any:
    msg = email.message_from_bytes(data, policy=email.policy.default)
    out = []
    for name in ("from", "to", "cc", "reply-to"):
        header = msg.get(name)
        if header is not None:
            out.extend((a.display_name, a.addr_spec) for a in header.addresses)
    out.append(msg.get("subject"))
    return out


def fuzz_url(data: bytes) -> Any:
    parts = urllib.parse.urlsplit(_text(data))
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    return parts.hostname, parts.port, pairs, urllib.parse.urlunsplit(parts)


def fuzz_shlex(data: bytes) -> Any:
    return shlex.split(_text(data), comments=True)


class _Collector(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.events = 0

    def handle_starttag(self, tag, attrs):
        self.events += 1 + len(attrs)

    def handle_endtag(self, tag):
        self.events += 1

    def handle_data(self, data):
        self.events += 1


def fuzz_html(data: bytes) -> Any:
    parser = _Collector()
    try:
        parser.feed(_text(data))
        parser.close()
    except AssertionError as exc:
        # CPython 3.12's _markupbase asserts on some malformed declarations
        # ("unexpected call to parse_marked_section()", "expected name token").
        # assay reports any AssertionError as an invariant finding, whose shrinking
        # would then be timed as part of the engine column; report it as a rejection.
        raise ValueError(str(exc)) from None
    return parser.events


@dataclass
class Spec:
    name: str
    fn: Callable[[bytes], Any]
    sources: tuple[str, ...]
    expected: tuple[type[BaseException], ...]
    seeds: tuple[bytes, ...]
    #: run_campaign case cap when --engine-cases is not given (--quick: at most 5000).
    engine_cases: int = 20000
    timeout: float = 2.0
    #: This target's input list is --inputs // inputs_divisor long (slow targets).
    inputs_divisor: int = 1


SPECS = [
    Spec(
        "json.loads",
        fuzz_json,
        ("json",),
        (ValueError, RecursionError),
        (
            b'{"name": "assay", "version": [1, 2, 3], "ok": true, "ratio": 0.25, "none": null}',
            b'[1, -2.5e-3, "caf\\u00e9", {"nested": {"deep": [[], {}]}}, false]',
            b'"a string with \\"escapes\\", \\t tabs and \\n newlines"',
            b'{"big": 1e400, "neg": -0, "emoji": "\\ud83d\\ude00", "list": [null, true]}',
        ),
    ),
    Spec(
        "tomllib.loads",
        fuzz_toml,
        ("tomllib",),
        (tomllib.TOMLDecodeError,),
        (
            b'title = "TOML"\n[owner]\nname = "Tom"\ndob = 1979-05-27T07:32:00-08:00\n'
            b"[database]\nports = [ 8000, 8001, 8002 ]\nenabled = true\n"
            b"temp = { cpu = 79.5, case = 72.0 }\n",
            b"[[products]]\nname = 'Hammer'\nsku = 738_594_937\n[[products]]\n"
            b'name = "Nail"\ncolor = "gray"\nsize.x = 0x1F\nwhen = 07:32:00\n'
            b"text = \"\"\"\nmulti\\\n  line\"\"\"\nraw = '''C:\\path'''\nf = -inf\n",
        ),
    ),
    Spec(
        "email.headers",
        fuzz_email,
        ("email",),
        # IndexError/AttributeError/TypeError/UnboundLocalError: known crashes of
        # CPython's email._header_value_parser on malformed addresses.  Expected here
        # so the engine column measures throughput, not shrinking.
        (email.errors.MessageError, ValueError, IndexError, AttributeError, TypeError, NameError),
        (
            b"From: Alice Example <alice@example.com>\r\nTo: bob@example.org, "
            b'"Carol, X." <carol@x.example>\r\nSubject: =?utf-8?q?caf=C3=A9?= hi\r\n\r\nbody\r\n',
            b"From: bob@example.org (Bob Comment)\r\nCc: team: ann@a.example, "
            b'<ben@b.example>;, eve@[127.0.0.1]\r\nReply-To: "Q\\"uoted" <q@q.example>\r\n'
            b"Subject: re: x\r\n\r\n",
        ),
        # email costs 0.3-0.5 ms per input, 10-100x the others: a shorter input list
        # and case cap keep the default run within its time; a long timeout keeps a
        # loaded machine from turning a slow input into a "wedge" (kill, replays)
        # inside the timing.
        engine_cases=3000,
        timeout=10.0,
        inputs_divisor=4,
    ),
    Spec(
        "urllib.parse",
        fuzz_url,
        ("urllib.parse",),
        (ValueError,),
        (
            b"https://user:pw@example.com:8080/p/a/t/h;params?query=string&a=1&b=%20x#frag",
            b"http://[::1]:80/?x=y&z=w&empty=&&k=%E2%82%AC",
            b"mailto:someone@example.com?subject=hi",
            b"//host.example/path?q=1+2",
        ),
    ),
    Spec(
        "html.parser",
        fuzz_html,
        ("html.parser", "_markupbase"),
        (ValueError,),
        (
            b"<!DOCTYPE html><html><head><title>x &amp; y</title></head><body>"
            b'<p class="a" id=b data-x=\'1\'>hi &lt; <a href="/x?y=1&amp;z">link</a>'
            b"<!-- comment --><br/></p><script>var s = '<b>';</script></body></html>",
            b"<?xml version='1.0'?><![CDATA[ raw ]]><div><img src=x alt><table><tr><td>1"
            b"&#x41;&#65;&copy;</td></tr></table></div>",
        ),
        engine_cases=10000,
    ),
    Spec(
        "shlex.split",
        fuzz_shlex,
        ("shlex",),
        (ValueError,),
        (
            b'git commit -m \'first: "quoted" text\' --author="A B <a@b.example>" # note',
            b"cc -DNAME=\"x y\" -o out\\ file.o 'src dir'/main.c && echo $HOME",
            b"ssh -o 'ProxyCommand=nc %h %p' host -- ls -la \"/tmp/a b\"",
        ),
    ),
]
