"""The Python side of the C twin's libFuzzer harnesses: fuzzer bytes -> one call of an entry point.

Each harness (``fuzz_<entry>.c``) embeds CPython, links the twin's sources in (as the
builtin module ``_cmutate``), runs this file and calls ``DRIVERS[<entry>](data)`` per
input.  A driver turns the bytes into arguments (lengths, offsets, types, values that
disagree with each other on purpose), calls the entry point and lets any ordinary
Python exception go: only a crash or a sanitizer report is a finding.  No assay
import: the objects the twin reads (an input source, a journal, a sandbox state) are
built here from plain Python.
"""

import collections
import types

import _cmutate as C  # the builtin module the harness links in


class Reader:
    """Values drawn from the fuzzer's bytes (zeros once they run out)."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def int(self, n=8, signed=True):
        chunk = self.data[self.at : self.at + n].ljust(n, b"\0")
        self.at += n
        return int.from_bytes(chunk, "little", signed=signed)

    def small(self, lo, hi):
        return lo + self.int(2, False) % (hi - lo + 1)

    def bytes(self, most=64):
        n = self.small(0, most)
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def pick(self, *options):
        return options[self.small(0, len(options) - 1)]

    def value(self):
        kind = self.small(0, 8)
        if kind == 0:
            return self.int()
        if kind == 1:
            return self.int(17)
        if kind == 2:
            return self.bytes(16)
        if kind == 3:
            return self.bytes(16).decode("latin-1")
        if kind == 4:
            return float(self.int(4)) / 7
        if kind == 5:
            return [self.int(1) for _ in range(self.small(0, 5))]
        if kind == 6:
            return {self.int(1) for _ in range(self.small(0, 5))}
        if kind == 7:
            return None
        return (self.int(1), self.bytes(4))

    def list_of(self, make, most=6):
        return [make() for _ in range(self.small(0, most))]


def _rng(r):
    return C.Stream(r.bytes(12)).rng(r.small(0, 5000))


def mutate(data):
    r = Reader(data)
    other = r.pick(None, b"", "list", "bad")
    if other == "list":
        other = r.list_of(lambda: r.bytes(40))
    elif other == "bad":
        other = r.list_of(r.value)
    args = (
        r.small(-2, 600),
        r.list_of(lambda: r.bytes(8)),
        r.list_of(lambda: r.small(-3, 20)),
        r.list_of(lambda: r.small(-3, 20), 3) or r.pick([], [0], [15]),
        C.NAMES,
        r.small(-1, 64),
        r.small(-40, 40),
        _rng(r),
        r.bytes(300),
        other,
        r.pick(None, r.small(-5, 600)),
    )
    C.mutate(*args)


def replace_one(data):
    r = Reader(data)
    C.replace_one(r.bytes(100), r.bytes(4), r.bytes(8), r.int(r.small(1, 20)))


def random(data):
    r = Reader(data)
    rng = C.Random(r.int(r.small(0, 40), False), r.bytes(12), r.int())
    for _ in range(r.small(1, 12)):
        op = r.small(0, 10)
        if op == 0:
            rng.randrange(r.int(r.pick(8, 9)))
        elif op == 1:
            rng.randrange(r.int(), r.int(r.pick(8, 9)))
        elif op == 2:
            rng.randint(r.int(), r.int())
        elif op == 3:
            rng.random()
        elif op == 4:
            rng.choice(r.list_of(r.value))
        elif op == 5:
            rng.shuffle(r.list_of(r.value, 12))
        elif op == 6:
            rng.getrandbits(r.small(-2, 2000))
        elif op == 7:
            rng.randbytes(r.small(-2, 300))
        elif op == 8:
            rng.expovariate(float(r.int(2)))
        elif op == 9:
            rng._randbelow(r.int(r.pick(8, 20)))
        else:
            rng._pool = r.int(r.small(0, 40), False)


def stream(data):
    r = Reader(data)
    s = C.Stream(r.bytes(20))
    for _ in range(r.small(1, 6)):
        s.rng(r.int()).random()


def _source(r):
    n = r.small(0, 5)

    def parallel(make):
        skew = r.small(-1, 1) if r.small(0, 7) == 7 else 0  # now and then, lists of other lengths
        return [make() for _ in range(max(0, n + skew))]

    def pairs():
        return [r.pick((r.bytes(3), r.bytes(5)), r.value()) for _ in range(r.small(0, 3))]

    return types.SimpleNamespace(
        corpus=parallel(lambda: r.pick(r.bytes(40), r.value())),
        cmp_pairs=parallel(pairs),
        children=parallel(lambda: r.pick(r.small(0, 9), r.int())),
        trouble=parallel(lambda: r.pick(0, r.small(0, 9), r.int())),
        guards=parallel(lambda: r.pick([], [(1, "==", 2)], r.value())),
        productive=r.list_of(lambda: r.small(-2, 8)),
        quiet={r.small(-1, 6) for _ in range(r.small(0, 3))},
        staged=collections.deque(
            (r.small(-1, 6), r.pick((r.bytes(2), r.bytes(3)), r.value())) for _ in range(r.small(0, 3))
        ),
        cases=r.small(0, 100),
        repairs=r.small(0, 100),
        len_limit=r.pick(None, r.small(-2, 80)),
        last_parent=None,
        last_pair=None,
        repair_guards=None,
    )


class _Sandbox:
    __slots__ = ("installed", "armed", "busy", "root", "allow", "refusal")


def hotloop(data):
    r = Reader(data)
    if (
        r.small(0, 3) < 3
    ):  # mostly (and once the bytes run out) a journal laid out as assay's (header, data, chain, two rings)
        capacity, ring = r.small(0, 600), r.small(1, 400)
        chain_at = 80 + capacity
        journal = types.SimpleNamespace(
            mem=bytearray(chain_at + 64 + 2 * ring),
            capacity=capacity,
            chain_at=chain_at,
            ring_at=chain_at + 64,
            ring=ring,
            sel=r.small(0, 1),
            used=r.small(0, ring),
        )
    else:  # sizes and offsets from the bytes
        journal = types.SimpleNamespace(
            mem=bytearray(r.small(0, 6000)),
            capacity=r.small(-2, 2000),
            chain_at=r.small(-2, 6000),
            ring_at=r.small(-2, 6000),
            ring=r.small(-2, 3000),
            sel=r.small(-1, 2),
            used=r.small(-1, 100),
        )
    source = _source(r)
    sandbox = r.pick(None, _Sandbox())
    if sandbox is not None:
        sandbox.armed, sandbox.refusal = False, None
    loop = C.HotLoop(
        fn=lambda data: r.pick(None, True, 1, b""),
        target=None,
        source=source,
        stream=C.Stream(r.bytes(8)),
        mutate_args=(r.small(0, 300) or 64, [b"ab"], [1, 2], [0, 1], C.NAMES, 1 + r.small(0, 40), r.small(0, 40)),
        replace_one=C.replace_one,
        feedback=types.SimpleNamespace(new=[]),
        sink=types.SimpleNamespace(keys=[]),
        boring=r.pick(set(), {None}, {None, True, int, bytes}),
        rejects=set(),
        seen=set(),
        values=None,
        journal=journal,
        sandbox=sandbox,
        allow=None,
        strays_returned=lambda target, data: None,
        outlier=None,
        data_at=80 if r.small(0, 3) < 3 else r.small(-2, 200),
        clock_every=r.small(1, 100),
    )
    start = r.small(0, 200) if r.small(0, 7) < 7 else r.int()
    for _ in range(r.small(1, 4)):
        loop.run(start, start + r.small(0, 300), r.small(0, 99) if r.small(0, 7) < 7 else r.int())


def linetally(data):
    r = Reader(data)
    tally = C.LineTally(r.int(), lambda: None)
    tally.count = r.pick(0, r.int())
    for _ in range(r.small(0, 20)):
        if r.small(0, 1):
            tally.hit(None, r.int())
        else:
            tally.jump(None, r.value(), r.value())


class _Cut(Exception):
    pass


def recorder(data):
    r = Reader(data)
    rec = C.Recorder(
        r.pick([], None),
        r.small(-2, 10),
        r.small(-2, 50),
        _Cut,
        guards=r.pick([], None),
        max_guards=r.small(-2, 10),
        records=r.pick([], None),
        max_records=r.small(-2, 30),
        in_order=sorted,
        max_members=r.small(-2, 10),
    )
    for _ in range(r.small(1, 20)):
        rec(r.small(-1, 8), r.pick(r.small(-2, 9), r.value()), r.value(), r.value(), r.value())
        rec.last()


#: FuzzedDataProvider's methods and how many arguments each takes.
_FDP_METHODS = (
    ("ConsumeBytes", 1), ("ConsumeUnicode", 1), ("ConsumeUnicodeNoSurrogates", 1), ("ConsumeString", 1),
    ("ConsumeRandomLengthBytes", 1), ("ConsumeRandomLengthString", 0), ("ConsumeInt", 1), ("ConsumeUInt", 1),
    ("ConsumeIntInRange", 2), ("ConsumeIntList", 2), ("ConsumeIntListInRange", 3), ("ConsumeBool", 0),
    ("ConsumeProbability", 0), ("ConsumeFloat", 0), ("ConsumeRegularFloat", 0), ("ConsumeFloatInRange", 2),
    ("ConsumeFloatList", 1), ("ConsumeRegularFloatList", 1), ("ConsumeProbabilityList", 1),
    ("ConsumeFloatListInRange", 3), ("PickValueInList", 1), ("remaining_bytes", 0), ("buffer", 0),
)  # fmt: skip


def _fdp_arg(r):
    """A count, a bound or a hostile value: the edges atheris' conversions sit on."""
    kind = r.small(0, 5)
    if kind == 0:
        return r.pick(0, 1, 2, 7, 8, 9, 2**31, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -1, -(2**63))
    if kind == 1:
        return r.int(r.small(1, 17))
    if kind == 2:
        return r.pick(0.0, -0.0, 1.5, float("inf"), float("-inf"), float("nan"), 1.7976931348623157e308, 5e-324)
    if kind == 3:
        return [r.value() for _ in range(r.small(0, 300))]
    return r.value()


def fdp(data):
    r = Reader(data)
    provider = C.FuzzedDataProvider(r.bytes(r.small(0, 1200)))
    for _ in range(r.small(1, 30)):
        name, n_args = r.pick(*_FDP_METHODS)
        args = [_fdp_arg(r) for _ in range(n_args + r.pick(0, 0, 0, 0, 1, -1))]
        if "List" in name and args and isinstance(args[0], int) and 4096 < args[0] <= 2**63 - 1:
            # A list of billions is allocated as asked (as atheris' is): past what a run may use.
            args[0] %= 4096
        try:
            getattr(provider, name)(*args)
        except Exception:  # noqa: BLE001 - an ordinary exception is an answer: go on with the same provider
            pass


DRIVERS = {
    "mutate": mutate,
    "replace_one": replace_one,
    "random": random,
    "stream": stream,
    "hotloop": hotloop,
    "linetally": linetally,
    "recorder": recorder,
    "fdp": fdp,
}


def run(entry, data):
    try:
        DRIVERS[entry](data)
    except Exception:  # noqa: BLE001 - an ordinary exception is an answer, not a finding
        pass
