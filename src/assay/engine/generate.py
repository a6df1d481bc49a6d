"""Where each generated case's input comes from: byte mutation or a strategy."""

from __future__ import annotations

import collections
import random
from collections.abc import Iterable, Sequence
from typing import Any

from assay.feedback import cmplog
from assay.gen.accelerated import cmutate
from assay.gen.mutators import MAX_DICTIONARY, ByteMutator
from assay.gen.strategy import Strategy

#: :func:`assay.feedback.cmplog.replace_one`, or its C twin when built (the same bytes).
replace_one = cmplog.replace_one if cmutate is None else cmutate.replace_one

#: Share of cases that generate a fresh value from the strategy.
FRESH_SHARE = 0.1
#: Share of strategy-mutated cases that also get byte mutations (adjacent inputs).
BYTE_AFTER_STRUCTURE = 0.2
#: Share of strategy cases that cross two corpus values over.
CROSSOVER_SHARE = 0.15
#: Share of cases whose parent is one of the newest corpus entries: new entries
#: are where the frontier is (the deepest compare solved so far).
RECENT_SHARE = 0.5
#: How many of the newest entries count as recent.
RECENT_WINDOW = 4
#: Share of cases whose parent is drawn from the entries that recently produced
#: new coverage (weighted by how often they did).
PRODUCTIVE_SHARE = 0.25
#: How many recent productive picks are remembered.
PRODUCTIVE_MEMORY = 256
#: Share of byte-mode cases that apply one input-to-state replacement from the
#: parent's comparison log, when it has any.
CMP_SHARE = 0.3
#: Every this many byte-mode cases, one is the next replacement of the
#: input-to-state stage (each new entry's pairs, each tried once, in order), while
#: any are waiting: one in two keeps the random mutations going beside it.
STAGE_EVERY = 2
#: Replacements waiting for the stage, at most (the oldest are dropped first).
STAGE_BACKLOG = 4096
#: Share of byte-mode children of an entry with guards (checksums, length fields)
#: that are repaired before they run.
REPAIR_SHARE = 0.5
#: Repairs cost an instrumented run each: at most this share of all cases get one.
REPAIR_BUDGET = 0.1
#: A child that wedged counts as this many children that reproduced a known
#: failure: a hang costs a whole timeout, a known crash microseconds.
WEDGE_WEIGHT = 64
#: Most a troublesome parent is passed over (its children still run sometimes:
#: the deeper bug may be next to the shallow one).
MAX_SKIP = 0.98
#: Draws of another parent when one is passed over (each is judged the same way).
REPICKS = 4


class InputSource:
    """Turns (case RNG, corpus) into the next input, deterministically.

    Without a strategy this is libFuzzer-style byte mutation of a corpus entry
    (random bytes while the corpus is empty).  With a strategy, corpus entries the
    strategy can parse are mutated structurally, sometimes crossed over, sometimes
    byte-mutated afterwards; a share of cases are fresh valid values.
    """

    def __init__(self, max_len: int, dictionary: list[bytes], strategy: Strategy | None = None) -> None:
        self.max_len = max_len
        self.mutator = ByteMutator(max_len, dictionary)
        self.strategy = strategy
        self.corpus: list[bytes] = []
        self.values: list[Any] = []
        self.parsed: list[int] = []  # indices of entries the strategy could read
        self.cmp_pairs: list[list[tuple[bytes, bytes]]] = []
        self.guards: list[list[tuple[int, str, int]]] = []
        #: Guards the input :meth:`next` just returned should be repaired against, if any.
        self.repair_guards: list[tuple[int, str, int]] | None = None
        self.cases = 0
        self.repairs = 0
        self.productive: list[int] = []  # parent indices whose children paid off, recent last
        self.last_parent: int | None = None
        self.last_pair: tuple[int, tuple[bytes, bytes]] | None = None
        #: The input-to-state stage: (entry index, pair) not yet tried, oldest first.
        self.staged: collections.deque[tuple[int, tuple[bytes, bytes]]] = collections.deque(maxlen=STAGE_BACKLOG)
        self._guesses = 0  # how many of the staged replacements, at its end, are guesses (see _stage)
        self._known_tokens = set(self.mutator.dictionary)
        #: The length limit of byte-mode children (None: only ``max_len``); see :class:`LengthControl`.
        self.len_limit: int | None = None
        self.children: list[int] = []  # per entry: children generated from it
        self.trouble: list[int] = []  # per entry: children that only re-found a known failure (wedges weigh more)
        self.quiet: set[int] = set()  # entries kept only for their cost (see add)
        self.crashing: set[int] = set()  # entries that trigger a known bug (see add)
        #: Per entry: whether it descends from an initial input (a seed or a kept entry), not
        #: from random bytes; the worker trims only the others (see ``assay.engine.trim``).
        self.seeded: list[bool] = []

    def add(
        self,
        data: bytes,
        pairs: Sequence[tuple[bytes, bytes]] = (),
        tokens: Iterable[bytes] = (),
        guards: Iterable[tuple[int, str, int]] = (),
        quiet: bool = False,
        crashing: bool = False,
        seeded: bool = False,
    ) -> None:
        """Add a corpus entry, its comparison replacements, dictionary tokens and guards.

        With a strategy, the entry's parsed structure is kept too.  A ``quiet`` entry
        (one kept only for its cost) is never drawn as one of the newest: costly
        entries are long, and long parents would slow every case down.  A ``crashing``
        entry triggers a bug (AFL's crash exploration): its children re-finding that
        bug is what they are expected to do, and does not count against it.
        """
        if quiet:
            self.quiet.add(len(self.corpus))
        if crashing:
            self.crashing.add(len(self.corpus))
        self.seeded.append(seeded)
        self.corpus.append(data)
        self.children.append(0)
        self.trouble.append(0)
        self.cmp_pairs.append(list(pairs))
        if self.strategy is None and not quiet:  # a cost-only entry is long padding, rarely the frontier
            self._stage(len(self.corpus) - 1, pairs)
        self.guards.append(list(guards))
        self._add_tokens(tokens)
        if self.strategy is not None:
            value = self.strategy.parse(data)
            self.values.append(value)
            if value is not None:
                self.parsed.append(len(self.values) - 1)
            if value is not None:
                self._add_tokens(self.strategy.tokens(value))

    def _stage(self, index: int, pairs: Sequence[tuple[bytes, bytes]]) -> None:
        """Queue an entry's replacements: its comparisons' before every guess still
        waiting (a regular expression's :class:`~assay.feedback.cmplog.Sample`), its
        guesses last.  Guesses wait at the deque's end, so those not yet tried are
        the last ``min(self._guesses, len(staged))``."""
        staged = self.staged
        waiting = min(self._guesses, len(staged))
        compared = [(index, p) for p in pairs if type(p) is not cmplog.Sample]
        guesses = [(index, p) for p in pairs if type(p) is cmplog.Sample]
        tail = [staged.pop() for _ in range(waiting)][::-1] if compared else []
        staged.extend(compared)
        staged.extend(tail)
        staged.extend(guesses)
        self._guesses = min(waiting + len(guesses), len(staged))

    def _add_tokens(self, tokens) -> None:
        dictionary = self.mutator.dictionary
        for token in tokens:
            if len(dictionary) >= MAX_DICTIONARY:
                return
            if token and token not in self._known_tokens:
                dictionary.append(token)
                self._known_tokens.add(token)

    def next(self, rng: random.Random, grow: bool = False) -> tuple[bytes, list[str]]:
        """The next input and the names of the operators that made it.

        ``grow``: the child may be as long as ``max_len`` whatever the length limit
        (the worker asks this for the cases whose cost it measures).
        """
        self.repair_guards = None
        if self.strategy is not None:
            return self._structured(rng)
        if not self.corpus:
            self.last_parent = None
            return rng.randbytes(rng.randint(0, min(64, self.max_len))), ["random"]
        self.last_pair = None
        self.cases += 1
        if self.staged and self.cases % STAGE_EVERY == 0:
            staged = self._staged()
            if staged is not None:
                return staged
        index = self._pick(rng, len(self.corpus), quiet_ok=grow)
        parent = self.corpus[index]
        pairs = self.cmp_pairs[index]
        if pairs and rng.random() < CMP_SHARE:
            pair = pairs[rng.randrange(len(pairs))]
            out = replace_one(parent, pair[0], pair[1], rng.randrange(64))
            if out is not None:
                self.last_pair = (index, pair)
                return self._maybe_repair(rng, index, out[: self.max_len], ["cmp-replace"])
        limit = None if grow else self.len_limit
        if limit is not None and len(parent) > limit and index in self.quiet:
            parent = parent[:limit]  # a costly entry's children stay short, except the growing ones
        data, ops = self.mutator.mutate(parent, rng, self.corpus, limit)
        if self.guards[index]:
            return self._maybe_repair(rng, index, data, ops)
        return data, ops

    def _staged(self) -> tuple[bytes, list[str]] | None:
        """The next replacement of the input-to-state stage that still applies, if any.

        AFL++'s Redqueen stage: a comparison an entry revealed is tried on that
        entry once, at its first occurrence, instead of waiting for random draws
        to pick that entry and then that pair among up to ``MAX_PAIRS``.
        """
        while self.staged:
            index, pair = self.staged.popleft()
            if pair not in self.cmp_pairs[index]:  # dropped since: it led into a known failure
                continue
            out = replace_one(self.corpus[index], pair[0], pair[1], 0)
            if out is None:
                continue
            self.last_parent = index
            self.children[index] += 1
            self.last_pair = (index, pair)
            return out[: self.max_len], ["cmp-stage"]
        return None

    def _maybe_repair(self, rng: random.Random, index: int, data: bytes, ops: list[str]) -> tuple[bytes, list[str]]:
        """Mark a child of an entry with guards for repair (within the budget)."""
        guards = self.guards[index]
        if guards and self.repairs < REPAIR_BUDGET * self.cases and rng.random() < REPAIR_SHARE:
            self.repairs += 1
            self.repair_guards = guards
        return data, ops

    def reward(self, ops: list[str]) -> None:
        """The last input produced new coverage: favour its parent and its mutations.

        Everything here follows from earlier cases' outcomes, so with one worker
        the schedule stays a function of (seed, corpus snapshot, case index).
        """
        if self.last_parent is not None:
            self.productive.append(self.last_parent)
            if len(self.productive) > PRODUCTIVE_MEMORY:
                del self.productive[: len(self.productive) - PRODUCTIVE_MEMORY]
        self.mutator.reward(ops)

    def favour(self, index: int, shares: int) -> None:
        """Make entry ``index`` a productive parent ``shares`` times over (a directed campaign's nearest entry)."""
        if shares <= 0:
            return
        self.productive.extend([index] * min(shares, PRODUCTIVE_MEMORY))
        if len(self.productive) > PRODUCTIVE_MEMORY:
            del self.productive[: len(self.productive) - PRODUCTIVE_MEMORY]

    def failed(self, known: bool = False, wedge: bool = False) -> None:
        """The last input failed: drop the comparison replacement that made it.

        That replacement leads straight into a bug already found; applying it again
        would mostly rediscover the same failure (at the cost of a timeout, for a hang).
        A child that only re-found a ``known`` failure, or a ``wedge``, also counts
        against its parent, which :meth:`_pick` then passes over more often: a
        shallow frequent crash or an unrelated hang must not absorb the search.
        """
        if self.last_pair is not None:
            index, pair = self.last_pair
            if pair in self.cmp_pairs[index]:
                self.cmp_pairs[index].remove(pair)
            self.last_pair = None
        parent = self.last_parent
        if (known or wedge) and parent is not None and parent < len(self.trouble):
            if wedge or parent not in self.crashing:
                self.trouble[parent] += WEDGE_WEIGHT if wedge else 1

    def forget(self, failing: bytes) -> None:
        """Drop every comparison replacement that turns a corpus entry into ``failing``.

        A restarted worker calls this for the inputs that killed its predecessors,
        whose :meth:`failed` never ran.
        """
        for entry, pairs in zip(self.corpus, self.cmp_pairs):
            for pair in list(pairs):
                pattern, replacement = pair
                if len(failing) != len(entry) - len(pattern) + len(replacement):
                    continue
                at = entry.find(pattern)
                while at != -1:
                    if failing == entry[:at] + replacement + entry[at + len(pattern) :]:
                        pairs.remove(pair)
                        break
                    at = entry.find(pattern, at + 1)

    def _pick(self, rng: random.Random, n: int, weigh: bool = True, quiet_ok: bool = True) -> int:
        """A corpus index: newest entries, recently productive ones, or any.

        A parent whose children keep re-finding known failures (or wedge) is
        passed over, in proportion to their share, for a uniformly drawn one.
        Without ``quiet_ok`` an entry kept only for its cost is passed over once:
        it is long padding, a parent for the growing cases of the cost climb.
        """
        # One draw: its low 16 bits choose among the three ways, the other 32 the entry
        # (a bias of n / 2**32 at most: nothing next to a corpus' size).
        x = rng.randrange(1 << 48)
        roll = (x & 0xFFFF) * (1 / 65536)
        x >>= 16
        if n > RECENT_WINDOW and roll < RECENT_SHARE:
            index = n - 1 - x % RECENT_WINDOW
            if self.quiet and index in self.quiet:
                index = (x >> 2) % n
        elif self.productive and roll < RECENT_SHARE + PRODUCTIVE_SHARE:
            index = self.productive[x % len(self.productive)]
        else:
            index = x % n
        if not quiet_ok and self.quiet and index in self.quiet:
            index = (x >> 3) % n
        if weigh:  # byte mode: ``index`` is a corpus index (strategy mode picks among parsed entries)
            trouble = self.trouble
            if trouble[index]:
                for _ in range(REPICKS):
                    if not trouble[index] or rng.random() >= min(MAX_SKIP, trouble[index] / (self.children[index] + 1)):
                        break
                    index = rng.randrange(n)
            self.children[index] += 1
        self.last_parent = index
        return index

    def _structured(self, rng: random.Random) -> tuple[bytes, list[str]]:
        s = self.strategy
        assert s is not None
        parsed = self.parsed
        if not parsed or rng.random() < FRESH_SHARE:
            self.last_parent = None
            data, ops = s.render(s.generate(rng)), [f"{s.name}:generate"]
        else:
            value = self.values[parsed[self._pick(rng, len(parsed), weigh=False) % len(parsed)]]
            if len(parsed) > 1 and rng.random() < CROSSOVER_SHARE:
                value = s.crossover(value, self.values[rng.choice(parsed)], rng)
                ops = [f"{s.name}:crossover"]
            else:
                value = s.mutate(value, rng)
                ops = [f"{s.name}:mutate"]
            data = s.render(value)
            if rng.random() < BYTE_AFTER_STRUCTURE:
                data, more = self.mutator.mutate(data, rng, None)
                ops += more
        if len(data) > self.max_len:
            data = data[: self.max_len]
        return data, ops

    def structural_candidates(self, data: bytes):
        """Strategy shrink candidates of ``data`` as bytes (for the shrinker)."""
        if self.strategy is None:
            return ()
        value = self.strategy.parse(data)
        if value is None:
            return ()
        return (self.strategy.render(v) for v in self.strategy.shrink_candidates(value))


#: First length limit of byte-mode children (raised to the longest initial input).
LEN_START = 32
#: Cases without new coverage, per bit of the current limit, before it is raised
#: (libFuzzer's ``-len_control`` waits 100 * ln(limit) executions).
LEN_STALL_PER_BIT = 64
#: Each raise adds this many bytes per bit of the current limit (libFuzzer adds log2(limit)).
LEN_GROWTH_PER_BIT = 1
#: Most doublings of the stall window: each raise whose room no new coverage used
#: (no child longer than the limit before it was new) doubles the wait before the next.
LEN_WAIT_MAX = 3


class LengthControl:
    """libFuzzer-style length control: start short, lengthen when coverage stalls.

    Short inputs run faster and reach the shallow code first; the limit rises
    when ``stall`` cases in a row brought nothing new.  Unlike libFuzzer, a raise
    must pay: when no child longer than the limit before the last raise brought new
    coverage by the next stall, the wait doubles (up to ``LEN_WAIT_MAX`` times), and
    one that does brings it back, so the limit stays short where length does not help
    and climbs where it does.
    Everything is a function of case indices at which coverage was new and of the
    new inputs' lengths, so the schedule stays deterministic; the parent keeps
    :meth:`state` so a restarted worker continues the same way.
    Growth mutations (chunk repetition, nesting) are exempt (see ``ByteMutator.mutate``).

    Long inputs stay reachable while short ones are the rule because length is decided
    per child, not per parent: a fixed share of children (``LONG_SHARE``, and the cost
    climb's counted cases) may reach ``max_len``, and every other child is cut to the
    limit, also when its parent is a long entry (``LONG_PARENT``) or one kept only for
    its cost.
    """

    def __init__(
        self,
        max_len: int,
        limit: int | None,
        mark: int,
        longest_initial: int = 0,
        more: tuple[int, int, bool] | None = None,
    ) -> None:
        self.max_len = max_len
        self.limit = limit if limit is not None else min(max_len, max(LEN_START, longest_initial))
        self.mark = mark  # case index of the last new coverage or raise
        #: (doublings of the stall window, the limit before the last raise (0: none yet),
        #: whether a child longer than that brought new coverage since).
        self.wait, self.floor, self.paid = more if more is not None else (0, 0, False)

    def state(self) -> tuple[int, int, tuple[int, int, bool]]:
        """``(limit, mark, more)``: what a restarted worker's :class:`LengthControl` starts from."""
        return self.limit, self.mark, (self.wait, self.floor, self.paid)

    def stall(self) -> int:
        return (LEN_STALL_PER_BIT * max(1, self.limit.bit_length())) << self.wait

    def new_coverage(self, index: int, length: int = 0) -> None:
        """Case ``index``, an input of ``length`` bytes, brought new coverage."""
        self.mark = index
        if self.floor < length <= self.limit:  # the last raise's room paid: back to the short wait
            self.paid, self.wait = True, 0

    def check(self, index: int) -> bool:
        """At a clock boundary: raise the limit if coverage stalled; True if it rose."""
        if self.limit >= self.max_len or index - self.mark < self.stall():
            return False
        if self.floor and not self.paid:
            self.wait = min(LEN_WAIT_MAX, self.wait + 1)
        self.floor, self.paid = self.limit, False
        self.limit = min(self.max_len, self.limit + max(1, LEN_GROWTH_PER_BIT * self.limit.bit_length()))
        self.mark = index
        return True
