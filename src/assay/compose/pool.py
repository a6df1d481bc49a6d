"""The leaf pool: clean leaves, each judged once by the classifier at start-up.

Leaves are ordered shortest first (file order among equals).  Both shrinkers move
towards lower leaf indices, so a minimized example holds the shortest leaves that
still violate, not the first ones in the file.

Labels in the leaves file are hints only.  The classifier's own verdict on each
leaf is what the oracle uses (F asks "is the whole at least as strict as its
parts?", whatever the parts' verdicts are); where a hint disagrees with the
verdict, the summary says so, since that is either a wrong hint or a leaf-level
bug the composition oracle by design cannot see.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.compose.classifier import Classifier, Judgement, VerdictTypeError
from assay.compose.leaves import (
    OVERRIDABLE,
    REASONS,
    FilterResult,
    LeafCheck,
    LeafEntry,
    command_word,
    filter_leaves,
    lex,
)
from assay.compose.quoting import quote_command
from assay.compose.tree import Pool
from assay.core.errors import ConfigError

log = logging.getLogger("assay.compose")

#: Longest command word kept in a signature.
MAX_WORD = 40
#: Rejected leaves quoted per reason in the summary.
EXAMPLES_PER_REASON = 3


def word_slug(word: str) -> str:
    """A command word as a signature-safe token (``/usr/bin/rm`` -> ``rm``)."""
    base = word.rsplit("/", 1)[-1] or word
    slug = re.sub(r"[^A-Za-z0-9._+-]", "_", base)[:MAX_WORD]
    return slug or "_"


@dataclass(frozen=True)
class PoolLeaf:
    """An admitted leaf with its start-up verdict."""

    index: int
    text: str
    words: tuple[str, ...]
    word_ends: tuple[int, ...]
    label: str | None
    judgement: Judgement

    @property
    def allowed(self) -> bool:
        return self.judgement.allowed

    @property
    def word(self) -> str:
        """The command word, signature-safe."""
        return word_slug(command_word(self.text))


@dataclass
class PoolSummary:
    """Pool size, rejections by reason, verdict counts and hint disagreements."""

    candidates: int
    admitted: int
    allowed: int
    denied: int
    rejected: dict[str, int]
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The summary as human-readable lines."""
        dropped = sum(self.rejected.values())
        out = [
            f"leaf pool: {self.admitted} of {self.candidates} admitted "
            f"({self.allowed} allowed, {self.denied} denied by the classifier)"
            + (f"; dropped {dropped}:" if dropped else "")
        ]
        for reason, count in self.rejected.items():
            seen = ", ".join(quote_command(t) for t in self.examples.get(reason, ()))
            line = f"  rejected {count:>4}  {reason}: {REASONS.get(reason, reason)}" + (
                f" (e.g. {seen})" if seen else ""
            )
            if reason in OVERRIDABLE:
                line += f"; {OVERRIDABLE[reason]}"
            out.append(line)
        if dropped:
            out.append("  (assay compose --list-exclusions lists every rule and how to admit a leaf anyway)")
        for d in self.disagreements:
            out.append(
                f"  hint disagrees: {d['label']}: {quote_command(d['text'])} is {d['verdict']} by the classifier"
            )
        for e in self.errors:
            out.append(f"  classifier raised on {quote_command(e['text'])}: {e['error']}")
        if self.admitted and not self.denied:
            out.append("  note: no leaf is denied, so F can only fire through redirects")
        if self.admitted and not self.allowed:
            out.append("  note: no leaf is allowed, so R and the redirect/embed checks cannot fire")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "candidates": self.candidates,
            "admitted": self.admitted,
            "allowed": self.allowed,
            "denied": self.denied,
            "rejected": dict(self.rejected),
            "rejected_examples": {k: list(v) for k, v in self.examples.items()},
            "disagreements": list(self.disagreements),
            "errors": list(self.errors),
        }


@dataclass
class LeafPool:
    """The judged leaves plus what decoding and rendering need."""

    leaves: list[PoolLeaf]
    summary: PoolSummary

    def __post_init__(self) -> None:
        self.view = Pool(tuple(leaf.text for leaf in self.leaves), tuple(leaf.word_ends for leaf in self.leaves))

    def __len__(self) -> int:
        return len(self.leaves)

    @property
    def allowed_indices(self) -> list[int]:
        return [leaf.index for leaf in self.leaves if leaf.allowed]

    @property
    def denied_indices(self) -> list[int]:
        return [leaf.index for leaf in self.leaves if not leaf.allowed]


def build_pool(entries: Sequence[LeafEntry], classifier: Classifier, check: LeafCheck | None = None) -> LeafPool:
    """Filter ``entries`` and judge every admitted leaf once (raises ConfigError if none is left)."""
    filtered: FilterResult = filter_leaves(entries, check)
    leaves: list[PoolLeaf] = []
    disagreements: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    # shortest first, so that shrinking to lower indices is shrinking to shorter leaves
    for entry in sorted(filtered.admitted, key=lambda e: len(e.text)):
        try:
            judgement = classifier.judge(entry.text)
        except ConfigError:
            raise
        except VerdictTypeError as exc:
            raise ConfigError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a leaf the classifier cannot judge is left out, loudly
            errors.append({"text": entry.text, "error": f"{type(exc).__name__}: {exc}"})
            filtered.rejected.append((entry, "classifier-error"))
            continue
        lexed = lex(entry.text)
        words = lexed.words or tuple(entry.text.split())
        ends = tuple(end for _, end in lexed.spans) or (len(entry.text),)
        leaves.append(PoolLeaf(len(leaves), entry.text, words, ends, entry.label, judgement))
        if entry.label and (entry.label == "allow") != judgement.allowed:
            disagreements.append(
                {
                    "text": entry.text,
                    "label": entry.label,
                    "line": entry.line,
                    "verdict": "allowed" if judgement.allowed else "denied",
                }
            )
    disagreements.sort(key=lambda d: d["line"] or 0)
    allowed = sum(1 for leaf in leaves if leaf.allowed)
    summary = PoolSummary(
        candidates=len(entries),
        admitted=len(leaves),
        allowed=allowed,
        denied=len(leaves) - allowed,
        rejected=filtered.counts,
        disagreements=disagreements,
        errors=errors,
        examples=_examples(filtered),
    )
    for line in summary.lines():
        log.info("compose: %s", line.strip())
    for d in disagreements:
        log.warning("compose: hint %s: %r, but the classifier says %s", d["label"], d["text"], d["verdict"])
    if not leaves:
        reasons = ", ".join(f"{k} {v}" for k, v in summary.rejected.items()) or "no candidates"
        raise ConfigError(
            f"the leaf pool is empty after filtering ({len(entries)} candidates; rejected: {reasons}); "
            "add atomic commands (no ; & | < > # $( or backticks, balanced quotes) to the leaves"
        )
    return LeafPool(leaves, summary)


def _examples(filtered: FilterResult) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry, reason in filtered.rejected:
        texts = out.setdefault(reason, [])
        if len(texts) < EXAMPLES_PER_REASON:
            texts.append(entry.text)
    return out
