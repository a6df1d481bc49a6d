"""Kept inputs as short as what made them new: a new corpus entry is trimmed before it is kept.

Why kept inputs grow: a child keeps most of its parent's bytes, so the first random
input (up to 64 bytes) and every long child kept for its coverage pass their length
on to all their descendants, and every child of a long entry pays for it on each
run.  libFuzzer replaces an entry by a shorter input that has the same unique
features (``-reduce_inputs``); it knows every input's full feature set.  assay's
coverage events are switched off once seen, so a case only tells what is *new*; a
shorter child's hit of an entry's features is invisible on the hot path.

So the evidence is taken where it is cheap and certain, once per entry, when the entry
is made (AFL's trim): the entry's new keys (the edges, lines, semantic features and
outcome that made it new) are handed to a :class:`TrimChild`, a child forked from the
worker that records each run's *full* feature set with a feedback of its own
(:class:`assay.engine.features.FullFeedback`, re-armed for every run, on the worker's
split code, so its keys are the worker's).  It deletes chunks of the input
(:func:`assay.engine.shrink.shrink`, deletions only) as long as the shorter input
still reaches every one of those keys, ends with the same outcome and fails no
oracle, and answers with the shortest it found.  Nothing a case or its judgement
decides depends on this child but the entry it answers, and its answer is a
function of the input, so the campaign stays a function of its seed and case cap.

Only entries that descend from random bytes are trimmed (a campaign from an empty
corpus, where the bloat comes from), never those that descend from an initial input
(a seed or a kept entry, ``InputSource.seeded``): a seed's fields are structure its
user chose, and a field the entry's run never compared (the third of five fields, read
only once the second matches) is exactly what the next comparison rewrites in place;
trimmed away, no byte of it is left to rewrite (the decoded-fields, protocol and TLV
mazes of ``bench/time_to_bug.py`` took 5-50x the executions or were not solved).
Nor are entries whose news include a cost class (``cost-lines``, ``cost``: the long
inputs of the cost climb, which must stay long for super-linear bugs) or a
value-profile value (the child records no comparisons), the initial inputs,
crash-exploration parents and imported entries.  Long inputs stay reachable
because length is decided per child (``LONG_SHARE`` of children and every counted
case may grow to ``max_len``), not by the corpus.

Cost: at most :data:`TRIM_RUNS` recorded runs an entry, and over the campaign at most
:data:`TRIM_FREE` plus :data:`TRIM_SHARE` of the generated cases (case counts, never
time); the worker waits for the child's answer.
"""

from __future__ import annotations

import os
import pickle
import select
import sys
from collections.abc import Hashable, Iterable
from typing import Any

from assay.core.target import Target
from assay.engine import execute
from assay.engine.features import FullFeedback
from assay.engine.shrink import shrink
from assay.engine.traced import ServedChild, read_framed, write_all
from assay.feedback.scope import Scope
from assay.feedback.sysmon import SysmonFeedback, code_key, monitoring
from assay.gen.accelerated import object_id

#: Recorded runs one entry's trim may spend, the check of the entry itself included.
TRIM_RUNS = 32
#: Recorded runs over a campaign: at most this many...
TRIM_FREE = 256
#: ...plus this share of the generated cases so far.
TRIM_SHARE = 0.05
#: Entries this short are kept as they are.
TRIM_MIN_LEN = 2
#: Semantic features that are cost classes: an entry with one is never trimmed.
COST_FEATURES = ("cost-lines", "cost")
#: Seconds beyond the target's timeout that one recorded run may take before the child is killed.
RUN_GRACE = 1.0

_RAN, _DONE = b".", b"="


def required_keys(new: Iterable[Hashable]) -> list[Hashable] | None:
    """The keys a trimmed entry must still reach, or ``None`` when the entry is not trimmed.

    Coverage keys (tuples of ints), semantic features and the outcome can be recorded
    by the child; a cost class or a value-profile value cannot (or must not shrink).
    """
    keys: list[Hashable] = []
    for key in new:
        if not isinstance(key, tuple) or not key:
            return None
        head = key[0]
        if isinstance(head, int) or head == "outcome" or (head == "f" and key[1] not in COST_FEATURES):
            keys.append(key)
        else:
            return None
    return keys


class TrimChild(ServedChild):
    """A forked child that trims entries, recording every run's full feature set.

    Forked from the worker at the first trim and kept for the worker's life (one fork,
    not one per entry); its state is the worker's at the fork plus its runs since, a
    function of the schedule.  It is replaced when it dies or runs past a run's
    deadline (the entry is then kept as it is).  It lives in the worker's process
    group and dies with the worker.
    """

    folder_prefix = "trim-"

    def __init__(self, target: Target, feedback: SysmonFeedback) -> None:
        super().__init__()
        self.target = target
        self.feedback = feedback

    def trim(self, data: bytes, required: list[Hashable], outcome: Hashable, runs: int) -> tuple[bytes, int]:
        """The shortest input found that reaches ``required`` with ``outcome`` and no
        verdict (``data`` itself when none is shorter, or the child failed), and the
        recorded runs spent (``runs`` at most)."""
        if self.pid is None:
            self._start()
        try:
            write_all(self._requests, _framed(pickle.dumps((data, required, outcome, runs))))
        except OSError:
            self.close(kill=True)
            return data, 0
        spent = 0
        answer = b""  # from its tag on, once it came
        limit = self.target.timeout + RUN_GRACE  # for each run: the child says when one ends
        while True:
            chunk = self._read(limit)
            if chunk is None:
                self.close(kill=True)  # dead or hung: keep the entry as it is
                return data, spent
            if not answer:
                done = chunk.find(_DONE)
                if done < 0:
                    spent += len(chunk)
                    continue
                spent += done
                chunk = chunk[done:]
            answer += chunk
            if len(answer) >= 9 and len(answer) >= 9 + int.from_bytes(answer[1:9], "big"):
                return answer[9 : 9 + int.from_bytes(answer[1:9], "big")], spent

    def _read(self, limit: float) -> bytes | None:
        """What the child wrote within ``limit`` seconds, or None at its end or past it."""
        if not select.select([self._replies], [], [], limit)[0]:
            return None
        return os.read(self._replies, 1 << 16) or None

    def _serve(self, requests: int, replies: int) -> None:  # pragma: no cover - runs in the child
        self.feedback.detach()  # the worker's tool goes; its split code stays, so the keys agree
        recorder = _Recorder(self.feedback.scope)
        recorder.start()
        target = self.target
        while True:
            body = read_framed(requests)
            if body is None:
                return
            data, required, outcome, runs = pickle.loads(body)
            wanted = frozenset(required)
            recorder.aim(frozenset(k[0] for k in wanted if isinstance(k[0], int)))

            def reaches(candidate: bytes, wanted: frozenset = wanted, outcome: Hashable = outcome) -> bool:
                write_all(replies, _RAN)
                recorder.forget()
                result = execute.run_timed(target, candidate, target.timeout)
                if result.verdict is not None or result.outcome != outcome:
                    return False
                return all(k in recorder.seen or k in result.features or k == result.outcome for k in wanted)

            kept = data
            if reaches(data):
                kept = shrink(data, reaches, runs - 1, simplify=False).data
            write_all(replies, _DONE + _framed(kept))


class _Recorder(FullFeedback):
    """Every line and edge one run reaches in the code objects a trim asks about (:meth:`aim`),
    on the split code the worker installed (not split again); other code runs without events."""

    split_edges = False

    def __init__(self, scope: Scope) -> None:
        super().__init__(scope)
        self.aimed: frozenset[int] = frozenset()
        self._by_key: dict[int, list[Any]] = {}  # code key -> the started in-scope code objects with it

    def aim(self, keys: frozenset[int]) -> None:
        """Record in the code objects of these code keys only: a trim asks about a few of them,
        and a run recorded everywhere cost nine runs of tomlkit's parser."""
        mon = monitoring()
        for ck in self.aimed ^ keys:
            for code in self._by_key.get(ck, ()):
                mon.set_local_events(self.tool_id, code, self._local if ck in keys else 0)
        self.aimed = keys

    def _on_start(self, code: Any, offset: int) -> Any:  # noqa: ARG002 - the PY_START signature
        mon = sys.monitoring
        if object_id(code) not in self._code_keys and self.scope.contains(code.co_filename):
            ck = code_key(code)
            self._code_keys[object_id(code)] = ck
            self._code_refs.append(code)
            self._by_key.setdefault(ck, []).append(code)
            if ck in self.aimed:
                mon.set_local_events(self.tool_id, code, self._local)  # type: ignore[arg-type]  # set while started
        return mon.DISABLE


def _framed(payload: bytes) -> bytes:
    return len(payload).to_bytes(8, "big") + payload
