"""Edge splitting: join directions recorded at their first traversal, code unchanged in meaning."""

from __future__ import annotations

import configparser
import dis
import email
import email.policy
import html.parser
import ipaddress
import os
import random
import tomllib
import urllib.parse
from types import CodeType

import pytest

import feedback_subject as subject
from assay.feedback import edgesplit, sysmon
from assay.feedback.branches import branch_layout
from assay.feedback.cmplog import CmpLog
from assay.feedback.livecode import functions_of
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback
from feedback_subject import counted, either, kept, searched, skipped

pytestmark = pytest.mark.skipif(not edgesplit.supported(), reason="edge splitting is for 3.12/3.13")

SUBJECT = subject.__file__
PARSERS = [
    os.path.dirname(tomllib.__file__),
    urllib.parse.__file__,
    html.parser.__file__,
    os.path.dirname(email.__file__),
    ipaddress.__file__,
    configparser.__file__,
]


class Unsplit(SysmonFeedback):
    split_edges = False


def _codes(code: CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _codes(const)


def _rare_edges(cls, fn, common: bytes, rare: bytes, monkeypatch) -> list:
    monkeypatch.setattr(sysmon, "JOIN_CAP", 3)
    feedback = cls(Scope([SUBJECT]))
    feedback.start()
    try:
        for _ in range(20):
            fn(common)
            feedback.take_new()  # as the engine does after every case
        fn(rare)
        new = feedback.take_new()
    finally:
        feedback.stop()
    assert not [k for k in new if len(k) == 2], "the rare direction shows no new line"
    return [k for k in new if len(k) == 3]


@pytest.mark.parametrize(
    "fn, common, rare, lost_unsplit",
    [
        (either, b"\x01\x02\x03\x04", b"\x00\x02\x03\x04", True),  # the short-circuit exit of ``and``
        (counted, b"abcd", b"a,b", True),  # a ``while`` ended by its second test
        (searched, b"ab cd", b"abcd", True),  # a ``for`` run out, not broken
        # A lone instruction only one branch leads to: the unsplit design records it too,
        # by inference at its first run; the split moves it so that another tool's LINE
        # event there cannot hide that run (see edgesplit's docstring).
        (kept, b"BBBB", b"BAB", False),  # a comprehension filter rejecting
        (skipped, b"abcd", b"a b", False),  # ``continue``
    ],
    ids=["and-or", "while", "exhausted-for", "comprehension-filter", "continue"],
)
def test_rare_direction_recorded_the_first_time_it_is_taken(fn, common, rare, lost_unsplit, monkeypatch):
    split = _rare_edges(SysmonFeedback, fn, common, rare, monkeypatch)
    unsplit = _rare_edges(Unsplit, fn, common, rare, monkeypatch)
    assert split, "recorded at its first traversal, after 20 one-way runs"
    if lost_unsplit:
        assert len(unsplit) < len(split), "non-vacuity: without the split the retired site loses it"
    else:
        assert len(unsplit) == len(split)


def _real(instrs: list, i: int) -> int:
    """Where control really goes from ``instrs[i]``: past NOPs and trampolines' back jumps."""
    seen = set()
    while i not in seen and instrs[i].opname in ("NOP", "EXTENDED_ARG", "JUMP_BACKWARD_NO_INTERRUPT"):
        seen.add(i)
        if instrs[i].opname == "JUMP_BACKWARD_NO_INTERRUPT":
            i = next(k for k, x in enumerate(instrs) if x.offset == instrs[i].argval)
        else:
            i += 1
    return i


def _skeleton(code: CodeType) -> list[tuple]:
    """Every instruction but NOPs, with jumps and handlers resolved to such instructions."""
    instrs = list(dis.get_instructions(code))
    index = {x.offset: k for k, x in enumerate(instrs)}
    keep = [k for k, x in enumerate(instrs) if x.opname not in ("NOP", "EXTENDED_ARG")]
    rank = {k: n for n, k in enumerate(keep)}
    entries = dis.Bytecode(code).exception_entries
    out = []
    for k in keep:
        x = instrs[k]
        if x.opcode in dis.hasjrel:
            arg = ("->", rank.get(_real(instrs, index[x.argval])))
        elif isinstance(x.argval, CodeType):
            arg = x.argval.co_qualname
        else:
            arg = repr(x.argval)
        handler = next((rank.get(_real(instrs, index[e.target])) for e in entries if e.start <= x.offset < e.end), None)
        out.append((x.opname, arg, x.positions, handler))
    return out


def test_split_code_is_the_original_plus_nops_and_trampolines():
    for path in (PARSERS[0] + "/_parser.py", *PARSERS[1:]):
        path = path if path.endswith(".py") else path + "/feedparser.py"
        with open(path, encoding="utf-8") as fh:
            top = compile(fh.read(), path, "exec")
        split = 0
        for code in _codes(top):
            new = edgesplit.split_code(code)
            split += new is not code
            skeleton = _skeleton(new)
            # The trampolines' back jumps come last; all else is the original, in order.
            while skeleton and skeleton[-1][0] == "JUMP_BACKWARD_NO_INTERRUPT":
                skeleton.pop()
            assert skeleton == _skeleton(code), (path, code.co_qualname)
        assert split > 5, path


def test_no_direction_into_a_join_is_left():
    loops = 0
    for path in PARSERS[1:4]:
        path = path if path.endswith(".py") else path + "/feedparser.py"
        with open(path, encoding="utf-8") as fh:
            top = compile(fh.read(), path, "exec")
        before = 0
        for code in _codes(top):
            for src, dsts in branch_layout(code).joins.items():
                before += len(dsts)
                loops += len(dsts) * (dis.opname[code.co_code[src]] == "FOR_ITER")
            new = edgesplit.split_code(code)
            left = {src: dsts for src, dsts in branch_layout(new).joins.items() if dsts}
            assert not left, (path, code.co_qualname, left)
        assert before > 30, (path, before)
    assert loops, "non-vacuity: some exhausted loop ran into a join before the split"


def test_a_continue_inside_try_keeps_its_handler():
    assert subject.tolerant(b"\x01 \x02") == 15 and subject.tolerant(b" \x00") == -1
    assert _skeleton(edgesplit.split_code(subject.tolerant.__code__))[
        : len(_skeleton(subject.tolerant.__code__))
    ] == _skeleton(subject.tolerant.__code__)
    split = edgesplit.SplitCode(Scope([SUBJECT]).contains)
    split.install()
    try:
        assert any(fn is subject.tolerant for fn, _, _ in split.swaps), "tolerant runs split code"
        assert subject.tolerant(b"\x01 \x02") == 15 and subject.tolerant(b" \x00") == -1
    finally:
        split.remove()


def _inputs(seed: int, samples: list[bytes], n: int) -> list[bytes]:
    rnd = random.Random(seed)
    out = list(samples)
    while len(out) < n:
        data = bytearray(rnd.choice(samples))
        for _ in range(rnd.randrange(1, 4)):
            pos = rnd.randrange(len(data) + 1)
            if rnd.random() < 0.5 and data:
                del data[pos % len(data)]
            else:
                data[pos:pos] = bytes([rnd.choice(b" \t\n\"'[]{}=.,:/?#&%<>!-0123456789aAzZ\\\x00\xff")])
        out.append(bytes(data))
    return out


def _outcomes(fn, inputs: list[bytes]) -> list[str]:
    out = []
    for data in inputs:
        try:
            out.append(repr(fn(data)))
        except Exception as exc:  # noqa: BLE001 - the outcome is the comparison
            out.append(f"{type(exc).__name__}: {exc}")
    return out


class _Collect(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.events: list = []

    def handle_starttag(self, tag, attrs):
        self.events.append(("start", tag, attrs))

    def handle_data(self, data):
        self.events.append(("data", data))

    def handle_comment(self, data):
        self.events.append(("comment", data))


def _html(data: bytes):
    p = _Collect()
    p.feed(data.decode("latin-1"))
    p.close()
    return p.events


def _config(data: bytes):
    cp = configparser.ConfigParser()
    cp.read_string(data.decode("latin-1"))
    return {s: dict(cp[s]) for s in cp.sections()}


def _email(data: bytes):
    msg = email.message_from_bytes(data, policy=email.policy.default)
    return [(k, str(v)) for k, v in msg.items()], msg.get_payload()


REAL = [
    (
        lambda d: tomllib.loads(d.decode("latin-1")),
        [b'a = 1\n[t]\nb = "x\\u00e9"\nc = [1, 2.5, true]\nd = 1979-05-27T07:32:00Z\n', b"x = {y = 'z', w = 0x1F}\n"],
    ),
    (
        lambda d: urllib.parse.urlsplit(d.decode("latin-1")),
        [b"http://user:pw@host:80/p/a?q=1#f", b"//[::1]:8/x", b"mailto:a@b"],
    ),
    (lambda d: urllib.parse.parse_qsl(d.decode("latin-1"), keep_blank_values=True), [b"a=1&b=%20x&c=+&d"]),
    (_html, [b"<a href='x' b=c>t<!-- c --><br/>&amp;</a>", b"<script>x<y</script><p>"]),
    (_config, [b"[s]\na = 1\nb: two\n  cont\n[t]\nc=3\n"]),
    (_email, [b"From: a@b\nTo: c <c@d>\nSubject: =?utf-8?q?h=C3=A9?=\n\nbody\n"]),
    (
        lambda d: ipaddress.ip_network(d.decode("latin-1"), strict=False),
        [b"10.0.0.0/8", b"2001:db8::/32", b"::ffff:1.2.3.4"],
    ),
]


def test_split_code_computes_what_the_original_computes():
    inputs = {i: _inputs(i, samples, 400) for i, (_, samples) in enumerate(REAL)}
    expected = {i: _outcomes(fn, inputs[i]) for i, (fn, _) in enumerate(REAL)}
    split = edgesplit.SplitCode(Scope(PARSERS).contains)
    split.install()
    try:
        assert len(split.swaps) > 100
        for i, (fn, _) in enumerate(REAL):
            assert _outcomes(fn, inputs[i]) == expected[i]
    finally:
        split.remove()
    assert (
        tomllib._parser.parse_value.__code__.co_code
        == next(
            c
            for c in _codes(
                compile(open(tomllib._parser.__file__, encoding="utf-8").read(), tomllib._parser.__file__, "exec")
            )
            if c.co_name == "parse_value"
        ).co_code
    ), "remove() put the originals back"


def test_functions_behind_memo_caches_are_split_too():
    # functools.lru_cache and functools.cache wrap a function in a C object: the swap
    # must reach the function inside, at module level and in a class.
    split = edgesplit.SplitCode(Scope([SUBJECT]).contains)
    split.install()
    try:
        assert subject.memo_counted.__wrapped__ in {fn for fn, _orig, _new in split.swaps}
        assert subject.memo_counted(b"ab,c") == 2
        # The comparison twins reach the same functions (a ternary needs no split).
        found = set(functions_of(subject))
        assert {subject.memo_sign.__wrapped__, subject.Signs.__dict__["sign"].__wrapped__} <= found
    finally:
        split.remove()


def test_remove_leaves_a_function_someone_else_swapped_since():
    split = edgesplit.SplitCode(Scope([SUBJECT]).contains)
    original = either.__code__
    split.install()
    assert either.__code__ is not original
    other = kept.__code__
    kept.__code__ = kept.__code__.replace()  # say, a mutant swapped in meanwhile
    swapped = kept.__code__
    split.remove()
    assert either.__code__ is original
    assert kept.__code__ is swapped
    kept.__code__ = other
    assert branch_layout(either.__code__).joins


def test_comparison_analysis_puts_back_the_split_code():
    log = CmpLog(Scope([SUBJECT]).contains)
    log.attach()
    split = edgesplit.SplitCode(Scope([SUBJECT]).contains)
    split.install()
    try:
        live = either.__code__
        pairs, _ = log.record(lambda: either(b"\x00\x02\x03\x04"))
        assert (0, 1) in pairs, "the twin ran"
        assert either.__code__ is live, "the split code, not attach()'s original, is back"
    finally:
        split.remove()
