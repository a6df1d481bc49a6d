"""``assay merge-corpus``: the union of several corpus roots, minimized by feature cover.

Steps, in order (nothing is written before step 1 passed for every root):

1. **Validate** every root: each entry must be ``<target>/<sha256>.input`` for a target
   of the project, named by its content and within the target's ``max_len``; no
   temporary files, nothing else.  Any offender refuses the whole merge (exit 2),
   listing every one.
2. **Union** the entries by target (OUT's own entries included when OUT exists, as
   libFuzzer's ``-merge=1`` keeps what OUT had).
3. **Replay** each input once in a crash-isolated worker recording its full feature
   set (:mod:`assay.engine.features`): branch edges, lines, semantic features and the
   outcome class.  Inputs that crash, hang or fail an oracle are set aside (written to
   the aside folder and reported), never silently dropped.
4. **Cover**: greedy, smallest inputs first, ties broken by digest; then a reverse
   pass drops any kept input whose every feature another kept input also has.  The
   result is deterministic and preserves every feature of the union.
5. **Write** atomically: new entries first, then redundant ones are removed, so an
   interrupted merge leaves a valid superset.  OUT may be one of the inputs.

Native targets (``assay.native``, when installed) are minimized by libFuzzer's own
``-merge=1`` through :func:`native_selection`; where it is unavailable their union is
kept whole, with a note in the report.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import CorpusError
from assay.core.target import Target
from assay.engine.features import Replay, record
from assay.store.atomic import TMP_PREFIX
from assay.store.corpus import SUFFIX, Corpus, Offence

#: Suffix of the default folder (a sibling of OUT) for inputs set aside.
ASIDE_SUFFIX = ".aside"


@dataclass
class AsideInput:
    """An input that crashed, hung or failed an oracle during the merge."""

    digest: str
    size: int
    oracle: str
    signature: str
    path: str


@dataclass
class TargetMerge:
    """One target's merge: the numbers the report shows."""

    name: str
    entries_in: int = 0
    entries_out: int = 0
    features: int = 0
    preserved: int = 0
    seconds: float = 0.0
    kept: list[str] = field(default_factory=list)
    aside: list[AsideInput] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entries_in": self.entries_in,
            "entries_out": self.entries_out,
            "features": self.features,
            "features_preserved": self.preserved,
            "seconds": round(self.seconds, 3),
            "kept": self.kept,
            "aside": [vars(a) for a in self.aside],
            "note": self.note,
        }


@dataclass
class MergeResult:
    out: str
    inputs: list[str]
    aside_root: str
    targets: list[TargetMerge]
    seconds: float

    @property
    def aside(self) -> int:
        return sum(len(t.aside) for t in self.targets)

    def to_json(self) -> dict[str, Any]:
        return {
            "out": self.out,
            "inputs": self.inputs,
            "aside_root": self.aside_root,
            "seconds": round(self.seconds, 3),
            "targets": {t.name: t.to_json() for t in self.targets},
        }


# -- 1. validation ------------------------------------------------------------------------------
def check_roots(roots: Iterable[Path], max_lens: dict[str, int]) -> list[Offence]:
    """Every entry of every root that breaks the corpus rules (``max_lens``: known targets)."""
    offences: list[Offence] = []
    for root in roots:
        if not root.exists():
            offences.append(Offence(str(root), "does not exist (an input root must be a corpus folder)"))
            continue
        if not root.is_dir():
            offences.append(Offence(str(root), "is not a folder (a corpus root holds <target>/<sha256>.input)"))
            continue
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            if entry.name.startswith(TMP_PREFIX):
                offences.append(Offence(entry.path, "temporary file left by an interrupted write; delete it"))
            elif entry.is_symlink() or not entry.is_dir():
                offences.append(Offence(entry.path, "unexpected entry (a corpus root holds only <target>/ folders)"))
            elif entry.name not in max_lens:
                offences.append(
                    Offence(entry.path, f"no target named {entry.name!r} in this project (check --project)")
                )
            else:
                offences.extend(Corpus(root, entry.name, max_lens[entry.name]).check())
    return offences


def refuse(offences: list[Offence]) -> None:
    """Raise :class:`CorpusError` listing every offender (nothing was written)."""
    lines = "\n".join(f"  {o.path}: {o.problem}" for o in offences)
    raise CorpusError(
        f"refusing to merge: {len(offences)} entr{'y breaks' if len(offences) == 1 else 'ies break'} "
        f"the corpus rules (nothing was written):\n{lines}\nFix or remove these files, then run again."
    )


# -- 2. union ----------------------------------------------------------------------------------------
def union(roots: Iterable[Path], max_lens: dict[str, int]) -> dict[str, dict[str, bytes]]:
    """target -> digest -> bytes over every (validated) root."""
    merged: dict[str, dict[str, bytes]] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for name in sorted(os.listdir(root)):
            for d, data in Corpus(root, name, max_lens[name]).load():
                merged.setdefault(name, {})[d] = data
    return merged


# -- 4. cover ----------------------------------------------------------------------------------------
def cover(features: dict[str, frozenset[Hashable]], sizes: dict[str, int]) -> list[str]:
    """The digests to keep: every feature of ``features`` stays covered (deterministic).

    Greedy in (size, digest) order keeps an input that adds an uncovered feature;
    then, largest first, an input whose every feature is also held by another kept
    input is dropped.
    """
    order = sorted(features, key=lambda d: (sizes[d], d))
    covered: set[Hashable] = set()
    kept: list[str] = []
    for d in order:
        if not features[d] <= covered:
            covered |= features[d]
            kept.append(d)
    holders: dict[Hashable, int] = {}
    for d in kept:
        for f in features[d]:
            holders[f] = holders.get(f, 0) + 1
    for d in reversed(kept[:]):
        if all(holders[f] >= 2 for f in features[d]):
            kept.remove(d)
            for f in features[d]:
                holders[f] -= 1
    return sorted(kept, key=lambda d: (sizes[d], d))


# -- native hook -----------------------------------------------------------------------------------
def native_targets(project: Any) -> dict[str, Any]:
    """The project's native targets by name; empty where ``assay.native`` is not installed."""
    try:
        from assay.native.discovery import load_native_targets
    except ImportError:
        return {}
    return dict(load_native_targets(project))


def native_selection(project: Any, target: Any, entries: dict[str, bytes]) -> set[str] | None:
    """libFuzzer's ``-merge=1`` choice among ``entries`` for a native target, or None.

    None means the selection is unavailable (``assay.native`` is not installed) and
    the caller keeps the native target's union whole.  The work is done by
    :func:`assay.native.merge.libfuzzer_merge` (build or reuse the harness, run it
    with ``-merge=1 OUT IN``, map what it kept back to digests).
    """
    try:
        import assay.native  # noqa: F401
    except ImportError:
        return None
    from assay.native.merge import libfuzzer_merge

    return libfuzzer_merge(project, target, entries)


# -- the merge ---------------------------------------------------------------------------------------
def merge_corpora(
    out: str | os.PathLike[str],
    inputs: list[str | os.PathLike[str]],
    targets: list[Target],
    *,
    project: Any = None,
    aside_root: str | os.PathLike[str] | None = None,
    progress: Callable[[TargetMerge], None] | None = None,
) -> MergeResult:
    """Merge the corpus roots ``inputs`` into ``out`` (see the module docstring).

    ``progress`` is called with each target's result as soon as it is written.
    """
    started = time.monotonic()
    out_path = Path(out).resolve()
    roots = list(dict.fromkeys(Path(p).resolve() for p in inputs))
    if not roots:
        raise CorpusError("merge-corpus needs at least one input root (assay merge-corpus OUT IN...)")
    scanned = roots + ([out_path] if out_path.exists() and out_path not in roots else [])
    python = {t.name: t for t in targets}
    natives = {n: t for n, t in native_targets(project).items() if n not in python} if project is not None else {}
    max_lens = {n: t.max_len for n, t in python.items()}
    max_lens.update({n: int(getattr(t, "max_len", 1 << 30)) for n, t in natives.items()})
    offences = check_roots(scanned, max_lens)  # OUT too, when it exists
    if offences:
        refuse(offences)
    aside_path = Path(aside_root).resolve() if aside_root else out_path.with_name(out_path.name + ASIDE_SUFFIX)
    project_root = str(project.root) if project is not None else None
    results = []
    for name, entries in sorted(union(scanned, max_lens).items()):
        t0 = time.monotonic()
        if name in python:
            tm = _merge_python(python[name], entries, project_root, aside_path)
        else:
            tm = _merge_native(project, natives[name], name, entries)
        _write(Corpus(out_path, name, max_lens[name]), entries, tm.kept)
        tm.seconds = time.monotonic() - t0
        results.append(tm)
        if progress is not None:
            progress(tm)
    return MergeResult(str(out_path), [str(r) for r in roots], str(aside_path), results, time.monotonic() - started)


def _merge_python(target: Target, entries: dict[str, bytes], project_root: str | None, aside_root: Path) -> TargetMerge:
    digests = sorted(entries)
    replays: list[Replay] = record(target, target.source_paths(project_root), [entries[d] for d in digests])
    tm = TargetMerge(target.name, entries_in=len(digests))
    good: dict[str, frozenset[Hashable]] = {}
    for d, r in zip(digests, replays):
        if r.failed:
            path = Corpus(aside_root, target.name, target.max_len).add(entries[d])
            tm.aside.append(
                AsideInput(
                    d,
                    len(entries[d]),
                    r.verdict.oracle,  # type: ignore[union-attr]  # failed: a verdict
                    r.verdict.signature,  # type: ignore[union-attr]
                    str(aside_root / target.name / (path + SUFFIX)),
                )
            )
        else:
            good[d] = r.features
    union_features = frozenset().union(*good.values()) if good else frozenset()
    tm.kept = cover(good, {d: len(entries[d]) for d in good})
    kept_features = frozenset().union(*(good[d] for d in tm.kept)) if tm.kept else frozenset()
    tm.features, tm.preserved, tm.entries_out = len(union_features), len(kept_features), len(tm.kept)
    if kept_features != union_features:  # cover() guarantees this; a failure is a bug in assay
        raise AssertionError(f"merge of {target.name!r} lost {len(union_features - kept_features)} features")
    return tm


def _merge_native(project: Any, target: Any, name: str, entries: dict[str, bytes]) -> TargetMerge:
    tm = TargetMerge(name, entries_in=len(entries))
    chosen = native_selection(project, target, entries)
    if chosen is None:
        tm.kept = sorted(entries, key=lambda d: (len(entries[d]), d))
        tm.note = "native target: libFuzzer -merge=1 is unavailable in this build; the union is kept whole"
    else:
        tm.kept = sorted(chosen & set(entries), key=lambda d: (len(entries[d]), d))
        tm.note = "native target: minimized by libFuzzer -merge=1"
    tm.entries_out = len(tm.kept)
    return tm


def _write(corpus: Corpus, entries: dict[str, bytes], kept: list[str]) -> None:
    """Make ``corpus`` hold exactly ``kept``: add first, then remove the rest."""
    for d in kept:
        if corpus.add(entries[d]) != d:
            raise AssertionError(f"corpus entry {d} changed while merging")
    keep = set(kept)
    if corpus.dir.is_dir():
        for name in sorted(os.listdir(corpus.dir)):
            if name.endswith(SUFFIX) and name[: -len(SUFFIX)] not in keep:
                os.unlink(corpus.dir / name)
    if not kept and corpus.dir.is_dir() and not os.listdir(corpus.dir):
        corpus.dir.rmdir()


def summary(result: MergeResult) -> str:
    """Human summary: one line per target, then the inputs set aside."""
    lines = [f"assay merge-corpus: {len(result.inputs)} root(s) -> {result.out}"]
    for t in result.targets:
        lines.append(
            f"  {t.name}: {t.entries_in} in, {t.entries_out} out, features {t.preserved}/{t.features} preserved, "
            f"{len(t.aside)} set aside, {t.seconds:.1f}s"
        )
        if t.note:
            lines.append(f"    note: {t.note}")
        for a in t.aside:
            lines.append(f"    aside [{a.oracle}] {a.signature}\n      {a.path}")
    total = result.aside
    lines.append(f"{total} input(s) set aside in {result.aside_root}" if total else "no input set aside")
    return "\n".join(lines)
