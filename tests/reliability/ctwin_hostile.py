"""Hostile calls into the C twin (``assay.gen._cmutate``), one per scenario, run as a script.

``python ctwin_hostile.py NAME`` runs scenario NAME and prints one line, ``OUTCOME: <what>``:
``raised <ExceptionType>``, ``returned``, ``collected`` or ``leaked``.  A scenario that
reads or writes out of bounds crashes the process instead (or, under AddressSanitizer,
aborts with its report): the test that runs it sees no OUTCOME line.  Run in a
subprocess by ``test_reliab_ctwin.py``, with the ordinary build and with the
sanitized one (``tests/native/asan_cmutate.sh``).
"""

from __future__ import annotations

import gc
import sys
import weakref
from types import SimpleNamespace

from assay.engine import generate, journal as jr
from assay.gen.accelerated import cmutate

MAX_LEN = 64


def _source() -> generate.InputSource:
    source = generate.InputSource(MAX_LEN, [])
    for entry in (b"hello world", b"{[(1, 2)]}", b"12345"):
        source.add(entry)
    return source


def _loop(**over):
    """A HotLoop over a small corpus; ``over`` replaces any of its arguments."""
    source = over.pop("source", None) or _source()
    args = {
        "fn": lambda data: None,
        "target": object(),
        "source": source,
        "stream": cmutate.Stream(b"\x00" * 8),
        "mutate_args": source.mutator.mutate_c.args,
        "replace_one": generate.replace_one,
        "feedback": SimpleNamespace(new=[]),
        "sink": SimpleNamespace(keys=[]),
        "boring": {None},  # a target that returns None shows nothing: the loop goes on
        "rejects": set(),
        "seen": set(),
        "values": None,
        "journal": jr.Journal(MAX_LEN),
        "sandbox": None,
        "allow": None,
        "strays_returned": lambda target, data: None,
        "outlier": None,
        "data_at": jr.DATA_AT,
        "clock_every": 64,
    }
    args.update(over)
    return cmutate.HotLoop(**args)


def _shorter(name: str):
    def scenario():
        source = _source()
        getattr(source, name).pop()
        _loop(source=source).run(0, 8, 0)

    return scenario


def shrunk_by_the_target():
    """The target shortens source.trouble between two cases of one run()."""
    source = _source()
    _loop(source=source, fn=lambda data: source.trouble.clear()).run(0, 64, 0)


def negative_journal_capacity():
    journal = SimpleNamespace(
        mem=bytearray(1 << 16), capacity=-100, chain_at=2048, ring_at=2112, ring=64, sel=0, used=0
    )
    _loop(journal=journal).run(0, 8, 0)


def chain_past_the_journal():
    journal = SimpleNamespace(mem=bytearray(4096), capacity=256, chain_at=1 << 24, ring_at=1024, ring=8, sel=0, used=0)
    _loop(journal=journal).run(0, 8, 0)


def ring_past_the_journal():
    journal = SimpleNamespace(
        mem=bytearray(4096), capacity=256, chain_at=512, ring_at=1024, ring=1 << 40, sel=0, used=0
    )
    _loop(journal=journal).run(0, 8, 0)


def data_inside_the_header():
    _loop(data_at=8).run(0, 8, 0)


class _Big:
    __slots__ = tuple(f"s{k}" for k in range(32))


class _Borrowed:
    """A sandbox state whose ``armed`` is another class's slot, at an offset past this object's end."""

    __slots__ = ("allow", "refusal")
    armed = _Big.s31


def foreign_sandbox_slot():
    _loop(sandbox=_Borrowed(), allow=None).run(0, 8, 0)


class _State:
    __slots__ = ("armed", "allow", "refusal")


class _Twin:
    __slots__ = ("armed", "allow", "refusal")


def sandbox_class_swapped():
    """The target reassigns the sandbox state's class between two cases."""
    state = _State()
    state.armed = False
    state.refusal = None

    def fn(data):
        state.__class__ = _Twin if type(state) is _State else _State

    _loop(sandbox=state, allow=None, fn=fn).run(0, 64, 0)


def overflowing_case_index():
    _loop().run(2**63 - 2, 2**63 - 1, 0)


def negative_max_len():
    rng = cmutate.Stream(b"\x00" * 8).rng(0)
    cmutate.mutate(-5, [], [], [0], cmutate.NAMES, 16, 0, rng, b"abc", None, None)


def zero_picks():
    rng = cmutate.Stream(b"\x00" * 8).rng(0)
    cmutate.mutate(64, [], [], [0], cmutate.NAMES, 0, 0, rng, b"abc", None, None)


def saturated_line_count():
    """A count set to the largest long long, then one more line: a signed overflow before."""
    tally = cmutate.LineTally(2**63 - 1, lambda: None)
    tally.count = 2**63 - 1
    tally.hit()
    assert tally.count == 2**63 - 1


def _cycle(make):
    class Holder:
        pass

    def scenario():
        holder = Holder()
        holder.ref = make(holder)
        gone = weakref.ref(holder)
        del holder
        gc.collect()
        return "leaked" if gone() is not None else "collected"

    return scenario


class _Key(bytes):
    pass


def _random_in_cycle(holder):
    key = _Key(b"\x00" * 8)
    key.holder = holder
    return cmutate.Random(0, key, 0)


def _stream_in_cycle(holder):
    key = _Key(b"\x00" * 8)
    key.holder = holder
    return cmutate.Stream(key)


SCENARIOS = {
    "corpus longer than trouble": _shorter("trouble"),
    "corpus longer than children": _shorter("children"),
    "corpus longer than guards": _shorter("guards"),
    "corpus longer than cmp_pairs": _shorter("cmp_pairs"),
    "trouble shrunk by the target": shrunk_by_the_target,
    "negative journal capacity": negative_journal_capacity,
    "chain past the journal": chain_past_the_journal,
    "ring past the journal": ring_past_the_journal,
    "data inside the header": data_inside_the_header,
    "foreign sandbox slot": foreign_sandbox_slot,
    "sandbox class swapped": sandbox_class_swapped,
    "overflowing case index": overflowing_case_index,
    "negative max_len": negative_max_len,
    "zero picks": zero_picks,
    "saturated line count": saturated_line_count,
    "HotLoop in a cycle": _cycle(lambda holder: _loop(target=holder)),
    "LineTally in a cycle": _cycle(lambda holder: cmutate.LineTally(10, lambda: holder)),
    "Random in a cycle": _cycle(_random_in_cycle),
    "Stream in a cycle": _cycle(_stream_in_cycle),
}


def main(name: str) -> None:
    try:
        outcome = SCENARIOS[name]() or "returned"
    except Exception as exc:  # noqa: BLE001 - the outcome is the exception's type
        outcome = f"raised {type(exc).__name__}: {exc}"
    sys.stdout.write(f"OUTCOME: {outcome}\n")


if __name__ == "__main__":
    main(sys.argv[1])
